// The decision machine: turns, Havok flips, uses of cards and abilities, crash windows.
// A game is fixed by its seed and its actions, byte for byte (tests/rules_fingerprint.py holds
// seeded games to a stored fingerprint); docs/rules.md has the rulings.
#include "engine.hpp"

#include <algorithm>
#include <set>

namespace havok {

const char* const DECISION_KINDS[6] = {"main", "crash", "target_seat", "target_treasure",
                                       "choose_card", "option"};
const char* const PURPOSES[N_PURPOSES] = {
    "main", "crash", "steal_from", "steal_pick", "break_from", "break_pick", "trade_from",
    "trade_take", "trade_give", "salvage_pick", "swap_pick", "redirect_to", "flip_or_not",
    "resolve_which", "bottom", "recall_pick", "pass_pick", "raid_pick", "tribute_pick"};
// each purpose's kind of decision (havok_env/decisions.py's table, which a test holds this to)
const int PURPOSE_KINDS[N_PURPOSES] = {
    K_MAIN, K_CRASH, K_TARGET_SEAT, K_TARGET_TREASURE, K_TARGET_SEAT, K_TARGET_TREASURE,
    K_TARGET_SEAT, K_TARGET_TREASURE, K_TARGET_TREASURE, K_TARGET_TREASURE, K_TARGET_TREASURE,
    K_TARGET_SEAT, K_OPTION, K_OPTION, K_OPTION, K_CHOOSE_CARD, K_TARGET_TREASURE,
    K_TARGET_TREASURE, K_TARGET_TREASURE};

Game::Game(std::shared_ptr<const CardTables> cards, int n, std::vector<int> dragons, uint64_t seed,
           bool log, bool run)
    : cards_(std::move(cards)) {
    deal(n, std::move(dragons), seed, log, run);
}

void Game::redeal(int n, std::vector<int> dragons, uint64_t seed, bool log) {
    State used = std::move(s_);
    s_ = State{};
    // the new game starts from a default State, with the old one's emptied buffers moved in
    auto reuse = [](auto& fresh, auto& old) {
        old.clear();
        fresh = std::move(old);
    };
    for (auto pile : {&State::havok, &State::hijinks, &State::discard, &State::past_events, &State::trash,
                      &State::in_play, &State::dragons})
        reuse(s_.*pile, used.*pile);
    for (int p = 0; p < MAX_PLAYERS; ++p) {
        reuse(s_.hands[p], used.hands[p]);
        reuse(s_.hoards[p], used.hoards[p]);
        reuse(s_.known[p], used.known[p]);
    }
    reuse(s_.stack, used.stack);
    reuse(s_.canceled, used.canceled);
    reuse(s_.pending.choices, used.pending.choices);
    Context& ctx = used.pending.context;  // (a new Context with the old one's buffers)
    ctx.reset();
    s_.pending.context = std::move(ctx);
    reuse(s_.result.winners, used.result.winners);
    reuse(s_.result.scores, used.result.scores);
    reuse(s_.result.reason, used.result.reason);
    reuse(s_.log, used.log);
    deal(n, std::move(dragons), seed, log, true);
}

void Game::deal(int n, std::vector<int> dragons, uint64_t seed, bool log, bool run) {
    const int nd = static_cast<int>(cards_->dragons.size());
    if (n < 2 || n > MAX_PLAYERS || static_cast<int>(dragons.size()) != n)
        throw CoreError("num_players must be 2, 3 or 4");
    s_.n = n;
    s_.rng = seed;
    s_.has_log = log;
    // the dragons nobody took, in order (CardTables::finish allows fewer than 64 dragons)
    int free[64], n_free = 0;
    for (int d = 0; d < nd; ++d)
        if (std::find(dragons.begin(), dragons.end(), d) == dragons.end()) free[n_free++] = d;
    for (int seat = 0; seat < n; ++seat) {
        if (dragons[seat] >= nd) throw CoreError("no such dragon");
        if (dragons[seat] < 0) {
            if (n_free == 0) throw CoreError("not enough dragons for the seats");
            int i = s_.rand_below(n_free);
            dragons[seat] = free[i];
            std::copy(free + i + 1, free + n_free, free + i);
            --n_free;
        }
    }
    s_.dragons.assign(dragons.begin(), dragons.end());
    for (int p = 0; p < n; ++p) s_.ready[p] = true, s_.card_limit[p] = 1;
    setup(run);
}

Game::Game(std::shared_ptr<const CardTables> cards, State state, bool run)
    : cards_(std::move(cards)), s_(std::move(state)) {
    check_state();
    if (!run) return;
    check_cards();
    s_.has_pending = false;  // re-derived from the stack, so that edited positions stay legal
    if (!s_.has_result) advance();
}

void Game::setup(bool run) {
    const CardTables& cs = *cards_;
    // each pile's room at once, rather than growing it card by card during the game
    for (Cards* pile : {&s_.havok, &s_.past_events, &s_.trash, &s_.in_play}) pile->reserve(cs.havok_deck.size());
    for (Cards* pile : {&s_.hijinks, &s_.discard}) pile->reserve(cs.hijinks_deck.size());
    for (int p = 0; p < s_.n; ++p) s_.hands[p].reserve(2 * HAND_SIZE), s_.hoards[p].reserve(16);
    s_.stack.reserve(8);  // a turn, a flip, a card used, its window and a crash on it, and room
    Cards& havok = s_.havok;
    havok.assign(cs.havok_deck.begin(), cs.havok_deck.end());
    // a starting treasure to each seat, from its copies (together, in kind order, and at least
    // MAX_PLAYERS of them: CardTables::finish)
    const auto first = std::find(havok.begin(), havok.end(), cs.starting_treasure);
    havok.erase(first, first + s_.n);
    for (int p = 0; p < s_.n; ++p) s_.hoards[p].push_back(cs.starting_treasure);
    s_.shuffle(havok);
    s_.hijinks.assign(cs.hijinks_deck.begin(), cs.hijinks_deck.end());
    s_.shuffle(s_.hijinks);
    // one card at a time to each seat in turn, from the top, taken off the deck at once
    Cards& hijinks = s_.hijinks;
    const int dealt = std::min(HAND_SIZE * s_.n, static_cast<int>(hijinks.size()));
    for (int i = 0; i < dealt; ++i) s_.hands[i % s_.n].push_back(hijinks[i]);
    hijinks.erase(hijinks.begin(), hijinks.begin() + dealt);
    s_.current = s_.rand_below(s_.n);
    s_.stack.emplace_back();  // a turn, at its start (a new frame is one)
    if (run) advance();
}

// -- queries ---------------------------------------------------------------------------------

int Game::score(int seat) const {
    const std::vector<int>& v = cards_->worth[s_.dragons[seat]];
    int total = 0;
    for (int k : s_.hoards[seat]) total += v[k];
    return total;
}

std::vector<int> Game::scores() const {
    std::vector<int> out(s_.n);
    for (int p = 0; p < s_.n; ++p) out[p] = score(p);
    return out;
}

bool Game::is_legal(int action) const {
    if (!s_.has_pending) return false;
    // (every choice compared, without an early exit: where in a list of a few a random action
    // lies is a branch no predictor learns)
    bool found = false;
    for (int c : s_.pending.choices) found |= c == action;
    return found;
}

int Game::seat_from_action(int decider, int action) const {
    if (action < cards_->SEAT || action >= cards_->TREASURE) throw CoreError("not a seat action");
    return (decider + action - cards_->SEAT) % s_.n;
}

int Game::treasure_of(int action) const {
    int k = action - cards_->TREASURE;
    if (!cards_->is_treasure(k)) throw CoreError("not a treasure action");
    return k;
}

int Game::card_of(int action) const {
    int k = action - cards_->PLAY + cards_->first_hijinks;
    if (!cards_->is_hijinks(k)) throw CoreError("not a Hijinks card action");
    return k;
}

void Game::remove_one(Cards& pile, int kind, const char* where) {
    auto it = std::find(pile.begin(), pile.end(), kind);
    if (it == pile.end()) throw CoreError(std::string("a card is missing from the ") + where);
    pile.erase(it);
}

void Game::remove_one(Hand& hand, int kind, const char* where) {
    if (!hand.remove(kind)) throw CoreError(std::string("a card is missing from the ") + where);
}

bool Game::contains(const Cards& pile, int kind) {
    return std::find(pile.begin(), pile.end(), kind) != pile.end();
}

int Game::take_answer(int fi) {
    Frame& fr = frame(fi);
    int a = fr.a;
    fr.a = ABSENT;
    return a;
}

// -- helpers used by the effect primitives ---------------------------------------------------

// Questions fill the pending decision's context in place (new_context), so that its buffers (the
// picks, the cards shown, the crash trigger's lists) are kept from one question to the next
// rather than allocated for each: a context copied in and out was a good part of the core's
// allocation.
Context& Game::new_context() {
    s_.pending.context.reset();
    return s_.pending.context;
}

int Game::ask_in_place(int player, int purpose, const Context& ctx) {
    if (&ctx != &s_.pending.context) throw CoreError("a question's context must come from new_context()");
    s_.has_pending = true;
    s_.pending.player = player;
    s_.pending.kind = PURPOSE_KINDS[purpose];
    s_.pending.purpose = purpose;
    return WAIT;
}

void Game::say(const std::string& text) {
    if (s_.has_log) s_.log.push_back(text);
}

void Game::end(const std::string& reason) {
    std::vector<int>& sc = s_.result.scores;  // (written in place: its buffer is kept by redeal)
    sc.resize(s_.n);
    for (int p = 0; p < s_.n; ++p) sc[p] = score(p);
    int best = *std::max_element(sc.begin(), sc.end());
    s_.result.winners.clear();
    for (int p = 0; p < s_.n; ++p)
        if (sc[p] == best) s_.result.winners.push_back(p);
    s_.result.reason = reason;
    s_.has_result = true;
    s_.has_pending = false;
    if (logging()) {
        std::string text = "game over (" + reason + "): scores [";
        for (int p = 0; p < s_.n; ++p) text += (p ? ", " : "") + std::to_string(sc[p]);
        say(text + "]");
    }
}

int Game::flip_top() {
    if (s_.havok.empty()) throw CoreError("flip from an empty Havok deck");
    if (chance_) return flip_watched();
    return take_top();
}

int Game::take_top() {
    int k = s_.havok.front();
    s_.havok.erase(s_.havok.begin());
    s_.in_play.push_back(k);
    for (int p = 0; p < s_.n; ++p) {
        Cards& known = s_.known[p];
        if (known.empty()) continue;
        if (known.front() == k)
            known.erase(known.begin());
        else
            known.clear();
    }
    return k;
}

void Game::push_havok(int card, int you) {
    if (logging()) say(seat_name(you) + " flips " + card_name(card));
    Frame& fr = s_.stack.emplace_back();
    fr.f = F_HAVOK;
    fr.card = card;
    fr.you = fr.flipper = you;
}

bool Game::move_treasure(int src, int kind, int dst) {
    Cards& hoard = s_.hoards.at(src);
    auto it = std::find(hoard.begin(), hoard.end(), kind);
    if (it == hoard.end()) return false;
    hoard.erase(it);
    s_.hoards.at(dst).push_back(kind);
    if (logging()) say(card_name(kind) + " moves from " + seat_name(src) + " to " + seat_name(dst));
    return true;
}

void Game::draw(int p, int n) {
    if (chance_) return draw_watched(p, n);
    Cards& deck = s_.hijinks;
    while (n > 0) {
        if (deck.empty()) {
            if (s_.discard.empty()) return;
            reshuffle();
        }
        // the top cards in order, taken off the deck at once
        const int take = std::min(n, static_cast<int>(deck.size()));
        s_.hands[p].append(deck.begin(), deck.begin() + take);
        deck.erase(deck.begin(), deck.begin() + take);
        n -= take;
    }
}

void Game::reshuffle() {
    std::swap(s_.hijinks, s_.discard);
    s_.discard.clear();
    s_.shuffle(s_.hijinks);
    say("the discard pile is shuffled into a new Hijinks deck");
}

void Game::refill_all() {
    for (int i = 0; i < s_.n; ++i) {
        int p = (s_.current + i) % s_.n;
        int have = static_cast<int>(s_.hands[p].size());
        if (have < HAND_SIZE) draw(p, HAND_SIZE - have);
    }
}

void Game::after_resolution() {
    for (int p = 0; p < s_.n; ++p)
        if (static_cast<int>(s_.hands[p].size()) < HAND_SIZE) {
            refill_all();
            break;
        }
    if (!s_.has_result) {
        // (a hoard too small to reach the winning score is not summed: most are, after most resolutions)
        for (int p = 0; p < s_.n; ++p)
            if (static_cast<long long>(s_.hoards[p].size()) * cards_->most_worth[s_.dragons[p]] >= WIN_SCORE &&
                score(p) >= WIN_SCORE) {
                end("hoard_15");
                break;
            }
    }
}

bool Game::usable(int ref, int seat) const {
    for (const Op& op : ops_for(ref, seat))
        if (is_conditional(op.code) && !op_usable(seat, op)) return false;
    return true;
}

// -- legal choices ---------------------------------------------------------------------------

std::vector<int> Game::main_choices(int p) const {
    std::vector<int> out;
    main_choices(p, out);
    return out;
}

void Game::main_choices(int p, std::vector<int>& out) const {
    const CardTables& cs = *cards_;
    out.clear(), out.push_back(cs.END);  // (assign(1, x) is an out-of-line call that fills)
    const Hand& hand = s_.hands[p];
    if (s_.cards_used[p] < s_.card_limit[p] && !s_.restricted[p])
        each_kind(hand, cs.play_kinds, [&](int k) { return !cs.ability(k).crash; }, [&](int k) {
            if (usable(k, p)) out.push_back(card_action(k));
        });
    int innate = cs.innate(s_.dragons[p], false);
    if (s_.ready[p] && !s_.innate_used[p] && !s_.restricted[p] && usable(innate, p))
        out.push_back(cs.INNATE_PLAY);
    if (s_.cards_used[p] == 0)
        each_kind(hand, [&](int k) { out.push_back(cs.DISCARD + k - cs.first_hijinks); });
}

bool Game::triggered(int ref, int p, const Trigger& trig) const {
    const TriggerSpec& T = cards_->ability(ref).trigger;
    if (T.on != trig.on) return false;
    if (T.on == ON_EVENT) return changes_event(ref, p, trig);
    if (T.on == ON_TREASURE) return p != trig.who && cards_->value.at(trig.card) <= T.max_printed;
    if (p == trig.who || !(trig.crash_use ? T.uses_crash : T.uses_play)) return false;
    if (!T.has_types) return true;
    if (!(T.types >> trig.type & 1u) || trig.owners.empty()) return false;
    bool mine = contains(trig.owners, p);
    bool all_mine = std::all_of(trig.owners.begin(), trig.owners.end(), [p](int o) { return o == p; });
    if ((T.targets == T_OWN && !mine) || (T.targets == T_OTHER && all_mine)) return false;
    if (T.needs_spare) {
        for (int k : s_.hoards[p])
            if (!contains(trig.picks, k)) return true;
        return false;
    }
    return true;
}

bool Game::event_has_effect(int card, int you) const {
    for (const Op& op : ops_for(card, you))
        if (has_effect(you, op)) return true;
    return false;
}

// Ruling 24: an event crash needs an event that does something, for the dragon it resolves for
// or, for a redirect, for a dragon it could be sent to.
bool Game::changes_event(int ref, int p, const Trigger& trig) const {
    const Frame& ev = frame(trig.frame);
    if (ev.f != F_HAVOK) throw CoreError("an event window on a frame that is no Havok card");
    if (event_has_effect(ev.card, ev.you)) return true;
    for (const Op& op : ops_for(ref, p)) {
        if (op.code != OP_REDIRECT_EVENT) continue;
        for (int q : redirect_seats(ev.flipper, op))
            if (event_has_effect(ev.card, q)) return true;
        return false;
    }
    return false;
}

// crash_choices' first filter, without its lists: does ``p`` hold a crash on this kind of
// trigger, or may its dragon's crash go off on one? Most seats in most windows do not. Nobody
// crashes their own use or treasure (``who``'s; triggered() refuses them).
bool Game::may_crash(int p, int on, int who) const {
    if (p == who && on != ON_EVENT) return false;
    const CardTables& cs = *cards_;
    if (s_.ready[p] && !s_.innate_used[p] && cs.crashes_on(cs.innate(s_.dragons[p], true), on)) return true;
    if (s_.cards_used[p] >= s_.card_limit[p] || s_.restricted[p]) return false;
    return holds_any(s_.hands[p], cs.crash_kinds_on(on), [&](int k) { return cs.crashes_on(k, on); });
}

std::vector<int> Game::crash_choices(int p, const Trigger& trig) const {
    std::vector<int> out;
    crash_choices(p, trig, out);
    return out;
}

void Game::crash_choices(int p, const Trigger& trig, std::vector<int>& out) const {
    const CardTables& cs = *cards_;
    out.clear();
    if (s_.cards_used[p] < s_.card_limit[p] && !s_.restricted[p]) {
        // (triggered() refuses a crash on another kind of trigger: those are skipped here)
        each_kind(s_.hands[p], cs.crash_kinds_on(trig.on), [&](int k) { return cs.crashes_on(k, trig.on); },
                  [&](int k) {
                      if (triggered(k, p, trig)) out.push_back(card_action(k));
                  });
    }
    const int innate = cs.innate(s_.dragons[p], true);
    if (s_.ready[p] && !s_.innate_used[p] && cs.crashes_on(innate, trig.on) && triggered(innate, p, trig))
        out.push_back(cs.INNATE_CRASH);
}

// -- the decision machine --------------------------------------------------------------------

void Game::apply(int action) {
    if (!s_.has_pending) throw CoreError("the game is over, no decision is pending");
    if (!is_legal(action)) throw CoreError("illegal action");
    answer(action);
}

void Game::apply_choice(size_t i) {
    if (!s_.has_pending) throw CoreError("the game is over, no decision is pending");
    if (i >= s_.pending.choices.size()) throw CoreError("no such choice");
    answer(s_.pending.choices[i]);
}

void Game::answer(int action) {
    s_.has_pending = false;
    s_.stack.back().a = action;
    advance();
}

void Game::advance() {
    // A real game takes a few hundred steps between decisions at most; a corrupt position that
    // would never stop is refused instead.
    for (long steps = 0; !s_.has_result && !halted_; ++steps) {
        if (steps > 1000000) throw CoreError("the game does not reach a decision");
        if (s_.stack.empty()) throw CoreError("the game has no work left but is not over");
        int fi = static_cast<int>(s_.stack.size()) - 1;
        int r;
        switch (s_.stack[fi].f) {
            case F_TURN: r = run_turn(fi); break;
            case F_HAVOK: r = run_havok(fi); break;
            case F_USE: r = run_use(fi); break;
            default: r = run_window(fi); break;
        }
        if (r == WAIT) {
            Pending& p = s_.pending;
            if (p.choices.size() > 1 || p.kind == K_CRASH) return;
            if (p.choices.empty())
                throw CoreError("the position asks player " + std::to_string(p.player) + " to decide (" +
                                PURPOSES[p.purpose] + ") with no legal choice");
            s_.has_pending = false;
            frame(fi).a = p.choices[0];
        }
    }
}

int Game::run_turn(int fi) {
    const CardTables& cs = *cards_;
    const int n = s_.n;
    if (frame(fi).step == 0) {
        if (s_.havok.empty()) {  // the turn cannot begin: it is not counted
            end("havok_empty");
            return CONTINUE;
        }
        s_.turn += 1;
        for (int p = 0; p < MAX_PLAYERS; ++p) {
            s_.cards_used[p] = 0;
            s_.card_limit[p] = 1;
            s_.innate_used[p] = s_.restricted[p] = false;
        }
        frame(fi).step = 1;
        push_havok(flip_top(), s_.current);
        return CONTINUE;
    }
    int p = s_.current;
    int a = take_answer(fi);
    if (a == ABSENT) {
        main_choices(p, s_.pending.choices);
        return ask_in_place(p, P_MAIN, new_context());
    }
    if (a == cs.END || a >= cs.DISCARD) {
        if (a != cs.END) {
            int k = a - cs.DISCARD + cs.first_hijinks;
            if (!cs.is_hijinks(k)) throw CoreError("not a discard action");
            remove_one(s_.hands[p], k, "hand");
            s_.discard.push_back(k);
            if (logging()) say(seat_name(p) + " discards " + card_name(k));
            draw(p, HAND_SIZE - static_cast<int>(s_.hands[p].size()));
        }
        for (const auto& [owner, k] : s_.canceled) {
            remove_one(s_.in_play, k, "cards in play");
            s_.hands.at(owner).push_back(k);
        }
        s_.canceled.clear();
        s_.current = (p + 1) % n;
        frame(fi).step = 0;
        return CONTINUE;
    }
    const int k = a == cs.INNATE_PLAY ? NONE : card_of(a);
    if (k != NONE) remove_one(s_.hands[p], k, "hand");  // (the checks before anything changes)
    // (built in place: a Frame is a few hundred bytes, and a moved one still has to be destroyed)
    Frame& use = s_.stack.emplace_back();
    use.f = F_USE;
    use.user = use.you = p;
    if (k == NONE) {
        use.ability = cs.innate(s_.dragons[p], false);
        use.card = NONE;
        s_.innate_used[p] = true;
        s_.ready[p] = false;
    } else {
        use.ability = use.card = k;
        s_.in_play.push_back(k);
        s_.cards_used[p] += 1;
    }
    if (logging()) say(seat_name(p) + " uses " + ability_name(use.ability));
    return CONTINUE;
}

// The trigger of the crash window that opens on frame ``fi``: a Havok card just flipped, or a
// card or ability whose targets are chosen (snapshot validation rebuilds one to check it).
Trigger Game::trigger_of(int fi) const {
    Trigger trig;
    fill_trigger(fi, trig);
    return trig;
}

// What a window on frame ``fr`` answers (TriggerOn) and its seat: the flipper of an event, the
// receiver of a treasure, the user of a card or ability.
std::pair<int, int> Game::trigger_on(const Frame& fr) const {
    if (fr.f == F_HAVOK) {
        if (fr.card < 0 || fr.card >= cards_->n_kinds) throw CoreError("bad card");
        return cards_->is_treasure(fr.card) ? std::make_pair(int{ON_TREASURE}, fr.you) : std::make_pair(int{ON_EVENT}, fr.flipper);
    }
    if (fr.f != F_USE) throw CoreError("a crash window opens only on a Havok card or a use");
    return {ON_USE, fr.user};
}

void Game::fill_trigger(int fi, Trigger& trig) const {
    const Frame& fr = frame(fi);
    trig.reset();
    trig.frame = fi;
    std::tie(trig.on, trig.who) = trigger_on(fr);
    if (fr.f == F_HAVOK) {
        trig.card = fr.card;
        return;
    }
    const Chosen& t = fr.t;
    trig.crash_use = fr.crash_use;
    trig.type = cards_->ability(fr.ability).type;
    if (!t.picks.empty() && t.victim != ABSENT) trig.owners.push_back(t.victim);
    trig.picks.assign(t.picks.begin(), t.picks.end());
    trig.give = t.give == ABSENT ? NONE : t.give;
    trig.ability = fr.ability;
}

// Opens the crash window on frame ``fi`` (its step already moved past the window). Most windows
// find nobody able to crash: those close at once (the window's first step would have found the
// same seats, with nothing in between). The window is worked out in a new frame's slot, whose
// lists keep their buffers from one window to the next, and popped again when nobody can crash.
int Game::open_window(int fi) {
    // the seats that may crash at all, from the trigger's kind and seat alone (crash_order's
    // first filter, asked once a seat): most windows find nobody, and those close without a frame
    const auto [on, who] = trigger_on(frame(fi));
    const unsigned seats = crash_seats(on, who);
    if (seats == 0) return CONTINUE;
    Frame& w = s_.stack.emplace_back();
    try {
        fill_trigger(fi, w.trig);
        crash_order(w.trig, seats, w.order);
    } catch (...) {
        s_.stack.pop_back();
        throw;
    }
    if (w.order.empty()) {
        s_.stack.pop_back();
        return CONTINUE;
    }
    w.f = F_WINDOW;
    w.has_order = true;
    return CONTINUE;
}

// The seats that may crash on ``trig``, in turn order from the current player, with their choices:
// of ``seats`` (crash_seats(): a bit for each seat may_crash() lets through), those with one.
void Game::crash_order(const Trigger& trig, unsigned seats, CrashOrder& order) const {
    order.clear();
    for (int i = 0, p = s_.current; i < s_.n; ++i, p = p + 1 == s_.n ? 0 : p + 1) {
        if (!(seats >> p & 1u)) continue;
        CrashOrder::Entry& e = order.next();
        crash_choices(p, trig, e.second);
        if (!e.second.empty()) e.first = p, order.push();
    }
}

// may_crash() of every seat, as a bit a seat
unsigned Game::crash_seats(int on, int who) const {
    unsigned seats = 0;
    for (int p = 0; p < s_.n; ++p) seats |= unsigned{may_crash(p, on, who)} << p;
    return seats;
}

int Game::run_havok(int fi) {
    const CardTables& cs = *cards_;
    int card = frame(fi).card;
    if (frame(fi).step == 0) {
        frame(fi).step = 1;
        return open_window(fi);
    }
    if (cs.is_treasure(card)) {
        Frame& fr = frame(fi);
        int to = fr.to != ABSENT ? fr.to : fr.you;
        remove_one(s_.in_play, card, "cards in play");
        s_.hoards.at(to).push_back(card);
        if (logging()) say(card_name(card) + " goes to " + seat_name(to) + "'s hoard");
    } else {
        if (frame(fi).step == 1) {
            Frame& fr = frame(fi);
            fr.step = 2;
            fr.ability = card;
            fr.t.reset();
            fr.o.reset();
            fr.pc = 0;
        }
        if (!frame(fi).nullified) {
            int r = run_ops(fi, ops_for(card, frame(fi).you));
            if (r != DONE) return r;
        } else if (logging()) {
            say(card_name(card) + " is nullified");
        }
        remove_one(s_.in_play, card, "cards in play");
        s_.past_events.push_back(card);
    }
    s_.stack.pop_back();
    after_resolution();
    return CONTINUE;
}

int Game::run_ops(int fi, const std::vector<Op>& ops) {
    while (frame(fi).pc < static_cast<int>(ops.size())) {
        int pc = frame(fi).pc;
        if (pc < 0) throw CoreError("bad effect position");
        int r = primitive(fi, ops[pc]);
        if (r != DONE) return r;
        frame(fi).pc += 1;
        frame(fi).o.reset();
    }
    return DONE;
}

int Game::run_use(int fi) {
    const CardTables& cs = *cards_;
    int user = frame(fi).user;
    int ref = frame(fi).ability;
    const Ability& ab = cs.ability(ref);
    const std::vector<Op>& ops = ops_for(ref, user);
    if (frame(fi).step == 0) {
        for (const Op& op : ops)
            if (is_targeted(op.code)) {
                int r = choose(fi, op);
                if (r != DONE) return r;
                break;
            }
        frame(fi).step = 1;
        return open_window(fi);
    }
    if (frame(fi).step == 1) {
        if (frame(fi).canceled) {
            int card = frame(fi).card;
            if (logging()) say(ability_name(ref) + " is canceled");
            if (card != NONE) {
                if (frame(fi).to_discard) {
                    remove_one(s_.in_play, card, "cards in play");
                    s_.discard.push_back(card);
                } else {
                    s_.canceled.emplace_back(user, card);
                }
            }
            s_.stack.pop_back();
            after_resolution();
            return CONTINUE;
        }
        frame(fi).step = 2;
    }
    int r = run_ops(fi, ops);
    if (r != DONE) return r;
    int card = frame(fi).card;
    if (card != NONE) {
        remove_one(s_.in_play, card, "cards in play");
        s_.discard.push_back(card);
        if (!s_.ready[user] && frame(fi).ok && cs.dragons[s_.dragons[user]].ready_type == ab.type) {
            s_.ready[user] = true;
            if (logging()) say(seat_name(user) + "'s dragon is ready again");
        }
    }
    s_.stack.pop_back();
    after_resolution();
    return CONTINUE;
}

int Game::run_window(int fi) {
    const CardTables& cs = *cards_;
    const int n = s_.n;
    if (!frame(fi).has_order) {  // (a window restored from a snapshot before its first step)
        Frame& fr = frame(fi);
        crash_order(fr.trig, crash_seats(fr.trig.on, fr.trig.who), fr.order);
        fr.has_order = true;
    }
    int a = take_answer(fi);
    Frame& fr = frame(fi);
    if (a != ABSENT) {
        if (fr.i < 0 || fr.i >= static_cast<int>(fr.order.size())) throw CoreError("bad crash window");
        if (a != cs.END) fr.decl.emplace_back(fr.order[fr.i].first, a);
        fr.i += 1;
    }
    if (fr.i < 0) throw CoreError("bad crash window");
    if (fr.i < static_cast<int>(fr.order.size())) {
        const auto& [p, choices] = fr.order[fr.i];
        std::vector<int>& all = s_.pending.choices;
        all.clear(), all.push_back(cs.END);
        all.insert(all.end(), choices.begin(), choices.end());
        Context& ctx = new_context();
        ctx.has_trigger = true;
        ctx.trigger.copy_from(fr.trig);
        return ask_in_place(p, P_CRASH, ctx);
    }
    const int crashed_frame = fr.trig.frame;
    // the declarations are copied out before the window's frame is popped, so that its slot keeps
    // their buffer (a seat declares at most once in a window)
    if (fr.decl.size() > static_cast<size_t>(n)) throw CoreError("bad crash window");
    std::pair<int, int> decl[MAX_PLAYERS];
    const int n_decl = static_cast<int>(fr.decl.size());
    std::copy(fr.decl.begin(), fr.decl.end(), decl);
    s_.stack.pop_back();
    if (n_decl == 0) return CONTINUE;
    std::pair<int, int> win = n_decl > 1 ? decl[chance_below(n_decl)] : decl[0];
    if (n_decl > 1 && logging()) {
        std::string who;
        for (int i = 0; i < n_decl; ++i) who += (i ? ", " : "") + seat_name(decl[i].first);
        say("contest between " + who + ": " + seat_name(win.first) + " wins");
    }
    int ref = 0, card = NONE;
    for (int i = 0; i < n_decl; ++i) {
        const auto& [p, act] = decl[i];
        if (p < 0 || p >= n) throw CoreError("bad crash declaration");
        if (act == cs.INNATE_CRASH) {
            if (std::make_pair(p, act) == win) {
                s_.innate_used[p] = true;
                s_.ready[p] = false;
                ref = cs.innate(s_.dragons[p], true);
                card = NONE;
            }
            continue;
        }
        int k = card_of(act);
        remove_one(s_.hands[p], k, "hand");
        s_.in_play.push_back(k);
        s_.cards_used[p] += 1;
        if (std::make_pair(p, act) == win) {
            ref = card = k;
        } else {
            s_.canceled.emplace_back(p, k);
            if (logging()) say(seat_name(p) + "'s " + card_name(k) + " is canceled");
        }
    }
    int p = win.first;
    if (logging()) say(seat_name(p) + " crashes with " + ability_name(ref));
    Frame& use = s_.stack.emplace_back();
    use.f = F_USE;
    use.user = use.you = p;
    use.ability = ref;
    use.card = card;
    use.crash_use = true;
    use.crashed = crashed_frame;
    return CONTINUE;
}

// -- checks ----------------------------------------------------------------------------------

namespace {

// The checks of a saved position, in the words they are written in: a seat, a pile of cards of
// one kind, a Havok card, an action, an ability reference.
struct StateChecks {
    const CardTables& cs;
    const State& s;
    int n;

