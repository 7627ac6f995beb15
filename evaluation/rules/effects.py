"""The effect primitives that card data is written in.

Each primitive is a function ``(game, frame, op) -> DONE | WAIT | CONTINUE``:

* ``frame`` is the engine frame resolving the effect: a card or ability being used (``frame["you"]``
  is its user) or a Havok event (``frame["you"]`` is the dragon it resolves for). Targets chosen so
  far live in ``frame["t"]``, a primitive's scratch space in ``frame["o"]``, and the answer to the
  last question asked in ``frame["a"]``.
* ``op`` is the primitive's entry from the card file, e.g. ``{"op": "steal", "max_value": 3}``.
* A primitive returns ``WAIT`` after asking a player a question (``game.ask``), ``CONTINUE`` after
  pushing a new frame to resolve first, and ``DONE`` when it is finished.

Targeted primitives (``cards.TARGETED_OPS``) split into ``choose`` (pick targets; for a card or
ability this runs before the crash window opens on it) and the effect itself. ``usable`` tells
whether a card may be used at all ("only when a legal target exists").
"""

from __future__ import annotations

from havok_env.cards import TARGETED_OPS

DONE, WAIT, CONTINUE = 0, 1, 2
ANY = 1 << 30  # "any value"


# -- target selection -------------------------------------------------------------------------
#
# The targeting rules, in one place: the effects below ask with them, and bots judge cards with
# them through :class:`havok_env.view.SeatView` (they read only public information: seats, scores,
# hoards, the trash heap).


def victims(g, you: int, actor: int, sel: str) -> list[int]:
    """Seats a primitive may target, for selector ``sel`` (see cards.OP_PARAMS)."""
    n = g.s.num_players
    if sel == "you":
        return [you]
    if sel == "right":
        return [(you - 1) % n]
    opponents = [(actor + i) % n for i in range(1, n)]
    if sel == "richer":
        mine = g.score(actor)
        return [p for p in opponents if g.score(p) > mine]
    if sel == "richest":
        best = max(g.score(p) for p in opponents)
        return [p for p in opponents if g.score(p) == best]
    if sel == "opponent":
        return opponents
    raise ValueError(f"no targeting rule for the victim selector {sel!r}")


def thief(g, you: int, op: dict) -> int:
    """Who takes in a steal: ``you``, or with ``thief = "right"`` the seat to your right."""
    return (you - 1) % g.s.num_players if op.get("thief") == "right" else you


def eligible(g, owner: int, max_value: int, exclude: list[int] = ()) -> list[int]:
    """Distinct treasure kinds in ``owner``'s hoard worth at most ``max_value`` there, ignoring one
    copy for each kind in ``exclude``."""
    hoard = g.s.hoards[owner]
    if exclude:
        hoard = list(hoard)
        for k in exclude:
            if k in hoard:
                hoard.remove(k)
    v = g.values[g.s.dragons[owner]]
    return sorted({k for k in hoard if v[k] <= max_value})


def _has_eligible(g, owner: int, max_value: int) -> bool:
    v = g.values[g.s.dragons[owner]]
    return any(v[k] <= max_value for k in g.s.hoards[owner])


def trade_gives(g, you: int, op: dict) -> list[int]:
    """The kinds ``you`` may give in a trade (all of its hoard, or its lowest with
    ``give = "lowest"``), before ``max_gain`` narrows them to a chosen take."""
    hoard = g.s.hoards[you]
    if not hoard:
        return []
    if op.get("give") == "lowest":
        v = g.values[g.s.dragons[you]]
        low = min([v[k] for k in hoard])
        return sorted({k for k in hoard if v[k] == low})
    return sorted(set(hoard))


def trade_min_give(op: dict, take_value: int) -> int:
    """The least a give must be worth to you for a take worth ``take_value`` to the victim:
    ``max_gain`` caps how much more the take may be worth."""
    return take_value - op.get("max_gain", ANY)


