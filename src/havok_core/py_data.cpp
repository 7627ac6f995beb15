// Plain Python data in and out (py_data.hpp).
#include "py_data.hpp"

namespace havok::py {

// -- reading plain Python data ---------------------------------------------------------------

[[noreturn]] void bad(const std::string& what) { throw CoreError(what); }

namespace {

bool has(nb::handle d, const char* key) { return nb::cast<nb::dict>(d).contains(key); }

nb::object get(nb::handle d, const char* key) {
    nb::dict dd = nb::cast<nb::dict>(d);
    if (!dd.contains(key)) bad(std::string("missing '") + key + "'");
    return dd[key];
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

}  // namespace

int to_int(nb::handle h, const char* what) {
    if (!nb::isinstance<nb::int_>(h) || nb::isinstance<nb::bool_>(h))
        bad(std::string(what) + " must be an integer");
    long long v;
    if (!nb::try_cast<long long>(h, v) || v < -(1LL << 30) || v > (1LL << 30))
        bad(std::string(what) + " is out of range");
    return static_cast<int>(v);
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

PyObject* const* items_of(PyObject* seq, Py_ssize_t& len, const char* what) {
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) bad(std::string(what) + " must be a list");
    len = PySequence_Fast_GET_SIZE(seq);
    return PySequence_Fast_ITEMS(seq);
}

// -- card tables -----------------------------------------------------------------------------

namespace {

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

}  // namespace

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

namespace {

nb::object ref_to_py(const CardTables& cs, int ref) {
    if (!cs.is_innate(ref)) return nb::int_(ref);
    int i = ref - cs.n_kinds;
    nb::list out;
    out.append("innate");
    out.append(i / 2);
    out.append(i % 2 ? "crash" : "play");
    return out;
}

nb::object opt_to_py(int v) { return v == NONE ? nb::object(nb::none()) : nb::object(nb::int_(v)); }

}  // namespace

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

namespace {

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

}  // namespace

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

// -- states ------------------------------------------------------------------------------------------

std::array<Cards, MAX_PLAYERS> seat_piles(nb::handle h, int n, const char* what) {
    std::array<Cards, MAX_PLAYERS> out;
    std::vector<nb::handle> items;
    for (nb::handle x : h) items.push_back(x);
    if (static_cast<int>(items.size()) != n) bad(std::string(what) + " needs one list per seat");
    for (int p = 0; p < n; ++p) out[p] = ints(items[p], what);
    return out;
}

std::array<Hand, MAX_PLAYERS> seat_hands(nb::handle h, int n, const char* what) {
    const std::array<Cards, MAX_PLAYERS> piles = seat_piles(h, n, what);
    std::array<Hand, MAX_PLAYERS> out;
    for (int p = 0; p < MAX_PLAYERS; ++p) out[p] = piles[p];
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
    s.hands = seat_hands(get(d, "hands"), n, "hands");
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

}  // namespace havok::py
