// The luck correction in Python: its value features, read from states as Python objects
// (ValueLayout, value_features), and its value network (ValueNet).
//
// A state is any object with GameState's field names: the tracer's plain-data states
// (evaluation/chance.py) or a live GameState. Only what the features read is taken
// (value_features.hpp), and quickly: a game's correction values tens of thousands of states.
#include <nanobind/ndarray.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "heuristic.hpp"
#include "lookthrough.hpp"
#include "py_bind.hpp"
#include "py_data.hpp"
#include "py_game.hpp"
#include "value_features.hpp"
#include "value_net.hpp"

namespace havok::py {

namespace {

struct PyValueLayout {
    std::shared_ptr<const CardTables> cards;
    ValueLayout layout;
    nb::object live;  // havok_env.state.GameState: a live view of a game, read from the game itself
};

struct Names {  // interned once, kept for the module's life
    PyObject *num_players, *dragons, *turn, *current, *havok, *hijinks, *discard, *trash, *in_play,
        *canceled, *hands, *hoards, *ready, *innate_used, *restricted, *cards_used, *card_limit, *stack;
    PyObject *f, *card, *you, *to, *nullified, *user, *ability, *t, *victim, *picks, *havok_frame, *use_frame;
    PyObject* core;
};

const Names& names() {
    static const Names n = [] {
        auto s = [](const char* x) { return PyUnicode_InternFromString(x); };
        return Names{s("num_players"), s("dragons"), s("turn"), s("current"), s("havok"), s("hijinks"),
                     s("discard"), s("trash"), s("in_play"), s("canceled"), s("hands"), s("hoards"),
                     s("ready"), s("innate_used"), s("restricted"), s("cards_used"), s("card_limit"),
                     s("stack"), s("f"), s("card"), s("you"), s("to"), s("nullified"), s("user"),
                     s("ability"), s("t"), s("victim"), s("picks"), s("havok"), s("use"), s("_core")};
    }();
    return n;
}

nb::object field(nb::handle state, PyObject* name) {
    PyObject* v = PyObject_GetAttr(state.ptr(), name);
    if (v == nullptr) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw nb::python_error();
        PyErr_Clear();
        bad(std::string("features() takes (state, top_seen) pairs: a state has no field '") +
            PyUnicode_AsUTF8(name) + "'");
    }
    return nb::steal(v);
}

int int_of(PyObject* x, const char* what) {
    if (!PyLong_Check(x) || PyBool_Check(x)) bad(std::string(what) + " must be an integer");
    int overflow = 0;
    const long v = PyLong_AsLongAndOverflow(x, &overflow);
    if (overflow || v < -(1L << 30) || v > (1L << 30)) bad(std::string(what) + " is out of range");
    return static_cast<int>(v);
}

void read_cards(PyObject* seq, Cards& out, const char* what) {
    Py_ssize_t len;
    PyObject* const* it = items_of(seq, len, what);
    out.resize(static_cast<size_t>(len));
    for (Py_ssize_t i = 0; i < len; ++i) out[i] = int_of(it[i], what);
}

void read_cards(PyObject* seq, Hand& out, const char* what) {
    Py_ssize_t len;
    PyObject* const* it = items_of(seq, len, what);
    out.clear();
    for (Py_ssize_t i = 0; i < len; ++i) out.push_back(int_of(it[i], what));
}

PyObject* const* seat_items(PyObject* seq, int n, const char* what) {
    Py_ssize_t len;
    PyObject* const* it = items_of(seq, len, what);
    if (len != n) bad(std::string(what) + " must have one entry per seat");
    return it;
}

// a frame's entry (borrowed; nullptr where it is missing)
PyObject* entry(PyObject* d, PyObject* key) { return PyDict_GetItem(d, key); }

PyObject* needed(PyObject* d, PyObject* key) {
    PyObject* v = entry(d, key);
    if (v == nullptr) bad(std::string("a stack frame lacks '") + PyUnicode_AsUTF8(key) + "'");
    return v;
}

bool flag(PyObject* d, PyObject* key) {
    PyObject* v = entry(d, key);
    if (v == nullptr || v == Py_None) return false;
    return PyBool_Check(v) ? v == Py_True : int_of(v, "a frame's flag") != 0;
}

void read_frame(const CardTables& cs, PyObject* d, Frame& fr) {
    const Names& N = names();
    if (!PyDict_Check(d)) bad("a stack frame must be a dict");
    fr = Frame();
    PyObject* f = needed(d, N.f);
    const bool havok = PyUnicode_Check(f) && PyUnicode_Compare(f, N.havok_frame) == 0;
    const bool use = !havok && PyUnicode_Check(f) && PyUnicode_Compare(f, N.use_frame) == 0;
    if (!havok && !use) return;  // a turn or a crash window: nothing the features read
    fr.f = havok ? F_HAVOK : F_USE;
    fr.you = int_of(needed(d, N.you), "a frame's seat");
    if (havok) {
        fr.card = int_of(needed(d, N.card), "a frame's card");
        PyObject* to = entry(d, N.to);
        if (to != nullptr) fr.to = int_of(to, "a frame's seat");
        fr.nullified = flag(d, N.nullified);
        return;
    }
    fr.user = int_of(needed(d, N.user), "a frame's seat");
    fr.ability = ref_from_py(cs, needed(d, N.ability));
    fr.canceled = flag(d, N.canceled);
    PyObject* t = entry(d, N.t);
    if (t == nullptr || t == Py_None) return;
    if (!PyDict_Check(t)) bad("a frame's targets must be a dict");
    PyObject* victim = entry(t, N.victim);
    PyObject* picks = entry(t, N.picks);
    if (victim != nullptr && victim != Py_None && picks != nullptr) {
        fr.t.victim = int_of(victim, "a frame's victim");
        read_cards(picks, fr.t.picks, "a frame's picks");
    }
}

// The state of a ``(state, top_seen)`` pair of an ``n``-player game (-1: any), and its top_seen:
// the game's own where it is a live view of one, else the fields the features read, read into
// ``s``.
const State& read_value_state(const PyValueLayout& L, PyObject* pair, int n, State& s, int& top) {
    const Names& N = names();
    Py_ssize_t len;
    PyObject* const* p = items_of(pair, len, "each of features()'s states");
    if (len != 2) bad("features() takes (state, top_seen) pairs");
    const nb::object o = nb::borrow(p[0]);
    top = int_of(p[1], "top_seen");
    if (o.type().is(L.live)) {
        const State& live = nb::cast<const PyGame&>(field(o, N.core)).g->state();
        if (n >= 0 && live.n != n) bad("features() takes states of one player count at a time");
        return live;
    }
    s.n = int_of(field(o, N.num_players).ptr(), "num_players");
    if (n >= 0 && s.n != n) bad("features() takes states of one player count at a time");
    if (s.n < 2 || s.n > MAX_PLAYERS)
        bad("value features are for games of 2 to " + std::to_string(MAX_PLAYERS) + " players");
    read_cards(field(o, N.dragons).ptr(), s.dragons, "dragons");
    s.turn = int_of(field(o, N.turn).ptr(), "turn");
    s.current = int_of(field(o, N.current).ptr(), "current");
    read_cards(field(o, N.havok).ptr(), s.havok, "havok");
    read_cards(field(o, N.hijinks).ptr(), s.hijinks, "hijinks");
    read_cards(field(o, N.discard).ptr(), s.discard, "discard");
    read_cards(field(o, N.trash).ptr(), s.trash, "trash");
    read_cards(field(o, N.in_play).ptr(), s.in_play, "in_play");
    {
        nb::object c = field(o, N.canceled);
        PyObject* const* it = items_of(c.ptr(), len, "canceled");
        s.canceled.resize(static_cast<size_t>(len));
        Cards pairs_;
        for (Py_ssize_t i = 0; i < len; ++i) {
            read_cards(it[i], pairs_, "canceled");
            if (pairs_.size() != 2) bad("canceled entries must be pairs");
            s.canceled[i] = {pairs_[0], pairs_[1]};
        }
    }
    const int n_ = s.n;
    auto piles = [&](PyObject* name, auto& out, const char* what) {  // hands or hoards
        nb::object v = field(o, name);
        PyObject* const* it = seat_items(v.ptr(), n_, what);
        for (int q = 0; q < n_; ++q) read_cards(it[q], out[q], what);
    };
    piles(N.hands, s.hands, "hands");
    piles(N.hoards, s.hoards, "hoards");
    auto flags = [&](PyObject* name, std::array<bool, MAX_PLAYERS>& out, const char* what) {
        nb::object v = field(o, name);
        PyObject* const* it = seat_items(v.ptr(), n_, what);
        for (int q = 0; q < n_; ++q) {
            PyObject* x = it[q];
            if (PyBool_Check(x))
                out[q] = x == Py_True;
            else
                out[q] = int_of(x, what) != 0;
        }
    };
    flags(N.ready, s.ready, "ready");
    flags(N.innate_used, s.innate_used, "innate_used");
    flags(N.restricted, s.restricted, "restricted");
    auto counts = [&](PyObject* name, std::array<int, MAX_PLAYERS>& out, const char* what) {
        nb::object v = field(o, name);
        PyObject* const* it = seat_items(v.ptr(), n_, what);
        for (int q = 0; q < n_; ++q) out[q] = int_of(it[q], what);
    };
    counts(N.cards_used, s.cards_used, "cards_used");
    counts(N.card_limit, s.card_limit, "card_limit");
    nb::object stack = field(o, N.stack);
    PyObject* const* it = items_of(stack.ptr(), len, "stack");
    s.stack.resize(static_cast<size_t>(len));
    for (Py_ssize_t i = 0; i < len; ++i) read_frame(*L.cards, it[i], s.stack[i]);
    return s;
}

using FeatureRows = nb::ndarray<nb::numpy, float, nb::ndim<2>>;

// The rows of agents.value.features for a list of (state, top_seen) pairs of one player count:
// of every seat, or of ``seats`` only (distinct seats, in the order given) when they are named.
FeatureRows value_rows(const PyValueLayout& L, nb::handle states, const std::vector<int>& random_seats,
                       const std::optional<std::vector<int>>& seats) {
    Py_ssize_t count;
    items_of(states.ptr(), count, "features()'s states");  // a list or tuple
    // held as a tuple of its own: reading a state may run Python code (a live view's fields)
    const nb::object held = nb::steal(PySequence_Tuple(states.ptr()));
    if (!held.is_valid()) throw nb::python_error();
    PyObject* const* items = items_of(held.ptr(), count, "features()'s states");
    const size_t size = static_cast<size_t>(L.layout.size);
    State s;
    int n = -1;  // the player count, from the first state
    unsigned random = 0;
    std::vector<int> want;                        // the seats whose rows are returned
    std::vector<float> all;                       // a state's rows of every seat, where some are wanted
    std::unique_ptr<float[]> out(count ? nullptr : new float[1]);
    for (Py_ssize_t b = 0; b < count; ++b) {
        int top;
        const State& st = read_value_state(L, items[b], n, s, top);
        if (b == 0) {
            n = st.n;
            for (int q : random_seats) {
                if (q < 0 || q >= n) bad("random seat " + std::to_string(q) + " is not a seat of the game");
                random |= 1u << q;
            }
            unsigned named = 0;
            for (int q : seats.value_or(std::vector<int>())) {
                if (q < 0 || q >= n) bad("seat " + std::to_string(q) + " is not a seat of the game");
                if (named >> q & 1) bad("seat " + std::to_string(q) + " is named twice");
                named |= 1u << q;
                want.push_back(q);
            }
            if (!seats) {
                for (int q = 0; q < n; ++q) want.push_back(q);
            } else {
                all.resize(static_cast<size_t>(n) * size);
            }
            out.reset(new float[std::max<size_t>(static_cast<size_t>(count) * want.size() * size, 1)]);
        }
        float* rows = out.get() + static_cast<size_t>(b) * want.size() * size;
        if (!seats) {
            value_features(*L.cards, L.layout, st, top, random, rows);
            continue;
        }
        value_features(*L.cards, L.layout, st, top, random, all.data());
        for (size_t i = 0; i < want.size(); ++i)
            std::copy_n(all.data() + static_cast<size_t>(want[i]) * size, size, rows + i * size);
    }
    const size_t rows = static_cast<size_t>(count) * want.size();
    float* data = out.release();
    nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<float*>(p); });
    return FeatureRows(data, {rows, size}, owner);
}

