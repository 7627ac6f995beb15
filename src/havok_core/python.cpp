// The Python binding (nanobind): card tables in, games out. Card data arrives as the plain
// tables havok_env/engine.py builds from a validated CardSet; positions arrive and leave as the
// Python engine's plain-data form (card kinds as ints, frames as dicts), so snapshots keep
// their shape. Every bad value raises CoreError (a ValueError) or TypeError, never a crash.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>

#include "determinize.hpp"
#include "engine.hpp"
#include "heuristic.hpp"
#include "observer.hpp"
#include "value_features.hpp"
#include "value_net.hpp"
#include "vector.hpp"

namespace nb = nanobind;
using namespace havok;

namespace {

// -- reading plain Python data ---------------------------------------------------------------

[[noreturn]] void bad(const std::string& what) { throw CoreError(what); }

bool has(nb::handle d, const char* key) { return nb::cast<nb::dict>(d).contains(key); }

nb::object get(nb::handle d, const char* key) {
    nb::dict dd = nb::cast<nb::dict>(d);
    if (!dd.contains(key)) bad(std::string("missing '") + key + "'");
    return dd[key];
}

int to_int(nb::handle h, const char* what) {
    if (!nb::isinstance<nb::int_>(h) || nb::isinstance<nb::bool_>(h))
        bad(std::string(what) + " must be an integer");
    long long v;
    if (!nb::try_cast<long long>(h, v) || v < -(1LL << 30) || v > (1LL << 30))
        bad(std::string(what) + " is out of range");
    return static_cast<int>(v);
}

int int_at(nb::handle d, const char* key, int dflt) { return has(d, key) ? to_int(get(d, key), key) : dflt; }

// An int, None (NONE) or missing (ABSENT).
int opt_int(nb::handle d, const char* key) {
    if (!has(d, key)) return ABSENT;
    nb::object v = get(d, key);
    return v.is_none() ? NONE : to_int(v, key);
}

bool truthy(nb::handle d, const char* key) { return has(d, key) && nb::cast<bool>(nb::bool_(get(d, key))); }

std::string str_at(nb::handle d, const char* key) {
    nb::object v = get(d, key);
    if (!nb::isinstance<nb::str>(v)) bad(std::string(key) + " must be a string");
    return nb::cast<std::string>(v);
}

std::vector<int> ints(nb::handle h, const char* what) {
    if (!nb::isinstance<nb::list>(h) && !nb::isinstance<nb::tuple>(h)) bad(std::string(what) + " must be a list");
    std::vector<int> out;
    for (nb::handle x : h) out.push_back(to_int(x, what));
    if (out.size() > 100000) bad(std::string(what) + " is too long");
    return out;
}

std::vector<std::pair<int, int>> pairs(nb::handle h, const char* what) {
    std::vector<std::pair<int, int>> out;
    if (!nb::isinstance<nb::list>(h) && !nb::isinstance<nb::tuple>(h)) bad(std::string(what) + " must be a list");
    for (nb::handle x : h) {
        std::vector<int> p = ints(x, what);
        if (p.size() != 2) bad(std::string(what) + " entries must be pairs");
        out.emplace_back(p[0], p[1]);
    }
    return out;
}

int index_of(const std::string& name, const char* const* names, int count, const char* what) {
    for (int i = 0; i < count; ++i)
        if (name == names[i]) return i;
    bad(std::string("unknown ") + what + " '" + name + "'");
}

// -- card tables -----------------------------------------------------------------------------

Op parse_op(nb::handle d) {
    Op op;
    op.code = index_of(str_at(d, "op"), OP_NAMES, N_OPS, "effect primitive");
    op.max_value = int_at(d, "max_value", ANY);
    op.count = int_at(d, "count", 1);
    if (has(d, "victim")) {
        static const char* const victims[] = {"opponent", "richer", "richest", "you", "right"};
        op.victim = index_of(str_at(d, "victim"), victims, 5, "victim");
    }
    op.thief_right = has(d, "thief") && str_at(d, "thief") == "right";
    op.has_max_gain = has(d, "max_gain");
    op.max_gain = int_at(d, "max_gain", ANY);
    op.give_lowest = has(d, "give") && str_at(d, "give") == "lowest";
    op.pick_best = has(d, "pick") && str_at(d, "pick") == "best";
    op.else_draw = int_at(d, "else_draw", 0);
    op.skip_you = truthy(d, "skip_you");
    op.n = int_at(d, "n", -1);
    op.choose_from = int_at(d, "choose_from", 1);
    op.optional = truthy(d, "optional");
    op.who_actor = has(d, "who") && str_at(d, "who") == "actor";
    op.to_discard = truthy(d, "to_discard");
    op.to_choice = has(d, "to") && str_at(d, "to") == "choice";
    return op;
}

TriggerSpec parse_trigger(nb::handle d) {
    TriggerSpec T;
    static const char* const ons[] = {"event", "treasure", "use"};
    T.on = index_of(str_at(d, "on"), ons, 3, "trigger");
    T.max_printed = int_at(d, "max_printed", ANY);
    if (has(d, "uses")) {
        T.uses_play = T.uses_crash = false;
        for (nb::handle u : get(d, "uses")) {
            std::string s = nb::cast<std::string>(u);
            T.uses_play |= s == "play";
            T.uses_crash |= s == "crash";
        }
    }
    if (has(d, "types")) {
        T.has_types = true;
        for (nb::handle t : get(d, "types"))
            T.types |= 1u << index_of(nb::cast<std::string>(t), TYPE_NAMES, N_TYPES, "Hijinks type");
    }
    if (has(d, "targets")) {
        static const char* const where[] = {"any", "own", "other"};
        T.targets = index_of(str_at(d, "targets"), where, 3, "trigger targets");
    }
    T.needs_spare = truthy(d, "needs_spare");
    return T;
}

std::shared_ptr<const CardTables> make_tables(nb::dict d) {
    auto cs = std::make_shared<CardTables>();
    cs->n_treasures = to_int(get(d, "n_treasures"), "n_treasures");
    cs->n_events = to_int(get(d, "n_events"), "n_events");
    cs->n_hijinks = to_int(get(d, "n_hijinks"), "n_hijinks");
    cs->starting_treasure = to_int(get(d, "starting_treasure"), "starting_treasure");
    for (nb::handle x : get(d, "names")) cs->names.push_back(nb::cast<std::string>(x));
    cs->copies = ints(get(d, "copies"), "copies");
    cs->value = ints(get(d, "value"), "value");
    cs->affinity = ints(get(d, "affinity"), "affinity");
    for (nb::handle x : get(d, "dragons")) {
        Dragon dr;
        dr.name = str_at(x, "name");
        dr.affinity = to_int(get(x, "affinity"), "affinity");
        dr.ready_type = index_of(str_at(x, "ready_type"), TYPE_NAMES, N_TYPES, "Hijinks type");
        cs->dragons.push_back(dr);
    }
    for (nb::handle x : get(d, "abilities")) {
        Ability ab;
        if (!x.is_none()) {
            ab.present = true;
            ab.name = str_at(x, "name");
            ab.crash = str_at(x, "kind") == "crash";
            ab.type = index_of(str_at(x, "type"), TYPE_NAMES, N_TYPES, "Hijinks type");
            nb::object trig = get(x, "trigger");
            if (!trig.is_none()) ab.trigger = parse_trigger(trig);
            else ab.trigger.on = -1;  // no trigger: never crashes anything
            for (nb::handle list : get(x, "ops")) {
                std::vector<Op> ops;
                for (nb::handle op : list) ops.push_back(parse_op(op));
                ab.ops.push_back(std::move(ops));
            }
        }
        cs->abilities.push_back(std::move(ab));
    }
    cs->finish();
    return cs;
}

// -- ability references ------------------------------------------------------------------------

nb::object ref_to_py(const CardTables& cs, int ref) {
    if (!cs.is_innate(ref)) return nb::int_(ref);
    int i = ref - cs.n_kinds;
    nb::list out;
    out.append("innate");
    out.append(i / 2);
    out.append(i % 2 ? "crash" : "play");
    return out;
}

int ref_from_py(const CardTables& cs, nb::handle h) {
    if (nb::isinstance<nb::int_>(h)) {
        int k = to_int(h, "ability");
        if (k < 0 || k >= cs.n_kinds || !cs.abilities[k].present) bad("no such ability");
        return k;
    }
    if (!nb::isinstance<nb::list>(h) && !nb::isinstance<nb::tuple>(h)) bad("bad ability reference");
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    if (nb::len(seq) != 3 || !nb::isinstance<nb::str>(seq[0]) || nb::cast<std::string>(seq[0]) != "innate")
        bad("bad ability reference");
    int d = to_int(seq[1], "dragon");
    if (d < 0 || d >= static_cast<int>(cs.dragons.size())) bad("no such dragon");
    std::string slot = nb::isinstance<nb::str>(seq[2]) ? nb::cast<std::string>(seq[2]) : "";
    if (slot != "play" && slot != "crash") bad("bad ability reference");
    return cs.innate(d, slot == "crash");
}

nb::object opt_to_py(int v) { return v == NONE ? nb::object(nb::none()) : nb::object(nb::int_(v)); }

// A new Python list of ``v`` (nullptr with the error set when out of memory), sized once and
// filled in place: legal_actions() builds one of these at every decision.
PyObject* new_list(const std::vector<int>& v) {
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

nb::list list_of(const std::vector<int>& v) {
    PyObject* out = new_list(v);
    if (!out) throw nb::python_error();
    return nb::steal<nb::list>(out);
}

nb::list pairs_to_py(const std::vector<std::pair<int, int>>& v) {
    nb::list out;
    for (const auto& [a, b] : v) {
        nb::list p;
        p.append(a);
        p.append(b);
        out.append(p);
    }
    return out;
}

// -- triggers, contexts, frames ------------------------------------------------------------------

nb::dict trigger_to_py(const CardTables& cs, const Trigger& t) {
    nb::dict d;
    static const char* const ons[] = {"event", "treasure", "use"};
    d["on"] = ons[t.on];
    d["frame"] = t.frame;
    if (t.on == ON_EVENT) {
        d["flipper"] = t.who;
        d["card"] = t.card;
    } else if (t.on == ON_TREASURE) {
        d["to"] = t.who;
        d["card"] = t.card;
    } else {
        d["user"] = t.who;
        d["use"] = t.crash_use ? "crash" : "play";
        d["type"] = TYPE_NAMES[t.type];
        d["owners"] = list_of(t.owners);
        d["picks"] = list_of(t.picks);
        d["give"] = opt_to_py(t.give);
        d["ability"] = ref_to_py(cs, t.ability);
    }
    return d;
}

Trigger trigger_from_py(const CardTables& cs, nb::handle d) {
    Trigger t;
    static const char* const ons[] = {"event", "treasure", "use"};
    t.on = index_of(str_at(d, "on"), ons, 3, "trigger");
    t.frame = to_int(get(d, "frame"), "frame");
    if (t.on == ON_EVENT) {
        t.who = to_int(get(d, "flipper"), "flipper");
        t.card = to_int(get(d, "card"), "card");
    } else if (t.on == ON_TREASURE) {
        t.who = to_int(get(d, "to"), "to");
        t.card = to_int(get(d, "card"), "card");
    } else {
        t.who = to_int(get(d, "user"), "user");
        std::string use = str_at(d, "use");
        if (use != "play" && use != "crash") bad("bad use");
        t.crash_use = use == "crash";
        t.type = index_of(str_at(d, "type"), TYPE_NAMES, N_TYPES, "Hijinks type");
        t.owners = ints(get(d, "owners"), "owners");
        t.picks = ints(get(d, "picks"), "picks");
        t.give = opt_int(d, "give");
        if (t.give == ABSENT) t.give = NONE;
        t.ability = ref_from_py(cs, get(d, "ability"));
    }
    return t;
}

nb::dict context_to_py(const CardTables& cs, const Context& c) {
    nb::dict d;
    if (c.has_trigger) {
        d["trigger"] = trigger_to_py(cs, c.trigger);
        return d;
    }
    if (c.ability != ABSENT) d["ability"] = ref_to_py(cs, c.ability);
    if (c.actor != ABSENT) d["actor"] = c.actor;
    if (c.target != ABSENT) d["target"] = c.target;
    if (c.has_picks) d["picks"] = list_of(c.picks);
    if (c.has_shown) d["shown"] = list_of(c.shown);
    return d;
}

nb::dict frame_to_py(const CardTables& cs, const Frame& fr) {
    nb::dict d;
    auto chosen = [&](const Chosen& t) {
        nb::dict o;
        if (t.done) o["done"] = true;
        if (t.victim != ABSENT) o["victim"] = opt_to_py(t.victim);
        if (t.has_picks) o["picks"] = list_of(t.picks);
        if (t.actor != ABSENT) o["actor"] = t.actor;
        if (t.give != ABSENT) o["give"] = t.give;
        if (t.swap != ABSENT) o["swap"] = t.swap;
        if (t.seat != ABSENT) o["seat"] = t.seat;
        return o;
    };
    auto scratch = [&](const Scratch& s) {
        nb::dict o;
        if (s.has_chosen) o["chosen"] = pairs_to_py(s.chosen);
        if (s.asking != ABSENT) o["asking"] = s.asking;
        if (s.i != ABSENT) o["i"] = s.i;
        if (s.has_shown) o["shown"] = list_of(s.shown);
        if (s.pushed) o["pushed"] = true;
        return o;
    };
    switch (fr.f) {
        case F_TURN:
            d["f"] = "turn";
            d["step"] = fr.step ? "main" : "start";
            break;
        case F_HAVOK:
            d["f"] = "havok";
            d["card"] = fr.card;
            d["you"] = fr.you;
            d["flipper"] = fr.flipper;
            d["step"] = fr.step;
            if (fr.to != ABSENT) d["to"] = fr.to;
            if (fr.nullified) d["nullified"] = true;
            if (fr.step == 2 && !cs.is_treasure(fr.card)) {
                d["ability"] = ref_to_py(cs, fr.ability);
                d["t"] = chosen(fr.t);
                d["o"] = scratch(fr.o);
                d["pc"] = fr.pc;
            }
            break;
        case F_USE: {
            static const char* const steps[] = {"target", "window", "effect"};
            d["f"] = "use";
            d["user"] = fr.user;
            d["you"] = fr.you;
            d["ability"] = ref_to_py(cs, fr.ability);
            d["card"] = opt_to_py(fr.card);
            d["use"] = fr.crash_use ? "crash" : "play";
            d["crashed"] = opt_to_py(fr.crashed);
            d["step"] = steps[fr.step];
            d["t"] = chosen(fr.t);
            d["o"] = scratch(fr.o);
            d["pc"] = fr.pc;
            if (fr.canceled) d["canceled"] = true;
            if (fr.to_discard) d["to_discard"] = true;
            if (fr.ok) d["ok"] = true;
            if (fr.divert != ABSENT) d["divert"] = fr.divert;
            break;
        }
        default: {
            d["f"] = "window";
            d["trig"] = trigger_to_py(cs, fr.trig);
            if (fr.has_order) {
                nb::list order;
                for (const auto& [p, choices] : fr.order) {
                    nb::list e;
                    e.append(p);
                    e.append(list_of(choices));
                    order.append(e);
                }
                d["order"] = order;
            } else {
                d["order"] = nb::none();
            }
            d["i"] = fr.i;
            d["decl"] = pairs_to_py(fr.decl);
        }
    }
    if (fr.a != ABSENT) d["a"] = fr.a;
    return d;
}

Frame frame_from_py(const CardTables& cs, nb::handle d) {
    if (!nb::isinstance<nb::dict>(d)) bad("a frame must be a dict");
    Frame fr;
    std::string f = str_at(d, "f");
    auto chosen = [&](nb::handle h) {
        Chosen t;
        if (!nb::isinstance<nb::dict>(h)) bad("'t' must be a dict");
        t.done = truthy(h, "done");
        t.victim = opt_int(h, "victim");
        t.has_picks = has(h, "picks");
        if (t.has_picks) t.picks = ints(get(h, "picks"), "picks");
        t.actor = opt_int(h, "actor");
        t.give = opt_int(h, "give");
        t.swap = opt_int(h, "swap");
        t.seat = opt_int(h, "seat");
        if (t.actor == NONE || t.give == NONE || t.swap == NONE || t.seat == NONE) bad("bad target");
        return t;
    };
    auto scratch = [&](nb::handle h) {
        Scratch s;
        if (!nb::isinstance<nb::dict>(h)) bad("'o' must be a dict");
        s.pushed = truthy(h, "pushed");
        s.has_shown = has(h, "shown");
        if (s.has_shown) s.shown = ints(get(h, "shown"), "shown");
        s.has_chosen = has(h, "chosen");
        if (s.has_chosen) s.chosen = pairs(get(h, "chosen"), "chosen");
        s.asking = opt_int(h, "asking");
        s.i = opt_int(h, "i");
        if (s.asking == NONE || s.i == NONE) bad("bad scratch");
        return s;
    };
    if (f == "turn") {
        fr.f = F_TURN;
        std::string step = str_at(d, "step");
        if (step != "start" && step != "main") bad("bad turn step");
        fr.step = step == "main";
    } else if (f == "havok") {
        fr.f = F_HAVOK;
        fr.card = to_int(get(d, "card"), "card");
        fr.you = to_int(get(d, "you"), "you");
        fr.flipper = to_int(get(d, "flipper"), "flipper");
        fr.step = to_int(get(d, "step"), "step");
        fr.to = opt_int(d, "to");
        if (fr.to == NONE) bad("bad 'to'");
        fr.nullified = truthy(d, "nullified");
        if (fr.step == 2 && !cs.is_treasure(fr.card)) {
            fr.ability = ref_from_py(cs, get(d, "ability"));
            fr.t = chosen(get(d, "t"));
            fr.o = scratch(get(d, "o"));
            fr.pc = to_int(get(d, "pc"), "pc");
        }
    } else if (f == "use") {
        fr.f = F_USE;
        fr.user = to_int(get(d, "user"), "user");
        fr.you = to_int(get(d, "you"), "you");
        fr.ability = ref_from_py(cs, get(d, "ability"));
        fr.card = opt_int(d, "card");
        std::string use = str_at(d, "use");
        if (use != "play" && use != "crash") bad("bad use");
        fr.crash_use = use == "crash";
        fr.crashed = opt_int(d, "crashed");
        static const char* const steps[] = {"target", "window", "effect"};
        fr.step = index_of(str_at(d, "step"), steps, 3, "use step");
        fr.t = chosen(get(d, "t"));
        fr.o = scratch(get(d, "o"));
        fr.pc = to_int(get(d, "pc"), "pc");
        fr.canceled = truthy(d, "canceled");
        fr.to_discard = truthy(d, "to_discard");
        fr.ok = truthy(d, "ok");
        fr.divert = opt_int(d, "divert");
        if (fr.card == ABSENT || fr.crashed == ABSENT || fr.divert == NONE) bad("bad use frame");
    } else if (f == "window") {
        fr.f = F_WINDOW;
        fr.trig = trigger_from_py(cs, get(d, "trig"));
        nb::object order = get(d, "order");
        fr.has_order = !order.is_none();
        if (fr.has_order) {
            for (nb::handle e : order) {
                nb::sequence seq = nb::borrow<nb::sequence>(e);
                if (nb::len(seq) != 2) bad("bad crash window order");
                fr.order.emplace_back(to_int(seq[0], "seat"), ints(seq[1], "crash choices"));
            }
        }
        fr.i = to_int(get(d, "i"), "i");
        fr.decl = pairs(get(d, "decl"), "decl");
    } else {
        bad("unknown frame '" + f + "'");
    }
    fr.a = opt_int(d, "a");
    if (fr.a == NONE) bad("bad answer");
    return fr;
}

// -- games ---------------------------------------------------------------------------------------

struct Layout {
    ObsLayout layout;
};

struct PyGame {
    std::unique_ptr<Game> g;
    uint64_t version = 0;  // bumped by every change, so that the Python side may cache
    bool stopped = false;  // left mid-move by run_chance: it can be read, never played on

    Game& game() { return *g; }
    ~PyGame();  // gives its game to the pool below
};

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

PyGame::~PyGame() {
    GamePool& pool = game_pool();
    if (g && pool.games.size() < pool.limit) pool.games.push_back(std::move(g));
}

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

std::array<Cards, MAX_PLAYERS> seat_piles(nb::handle h, int n, const char* what) {
    std::array<Cards, MAX_PLAYERS> out;
    std::vector<nb::handle> items;
    for (nb::handle x : h) items.push_back(x);
    if (static_cast<int>(items.size()) != n) bad(std::string(what) + " needs one list per seat");
    for (int p = 0; p < n; ++p) out[p] = ints(items[p], what);
    return out;
}

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

State state_from_py(const CardTables& cs, nb::dict d) {
    State s;
    s.n = to_int(get(d, "num_players"), "num_players");
    if (s.n < 2 || s.n > MAX_PLAYERS) bad("bad player count");
    const int n = s.n;
    s.dragons = ints(get(d, "dragons"), "dragons");
    if (!nb::try_cast<uint64_t>(get(d, "rng"), s.rng)) bad("rng must be a 64-bit unsigned integer");
    s.havok = ints(get(d, "havok"), "havok");
    s.hijinks = ints(get(d, "hijinks"), "hijinks");
    s.discard = ints(get(d, "discard"), "discard");
    s.past_events = ints(get(d, "past_events"), "past_events");
    s.trash = ints(get(d, "trash"), "trash");
    s.in_play = ints(get(d, "in_play"), "in_play");
    s.canceled = pairs(get(d, "canceled"), "canceled");
    s.hands = seat_piles(get(d, "hands"), n, "hands");
    s.hoards = seat_piles(get(d, "hoards"), n, "hoards");
    s.known = seat_piles(get(d, "known"), n, "known");
    s.ready = seat_values<bool>(get(d, "ready"), n, "ready");
    s.innate_used = seat_values<bool>(get(d, "innate_used"), n, "innate_used");
    s.restricted = seat_values<bool>(get(d, "restricted"), n, "restricted");
    s.cards_used = seat_values<int>(get(d, "cards_used"), n, "cards_used");
    s.card_limit = seat_values<int>(get(d, "card_limit"), n, "card_limit");
    s.current = to_int(get(d, "current"), "current");
    s.turn = to_int(get(d, "turn"), "turn");
    for (nb::handle fr : get(d, "stack")) s.stack.push_back(frame_from_py(cs, fr));
    nb::object result = get(d, "result");
    if (!result.is_none()) {
        s.has_result = true;
        s.result.winners = ints(get(result, "winners"), "winners");
        s.result.reason = str_at(result, "reason");
        s.result.scores = ints(get(result, "scores"), "scores");
    }
    nb::object log = get(d, "log");
    if (!log.is_none()) {
        s.has_log = true;
        for (nb::handle x : log) s.log.push_back(nb::cast<std::string>(x));
    }
    return s;
}

nb::list seat_lists(const std::array<Cards, MAX_PLAYERS>& a, int n) {
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

nb::object pending_to_py(const CardTables& cs, const State& s) {
    if (!s.has_pending) return nb::none();
    nb::dict d;
    d["player"] = s.pending.player;
    d["kind"] = DECISION_KINDS[s.pending.kind];
    d["purpose"] = PURPOSES[s.pending.purpose];
    d["choices"] = list_of(s.pending.choices);
    d["context"] = context_to_py(cs, s.pending.context);
    return d;
}

nb::object pending_to_py(const Game& g) { return pending_to_py(g.cards(), g.state()); }

nb::object result_to_py(const State& s) {
    if (!s.has_result) return nb::none();
    nb::dict d;
    d["winners"] = list_of(s.result.winners);
    d["reason"] = s.result.reason;
    d["scores"] = list_of(s.result.scores);
    return d;
}

// Every field of a state, as GameState names them (the luck tracer values such states).
nb::dict fields_to_py(const CardTables& cs, const State& s) {
    nb::dict d;
    const int n = s.n;
    d["num_players"] = n;
    d["dragons"] = list_of(s.dragons);
    d["rng"] = s.rng;
    d["turn"] = s.turn;
    d["current"] = s.current;
    d["havok"] = list_of(s.havok);
    d["hijinks"] = list_of(s.hijinks);
    d["discard"] = list_of(s.discard);
    d["past_events"] = list_of(s.past_events);
    d["trash"] = list_of(s.trash);
    d["in_play"] = list_of(s.in_play);
    d["canceled"] = pairs_to_py(s.canceled);
    d["hands"] = seat_lists(s.hands, n);
    d["hoards"] = seat_lists(s.hoards, n);
    d["known"] = seat_lists(s.known, n);
    d["ready"] = seat_list(s.ready, n);
    d["innate_used"] = seat_list(s.innate_used, n);
    d["restricted"] = seat_list(s.restricted, n);
    d["cards_used"] = seat_list(s.cards_used, n);
    d["card_limit"] = seat_list(s.card_limit, n);
    nb::list stack;
    for (const Frame& fr : s.stack) stack.append(frame_to_py(cs, fr));
    d["stack"] = stack;
    d["pending"] = pending_to_py(cs, s);
    d["result"] = result_to_py(s);
    return d;
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
    else if (name == "hands") s.hands = seat_piles(v, n, "hands");
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
        if (s.has_log)
            for (nb::handle x : v) s.log.push_back(nb::cast<std::string>(x));
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
    pg.version += 1;
}


// -- the luck correction's value features, read from states as Python objects ------------------
// Any object with GameState's field names: the tracer's plain-data states (evaluation/chance.py)
// or a live GameState. Only what the features read is taken (value_features.hpp), and quickly:
// a game's correction values tens of thousands of states.

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

// The items of a list or tuple (borrowed).
PyObject* const* items_of(PyObject* seq, Py_ssize_t& len, const char* what) {
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) bad(std::string(what) + " must be a list");
    len = PySequence_Fast_GET_SIZE(seq);
    return PySequence_Fast_ITEMS(seq);
}

void read_cards(PyObject* seq, Cards& out, const char* what) {
    Py_ssize_t len;
    PyObject* const* it = items_of(seq, len, what);
    out.resize(static_cast<size_t>(len));
    for (Py_ssize_t i = 0; i < len; ++i) out[i] = int_of(it[i], what);
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
    auto piles = [&](PyObject* name, std::array<Cards, MAX_PLAYERS>& out, const char* what) {
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

// The rows of evaluation.value.features for a list of (state, top_seen) pairs of one player count:
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
            pg.version += 1;
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

    nb::class_<CardTables>(m, "Tables");
    m.def("make_tables", &make_tables, "Card tables from the plain dict engine.py builds.");

    nb::class_<Layout>(m, "ObsLayout")
        .def("__init__", [](Layout* self, const CardTables& cs, int size, int seat_size,
                            std::map<std::string, int> offset, std::map<std::string, int> seat_offset) {
            new (self) Layout();
            self->layout.size = size;
            self->layout.seat_size = seat_size;
            self->layout.offset = std::move(offset);
            self->layout.seat_offset = std::move(seat_offset);
            self->layout.finish(cs);
        });

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
          "count: one row per seat of each state, or per seat of ``seats`` (evaluation/value.py).");

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

    using F32 = nb::ndarray<float, nb::c_contig, nb::device::cpu>;
    using I8 = nb::ndarray<int8_t, nb::c_contig, nb::device::cpu>;
    using U8 = nb::ndarray<uint8_t, nb::c_contig, nb::device::cpu>;
    using I32 = nb::ndarray<int32_t, nb::c_contig, nb::device::cpu>;
    using I64 = nb::ndarray<int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
    struct Outs {
        static Batch::Out check(const Batch& b, const Layout& L, int rewards_per_env, F32 obs, I8 mask,
                                F32 rewards, U8 terminated, I32 to_act, float* final_obs) {
            const size_t n = static_cast<size_t>(b.size());
            if (obs.size() != n * L.layout.size || mask.size() != n * b.game(0).cards().n_actions ||
                rewards.size() != n * rewards_per_env || terminated.size() != n || to_act.size() != n)
                throw CoreError("batch buffers of the wrong size");
            return {obs.data(), mask.data(), rewards.data(), terminated.data(), to_act.data(), final_obs};
        }
    };
    nb::class_<Batch>(m, "Batch")
        .def("__init__", [](Batch* self, std::shared_ptr<const CardTables> cs, const Layout& L, int num_envs,
                            int num_players, uint64_t seed, bool learner) {
            new (self) Batch(std::move(cs), L.layout, num_envs, num_players, seed, learner);
        })
        .def_prop_ro("size", &Batch::size)
        .def("learner_seat", &Batch::learner_seat)
        .def("game", [](const Batch& b, int i) {
            if (i < 0 || i >= b.size()) throw CoreError("no such game");
            auto pg = std::make_unique<PyGame>();
            pg->g = std::make_unique<Game>(b.game(i));
            return pg.release();
        }, nb::rv_policy::take_ownership, "A copy of game i.")
        .def("reset", [](Batch& b, const Layout& L, int per_env, uint64_t seed, F32 obs, I8 mask, F32 rewards,
                         U8 terminated, I32 to_act) {
            Batch::Out out = Outs::check(b, L, per_env, obs, mask, rewards, terminated, to_act, nullptr);
            nb::gil_scoped_release nogil;
            b.reset(seed, out);
        })
        .def("step", [](Batch& b, const Layout& L, int per_env, I64 actions, F32 obs, I8 mask, F32 rewards,
                        U8 terminated, I32 to_act, std::optional<F32> final_obs, int threads) {
            if (actions.shape(0) != static_cast<size_t>(b.size())) throw CoreError("one action per game is needed");
            float* fo = nullptr;
            if (final_obs) {
                if (final_obs->size() != static_cast<size_t>(b.size()) * L.layout.size)
                    throw CoreError("batch buffers of the wrong size");
                fo = final_obs->data();
            }
            Batch::Out out = Outs::check(b, L, per_env, obs, mask, rewards, terminated, to_act, fo);
            int bad = b.first_illegal(actions.data());
            if (bad >= 0) return bad;
            nb::gil_scoped_release nogil;
            b.step(actions.data(), out, threads);
            return -1;
        }, nb::arg("layout"), nb::arg("per_env"), nb::arg("actions"), nb::arg("obs"), nb::arg("mask"),
           nb::arg("rewards"), nb::arg("terminated"), nb::arg("to_act"), nb::arg("final_obs").none(),
           nb::arg("threads"),
           "Step every game (the GIL released); -1, or the index of the first illegal action "
           "(then nothing changed).");

    m.def("mod_below", [](uint64_t x, uint64_t d) {
        if (d == 0) throw CoreError("the divisor must be positive");
        return mod_below(x, d);
    }, nb::arg("x"), nb::arg("d"),
       "x % d as the core's shuffles and random choices compute it (through a table of "
       "reciprocals): tests hold it to Python's %.");
    m.def("random_playouts", [](std::shared_ptr<const CardTables> cs, int num_players, int games, uint64_t seed) {
        if (num_players < 2 || num_players > MAX_PLAYERS || games < 0) throw CoreError("bad playout count");
        nb::gil_scoped_release nogil;
        long long decisions = 0;
        std::unique_ptr<Game> game;
        for (int k = 0; k < games; ++k) {
            const uint64_t game_seed = rng_next(seed) >> 1;
            if (!game)
                game = std::make_unique<Game>(cs, num_players, std::vector<int>(num_players, -1), game_seed, false);
            else
                game->redeal(num_players, std::vector<int>(num_players, -1), game_seed, false);
            Game& g = *game;
            while (!g.is_over()) {
                const auto& choices = g.state().pending.choices;
                g.apply(choices[mod_below(rng_next(seed), choices.size())]);
                ++decisions;
            }
        }
        return decisions;
    }, nb::arg("tables"), nb::arg("num_players"), nb::arg("games"), nb::arg("seed"),
       "Plays whole games inside the core with uniformly random legal actions (the GIL "
       "released); the number of decisions taken (benchmarks/throughput.py).");

    nb::class_<PyGame>(m, "Game")
        .def_static("new", [](std::shared_ptr<const CardTables> cs, int n, std::vector<int> dragons,
                              uint64_t seed, bool log, bool advance) {
            auto g = new_game(std::move(cs), n, std::move(dragons), seed, log, advance);
            auto pg = std::make_unique<PyGame>();
            pg->g = std::move(g);
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
            return pg.release();
        }, nb::rv_policy::take_ownership)
        .def("assign", [](PyGame& self, const PyGame& other) {
            *self.g = *other.g;
            self.stopped = other.stopped;
            self.version += 1;
        }, "Take a copy of another game's state (same card tables).")
        .def_prop_ro("version", [](const PyGame& self) { return self.version; })
        .def("apply", [](PyGame& self, int action) {
            if (!self.g->is_legal(action)) {
                playable(self);  // a stopped game has no pending decision: say why
                return false;
            }
            self.version += 1;
            self.g->apply(action);
            return true;
        }, "Take a legal action and advance; False (nothing changed) if it is not legal.")
        .def("run_chance", [](PyGame& self, nb::object action, std::vector<std::pair<int, int>> force,
                              int stop, bool states) {
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
            self.version += 1;
            self.g->run_chance(run, a);
            self.stopped = run.stopped;
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
        }, nb::arg("action").none(), nb::arg("force") = std::vector<std::pair<int, int>>{}, nb::arg("stop") = -1,
           nb::arg("states") = false,
           "Play one move (``action``, or None to advance a game made without advancing) watching its "
           "chance points (engine.hpp): ``force`` lists (point, outcome) to make come out otherwise, "
           "``stop`` the point to stop just before (the game is then left mid-move). Returns "
           "([(kind, seat, range, outcome, state before, state after)], stopped); the states "
           "(fields() dicts) only with states=True.")
        .def_prop_ro("stopped", [](const PyGame& self) { return self.stopped; })
        .def("fields", [](const PyGame& self) { return fields_to_py(self.g->cards(), self.g->state()); },
             "Every field of the state in one dict (GameState's names).")
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
        }, "The trigger of the crash window that opens on stack[fi].")
        // the targeting rules (Game::victims and the rest), for bots through SeatView
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
        }, "Write seat's observation and action mask into the given arrays.")
        // the state, field by field (the Python engine's GameState attributes)
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

    {
        PyObject* type = nb::type<PyGame>().ptr();
        PyObject* d = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(type), &legal_actions_def);
        if (d == nullptr || PyObject_SetAttrString(type, "legal_actions", d) != 0) throw nb::python_error();
        Py_DECREF(d);
    }

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
    m.def("rollout", [](PyGame& pg, int me, int max_turns, double margin_weight, PyRandom* rng) {
        if (me < 0 || me >= pg.g->state().n) throw CoreError("no such seat");
        std::unique_ptr<PyRandom> draw;
        if (rng != nullptr) draw = std::make_unique<PyRandom>(*rng);
        double value;
        int steps;
        {
            nb::gil_scoped_release nogil;
            value = rollout(*pg.g, me, max_turns, margin_weight, draw.get(), steps);
        }
        pg.version += 1;
        if (rng != nullptr) *rng = *draw;  // the generator moves only if the rollout was played
        return nb::make_tuple(value, steps);
    }, nb::arg("game"), nb::arg("me"), nb::arg("max_turns"), nb::arg("margin_weight"),
       nb::arg("rng").none(),
       "Play a search rollout in the core (the GIL released): the heuristic in every seat, or "
       "random players drawing from the core Random ``rng`` in the seats but ``me``; "
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
                         PyRandom* rng) {
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
                values[i] = rollout(scratch, me, max_turns, margin_weight, draw.get(), steps[i]);
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
       nb::arg("rng").none(),
       "For each action, in order: a copy of ``world`` (left as it is) with the action taken, "
       "played on as rollout plays it (random players drawing from the core Random ``rng`` if "
       "given; the GIL released); (the values, the decisions each rollout played).");
    m.def("determinize", [](PyGame& pg, int me, PyRandom& rng) {
        PyRandom draw = rng;  // the generator moves only if the whole sample is dealt
        determinize(*pg.g, me, draw);
        pg.version += 1;
        rng = draw;
    }, nb::arg("game"), nb::arg("me"), nb::arg("rng"),
       "SeatView.determinize, in place on ``game`` (a clone): what seat ``me`` cannot see is "
       "resampled, drawing from the core Random ``rng``.");
}