def trade_takes(g, you: int, victim: int, op: dict) -> list[int]:
    """The kinds ``you`` may take from ``victim`` in a trade: some give must be worth enough."""
    if not g.s.hoards[you]:  # nothing to give
        return []
    takes = eligible(g, victim, op.get("max_value", ANY))
    if "max_gain" in op:  # a take's trade_min_give must not exceed the best give
        vy, vv = g.values[g.s.dragons[you]], g.values[g.s.dragons[victim]]
        cap = max([vy[k] for k in trade_gives(g, you, op)]) + op["max_gain"]
        takes = [k for k in takes if vv[k] <= cap]
    return takes


def trade_gives_for(g, you: int, victim: int, take: int, op: dict) -> list[int]:
    """The kinds ``you`` may give for ``take`` from ``victim``."""
    want = trade_min_give(op, g.value(victim, take))
    return [k for k in trade_gives(g, you, op) if g.value(you, k) >= want]


def candidates(g, you: int, op: dict, first: bool = False) -> list[int]:
    """Victim seats that have something this steal/break/trade could take (only the first one
    found if ``first``: usable() needs no more)."""
    name = op["op"]
    trade = name == "trade"
    actor = thief(g, you, op) if name == "steal" else you
    max_value = op.get("max_value", ANY)
    out = []
    for v in victims(g, you, actor, op.get("victim", "opponent")):
        if trade_takes(g, you, v, op) if trade else _has_eligible(g, v, max_value):
            out.append(v)
            if first:
                break
    return out


def salvage_options(g, op: dict) -> list[int]:
    """The kinds a salvage may take from the trash heap: the best printed value with
    ``pick = "best"``, else any worth at most ``max_value``."""
    trash = g.s.trash
    if op.get("pick") == "best":
        best = max((g.cards.value[k] for k in trash), default=-1)
        return sorted({k for k in trash if g.cards.value[k] == best})
    return sorted({k for k in trash if g.cards.value[k] <= op.get("max_value", ANY)})


def redirect_seats(g, flipper: int, op: dict) -> list[int]:
    """Where a redirected event may go: the flipper's left, or with ``to = "choice"`` any other seat."""
    n = g.s.num_players
    if op.get("to") != "choice":
        return [(flipper + 1) % n]
    return [p for p in range(n) if p != flipper]


def tribute_seats(g, you: int) -> tuple[int, int] | None:
    """(giver, taker) of a tribute: the richest and the poorest dragon, ties to the nearest
    clockwise from ``you``; None when all hoards are worth the same."""
    n = g.s.num_players
    order = [(you + i) % n for i in range(n)]
    scores = [g.score(p) for p in range(n)]
    if len(set(scores)) == 1:
        return None
    return (next(p for p in order if scores[p] == max(scores)),
            next(p for p in order if scores[p] == min(scores)))


def pass_seats(g, you: int, op: dict) -> list[int]:
    """The seats that pass a treasure to their left in a pass_left, in turn order from ``you``
    (without ``you`` with ``skip_you``): those with a treasure to pass."""
    s = g.s
    n = s.num_players
    return [(you + i) % n for i in range(n)
            if not (i == 0 and op.get("skip_you")) and s.hoards[(you + i) % n]]


