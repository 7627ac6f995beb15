"""Save and restore at every decision: random games whose every position must survive a snapshot.

    python benchmarks/roundtrip.py                        # 100,000 games at 2, 3 and 4 players
    python benchmarks/roundtrip.py --games 2000 --jobs 2 --first 500000

Game ``i`` is seed ``first + i`` at ``2 + i % 3`` players (those of ``--players``), its choices
drawn from ``random.Random(seed)`` and weighted towards crashes: a seat that may crash does so
nine times in ten, and a main decision plays a card or an ability rather than ending the turn or
discarding four times in five, so that windows with several crashes, contests, canceled cards and
copies of one card both canceled and resolving come up far more often than in uniform play.

At every decision the game's snapshot goes through JSON into ``Game.from_snapshot``, and the
restored game must write the same snapshot and offer the same legal actions. Every tenth decision
the game is also pickled and copied (``copy.deepcopy``), as worker pools and vector envs do. One
restored copy per game, taken at a random decision, plays on beside the game, and the two must
end in the same position. Any other outcome is a failure, printed with its seed, player count and
decision, and fails the run (exit status 1). ``tests/test_benchmarks.py`` runs a sample.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import pickle
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from havok_env import Game  # noqa: E402
from havok_env.constants import MAX_PLAYERS, MIN_PLAYERS  # noqa: E402
from training.parallel import Pool, run_script  # noqa: E402
from training.progress import Progress  # noqa: E402

CRASH_P = 0.9  # a seat that may crash does
PLAY_P = 0.8  # a main decision plays a card or an ability rather than ending or discarding
PICKLE_EVERY = 10
COUNTS = list(range(MIN_PLAYERS, MAX_PLAYERS + 1))


def choose(g: Game, rng: random.Random) -> int:
    """A legal action, weighted towards crashes and plays."""
    legal = g.legal_actions()
    p = g.pending
    keen = CRASH_P if p["kind"] == "crash" else PLAY_P if p["purpose"] == "main" else 0.0
    if keen and rng.random() < keen:
        legal = [a for a in legal if a != g.END and not g.DISCARD <= a < g.SEAT] or legal
    return rng.choice(legal)


def same(a: Game, b: Game, snap: str | None = None) -> str | None:
    """What differs between two games that should be the same (``snap``: ``a``'s snapshot as
    JSON, if at hand), or None."""
    if (snap or json.dumps(a.snapshot())) != json.dumps(b.snapshot()):
        return "the snapshots differ"
    if a.legal_actions() != b.legal_actions():
        return "the legal actions differ"
    return None


def play(seed: int, n: int) -> tuple[int, dict | None]:
    """One game with a round trip at every decision: (decisions, failure or None)."""
    rng = random.Random(seed)
    g = Game(n, seed=seed)
    follower, follow_at = None, seed % 61  # (not from rng: the choices alone draw from it)
    decisions = 0
    while not g.is_over:
        try:
            snap = json.dumps(g.snapshot())
            restored = Game.from_snapshot(json.loads(snap))
            problem = same(g, restored, snap)
            if problem is None and decisions % PICKLE_EVERY == 0:
                problem = same(g, pickle.loads(pickle.dumps(g)), snap) or same(g, copy.deepcopy(g), snap)
        except Exception as e:  # noqa: BLE001 - every failure is reported with its position
            problem = f"{type(e).__name__}: {e}"
        if problem:
            return decisions, {"seed": seed, "players": n, "decision": decisions, "problem": problem}
        if decisions == follow_at:
            follower = restored
        a = choose(g, rng)
        g.apply(a)
        if follower is not None:
            follower.apply(a)
        decisions += 1
    if follower is not None and (problem := same(g, follower)):
        return decisions, {"seed": seed, "players": n, "decision": decisions,
                           "problem": f"a game restored at decision {follow_at} ends otherwise: {problem}"}
    return decisions, None


def _chunk(job: tuple[list[int], list[int]]) -> tuple[int, int, list[dict]]:
    seeds, counts = job
    games = decisions = 0
    failures = []
    for seed, n in zip(seeds, counts):
        d, failure = play(seed, n)
        games += 1
        decisions += d + 1  # the final position is saved too (on the next loop's check)
        if failure:
            failures.append(failure)
    return games, decisions, failures


def run(games: int, first: int = 0, players=COUNTS, jobs: int = 1, chunk: int = 200,
        progress: int = 0) -> dict:
    """Plays ``games`` games; {"games", "decisions", "failures", "seconds"}. With ``progress``, a
    line every that many games (positions and failures so far); without, the games with the time
    left on standard error (:class:`training.progress.Progress`)."""
    seeds = list(range(first, first + games))
    counts = [players[i % len(players)] for i in range(games)]
    work = [(seeds[i:i + chunk], counts[i:i + chunk]) for i in range(0, games, chunk)]
    t = time.perf_counter()
    if jobs <= 1:
        results = map(_chunk, work)
    else:
        pool = Pool(jobs)
        results = pool.imap_unordered(_chunk, work)
    total = {"games": 0, "decisions": 0, "failures": []}
    bar = Progress(games, show=False if progress else None)
    try:
        for g, d, f in results:
            total["games"] += g
            total["decisions"] += d
            total["failures"] += f
            bar.update(g)
            if progress and total["games"] % progress < g:
                print(f"{total['games']:,} games, {total['decisions']:,} positions, "
                      f"{len(total['failures'])} failures, {time.perf_counter() - t:.0f} s", flush=True)
    finally:
        bar.close()
        if jobs > 1:
            pool.close()
    total["seconds"] = time.perf_counter() - t
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100_000, help="games in all (default 100,000)")
    ap.add_argument("--first", type=int, default=0, help="the first game's seed (default 0)")
    ap.add_argument("--players", type=int, nargs="+", default=COUNTS,
                    choices=COUNTS, help="player counts, in turn (default 2 3 4)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--progress", type=int, default=0,
                    help="a line every N games with the positions and failures so far (default: the games "
                         "with the time left on standard error)")
    a = ap.parse_args(argv)
    if a.games < 1 or a.jobs < 1 or a.first < 0:
        ap.error("--games and --jobs must be at least 1, --first at least 0")
    r = run(a.games, a.first, a.players, a.jobs, progress=a.progress)
    for f in r["failures"][:20]:
        print(f"seed {f['seed']}, {f['players']} players, decision {f['decision']}: {f['problem']}")
    rate = r["decisions"] / r["seconds"]
    print(f"{r['games']:,} games, {r['decisions']:,} positions saved and restored, "
          f"{len(r['failures'])} failures; {r['seconds']:.0f} s ({rate:,.0f} round trips/s, "
          f"{a.jobs} job{'s' if a.jobs > 1 else ''})")
    return 1 if r["failures"] else 0


if __name__ == "__main__":
    sys.exit(run_script(main, "roundtrip"))
