// Plain Python data in and out, for every file of the binding: the dicts, lists and ints that
// havok_env/engine.py and snapshots hand over, read so that every bad value raises CoreError (a
// ValueError) or TypeError, never a crash; the card tables; and a position in the Python
// engine's plain-data form (card kinds as ints, frames as dicts) both ways, so that snapshots
// keep their shape. What only py_data.cpp itself uses is kept there.
#pragma once
#include <nanobind/nanobind.h>
// the casters of the standard types the binding takes and returns, here so that every file of it
// converts them alike (a file without one would take such a type for a bound class)
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine.hpp"

namespace havok::py {

namespace nb = nanobind;

// -- reading plain Python data ---------------------------------------------------------------

[[noreturn]] void bad(const std::string& what);  // a CoreError
int to_int(nb::handle h, const char* what);
std::vector<int> ints(nb::handle h, const char* what);
std::vector<std::pair<int, int>> pairs(nb::handle h, const char* what);
int index_of(const std::string& name, const char* const* names, int count, const char* what);

// The items of a list or tuple (borrowed).
PyObject* const* items_of(PyObject* seq, Py_ssize_t& len, const char* what);

// -- card tables -----------------------------------------------------------------------------

Op parse_op(nb::handle d);
std::shared_ptr<const CardTables> make_tables(nb::dict d);

// -- ability references and lists ----------------------------------------------------------------

int ref_from_py(const CardTables& cs, nb::handle h);

// A new Python list of ``v`` (nullptr with the error set when out of memory), sized once and
// filled in place: legal_actions() builds one of these at every decision.
// (inline, so that legal_actions_c in py_game.cpp inlines it)
inline PyObject* new_list(const std::vector<int>& v) {
    PyObject* out = PyList_New(static_cast<Py_ssize_t>(v.size()));
    if (!out) return nullptr;
    for (size_t i = 0; i < v.size(); ++i) {
        PyObject* x = PyLong_FromLong(v[i]);
        if (!x) {
            Py_DECREF(out);
            return nullptr;
        }
        PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), x);
    }
    return out;
}

nb::list list_of(const std::vector<int>& v);
nb::list pairs_to_py(const std::vector<std::pair<int, int>>& v);

// -- triggers, frames -----------------------------------------------------------------------------

nb::dict trigger_to_py(const CardTables& cs, const Trigger& t);
Trigger trigger_from_py(const CardTables& cs, nb::handle d);
nb::dict frame_to_py(const CardTables& cs, const Frame& fr);
Frame frame_from_py(const CardTables& cs, nb::handle d);

// -- states ------------------------------------------------------------------------------------------

std::array<Cards, MAX_PLAYERS> seat_piles(nb::handle h, int n, const char* what);
std::array<Hand, MAX_PLAYERS> seat_hands(nb::handle h, int n, const char* what);  // seat_piles() as hands

template <typename T>
std::array<T, MAX_PLAYERS> seat_values(nb::handle h, int n, const char* what) {
    std::array<T, MAX_PLAYERS> out{};
    std::vector<nb::handle> items;
    for (nb::handle x : h) items.push_back(x);
    if (static_cast<int>(items.size()) != n) bad(std::string(what) + " needs one value per seat");
    for (int p = 0; p < n; ++p) {
        if constexpr (std::is_same_v<T, bool>)
            out[p] = nb::cast<bool>(nb::bool_(items[p]));
        else
            out[p] = to_int(items[p], what);
    }
    return out;
}

State state_from_py(const CardTables& cs, nb::dict d);
template <class Pile>  // Cards or Hand
nb::list seat_lists(const std::array<Pile, MAX_PLAYERS>& a, int n) {
    nb::list out;
    for (int p = 0; p < n; ++p) out.append(list_of(a[p]));
    return out;
}

template <typename T>
nb::list seat_list(const std::array<T, MAX_PLAYERS>& a, int n) {
    nb::list out;
    for (int p = 0; p < n; ++p) {
        if constexpr (std::is_same_v<T, bool>)
            out.append(nb::bool_(a[p]));
        else
            out.append(a[p]);
    }
    return out;
}

nb::object pending_to_py(const CardTables& cs, const State& s);
nb::object pending_to_py(const Game& g);
nb::object result_to_py(const State& s);

// Every field of a state, as GameState names them (the luck tracer values such states).
nb::dict fields_to_py(const CardTables& cs, const State& s);

}  // namespace havok::py
