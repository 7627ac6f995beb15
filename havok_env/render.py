"""Text rendering of a game as one seat sees it (for render_mode="ansi"/"human" and human play).

The renderer reads the game only through a :class:`havok_env.view.SeatView`, so what it shows is
what that seat may know. It is also the one home of the words a person reads about a decision
(:func:`question`, :func:`trigger_text`), for the terminal player (``agents/human.py``) and the
arena's pages (``arena/payload.py``) alike."""

from __future__ import annotations

import re
from collections import Counter

from .constants import WIN_SCORE
from .decisions import DECISIONS


def _counted(names: list[str]) -> str:
    if not names:
        return "-"
    c = Counter(names)
    return ", ".join(f"{n} x{k}" if k > 1 else n for n, k in sorted(c.items()))


def table_blocks(view, last_log: int = 8) -> list[tuple[str, list[str]]]:
    """:func:`describe_table`'s lines in named blocks (``"header"``, ``"seat 0"``, ...,
    ``"discard"``, ``"trash"``, ``"past"``, ``"canceled"``, ``"known"``, ``"hand"``, ``"log"``,
    ``"end"``), so that a front end can show just the blocks that changed."""
    cs, seat, name = view.cards, view.seat, view.seat_name
    current = view.current_player
    blocks = [("header", [f"Turn {view.turn} - {name(current)} to play - Havok deck "
                          f"{view.havok_size}, Hijinks deck {view.hijinks_size}"])]
    for p in range(view.num_players):
        d = view.dragon(p)
        hoard = ", ".join(f"{cs.names[k]} ({view.value(p, k)})" for k in sorted(view.hoard(p))) or "-"
        state = "ready" if view.ready(p) else "tired"
        used = []
        if view.cards_used(p):
            used.append(f"{view.cards_used(p)} card(s) used")
        if view.innate_used(p):
            used.append("innate used")
        if view.restricted(p):
            used.append("lost in the woods")
        mark = ">" if p == current else " "
        blocks.append((f"seat {p}", [f"{mark} {name(p)}: {d.name} ({d.affinity}, {state}) "
                                     f"hoard {view.score(p)}/{WIN_SCORE}: {hoard}; {view.hand_size(p)} card(s) in hand"
                                     + (f" [{'; '.join(used)}]" if used else "")]))
    blocks.append(("discard", [f"Discard pile: {_counted([cs.names[k] for k in view.discard])}"]))
    blocks.append(("trash", [f"Trash heap: {_counted([cs.names[k] for k in view.trash])}"]))
    blocks.append(("past", [f"Past events: {_counted([cs.names[k] for k in view.past_events])}"]))
    if view.canceled:
        blocks.append(("canceled", ["Canceled (back at end of turn): " + ", ".join(
            f"{name(o)}'s {cs.names[k]}" for o, k in view.canceled)]))
    if view.known_top:
        blocks.append(("known", ["You know the top of the Havok deck: "
                                 + ", ".join(cs.names[k] for k in view.known_top)]))
    hand = [f"{name(seat)}'s hand:"]
    for k in sorted(view.hand):
        card = cs.card(k)
        hand.append(f"  - {card.name} [{card.affinity} {card.kind}, {card.type}]: {cs.texts[k]}")
    if not view.hand:
        hand.append("  (empty)")
    blocks.append(("hand", hand))
    log = view.log
    if log and last_log > 0:
        blocks.append(("log", ["Recently:"] + [f"  {m}" for m in log[-last_log:]]))
    pending = view.pending
    if view.result is not None:
        r = view.result
        blocks.append(("end", [f"Game over ({r['reason']}): winner(s) "
                               + ", ".join(name(p) for p in r["winners"])
                               + f"; scores {r['scores']}"]))
    elif pending is not None:
        blocks.append(("end", [f"{name(seat)} decides ({pending['purpose']}):"]
                       + [f"  [{a}] {view.action_label(a)}" for a in pending["choices"]]))
    elif view.to_act is not None:
        blocks.append(("end", [f"Waiting for {name(view.to_act)}."]))
    return blocks


def describe_table(view, last_log: int = 8) -> str:
    """The table as ``view``'s seat sees it (a :class:`havok_env.view.SeatView`): the public table,
    the seat's hand and knowledge, and its decision if it has one."""
    return "\n".join(line for _, lines in table_blocks(view, last_log) for line in lines)


