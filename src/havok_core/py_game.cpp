// Games in Python (py_game.hpp): the Game class, a game's ``_core`` (its moves, the targeting
// rules for bots, its state field by field, edits to it); the pool of finished games that new
// ones are dealt into; and engine.Game.apply and Game.legal_actions as plain C methods, since
// one Python call per decision is the benchmark's bar.
#include <nanobind/ndarray.h>

#include <algorithm>

#include "py_bind.hpp"
#include "py_data.hpp"
#include "py_game.hpp"
#include "vector.hpp"

namespace havok::py {

namespace {

// Finished games, kept for Game.new to deal the next game into (Game::redeal reuses their lists'
// buffers, and the object): Python's loops make a new game every twenty-odd decisions, and a
// fresh Game allocates some 25 lists and frees them when it dies. Newest last. A PyGame dies only
// in its Python object's dealloc (or in a binding, before it is handed out), both under the GIL,
// which guards the pool; no code with the GIL released makes or frees a PyGame.
struct GamePool {
    std::vector<std::unique_ptr<Game>> games;
    size_t limit = 8;
};

GamePool& game_pool() {
    static GamePool pool;
    return pool;
}

}  // namespace

PyGame::~PyGame() {
    GamePool& pool = game_pool();
    if (g && pool.games.size() < pool.limit) pool.games.push_back(std::move(g));
}

namespace {

// A new game as Game's constructor deals it: in a pooled game of the same card tables when one
// is there (redeal gives the same game byte for byte; it always advances, so advance=False games
// are made fresh). A pooled game of other tables is dropped, so that a pool filled by another
// card set empties as games of this one are made.
std::unique_ptr<Game> new_game(std::shared_ptr<const CardTables> cs, int n, std::vector<int> dragons,
                               uint64_t seed, bool log, bool advance) {
    auto& games = game_pool().games;
    if (advance && !games.empty()) {
        std::unique_ptr<Game> g = std::move(games.back());
        games.pop_back();
        if (g->tables() == cs) {
            g->redeal(n, std::move(dragons), seed, log);  // on a CoreError g is freed, not pooled
            return g;
        }
    }
    return std::make_unique<Game>(std::move(cs), n, std::move(dragons), seed, log, advance);
}

const char* const CHANCE_KINDS[] = {"flip", "draw", "coin"};

void playable(const PyGame& pg) {
    if (pg.stopped)
        throw CoreError("this game was stopped at a chance point, in the middle of a move: it can be "
                        "read, not played on (run the move again from a copy made before it)");
}

int seat_arg(const PyGame& pg, int seat) {
    if (seat < 0 || seat >= pg.g->state().n) throw CoreError("no such seat");
    return seat;
}

// Replace part of a game's state (tests, hand-edited positions, determinization), then check it.
void set_field(PyGame& pg, const std::string& name, nb::handle v) {
    State s = pg.g->state();  // a copy: a bad value leaves the game as it was
    const CardTables& cs = pg.g->cards();
    const int n = s.n;
    if (name == "havok") s.havok = ints(v, "havok");
    else if (name == "hijinks") s.hijinks = ints(v, "hijinks");
    else if (name == "discard") s.discard = ints(v, "discard");
    else if (name == "past_events") s.past_events = ints(v, "past_events");
    else if (name == "trash") s.trash = ints(v, "trash");
    else if (name == "in_play") s.in_play = ints(v, "in_play");
    else if (name == "canceled") s.canceled = pairs(v, "canceled");
    else if (name == "hands") s.hands = seat_hands(v, n, "hands");
    else if (name == "hoards") s.hoards = seat_piles(v, n, "hoards");
    else if (name == "known") s.known = seat_piles(v, n, "known");
    else if (name == "ready") s.ready = seat_values<bool>(v, n, "ready");
    else if (name == "innate_used") s.innate_used = seat_values<bool>(v, n, "innate_used");
    else if (name == "restricted") s.restricted = seat_values<bool>(v, n, "restricted");
    else if (name == "cards_used") s.cards_used = seat_values<int>(v, n, "cards_used");
    else if (name == "card_limit") s.card_limit = seat_values<int>(v, n, "card_limit");
    else if (name == "current") s.current = to_int(v, "current");
    else if (name == "turn") s.turn = to_int(v, "turn");
    else if (name == "rng") {
        if (!nb::try_cast<uint64_t>(v, s.rng)) bad("rng must be a 64-bit unsigned integer");
    } else if (name == "stack") {
        s.stack.clear();
        for (nb::handle fr : v) s.stack.push_back(frame_from_py(cs, fr));
    } else if (name == "log") {
        s.has_log = !v.is_none();
        s.log.clear();
        if (s.has_log) {
            if (!nb::isinstance<nb::list>(v)) bad("log must be a list of lines (str) or None");
            for (nb::handle x : v) {
                if (!nb::isinstance<nb::str>(x)) bad("log must be a list of lines (str) or None");
                s.log.push_back(nb::cast<std::string>(x));
            }
        }
    } else if (name == "pending") {
        if (!v.is_none()) bad("pending can only be cleared");
        s.has_pending = false;
    } else if (name == "result") {
        if (!v.is_none()) bad("result can only be cleared");
        s.has_result = false;
    } else {
        bad("no such state field '" + name + "'");
    }
    // the result, the pending decision and the log are never indexed by the engine's rules
    if (name != "log" && name != "pending" && name != "result") {
        Game probe(pg.g->tables(), std::move(s), /*advance=*/false);
        pg.g->state_mut() = probe.state();
    } else {
        pg.g->state_mut() = std::move(s);
    }
    pg.changed();
}

// Game.run_chance: one move watched at its chance points, each as a tuple (the states as
// fields() dicts).
nb::tuple run_chance(PyGame& self, nb::object action, std::vector<std::pair<int, int>> force, int stop,
                     bool states) {
    playable(self);
    int a = -1;
    if (!action.is_none()) {
        a = to_int(action, "action");
        if (!self.g->is_legal(a)) throw CoreError("action " + std::to_string(a) + " is not legal here");
    }
    ChanceRun run;
    run.force = std::move(force);
    run.stop = stop < 0 ? -1 : stop;
    run.keep_states = states;
    // a whole move with every chance point as the generator deals it is the action applied
    if (a >= 0 && run.force.empty()) self.applied(a);
    else self.changed();
    self.g->run_chance(run, a);
    self.stopped = run.stopped;
    if (run.stopped) self.changed();
    const CardTables& cs = self.g->cards();
    nb::list points;
    for (size_t i = 0; i < run.points.size(); ++i) {
        const ChancePoint& p = run.points[i];
        nb::object before = nb::none(), after = nb::none();
        if (states) {
            before = fields_to_py(cs, run.before[i]);
            if (p.kind != CH_COIN && i < run.after.size()) after = fields_to_py(cs, run.after[i]);
        }
        points.append(nb::make_tuple(CHANCE_KINDS[p.kind], p.seat < 0 ? nb::object(nb::none())
                                     : nb::object(nb::int_(p.seat)), p.range, p.outcome, before, after));
    }
    return nb::make_tuple(points, run.stopped);
}

// -- Game.apply -------------------------------------------------------------------------------
// engine.Game.apply is this C function, a method of the Python class (installed by
// install_apply), so that a decision costs one C call and no Python frame: taking a legal plain
// int is done here; anything else (numpy ints, bools, illegal actions, a game over or stopped)
// goes to the class's _apply_checked, the Python method that converts the action or raises the
// project's IllegalActionError with its labels, so that the errors stay in one place.

PyTypeObject* py_game_type = nullptr;  // the core's Game (a game's ``_core``)
PyObject* snapshot_error = nullptr;    // engine.SnapshotError
PyObject* core_name = nullptr;         // "_core"
PyObject* checked_name = nullptr;      // "_apply_checked"

// the fast path: a legal plain int; nullptr with no error set when it is not one
PyObject* apply_fast(PyObject* self, PyObject* action) {
    if (!PyLong_CheckExact(action)) return nullptr;
    PyObject* core = PyObject_GetAttr(self, core_name);
    if (core == nullptr) return nullptr;
    PyObject* out = nullptr;
    if (Py_TYPE(core) == py_game_type) {
        PyGame& pg = *nb::inst_ptr<PyGame>(core);
        int overflow = 0;
        const long a = PyLong_AsLongAndOverflow(action, &overflow);
        if (!overflow && a >= 0 && a < pg.g->cards().n_actions && pg.g->is_legal(static_cast<int>(a))) {
            pg.applied(static_cast<int>(a));
            try {
                pg.g->apply(static_cast<int>(a));
                out = Py_NewRef(Py_None);
            } catch (const CoreError& e) {  // a position restored from a corrupt snapshot
                PyErr_Format(snapshot_error, "the game cannot go on from this position: %s", e.what());
            } catch (const std::bad_alloc&) {
                PyErr_NoMemory();
            } catch (const std::exception& e) {
                PyErr_SetString(PyExc_RuntimeError, e.what());
            }
        }
    }
    Py_DECREF(core);
    return out;
}

// Game.apply(self, action): positional or by keyword, as the Python method was
PyObject* game_apply(PyObject* self, PyObject* const* args, Py_ssize_t nargsf, PyObject* kwnames) {
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs + nkw == 1 && (nkw == 0 || PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "action") == 0)) {
        PyObject* out = apply_fast(self, args[0]);
        if (out != nullptr || PyErr_Occurred()) return out;
    }
    // everything else, bad calls included, as the Python method answers it
    std::vector<PyObject*> call(1 + nargs + nkw);
    call[0] = self;
    std::copy(args, args + nargs + nkw, call.begin() + 1);
    return PyObject_VectorcallMethod(checked_name, call.data(), 1 + nargs, kwnames);
}

