"""What a participant's page receives, built only from the seat's :class:`~havok_env.view.SeatView`.

The server holds the whole game, but everything it sends a participant comes from this module,
which reads nothing but the seat view the bots get: the public table, the seat's own hand, its own
pending decision and the public log. Who else is being asked in a crash window, other hands, the
order of the decks and hidden declarations never reach a page (tests compare the payloads of
worlds that differ only in what the seat cannot see). Replays, for the results page, are the one
place where everything is shown, and only for finished games.
"""

from __future__ import annotations

from collections import Counter

from havok_env.decisions import DECISIONS
from havok_env.engine import END_REASONS, Game
from havok_env.view import SeatView


def seat_name(p: int) -> str:
    return f"player_{p}"


def ability(cards, ref):
    """A card kind (event or Hijinks card) or ``["innate", dragon, "play"|"crash"]`` -> Ability."""
    if isinstance(ref, int):
        return cards.event(ref) if cards.is_event(ref) else cards.card(ref)
    d = cards.dragons[ref[1]]
    return d.play if ref[2] == "play" else d.crash


def card(cards, k: int) -> dict:
    """A card as a person reads it."""
    if cards.is_treasure(k):
        return {"name": cards.names[k], "kind": "treasure", "value": cards.value[k],
                "affinity": cards.affinity[k]}
    if cards.is_event(k):
        return {"name": cards.names[k], "kind": "event", "text": cards.texts[k]}
    ab = cards.card(k)
    return {"name": cards.names[k], "kind": ab.kind, "type": ab.type, "affinity": ab.affinity,
            "text": cards.texts[k]}


def _pile(cards, kinds: list[int]) -> list[dict]:
    counts = Counter(kinds)
    return [{**card(cards, k), "count": c} for k, c in sorted(counts.items(), key=lambda kc: cards.names[kc[0]])]


def table(view: SeatView, labels: list[str]) -> dict:
    """The table as ``view``'s seat sees it. ``labels[p]`` says who sits in seat ``p``."""
    cs, me = view.cards, view.seat
    players = []
    for p in range(view.num_players):
        d = view.dragon(p)
        players.append({
            "seat": p, "name": seat_name(p), "who": labels[p], "you": p == me,
            "current": p == view.current_player,
            "dragon": {"name": d.name, "affinity": d.affinity, "ready": view.ready(p),
                       "ready_text": d.ready_text,
                       "play": {"name": d.play.name, "text": d.play.text},
                       "crash": {"name": d.crash.name, "text": d.crash.text}},
            "score": view.score(p),
            "hoard": [{"name": cs.names[k], "value": view.value(p, k), "printed": cs.value[k],
                       "affinity": cs.affinity[k]} for k in sorted(view.hoard(p))],
            "hand_size": view.hand_size(p), "cards_left": view.cards_left(p),
            "innate_used": view.innate_used(p),
        })
    return {
        "turn": view.turn, "current": view.current_player, "you": me,
        "havok_deck": view.havok_size, "hijinks_deck": view.hijinks_size,
        "players": players,
        "hand": [card(cs, k) for k in sorted(view.hand)],
        "discard": _pile(cs, view.discard), "trash": _pile(cs, view.trash),
        "past_events": _pile(cs, view.past_events),
        "canceled": [{"owner": o, "name": cs.names[k]} for o, k in view.canceled],
        "known_top": [card(cs, k) for k in view.known_top],
    }


def trigger_text(view: SeatView, trig: dict) -> tuple[str, str]:
    """What a crash would answer, in words, from the seat's side, and the card's text."""
    cs, me = view.cards, view.seat
    who = lambda p: "You" if p == me else seat_name(p)  # noqa: E731 - a small local helper
    whose = lambda p: "your" if p == me else f"{seat_name(p)}'s"  # noqa: E731 - a small local helper
    on = trig.get("on")
    try:
        if on == "event":
            k = trig["card"]
            return f"{who(trig['flipper'])} flipped the event {cs.names[k]}.", f"{cs.names[k]}: {cs.texts[k]}"
        if on == "treasure":
            k = trig["card"]
            return (f"{cs.names[k]} (printed value {cs.value[k]}) is about to go to "
                    f"{whose(trig['to'])} hoard."), ""
        if on == "use":
            ab = ability(cs, trig["ability"])
            user = trig["user"]
            if trig.get("use") == "crash":
                verb = "crash with" if user == me else "crashes with"
            else:
                verb = "play" if user == me else "plays"
            text = f"{who(user)} {verb} {ab.name}"
            owners, picks = trig.get("owners") or [], trig.get("picks") or []
            named = ", ".join(cs.names[k] for k in picks)
            if owners and picks:
                text += f", targeting {whose(owners[0])} {named}"
                if trig.get("give") is not None:
                    text += f" in exchange for {whose(user)} {cs.names[trig['give']]}"
            elif picks:
                text += f", taking {named}" + (" from the trash heap" if trig.get("type") == "salvage" else "")
            elif owners:
                text += ", targeting " + ", ".join("you" if o == me else seat_name(o) for o in owners)
            return text + ".", f"{ab.name}: {ab.text}"
    except (KeyError, IndexError, TypeError, ValueError):
        pass
    return "A crash window is open.", ""


