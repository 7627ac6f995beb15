// The game state: plain data (card kinds as ints, decks top first), copied by value for clones.
// The engine's work in progress is a stack of frames (a turn, a flipped Havok card, a card or
// ability being used, a crash window); a snapshot (havok_env/snapshot.py) holds each frame as a
// dict of the same fields. Optional fields hold ABSENT (or NONE where a snapshot holds None).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cards.hpp"

namespace havok {

constexpr int ABSENT = -2;  // the key is not there
constexpr int NONE = -1;    // the key holds None

// SplitMix64, as havok_env.state.rng_next.
inline uint64_t rng_next(uint64_t& state) {
    state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// ``x % d`` (d > 0), the same number: a 64-bit division takes tens of cycles (about 10 ns on the
// benchmark machine, and a shuffle asks one per card) where a multiplication by a reciprocal
// from a table takes a few. With m = floor((2^64 - 1) / d) the estimate floor(x * m / 2^64) is
// the quotient or one less, so one subtraction corrects the remainder. (A compiler without
// 128-bit integers, and a d past the table, divide.)
struct Reciprocals {
    static constexpr uint64_t SIZE = 257;
    uint64_t m[SIZE];
    constexpr Reciprocals() : m() {
        for (uint64_t d = 1; d < SIZE; ++d) m[d] = ~uint64_t{0} / d;
    }
};
inline constexpr Reciprocals RECIPROCALS{};

inline uint64_t mod_below(uint64_t x, uint64_t d) {
#ifdef __SIZEOF_INT128__
    if (d > 0 && d < Reciprocals::SIZE) {
        const uint64_t q = static_cast<uint64_t>((static_cast<unsigned __int128>(x) * RECIPROCALS.m[d]) >> 64);
        const uint64_t r = x - q * d;
        return r >= d ? r - d : r;
    }
#endif
    return x % d;
}

using Cards = std::vector<int>;

// A seat's hand: its cards in order, and the kinds it holds as bits, kept up to date as cards come
// and go. A crash window asks every seat whether it holds a crash on the trigger, and every main
// decision lists the kinds in hand: both read a word or two instead of the cards. A kind of 128 or
// more (a card set that large, or a position still to be checked) is not in the bits: wide() says
// so, and readers look at the cards then.
class Hand {
public:
    Hand() = default;
    // (implicit both ways: a pile read in becomes a hand, and a hand reads as any pile does)
    Hand(const Cards& cards) { assign(cards.begin(), cards.end()); }

    const Cards& cards() const { return cards_; }
    operator const Cards&() const { return cards_; }
    size_t size() const { return cards_.size(); }
    bool empty() const { return cards_.empty(); }
    Cards::const_iterator begin() const { return cards_.begin(); }
    Cards::const_iterator end() const { return cards_.end(); }
    int back() const { return cards_.back(); }

    // the kinds held, as bits (in full unless wide())
    const KindBits& kinds() const { return bits_; }
    bool wide() const { return wide_; }

    void reserve(size_t n) { cards_.reserve(n); }
    void push_back(int k) { cards_.push_back(k), mark(k); }
    template <class It>
    void append(It first, It last) {
        for (; first != last; ++first) push_back(*first);
    }
    template <class It>
    void assign(It first, It last) {
        clear();
        append(first, last);
    }
    void clear() { cards_.clear(), bits_ = KindBits{}, wide_ = false; }
    // takes out the first card of ``kind``; false if there is none
    bool remove(int kind) {
        auto it = std::find(cards_.begin(), cards_.end(), kind);
        if (it == cards_.end()) return false;
        cards_.erase(it);
        bits_ = KindBits{}, wide_ = false;  // (the other copies, if any, mark it again)
        for (int k : cards_) mark(k);
        return true;
    }

private:
    void mark(int k) {
        if (KindBits::fits(k)) bits_.add(k);
        else wide_ = true;
    }
    Cards cards_;
    KindBits bits_;
    bool wide_ = false;
};

// dst = src for the short lists a question copies into its context (a few cards at most): pushed
// into the buffer dst keeps, inline, where vector's operator= is an out-of-line call ready for
// any size
inline void copy_short(Cards& dst, const Cards& src) {
    dst.clear();
    for (int k : src) dst.push_back(k);
}

// The structs below are reset for reuse (a frame's slot, the pending decision's context) with
// their lists' buffers kept: each holds its plain fields in a base struct whose defaults are the
// new object's, so that reset() assigns that base anew and clears the lists, and a field added
// to the base is reset with the rest.

// What a crash window is about (a pending crash decision's context["trigger"] dict).
struct TriggerFields {
    int on = ON_EVENT;
    int frame = 0;      // the frame that opened the window
    int who = 0;        // flipper (event), receiver "to" (treasure) or user (use)
    int card = NONE;    // event / treasure
    bool crash_use = false;  // use: "crash" rather than "play"
    int type = 0;       // use: the Hijinks type
    int give = NONE;
    int ability = 0;    // use: the ability reference
};
struct Trigger : TriggerFields {
    Cards owners, picks;

    void reset() {  // as a new Trigger, keeping the lists' buffers
        static_cast<TriggerFields&>(*this) = TriggerFields{};
        owners.clear(), picks.clear();
    }
    void copy_from(const Trigger& o) {  // as *this = o, keeping the lists' buffers
        static_cast<TriggerFields&>(*this) = o;
        copy_short(owners, o.owners), copy_short(picks, o.picks);
    }
};

// Targets chosen so far (frame["t"]).
struct ChosenFields {
    bool done = false;
    int victim = ABSENT, actor = ABSENT, give = ABSENT, swap = ABSENT, seat = ABSENT;
    bool has_picks = false;
};
struct Chosen : ChosenFields {
    Cards picks;

    void reset() {  // as a new Chosen, keeping the list's buffer
        static_cast<ChosenFields&>(*this) = ChosenFields{};
        picks.clear();
    }
};

// A primitive's scratch space (frame["o"]), cleared between primitives.
struct ScratchFields {
    bool pushed = false;
    bool has_shown = false;
    bool has_chosen = false;
    int asking = ABSENT;
    int i = ABSENT;
};
struct Scratch : ScratchFields {
    Cards shown;
    std::vector<std::pair<int, int>> chosen;  // Tidal Shift: [seat, kind]

    void reset() {  // as a new Scratch, keeping the lists' buffers
        static_cast<ScratchFields&>(*this) = ScratchFields{};
        shown.clear(), chosen.clear();
    }
};

// The seats a crash window asks, in turn order, each with its crash choices: at most one entry
// per seat. Like FrameStack it keeps a dropped entry's list, with its buffer, for the next window:
// most turns open a window or two, and a list allocated for every seat that may crash, and freed
// when the window closed, was the core's most frequent allocation. Copies hold the live entries.
class CrashOrder {
public:
    using Entry = std::pair<int, std::vector<int>>;
    CrashOrder() = default;
    CrashOrder(const CrashOrder& o) : n_(o.n_) { std::copy(o.begin(), o.end(), slots_.begin()); }
    CrashOrder& operator=(const CrashOrder& o) {
        if (this != &o) std::copy(o.begin(), o.end(), slots_.begin()), n_ = o.n_;
        return *this;
    }

    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    Entry& operator[](size_t i) { return slots_[i]; }
    const Entry& operator[](size_t i) const { return slots_[i]; }
    const Entry& back() const { return slots_[n_ - 1]; }
    const Entry* begin() const { return slots_.data(); }
    const Entry* end() const { return slots_.data() + n_; }
    void clear() { n_ = 0; }
    void resize(size_t m) { n_ = std::min(n_, m); }  // keeps the first m entries
    // the next entry's slot, its list empty, to be filled and then kept with push() (or not)
    Entry& next() {
        if (n_ == slots_.size()) throw CoreError("a crash window asks more seats than there are");
        Entry& e = slots_[n_];
        e.second.clear();
        return e;
    }
    void push() { ++n_; }
    void emplace_back(int seat, const std::vector<int>& choices) {
        Entry& e = next();
        e.first = seat;
        e.second.assign(choices.begin(), choices.end());
        push();
    }

private:
    std::array<Entry, MAX_PLAYERS> slots_;
    size_t n_ = 0;
};

enum FrameKind : int { F_TURN, F_HAVOK, F_USE, F_WINDOW };
// turn steps: 0 "start", 1 "main"; havok steps 0, 1, 2; use steps: 0 "target", 1 "window", 2 "effect"

struct FrameFields {
    int f = F_TURN;
    int step = 0;
    int a = ABSENT;  // the answer to the last question asked
    // havok and use
    int card = NONE;
    int you = 0;
    int flipper = 0;           // havok
    int to = ABSENT;           // havok: the treasure goes to this seat instead (Finders Keepers)
    bool nullified = false;    // havok
    int user = 0;              // use
    int ability = 0;           // use; havok from step 2 (the event)
    bool crash_use = false;    // use: "crash"
    int crashed = NONE;        // use: the frame it crashes
    bool canceled = false, to_discard = false, ok = false;
    int divert = ABSENT;       // use (a break): Scavenge sends the treasure to this seat
    int pc = 0;                // havok and use: the effect list's next primitive
    // window
    bool has_order = false;
    int i = 0;                 // the entry of the order asked next
};
struct Frame : FrameFields {
    Chosen t;    // havok and use
    Scratch o;   // havok and use
    Trigger trig;                           // window
    CrashOrder order;                       // window: [seat, its crash choices]
    std::vector<std::pair<int, int>> decl;  // window: [seat, action]

    void reset() {  // as a new Frame, keeping the lists' buffers
        static_cast<FrameFields&>(*this) = FrameFields{};
        t.reset(), o.reset(), trig.reset();
        order.clear(), decl.clear();
    }
};

// The stack of frames. A popped frame's slot is kept, with its lists' buffers, for the next
// push: a game pushes and pops a frame for every card flipped and every card used, and building
// and destroying a Frame (a few hundred bytes, eleven lists) each time was a good part of a
// decision's cost. Copies hold the live frames only.
class FrameStack {
public:
    FrameStack() = default;
    FrameStack(const FrameStack& o) : slots_(o.begin(), o.end()), n_(o.n_) {}
    FrameStack(FrameStack&& o) noexcept : slots_(std::move(o.slots_)), n_(o.n_) { o.slots_.clear(), o.n_ = 0; }
    FrameStack& operator=(const FrameStack& o) {
        if (this != &o) {
            if (slots_.size() < o.n_) slots_.resize(o.n_);
            std::copy(o.begin(), o.end(), slots_.begin());
            n_ = o.n_;
        }
        return *this;
    }
    FrameStack& operator=(FrameStack&& o) noexcept {
        slots_ = std::move(o.slots_), n_ = o.n_;
        o.slots_.clear(), o.n_ = 0;
        return *this;
    }

    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    Frame& operator[](size_t i) { return slots_[i]; }
    const Frame& operator[](size_t i) const { return slots_[i]; }
    Frame& back() { return slots_[n_ - 1]; }
    const Frame& back() const { return slots_[n_ - 1]; }
    Frame* begin() { return slots_.data(); }
    Frame* end() { return slots_.data() + n_; }
    const Frame* begin() const { return slots_.data(); }
    const Frame* end() const { return slots_.data() + n_; }

    // a new frame on top, as Frame{} is
    Frame& emplace_back() {
        if (n_ < slots_.size()) {
            slots_[n_].reset();
        } else {
            slots_.emplace_back();
        }
        return slots_[n_++];
    }
    void push_back(const Frame& fr) { emplace_back() = fr; }
    void pop_back() { --n_; }
    void clear() { n_ = 0; }
    void resize(size_t n) {  // n new frames
        clear();
        while (n_ < n) emplace_back();
    }
    void reserve(size_t n) { slots_.reserve(n); }

private:
    std::vector<Frame> slots_;
    size_t n_ = 0;
};

enum DecisionKind : int { K_MAIN, K_CRASH, K_TARGET_SEAT, K_TARGET_TREASURE, K_CHOOSE_CARD, K_OPTION };
extern const char* const DECISION_KINDS[6];
enum Purpose : int {
    P_MAIN, P_CRASH, P_STEAL_FROM, P_STEAL_PICK, P_BREAK_FROM, P_BREAK_PICK, P_TRADE_FROM,
    P_TRADE_TAKE, P_TRADE_GIVE, P_SALVAGE_PICK, P_SWAP_PICK, P_REDIRECT_TO, P_FLIP_OR_NOT,
    P_RESOLVE_WHICH, P_BOTTOM, P_RECALL_PICK, P_PASS_PICK, P_RAID_PICK, P_TRIBUTE_PICK, N_PURPOSES
};
extern const char* const PURPOSES[N_PURPOSES];
extern const int PURPOSE_KINDS[N_PURPOSES];

// The pending decision's context (ability, actor, target, picks, shown; or the crash trigger).
struct ContextFields {
    bool has_trigger = false;
    int ability = ABSENT, actor = ABSENT, target = ABSENT;
    bool has_picks = false, has_shown = false;
};
struct Context : ContextFields {
    Trigger trigger;
    Cards picks, shown;

    // as a new Context, keeping the lists' buffers (a question is asked at every decision)
    void reset() {
        static_cast<ContextFields&>(*this) = ContextFields{};
        trigger.reset();
        picks.clear(), shown.clear();
    }
};

struct Pending {
    int player = 0, kind = 0, purpose = 0;
    std::vector<int> choices;
    Context context;
};

struct Result {
    std::vector<int> winners;
    std::string reason;
    std::vector<int> scores;
};

struct State {
    int n = 2;
    std::vector<int> dragons;
    uint64_t rng = 0;
    Cards havok, hijinks, discard, past_events, trash;  // decks top first
    std::array<Hand, MAX_PLAYERS> hands;
    std::array<Cards, MAX_PLAYERS> hoards, known;
    std::array<bool, MAX_PLAYERS> ready{}, innate_used{}, restricted{};
    std::array<int, MAX_PLAYERS> cards_used{}, card_limit{};
    int turn = 0, current = 0;
    std::vector<std::pair<int, int>> canceled;  // [owner, kind], back to the owner at end of turn
    Cards in_play;
    FrameStack stack;
    bool has_pending = false;
    Pending pending;
    bool has_result = false;
    Result result;
    bool has_log = false;
    std::vector<std::string> log;

    int rand_below(int k) { return static_cast<int>(mod_below(rng_next(rng), static_cast<uint64_t>(k))); }
    // Fisher-Yates from the last card down, j = rand_below(i + 1) for each i in turn. The draws
    // are made a block at a time before that block's swaps: a swap's load of a card at a random
    // index, while earlier swaps' stores are still in flight, stalled the loop that drew and
    // swapped in turn (about twice as slow; shuffles are a tenth of a two-player game's time).
    void shuffle(Cards& cards) {
        int* c = cards.data();
        uint32_t js[64];
        for (int i = static_cast<int>(cards.size()) - 1; i > 0;) {
            const int m = std::min(i, 64);
            for (int t = 0; t < m; ++t) js[t] = static_cast<uint32_t>(rand_below(i - t + 1));
            for (int t = 0; t < m; ++t) std::swap(c[i - t], c[js[t]]);
            i -= m;
        }
    }
};

}  // namespace havok
