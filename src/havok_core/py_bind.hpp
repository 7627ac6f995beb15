// The binding's areas, a file each (python.cpp says why), each with the one function that
// registers its classes and functions on the module. python.cpp calls them in the order below,
// which is the order of the module's names.
#pragma once
#include <nanobind/nanobind.h>

namespace havok::py {

namespace nb = nanobind;

void bind_game_functions(nb::module_& m);  // install_apply, game_pool (py_game.cpp)
void bind_tables(nb::module_& m);          // Tables, make_tables, ObsLayout (py_game.cpp)
void bind_value(nb::module_& m);           // ValueLayout, value_features, LeafValue, NetLeaf, ValueNet (py_value.cpp)
void bind_batch(nb::module_& m);           // Batch, mod_below, random_playouts (py_batch.cpp)
void bind_game(nb::module_& m);            // Game (py_game.cpp)
void bind_bots(nb::module_& m);            // Heuristic, rollout, Random, rollouts, determinize (py_bots.cpp)

}  // namespace havok::py