// a seat's value at a rollout's last state: its row of the features (the seen top of the Havok
// deck not counted, no seat played by the random bot), through the network
struct NetLeaf final : LeafValue {
    const PyValueLayout* layout;
    const ValueNet* net;
    nb::object keep;  // the layout and network, alive while the leaf is
    double operator()(const Game& g, int me) const override {
        thread_local std::vector<float> rows;  // rollouts run with the GIL released, maybe on several threads
        const State& s = g.state();
        const size_t size = static_cast<size_t>(layout->layout.size);
        rows.resize(static_cast<size_t>(s.n) * size);
        value_features(*layout->cards, layout->layout, s, 0, 0u, rows.data());
        float v;
        net->predict(rows.data() + static_cast<size_t>(me) * size, 1, &v);
        return v;
    }
};

struct PyLookValuer {
    nb::object keep;  // the layout and network, alive while the valuer is
    std::unique_ptr<LookValuer> v;
    std::mutex busy;  // it walks without the GIL: two threads asking one valuer take turns
};

}  // namespace

void bind_value(nb::module_& m) {
    nb::class_<PyValueLayout>(m, "ValueLayout")
        .def("__init__", [](PyValueLayout* self, std::shared_ptr<const CardTables> cs, int size, int seat_size,
                            int glob_size, int worth_bins, std::map<std::string, int> seat_offset,
                            std::map<std::string, int> offset, nb::object live) {
            new (self) PyValueLayout();
            self->live = std::move(live);
            self->layout.size = size, self->layout.seat_size = seat_size, self->layout.glob_size = glob_size;
            self->layout.worth_bins = worth_bins;
            self->layout.seat_offset = std::move(seat_offset);
            self->layout.offset = std::move(offset);
            self->layout.finish(*cs);
            self->cards = std::move(cs);
        });
    m.def("value_features", &value_rows, nb::arg("layout"), nb::arg("states"), nb::arg("random_seats"),
          nb::arg("seats").none() = nb::none(),
          "The luck correction's value features of a list of (state, top_seen) pairs of one player "
          "count: one row per seat of each state, or per seat of ``seats`` (agents/value.py).");

    nb::class_<PyLookValuer>(m, "LookValuer",
                             "evaluation.luck._Deeper's rerun of a move chance events deeper, walked, valued and "
                             "mixed in the core (lookthrough.hpp), for a look-ahead that plays every seat but the "
                             "random bot's with the heuristic's choice; one game's states are valued once each.")
        .def("__init__", [](PyLookValuer* self, nb::handle layout, nb::handle net, int num_players,
                            const std::vector<int>& random_seats, const std::vector<int>& seats, double weight,
                            int end_action, int option_base) {
            if (!nb::isinstance<PyValueLayout>(layout) || !nb::isinstance<ValueNet>(net))
                bad("a look valuer is made of a ValueLayout and a ValueNet");
            const auto& L = nb::cast<const PyValueLayout&>(layout);
            const auto& N = nb::cast<const ValueNet&>(net);
            if (N.inputs() != L.layout.size) bad("the value network does not read this layout's rows");
            if (num_players < 2 || num_players > MAX_PLAYERS)
                bad("a game has 2 to " + std::to_string(MAX_PLAYERS) + " players, not " + std::to_string(num_players));
            if (!(weight >= 0.0 && weight <= 1.0)) bad("the mix's weight is from 0 to 1");
            auto mask = [&](const std::vector<int>& qs, const char* what) {
                unsigned out = 0;
                for (int q : qs) {
                    if (q < 0 || q >= num_players)
                        bad(std::string(what) + " seat " + std::to_string(q) + " is not a seat of the game");
                    out |= 1u << q;
                }
                return out;
            };
            const unsigned random = mask(random_seats, "random"), counted = mask(seats, "valued");
            new (self) PyLookValuer();
            self->keep = nb::make_tuple(layout, net);
            self->v = std::make_unique<LookValuer>(*L.cards, L.layout, N, num_players, random, counted, weight,
                                                   end_action, option_base);
        }, nb::arg("layout"), nb::arg("net"), nb::arg("num_players"), nb::arg("random_seats"), nb::arg("seats"),
           nb::arg("weight"), nb::arg("end_action"), nb::arg("option_base"))
        .def("value", [](PyLookValuer& self, const PyGame& base, int top, int bottom, int size, int action,
                         std::vector<std::pair<int, int>> force, int stop, int deep) {
            const int n = base.g->state().n;
            if (n != self.v->players()) bad("the look valuer was made for another number of players");
            if (deep < 0 || stop < 0) bad("a look valuer takes a depth and a stop of 0 or more");
            if (base.stopped) bad("a look valuer runs from a decision, not from a game left mid-move");
            SeatValues v;
            {
                nb::gil_scoped_release nogil;
                std::lock_guard<std::mutex> turn(self.busy);
                v = self.v->value(*base.g, SeenCards{top, bottom, size}, action, std::move(force), stop, deep);
            }
            return std::vector<double>(v.begin(), v.begin() + n);
        }, nb::arg("base"), nb::arg("top"), nb::arg("bottom"), nb::arg("size"), nb::arg("action"), nb::arg("force"),
           nb::arg("stop"), nb::arg("deep"),
           "evaluation/chance.py's rerun of the move from ``base`` (``action`` there, -1: its first move) with "
           "``force``, stopped from ``stop`` on, ``deep`` events deep, valued as _Deeper values it: each seat's value.")
        .def_prop_ro("kept", [](PyLookValuer& self) {
            std::lock_guard<std::mutex> turn(self.busy);
            return self.v->kept();
        },
                     "How many states' values are kept.");

    nb::class_<LeafValue>(m, "LeafValue", "A search's value of an unfinished rollout's last state.");
    nb::class_<NetLeaf, LeafValue>(m, "NetLeaf")
        .def("__init__", [](NetLeaf* self, nb::handle layout, nb::handle net) {
            if (!nb::isinstance<PyValueLayout>(layout) || !nb::isinstance<ValueNet>(net))
                bad("a leaf value is made of a ValueLayout and a ValueNet");
            const auto& L = nb::cast<const PyValueLayout&>(layout);
            const auto& N = nb::cast<const ValueNet&>(net);
            if (N.inputs() != L.layout.size) bad("the value network does not read this layout's rows");
            new (self) NetLeaf();
            self->layout = &L, self->net = &N, self->keep = nb::make_tuple(layout, net);
        }, nb::arg("layout"), nb::arg("net"),
           "The value of a rollout's last state for a seat: the network ``net`` on the seat's row of "
           "``layout``'s features (search.py's value option), checked once.");

    using NetMatrix = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
    using NetVector = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
    nb::class_<ValueNet>(m, "ValueNet")
        .def("__init__", [](ValueNet* self, const std::vector<NetMatrix>& weights, const std::vector<NetVector>& biases) {
            std::vector<std::vector<float>> w, b;
            std::vector<std::pair<int, int>> shapes;
            for (const NetMatrix& x : weights) {
                if (x.shape(0) > (1u << 20) || x.shape(1) > (1u << 20)) bad("a value network layer is too large");
                w.emplace_back(x.data(), x.data() + x.size());
                shapes.emplace_back(static_cast<int>(x.shape(0)), static_cast<int>(x.shape(1)));
            }
            for (const NetVector& x : biases) b.emplace_back(x.data(), x.data() + x.size());
            new (self) ValueNet(std::move(w), std::move(b), shapes);
        }, nb::arg("weights"), nb::arg("biases"),
           "The luck correction's value network from its layers' (inputs x outputs) weights and biases "
           "(float32), checked.")
        .def_prop_ro("inputs", &ValueNet::inputs)
        .def_rw("sse_only", &ValueNet::sse_only, "Value with the four-lane code even where AVX2 is there.")
        .def("predict", [](const ValueNet& net, NetMatrix rows) {
            if (rows.shape(1) != static_cast<size_t>(net.inputs()))
                bad("the value network takes rows of " + std::to_string(net.inputs()) + " features, not " +
                    std::to_string(rows.shape(1)));
            const size_t count = rows.shape(0);
            std::unique_ptr<float[]> out(new float[std::max<size_t>(count, 1)]);
            {
                nb::gil_scoped_release nogil;
                net.predict(rows.data(), count, out.get());
            }
            float* data = out.release();
            nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<float*>(p); });
            return nb::ndarray<nb::numpy, float, nb::ndim<1>>(data, {count}, owner);
        }, nb::arg("rows"), "Each row's value, in [-1, 1] (the GIL released; src/havok_core/value_net.cpp).");
}

}  // namespace havok::py
