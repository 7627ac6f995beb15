// The luck tracer's look-through, the costly part of a correction taken chance events deeper
// (evaluation/chance.py: _Tracer.rerun and spread; docs/luck.md, "One event deeper"), in the core
// for the common case: every seat but the random bot's is played on with the heuristic's choice
// (a fresh heuristic at each decision), as evaluation.luck.Lookahead plays the heuristic, the
// search bot and a person. The Python tracer stays the definition; this is the same walk, step
// for step, and tests/test_luck.py holds the two to the same bits.
//
// A move is rerun from a decision with some chance points forced, up to the next chance point it
// can list (a flip of a card nobody has seen, a draw, a contest) or a decision of the random bot;
// there, ``deep`` more events deep, each outcome is rerun the same way. What it makes is a tree,
// whose states the value network values and whose events are mixed bottom up with the Python
// side's arithmetic, operation for operation.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine.hpp"
#include "heuristic.hpp"
#include "value_features.hpp"
#include "value_net.hpp"

namespace havok {

// evaluation/chance.py's _Seen: the Havok cards somebody has seen, a run on top and a run at the
// bottom; ``size`` is the deck's length when last reconciled.
struct SeenCards {
    int top = 0, bottom = 0, size = 0;
    void sync(int n) {
        bottom += n - size;
        size = n;
    }
    // the top card leaves a deck of ``n``: -1 if somebody had seen it, else where the unseen end
    int flip(int n);
    // before ``action`` is taken at ``s``: a seen card put under the deck stays seen
    void put_under(const State& s, int action, int end_action, int option_base);
};

// The values the walk meets, each seat's (float64, as the Python side computes them).
using SeatValues = std::array<double, MAX_PLAYERS>;

// The walk's tree: leaves are states to value (an entry of the valuer's table, valued once
// whichever way they are met) or final rewards, and each event met is a node with the state before
// it and its outcomes, weighted by how many cards (or answers, or choices) give each. Nodes are
// made children first, so they are mixed in the order they were made.
struct LookTree {
    enum Kind : int { LEAF = 0, REWARDS = 1, EVENT = 2 };
    // per node: its kind; a LEAF's entry in the valuer's table, a REWARDS node's offset into
    // ``rewards`` (n of them), an EVENT's first entry in ``kids`` and, in ``b``, how many: the
    // state before it, then each outcome, weighted by ``weights``
    std::vector<int> kind, a, b;
    std::vector<int> kids;
    std::vector<double> weights;
    std::vector<double> rewards;
    void clear() { kind.clear(), a.clear(), b.clear(), kids.clear(), weights.clear(), rewards.clear(); }
};

// evaluation.luck._Deeper in the core: the tracer's rerun of a move as many events deep, its
// states valued with the network and mixed as the Python side mixes them (evaluation/luck.py:
// constant_sum, _values and _Deeper._mix, each the same operations in the same order). A state
// met again (the same feature rows, as a draw of two cards met in either order leaves them) is
// valued once: the table keeps each state's values, keyed by a 128-bit hash of its rows, for the
// valuer's life (one game's correction), and is emptied past ``MAX_KEPT`` states.
class LookValuer {
public:
    // ``random``: a bit per seat played by the uniformly random bot (its decisions are events);
    // ``counted``: a bit per seat whose values count (the others are 0 at every event, as
    // _values leaves them); ``weight``: the mix's W; ``end_action`` and ``option_base``: the
    // action layout's END and OPTION (for put_under).
    LookValuer(const CardTables& cards, const ValueLayout& layout, const ValueNet& net, int n, unsigned random,
               unsigned counted, double weight, int end_action, int option_base)
        : cards_(cards), layout_(layout), net_(net), n_(n), random_(random), counted_(counted), weight_(weight),
          end_(end_action), option_(option_base) {}

    // _Tracer.rerun from ``base`` (a game at a decision, or before its first move with action -1)
    // with the Havok cards ``seen`` there, ``deep`` events deep: each seat's value, as
    // _Deeper.__call__ makes it (as constant_sum makes it of the one state where the walk ends, or
    // the final rewards).
    SeatValues value(const Game& base, const SeenCards& seen, int action, std::vector<std::pair<int, int>> force,
                     int stop, int deep);
    size_t kept() const { return values_.size(); }
    int players() const { return n_; }
    static constexpr size_t MAX_KEPT = 1u << 21;

private:
    const CardTables& cards_;
    const ValueLayout& layout_;
    const ValueNet& net_;
    int n_;
    unsigned random_, counted_;
    double weight_;
    int end_, option_;
    LookTree t_;
    Heuristic bot_;
    // the table: a state's hash -> its entry in values_; rows_ holds the rows of the entries from
    // ``fresh_`` on, which the network values once the walk is done
    struct Key {
        uint64_t a, b;
        bool operator==(const Key& o) const { return a == o.a && b == o.b; }
    };
    struct KeyHash {
        size_t operator()(const Key& k) const { return static_cast<size_t>(k.a); }
    };
    std::unordered_map<Key, int, KeyHash> table_;
    std::vector<SeatValues> values_;
    std::vector<float> rows_;
    std::vector<uint32_t> nz_;
    size_t fresh_ = 0;
    // games done with, whose buffers the next copies reuse (a rerun copies its base game, and
    // allocating a game's piles anew was a sixth of the walk)
    std::vector<std::unique_ptr<Game>> spare_;
    std::unique_ptr<Game> copy_of(const Game& g);
    // likewise the runs (each holds the state at its stop)
    std::vector<std::unique_ptr<ChanceRun>> spare_runs_;
    template <typename T>
    struct Lent {  // a game or a run taken from its spares, given back when it goes
        std::vector<std::unique_ptr<T>>& spares;
        std::unique_ptr<T> p;
        ~Lent() {
            if (p) spares.push_back(std::move(p));
        }
    };

    int choose(const Game& g);
    int rerun(const Game& base, const SeenCards& seen, int action, std::vector<std::pair<int, int>> force, int stop,
              int deep);
    int spread(const State& stopped, int top, const Game& base, const SeenCards& base_seen, int action,
               const std::vector<std::pair<int, int>>& force, int stop, const ChancePoint& pt, int end, int deep);
    int leaf(const State& s, int top);
    int rewards(const Game& g);
    int event(int at, const std::vector<int>& outcomes, const std::vector<double>& weights);
    void value_fresh();
    SeatValues mix(int root);
};

}  // namespace havok
