// The heuristic bot: every choice judged by how it changes the hoards (agents/heuristic.py's
// docstring has the strategy in plain words). The arithmetic is done in the order the former
// Python implementation did it, so that the same positions give the same choices bit for bit
// (tests/test_heuristic.py holds it to the decisions recorded from that implementation).
#include "heuristic.hpp"

#include <algorithm>
#include <functional>
#include <optional>

namespace havok {

namespace {

constexpr double BIG = 30.0;  // utility of a won game (on the scale of treasure points)
// What holding a Hijinks card of each type (TYPE_NAMES' order) is worth, in treasure points,
// before affinity and ready-condition bonuses: what to discard, and what a crash "costs".
constexpr double KEEP[N_TYPES] = {2.0, 1.6, 1.2, 1.0, 1.2, 0.9, 0.6, 0.4, 0.7, 1.4, 1.6, 1.8};
constexpr double SOFT_DRAW = 0.35;  // one Hijinks card drawn
constexpr double SOFT_READY = 0.9;  // a ready dragon (its innate play and crash)
constexpr double EVENT_FLIP = -0.3;  // rough worth of flipping an event
constexpr int T_SALVAGE = 3, T_STEAL = 0;  // TYPE_NAMES indices
constexpr int NOBODY = -1;  // a move's source or destination outside the hoards

struct Move {
    int kind, src, dst;
};

// Python's max(xs, key=...) and min(xs, key=...): the first best element wins ties.
template <class Key, class Better>
int first_best(const std::vector<int>& xs, Key key, Better better) {
    int best = xs.at(0);
    auto bk = key(best);
    for (size_t i = 1; i < xs.size(); ++i) {
        auto k = key(xs[i]);
        if (better(k, bk)) {
            bk = k;
            best = xs[i];
        }
    }
    return best;
}

template <class Key>
int argmax(const std::vector<int>& xs, Key key) { return first_best(xs, key, std::greater<>()); }

template <class Key>
int argmin(const std::vector<int>& xs, Key key) { return first_best(xs, key, std::less<>()); }

bool contains(const std::vector<int>& xs, int x) { return std::find(xs.begin(), xs.end(), x) != xs.end(); }

}  // namespace

SeatKnowledge::SeatKnowledge(const Game& g, int seat) : g_(g), seat_(seat) {
    if (seat < 0 || seat >= g.state().n) throw CoreError("no such seat");
}

int SeatKnowledge::cards_left(int q) const {
    const State& st = s();
    return st.restricted[q] ? 0 : std::max(0, st.card_limit[q] - st.cards_used[q]);
}

std::vector<std::pair<int, int>> SeatKnowledge::havok_remaining() const {
    std::vector<std::pair<int, int>> out;
    for (int k : s().havok) {
        auto it = std::find_if(out.begin(), out.end(), [k](const auto& e) { return e.first == k; });
        if (it == out.end()) out.emplace_back(k, 1);
        else ++it->second;
    }
    // by kind, not in deck order: the order of unseen cards must not reach the sums over them
    std::sort(out.begin(), out.end());
    return out;
}

const Pending* SeatKnowledge::pending() const {
    const State& st = s();
    return st.has_pending && st.pending.player == seat_ ? &st.pending : nullptr;
}

// One decision of one seat: its knowledge and the evaluation helpers.
class Decision {
public:
    Decision(Heuristic& bot, const SeatKnowledge& v)
        : bot_(bot), v(v), cs(v.cards()), me(v.seat()), n(v.n()), nt(cs.n_treasures) {
        for (int q = 0; q < n; ++q) {
            vals.push_back(&cs.worth[v.dragon(q)]);
            if (q != me) others.push_back(q);
        }
        my_dragon = &cs.dragons[v.dragon(me)];
        S = v.scores();
        u0 = util(S);
    }

    int run(const Pending& p);
    double judge(int what, int ref, int who, const Trigger& trig);

private:
    Heuristic& bot_;
    const SeatKnowledge& v;
    const CardTables& cs;
    const int me, n, nt;
    std::vector<const std::vector<int>*> vals;  // vals[seat][kind]: worth in seat's hoard
    std::vector<int> others;
    const Dragon* my_dragon;
    std::vector<int> S;  // the scores
    double u0;
    std::optional<int> top_;  // the best-scoring opponent (lowest seat on ties), once needed

