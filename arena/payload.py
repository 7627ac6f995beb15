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

from havok_env.engine import END_REASONS, Game
from havok_env.render import choice_label, log_with_worth, question
from havok_env.view import SeatView


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
            "seat": p, "name": view.seat_name(p), "who": labels[p], "you": p == me,
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


def decision(view: SeatView) -> dict | None:
    """The seat's pending decision: the question and exactly its legal choices, labelled."""
    p = view.pending
    if p is None:
        return None
    q, detail = question(view, p["purpose"], p["context"] or {})
    return {"kind": p["kind"], "purpose": p["purpose"], "crash": p["purpose"] == "crash",
            "question": q, "detail": detail,
            "choices": [{"action": int(a), "label": choice_label(view, a)} for a in p["choices"]]}


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
    me = view.seat_name(view.seat)
    return [m.replace(me, f"{me} (you)") for m in log_with_worth(view.cards, lines)]


def seat_payload(view: SeatView, labels: list[str]) -> dict:
    """Everything the seat's page shows: table, decision, public log and result."""
    return {"table": table(view, labels), "decision": decision(view), "log": you(view, view.log),
            "result": result(view)}


# -- replays (finished games only: every card is shown) ----------------------------------------


def _full_table(g: Game, labels: list[str]) -> dict:
    """The whole table of a finished game's position: every hand and the decks' order."""
    t = table(SeatView(g, 0), labels)
    t["you"] = None
    for p in range(g.num_players):
        t["players"][p]["you"] = False
        t["players"][p]["hand"] = [card(g.cards, k) for k in sorted(SeatView(g, p).hand)]
    snap = g.snapshot()
    t["havok_order"] = snap["havok_deck"]
    t["hijinks_order"] = snap["hijinks_deck"]
    return t


def replay_steps(seed: int, options: dict, actions: list[int], labels: list[str]) -> dict:
    """Every decision of a finished game with the whole table: all hands and the decks' order."""
    steps, seen = [], 0
    record = {"seed": seed, "options": options, "actions": list(actions)}
    for i, (g, a) in enumerate(Game.positions(record, log=True)):
        log = SeatView(g, 0).log
        step = {"index": i, "table": _full_table(g, labels), "log": log_with_worth(g.cards, log[seen:]),
                "decision": None}
        seen = len(log)
        if a is not None:
            p = g.to_act
            view = SeatView(g, p)
            dec = decision(view)
            dec.update(player=p, name=view.seat_name(p), who=labels[p],
                       chosen=int(a), chosen_label=choice_label(view, a))
            step["decision"] = dec
        steps.append(step)
    r = g.result
    return {"steps": steps, "players": g.num_players, "labels": labels,
            "result": None if r is None else {"winners": r["winners"], "scores": r["scores"],
                                              "reason": END_REASONS.get(r["reason"], r["reason"])}}
