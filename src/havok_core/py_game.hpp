// A game as Python holds it (PyGame: the game, a version for the Python side's caches, whether
// run_chance left it mid-move, and the actions that made it, while they alone did) and an
// observation layout as Python holds it (Layout): the types shared by the binding's files that
// take or return games. py_game.cpp binds them; Batch hands out copies of its games
// (py_batch.cpp); the bots (py_bots.cpp) and the luck correction's features (py_value.cpp) read
// them.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "engine.hpp"
#include "observer.hpp"

namespace havok::py {

struct Layout {
    ObsLayout layout;
};

struct PyGame {
    std::unique_ptr<Game> g;
    uint64_t version = 0;  // bumped by every change, so that the Python side may cache
    bool stopped = false;  // left mid-move by run_chance: it can be read, never played on
    // The game's record: while ``recorded``, the game is exactly its seed's deal (Game.new, played
    // on to the first decision) with ``actions`` taken, so that it may be saved and pickled as
    // (seed, options, actions). Anything else that changes it (a field written, a forced chance
    // point, a rollout or determinization in place, another game's state assigned) ends that.
    bool recorded = false;
    std::vector<int32_t> actions;

    void applied(int action) {  // a legal action was taken
        version += 1;
        if (recorded) actions.push_back(action);
    }
    void changed() {  // anything else
        version += 1;
        recorded = false;
        actions.clear();
    }

    Game& game() { return *g; }
    ~PyGame();  // gives its game to the pool of finished games (py_game.cpp)
};

}  // namespace havok::py
