// The rules as a decision machine: the engine advances the game until somebody must decide, and
// stops there with a pending decision. The effect primitives (effects.cpp) are members too, since
// they act on the game through its helpers.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
#if defined(_MSC_VER)
#include <intrin.h>
#endif

#include "cards.hpp"
#include "state.hpp"

namespace havok {

enum Flow : int { DONE, WAIT, CONTINUE };

// The index of the lowest set bit of a nonzero word.
inline int lowest_bit(uint64_t x) {
#if defined(_MSC_VER)
    unsigned long i;
    _BitScanForward64(&i, x);
    return static_cast<int>(i);
#else
    return __builtin_ctzll(x);
#endif
}

// The distinct kinds of a pile, ascending (piles are a few cards: a sorted copy beats a set).
inline std::vector<int> distinct(const std::vector<int>& pile) {
    std::vector<int> out(pile);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// distinct() for the hot path: the kinds of a hand or a hoard (a few cards) sorted in a fixed
// buffer, so that asking what a seat may play or crash allocates nothing. The kinds are gathered
// as bits and read back in order, without the data-dependent branches of sorting: a pile of more
// than CAP cards, or with a kind of 128 or more (a card set that large), uses distinct().
class KindSet {
public:
    explicit KindSet(const std::vector<int>& pile) : KindSet(pile, [](int) { return true; }) {}
    // only the kinds ``keep`` accepts
    template <class Keep>
    KindSet(const std::vector<int>& pile, Keep keep) {
        uint64_t bits[2] = {0, 0};
        bool small = pile.size() <= CAP;
        for (size_t i = 0; small && i < pile.size(); ++i) {
            const int k = pile[i];
            if (static_cast<unsigned>(k) >= 128) small = false;
            else if (keep(k)) bits[k >> 6] |= uint64_t{1} << (k & 63);
        }
        if (!small) {
            for (int k : distinct(pile))
                if (keep(k)) big_.push_back(k);
            first_ = big_.data(), last_ = big_.data() + big_.size();
            return;
        }
        size_t n = 0;
        for (int w = 0; w < 2; ++w)
            for (uint64_t b = bits[w]; b != 0; b &= b - 1) buf_[n++] = 64 * w + lowest_bit(b);
        first_ = buf_, last_ = buf_ + n;
    }
    KindSet(const KindSet&) = delete;  // first_ and last_ point into this object
    KindSet& operator=(const KindSet&) = delete;
    const int* begin() const { return first_; }
    const int* end() const { return last_; }

private:
    static constexpr size_t CAP = 16;
    int buf_[CAP];
    std::vector<int> big_;
    const int* first_;
    const int* last_;
};

// The kinds in ``hand`` that are in ``bits`` (a kind set of the tables; ``keep`` is the same set
// as a test, for a wide hand), once each and ascending as KindSet gives them: f(kind) for each,
// read from the bits the hand keeps rather than from its cards.
template <class Keep, class F>
void each_kind(const Hand& hand, const KindBits& bits, Keep keep, F f) {
    if (hand.wide()) {
        for (int k : distinct(hand.cards()))
            if (keep(k)) f(k);
        return;
    }
    for (int w = 0; w < 2; ++w)
        for (uint64_t b = hand.kinds().w[w] & bits.w[w]; b != 0; b &= b - 1) f(64 * w + lowest_bit(b));
}
// does ``hand`` hold a kind of ``bits`` (``keep`` as above)?
template <class Keep>
bool holds_any(const Hand& hand, const KindBits& bits, Keep keep) {
    if (hand.wide()) return std::any_of(hand.begin(), hand.end(), keep);
    return ((hand.kinds().w[0] & bits.w[0]) | (hand.kinds().w[1] & bits.w[1])) != 0;
}
inline constexpr KindBits ALL_KINDS{{~uint64_t{0}, ~uint64_t{0}}};
// every kind in ``hand``, once each and ascending
template <class F>
void each_kind(const Hand& hand, F f) {
    each_kind(hand, ALL_KINDS, [](int) { return true; }, f);
}

// Seats (at most MAX_PLAYERS) in a fixed buffer: victims and candidates are asked many times a
// decision (may a card be played?), and a std::vector for each answer was the core's main cost.
struct Seats {
    int n = 0;
    int p[MAX_PLAYERS];
    void push_back(int seat) { p[n++] = seat; }
    bool empty() const { return n == 0; }
    const int* begin() const { return p; }
    const int* end() const { return p + n; }
    std::vector<int> vec() const { return {p, p + n}; }
};

// Chance points (evaluation/chance.py, docs/luck.md): every use of luck inside a move, as the
// engine meets it. A card leaving the top of the Havok deck (CH_FLIP), one card drawn from the
// Hijinks deck (CH_DRAW) and each answer of the generator outside a shuffle (CH_COIN: the contest
// between crashes declared in one window; the dragons and the first player are drawn before any
// run can be attached). Game::run_chance plays one move with a ChanceRun attached: it lists the
// points met, can make any of them come out otherwise (a flip or draw brings the card at deck
// position ``j`` to the top first, swapping the two; a coin answers ``j``) and can stop just
// before one, leaving the state mid-move (for valuing only: nothing can be played from there);
// the points listed then end with the one it stopped at (its outcome -1; its range -1 only for a
// draw that waits for a reshuffle).
// Plain play attaches none and only tests a null pointer at those places.
enum ChanceKind : int { CH_FLIP, CH_DRAW, CH_COIN };

struct ChancePoint {
    int kind = CH_FLIP;
    int seat = -1;     // flip: the seat it is flipped for; draw: the drawer; coin: -1
    int range = -1;    // flip, draw: the deck's size then (after a reshuffle); coin: answers 0..range-1
    int outcome = -1;  // flip, draw: the card kind that came; coin: the answer (-1: stopped before it)
};

struct ChanceRun {
    std::vector<std::pair<int, int>> force;  // (point index, deck position or answer)
    int stop = -1;                 // stop just before this point (-1: play to the next decision)
    bool keep_states = false;      // keep the state before every point and after every flip or draw
    std::vector<ChancePoint> points;
    std::vector<State> before, after;  // with keep_states; after: empty states for coins
    // With ``keep_stop``, the state at the stop is copied to ``at_stop`` and the move is given up
    // at the end of the step it stands in (each chance point met before that played as it comes),
    // rather than cut short by an exception: the game is left mid-move, fit for nothing but to be
    // copied over. A walk that reruns a move for every outcome of its chance points and reads
    // only the state at the stop spends a third of its time unwinding otherwise.
    bool keep_stop = false;
    State at_stop;
    bool stopped = false;
};

class Game {
public:
    // A new game: dragons[seat] is a dragon index or -1 (random, distinct, from the seeded rng).
    // The deal is followed by the first turn unless ``advance`` is false (tests of the deal).
    Game(std::shared_ptr<const CardTables> cards, int n, std::vector<int> dragons, uint64_t seed,
         bool log, bool advance = true);
    // A new game in this object, dealt as the constructor deals it (with advance), that reuses
    // the old game's buffers: batches and playouts deal a new game every few dozen decisions.
    void redeal(int n, std::vector<int> dragons, uint64_t seed, bool log);
    // A game in a given state (from a snapshot): checks it, then (unless told not to) advances
    // to its next decision; with ``advance`` false the cards need not be all in place.
    Game(std::shared_ptr<const CardTables> cards, State state, bool advance = true);

    const CardTables& cards() const { return *cards_; }
    const std::shared_ptr<const CardTables>& tables() const { return cards_; }
    const State& state() const { return s_; }
    State& state_mut() { return s_; }

    bool is_over() const { return s_.has_result; }
    int to_act() const { return s_.has_pending ? s_.pending.player : -1; }
    bool is_legal(int action) const;
    // Takes a legal action (CoreError if it is not) and advances to the next decision.
    void apply(int action);
    // apply(pending.choices[i]) for a player of the core's own (playouts), without looking the
    // action up in the list it came from (CoreError for an index out of range)
    void apply_choice(size_t i);
    void advance();
    // One move with chance points watched (see ChanceRun): ``action`` as apply takes it, or -1 to
    // advance from where the game stands (a game made without advancing). CoreError for a forced
    // outcome out of range; the run's points, and whether it stopped, are in ``run``.
    void run_chance(ChanceRun& run, int action);

    int score(int seat) const;
    std::vector<int> scores() const;
    int worth(int owner, int kind) const { return cards_->worth[s_.dragons[owner]][kind]; }
    // Rule checks that the Python layer and the bots also use.
    std::vector<int> main_choices(int p) const;
    void main_choices(int p, std::vector<int>& out) const;  // into ``out``, reusing its buffer
    std::vector<int> crash_choices(int p, const Trigger& trig) const;
    void crash_choices(int p, const Trigger& trig, std::vector<int>& out) const;  // into ``out``
    bool usable(int ref, int seat) const;
    bool op_usable(int you, const Op& op) const;
    bool event_has_effect(int card, int you) const;
    // Every card in exactly one place (CoreError naming the first one that is not).
    void check_cards() const;
    // Every seat, card kind, frame and action the engine indexes with is in range (CoreError).
    void check_state() const;
    // The targeting rules (effects.cpp), in one place: the effects ask with them, and bots judge
    // cards with them through havok_env.view.SeatView (public information only).
    std::vector<int> victims(int you, int actor, int sel) const;
    Seats victim_seats(int you, int actor, int sel) const;
    int thief(int you, const Op& op) const;
    std::vector<int> eligible(int owner, int max_value, const Cards& exclude = {}) const;
    // eligible() in a fixed buffer, for the question that lists them
    KindSet eligible_kinds(int owner, int max_value, const Cards& exclude = {}) const;
    std::vector<int> trade_gives(int you, const Op& op) const;
    // trade_gives() in a fixed buffer, only the kinds worth at least ``want`` (trade_gives_for)
    KindSet trade_give_kinds(int you, const Op& op, long long want = -ANY) const;
    static long long trade_min_give(const Op& op, int take_value);
    std::vector<int> trade_takes(int you, int victim, const Op& op) const;
    std::vector<int> trade_gives_for(int you, int victim, int take, const Op& op) const;
    KindSet trade_take_kinds(int you, int victim, const Op& op) const;  // trade_takes(), in a fixed buffer
    std::vector<int> candidates(int you, const Op& op) const;
    Seats candidate_seats(int you, const Op& op) const;  // candidates(), without allocating
    bool has_candidate(int you, const Op& op) const;     // !candidates().empty(), sooner
    std::vector<int> salvage_options(const Op& op) const;
    KindSet salvage_kinds(const Op& op) const;  // salvage_options(), in a fixed buffer
    Seats redirect_seats(int flipper, const Op& op) const;
    // (giver, taker) of a tribute, or (-1, -1) when all hoards are worth the same
    std::pair<int, int> tribute_seats(int you) const;
    Seats pass_seats(int you, const Op& op) const;
    // The trigger of the crash window that opens on frame ``fi``.
    Trigger trigger_of(int fi) const;
    void fill_trigger(int fi, Trigger& trig) const;  // trigger_of(), into ``trig``'s buffers
    std::pair<int, int> trigger_on(const Frame& fr) const;  // a window's TriggerOn and its seat
    // The effect list of ability ``ref`` used by (or resolving for) ``seat``.
    const std::vector<Op>& ops_for(int ref, int seat) const { return cards_->ops(ref, s_.dragons.at(seat)); }

private:
    std::shared_ptr<const CardTables> cards_;
    State s_;
    ChanceRun* chance_ = nullptr;  // attached only inside run_chance
    bool halted_ = false;  // a keep_stop run has stopped: the move is given up where it stands

    // chance points: begin reports one (with its range, -1 for a draw a reshuffle must come
    // before) and stops there if asked; force gives the outcome to make it give (-1: as it
    // comes); end records what came
    int chance_begin(int kind, int seat, int range);
    int chance_force(int point, int range);
    void chance_end(int point, int outcome);
    int chance_below(int k);  // rand_below, a chance point when watched
    int flip_watched();
    void draw_watched(int p, int n);
    int take_top();     // flip_top's work: the top Havok card into play
    void reshuffle();   // the discard pile becomes the Hijinks deck, shuffled

    void deal(int n, std::vector<int> dragons, uint64_t seed, bool log, bool advance);
    void setup(bool advance);
    Frame& frame(int index) {
        if (index < 0 || index >= static_cast<int>(s_.stack.size())) fail("no such frame");
        return s_.stack[index];
    }
    const Frame& frame(int index) const {
        if (index < 0 || index >= static_cast<int>(s_.stack.size())) fail("no such frame");
        return s_.stack[index];
    }

    void answer(int action);  // apply()'s work once the action is known to be legal
    // helpers the primitives use (havok_env/engine.py's Game offers them under the same names)
    // the pending decision's context, emptied for the next question to fill in place
    Context& new_context();
    // stops for ``player``'s decision on the choices already written into pending.choices (its
    // buffer reused, not reallocated); the purpose gives its kind (PURPOSE_KINDS); ``ctx`` is the
    // one new_context() gave (CoreError otherwise)
    int ask_in_place(int player, int purpose, const Context& ctx);
    // ask_in_place() for treasure kinds, as TREASURE actions written into pending.choices
    int ask_treasures(int player, const int* first, const int* last, int purpose, const Context& ctx);
    int ask_treasures(int player, const KindSet& kinds, int purpose, const Context& ctx) {
        return ask_treasures(player, kinds.begin(), kinds.end(), purpose, ctx);
    }
    void say(const std::string& text);
    bool logging() const { return s_.has_log; }
    std::string seat_name(int seat) const { return "player_" + std::to_string(seat); }
    std::string card_name(int kind) const { return cards_->names.at(kind); }
    std::string ability_name(int ref) const { return cards_->ability(ref).name; }
    void end(const std::string& reason);
    int flip_top();
    void push_havok(int card, int you);
    bool move_treasure(int src, int kind, int dst);
    void draw(int p, int n);
    void refill_all();
    void after_resolution();
    int seat_action(int decider, int seat) const { return cards_->SEAT + ((seat - decider) % s_.n + s_.n) % s_.n; }
    int seat_from_action(int decider, int action) const;
    int treasure_action(int kind) const { return cards_->TREASURE + kind; }
    int treasure_of(int action) const;
    int card_action(int kind) const { return cards_->PLAY + kind - cards_->first_hijinks; }
    int card_of(int action) const;
    static void remove_one(Cards& pile, int kind, const char* where);
    static void remove_one(Hand& hand, int kind, const char* where);
    static bool contains(const Cards& pile, int kind);
    int take_answer(int fi);

    // frame handlers
    int run_turn(int fi);
    int run_havok(int fi);
    int run_use(int fi);
    int run_window(int fi);
    int open_window(int fi);
    void crash_order(const Trigger& trig, unsigned seats, CrashOrder& order) const;
    bool may_crash(int p, int on, int who) const;
    unsigned crash_seats(int on, int who) const;
    int run_ops(int fi, const std::vector<Op>& ops);
    bool triggered(int ref, int p, const Trigger& trig) const;
    bool changes_event(int ref, int p, const Trigger& trig) const;

    // effects.cpp: target selection
    bool has_eligible(int owner, int max_value) const;
    bool has_trade_take(int you, int victim, const Op& op) const;  // !trade_takes(...).empty()
    bool is_candidate(int you, int victim, const Op& op) const;    // may this op target the victim?
    Seats hoard_victims(int you, const Op& op) const;
    int trade_take_cap(int you, const Op& op) const;
    int choose_hoard_target(int fi, const Op& op);
    int choose_salvage(int fi, const Op& op);
    int choose_swap(int fi, const Op& op);
    int choose_redirect(int fi, const Op& op);
    int choose(int fi, const Op& op);  // the chooser of a targeted primitive
    static bool is_targeted(int code);
    static bool is_conditional(int code);
    bool has_effect(int you, const Op& op) const;
    // effects.cpp: the primitives
    int primitive(int fi, const Op& op);
    int steal(int fi, const Op& op);
    int break_(int fi, const Op& op);
    int trade(int fi, const Op& op);
    int salvage(int fi, const Op& op);
    int flip(int fi, const Op& op);
    int foresight(int fi, const Op& op);
    int recall(int fi, const Op& op);
    int pass_left(int fi, const Op& op);
    int break_lowest_all(int fi, const Op& op);
    int tribute(int fi, const Op& op);
    int treasure_map(int fi, const Op& op);
    int swap_target(int fi, const Op& op);
    int redirect_event(int fi, const Op& op);
    Frame& crashed(int fi);
};

}  // namespace havok