def question(view: SeatView, purpose: str, ctx: dict) -> tuple[str, str]:
    """The question of a decision, as the terminal player asks it, and the text of the card or
    ability it is about."""
    if purpose == "crash":
        text, detail = trigger_text(view, ctx.get("trigger") or {})
        return f"{text} {DECISIONS['crash'].question}", detail
    q, detail = DECISIONS[purpose].question if purpose in DECISIONS else "Choose:", ""
    if "ability" in ctx and purpose != "main":
        try:
            ab = ability(view.cards, ctx["ability"])
            actor = ctx.get("actor", view.seat)
            by = "Your" if actor == view.seat else f"{seat_name(actor)}'s"
            q, detail = f"{by} {ab.name}: {q[0].lower() + q[1:]}", f"{ab.name}: {ab.text}"
        except (KeyError, IndexError, TypeError, ValueError):
            pass
    if ctx.get("shown"):
        q += " Top of the Havok deck: " + ", ".join(view.cards.names[k] for k in ctx["shown"]) + "."
    return q, detail


def decision(view: SeatView) -> dict | None:
    """The seat's pending decision: the question and exactly its legal choices, labelled."""
    p = view.pending
    if p is None:
        return None
    q, detail = question(view, p["purpose"], p["context"] or {})
    return {"kind": p["kind"], "purpose": p["purpose"], "crash": p["purpose"] == "crash",
            "question": q, "detail": detail,
            "choices": [{"action": int(a), "label": view.action_label(a)} for a in p["choices"]]}


def result(view: SeatView) -> dict | None:
    r = view.result
    if r is None:
        return None
    winners, me = list(r["winners"]), view.seat
    if me in winners:
        verdict = "You win!" if len(winners) == 1 else "A draw: you share the lead."
    else:
        verdict = "You lose."
    return {"winners": winners, "scores": list(r["scores"]),
            "reason": END_REASONS.get(r["reason"], r["reason"]), "verdict": verdict}


def you(view: SeatView, lines: list[str]) -> list[str]:
    me = seat_name(view.seat)
    return [m.replace(me, f"{me} (you)") for m in lines]


def seat_payload(view: SeatView, labels: list[str]) -> dict:
    """Everything the seat's page shows: table, decision, public log and result."""
    return {"table": table(view, labels), "decision": decision(view), "log": you(view, view.log),
            "result": result(view)}


# -- replays (finished games only: every card is shown) ----------------------------------------


def replay_steps(seed: int, options: dict, actions: list[int], labels: list[str]) -> dict:
    """Every decision of a finished game with the whole table: all hands and the decks' order."""
    g = Game(seed=seed, log=True, **options)
    cs = g.cards
    n = g.num_players
    steps, seen = [], 0

    def full_table() -> dict:
        t = table(SeatView(g, 0), labels)
        t["you"] = None
        for p in range(n):
            t["players"][p]["you"] = False
            t["players"][p]["hand"] = [card(cs, k) for k in sorted(SeatView(g, p).hand)]
        snap = g.snapshot()
        t["havok_order"] = snap["havok_deck"]
        t["hijinks_order"] = snap["hijinks_deck"]
        return t

    for i, a in enumerate(list(actions) + [None]):
        log = SeatView(g, 0).log
        step = {"index": i, "table": full_table(), "log": log[seen:], "decision": None}
        seen = len(log)
        if a is None:
            steps.append(step)
            break
        p = g.to_act
        view = SeatView(g, p)
        dec = decision(view)
        dec.update(player=p, name=seat_name(p), who=labels[p],
                   chosen=int(a), chosen_label=view.action_label(a))
        step["decision"] = dec
        steps.append(step)
        g.apply(a)
    r = g.result
    return {"steps": steps, "players": n, "labels": labels,
            "result": None if r is None else {"winners": r["winners"], "scores": r["scores"],
                                              "reason": END_REASONS.get(r["reason"], r["reason"])}}