    int val(int q, int k) const { return (*vals[q])[k]; }
    const Ability& ability(int ref) const { return cs.ability(ref); }
    const std::vector<Op>& ops(int ref, int seat) const { return v.ops(ref, seat); }

    // -- evaluation ---------------------------------------------------------------------------

    double util(const std::vector<int>& sc) const {
        int mine = sc[me], top;
        double u;
        if (n == 2) {
            top = sc[others[0]];
            u = mine - top;
        } else {
            top = sc[others[0]];
            int sum = 0;
            for (int q : others) {
                top = std::max(top, sc[q]);
                sum += sc[q];
            }
            u = mine - 0.7 * top - 0.3 * sum / static_cast<double>(others.size());
        }
        int best = std::max(mine, top);
        if (best >= WIN_SCORE) u += (mine == best && top < best) ? BIG : -BIG;
        return u;
    }

    double gain_moves(const std::vector<Move>& moves) const {
        std::vector<int> sc(S);
        for (const Move& m : moves) {
            if (m.src != NOBODY) sc[m.src] -= val(m.src, m.kind);
            if (m.dst != NOBODY) sc[m.dst] += val(m.dst, m.kind);
        }
        return util(sc) - u0;
    }

    double gain_move(int k, int src, int dst) const {
        return score_change_gain(src, src == NOBODY ? 0 : -val(src, k), dst, dst == NOBODY ? 0 : val(dst, k));
    }

    double score_change_gain(int a, int da, int b, int db) const {
        std::vector<int> sc(S);
        if (a != NOBODY) sc[a] += da;
        if (b != NOBODY) sc[b] += db;
        return util(sc) - u0;
    }

    // a non-treasure benefit x (cards, a ready dragon) to seat, seen by me
    double soft(int seat, double x) {
        if (seat == me) return x;
        if (n == 2) return -x;
        if (!top_) top_ = argmax(others, [this](int q) { return S[q]; });
        return -x * (seat == *top_ ? 0.7 : 0.3);
    }

    int lowest(int seat) const {  // NOBODY for an empty hoard
        const Cards& pool = v.hoard(seat);
        if (pool.empty()) return NOBODY;
        return argmin(pool, [&](int k) { return std::make_pair(val(seat, k), k); });
    }

    // expected utility change of seat flipping the top Havok card
    double flip_gain(int seat) {
        const Cards& known = v.known_top();
        if (!known.empty()) {
            int k = known[0];
            return k < nt ? gain_move(k, NOBODY, seat) : soft(seat, EVENT_FLIP);
        }
        auto comp = v.havok_remaining();
        int tot = 0;
        for (auto& e : comp) tot += e.second;
        if (!tot) return 0.0;
        double out = 0.0, ev = soft(seat, EVENT_FLIP);
        for (auto& [k, c] : comp) out += c * (k < nt ? gain_move(k, NOBODY, seat) : ev);
        return out / tot;
    }

    double avg_treasure_gain(int seat) const {
        auto comp = v.havok_remaining();
        int tot = 0;
        for (auto& [k, c] : comp)
            if (k < nt) tot += c;
        if (!tot) return 0.0;
        double sum = 0.0;
        for (auto& [k, c] : comp)
            if (k < nt) sum += c * gain_move(k, NOBODY, seat);
        return sum / tot;
    }

    // what holding Hijinks card kind k is worth to me
    double keep(int k) const {
        const Ability& ab = ability(k);
        double x = KEEP[ab.type];
        if (cs.affinity[k] == my_dragon->affinity) x += 0.4;
        if (ab.type == my_dragon->ready_type) x += v.ready(me) ? 0.4 : 0.8;
        if (ab.type == T_SALVAGE && v.trash().empty()) x -= 0.5;
        return x;
    }

    // -- best targets ---------------------------------------------------------------------------

    // the gain of the best steal (dst = the thief) or break (dst = NOBODY) from victim
    std::optional<double> best_take(const Op& op, int victim, int dst) const {
        std::vector<int> opts = v.eligible(victim, op.max_value);
        if (opts.empty()) return std::nullopt;
        if (op.count == 1) {
            // max over (gain, kind): opts ascend, so ">=" hands ties to the larger kind
            double best_g = 0.0;
            bool any = false;
            for (int k : opts) {
                double g = gain_move(k, victim, dst);
                if (!any || g >= best_g) best_g = g, any = true;
            }
            return best_g;
        }
        std::vector<Move> picks;
        Cards picked;
        for (int i = 0; i < op.count; ++i) {
            std::vector<int> cand = v.eligible(victim, op.max_value, picked);
            if (cand.empty()) break;
            int k = argmax(cand, [&](int k) {
                std::vector<Move> m(picks);
                m.push_back({k, victim, dst});
                return std::make_pair(gain_moves(m), -k);
            });
            picks.push_back({k, victim, dst});
            picked.push_back(k);
        }
        return gain_moves(picks);
    }

