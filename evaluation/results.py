"""A game's result for each seat, scores over many games and OpenSkill ratings: one home for the
tournaments' report, the human ledger's summary and the arena's results.

The reward is the game's own (``Game.rewards()``, from the core): +1 to the sole winner, 0 to
leaders who tie, -1 to everybody else. :func:`reward` gives it from a recorded result (a ledger
line, an arena game) without replaying the game; ``tests/test_evaluate.py`` holds the two equal.
"""

from __future__ import annotations

from training.stats import mean_ci

OUTCOME_REWARD = {"win": 1.0, "draw": 0.0, "loss": -1.0}


def outcome(winners, seat: int) -> str:
    """``"win"`` (the sole winner), ``"draw"`` (a leader tied with another) or ``"loss"``."""
    if seat not in winners:
        return "loss"
    return "win" if len(winners) == 1 else "draw"


def reward(winners, seat: int) -> float:
    """The seat's reward for a game won by ``winners`` (the seats with the best hoard)."""
    return OUTCOME_REWARD[outcome(winners, seat)]


def score_stats(rewards: list, corrected: list) -> dict:
    """The raw score (mean reward: +1 a sole win, 0 a shared win, -1 a loss) and the luck-corrected
    score (evaluation/, docs/luck.md), each with its 95% interval; the corrected ones are None
    when any game lacks its correction."""
    s, ci = mean_ci(rewards)
    out = {"score": s, "score_ci95": ci, "corrected_score": None, "corrected_ci95": None}
    if rewards and all(c is not None for c in corrected):
        out["corrected_score"], out["corrected_ci95"] = mean_ci(corrected)
    return out


def score_text(mean, ci, games: int | None = None) -> str:
    """``+0.123 +- 0.045``, or ``-`` when there is no such score; with ``games`` under 2, the mean
    alone (one game gives no interval, not a zero-width one)."""
    if mean is None:
        return "-"
    if games is not None and games < 2:
        return f"{mean:+.3f} (1 game)" if games == 1 else f"{mean:+.3f}"
    return f"{mean:+.3f} +- {(ci[1] - ci[0]) / 2:.3f}"


def ratings(games, names=()) -> dict:
    """OpenSkill (Plackett-Luce) ratings, updated game by game in the order of ``games``.

    Each game is a list of ``(name, won)``, one per team (a seat, or all the seats of one bot):
    the game's winners rank first, together, and everybody else second (second place is worth
    nothing, as in the game's reward). ``names`` are rated from the start, in their order; a
    name first met in a game joins then. Returns ``{name: openskill rating}``.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    rating = {name: model.rating(name=name) for name in names}
    for teams in games:
        for name, _ in teams:
            if name not in rating:
                rating[name] = model.rating(name=name)
        new = model.rate([[rating[name]] for name, _ in teams],
                         ranks=[1 if won else 2 for _, won in teams])
        for (name, _), (r,) in zip(teams, new):
            rating[name] = r
    return rating


def rating_row(r) -> dict:
    return {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()}
