// The luck tracer's look-through, the costly part of a correction taken chance events deeper
// (evaluation/chance.py: _Tracer.rerun and spread; docs/luck.md, "One event deeper"), in the core
// for the common case: every seat but the random bot's is played on with the heuristic's choice
// (a fresh heuristic at each decision), as evaluation.luck.Lookahead plays the heuristic, the
// search bot and a person. The Python tracer stays the definition; this is the same walk, step
// for step, and tests/test_luck.py holds the two to the same bits.
//
// A move is rerun from a decision with some chance points forced, up to the next chance point it
// can list (a flip of a card nobody has seen, a draw, a contest) or a decision of the random bot;
// there, ``deep`` more events deep, each outcome is rerun the same way. What it makes is a tree:
// leaves are states to value (their feature rows written as they are met) or final rewards, and
// each event met is a node with the state before it and its outcomes, weighted by how many cards
// (or answers, or choices) give each. The Python side values the rows and mixes the tree bottom up
// with its own arithmetic.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "engine.hpp"
#include "heuristic.hpp"
#include "value_features.hpp"

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

struct LookTree {
    enum Kind : int { LEAF = 0, REWARDS = 1, EVENT = 2 };
    // per node: its kind; a LEAF's row block (rows [a * n, a * n + n) of ``rows``), a REWARDS
    // node's offset into ``rewards`` (n of them), an EVENT's first entry in ``kids`` and, in
    // ``b``, how many: the state before it, then each outcome, weighted by ``weights``
    std::vector<int> kind, a, b;
    std::vector<int> kids;
    std::vector<double> weights;
    std::vector<double> rewards;
    std::vector<float> rows;
    int leaves = 0;
};

class LookThrough {
public:
    // ``random``: a bit per seat played by the uniformly random bot (its decisions are events);
    // ``end_action`` and ``option_base``: the action layout's END and OPTION (for put_under).
    LookThrough(const CardTables& cards, const ValueLayout& layout, unsigned random, int end_action,
                int option_base, LookTree& out)
        : cards_(cards), layout_(layout), random_(random), end_(end_action), option_(option_base), t_(out) {}

    // _Tracer.rerun from ``base`` (a game at a decision, or before its first move with action -1)
    // with the Havok cards ``seen`` there: the root node of what it makes.
    int rerun(const Game& base, const SeenCards& seen, int action, std::vector<std::pair<int, int>> force,
              int stop, int deep);

private:
    const CardTables& cards_;
    const ValueLayout& layout_;
    unsigned random_;
    int end_, option_;
    LookTree& t_;
    Heuristic bot_;
    // games done with, whose buffers the next copies reuse (a rerun copies its base game, and
    // allocating a game's piles anew was a sixth of the walk)
    std::vector<std::unique_ptr<Game>> spare_;
    struct Scratch {  // a copy of a game, given back to spare_ when it goes
        LookThrough& owner;
        std::unique_ptr<Game> g;
        ~Scratch() {
            if (g) owner.spare_.push_back(std::move(g));
        }
    };
    std::unique_ptr<Game> copy_of(const Game& g);

    int choose(const Game& g);
    int spread(const Game& stopped, int top, const Game& base, const SeenCards& base_seen, int action,
               const std::vector<std::pair<int, int>>& force, int stop, const ChancePoint& pt, int end, int deep);
    int leaf(const Game& g, int top);
    int rewards(const Game& g);
    int event(int at, const std::vector<int>& outcomes, const std::vector<double>& weights);
};

}  // namespace havok