    struct TradeOption {
        double gain;
        int take, give;
    };

    std::vector<TradeOption> trade_options(const Op& op, int victim) const {
        std::vector<int> gives = v.trade_gives(me, op);
        std::vector<TradeOption> out;
        for (int t : v.trade_takes(me, victim, op)) {
            long long need = Game::trade_min_give(op, val(victim, t));
            for (int g : gives)
                if (val(me, g) >= need)
                    out.push_back({score_change_gain(me, val(me, t) - val(me, g), victim, val(victim, g) - val(victim, t)),
                                   t, g});
        }
        return out;
    }

    // the best gain of a legal trade with victim, or dflt if there is none
    double best_trade(const Op& op, int victim, double dflt) const {
        std::vector<int> gives = v.trade_gives(me, op);
        if (gives.empty()) return dflt;
        std::optional<double> best;
        for (int t : v.trade_takes(me, victim, op)) {
            long long need = Game::trade_min_give(op, val(victim, t));
            for (int g : gives)
                if (val(me, g) >= need) {
                    double x = score_change_gain(me, val(me, t) - val(me, g), victim, val(victim, g) - val(victim, t));
                    if (!best || x > *best) best = x;
                }
        }
        return best ? *best : dflt;
    }

    double pass_left_gain(const Op& op, int you) const {
        std::vector<Move> moves;
        for (int q : v.pass_seats(you, op)) moves.push_back({lowest(q), q, (q + 1) % n});
        return gain_moves(moves);
    }

    [[noreturn]] static void unjudged(int code, const char* where) {
        throw CoreError(std::string("the heuristic bot has no judgement of '") + OP_NAMES[code] + "' in " + where);
    }

    // utility (for me) of my using ability ref with its best targets
    double estimate(int ref) {
        double total = 0.0;
        for (const Op& op : ops(ref, me)) {
            switch (op.code) {
            case OP_STEAL:
            case OP_BREAK: {
                int dst = op.code == OP_STEAL ? me : NOBODY;
                std::optional<double> best;
                for (int vic : v.victims(me, me, op.victim)) {
                    std::optional<double> g = best_take(op, vic, dst);
                    if (g && (!best || *g > *best)) best = g;
                }
                total += best ? *best : 0.0;
                break;
            }
            case OP_TRADE: {
                double best = 0.0;
                for (int vic : v.victims(me, me, op.victim)) best = std::max(best, best_trade(op, vic, 0.0));
                total += best;
                break;
            }
            case OP_SALVAGE: {
                std::optional<double> best;
                for (int k : v.salvage_options(op)) {
                    double g = gain_move(k, NOBODY, me);
                    if (!best || g > *best) best = g;
                }
                total += best ? *best : 0.0;
                break;
            }
            case OP_FLIP: {
                double f = flip_gain(me);
                if (op.optional && f < 0.0) f = 0.0;
                total += f + (op.choose_from > 1 ? 0.8 : 0.0);
                break;
            }
            case OP_FORESIGHT: total += soft(me, 0.5); break;
            case OP_DRAW: total += soft(me, SOFT_DRAW * op.n); break;
            case OP_EXTRA_PLAY: total += soft(me, 0.2); break;
            case OP_RECALL: total += soft(me, v.discard().empty() ? 0.0 : 0.6); break;
            case OP_PASS_LEFT: total += pass_left_gain(op, me); break;
            default: unjudged(op.code, "a play");
            }
        }
        return total;
    }

