"""A learner's win rate against one opponent: train.py's evaluation, and the luck-cap benchmark's.

The learner (an agent, or a spec) plays ``games`` games against copies of the opponent, its seat
rotated (game ``g`` is seed ``seed + g`` with the learner in seat ``g % players``, on its dragon),
in worker processes when asked; the figures are the same whatever the number of workers.
"""

from __future__ import annotations

from agents import make_agent
from agents.runner import play_game

from .parallel import Pool
from .stats import wilson


def _play_chunk(args) -> tuple[int, int, int]:
    """Play games ``range(lo, hi)`` of an evaluation; returns (wins, draws, losses)."""
    learner, opp_spec, dragon, players, seed, lo, hi = args
    if isinstance(learner, str):
        learner = make_agent(learner)
    opps = [make_agent(opp_spec) for _ in range(players - 1)]
    w = d = lost = 0
    for g in range(lo, hi):
        seat = g % players  # seats rotated
        table = opps[:seat] + [learner] + opps[seat:]
        dragons = [None] * players
        dragons[seat] = dragon
        rec = play_game(table, seed=seed + g, dragons=dragons)
        winners = rec["result"]["winners"]
        if winners == [seat]:
            w += 1
        elif seat in winners:
            d += 1
        else:
            lost += 1
    return w, d, lost


def evaluate(learner, opp_spec: str, dragon: str, players: int, games: int, seed: int,
             workers: int = 1) -> dict:
    """Win rate of ``learner`` (an agent or a spec) against ``opp_spec`` over ``games`` games with
    the learner's seat rotated; games run in ``workers`` processes."""
    workers = max(1, min(workers, games // 50 or 1))
    bounds = [games * i // workers for i in range(workers + 1)]
    jobs = [(learner, opp_spec, dragon, players, seed, bounds[i], bounds[i + 1]) for i in range(workers)]
    if workers == 1:
        parts = [_play_chunk(jobs[0])]
    else:
        with Pool(workers, context="fork") as pool:
            parts = pool.map(_play_chunk, jobs)
    w, d, lost = (sum(x[i] for x in parts) for i in range(3))
    lo, hi = wilson(w, games)
    return {"opponent": opp_spec, "games": games, "wins": w, "draws": d, "losses": lost,
            "win_rate": w / games, "ci95": [lo, hi]}


def fmt_eval(r: dict) -> str:
    return (f"vs {r['opponent']:<10} win {100 * r['win_rate']:5.1f}% "
            f"[{100 * r['ci95'][0]:.1f}, {100 * r['ci95'][1]:.1f}] "
            f"({r['wins']:,} wins, {r['draws']:,} draws, {r['games']:,} games)")
