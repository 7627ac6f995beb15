"""Text rendering of a game as one seat sees it (for render_mode="ansi"/"human" and human play)."""

from __future__ import annotations

from collections import Counter


def _counted(names: list[str]) -> str:
    if not names:
        return "-"
    c = Counter(names)
    return ", ".join(f"{n} x{k}" if k > 1 else n for n, k in sorted(c.items()))


def describe_table(game, seat: int | None = None, last_log: int = 8) -> str:
    """The public table, ``seat``'s hand (default: the seat that must decide) and the decision."""
    s, cs = game.s, game.cards
    if seat is None:
        seat = game.to_act if game.to_act is not None else s.current
    lines = [f"Turn {s.turn} - {game.seat_name(s.current)} to play - Havok deck {len(s.havok)}, "
             f"Hijinks deck {len(s.hijinks)}"]
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
        lines.append(f"{mark} {game.seat_name(p)}: {d.name} ({d.affinity}, {state}) "
                     f"hoard {game.score(p)}/15: {hoard}; {len(s.hands[p])} card(s) in hand"
                     + (f" [{'; '.join(used)}]" if used else ""))
    lines.append(f"Discard pile: {_counted([cs.names[k] for k in s.discard])}")
    lines.append(f"Trash heap: {_counted([cs.names[k] for k in s.trash])}")
    lines.append(f"Past events: {_counted([cs.names[k] for k in s.past_events])}")
    if s.canceled:
        lines.append("Canceled (back at end of turn): "
                     + ", ".join(f"{game.seat_name(o)}'s {cs.names[k]}" for o, k in s.canceled))
    if s.known[seat]:
        lines.append("You know the top of the Havok deck: "
                     + ", ".join(cs.names[k] for k in s.known[seat]))
    lines.append(f"{game.seat_name(seat)}'s hand:")
    for k in sorted(s.hands[seat]):
        card = cs.card(k)
        lines.append(f"  - {card.name} [{card.affinity} {card.kind}, {card.type}]: {cs.texts[k]}")
    if not s.hands[seat]:
        lines.append("  (empty)")
    if s.log and last_log > 0:
        lines.append("Recently:")
        lines.extend(f"  {m}" for m in (s.log[-last_log:] if last_log > 0 else []))
    if s.result is not None:
        r = s.result
        lines.append(f"Game over ({r['reason']}): winner(s) "
                     + ", ".join(game.seat_name(p) for p in r["winners"]) + f"; scores {r['scores']}")
    elif s.pending is not None and s.pending["player"] == seat:
        lines.append(f"{game.seat_name(seat)} decides ({s.pending['purpose']}):")
        for a in s.pending["choices"]:
            lines.append(f"  [{a}] {game.action_label(a)}")
    elif s.pending is not None:
        lines.append(f"Waiting for {game.seat_name(s.pending['player'])}.")
    return "\n".join(lines)
