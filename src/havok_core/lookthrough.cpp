// The luck tracer's look-through in the core (lookthrough.hpp): evaluation/chance.py's
// _Tracer.rerun and spread, with evaluation.luck.Lookahead's choice for heuristic seats.
#include "lookthrough.hpp"

#include <map>
#include <memory>

#include "vector.hpp"

namespace havok {

int SeenCards::flip(int n) {
    sync(n);
    int end = -1;
    if (top)
        top -= 1;
    else if (size == bottom)
        bottom -= 1;  // the top is a card that was put under the deck after being shown
    else
        end = size - bottom;
    size -= 1;
    return end;
}

void SeenCards::put_under(const State& s, int action, int end_action, int option_base) {
    if (s.has_pending && s.pending.purpose == P_BOTTOM && action != end_action && s.havok.size() > 1) {
        sync(static_cast<int>(s.havok.size()));
        if (action - option_base < top) {  // else it is one of the bottom cards, and stays one
            top -= 1;
            bottom += 1;
        }
    }
}

// Lookahead.choose: the action played on at g's decision, or -1 where the value is taken
int LookThrough::choose(const Game& g) {
    const State& s = g.state();
    if (!s.has_pending || s.pending.purpose == P_BOTTOM) return -1;
    if (s.pending.choices.size() == 1) return s.pending.choices[0];
    if (random_ >> s.pending.player & 1u) return -1;
    bot_.forget();  // what its earlier decisions left is not part of the position
    return bot_.choose(SeatKnowledge(g, s.pending.player));
}

int LookThrough::leaf(const Game& g, int top) {
    const State& s = g.state();
    const size_t size = static_cast<size_t>(layout_.size);
    const size_t at = t_.rows.size();
    t_.rows.resize(at + static_cast<size_t>(s.n) * size);
    value_features(cards_, layout_, s, top, random_, t_.rows.data() + at);
    t_.kind.push_back(LookTree::LEAF);
    t_.a.push_back(t_.leaves++);
    t_.b.push_back(0);
    return static_cast<int>(t_.kind.size()) - 1;
}

int LookThrough::rewards(const Game& g) {
    float r[MAX_PLAYERS];
    final_rewards(g.state(), r);
    t_.kind.push_back(LookTree::REWARDS);
    t_.a.push_back(static_cast<int>(t_.rewards.size()));
    t_.b.push_back(0);
    for (int p = 0; p < g.state().n; ++p) t_.rewards.push_back(r[p]);
    return static_cast<int>(t_.kind.size()) - 1;
}

int LookThrough::event(int at, const std::vector<int>& outcomes, const std::vector<double>& weights) {
    t_.kind.push_back(LookTree::EVENT);
    t_.a.push_back(static_cast<int>(t_.kids.size()));
    t_.b.push_back(static_cast<int>(outcomes.size()) + 1);
    t_.kids.push_back(at);
    t_.weights.push_back(0.0);
    for (size_t i = 0; i < outcomes.size(); ++i) {
        t_.kids.push_back(outcomes[i]);
        t_.weights.push_back(weights[i]);
    }
    return static_cast<int>(t_.kind.size()) - 1;
}

std::unique_ptr<Game> LookThrough::copy_of(const Game& g) {
    if (spare_.empty()) return std::make_unique<Game>(g);
    std::unique_ptr<Game> out = std::move(spare_.back());
    spare_.pop_back();
    *out = g;
    return out;
}

int LookThrough::rerun(const Game& node, const SeenCards& node_seen, int action,
                       std::vector<std::pair<int, int>> force, int stop, int deep) {
    const Game* base = &node;
    Scratch owned{*this, nullptr};  // the base once the walk has played on from ``node``
    SeenCards base_seen = node_seen;
    ChanceRun run;
    while (true) {
        Scratch copy{*this, copy_of(*base)};
        Game* g = copy.g.get();
        SeenCards seen = base_seen;
        if (action >= 0) seen.put_under(base->state(), action, end_, option_);
        run.force = force;
        run.stop = stop;
        g->run_chance(run, action);
        const size_t met = run.stopped ? run.points.size() - 1 : run.points.size();
        for (size_t i = 0; i < met; ++i)
            if (run.points[i].kind == CH_FLIP) seen.flip(run.points[i].range);
        if (run.stopped) {
            const ChancePoint pt = run.points.back();
            int end = -1;
            if (pt.kind == CH_FLIP) {
                end = seen.flip(static_cast<int>(g->state().havok.size()));
                if (end < 0) {  // a card somebody had seen: no event, the move goes on
                    stop += 1;
                    continue;
                }
            }
            if (deep) return spread(*g, seen.top, *base, base_seen, action, force, stop, pt, end, deep);
            return leaf(*g, seen.top);
        }
        if (g->is_over()) return rewards(*g);
        const int a = choose(*g);
        if (a < 0) {
            const State& s = g->state();
            if (deep && s.has_pending && (random_ >> s.pending.player & 1u) && s.pending.purpose != P_BOTTOM) {
                const int at = leaf(*g, seen.top);
                const std::vector<int> choices = s.pending.choices;
                std::vector<int> outcomes;
                for (int c : choices) outcomes.push_back(rerun(*g, seen, c, {}, 0, deep - 1));
                return event(at, outcomes, std::vector<double>(choices.size(), 1.0));
            }
            return leaf(*g, seen.top);
        }
        std::swap(owned.g, copy.g);  // the earlier base goes back as ``copy`` goes
        base = owned.g.get();
        base_seen = seen;
        action = a;
        force.clear();
        stop = 0;
    }
}

// _Tracer.spread: the outcomes of the chance point ``pt`` the move from ``base`` stopped before
int LookThrough::spread(const Game& stopped, int top, const Game& base, const SeenCards& base_seen, int action,
                        const std::vector<std::pair<int, int>>& force, int stop, const ChancePoint& pt, int end,
                        int deep) {
    const State& s = stopped.state();
    const int at = leaf(stopped, top);
    std::vector<int> where;
    std::vector<double> counts;
    auto kinds = [&](const Cards& deck, size_t upto) {  // each kind once (sorted), where it first lies
        std::map<int, std::pair<int, int>> seen;         // kind -> (first position, copies)
        for (size_t i = 0; i < upto; ++i) {
            auto it = seen.find(deck[i]);
            if (it == seen.end())
                seen.emplace(deck[i], std::make_pair(static_cast<int>(i), 1));
            else
                it->second.second += 1;
        }
        for (const auto& [kind, got] : seen) {
            where.push_back(got.first);
            counts.push_back(got.second);
        }
    };
    if (pt.kind == CH_FLIP) {
        kinds(s.havok, static_cast<size_t>(end));
    } else if (pt.kind == CH_DRAW) {
        if (pt.range < 0) return at;  // the discard pile is reshuffled first: its order is still to come
        kinds(s.hijinks, s.hijinks.size());
    } else {
        for (int j = 0; j < pt.range; ++j) {
            where.push_back(j);
            counts.push_back(1.0);
        }
    }
    std::vector<int> outcomes;
    for (int j : where) {
        std::vector<std::pair<int, int>> f = force;
        f.emplace_back(stop, j);
        outcomes.push_back(rerun(base, base_seen, action, std::move(f), stop + 1, deep - 1));
    }
    return event(at, outcomes, counts);
}

}  // namespace havok
