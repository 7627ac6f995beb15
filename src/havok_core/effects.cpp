// The effect primitives that card data is written in (OP_PARAMS in havok_env/cards.py names
// them and their parameters; OP_NAMES in cards.cpp matches it): each
// returns DONE, WAIT (after asking a question) or CONTINUE (after pushing a frame to resolve
// first). Targeted primitives choose their targets first; for a card or ability that happens
// before the crash window opens on it. ``fi`` is the index of the frame resolving the effect.
#include <algorithm>

#include "engine.hpp"

namespace havok {

Frame& Game::crashed(int fi) { return frame(frame(fi).crashed); }

// -- target selection ------------------------------------------------------------------------

std::vector<int> Game::victims(int you, int actor, int sel) const { return victim_seats(you, actor, sel).vec(); }

Seats Game::victim_seats(int you, int actor, int sel) const {
    const int n = s_.n;
    Seats out;
    if (sel == V_YOU) {
        out.push_back(you);
        return out;
    }
    if (sel == V_RIGHT) {
        out.push_back((you - 1 + n) % n);
        return out;
    }
    Seats opponents;
    for (int i = 1; i < n; ++i) opponents.push_back((actor + i) % n);
    if (sel != V_RICHER && sel != V_RICHEST) return opponents;
    // the richer opponents (than the actor) or the richest, each score summed once
    int sc[MAX_PLAYERS];
    for (int i = 0; i < opponents.n; ++i) sc[i] = score(opponents.p[i]);
    const int least = sel == V_RICHER ? score(actor) + 1 : *std::max_element(sc, sc + opponents.n);
    for (int i = 0; i < opponents.n; ++i)
        if (sc[i] >= least) out.push_back(opponents.p[i]);
    return out;
}

int Game::thief(int you, const Op& op) const { return op.thief_right ? (you - 1 + s_.n) % s_.n : you; }

KindSet Game::eligible_kinds(int owner, int max_value, const Cards& exclude) const {
    const Cards& hoard = s_.hoards.at(owner);
    const std::vector<int>& v = cards_->worth[s_.dragons[owner]];
    return KindSet(hoard, [&](int k) {
        // one copy of k is left once each of exclude's copies has taken one
        return v[k] <= max_value && (exclude.empty() || std::count(hoard.begin(), hoard.end(), k) >
                                                            std::count(exclude.begin(), exclude.end(), k));
    });
}

std::vector<int> Game::eligible(int owner, int max_value, const Cards& exclude) const {
    const KindSet kinds = eligible_kinds(owner, max_value, exclude);
    return {kinds.begin(), kinds.end()};
}

bool Game::has_eligible(int owner, int max_value) const {
    const std::vector<int>& v = cards_->worth[s_.dragons[owner]];
    for (int k : s_.hoards.at(owner))
        if (v[k] <= max_value) return true;
    return false;
}

// The kinds ``you`` may give (of all its hoard, or with give_lowest of those worth the least)
// that are worth at least ``want`` to it.
KindSet Game::trade_give_kinds(int you, const Op& op, long long want) const {
    const Cards& hoard = s_.hoards.at(you);
    const std::vector<int>& v = cards_->worth[s_.dragons[you]];
    int low = ANY;
    if (op.give_lowest)
        for (int k : hoard) low = std::min(low, v[k]);
    return KindSet(hoard, [&](int k) { return (!op.give_lowest || v[k] == low) && v[k] >= want; });
}

std::vector<int> Game::trade_gives(int you, const Op& op) const {
    const KindSet kinds = trade_give_kinds(you, op);
    return {kinds.begin(), kinds.end()};
}

// The least a give must be worth to you for a take worth ``take_value`` to the victim: max_gain
// (ANY when there is none) caps how much more the take may be worth. Python ints do not
// overflow, so neither may this.
long long Game::trade_min_give(const Op& op, int take_value) {
    return static_cast<long long>(take_value) - (op.has_max_gain ? op.max_gain : ANY);
}

// The most a take may be worth to the victim for the best give of a hoard that is not empty
// (of its lowest, with give_lowest: they are all worth the least); ANY without max_gain.
int Game::trade_take_cap(int you, const Op& op) const {
    if (!op.has_max_gain) return ANY;
    const Cards& hoard = s_.hoards.at(you);
    int best = worth(you, hoard.at(0));
    for (int k : hoard) best = op.give_lowest ? std::min(best, worth(you, k)) : std::max(best, worth(you, k));
    return best + op.max_gain;
}

KindSet Game::trade_take_kinds(int you, int victim, const Op& op) const {
    const bool can_give = !s_.hoards.at(you).empty();
    const int cap = can_give ? trade_take_cap(you, op) : 0;
    const std::vector<int>& v = cards_->worth[s_.dragons[victim]];
    return KindSet(s_.hoards.at(victim), [&](int k) { return can_give && v[k] <= op.max_value && v[k] <= cap; });
}

std::vector<int> Game::trade_takes(int you, int victim, const Op& op) const {
    const KindSet kinds = trade_take_kinds(you, victim, op);
    return {kinds.begin(), kinds.end()};
}

// trade_takes' question without building its lists: does ``victim`` hold a take for any give?
bool Game::has_trade_take(int you, int victim, const Op& op) const {
    if (s_.hoards.at(you).empty()) return false;
    const int cap = trade_take_cap(you, op);
    const std::vector<int>& v = cards_->worth[s_.dragons[victim]];
    for (int k : s_.hoards.at(victim))
        if (v[k] <= op.max_value && v[k] <= cap) return true;
    return false;
}

std::vector<int> Game::trade_gives_for(int you, int victim, int take, const Op& op) const {
    const KindSet kinds = trade_give_kinds(you, op, trade_min_give(op, worth(victim, take)));
    return {kinds.begin(), kinds.end()};
}

// Victim seats that have something this steal/break/trade could take.
std::vector<int> Game::candidates(int you, const Op& op) const { return candidate_seats(you, op).vec(); }

Seats Game::candidate_seats(int you, const Op& op) const {
    Seats out;
    for (int v : hoard_victims(you, op))
        if (is_candidate(you, v, op)) out.push_back(v);
    return out;
}

// The seats a steal, break or trade by ``you`` aims at, whether or not they hold a target.
Seats Game::hoard_victims(int you, const Op& op) const {
    return victim_seats(you, op.code == OP_STEAL ? thief(you, op) : you, op.victim);
}

bool Game::is_candidate(int you, int victim, const Op& op) const {
    return op.code == OP_TRADE ? has_trade_take(you, victim, op) : has_eligible(victim, op.max_value);
}

// !candidate_seats(you, op).empty(), stopping at the first: asked for every card in hand at
// every main decision (may it be played?)
bool Game::has_candidate(int you, const Op& op) const {
    for (int v : hoard_victims(you, op))
        if (is_candidate(you, v, op)) return true;
    return false;
}

// The kinds a salvage may take from the trash heap: the best printed value with pick = "best",
// else any worth at most max_value.
KindSet Game::salvage_kinds(const Op& op) const {
    const std::vector<int>& value = cards_->value;
    int best = -1;
    if (op.pick_best)
        for (int k : s_.trash) best = std::max(best, value[k]);
    return KindSet(s_.trash, [&](int k) { return op.pick_best ? value[k] == best : value[k] <= op.max_value; });
}

std::vector<int> Game::salvage_options(const Op& op) const {
    const KindSet kinds = salvage_kinds(op);
    return {kinds.begin(), kinds.end()};
}

// Where a redirected event may go: the flipper's left, or with to = "choice" any other seat.
Seats Game::redirect_seats(int flipper, const Op& op) const {
    const int n = s_.n;
    Seats out;
    if (!op.to_choice) {
        out.push_back((flipper + 1) % n);
        return out;
    }
    for (int p = 0; p < n; ++p)
        if (p != flipper) out.push_back(p);
    return out;
}

// The richest and the poorest dragon, ties to the nearest clockwise from ``you``.
std::pair<int, int> Game::tribute_seats(int you) const {
    const int n = s_.n;
    int sc[MAX_PLAYERS];
    for (int p = 0; p < n; ++p) sc[p] = score(p);
    const int hi = *std::max_element(sc, sc + n), lo = *std::min_element(sc, sc + n);
    if (hi == lo) return {-1, -1};
    int giver = -1, taker = -1;
    for (int i = 0; i < n; ++i) {
        int p = (you + i) % n;
        if (giver < 0 && sc[p] == hi) giver = p;
        if (taker < 0 && sc[p] == lo) taker = p;
    }
    return {giver, taker};
}

// The seats that pass a treasure in a pass_left, in turn order from ``you`` (without ``you``
// with skip_you): those with a treasure to pass.
Seats Game::pass_seats(int you, const Op& op) const {
    const int n = s_.n;
    Seats out;
    for (int i = 0; i < n; ++i) {
        int p = (you + i) % n;
        if (!(i == 0 && op.skip_you) && !s_.hoards[p].empty()) out.push_back(p);
    }
    return out;
}

int Game::ask_treasures(int player, const int* first, const int* last, int purpose, const Context& ctx) {
    std::vector<int>& choices = s_.pending.choices;
    choices.clear();
    for (const int* k = first; k != last; ++k) choices.push_back(cards_->TREASURE + *k);
    return ask_in_place(player, purpose, ctx);
}

// Steal, break and trade: a victim seat, then treasure(s), then (trade) the treasure given.
int Game::choose_hoard_target(int fi, const Op& op) {
    if (frame(fi).t.done) return DONE;
    int a = take_answer(fi);
    Frame& fr = frame(fi);
    Chosen& t = fr.t;
    const int you = fr.you;
    const int purpose_from = op.code == OP_STEAL ? P_STEAL_FROM : op.code == OP_BREAK ? P_BREAK_FROM : P_TRADE_FROM;
    int actor = op.code == OP_STEAL ? thief(you, op) : you;
    Context& ctx = new_context();
    ctx.ability = fr.ability;
    ctx.actor = actor;
    if (t.victim == ABSENT) {
        if (a == ABSENT) {
            const Seats cands = candidate_seats(you, op);
            if (cands.empty()) {
                t.done = true;
                t.victim = NONE;
                t.has_picks = true;
                t.picks.clear();
                t.actor = actor;
                return DONE;
            }
            std::vector<int>& choices = s_.pending.choices;
            choices.clear();
            for (int v : cands) choices.push_back(seat_action(actor, v));
            return ask_in_place(actor, purpose_from, ctx);
        }
        t.victim = seat_from_action(actor, a);
        t.actor = actor;
        t.has_picks = true;
        t.picks.clear();
        a = ABSENT;
    }
    const int victim = t.victim;
    if (victim < 0 || victim >= s_.n) throw CoreError("bad target seat");
    ctx.target = victim;
    ctx.has_picks = true;
    copy_short(ctx.picks, t.picks);
    if (op.code == OP_TRADE) {
        if (t.picks.empty()) {
            if (a == ABSENT) {
                return ask_treasures(actor, trade_take_kinds(you, victim, op), P_TRADE_TAKE, ctx);
            }
            t.picks.push_back(treasure_of(a));
            copy_short(ctx.picks, t.picks);
            a = ABSENT;
        }
        if (t.give == ABSENT) {
            if (a == ABSENT)
                return ask_treasures(actor, trade_give_kinds(you, op, trade_min_give(op, worth(victim, t.picks[0]))),
                                     P_TRADE_GIVE, ctx);
            t.give = treasure_of(a);
        }
        t.done = true;
        return DONE;
    }
    if (a != ABSENT) {
        if (a == cards_->END) {
            t.done = true;
            return DONE;
        }
        t.picks.push_back(treasure_of(a));
        copy_short(ctx.picks, t.picks);
    }
    if (static_cast<int>(t.picks.size()) < op.count) {
        const KindSet opts = eligible_kinds(victim, op.max_value, t.picks);
        if (opts.begin() != opts.end()) {
            std::vector<int>& choices = s_.pending.choices;
            choices.clear();
            if (!t.picks.empty()) choices.push_back(cards_->END);
            for (int k : opts) choices.push_back(cards_->TREASURE + k);
            int purpose = op.code == OP_STEAL ? P_STEAL_PICK : P_BREAK_PICK;
            return ask_in_place(actor, purpose, ctx);
        }
    }
    t.done = true;
    return DONE;
}

int Game::choose_salvage(int fi, const Op& op) {
    if (frame(fi).t.done) return DONE;
    int a = take_answer(fi);
    Frame& fr = frame(fi);
    if (a != ABSENT) {
        fr.t.done = true;
        fr.t.has_picks = true;
        fr.t.picks = {treasure_of(a)};
        return DONE;
    }
    const KindSet opts = salvage_kinds(op);
    if (opts.begin() == opts.end()) {
        fr.t.done = true;
        fr.t.has_picks = true;
        fr.t.picks.clear();
        return DONE;
    }
    Context& ctx = new_context();
    ctx.ability = fr.ability;
    ctx.actor = fr.you;
    return ask_treasures(fr.you, opts, P_SALVAGE_PICK,
               ctx);
}

// Counteroffer: the replacement treasure, any of yours not already targeted.
int Game::choose_swap(int fi, const Op&) {
    if (frame(fi).t.done) return DONE;
    int a = take_answer(fi);
    Frame& fr = frame(fi);
    if (a != ABSENT) {
        fr.t.done = true;
        fr.t.swap = treasure_of(a);
        return DONE;
    }
    const int you = fr.you;
    const Cards& picks = crashed(fi).t.picks;  // (asking leaves the stack alone)
    const KindSet opts(s_.hoards.at(you), [&](int k) { return !contains(picks, k); });
    Context& ctx = new_context();
    ctx.ability = fr.ability;
    ctx.actor = you;
    return ask_treasures(you, opts, P_SWAP_PICK, ctx);
}

int Game::choose_redirect(int fi, const Op& op) {
    if (frame(fi).t.done) return DONE;
    const Seats seats = redirect_seats(crashed(fi).flipper, op);
    Frame& fr = frame(fi);
    if (!op.to_choice) {
        fr.t.done = true;
        fr.t.seat = seats.p[0];
        return DONE;
    }
    int a = take_answer(fi);
    const int you = fr.you;
    if (a != ABSENT) {
        fr.t.done = true;
        fr.t.seat = seat_from_action(you, a);
        return DONE;
    }
    std::vector<int>& choices = s_.pending.choices;
    choices.clear();
    for (int p : seats) choices.push_back(seat_action(you, p));
    Context& ctx = new_context();
    ctx.ability = fr.ability;
    ctx.actor = you;
    return ask_in_place(you, P_REDIRECT_TO, ctx);
}

bool Game::is_targeted(int code) {
    return code == OP_STEAL || code == OP_BREAK || code == OP_TRADE || code == OP_SALVAGE ||
           code == OP_SWAP_TARGET || code == OP_REDIRECT_EVENT;
}

int Game::choose(int fi, const Op& op) {
    switch (op.code) {
        case OP_SALVAGE: return choose_salvage(fi, op);
        case OP_SWAP_TARGET: return choose_swap(fi, op);
        case OP_REDIRECT_EVENT: return choose_redirect(fi, op);
        default: return choose_hoard_target(fi, op);
    }
}

// -- the primitives --------------------------------------------------------------------------

int Game::primitive(int fi, const Op& op) {
    const int you = frame(fi).you;
    switch (op.code) {
        case OP_STEAL: return steal(fi, op);
        case OP_BREAK: return break_(fi, op);
        case OP_TRADE: return trade(fi, op);
        case OP_SALVAGE: return salvage(fi, op);
        case OP_PASS_LEFT: return pass_left(fi, op);
        case OP_DRAW:
            draw(you, op.n);
            return DONE;
        case OP_DISCARD_HAND: {
            Hand& hand = s_.hands[you];
            s_.discard.insert(s_.discard.end(), hand.begin(), hand.end());
            hand.clear();
            return DONE;
        }
        case OP_FLIP: return flip(fi, op);
        case OP_FORESIGHT: return foresight(fi, op);
        case OP_RECALL: return recall(fi, op);
        case OP_EXTRA_PLAY:
            s_.card_limit[you] += 1;
            return DONE;
        case OP_TIRE: {
            int who = op.who_actor ? crashed(fi).user : you;
            if (who < 0 || who >= s_.n) throw CoreError("bad seat");
            s_.ready[who] = false;
            if (logging()) say(seat_name(who) + "'s dragon is tired");
            return DONE;
        }
        case OP_READY:
            s_.ready[you] = true;
            if (logging()) say(seat_name(you) + "'s dragon is ready");
            return DONE;
        case OP_RESTRICT:
            s_.restricted[you] = true;
            return DONE;
        case OP_BREAK_LOWEST_ALL: return break_lowest_all(fi, op);
        case OP_TRIBUTE: return tribute(fi, op);
        case OP_TREASURE_MAP: return treasure_map(fi, op);
        case OP_CANCEL: {
            Frame& target = crashed(fi);
            target.canceled = true;
            if (op.to_discard) target.to_discard = true;
            frame(fi).ok = true;
            return DONE;
        }
        case OP_NULLIFY:
            crashed(fi).nullified = true;
            frame(fi).ok = true;
            return DONE;
        case OP_REDIRECT_EVENT: return redirect_event(fi, op);
        case OP_REDIRECT_TREASURE:
            crashed(fi).to = you;
            frame(fi).ok = true;
            return DONE;
        case OP_DIVERT_BREAK:
            crashed(fi).divert = you;
            frame(fi).ok = true;
            return DONE;
        case OP_SWAP_TARGET: return swap_target(fi, op);
        default: throw CoreError("bad effect primitive");
    }
}

int Game::steal(int fi, const Op& op) {
    int r = choose_hoard_target(fi, op);
    if (r != DONE) return r;
    const Chosen& t = frame(fi).t;  // moving treasures leaves the stack alone
    for (int k : t.picks)
        if (move_treasure(t.victim, k, t.actor)) frame(fi).ok = true;
    return DONE;
}

int Game::break_(int fi, const Op& op) {
    int r = choose_hoard_target(fi, op);
    if (r != DONE) return r;
    const Chosen& t = frame(fi).t;  // moving treasures leaves the stack alone
    for (int k : t.picks) {
        if (!contains(s_.hoards.at(t.victim), k)) continue;
        if (frame(fi).divert != ABSENT) {  // Scavenge
            move_treasure(t.victim, k, frame(fi).divert);
        } else {
            remove_one(s_.hoards[t.victim], k, "hoard");
            s_.trash.push_back(k);
            if (logging()) say(seat_name(t.victim) + "'s " + card_name(k) + " is broken");
            frame(fi).ok = true;
        }
    }
    return DONE;
}

int Game::trade(int fi, const Op& op) {
    int r = choose_hoard_target(fi, op);
    if (r != DONE) return r;
    const Chosen& t = frame(fi).t;  // moving treasures leaves the stack alone
    if (!t.picks.empty() && contains(s_.hoards.at(t.victim), t.picks[0]) && t.give != ABSENT &&
        contains(s_.hoards.at(t.actor), t.give)) {
        move_treasure(t.victim, t.picks[0], t.actor);
        move_treasure(t.actor, t.give, t.victim);
        frame(fi).ok = true;
    }
    return DONE;
}

int Game::salvage(int fi, const Op& op) {
    int r = choose_salvage(fi, op);
    if (r != DONE) return r;
    const Cards& picks = frame(fi).t.picks;  // the moves below leave the stack alone
    const int you = frame(fi).you;
    if (!picks.empty() && contains(s_.trash, picks[0])) {
        remove_one(s_.trash, picks[0], "trash heap");
        s_.hoards[you].push_back(picks[0]);
        if (logging()) say(seat_name(you) + " takes " + card_name(picks[0]) + " from the trash heap");
        frame(fi).ok = true;
    } else if (picks.empty() && op.else_draw) {
        draw(you, op.else_draw);
    }
    return DONE;
}

// Flip and resolve the top Havok card (or, with choose_from, flip several and resolve one of
// them, the others going to the bottom).
int Game::flip(int fi, const Op& op) {
    if (frame(fi).o.pushed) return DONE;
    int a = take_answer(fi);
    const int you = frame(fi).you;
    Context& ctx = new_context();
    ctx.ability = frame(fi).ability;
    ctx.actor = you;
    if (!frame(fi).o.has_shown) {
        if (op.optional) {
            if (s_.havok.empty()) return DONE;
            if (a == ABSENT) {
                s_.pending.choices.assign({cards_->END, cards_->OPTION});
                return ask_in_place(you, P_FLIP_OR_NOT, ctx);
            }
            if (a == cards_->END) return DONE;
            a = ABSENT;
        }
        if (s_.havok.empty()) {
            end("havok_empty");
            return CONTINUE;
        }
        int count = std::min(op.choose_from, static_cast<int>(s_.havok.size()));
        Cards shown;
        for (int i = 0; i < count; ++i) shown.push_back(flip_top());
        frame(fi).o.shown = shown;
        frame(fi).o.has_shown = true;
    }
    // (read until the Havok card is pushed: nothing before that moves the stack)
    const Cards& shown = frame(fi).o.shown;
    if (shown.empty()) throw CoreError("a flip shows no card");
    const bool one_kind = std::all_of(shown.begin(), shown.end(), [&](int k) { return k == shown[0]; });
    if (!one_kind && a == ABSENT) {  // copies of one card are one choice
        std::vector<int>& options = s_.pending.choices;
        options.clear();
        for (size_t i = 0; i < shown.size(); ++i)
            if (std::find(shown.begin(), shown.begin() + i, shown[i]) == shown.begin() + i)
                options.push_back(cards_->OPTION + static_cast<int>(i));
        ctx.has_shown = true;
        copy_short(ctx.shown, shown);
        return ask_in_place(you, P_RESOLVE_WHICH, ctx);
    }
    int i = a != ABSENT ? a - cards_->OPTION : 0;
    if (i < 0 || i >= static_cast<int>(shown.size())) throw CoreError("bad option");
    const int pick = shown[i];
    bool picked = false;  // the first copy of the pick is resolved, the rest go to the bottom
    for (int k : shown) {
        if (!picked && k == pick) {
            picked = true;
            continue;
        }
        remove_one(s_.in_play, k, "cards in play");
        s_.havok.push_back(k);
        if (logging()) say(card_name(k) + " goes to the bottom of the Havok deck");
    }
    frame(fi).o.pushed = true;
    push_havok(pick, you);
    return CONTINUE;
}

int Game::foresight(int fi, const Op& op) {
    const int you = frame(fi).you;
    int a = take_answer(fi);
    // the top cards: the first ``top`` of the deck
    const int top = static_cast<int>(std::min<size_t>(op.n, s_.havok.size()));
    if (a == ABSENT) {
        s_.known[you].assign(s_.havok.begin(), s_.havok.begin() + top);
        std::vector<int>& choices = s_.pending.choices;
        choices.clear(), choices.push_back(cards_->END);
        for (int i = 0; i < top; ++i) choices.push_back(cards_->OPTION + i);
        Context& ctx = new_context();
        ctx.ability = frame(fi).ability;
        ctx.actor = you;
        ctx.has_shown = true;
        ctx.shown.assign(s_.havok.begin(), s_.havok.begin() + top);
        return ask_in_place(you, P_BOTTOM, ctx);
    }
    if (a != cards_->END && s_.havok.size() > 1) {
        int i = a - cards_->OPTION;
        if (i < 0 || i >= static_cast<int>(s_.havok.size())) throw CoreError("bad option");
        int k = s_.havok[i];
        s_.havok.erase(s_.havok.begin() + i);
        s_.havok.push_back(k);
        for (int p = 0; p < s_.n; ++p)  // the others saw a card go to the bottom, not which
            if (p != you) s_.known[p].clear();
        // the top cards but the one moved: the first top - 1 of the deck now (top, if it was
        // below them)
        s_.known[you].assign(s_.havok.begin(), s_.havok.begin() + (i < top ? top - 1 : top));
        if (logging()) say(seat_name(you) + " puts one of the top Havok cards on the bottom");
    }
    return DONE;
}

int Game::recall(int fi, const Op&) {
    const int you = frame(fi).you;
    int a = take_answer(fi);
    if (a == ABSENT) {
        const KindSet kinds(s_.discard);
        if (kinds.begin() == kinds.end()) return DONE;
        std::vector<int>& choices = s_.pending.choices;
        choices.clear();
        for (int k : kinds) choices.push_back(card_action(k));
        Context& ctx = new_context();
        ctx.ability = frame(fi).ability;
        ctx.actor = you;
        return ask_in_place(you, P_RECALL_PICK, ctx);
    }
    int k = card_of(a);
    remove_one(s_.discard, k, "discard pile");
    s_.hands[you].push_back(k);
    if (logging()) say(seat_name(you) + " takes " + card_name(k) + " from the discard pile");
    return DONE;
}

// Every dragon (in turn order from you) chooses a treasure; then all pass at once.
int Game::pass_left(int fi, const Op& op) {
    const int you = frame(fi).you;
    const int n = s_.n;
    Scratch& o0 = frame(fi).o;
    o0.has_chosen = true;  // hidden until everyone has chosen
    int a = take_answer(fi);
    Scratch& o = frame(fi).o;
    if (a != ABSENT) {
        if (o.asking < 0 || o.asking >= n) throw CoreError("bad pass");
        o.chosen.emplace_back(o.asking, treasure_of(a));
    }
    for (int p : pass_seats(you, op)) {
        bool done = false;
        for (const auto& c : o.chosen) done = done || c.first == p;
        if (!done) {
            o.asking = p;
            Context& ctx = new_context();
            ctx.ability = frame(fi).ability;
            ctx.actor = you;
            return ask_treasures(p, KindSet(s_.hoards[p]), P_PASS_PICK, ctx);
        }
    }
    const auto& chosen = o.chosen;  // (moving treasures leaves the stack alone)
    for (const auto& [p, k] : chosen) {
        if (p < 0 || p >= n) throw CoreError("bad pass");
        remove_one(s_.hoards[p], k, "hoard");
    }
    for (const auto& [p, k] : chosen) {
        s_.hoards[(p + 1) % n].push_back(k);
        if (logging()) say(seat_name(p) + " passes " + card_name(k) + " to " + seat_name((p + 1) % n));
    }
    return DONE;
}

int Game::break_lowest_all(int fi, const Op&) {
    const int you = frame(fi).you;
    const int n = s_.n;
    int a = take_answer(fi);
    int i = frame(fi).o.i == ABSENT ? 0 : frame(fi).o.i;
    if (i < 0) throw CoreError("bad raid");
    for (; i < n; ++i) {
        int p = (you + i) % n;
        Cards& hoard = s_.hoards[p];
        if (hoard.empty()) continue;
        int low = worth(p, hoard[0]);
        for (int k : hoard) low = std::min(low, worth(p, k));
        const KindSet lowest(hoard, [&](int k) { return worth(p, k) == low; });
        if (a == ABSENT && lowest.end() - lowest.begin() > 1) {
            frame(fi).o.i = i;
            Context& ctx = new_context();
            ctx.ability = frame(fi).ability;
            ctx.actor = you;
            return ask_treasures(p, lowest, P_RAID_PICK, ctx);
        }
        int k = a != ABSENT ? treasure_of(a) : *lowest.begin();
        a = ABSENT;
        remove_one(hoard, k, "hoard");
        s_.trash.push_back(k);
        if (logging()) say(seat_name(p) + "'s " + card_name(k) + " is broken");
    }
    return DONE;
}

int Game::tribute(int fi, const Op&) {
    const int you = frame(fi).you;
    const auto [giver, taker] = tribute_seats(you);
    if (giver < 0) return DONE;
    int a = take_answer(fi);
    if (a == ABSENT) {
        Context& ctx = new_context();
        ctx.ability = frame(fi).ability;
        ctx.actor = you;
        ctx.target = taker;
        return ask_treasures(giver, KindSet(s_.hoards[giver]), P_TRIBUTE_PICK, ctx);
    }
    move_treasure(giver, treasure_of(a), taker);
    return DONE;
}

int Game::treasure_map(int fi, const Op&) {
    const int you = frame(fi).you;
    Cards revealed;
    int found = NONE;
    while (!s_.havok.empty()) {
        int k = flip_top();
        if (logging()) say("Treasure Map reveals " + card_name(k));
        if (cards_->is_treasure(k)) {
            found = k;
            break;
        }
        revealed.push_back(k);
    }
    for (int k : revealed) {
        remove_one(s_.in_play, k, "cards in play");
        s_.havok.push_back(k);
    }
    if (found != NONE) {
        remove_one(s_.in_play, found, "cards in play");
        s_.hoards[you].push_back(found);
    }
    return DONE;
}

int Game::redirect_event(int fi, const Op& op) {
    choose_redirect(fi, op);
    int seat = frame(fi).t.seat;
    if (seat < 0 || seat >= s_.n) throw CoreError("bad redirect");
    crashed(fi).you = seat;
    if (logging()) say("the event now resolves for " + seat_name(seat));
    frame(fi).ok = true;
    return DONE;
}

int Game::swap_target(int fi, const Op& op) {
    int r = choose_swap(fi, op);
    if (r != DONE) return r;
    const int you = frame(fi).you;
    const int swap = frame(fi).t.swap;
    Cards& picks = crashed(fi).t.picks;
    int best = -1;
    for (size_t i = 0; i < picks.size(); ++i)
        if (contains(s_.hoards[you], picks[i]) && (best < 0 || worth(you, picks[i]) > worth(you, picks[best])))
            best = static_cast<int>(i);
    if (best >= 0) {
        picks[best] = swap;
        frame(fi).ok = true;
    }
    return DONE;
}

// -- may it be used, would it change anything ------------------------------------------------

bool Game::is_conditional(int code) {
    return code == OP_STEAL || code == OP_BREAK || code == OP_TRADE || code == OP_SALVAGE ||
           code == OP_FLIP || code == OP_FORESIGHT || code == OP_RECALL;
}

// May a card or ability with this primitive be used now (a legal target exists)?
bool Game::op_usable(int you, const Op& op) const {
    switch (op.code) {
        case OP_STEAL: case OP_BREAK: case OP_TRADE: return has_candidate(you, op);
        case OP_SALVAGE:
            for (int k : s_.trash)
                if (cards_->value[k] <= op.max_value) return true;
            return false;
        case OP_FLIP: case OP_FORESIGHT: return op.optional || !s_.havok.empty();
        case OP_RECALL: return !s_.discard.empty();
        default: return true;
    }
}

// Would this primitive change anything if it resolved for ``you`` now? (Ruling 24.)
bool Game::has_effect(int you, const Op& op) const {
    const int n = s_.n;
    switch (op.code) {
        case OP_STEAL: case OP_BREAK: case OP_TRADE: return has_candidate(you, op);
        case OP_DRAW: return !s_.hijinks.empty() || !s_.discard.empty();
        case OP_SALVAGE:
            return op_usable(you, op) || (op.else_draw && (!s_.hijinks.empty() || !s_.discard.empty()));
        case OP_DISCARD_HAND: return !s_.hands[you].empty();
        case OP_TIRE: return s_.ready[you];
        case OP_READY: return !s_.ready[you];
        case OP_RESTRICT: return !s_.restricted[you];
        case OP_BREAK_LOWEST_ALL:
            for (int p = 0; p < n; ++p)
                if (!s_.hoards[p].empty()) return true;
            return false;
        case OP_PASS_LEFT: return !pass_seats(you, op).empty();
        case OP_TRIBUTE: return tribute_seats(you).first >= 0;
        case OP_TREASURE_MAP:  // revealed events go back to the bottom in the order they came
            for (int k : s_.havok)
                if (cards_->is_treasure(k)) return true;
            return false;
        case OP_FORESIGHT: case OP_RECALL: return op_usable(you, op);
        default: return true;  // flip (a mandatory flip on an empty deck ends the game), crash effects
    }
}

}  // namespace havok
