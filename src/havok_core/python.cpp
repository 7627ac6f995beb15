// The Python binding (nanobind): card tables in, games out. Card data arrives as the plain
// tables havok_env/engine.py builds from a validated CardSet; positions arrive and leave in the
// snapshots' plain-data form (card kinds as ints, frames as dicts, havok_env/snapshot.py). Every bad value raises CoreError (a ValueError) or TypeError, never a crash.
//
// This file is the module: its constants and names, then each area's bindings (py_bind.hpp), in
// files of their own so that each can be read in one sitting: plain data in and out (py_data),
// games (py_game), the luck correction (py_value), batches (py_batch) and the bots (py_bots).
#include <nanobind/nanobind.h>

#include "engine.hpp"
#include "py_bind.hpp"

namespace nb = nanobind;
using namespace havok;

NB_MODULE(_core, m) {
    m.doc() = "The native rules core of havok_env (see src/havok_core/).";
    // Games held by another extension's registry (OpenSpiel keeps every loaded Python game) are
    // still alive when the interpreter tears the module down; nanobind would report each at exit
    // as a leak, which it is not.
    nb::set_leak_warnings(false);
    nb::exception<CoreError>(m, "CoreError", PyExc_ValueError);
    nb::list primitives, types;
    for (const char* name : OP_NAMES) primitives.append(name);
    for (const char* name : TYPE_NAMES) types.append(name);
    m.attr("PRIMITIVES") = primitives;  // the effect primitives the core interprets
    m.attr("HIJINKS_TYPES") = types;
    nb::list purposes, kinds;
    for (const char* name : PURPOSES) purposes.append(name);
    nb::dict purpose_kinds;
    for (int p = 0; p < N_PURPOSES; ++p) purpose_kinds[PURPOSES[p]] = DECISION_KINDS[PURPOSE_KINDS[p]];
    m.attr("PURPOSE_KINDS") = purpose_kinds;  // purpose -> the kind of decision it is
    for (const char* name : DECISION_KINDS) kinds.append(name);
    m.attr("PURPOSES") = purposes;  // the purposes the core asks for, in its order
    m.attr("DECISION_KINDS") = kinds;
    // the rulebook's numbers as the core has them (tests hold them to havok_env/constants.py)
    m.attr("MAX_PLAYERS") = MAX_PLAYERS;
    m.attr("N_OPTIONS") = N_OPTIONS;
    m.attr("HAND_SIZE") = HAND_SIZE;
    m.attr("WIN_SCORE") = WIN_SCORE;

    py::bind_game_functions(m);
    py::bind_tables(m);
    py::bind_value(m);
    py::bind_batch(m);
    py::bind_game(m);
    py::bind_bots(m);
}
