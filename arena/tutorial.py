"""The tutorial: one fixed deal against a bot, with a coach who says what each decision is and
suggests the choice that teaches the next step, until the newcomer has flipped, played a card,
used the dragon's innate ability and crashed.

The coach reads only the seat's view (its pending decision, its choices' labels and the public
log), like the rest of the page. The deal (``TUTORIAL`` in ``arena/study.py``) is the first seed
in which following the coach reaches every goal quickly: ``tests/test_arena_study.py`` plays it
through, and ``python -m arena.tutorial`` finds it again if the rules change.
"""

from __future__ import annotations

from havok_env.view import SeatView

GOALS = {
    "flip": "Flip: your turn starts by flipping the top Havok card (the game does it for you).",
    "play": "Play a Hijinks card from your hand.",
    "innate": "Use your dragon's innate play ability.",
    "crash": "Crash: answer another player's move with a crash card or your dragon's innate crash.",
}


def goal_of(label: str) -> str | None:
    """Which goal choosing an action with this label reaches."""
    if label.startswith("play "):
        return "play"
    if label.startswith("use ") and "innate play" in label:
        return "innate"
    if label.startswith("crash with"):
        return "crash"
    return None


def goals_done(view: SeatView, chosen: list[str]) -> dict[str, bool]:
    """Each goal, reached or not, from the log and the labels of the person's own choices."""
    me = f"player_{view.seat} flips"
    done = {g: False for g in GOALS}
    done["flip"] = any(line.startswith(me) for line in view.log)
    for label in chosen:
        g = goal_of(label)
        if g:
            done[g] = True
    return done


def coach(view: SeatView, done: dict[str, bool]) -> dict:
    """What the coach says at the seat's pending decision, and the choice it suggests (or None)."""
    p = view.pending
    if p is None or view.result is not None:
        return {"text": "", "suggest": None}
    labels = {int(a): view.action_label(a) for a in p["choices"]}

    def first(goal: str):
        return next((a for a, lab in labels.items() if goal_of(lab) == goal), None)

    purpose = p["purpose"]
    if purpose == "crash":
        a = first("crash") if not done["crash"] else None
        if a is not None:
            return {"text": "A crash window: another player did something you may answer out of turn. "
                            "Crash now with the highlighted choice (it uses your one Hijinks card "
                            "of this turn).", "suggest": a}
        return {"text": "A crash window: you may answer this move out of turn, or decline. "
                        "Declining is fine here.", "suggest": 0}
    if purpose == "main":
        intro = ("Your turn began with a flip: the top Havok card was turned over (a treasure goes "
                 "to your hoard, an event happens). ")
        for goal, say in (("play", "Now play a Hijinks card: press the highlighted 'play' choice "
                                   "(the card's text is in your hand below)."),
                          ("innate", "Now use your dragon's innate ability: press the highlighted "
                                     "'use' choice (its text is under your dragon).")):
            a = first(goal) if not done[goal] else None
            if a is not None:
                return {"text": intro + say, "suggest": a}
        return {"text": intro + "When you have done what you want this turn, end it.", "suggest": 0}
    return {"text": "This card asks you to choose: each choice names a treasure with its worth or "
                    "a player. Any choice is fine here.", "suggest": None}


def simulate(seed: int, bot: str = "heuristic", seat: int = 0, players: int = 2, limit: int = 60):
    """Follow the coach (the first choice where it suggests none) in the deal ``seed``; returns
    the number of the person's decisions after which every goal was reached, or None."""
    from havok_env.engine import Game

    from .bots import bot_moves

    options = {"num_players": players, "dragons": None}
    g = Game(seed=seed, log=True, **options)
    view = SeatView(g, seat)
    actions: list[int] = []
    chosen: list[str] = []
    for n in range(limit):
        for a in bot_moves(("tutorial", seed), bot, seed, options, seat, actions):
            g.apply(a)
            actions.append(a)
        if g.is_over:
            return None
        c = coach(view, goals_done(view, chosen))
        a = c["suggest"] if c["suggest"] is not None else view.pending["choices"][0]
        chosen.append(view.action_label(a))
        g.apply(a)
        actions.append(a)
        if all(goals_done(view, chosen).values()):
            return n + 1
    return None


if __name__ == "__main__":
    best = min(((simulate(s) or 10**9), s) for s in range(200))
    print(f"seed {best[1]}: every goal after {best[0]} decisions")