def choose_hoard_target(g, fr: dict, op: dict) -> int:
    """Targets of steal, break and trade: a victim seat, then treasure(s), then (trade) the treasure
    given in exchange. Fills ``fr["t"]`` with victim, picks, actor (and give)."""
    t = fr["t"]
    if t.get("done"):
        return DONE
    a = fr.pop("a", None)
    you = fr["you"]
    name = op["op"]
    actor = thief(g, you, op) if name == "steal" else you
    ctx = {"ability": fr["ability"], "actor": actor}
    if "victim" not in t:
        if a is None:
            cands = candidates(g, you, op)
            if not cands:
                t.update(done=True, victim=None, picks=[], actor=actor)
                return DONE
            return g.ask(actor, [g.seat_action(actor, v) for v in cands],
                         f"{name}_from", ctx)
        t["victim"], t["actor"], t["picks"] = g.seat_from_action(actor, a), actor, []
        a = None
    victim, picks = t["victim"], t["picks"]
    ctx["target"] = victim
    ctx["picks"] = list(picks)
    if name == "trade":
        if not picks:
            if a is None:
                takes = trade_takes(g, you, victim, op)
                return g.ask(actor, [g.treasure_action(k) for k in takes],
                             "trade_take", ctx)
            picks.append(g.treasure_of(a))
            ctx["picks"] = list(picks)
            a = None
        if "give" not in t:
            if a is None:
                gives = trade_gives_for(g, you, victim, picks[0], op)
                return g.ask(actor, [g.treasure_action(k) for k in gives],
                             "trade_give", ctx)
            t["give"] = g.treasure_of(a)
        t["done"] = True
        return DONE
    if a is not None:
        if a == g.END:
            t["done"] = True
            return DONE
        picks.append(g.treasure_of(a))
        ctx["picks"] = list(picks)
    if len(picks) < op.get("count", 1):
        opts = eligible(g, victim, op.get("max_value", ANY), picks)
        if opts:
            choices = [g.treasure_action(k) for k in opts]
            return g.ask(actor, [g.END] + choices if picks else choices,
                         f"{name}_pick", ctx)
    t["done"] = True
    return DONE


def choose_salvage(g, fr: dict, op: dict) -> int:
    t = fr["t"]
    if t.get("done"):
        return DONE
    a = fr.pop("a", None)
    if a is not None:
        t.update(done=True, picks=[g.treasure_of(a)])
        return DONE
    opts = salvage_options(g, op)
    if not opts:
        t.update(done=True, picks=[])
        return DONE
    return g.ask(fr["you"], [g.treasure_action(k) for k in opts],
                 "salvage_pick", {"ability": fr["ability"], "actor": fr["you"]})


def choose_swap(g, fr: dict, op: dict) -> int:
    """Counteroffer: the replacement treasure, any of yours not already targeted."""
    t = fr["t"]
    if t.get("done"):
        return DONE
    a = fr.pop("a", None)
    if a is not None:
        t.update(done=True, swap=g.treasure_of(a))
        return DONE
    you = fr["you"]
    crashed = g.s.stack[fr["crashed"]]["t"]
    opts = sorted(set(g.s.hoards[you]) - set(crashed["picks"]))
    return g.ask(you, [g.treasure_action(k) for k in opts], "swap_pick",
                 {"ability": fr["ability"], "actor": you})


def choose_redirect(g, fr: dict, op: dict) -> int:
    t = fr["t"]
    if t.get("done"):
        return DONE
    seats = redirect_seats(g, g.s.stack[fr["crashed"]]["flipper"], op)
    if op.get("to") != "choice":
        t.update(done=True, seat=seats[0])
        return DONE
    a = fr.pop("a", None)
    you = fr["you"]
    if a is not None:
        t.update(done=True, seat=g.seat_from_action(you, a))
        return DONE
    return g.ask(you, [g.seat_action(you, p) for p in seats], "redirect_to",
                 {"ability": fr["ability"], "actor": you})


# -- primitives ---------------------------------------------------------------------------------


def steal(g, fr, op):
    r = choose_hoard_target(g, fr, op)
    if r != DONE:
        return r
    t = fr["t"]
    for k in t["picks"]:
        if g.move_treasure(t["victim"], k, t["actor"]):
            fr["ok"] = True
    return DONE


def break_(g, fr, op):
    r = choose_hoard_target(g, fr, op)
    if r != DONE:
        return r
    t = fr["t"]
    for k in t["picks"]:
        if k not in g.s.hoards[t["victim"]]:
            continue
        if "divert" in fr:  # Scavenge
            g.move_treasure(t["victim"], k, fr["divert"])
        else:
            g.s.hoards[t["victim"]].remove(k)
            g.s.trash.append(k)
            g.say("{:seat}'s {:card} is broken", t["victim"], k)
            fr["ok"] = True
    return DONE


