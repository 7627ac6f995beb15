// The binding's areas, a file each (python.cpp says why), each with the one function that
// registers its classes and functions on the module. python.cpp calls them in the order below,
// which is the order of the module's names.
#pragma once
#include <nanobind/nanobind.h>

#include <memory>

#include "heuristic.hpp"

namespace havok::py {

namespace nb = nanobind;

void bind_game_functions(nb::module_& m);  // install_apply, game_pool (py_game.cpp)
void bind_tables(nb::module_& m);          // Tables, make_tables, ObsLayout (py_game.cpp)
void bind_value(nb::module_& m);           // ValueLayout, value_features, ValueNet (py_value.cpp)
void bind_batch(nb::module_& m);           // Batch, mod_below, random_playouts (py_batch.cpp)
void bind_game(nb::module_& m);            // Game (py_game.cpp)
void bind_bots(nb::module_& m);            // Heuristic, rollout, Random, rollouts, determinize (py_bots.cpp)

// A search's leaf value (heuristic.hpp's LeafValue) from a ValueLayout and a ValueNet of the
// module (py_value.cpp); CoreError where they are not, or do not fit each other.
std::unique_ptr<LeafValue> leaf_value_from_py(nb::handle layout, nb::handle net);

}  // namespace havok::py
