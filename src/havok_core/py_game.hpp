// A game as Python holds it (PyGame: the game, a version for the Python side's caches, and
// whether run_chance left it mid-move) and an observation layout as Python holds it (Layout):
// the types shared by the binding's files that take or return games. py_game.cpp binds them;
// Batch hands out copies of its games (py_batch.cpp); the bots (py_bots.cpp) and the luck
// correction's features (py_value.cpp) read them.
#pragma once
#include <cstdint>
#include <memory>

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

    Game& game() { return *g; }
    ~PyGame();  // gives its game to the pool of finished games (py_game.cpp)
};

}  // namespace havok::py
