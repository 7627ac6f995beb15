"""Text rendering of a game as one seat sees it (for render_mode="ansi"/"human" and human play)."""

from __future__ import annotations

from collections import Counter

from .constants import WIN_SCORE


def _counted(names: list[str]) -> str:
    if not names:
        return "-"
    c = Counter(names)
    return ", ".join(f"{n} x{k}" if k > 1 else n for n, k in sorted(c.items()))


def table_blocks(game, seat: int | None = None, last_log: int = 8) -> list[tuple[str, list[str]]]:
    """:func:`describe_table`'s lines in named blocks (``"header"``, ``"seat 0"``, ...,
    ``"discard"``, ``"trash"``, ``"past"``, ``"canceled"``, ``"known"``, ``"hand"``, ``"log"``,
    ``"end"``), so that a front end can show just the blocks that changed."""
    s, cs = game.s, game.cards
    if seat is None:
        seat = game.to_act if game.to_act is not None else s.current
    blocks = [("header", [f"Turn {s.turn} - {game.seat_name(s.current)} to play - Havok deck "
                          f"{len(s.havok)}, Hijinks deck {len(s.hijinks)}"])]
    for p in range(s.num_players):
        d = game.dragon(p)
        hoard = ", ".join(f"{cs.names[k]} ({game.value(p, k)})" for k in sorted(s.hoards[p])) or "-"
        state = "ready" if s.ready[p] else "tired"
        used = []
        if s.cards_used[p]:
            used.append(f"{s.cards_used[p]} card(s) used")
        if s.innate_used[p]:
            used.append("innate used")
        if s.restricted[p]:
            used.append("lost in the woods")
        mark = ">" if p == s.current else " "
        blocks.append((f"seat {p}", [f"{mark} {game.seat_name(p)}: {d.name} ({d.affinity}, {state}) "
                                     f"hoard {game.score(p)}/{WIN_SCORE}: {hoard}; {len(s.hands[p])} card(s) in hand"
                                     + (f" [{'; '.join(used)}]" if used else "")]))
    blocks.append(("discard", [f"Discard pile: {_counted([cs.names[k] for k in s.discard])}"]))
    blocks.append(("trash", [f"Trash heap: {_counted([cs.names[k] for k in s.trash])}"]))
    blocks.append(("past", [f"Past events: {_counted([cs.names[k] for k in s.past_events])}"]))
    if s.canceled:
        blocks.append(("canceled", ["Canceled (back at end of turn): " + ", ".join(
            f"{game.seat_name(o)}'s {cs.names[k]}" for o, k in s.canceled)]))
    if s.known[seat]:
        blocks.append(("known", ["You know the top of the Havok deck: "
                                 + ", ".join(cs.names[k] for k in s.known[seat])]))
    hand = [f"{game.seat_name(seat)}'s hand:"]
    for k in sorted(s.hands[seat]):
        card = cs.card(k)
        hand.append(f"  - {card.name} [{card.affinity} {card.kind}, {card.type}]: {cs.texts[k]}")
    if not s.hands[seat]:
        hand.append("  (empty)")
    blocks.append(("hand", hand))
    if s.log and last_log > 0:
        blocks.append(("log", ["Recently:"] + [f"  {m}" for m in s.log[-last_log:]]))
    if s.result is not None:
        r = s.result
        blocks.append(("end", [f"Game over ({r['reason']}): winner(s) "
                               + ", ".join(game.seat_name(p) for p in r["winners"])
                               + f"; scores {r['scores']}"]))
    elif s.pending is not None and s.pending["player"] == seat:
        blocks.append(("end", [f"{game.seat_name(seat)} decides ({s.pending['purpose']}):"]
                       + [f"  [{a}] {game.action_label(a)}" for a in s.pending["choices"]]))
    elif s.pending is not None:
        blocks.append(("end", [f"Waiting for {game.seat_name(s.pending['player'])}."]))
    return blocks


def describe_table(game, seat: int | None = None, last_log: int = 8) -> str:
    """The public table, ``seat``'s hand (default: the seat that must decide) and the decision."""
    return "\n".join(line for _, lines in table_blocks(game, seat, last_log) for line in lines)