def trade(g, fr, op):
    r = choose_hoard_target(g, fr, op)
    if r != DONE:
        return r
    t = fr["t"]
    if t["picks"] and t["picks"][0] in g.s.hoards[t["victim"]] and t["give"] in g.s.hoards[t["actor"]]:
        g.move_treasure(t["victim"], t["picks"][0], t["actor"])
        g.move_treasure(t["actor"], t["give"], t["victim"])
        fr["ok"] = True
    return DONE


def salvage(g, fr, op):
    r = choose_salvage(g, fr, op)
    if r != DONE:
        return r
    picks = fr["t"]["picks"]
    if picks and picks[0] in g.s.trash:
        g.s.trash.remove(picks[0])
        g.s.hoards[fr["you"]].append(picks[0])
        g.say("{:seat} takes {:card} from the trash heap", fr["you"], picks[0])
        fr["ok"] = True
    elif not picks and op.get("else_draw"):
        g.draw(fr["you"], op["else_draw"])
    return DONE


def draw(g, fr, op):
    g.draw(fr["you"], op["n"])
    return DONE


def discard_hand(g, fr, op):
    hand = g.s.hands[fr["you"]]
    g.s.discard.extend(hand)
    hand.clear()
    return DONE


def extra_play(g, fr, op):
    g.s.card_limit[fr["you"]] += 1
    return DONE


def tire(g, fr, op):
    who = g.s.stack[fr["crashed"]]["user"] if op.get("who") == "actor" else fr["you"]
    g.s.ready[who] = False
    g.say("{:seat}'s dragon is tired", who)
    return DONE


def ready(g, fr, op):
    g.s.ready[fr["you"]] = True
    g.say("{:seat}'s dragon is ready", fr["you"])
    return DONE


def restrict(g, fr, op):
    g.s.restricted[fr["you"]] = True
    return DONE


def flip(g, fr, op):
    """Flip and resolve the top Havok card (or, with ``choose_from``, flip several and resolve one
    of them, the others going to the bottom)."""
    s, o = g.s, fr["o"]
    if o.get("pushed"):
        return DONE
    a = fr.pop("a", None)
    if "shown" not in o:
        if op.get("optional"):
            if not s.havok:
                return DONE
            if a is None:
                return g.ask(fr["you"], [g.END, g.OPTION], "flip_or_not",
                             {"ability": fr["ability"], "actor": fr["you"]})
            if a == g.END:
                return DONE
            a = None
        if not s.havok:
            g.end("havok_empty")
            return CONTINUE
        o["shown"] = [g.flip_top() for _ in range(min(op.get("choose_from", 1), len(s.havok)))]
    shown = o["shown"]
    if len(set(shown)) > 1 and a is None:  # copies of one card are one choice
        options = [g.OPTION + i for i, k in enumerate(shown) if k not in shown[:i]]
        return g.ask(fr["you"], options, "resolve_which",
                     {"ability": fr["ability"], "actor": fr["you"], "shown": shown})
    pick = shown[a - g.OPTION] if a is not None else shown[0]
    rest = list(shown)
    rest.remove(pick)
    for k in rest:
        s.in_play.remove(k)
        s.havok.append(k)
        g.say("{:card} goes to the bottom of the Havok deck", k)
    o["pushed"] = True
    g.push_havok(pick, fr["you"])
    return CONTINUE


def foresight(g, fr, op):
    s, you = g.s, fr["you"]
    a = fr.pop("a", None)
    top = s.havok[: op["n"]]
    if a is None:
        s.known[you] = list(top)
        return g.ask(you, [g.END] + [g.OPTION + i for i in range(len(top))], "bottom",
                     {"ability": fr["ability"], "actor": you, "shown": list(top)})
    if a != g.END and len(s.havok) > 1:
        s.havok.append(s.havok.pop(a - g.OPTION))
        for p in range(s.num_players):  # the others saw a card go to the bottom, not which
            if p != you:
                s.known[p] = []
        s.known[you] = [k for i, k in enumerate(top) if i != a - g.OPTION]
        g.say("{:seat} puts one of the top Havok cards on the bottom", you)
    return DONE


