// The bots in Python: the heuristic (heuristic.cpp; agents/heuristic.py is its Python face) and
// search rollouts played with it inside the core, the GIL released; Python's random.Random in
// the core (Random), so that a search copies its generator in and out once per decision; and
// determinization (determinize.cpp; SeatView.determinize calls it).
#include <nanobind/nanobind.h>

#include <memory>
#include <vector>

#include "determinize.hpp"
#include "heuristic.hpp"
#include "py_bind.hpp"
#include "py_data.hpp"
#include "py_game.hpp"

namespace havok::py {

namespace {

// A random.Random state's words (getstate()[1]) in and out of a _core.Random, once per search
// decision (view.core_random), not at every world it samples.
PyRandom random_from_py(nb::handle words) {
    Py_ssize_t len = 0;
    PyObject* const* it = PyList_Check(words.ptr()) || PyTuple_Check(words.ptr())
                              ? items_of(words.ptr(), len, "the generator's state") : nullptr;
    if (len != 625) bad("not a random.Random state");
    std::vector<long long> state(625);
    for (Py_ssize_t i = 0; i < 625; ++i) {
        int overflow = 0;
        state[i] = PyLong_Check(it[i]) ? PyLong_AsLongLongAndOverflow(it[i], &overflow) : -1;
        if (overflow || (state[i] == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            bad("not a random.Random state");
        }
    }
    return PyRandom(state);
}

// ``rng``'s words as a tuple for random.Random.setstate
nb::object random_to_py(const PyRandom& rng) {
    nb::object out = nb::steal(PyTuple_New(625));
    if (!out.is_valid()) throw nb::python_error();
    for (Py_ssize_t i = 0; i < 625; ++i) {
        PyObject* x = i < 624 ? PyLong_FromUnsignedLong(rng.mt[i]) : PyLong_FromLong(rng.index);
        if (x == nullptr) throw nb::python_error();
        PyTuple_SET_ITEM(out.ptr(), i, x);
    }
    return out;
}

}  // namespace

void bind_bots(nb::module_& m) {
    // the heuristic bot (heuristic.cpp; agents/heuristic.py is its Python face) and search rollouts with it
    nb::class_<Heuristic>(m, "Heuristic")
        .def(nb::init<>())
        .def("choose", [](Heuristic& h, const PyGame& pg, int seat) {
            return h.choose(SeatKnowledge(*pg.g, seat));
        }, "The choice of the seat's heuristic at its pending decision, from what the seat may know.")
        .def("forget", &Heuristic::forget)
        // pickling (bots travel to worker processes): the stake and the last trigger, as plain ints
        .def("__getstate__", [](const Heuristic& h) {
            const Trigger* t = h.trigger();
            if (t == nullptr) return nb::make_tuple(h.stake(), nb::none());
            return nb::make_tuple(h.stake(), nb::make_tuple(t->on, t->frame, t->who, t->card, t->crash_use, t->type,
                                                            t->owners, t->picks, t->give, t->ability));
        })
        .def("__setstate__", [](Heuristic& h, nb::tuple st) {
            new (&h) Heuristic();
            if (st.size() != 2) bad("not a heuristic bot's state");
            double stake = nb::cast<double>(st[0]);
            if (st[1].is_none()) return h.restore(stake, nullptr);
            nb::tuple x = nb::cast<nb::tuple>(st[1]);
            if (x.size() != 10) bad("not a heuristic bot's state");
            Trigger t;
            t.on = to_int(x[0], "on");
            t.frame = to_int(x[1], "frame");
            t.who = to_int(x[2], "who");
            t.card = to_int(x[3], "card");
            t.crash_use = nb::cast<bool>(x[4]);
            t.type = to_int(x[5], "type");
            t.owners = ints(x[6], "owners");
            t.picks = ints(x[7], "picks");
            t.give = to_int(x[8], "give");
            t.ability = to_int(x[9], "ability");
            h.restore(stake, &t);
        })
        .def("judge", [](Heuristic& h, const PyGame& pg, int seat, const std::string& what, nb::object ref,
                         int who, nb::object trig) {
            static const char* const names[] = {"estimate", "use", "event", "crash"};
            int w = index_of(what, names, 4, "judgement");
            const CardTables& cs = pg.g->cards();
            Trigger t;
            if (!trig.is_none()) t = trigger_from_py(cs, trig);
            int r = w == 3 ? to_int(ref, "action") : w == 1 ? 0 : ref_from_py(cs, ref);
            return h.judge(SeatKnowledge(*pg.g, seat), w, r, who, t);
        }, nb::arg("game"), nb::arg("seat"), nb::arg("what"), nb::arg("ref").none(), nb::arg("who"),
           nb::arg("trig").none(), "For tests: the bot's judgement of an ability (estimate), a use trigger (use), an event "
           "for a seat (event) or a crash action on a trigger (crash).");
    m.def("rollout", [](PyGame& pg, int me, int max_turns, double margin_weight, PyRandom* rng,
                        const LeafValue* leaf) {
        if (me < 0 || me >= pg.g->state().n) throw CoreError("no such seat");
        std::unique_ptr<PyRandom> draw;
        if (rng != nullptr) draw = std::make_unique<PyRandom>(*rng);
        double value;
        int steps;
        {
            nb::gil_scoped_release nogil;
            value = rollout(*pg.g, me, max_turns, margin_weight, draw.get(), steps, leaf);
        }
        pg.changed();
        if (rng != nullptr) *rng = *draw;  // the generator moves only if the rollout was played
        return nb::make_tuple(value, steps);
    }, nb::arg("game"), nb::arg("me"), nb::arg("max_turns"), nb::arg("margin_weight"),
       nb::arg("rng").none(), nb::arg("leaf").none() = nb::none(),
       "Play a search rollout in the core (the GIL released): the heuristic in every seat, or "
       "random players drawing from the core Random ``rng`` in the seats but ``me``; an "
       "unfinished one valued by ``leaf`` (a NetLeaf) if given; "
       "(value, decisions played).");
    // Python's random.Random in the core, for a run of draws without a getstate/setstate at every
    // call: SearchAgent.choose takes its generator's words once per decision (view.core_random)
    nb::class_<PyRandom>(m, "Random")
        .def("__init__", [](PyRandom* self, nb::handle words) { new (self) PyRandom(random_from_py(words)); },
             nb::arg("words"), "The generator whose state's words (random.Random.getstate()[1]) are ``words``.")
        .def("state", [](const PyRandom& rng) { return random_to_py(rng); },
             "The words for random.Random.setstate (a tuple).")
        .def("shuffle", [](PyRandom& rng, nb::list x) {
            PyObject* l = x.ptr();  // random.Random.shuffle's draws and swaps, on the list's items
            for (Py_ssize_t i = PyList_GET_SIZE(l) - 1; i > 0; --i) {
                const Py_ssize_t j = rng.below(static_cast<int>(i + 1));
                PyObject* t = PyList_GET_ITEM(l, i);
                PyList_SET_ITEM(l, i, PyList_GET_ITEM(l, j));
                PyList_SET_ITEM(l, j, t);
            }
        }, nb::arg("x"), "random.Random.shuffle, in place.");
    m.def("rollouts", [](const PyGame& pg, nb::handle actions, int me, int max_turns, double margin_weight,
                         PyRandom* rng, const LeafValue* leaf) {
        // a search's world: each action tried on its own copy of it, played out as rollout plays
        if (pg.stopped) bad("the game cannot go on from this position");
        const Game world(*pg.g);
        if (me < 0 || me >= world.state().n) throw CoreError("no such seat");
        const std::vector<int> acts = ints(actions, "actions");
        for (int a : acts)
            if (a < 0 || a >= world.cards().n_actions || !world.is_legal(a)) bad("not a legal action");
        std::vector<double> values(acts.size());
        std::vector<int> steps(acts.size());
        std::unique_ptr<PyRandom> draw;
        if (rng != nullptr) draw = std::make_unique<PyRandom>(*rng);
        {
            nb::gil_scoped_release nogil;
            Game scratch(world);
            for (size_t i = 0; i < acts.size(); ++i) {
                if (i > 0) scratch = world;
                scratch.apply(acts[i]);
                values[i] = rollout(scratch, me, max_turns, margin_weight, draw.get(), steps[i], leaf);
            }
        }
        if (rng != nullptr) *rng = *draw;  // the generator moves only if every rollout was played
        nb::list vs, ss;
        for (size_t i = 0; i < acts.size(); ++i) {
            vs.append(values[i]);
            ss.append(steps[i]);
        }
        return nb::make_tuple(vs, ss);
    }, nb::arg("world"), nb::arg("actions"), nb::arg("me"), nb::arg("max_turns"), nb::arg("margin_weight"),
       nb::arg("rng").none(), nb::arg("leaf").none() = nb::none(),
       "For each action, in order: a copy of ``world`` (left as it is) with the action taken, "
       "played on as rollout plays it (random players drawing from the core Random ``rng`` if "
       "given, unfinished rollouts valued by ``leaf`` if given; the GIL released); (the "
       "values, the decisions each rollout played).");
    m.def("determinize", [](PyGame& pg, int me, PyRandom& rng) {
        PyRandom draw = rng;  // the generator moves only if the whole sample is dealt
        determinize(*pg.g, me, draw);
        pg.changed();
        rng = draw;
    }, nb::arg("game"), nb::arg("me"), nb::arg("rng"),
       "SeatView.determinize, in place on ``game`` (a clone): what seat ``me`` cannot see is "
       "resampled, drawing from the core Random ``rng``.");
}

}  // namespace havok::py