// Game.legal_actions(): a plain C method of the core's Game (installed over the class's attribute
// below), since one Python call per decision is the benchmark's bar and nanobind's dispatch
// (argument casting, overload resolution) was a good part of this call's time.
PyObject* legal_actions_c(PyObject* self, PyObject*) {
    const State& s = nb::inst_ptr<PyGame>(self)->g->state();
    return s.has_pending ? new_list(s.pending.choices) : PyList_New(0);
}

PyMethodDef legal_actions_def = {
    "legal_actions", legal_actions_c, METH_NOARGS,
    "legal_actions($self, /)\n--\n\nThe pending decision's legal actions (a new list; empty when the game is over)."};

PyMethodDef game_apply_def = {
    "apply", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(game_apply)), METH_FASTCALL | METH_KEYWORDS,
    "apply($self, /, action)\n--\n\nTake ``action`` for the pending decision and advance to the next one."};

}  // namespace

void bind_game_functions(nb::module_& m) {
    m.def("install_apply", [](nb::type_object cls, nb::handle snapshot_error_type) {
        py_game_type = reinterpret_cast<PyTypeObject*>(nb::type<PyGame>().ptr());
        snapshot_error = snapshot_error_type.inc_ref().ptr();  // kept for the module's life
        core_name = PyUnicode_InternFromString("_core");
        checked_name = PyUnicode_InternFromString("_apply_checked");
        PyObject* d = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &game_apply_def);
        if (d == nullptr) throw nb::python_error();
        return nb::steal(d);
    }, nb::arg("cls"), nb::arg("snapshot_error"),
       "The C method engine.Game.apply, for class ``cls`` (see _apply_checked there).");

    m.def("game_pool", [](std::optional<int> limit) {
        GamePool& pool = game_pool();
        const auto out = std::make_pair(static_cast<int>(pool.games.size()), static_cast<int>(pool.limit));
        if (limit) {
            if (*limit < 0) throw CoreError("the pool's limit must be >= 0");
            pool.limit = static_cast<size_t>(*limit);
            if (pool.games.size() > pool.limit) pool.games.resize(pool.limit);
        }
        return out;
    }, nb::arg("limit").none() = nb::none(),
       "(games pooled, limit) of the finished games Game.new deals into; with ``limit``, sets "
       "it (0: every game is made fresh), returning the old figures.");
}