    static void need(bool ok, const char* what) {
        if (!ok) throw CoreError(what);
    }
    bool seat(int p) const { return p >= 0 && p < n; }
    bool seat_or(int p, int other) const { return p == other || seat(p); }
    bool kinds(const Cards& pile, bool (CardTables::*is)(int) const) const {
        for (int k : pile)
            if (!(cs.*is)(k)) return false;
        return true;
    }
    bool havok_kind(int k) const { return cs.is_treasure(k) || cs.is_event(k); }
    bool action(int a) const { return a >= 0 && a < cs.n_actions; }
    bool ref(int r) const { return r >= 0 && r < cs.n_refs() && cs.abilities[r].present; }

    void seats() const;
    void piles() const;
    void held() const;
    void frame(int fi) const;
    void window(const Frame& fr, int fi) const;
};

// The seats: dragons, counters, and the cards each one holds.
void StateChecks::seats() const {
    need(n >= 2 && n <= MAX_PLAYERS && static_cast<int>(s.dragons.size()) == n, "bad player count");
    for (int p = 0; p < n; ++p) {
        need(s.dragons[p] >= 0 && s.dragons[p] < static_cast<int>(cs.dragons.size()), "no such dragon");
        for (int q = 0; q < p; ++q) need(s.dragons[p] != s.dragons[q], "two seats share a dragon");
        need(s.cards_used[p] >= 0 && s.cards_used[p] <= 1000 && s.card_limit[p] >= 0 &&
                 s.card_limit[p] <= 1000, "cards_used and card_limit must be 0 to 1000");
        need(kinds(s.hands[p], &CardTables::is_hijinks), "a hand holds a card that is no Hijinks card");
        need(kinds(s.hoards[p], &CardTables::is_treasure), "a hoard holds a card that is no treasure");
        for (int k : s.known[p]) need(havok_kind(k), "a known Havok card is no Havok card");
    }
    for (int p = n; p < MAX_PLAYERS; ++p)
        need(s.hands[p].empty() && s.hoards[p].empty() && s.known[p].empty(), "cards of a missing seat");
    need(seat(s.current) && s.turn >= 0 && s.turn <= 1000000, "bad current player or turn");
}

// The shared piles, and the canceled cards waiting among the cards in play.
void StateChecks::piles() const {
    need(kinds(s.hijinks, &CardTables::is_hijinks) && kinds(s.discard, &CardTables::is_hijinks),
         "the Hijinks deck and the discard pile hold Hijinks cards only");
    need(kinds(s.trash, &CardTables::is_treasure), "the trash heap holds treasures only");
    need(kinds(s.past_events, &CardTables::is_event), "past events holds events only");
    for (int k : s.havok) need(havok_kind(k), "the Havok deck holds Havok cards only");
    std::vector<int> waiting(cs.n_kinds, 0);
    for (const auto& [owner, k] : s.canceled) {
        need(seat(owner) && cs.is_hijinks(k), "bad canceled card");
        waiting[k] += 1;
    }
    for (int k : s.in_play) need(k >= 0 && k < cs.n_kinds, "no such card kind");
    for (int k = 0; k < cs.n_kinds; ++k)
        need(waiting[k] <= std::count(s.in_play.begin(), s.in_play.end(), k), "bad canceled card");
}

// The cards in play include all those the work in progress holds: each Havok card being
// resolved, each card being used, the cards a flip shows before one is chosen, and the
// canceled cards waiting to return (a hand-edited position may leave others there, inert).
void StateChecks::held() const {
    std::vector<int> count(cs.n_kinds, 0);
    for (const auto& c : s.canceled) count[c.second] += 1;
    for (const Frame& fr : s.stack) {
        if ((fr.f == F_HAVOK || fr.f == F_USE) && fr.card >= 0 && fr.card < cs.n_kinds) count[fr.card] += 1;
        if (!fr.o.pushed)
            for (int k : fr.o.shown)
                if (k >= 0 && k < cs.n_kinds) count[k] += 1;
    }
    for (int k = 0; k < cs.n_kinds; ++k)
        need(count[k] <= std::count(s.in_play.begin(), s.in_play.end(), k),
             "a card of the work in progress is not in play");
}

// One frame of the work in progress: its answer, targets and scratch, then its own kind's fields.
void StateChecks::frame(int fi) const {
    const Frame& fr = s.stack[fi];
    need(fr.a == ABSENT || action(fr.a), "bad answer in a frame");
    need(fr.pc >= 0 && fr.pc <= 1000, "bad effect position");
    const Chosen& t = fr.t;
    need(seat_or(t.victim, ABSENT) || t.victim == NONE, "bad target");
    need(seat_or(t.actor, ABSENT) && seat_or(t.seat, ABSENT), "bad target");
    need((t.give == ABSENT || cs.is_treasure(t.give)) && (t.swap == ABSENT || cs.is_treasure(t.swap)) &&
             kinds(t.picks, &CardTables::is_treasure), "bad target treasure");
    const Scratch& o = fr.o;
    for (int k : o.shown) need(havok_kind(k), "bad shown card");
    for (const auto& [p, k] : o.chosen) need(seat(p) && cs.is_treasure(k), "bad passed treasure");
    need(seat_or(o.asking, ABSENT) && (o.i == ABSENT || (o.i >= 0 && o.i <= n)), "bad scratch");
    switch (fr.f) {
        case F_TURN:
            need(fi == 0 && (fr.step == 0 || fr.step == 1), "a turn frame must be the first");
            break;
        case F_HAVOK:
            need(fi > 0 && fr.step >= 0 && fr.step <= 2 && havok_kind(fr.card), "bad Havok frame");
            need(seat(fr.you) && seat(fr.flipper) && seat_or(fr.to, ABSENT), "bad Havok frame seat");
            need(fr.step < 2 || cs.is_treasure(fr.card) || fr.ability == fr.card, "bad Havok frame");
            break;
        case F_USE:
            need(fi > 0 && fr.step >= 0 && fr.step <= 2 && ref(fr.ability), "bad use frame");
            need(fr.card == NONE ? cs.is_innate(fr.ability) : fr.card == fr.ability && cs.is_hijinks(fr.card),
                 "bad use frame card");
            need(seat(fr.user) && seat(fr.you) && seat_or(fr.divert, ABSENT), "bad use frame seat");
            need(fr.crashed == NONE || (fr.crashed > 0 && fr.crashed < fi), "bad crashed frame");
            need(fr.crash_use == (fr.crashed != NONE), "a crash use needs the frame it crashes");
            break;
        case F_WINDOW:
            window(fr, fi);
            break;
        default: need(false, "no such frame kind");
    }
}

// A crash window: what it is about (on a frame below it of the matching kind) and who is asked.
void StateChecks::window(const Frame& fr, int fi) const {
    const Trigger& tr = fr.trig;
    need(fi > 0 && tr.frame > 0 && tr.frame < fi && tr.on >= ON_EVENT && tr.on <= ON_USE,
         "bad crash window");
    need(seat(tr.who) && (tr.card == NONE || havok_kind(tr.card)) && tr.type >= 0 &&
             tr.type < N_TYPES && (tr.give == NONE || cs.is_treasure(tr.give)) &&
             kinds(tr.picks, &CardTables::is_treasure), "bad crash trigger");
    for (int p : tr.owners) need(seat(p), "bad crash trigger");
    need(tr.on == ON_USE ? ref(tr.ability) : tr.card != NONE, "bad crash trigger");
    const int on_frame = s.stack[tr.frame].f;
    need(on_frame == (tr.on == ON_USE ? F_USE : F_HAVOK), "a crash window on the wrong frame");
    need(fr.i >= 0 && fr.i <= n, "bad crash window");
    // (a crash card no longer in hand is met, as a CoreError, when the window closes;
    // a determinized world resamples the hands of the seats already asked)
    for (const auto& [p, choices] : fr.order) {
        need(seat(p), "bad crash window seat");
        for (int a : choices) need(action(a), "bad crash choice");
    }
    for (const auto& [p, a] : fr.decl) need(seat(p) && action(a), "bad crash declaration");
}

}  // namespace

// Everything the engine indexes with is in range, so that a corrupt saved position fails here
// (or later with a CoreError) instead of reading out of bounds.
void Game::check_state() const {
    const StateChecks c{*cards_, s_, s_.n};
    c.seats();
    c.piles();
    if (s_.has_result) {
        for (int p : s_.result.winners) StateChecks::need(c.seat(p), "bad winner");
        return;
    }
    StateChecks::need(!s_.stack.empty() && s_.stack.size() <= 10000, "no work in progress");
    c.held();
    StateChecks::need(s_.stack[0].f == F_TURN, "the first frame must be the turn");
    for (int fi = 0; fi < static_cast<int>(s_.stack.size()); ++fi) c.frame(fi);
}

void Game::check_cards() const {
    const CardTables& cs = *cards_;
    std::vector<int> counts(cs.n_kinds, 0);
    auto add = [&](const Cards& pile) {
        for (int k : pile) {
            if (k < 0 || k >= cs.n_kinds) throw CoreError("no such card kind");
            counts[k] += 1;
        }
    };
    add(s_.havok), add(s_.hijinks), add(s_.discard), add(s_.past_events), add(s_.trash), add(s_.in_play);
    for (int p = 0; p < s_.n; ++p) add(s_.hands[p]), add(s_.hoards[p]);
    std::string bad;
    for (int k = 0; k < cs.n_kinds; ++k)
        if (counts[k] != cs.copies[k])
            bad += (bad.empty() ? "" : "; ") + cs.names[k] + ": " + std::to_string(counts[k]) +
                   " instead of " + std::to_string(cs.copies[k]);
    if (!bad.empty()) throw CoreError("cards out of place: " + bad);
}

}  // namespace havok
