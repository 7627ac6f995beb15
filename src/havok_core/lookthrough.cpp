// The luck tracer's look-through in the core (lookthrough.hpp): evaluation/chance.py's
// _Tracer.rerun and spread, with evaluation.luck.Lookahead's choice for heuristic seats, valued and
// mixed as evaluation.luck._Deeper does. Compiled with -ffp-contract=off: each product and sum of
// the mix is rounded on its own, as numpy's are.
#include "lookthrough.hpp"

#include <algorithm>
#include <cstring>
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
int LookValuer::choose(const Game& g) {
    const State& s = g.state();
    if (!s.has_pending || s.pending.purpose == P_BOTTOM) return -1;
    if (s.pending.choices.size() == 1) return s.pending.choices[0];
    if (random_ >> s.pending.player & 1u) return -1;
    bot_.forget();  // what its earlier decisions left is not part of the position
    return bot_.choose(SeatKnowledge(g, s.pending.player));
}

namespace {

uint64_t avalanche(uint64_t x) {  // SplitMix64's finaliser
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

int LookValuer::leaf(const State& s, int top) {
    const size_t width = static_cast<size_t>(layout_.size), count = static_cast<size_t>(s.n) * width;
    const size_t at = rows_.size();
    rows_.resize(at + count);
    float* row = rows_.data() + at;
    value_features(cards_, layout_, s, top, random_, row);
    // two 64-bit hashes of the rows' nonzero entries (the rows are sparse), each of (position,
    // bits), with different multipliers and rotations: two different states' rows are taken for
    // the same with a chance of about 2^-128 a pair, far below anything a game's few million
    // states could meet. The nonzero entries are listed first, eight at a time where all eight are
    // zero (about one entry in nine is nonzero, in runs), else without a branch on each.
    nz_.resize(count);
    size_t k = 0;
    for (size_t i = 0; i < count; i += 8) {
        const size_t e = std::min(i + 8, count);
        if (e == i + 8) {
            uint64_t w[4];
            std::memcpy(w, row + i, sizeof w);
            if (((w[0] | w[1] | w[2] | w[3]) & 0x7fffffff7fffffffULL) == 0) continue;  // +0 or -0
        }
        for (size_t j = i; j < e; ++j) {
            nz_[k] = static_cast<uint32_t>(j);
            k += row[j] != 0.0f;
        }
    }
    uint64_t h1 = 0x243f6a8885a308d3ULL ^ count, h2 = 0x13198a2e03707344ULL + count;
    for (size_t t = 0; t < k; ++t) {
        uint32_t bits;
        std::memcpy(&bits, row + nz_[t], sizeof bits);
        const uint64_t x = static_cast<uint64_t>(bits) << 32 | nz_[t];
        h1 = (h1 ^ x) * 0x9e3779b97f4a7c15ULL;
        h1 = h1 << 31 | h1 >> 33;
        h2 = (h2 + x) * 0xd6e8feb86659fd93ULL;
        h2 = h2 << 27 | h2 >> 37;
    }
    h1 = avalanche(h1);
    h2 = avalanche(h2 ^ k);
    const auto [it, added] = table_.try_emplace(Key{h1, h2}, static_cast<int>(values_.size()));
    if (added)
        values_.emplace_back();
    else
        rows_.resize(at);  // valued already, or to be with the others met in this walk
    t_.kind.push_back(LookTree::LEAF);
    t_.a.push_back(it->second);
    t_.b.push_back(0);
    return static_cast<int>(t_.kind.size()) - 1;
}

int LookValuer::rewards(const Game& g) {
    float r[MAX_PLAYERS];
    final_rewards(g.state(), r);
    t_.kind.push_back(LookTree::REWARDS);
    t_.a.push_back(static_cast<int>(t_.rewards.size()));
    t_.b.push_back(0);
    for (int p = 0; p < g.state().n; ++p) t_.rewards.push_back(r[p]);
    return static_cast<int>(t_.kind.size()) - 1;
}

int LookValuer::event(int at, const std::vector<int>& outcomes, const std::vector<double>& weights) {
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

std::unique_ptr<Game> LookValuer::copy_of(const Game& g) {
    if (spare_.empty()) return std::make_unique<Game>(g);
    std::unique_ptr<Game> out = std::move(spare_.back());
    spare_.pop_back();
    *out = g;
    return out;
}

// evaluation.luck.constant_sum of the network's values of the states met in this walk
void LookValuer::value_fresh() {
    const size_t width = static_cast<size_t>(layout_.size), n = static_cast<size_t>(n_);
    const size_t count = rows_.size() / width;
    std::vector<float> v(count);
    if (count) net_.predict(rows_.data(), count, v.data());
    for (size_t e = 0; e * n < count; ++e) {
        const float* x = v.data() + e * n;
        SeatValues& out = values_[fresh_ + e];
        out.fill(0.0);
        if (n == 2) {  // half the difference: the two seats' values exactly each other's negative
            const double a = x[0], b = x[1];
            out[0] = (a - b) / 2.0;
            out[1] = (b - a) / 2.0;
            continue;
        }
        double total = x[0];
        for (size_t q = 1; q < n; ++q) total = total + static_cast<double>(x[q]);
        const double share = (total - static_cast<double>(2 - n_)) / static_cast<double>(n_);
        for (size_t q = 0; q < n; ++q) out[q] = static_cast<double>(x[q]) - share;
    }
    rows_.clear();
    fresh_ = values_.size();
}

// _Deeper.through's mixing of the tree, node by node in the order they were made (children first)
SeatValues LookValuer::mix(int root) {
    std::vector<SeatValues> at(t_.kind.size());
    std::vector<double> p;
    for (size_t i = 0; i <= static_cast<size_t>(root); ++i) {
        SeatValues& v = at[i];
        if (t_.kind[i] == LookTree::LEAF) {
            v = values_[static_cast<size_t>(t_.a[i])];
        } else if (t_.kind[i] == LookTree::REWARDS) {
            v.fill(0.0);
            for (int q = 0; q < n_; ++q) v[q] = t_.rewards[static_cast<size_t>(t_.a[i] + q)];
        } else {
            // (1 - W) V + W times the outcomes' values weighted by their probabilities, summed in
            // order; the seats not counted are 0 (_values)
            const int first = t_.a[i], k = t_.b[i] - 1;
            double total = 0.0;
            for (int j = 1; j <= k; ++j) total = total + t_.weights[static_cast<size_t>(first + j)];
            p.resize(static_cast<size_t>(k));
            for (int j = 0; j < k; ++j) p[j] = t_.weights[static_cast<size_t>(first + 1 + j)] / total;
            const SeatValues& v0 = at[static_cast<size_t>(t_.kids[static_cast<size_t>(first)])];
            v.fill(0.0);
            for (int q = 0; q < n_; ++q) {
                if (!(counted_ >> q & 1u)) continue;
                double e = p[0] * at[static_cast<size_t>(t_.kids[static_cast<size_t>(first + 1)])][q];
                for (int j = 1; j < k; ++j) e = e + p[j] * at[static_cast<size_t>(t_.kids[static_cast<size_t>(first + 1 + j)])][q];
                v[q] = (1.0 - weight_) * v0[q] + weight_ * e;
            }
        }
    }
    return at[static_cast<size_t>(root)];
}

SeatValues LookValuer::value(const Game& base, const SeenCards& seen, int action,
                             std::vector<std::pair<int, int>> force, int stop, int deep) {
    if (values_.size() > MAX_KEPT) {  // between walks: every entry is valued
        table_.clear();
        values_.clear();
        fresh_ = 0;
    }
    t_.clear();
    const int root = rerun(base, seen, action, std::move(force), stop, deep);
    value_fresh();
    return mix(root);
}

int LookValuer::rerun(const Game& node, const SeenCards& node_seen, int action,
                       std::vector<std::pair<int, int>> force, int stop, int deep) {
    const Game* base = &node;
    Lent<Game> owned{spare_, nullptr};  // the base once the walk has played on from ``node``
    SeenCards base_seen = node_seen;
    Lent<ChanceRun> held{spare_runs_, nullptr};
    if (spare_runs_.empty()) {
        held.p = std::make_unique<ChanceRun>();
        held.p->keep_stop = true;
    } else {
        held.p = std::move(spare_runs_.back());
        spare_runs_.pop_back();
    }
    ChanceRun& run = *held.p;
    while (true) {
        Lent<Game> copy{spare_, copy_of(*base)};
        Game* g = copy.p.get();
        SeenCards seen = base_seen;
        if (action >= 0) seen.put_under(base->state(), action, end_, option_);
        run.force = force;
        run.stop = stop;
        g->run_chance(run, action);
        const size_t met = run.stopped ? run.points.size() - 1 : run.points.size();
        for (size_t i = 0; i < met; ++i)
            if (run.points[i].kind == CH_FLIP) seen.flip(run.points[i].range);
        if (run.stopped) {  // g was given up mid-move: the state at the stop is run.at_stop
            const ChancePoint pt = run.points.back();
            int end = -1;
            if (pt.kind == CH_FLIP) {
                end = seen.flip(static_cast<int>(run.at_stop.havok.size()));
                if (end < 0) {  // a card somebody had seen: no event, the move goes on
                    stop += 1;
                    continue;
                }
            }
            if (deep) return spread(run.at_stop, seen.top, *base, base_seen, action, force, stop, pt, end, deep);
            return leaf(run.at_stop, seen.top);
        }
        if (g->is_over()) return rewards(*g);
        const int a = choose(*g);
        if (a < 0) {
            const State& s = g->state();
            if (deep && s.has_pending && (random_ >> s.pending.player & 1u) && s.pending.purpose != P_BOTTOM) {
                const int at = leaf(s, seen.top);
                const std::vector<int> choices = s.pending.choices;
                std::vector<int> outcomes;
                for (int c : choices) outcomes.push_back(rerun(*g, seen, c, {}, 0, deep - 1));
                return event(at, outcomes, std::vector<double>(choices.size(), 1.0));
            }
            return leaf(s, seen.top);
        }
        std::swap(owned.p, copy.p);  // the earlier base goes back as ``copy`` goes
        base = owned.p.get();
        base_seen = seen;
        action = a;
        force.clear();
        stop = 0;
    }
}

// _Tracer.spread: the outcomes of the chance point ``pt`` the move from ``base`` stopped before
int LookValuer::spread(const State& s, int top, const Game& base, const SeenCards& base_seen, int action,
                        const std::vector<std::pair<int, int>>& force, int stop, const ChancePoint& pt, int end,
                        int deep) {
    const int at = leaf(s, top);
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