def trigger_text(view, trig: dict) -> tuple[str, str]:
    """What a crash would answer, in words, from ``view``'s seat, and the text of the card or
    ability it is about (``""`` if none)."""
    cs, me = view.cards, view.seat
    who = lambda p: "You" if p == me else view.seat_name(p)  # noqa: E731 - a small local helper
    whose = lambda p: "your" if p == me else f"{view.seat_name(p)}'s"  # noqa: E731 - a small local helper
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
            ab = view.ability(trig["ability"])
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
                text += ", targeting " + ", ".join("you" if o == me else view.seat_name(o) for o in owners)
            return text + ".", f"{ab.name}: {ab.text}"
    except (KeyError, IndexError, TypeError, ValueError):
        pass
    return "A crash window is open.", ""


def question(view, purpose: str, ctx: dict) -> tuple[str, str]:
    """The question of a decision of ``view``'s seat, in words (the decision's own from
    ``havok_env/decisions.py``, said of the ability or crash it is about), and the text of the card
    or ability it is about (``""`` if none)."""
    if purpose == "crash":
        text, detail = trigger_text(view, ctx.get("trigger") or {})
        return f"{text} {DECISIONS['crash'].question}", detail
    q, detail = DECISIONS[purpose].question if purpose in DECISIONS else "Choose:", ""
    if "ability" in ctx and purpose != "main":
        try:
            ab = view.ability(ctx["ability"])
            actor = ctx.get("actor", view.seat)
            by = "Your" if actor == view.seat else f"{view.seat_name(actor)}'s"
            q, detail = f"{by} {ab.name}: {q[0].lower() + q[1:]}", f"{ab.name}: {ab.text}"
        except (KeyError, IndexError, TypeError, ValueError):
            pass
    if ctx.get("shown"):
        q += " Top of the Havok deck: " + ", ".join(card_name(view.cards, k) for k in ctx["shown"]) + "."
    return q, detail


def choice_label(view, action: int) -> str:
    """One of the seat's pending choices as a person reads it: its ``action_label`` and, where
    it names a treasure, the treasure's worth where it lies (in its owner's hoard, or its printed
    value in the trash heap), which is what a card's limits ("worth 3 or less") are about."""
    label = view.action_label(action)
    p = view.pending
    if p is None:
        return label
    words, ctx, cs = DECISIONS.get(p["purpose"]), p["context"] or {}, view.cards
    if view.is_option(action):  # an option about a card shown from the Havok deck
        shown, i = ctx.get("shown") or [], view.option_of(action)
        if words is not None and "{card}" in (words.option or "") and i < len(shown) \
                and cs.is_treasure(shown[i]):
            return f"{label} (worth {cs.value[shown[i]]})"
        return label
    if not view.is_treasure(action):
        return label
    k = view.treasure_of(action)
    owner = view.seat if words is not None and words.own_hoard else ctx.get("target")
    worth = cs.value[k] if owner is None else view.value(owner, k)
    return f"{label} (worth {worth})"


def card_name(cards, k: int) -> str:
    """A card's name, with its printed value if it is a treasure."""
    return f"{cards.names[k]} (worth {cards.value[k]})" if cards.is_treasure(k) else cards.names[k]


_WORTH: dict[int, tuple] = {}  # id(cards) -> (cards, pattern, value): one pattern per card set


def log_with_worth(cards, lines: list[str]) -> list[str]:
    """Log lines with each treasure they name followed by its printed value, as a person needs it
    to judge a card's limits ("worth 3 or less"); the longest names first, so that no name is
    taken for a part of another."""
    made = _WORTH.get(id(cards))
    if made is None or made[0] is not cards:
        value = {cards.names[k]: cards.value[k] for k in range(len(cards.names)) if cards.is_treasure(k)}
        names = sorted(value, key=len, reverse=True)
        pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b(?! \(worth)") if names else None
        made = _WORTH[id(cards)] = (cards, pattern, value)
    _, pattern, value = made
    if pattern is None:
        return list(lines)
    return [pattern.sub(lambda m: f"{m.group(1)} (worth {value[m.group(1)]})", line) for line in lines]