def recall(g, fr, op):
    s, you = g.s, fr["you"]
    a = fr.pop("a", None)
    if a is None:
        kinds = sorted(set(s.discard))
        if not kinds:
            return DONE
        return g.ask(you, [g.card_action(k) for k in kinds], "recall_pick",
                     {"ability": fr["ability"], "actor": you})
    k = g.card_of(a)
    s.discard.remove(k)
    s.hands[you].append(k)
    g.say("{:seat} takes {:card} from the discard pile", you, k)
    return DONE


def pass_left(g, fr, op):
    """Every dragon (in turn order from you) chooses a treasure; then all pass at once."""
    s, o, you = g.s, fr["o"], fr["you"]
    n = s.num_players
    chosen = o.setdefault("chosen", [])  # [seat, kind], hidden until everyone has chosen
    a = fr.pop("a", None)
    if a is not None:
        chosen.append([o["asking"], g.treasure_of(a)])
    done = {p for p, _ in chosen}
    for p in pass_seats(g, you, op):
        if p not in done:
            o["asking"] = p
            return g.ask(p, [g.treasure_action(k) for k in sorted(set(s.hoards[p]))],
                         "pass_pick", {"ability": fr["ability"], "actor": you})
    for p, k in chosen:
        s.hoards[p].remove(k)
    for p, k in chosen:
        s.hoards[(p + 1) % n].append(k)
        g.say("{:seat} passes {:card} to {:seat}", p, k, (p + 1) % n)
    return DONE


def break_lowest_all(g, fr, op):
    s, o, you = g.s, fr["o"], fr["you"]
    n = s.num_players
    a = fr.pop("a", None)
    i = o.get("i", 0)
    while i < n:
        p = (you + i) % n
        if s.hoards[p]:
            low = min(g.value(p, k) for k in s.hoards[p])
            lowest = sorted({k for k in s.hoards[p] if g.value(p, k) == low})
            if a is None and len(lowest) > 1:
                o["i"] = i
                return g.ask(p, [g.treasure_action(k) for k in lowest],
                             "raid_pick", {"ability": fr["ability"], "actor": you})
            k = g.treasure_of(a) if a is not None else lowest[0]
            a = None
            s.hoards[p].remove(k)
            s.trash.append(k)
            g.say("{:seat}'s {:card} is broken", p, k)
        i += 1
    return DONE


def tribute(g, fr, op):
    s = g.s
    seats = tribute_seats(g, fr["you"])
    if seats is None:
        return DONE
    giver, taker = seats
    a = fr.pop("a", None)
    if a is None:
        return g.ask(giver, [g.treasure_action(k) for k in sorted(set(s.hoards[giver]))], "tribute_pick",
                     {"ability": fr["ability"], "actor": fr["you"], "target": taker})
    g.move_treasure(giver, g.treasure_of(a), taker)
    return DONE


def treasure_map(g, fr, op):
    s = g.s
    revealed = []
    found = None
    while s.havok:
        k = g.flip_top()
        g.say("Treasure Map reveals {:card}", k)
        if g.cards.is_treasure(k):
            found = k
            break
        revealed.append(k)
    for k in revealed:
        s.in_play.remove(k)
        s.havok.append(k)
    if found is not None:
        s.in_play.remove(found)
        s.hoards[fr["you"]].append(found)
    return DONE


# -- crash effects: they act on the frame being crashed ------------------------------------------


def cancel(g, fr, op):
    target = g.s.stack[fr["crashed"]]
    target["canceled"] = True
    if op.get("to_discard"):
        target["to_discard"] = True
    fr["ok"] = True
    return DONE


def nullify(g, fr, op):
    g.s.stack[fr["crashed"]]["nullified"] = True
    fr["ok"] = True
    return DONE


def redirect_event(g, fr, op):
    choose_redirect(g, fr, op)
    g.s.stack[fr["crashed"]]["you"] = fr["t"]["seat"]
    g.say("the event now resolves for {:seat}", fr["t"]["seat"])
    fr["ok"] = True
    return DONE


