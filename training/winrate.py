"""A learner's win rate against one opponent: train.py's evaluation, and the luck-cap benchmark's.

The learner (an agent, or a spec) plays ``games`` games against copies of the opponent, its seat
rotated (game ``g`` is seed ``seed + g`` with the learner in seat ``g % players``, on its dragon),
in worker processes when asked; the figures are the same whatever the number of workers. Beside
the win rate it reports the learner's score (mean reward) raw and luck corrected (docs/luck.md),
and :func:`selection_score` is what train.py picks its best model by.
"""

from __future__ import annotations

from agents import make_agent
from agents.runner import play_game

from .parallel import Pool
from .stats import mean_ci, wilson


def _play_chunk(args) -> tuple[int, int, int, list, list]:
    """Play games ``range(lo, hi)`` of an evaluation; returns (wins, draws, losses, the learner's
    rewards, their luck-corrected values (None where unavailable))."""
    from evaluation.luck import corrected_or_none

    learner, opp_spec, dragon, players, seed, lo, hi = args
    if isinstance(learner, str):
        learner = make_agent(learner)
    opps = [make_agent(opp_spec) for _ in range(players - 1)]
    w = d = lost = 0
    rewards, corrected = [], []
    for g in range(lo, hi):
        seat = g % players  # seats rotated
        table = opps[:seat] + [learner] + opps[seat:]
        dragons = [None] * players
        dragons[seat] = dragon
        rec = play_game(table, seed=seed + g, dragons=dragons)
        specs = [opp_spec] * players
        specs[seat] = "learner"  # its decisions are not corrected; a random opponent's are
        # Valued where each position stands: looking ahead would narrow the interval a little
        # more, but the correction is already most of an evaluation's time (a game plays in a few
        # milliseconds and is corrected in 13-17), and this one runs every --eval-every steps.
        # Only the learner's seat is valued: the same figure as correcting every seat, for less.
        c = corrected_or_none(rec, specs, ahead=False, seats=[seat])
        rewards.append(rec["rewards"][seat])
        corrected.append(None if c is None else c[seat])
        winners = rec["result"]["winners"]
        if winners == [seat]:
            w += 1
        elif seat in winners:
            d += 1
        else:
            lost += 1
    return w, d, lost, rewards, corrected


def evaluate(learner, opp_spec: str, dragon: str, players: int, games: int, seed: int,
             workers: int = 1, progress=None) -> dict:
    """Win rate of ``learner`` (an agent or a spec) against ``opp_spec`` over ``games`` games with
    the learner's seat rotated, and its score (mean reward) raw and luck corrected, with their 95%
    intervals; games run in ``workers`` processes. ``progress(games_done, games)`` is called as
    the games finish, in order (a :class:`training.progress.Progress` shows the time left)."""
    workers = max(1, min(workers, games // 50 or 1))
    # about twenty chunks of at least 50 games, so that progress comes at least every tenth
    size = max(50, -(-games // 20))
    bounds = [*range(0, max(games, 1), size), games]
    jobs = [(learner, opp_spec, dragon, players, seed, lo, hi) for lo, hi in zip(bounds, bounds[1:])]
    parts = []

    def gather(results):
        for done, part in zip(bounds[1:], results):
            parts.append(part)
            if progress:
                progress(done, games)

    if workers == 1:
        gather(map(_play_chunk, jobs))
    else:
        with Pool(workers, context="fork") as pool:
            gather(pool.imap(_play_chunk, jobs))
    w, d, lost = (sum(x[i] for x in parts) for i in range(3))
    rewards = [r for x in parts for r in x[3]]
    corrected = [c for x in parts for c in x[4]]
    lo, hi = wilson(w, games)
    score, score_ci = mean_ci(rewards)
    cor, cor_ci = mean_ci(corrected) if None not in corrected else (None, None)
    return {"opponent": opp_spec, "games": games, "wins": w, "draws": d, "losses": lost,
            "win_rate": w / games, "ci95": [lo, hi], "score": score, "score_ci95": score_ci,
            "corrected_score": cor, "corrected_ci95": cor_ci}


def evaluate_batched(learner, opp_spec: str, dragon: str, players: int, games: int, seed: int) -> dict:
    """:func:`evaluate`'s figures (without the luck correction) from games played in one batch in
    the core (:class:`havok_env.vector.LearnerGames`): ``learner`` is a batched policy
    (``PolicyAgent.act_batch``) and ``opp_spec`` an opponent that plays in a batch (random,
    heuristic or a saved model). Game ``g`` is the first game of lane ``g``, dealt from ``seed``
    with the learner's seat drawn per game, so the same seed plays the same deals every time and
    no game is counted for being short. Thousands of games take seconds."""
    import numpy as np

    from havok_env.vector import LearnerGames

    from .vec_env import batched_opponent
    lanes = LearnerGames(games, players, dragon=dragon, opponents=[batched_opponent(opp_spec)], seed=seed)
    obs, mask = lanes.reset()
    done = np.zeros(games, bool)
    rewards = np.zeros(games)
    while not done.all():
        obs, mask, r, ended = lanes.step(learner(obs, mask))
        first = ended & ~done
        rewards[first] = r[first]
        done |= ended
    w, lost = int((rewards > 0).sum()), int((rewards < 0).sum())
    lo, hi = wilson(w, games)
    score, score_ci = mean_ci(rewards.tolist())
    return {"opponent": opp_spec, "games": games, "wins": w, "draws": games - w - lost, "losses": lost,
            "win_rate": w / games, "ci95": [lo, hi], "score": score, "score_ci95": score_ci,
            "corrected_score": None, "corrected_ci95": None, "batched": True}


def selection_score(results: list[dict]) -> float:
    """What picks the best model: the mean over the opponents of the luck-corrected score (an
    unbiased estimate of the mean reward with less luck in it than the win rate), the raw score
    where a result has no correction (an evaluation made before it existed: the mean reward from
    its wins and losses, the same quantity)."""
    def one(r):
        if r.get("corrected_score") is not None:
            return r["corrected_score"]
        return (r["wins"] - r["losses"]) / r["games"] if r["games"] else 0.0
    return sum(one(r) for r in results) / len(results)


def fmt_eval(r: dict) -> str:
    cor = r.get("corrected_score")
    return (f"vs {r['opponent']:<10} win {100 * r['win_rate']:5.1f}% "
            f"[{100 * r['ci95'][0]:.1f}, {100 * r['ci95'][1]:.1f}] "
            + (f"corrected score {cor:+.3f} +- {(r['corrected_ci95'][1] - r['corrected_ci95'][0]) / 2:.3f} "
               if cor is not None else "")
            + f"({r['wins']:,} wins, {r['draws']:,} draws, {r['games']:,} games)")