    // utility change (for me) if event ev resolves for seat you
    double event_gain(int ev, int you) {
        double total = 0.0;
        for (const Op& op : ops(ev, you)) {
            switch (op.code) {
            case OP_BREAK: {  // you break your own cheapest (the only form the bot judges)
                std::vector<int> opts = v.eligible(you, op.max_value);
                if (!opts.empty()) total += gain_move(argmin(opts, [&](int k) { return val(you, k); }), you, NOBODY);
                break;
            }
            case OP_BREAK_LOWEST_ALL: {
                std::vector<Move> moves;
                for (int q = 0; q < n; ++q)
                    if (!v.hoard(q).empty()) moves.push_back({lowest(q), q, NOBODY});
                total += gain_moves(moves);
                break;
            }
            case OP_TRIBUTE: {
                auto [giver, taker] = v.tribute_seats(you);
                if (giver >= 0) {
                    int k = lowest(giver);
                    if (k != NOBODY) total += gain_move(k, giver, taker);
                }
                break;
            }
            case OP_TREASURE_MAP: total += avg_treasure_gain(you); break;
            case OP_RESTRICT: total += soft(you, v.hand_size(you) ? -0.7 : 0.0); break;
            case OP_SALVAGE: {
                std::vector<int> opts = v.salvage_options(op);
                if (!opts.empty()) {  // the first of them in the trash heap
                    int k = *std::find_if(v.trash().begin(), v.trash().end(), [&](int k) { return contains(opts, k); });
                    total += gain_move(k, NOBODY, you);
                } else {
                    total += soft(you, SOFT_DRAW * op.else_draw);
                }
                break;
            }
            case OP_FLIP: total += flip_gain(you); break;
            case OP_STEAL: {
                int thief = v.thief(you, op);
                Seats vic = v.victims(you, thief, op.victim);
                if (vic.n != 1) throw CoreError("the heuristic bot judges event steals from one victim");
                if (thief != vic.p[0]) {
                    std::vector<int> opts = v.eligible(vic.p[0], op.max_value);
                    if (!opts.empty()) {  // the thief takes what is worth most to it
                        int k = argmax(opts, [&](int k) { return std::make_pair(val(thief, k), k); });
                        total += gain_move(k, vic.p[0], thief);
                    }
                }
                break;
            }
            case OP_DISCARD_HAND: total += soft(you, -SOFT_DRAW * v.hand_size(you)); break;
            case OP_DRAW: total += soft(you, SOFT_DRAW * op.n); break;
            case OP_TIRE: total += soft(you, v.ready(you) ? -SOFT_READY : 0.0); break;
            case OP_READY: total += soft(you, v.ready(you) ? 0.0 : SOFT_READY); break;
            default: unjudged(op.code, "an event");
            }
        }
        return total;
    }

    // utility change (for me) if the card or ability of a "use" trigger takes effect
    double use_gain(const Trigger& trig) {
        int u = trig.who;
        const Cards &owners = trig.owners, &picks = trig.picks;
        if (trig.crash_use) {
            if (u != me && v.current() == me) return -bot_.stake_;  // a crash of what I did on my turn
            return u != me ? soft(u, 1.0) : 1.0;
        }
        double total = 0.0;
        for (const Op& op : ops(trig.ability, u)) {
            int code = op.code;
            if (code == OP_STEAL && !owners.empty()) {
                std::vector<Move> m;
                for (int k : picks) m.push_back({k, owners[0], u});
                total += gain_moves(m);
            } else if (code == OP_BREAK && !owners.empty()) {
                std::vector<Move> m;
                for (int k : picks) m.push_back({k, owners[0], NOBODY});
                total += gain_moves(m);
            } else if (code == OP_TRADE && !owners.empty() && !picks.empty()) {
                int give = lowest(u);
                std::vector<Move> m{{picks[0], owners[0], u}};
                if (give != NOBODY) m.push_back({give, u, owners[0]});
                total += gain_moves(m);
            } else if (code == OP_SALVAGE && !picks.empty()) {
                total += gain_move(picks[0], NOBODY, u);
            } else if (code == OP_STEAL || code == OP_BREAK || code == OP_TRADE || code == OP_SALVAGE) {
                continue;
            } else {
                total += estimate_op_soft(op, u);
            }
        }
        return total;
    }

    double estimate_op_soft(const Op& op, int u) {
        switch (op.code) {
        case OP_FLIP: return flip_gain(u) + (op.choose_from > 1 ? soft(u, 0.8) : 0.0);
        case OP_DRAW: return soft(u, SOFT_DRAW * op.n);
        case OP_FORESIGHT:
        case OP_RECALL:
        case OP_EXTRA_PLAY: return soft(u, 0.5);
        case OP_PASS_LEFT: return pass_left_gain(op, u);
        default: unjudged(op.code, "a play");
        }
    }

    double card_gain(int k, int seat) { return cs.is_treasure(k) ? gain_move(k, NOBODY, seat) : event_gain(k, seat); }