def redirect_treasure(g, fr, op):
    g.s.stack[fr["crashed"]]["to"] = fr["you"]
    fr["ok"] = True
    return DONE


def divert_break(g, fr, op):
    g.s.stack[fr["crashed"]]["divert"] = fr["you"]
    fr["ok"] = True
    return DONE


def swap_target(g, fr, op):
    r = choose_swap(g, fr, op)
    if r != DONE:
        return r
    you = fr["you"]
    picks = g.s.stack[fr["crashed"]]["t"]["picks"]
    mine = [i for i, k in enumerate(picks) if k in g.s.hoards[you]]
    if mine:
        i = max(mine, key=lambda i: g.value(you, picks[i]))
        picks[i] = fr["t"]["swap"]
        fr["ok"] = True
    return DONE


PRIMITIVES = {
    "steal": steal, "break": break_, "trade": trade, "salvage": salvage, "draw": draw,
    "discard_hand": discard_hand, "extra_play": extra_play, "tire": tire, "ready": ready,
    "restrict": restrict, "flip": flip, "foresight": foresight, "recall": recall,
    "pass_left": pass_left, "break_lowest_all": break_lowest_all, "tribute": tribute,
    "treasure_map": treasure_map, "cancel": cancel, "nullify": nullify,
    "redirect_event": redirect_event, "redirect_treasure": redirect_treasure,
    "divert_break": divert_break, "swap_target": swap_target,
}

CHOOSERS = {
    "steal": choose_hoard_target, "break": choose_hoard_target, "trade": choose_hoard_target,
    "salvage": choose_salvage, "swap_target": choose_swap, "redirect_event": choose_redirect,
}
assert set(CHOOSERS) == TARGETED_OPS


# The primitives that usable() may refuse; every other primitive can always be used.
CONDITIONAL = frozenset({"steal", "break", "trade", "salvage", "flip", "foresight", "recall"})


def usable(g, you: int, op: dict) -> bool:
    """May a card or ability with this primitive be used now (a legal target exists)?"""
    name = op["op"]
    if name in ("steal", "break", "trade"):
        return bool(candidates(g, you, op, first=True))
    if name == "salvage":
        return any(g.cards.value[k] <= op.get("max_value", ANY) for k in g.s.trash)
    if name in ("flip", "foresight"):
        return op.get("optional", False) or bool(g.s.havok)
    if name == "recall":
        return bool(g.s.discard)
    return True


def has_effect(g, you: int, op: dict) -> bool:
    """Would this primitive change anything if it resolved for ``you`` now?

    Ruling 24: a crash that nullifies or redirects an event may be used only when that changes
    something, so an event that would do nothing cannot be crashed. The other crash primitives
    (cancel, divert_break, swap_target, redirect_treasure) always change something once their
    trigger holds, and the primitives of cards and abilities are covered by ``usable``.
    """
    s = g.s
    name = op["op"]
    if name in ("steal", "break", "trade"):
        return bool(candidates(g, you, op, first=True))
    if name == "draw":
        return bool(s.hijinks or s.discard)
    if name == "salvage":
        return usable(g, you, op) or bool(op.get("else_draw") and (s.hijinks or s.discard))
    if name == "discard_hand":
        return bool(s.hands[you])
    if name == "tire":
        return s.ready[you]
    if name == "ready":
        return not s.ready[you]
    if name == "restrict":
        return not s.restricted[you]
    if name == "break_lowest_all":
        return any(s.hoards)
    if name == "pass_left":
        return bool(pass_seats(g, you, op))
    if name == "tribute":
        return tribute_seats(g, you) is not None
    if name == "treasure_map":  # revealed events go back to the bottom in the order they came
        return any(g.cards.is_treasure(k) for k in s.havok)
    if name in ("foresight", "recall"):
        return usable(g, you, op)
    return True  # flip (a mandatory flip on an empty deck ends the game), extra_play, crash effects