void bind_tables(nb::module_& m) {
    nb::class_<CardTables>(m, "Tables");
    m.def("make_tables", &make_tables, "Card tables from the plain dict engine.py builds.");

    nb::class_<Layout>(m, "ObsLayout")
        .def("__init__", [](Layout* self, const CardTables& cs, int size, int seat_size,
                            std::map<std::string, int> offset, std::map<std::string, int> seat_offset,
                            int most_turns, int most_cards_left) {
            if (most_turns < 1) throw CoreError("an observation layout needs room for one turn");
            new (self) Layout();
            self->layout.most_turns = most_turns;
            if (most_cards_left >= 0) self->layout.most_cards_left = most_cards_left;  // (-1: no bound)
            self->layout.size = size;
            self->layout.seat_size = seat_size;
            self->layout.offset = std::move(offset);
            self->layout.seat_offset = std::move(seat_offset);
            self->layout.finish(cs);
        });
}

namespace {

using GameClass = nb::class_<PyGame>;

// Making games: new deals, saved states loaded, copies.
void bind_making(GameClass& cls) {
    cls
        .def_static("new", [](std::shared_ptr<const CardTables> cs, int n, std::vector<int> dragons,
                              uint64_t seed, bool log, bool advance) {
            auto g = new_game(std::move(cs), n, std::move(dragons), seed, log, advance);
            auto pg = std::make_unique<PyGame>();
            pg->g = std::move(g);
            pg->recorded = advance;
            return pg.release();
        }, nb::arg("tables"), nb::arg("num_players"), nb::arg("dragons"), nb::arg("seed"),
           nb::arg("log"), nb::arg("advance") = true, nb::rv_policy::take_ownership,
           "A new game; with advance=False it stops right after the deal.")
        .def_static("load", [](std::shared_ptr<const CardTables> cs, nb::dict d, bool advance) {
            State s = state_from_py(*cs, d);
            auto pg = std::make_unique<PyGame>();
            pg->g = std::make_unique<Game>(std::move(cs), std::move(s), advance);
            return pg.release();
        }, nb::arg("tables"), nb::arg("state"), nb::arg("advance") = true, nb::rv_policy::take_ownership,
           "A game in a saved state, checked; with advance (the default) its cards are checked "
           "too and it is played on to its next decision.")
        .def("clone", [](const PyGame& self) {
            auto pg = std::make_unique<PyGame>();
            pg->g = std::make_unique<Game>(*self.g);
            pg->stopped = self.stopped;
            pg->recorded = self.recorded;
            pg->actions = self.actions;
            return pg.release();
        }, nb::rv_policy::take_ownership)
        .def("assign", [](PyGame& self, const PyGame& other) {
            *self.g = *other.g;
            self.stopped = other.stopped;
            self.changed();
        }, "Take a copy of another game's state (same card tables).")
        .def_prop_ro("version", [](const PyGame& self) { return self.version; })
        .def_prop_ro("actions", [](const PyGame& self) -> nb::object {
            if (!self.recorded) return nb::none();
            return nb::cast(self.actions);
        }, "The actions taken since the deal, or None if something else changed the game (its "
           "record is then lost: see PyGame::recorded).");
}

// Playing: a move, a move watched at its chance points, and what the position asks.
void bind_moves(GameClass& cls) {
    cls
        .def("apply", [](PyGame& self, int action) {
            if (!self.g->is_legal(action)) {
                playable(self);  // a stopped game has no pending decision: say why
                return false;
            }
            self.applied(action);
            self.g->apply(action);
            return true;
        }, "Take a legal action and advance; False (nothing changed) if it is not legal.")
        .def("run_chance", &run_chance, nb::arg("action").none(),
             nb::arg("force") = std::vector<std::pair<int, int>>{}, nb::arg("stop") = -1, nb::arg("states") = false,
             "Play one move (``action``, or None to advance a game made without advancing) watching its "
             "chance points (engine.hpp): ``force`` lists (point, outcome) to make come out otherwise, "
             "``stop`` the point to stop just before (the game is then left mid-move). Returns "
             "([(kind, seat, range, outcome, state before, state after)], stopped); the states "
             "(fields() dicts) only with states=True.")
        .def_prop_ro("stopped", [](const PyGame& self) { return self.stopped; })
        .def_prop_ro("is_over", [](const PyGame& self) { return self.g->is_over(); })
        .def_prop_ro("to_act", [](const PyGame& self) {
            int p = self.g->to_act();
            return p < 0 ? nb::none() : nb::object(nb::int_(p));
        })
        .def("is_legal", [](const PyGame& self, int a) { return self.g->is_legal(a); })
        .def("pending", [](const PyGame& self) { return pending_to_py(*self.g); })
        .def("result", [](const PyGame& self) { return result_to_py(self.g->state()); })
        .def("score", [](const PyGame& self, int p) {
            if (p < 0 || p >= self.g->state().n) throw CoreError("no such seat");
            return self.g->score(p);
        })
        .def("scores", [](const PyGame& self) { return self.g->scores(); })
        .def("rewards", [](const PyGame& self) {
            float r[MAX_PLAYERS];
            final_rewards(self.g->state(), r);
            return std::vector<float>(r, r + self.g->state().n);
        }, "+1 to the sole winner, -1 to the rest; in a draw 0 to the tied leaders; zeros until over.")
        .def("crash_choices", [](const PyGame& self, int p, nb::dict trig) {
            if (p < 0 || p >= self.g->state().n) throw CoreError("no such seat");
            Trigger t = trigger_from_py(self.g->cards(), trig);
            // the trigger's frame must exist, as the engine's own triggers' do
            const auto& st = self.g->state().stack;
            if (t.frame < 0 || t.frame >= static_cast<int>(st.size())) throw CoreError("no such frame");
            if (t.on != ON_EVENT && (t.card != NONE && t.card >= self.g->cards().n_kinds)) throw CoreError("bad card");
            return self.g->crash_choices(p, t);
        })
        .def("check_cards", [](const PyGame& self) { self.g->check_cards(); })
        .def("trigger", [](const PyGame& self, int fi) {
            if (fi < 0 || fi >= static_cast<int>(self.g->state().stack.size())) throw CoreError("no such frame");
            return trigger_to_py(self.g->cards(), self.g->trigger_of(fi));
        }, "The trigger of the crash window that opens on stack[fi].");
}

// The targeting rules (Game::victims and the rest), for bots through SeatView; a seat's
// observation.
void bind_rules(GameClass& cls) {
    cls
        .def("victims", [](const PyGame& self, int you, int actor, const std::string& sel) {
            static const char* const names[] = {"opponent", "richer", "richest", "you", "right"};
            int code = -1;
            for (int i = 0; i < 5; ++i)
                if (sel == names[i]) code = i;
            if (code < 0) throw CoreError("no targeting rule for the victim selector '" + sel + "'");
            return self.g->victims(seat_arg(self, you), seat_arg(self, actor), code);
        })
        .def("thief", [](const PyGame& self, int you, nb::dict op) {
            return self.g->thief(seat_arg(self, you), parse_op(op));
        })
        .def("eligible", [](const PyGame& self, int owner, int max_value, std::vector<int> exclude) {
            return self.g->eligible(seat_arg(self, owner), max_value, exclude);
        })
        .def("trade_gives", [](const PyGame& self, int you, nb::dict op) {
            return self.g->trade_gives(seat_arg(self, you), parse_op(op));
        })
        .def_static("trade_min_give", [](nb::dict op, int take_value) {
            return Game::trade_min_give(parse_op(op), take_value);
        })
        .def("trade_takes", [](const PyGame& self, int you, int victim, nb::dict op) {
            return self.g->trade_takes(seat_arg(self, you), seat_arg(self, victim), parse_op(op));
        })
        .def("trade_gives_for", [](const PyGame& self, int you, int victim, int take, nb::dict op) {
            if (take < 0 || take >= self.g->cards().n_kinds) throw CoreError("no such card kind");
            return self.g->trade_gives_for(seat_arg(self, you), seat_arg(self, victim), take, parse_op(op));
        })
        .def("candidates", [](const PyGame& self, int you, nb::dict op) {
            return self.g->candidates(seat_arg(self, you), parse_op(op));
        })
        .def("salvage_options", [](const PyGame& self, nb::dict op) {
            return self.g->salvage_options(parse_op(op));
        })
        .def("redirect_seats", [](const PyGame& self, int flipper, nb::dict op) {
            return self.g->redirect_seats(seat_arg(self, flipper), parse_op(op)).vec();
        })
        .def("tribute_seats", [](const PyGame& self, int you) {
            auto [giver, taker] = self.g->tribute_seats(seat_arg(self, you));
            if (giver < 0) return nb::object(nb::none());
            return nb::object(nb::make_tuple(giver, taker));
        })
        .def("pass_seats", [](const PyGame& self, int you, nb::dict op) {
            return self.g->pass_seats(seat_arg(self, you), parse_op(op)).vec();
        })
        .def("op_usable", [](const PyGame& self, int seat, nb::dict op) {
            if (seat < 0 || seat >= self.g->state().n) throw CoreError("no such seat");
            return self.g->op_usable(seat, parse_op(op));
        }, "May a card with this one primitive be used by seat now (a legal target exists)?")
        .def("observe", [](const PyGame& self, const Layout& L, int seat,
                           nb::ndarray<float, nb::ndim<1>, nb::c_contig, nb::device::cpu> obs,
                           nb::ndarray<int8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> mask) {
            const Game& g = *self.g;
            if (seat < 0 || seat >= g.state().n) throw CoreError("no such seat");
            if (obs.shape(0) != static_cast<size_t>(L.layout.size) ||
                mask.shape(0) != static_cast<size_t>(g.cards().n_actions))
                throw CoreError("observation buffers of the wrong size");
            havok::observe(g, L.layout, seat, obs.data(), mask.data());
        }, "Write seat's observation and action mask into the given arrays.");
}

// The state, field by field (what havok_env/state.py's GameState reads); edits to it.
void bind_state(GameClass& cls) {
    cls
        .def("fields", [](const PyGame& self) { return fields_to_py(self.g->cards(), self.g->state()); },
             "Every field of the state in one dict (GameState's names).")
        .def_prop_ro("num_players", [](const PyGame& self) { return self.g->state().n; })
        .def_prop_ro("dragons", [](const PyGame& self) { return self.g->state().dragons; })
        .def_prop_ro("rng", [](const PyGame& self) { return self.g->state().rng; })
        .def_prop_ro("turn", [](const PyGame& self) { return self.g->state().turn; })
        .def_prop_ro("current", [](const PyGame& self) { return self.g->state().current; })
        .def_prop_ro("havok", [](const PyGame& self) { return list_of(self.g->state().havok); })
        .def_prop_ro("hijinks", [](const PyGame& self) { return list_of(self.g->state().hijinks); })
        .def_prop_ro("discard", [](const PyGame& self) { return list_of(self.g->state().discard); })
        .def_prop_ro("past_events", [](const PyGame& self) { return list_of(self.g->state().past_events); })
        .def_prop_ro("trash", [](const PyGame& self) { return list_of(self.g->state().trash); })
        .def_prop_ro("in_play", [](const PyGame& self) { return list_of(self.g->state().in_play); })
        .def_prop_ro("canceled", [](const PyGame& self) { return pairs_to_py(self.g->state().canceled); })
        .def_prop_ro("hands", [](const PyGame& self) { return seat_lists(self.g->state().hands, self.g->state().n); })
        .def_prop_ro("hoards", [](const PyGame& self) { return seat_lists(self.g->state().hoards, self.g->state().n); })
        .def_prop_ro("known", [](const PyGame& self) { return seat_lists(self.g->state().known, self.g->state().n); })
        .def("hand", [](const PyGame& self, int p) { return list_of(self.g->state().hands.at(p)); })
        .def("hoard", [](const PyGame& self, int p) { return list_of(self.g->state().hoards.at(p)); })
        .def_prop_ro("ready", [](const PyGame& self) { return seat_list(self.g->state().ready, self.g->state().n); })
        .def_prop_ro("innate_used", [](const PyGame& self) { return seat_list(self.g->state().innate_used, self.g->state().n); })
        .def_prop_ro("restricted", [](const PyGame& self) { return seat_list(self.g->state().restricted, self.g->state().n); })
        .def_prop_ro("cards_used", [](const PyGame& self) { return seat_list(self.g->state().cards_used, self.g->state().n); })
        .def_prop_ro("card_limit", [](const PyGame& self) { return seat_list(self.g->state().card_limit, self.g->state().n); })
        .def_prop_ro("log", [](const PyGame& self) {
            const State& s = self.g->state();
            if (!s.has_log) return nb::object(nb::none());
            nb::list out;
            for (const auto& x : s.log) out.append(x);
            return nb::object(out);
        })
        .def("stack", [](const PyGame& self) {
            nb::list out;
            for (const Frame& fr : self.g->state().stack) out.append(frame_to_py(self.g->cards(), fr));
            return out;
        })
        .def("set", &set_field, nb::arg("name"), nb::arg("value").none(),
             "Replace one field of the state (a list, a value or the stack; None clears the log, "
             "the pending decision or the result).");
}

// Game.legal_actions as a plain C method (legal_actions_c above), over nanobind's attribute.
void install_legal_actions() {
    PyObject* type = nb::type<PyGame>().ptr();
    PyObject* d = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(type), &legal_actions_def);
    if (d == nullptr || PyObject_SetAttrString(type, "legal_actions", d) != 0) throw nb::python_error();
    Py_DECREF(d);
}

}  // namespace

void bind_game(nb::module_& m) {
    GameClass cls(m, "Game");
    bind_making(cls);
    bind_moves(cls);
    bind_rules(cls);
    bind_state(cls);
    install_legal_actions();
}

}  // namespace havok::py