    int card_kind(int a) const { return a - cs.PLAY + cs.first_hijinks; }
    int discard_kind(int a) const { return a - cs.DISCARD + cs.first_hijinks; }
    int treasure_kind(int a) const { return a - cs.TREASURE; }
    int target_seat(int a) const { return ((me + a - cs.SEAT) % n + n) % n; }
    bool is_card(int a) const { return cs.PLAY <= a && a < cs.INNATE_PLAY; }
    bool is_discard(int a) const { return cs.DISCARD <= a && a < cs.SEAT; }

    // -- decisions --------------------------------------------------------------------------------

    int d_main(const std::vector<int>& choices);
    double crash_cost(int a);
    double crash_benefit(int a, const Trigger& trig);
    int d_crash(const std::vector<int>& choices, const Trigger& trig);
    const Op& op_of(const Context& ctx, int code) const;
    int d_bottom(const std::vector<int>& choices, const Context& ctx);
    int d_take_from(const std::vector<int>& choices, const Context& ctx, bool steal);
    int d_steal_pick(const std::vector<int>& choices, const Context& ctx, int target);
    int d_trade_take(const std::vector<int>& choices, const Context& ctx, int target);
    int d_trade_give(const std::vector<int>& choices, const Context& ctx, int target);
    int d_swap_pick(const std::vector<int>& choices);
    int d_redirect_to(const std::vector<int>& choices);
    int d_flip_or_not(const std::vector<int>& choices);
    int best_move(const std::vector<int>& choices, int src, int dst) const;
};

int Decision::d_main(const std::vector<int>& choices) {
    const int ready_type = my_dragon->ready_type;
    std::vector<int> plays, discards;
    for (int a : choices) {
        if (is_card(a)) plays.push_back(a);
        else if (is_discard(a)) discards.push_back(a);
    }
    const bool can_play_more = v.cards_left(me) > 0;
    // 1. the innate play, when it gains more than a ready dragon is worth
    if (contains(choices, cs.INNATE_PLAY)) {
        double gain = estimate(cs.innate(v.dragon(me), false));
        bool can_reready = false;
        for (int k : v.hand()) {
            const Ability& ab = ability(k);
            if (ab.type == ready_type && !ab.crash) can_reready = true;
        }
        can_reready = can_reready && can_play_more;
        double cost = can_reready ? 0.3 : 1.2;
        if (gain > cost) return cs.INNATE_PLAY;
    }
    // 2. the best Hijinks card, when it gains clearly more than keeping it
    std::optional<double> best;
    int best_a = -1;
    if (!plays.empty()) {
        const bool tired = !v.ready(me);
        for (int a : plays) {
            int k = card_kind(a);
            int type = ability(k).type;
            double g = estimate(k);
            if (type == ready_type && tired) g += SOFT_READY;
            if (type == 5 /* draw */ && can_play_more) g += 0.3 * plays.size();  // more cards, another play
            double margin = g - 0.45 * keep(k);
            if (margin > 0.25 && (!best || margin > *best)) best = margin, best_a = a;
        }
    }
    if (best_a >= 0) {
        bot_.stake_ = std::max(1.0, *best + 0.45 * keep(card_kind(best_a)));
        return best_a;
    }
    // 3. cycle the least useful card, else pass
    if (!discards.empty()) {
        int worst = argmin(discards, [&](int a) { return std::make_pair(keep(discard_kind(a)), a); });
        if (keep(discard_kind(worst)) < 1.25) return worst;
    }
    return cs.END;
}

double Decision::crash_cost(int a) {
    if (a == cs.INNATE_CRASH) {
        bool has = false;
        for (int k : v.hand()) has = has || ability(k).type == my_dragon->ready_type;
        return has ? 0.6 : 1.0;
    }
    int k = card_kind(a);
    double cost = 0.5 * keep(k);
    if (v.current() == me && v.cards_left(me) > 0) {
        // crashing on my own turn uses my card for the turn
        double best = 0.0;
        each_kind(v.hand(), [&](int h) {
            if (h != k && !ability(h).crash) best = std::max(best, estimate(h) - 0.45 * keep(h));
        });
        cost += best;
    }
    return cost;
}

double Decision::crash_benefit(int a, const Trigger& trig) {
    int ref = a == cs.INNATE_CRASH ? cs.innate(v.dragon(me), true) : card_kind(a);
    const Ability& ab = ability(ref);
    double total = 0.0;
    const bool on_use = trig.on == ON_USE;
    for (const Op& op : ops(ref, me)) {
        switch (op.code) {
        case OP_NULLIFY: total -= event_gain(trig.card, trig.who); break;
        case OP_REDIRECT_EVENT: {
            int f = trig.who;
            std::vector<int> seats = v.redirect_seats(f, op);
            int to = seats.size() == 1 ? seats[0]
                                       : argmax(seats, [&](int q) { return std::make_pair(event_gain(trig.card, q), -q); });
            total += event_gain(trig.card, to) - event_gain(trig.card, f);
            break;
        }
        case OP_REDIRECT_TREASURE:
            total += gain_move(trig.card, NOBODY, me) - gain_move(trig.card, NOBODY, trig.who);
            break;
        case OP_CANCEL: total -= on_use ? use_gain(trig) : 0.0; break;
        case OP_SWAP_TARGET: {
            double g = use_gain(trig);
            const Cards& picks = trig.picks;
            std::vector<int> spare;
            for (int k : v.hoard(me))
                if (!contains(picks, k)) spare.push_back(k);
            if (!spare.empty() && !picks.empty()) {
                int u = trig.who;
                bool steal = ability(trig.ability).type == T_STEAL;
                int dst = steal ? u : NOBODY;
                int sw = argmin(spare, [&](int k) { return -gain_move(k, me, dst); });
                int mine = argmax(picks, [&](int k) { return val(me, k); });
                std::vector<Move> moves;
                for (int k : picks) moves.push_back({k == mine ? sw : k, me, dst});
                total += gain_moves(moves) - g;
            }
            break;
        }
        case OP_DIVERT_BREAK:
            if (!trig.owners.empty()) {
                double sum = 0.0;
                for (int k : trig.picks) sum += gain_move(k, trig.owners[0], me) - gain_move(k, trig.owners[0], NOBODY);
                total += sum;
            }
            break;
        case OP_DRAW: total += SOFT_DRAW * op.n; break;
        case OP_TIRE:
            if (on_use) total += soft(trig.who, v.ready(trig.who) ? -SOFT_READY : 0.0);
            break;
        default: unjudged(op.code, "a crash");
        }
    }
    if (ab.type == my_dragon->ready_type && !v.ready(me) && a != cs.INNATE_CRASH) total += SOFT_READY;
    return total;
}

int Decision::d_crash(const std::vector<int>& choices, const Trigger& trig) {
    bot_.trigger_ = trig;
    bot_.has_trigger_ = true;
    double best = 0.0;
    int best_a = cs.END;
    for (int a : choices) {
        if (a == cs.END) continue;
        double margin = crash_benefit(a, trig) - crash_cost(a);
        if (margin > best) best = margin, best_a = a;
    }
    return best_a;
}

// The first primitive named ``code`` of the ability being resolved (the defaults if none).
const Op& Decision::op_of(const Context& ctx, int code) const {
    static const Op none;
    if (ctx.ability == ABSENT) return none;
    int ref = ctx.ability;
    int actor = ctx.actor == ABSENT ? me : ctx.actor;
    for (const Op& op : ops(ref, cs.is_innate(ref) || !cs.is_event(ref) ? actor : me))
        if (op.code == code) return op;
    return none;
}

int Decision::d_bottom(const std::vector<int>& choices, const Context& ctx) {
    const Cards& shown = ctx.shown;
    int cur = v.current();
    std::vector<int> flippers;
    std::vector<double> unknown;
    for (size_t i = 0; i < shown.size(); ++i) flippers.push_back((cur + 1 + static_cast<int>(i)) % n);
    for (int q : flippers) unknown.push_back(flip_gain(q));
    auto total = [&](const std::vector<int>& order) {  // NOBODY: an unknown card
        double t = 0.0;
        for (size_t i = 0; i < order.size(); ++i)
            t += order[i] != NOBODY ? card_gain(order[i], flippers[i]) : unknown[i];
        return t;
    };
    return argmax(choices, [&](int a) {
        std::vector<int> order;
        if (a == cs.END) {
            order = shown;
        } else {
            int j = a - cs.OPTION;
            for (size_t i = 0; i < shown.size(); ++i)
                if (static_cast<int>(i) != j) order.push_back(shown[i]);
            order.push_back(NOBODY);
        }
        return std::make_tuple(total(order), a == cs.END, -a);
    });
}

// The victim of a steal or a break: the one whose best take gains most.
int Decision::d_take_from(const std::vector<int>& choices, const Context& ctx, bool steal) {
    const Op& op = op_of(ctx, steal ? OP_STEAL : OP_BREAK);
    const int dst = steal ? me : NOBODY;
    return argmax(choices, [&](int a) {
        std::optional<double> g = best_take(op, target_seat(a), dst);
        return std::make_pair(g && *g != 0.0 ? *g : -99.0, -a);  // Python's "gain or -99"
    });
}

// The next treasure of a steal: the best with those picked so far, or stop (END) when taking
// it alone would not gain.
int Decision::d_steal_pick(const std::vector<int>& choices, const Context& ctx, int target) {
    std::vector<int> rest;
    for (int a : choices)
        if (a != cs.END) rest.push_back(a);
    int best = argmax(rest, [&](int a) {
        std::vector<Move> m;
        for (int k : ctx.picks) m.push_back({k, target, me});
        m.push_back({treasure_kind(a), target, me});
        return std::make_pair(gain_moves(m), -a);
    });
    if (contains(choices, cs.END) && gain_move(treasure_kind(best), target, me) <= 0) return cs.END;
    return best;
}

// The treasure a trade takes: the one whose best give gains most.
int Decision::d_trade_take(const std::vector<int>& choices, const Context& ctx, int target) {
    const Op& op = op_of(ctx, OP_TRADE);
    std::vector<std::pair<int, double>> best;  // take -> its best trade
    for (const TradeOption& o : trade_options(op, target)) {
        auto it = std::find_if(best.begin(), best.end(), [&](auto& e) { return e.first == o.take; });
        if (it == best.end()) best.emplace_back(o.take, std::max(-99.0, o.gain));
        else it->second = std::max(it->second, o.gain);
    }
    return argmax(choices, [&](int a) {
        auto it = std::find_if(best.begin(), best.end(), [&](auto& e) { return e.first == treasure_kind(a); });
        return std::make_pair(it == best.end() ? -99.0 : it->second, -a);
    });
}

// The treasure a trade gives for the one it takes.
int Decision::d_trade_give(const std::vector<int>& choices, const Context& ctx, int target) {
    const int take = ctx.picks.empty() ? NOBODY : ctx.picks[0];
    return argmax(choices, [&](int a) {
        std::vector<Move> m;
        if (take != NOBODY) m.push_back({take, target, me});
        m.push_back({treasure_kind(a), me, target});
        return std::make_pair(gain_moves(m), -a);
    });
}

// The treasure given up in a swap, to the thief of the steal it answers.
int Decision::d_swap_pick(const std::vector<int>& choices) {
    int dst = NOBODY;
    if (bot_.has_trigger_ && bot_.trigger_.on == ON_USE && ability(bot_.trigger_.ability).type == T_STEAL)
        dst = bot_.trigger_.who;
    if (dst < NOBODY || dst >= n) throw CoreError("the heuristic bot remembers a trigger of another game");
    return argmax(choices, [&](int a) { return std::make_pair(gain_move(treasure_kind(a), me, dst), -a); });
}

// Where a redirected event goes: the seat it harms most, or the top scorer when the event is
// not known.
int Decision::d_redirect_to(const std::vector<int>& choices) {
    // the card of the last crash window (a use trigger names none)
    const int ev = bot_.has_trigger_ && bot_.trigger_.on != ON_USE ? bot_.trigger_.card : NOBODY;
    if (ev == NOBODY || !cs.is_event(ev))
        return argmax(choices, [&](int a) { return std::make_pair(static_cast<double>(S[target_seat(a)]), -a); });
    return argmax(choices, [&](int a) { return std::make_pair(event_gain(ev, target_seat(a)), -a); });
}

// Flip the top Havok card when its expected gain is positive.
int Decision::d_flip_or_not(const std::vector<int>& choices) {
    const Cards& known = v.known_top();
    const double g = known.empty() ? flip_gain(me) : card_gain(known[0], me);
    const int flip = cs.OPTION;  // the first option: flip it
    return g > 0 && contains(choices, flip) ? flip : cs.END;
}

// A treasure moved from ``src`` to ``dst``: the one that gains most.
int Decision::best_move(const std::vector<int>& choices, int src, int dst) const {
    return argmax(choices, [&](int a) { return std::make_pair(gain_move(treasure_kind(a), src, dst), -a); });
}

int Decision::run(const Pending& p) {
    const std::vector<int>& choices = p.choices;
    const Context& ctx = p.context;
    const int target = ctx.target == ABSENT ? NOBODY : ctx.target;
    switch (p.purpose) {
    case P_MAIN: return d_main(choices);
    case P_CRASH: return d_crash(choices, ctx.trigger);
    case P_STEAL_FROM: return d_take_from(choices, ctx, /*steal=*/true);
    case P_BREAK_FROM: return d_take_from(choices, ctx, /*steal=*/false);
    case P_TRADE_FROM: {
        const Op& op = op_of(ctx, OP_TRADE);
        return argmax(choices, [&](int a) { return std::make_pair(best_trade(op, target_seat(a), -99.0), -a); });
    }
    case P_STEAL_PICK: return d_steal_pick(choices, ctx, target);
    case P_BREAK_PICK:
        return argmax(choices, [&](int a) {
            return std::make_pair(a != cs.END ? gain_move(treasure_kind(a), target, NOBODY) : 0.0, -a);
        });
    case P_TRADE_TAKE: return d_trade_take(choices, ctx, target);
    case P_TRADE_GIVE: return d_trade_give(choices, ctx, target);
    case P_SALVAGE_PICK: return best_move(choices, NOBODY, me);
    case P_SWAP_PICK: return d_swap_pick(choices);
    case P_PASS_PICK: return best_move(choices, me, (me + 1) % n);
    case P_TRIBUTE_PICK: return best_move(choices, me, target);
    case P_RAID_PICK: return choices.at(0);
    case P_REDIRECT_TO: return d_redirect_to(choices);
    case P_RECALL_PICK:
        return argmax(choices, [&](int a) { return std::make_pair(keep(card_kind(a)), -a); });
    case P_FLIP_OR_NOT: return d_flip_or_not(choices);
    case P_RESOLVE_WHICH:
        return argmax(choices, [&](int a) {
            return std::make_pair(card_gain(ctx.shown.at(a - cs.OPTION), me), -a);
        });
    case P_BOTTOM: return d_bottom(choices, ctx);
    default: throw CoreError("the heuristic bot has no answer for this decision");
    }
}

double Decision::judge(int what, int ref, int who, const Trigger& trig) {
    switch (what) {
    case 0: return estimate(ref);
    case 1: return use_gain(trig);
    case 2: return event_gain(ref, who);
    case 3: return crash_benefit(ref, trig);
    default: throw CoreError("no such judgement");
    }
}

int Heuristic::choose(const SeatKnowledge& view) {
    const Pending* p = view.pending();
    if (p == nullptr) throw CoreError("the heuristic bot was asked without a decision of its seat");
    if (p->choices.size() == 1) return p->choices[0];
    Decision d(*this, view);
    return d.run(*p);
}

double Heuristic::judge(const SeatKnowledge& view, int what, int ref, int who, const Trigger& trig) {
    Decision d(*this, view);
    return d.judge(what, ref, who, trig);
}

double rollout(Game& g, int me, int max_turns, double margin_weight, RandomDraw* random_others, int& steps,
               const LeafValue* leaf) {
    const int n = g.state().n;
    std::vector<Heuristic> bots(n);
    const long long stop = max_turns < 0 ? (1LL << 30) : static_cast<long long>(g.state().turn) + max_turns;
    steps = 0;
    while (!g.is_over() && g.state().turn < stop) {
        int p = g.to_act();
        int a;
        if (random_others != nullptr && p != me) {
            const auto& choices = g.state().pending.choices;
            a = choices[random_others->below(static_cast<int>(choices.size()))];
        } else {
            a = bots[p].choose(SeatKnowledge(g, p));
        }
        g.apply(a);
        ++steps;
    }
    std::vector<int> sc = g.scores();
    int best_other = -(1 << 30);
    for (int q = 0; q < n; ++q)
        if (q != me) best_other = std::max(best_other, sc[q]);
    const int margin = sc[me] - best_other;
    double out;
    if (g.is_over()) {
        const auto& winners = g.state().result.winners;
        out = contains(winners, me) ? (winners.size() == 1 ? 1.0 : 0.0) : -1.0;
    } else if (leaf != nullptr) {
        out = (*leaf)(g, me);
    } else {
        out = std::max(-1.0, std::min(1.0, margin / 8.0));
    }
    return out + margin_weight * margin;
}

}  // namespace havok
