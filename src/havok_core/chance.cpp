// Chance points (engine.hpp): a move played with every use of luck listed, forced or stopped at,
// for the luck tracer (evaluation/chance.py, docs/luck.md). Plain play never comes here: the
// engine's flip_top, draw and chance_below only test the pointer. A file of its own, so that the
// decision machine (engine.cpp) is compiled as it was without it.
#include <string>

#include "engine.hpp"

namespace havok {

namespace {
struct ChanceStop {};  // thrown to stop a watched run just before a chance point
}  // namespace

void Game::run_chance(ChanceRun& run, int action) {
    if (chance_) throw CoreError("a chance run is already in progress");
    if (s_.has_result) throw CoreError("the game is over, no move is left to run");
    if (action < 0 && s_.has_pending)
        throw CoreError("the game waits for a decision: run_chance needs its action");
    run.points.clear();
    run.before.clear();
    run.after.clear();
    run.stopped = false;
    struct Detach {
        ChanceRun*& p;
        bool& halted;
        ~Detach() { p = nullptr, halted = false; }
    } detach{chance_, halted_};
    chance_ = &run;
    try {
        if (action < 0)
            advance();
        else
            apply(action);
    } catch (const ChanceStop&) {
        run.stopped = true;
    }
}

// After a stop with keep_stop the run is detached (chance_ is null): the points met before the
// step it stood in ends are played as they come, not listed.
int Game::chance_begin(int kind, int seat, int range) {
    if (!chance_) return -1;
    ChanceRun& run = *chance_;
    const int i = static_cast<int>(run.points.size());
    ChancePoint pt;
    pt.kind = kind;
    pt.seat = seat;
    pt.range = range;
    run.points.push_back(pt);  // a stop's point is listed too: the run's last, its outcome unknown
    if (run.keep_states) run.before.push_back(s_);
    if (i == run.stop) {
        if (!run.keep_stop) throw ChanceStop{};
        run.at_stop = s_;
        run.stopped = true;
        chance_ = nullptr;
        halted_ = true;
        return -1;
    }
    return i;
}

int Game::chance_force(int point, int range) {
    if (!chance_) return -1;
    ChanceRun& run = *chance_;
    run.points[point].range = range;
    for (const auto& [at, j] : run.force)
        if (at == point) {
            if (j < 0 || j >= range)
                throw CoreError("forced outcome " + std::to_string(j) + " of chance point " +
                                std::to_string(point) + " is out of its range 0.." + std::to_string(range - 1));
            return j;
        }
    return -1;
}

void Game::chance_end(int point, int outcome) {
    if (!chance_) return;
    ChanceRun& run = *chance_;
    run.points[point].outcome = outcome;
    if (run.keep_states) run.after.push_back(run.points[point].kind == CH_COIN ? State{} : s_);
}

// The flip and the draw with chance points watched: kept out of the plain ones, which only test
// the pointer.
int Game::flip_watched() {
    const Frame* top = s_.stack.empty() ? nullptr : &s_.stack.back();
    // flipped for the seat of the card or ability flipping it, or for the turn's player
    int point = chance_begin(CH_FLIP, top && (top->f == F_HAVOK || top->f == F_USE) ? top->you : s_.current,
                             static_cast<int>(s_.havok.size()));
    int j = chance_force(point, static_cast<int>(s_.havok.size()));
    if (j > 0) std::swap(s_.havok[0], s_.havok[j]);
    int k = take_top();
    chance_end(point, k);
    return k;
}

void Game::draw_watched(int p, int n) {
    for (int i = 0; i < n; ++i) {  // one point per card, met before a reshuffle, its range after
        if (s_.hijinks.empty() && s_.discard.empty()) return;
        // the range is known once a reshuffle, if one is due, has ordered the new deck
        int point = chance_begin(CH_DRAW, p, s_.hijinks.empty() ? -1 : static_cast<int>(s_.hijinks.size()));
        if (s_.hijinks.empty()) reshuffle();
        int j = chance_force(point, static_cast<int>(s_.hijinks.size()));
        if (j > 0) std::swap(s_.hijinks[0], s_.hijinks[j]);
        s_.hands[p].push_back(s_.hijinks.front());
        s_.hijinks.erase(s_.hijinks.begin());
        chance_end(point, s_.hands[p].back());
    }
}

int Game::chance_below(int k) {
    int out = s_.rand_below(k);
    if (!chance_) return out;
    int point = chance_begin(CH_COIN, -1, k);  // the generator has moved on: a stop leaves it so
    int j = chance_force(point, k);
    if (j >= 0) out = j;
    chance_end(point, out);
    return out;
}

}  // namespace havok
