"""Fuzz the native core: mutated snapshots and action sequences must never crash the process.

Each round takes a position from a seeded random game, mutates its snapshot (a number, a card
name, a list or a key somewhere in it, the work-in-progress frames included), and restores it
with ``Game.from_snapshot``: that either raises ``SnapshotError`` or gives a game, which is then
played to the end with random actions, illegal ones mixed in (each must raise
``IllegalActionError`` and change nothing; a position that was accepted but cannot go on raises
``SnapshotError``). Any other exception is a bug, and so, worse, is a
crash; run it under the sanitizer build (README, "Sanitizers") to catch memory errors too.

    python benchmarks/fuzz_core.py [--rounds 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from havok_env import Game, IllegalActionError, SnapshotError  # noqa: E402

_ODD_VALUES = [None, True, False, -1, 0, 1, 2, 3, 4, 5, 7, 40, 75, 76, 1000, -(1 << 31), 1 << 31,
               (1 << 64) - 1, 1 << 70, 2.5, "", "x", "Sticky Claws", "Bronze Talon", "Heat Wave",
               "main", "start", "window", "use", "havok", "turn", "crash", "play", [], {},
               [0], [[0, 1]], {"f": "turn", "step": "main"}]


def _paths(x, path=()):
    """Every place in a nested snapshot: (path, value)."""
    yield path, x
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, path + (i,))


def mutate(snap: dict, rng: random.Random) -> dict:
    d = copy.deepcopy(snap)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        places = list(_paths(d))[1:]
        if not places:
            break
        # the frames and the piles are where bugs hide: favour them
        weighted = [p for p in places if p[0] and p[0][0] in ("stack", "players", "in_play")]
        path, value = rng.choice(weighted if weighted and rng.random() < 0.7 else places)
        parent = d
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        r = rng.random()
        if r < 0.15 and isinstance(parent, dict):
            del parent[key]
        elif r < 0.25 and isinstance(parent, list):
            parent.pop(key)
        elif r < 0.35 and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(rng.choice(parent)))
        elif r < 0.6 and isinstance(value, int) and not isinstance(value, bool):
            parent[key] = value + rng.choice((-2, -1, 1, 2, 10, 40))
        else:
            parent[key] = copy.deepcopy(rng.choice(_ODD_VALUES))
    return d


def positions(rng: random.Random, count: int):
    """Snapshots of random positions (every decision of a few random games)."""
    out = []
    while len(out) < count:
        g = Game(rng.choice((2, 3, 4)), seed=rng.getrandbits(32))
        while not g.is_over:
            if rng.random() < 0.3:
                out.append(json.loads(json.dumps(g.snapshot())))
            g.apply(rng.choice(g.legal_actions()))
        out.append(json.loads(json.dumps(g.snapshot())))
    return out


def play_out(g: Game, rng: random.Random, max_steps: int = 400) -> None:
    for _ in range(max_steps):
        if g.is_over:
            return
        if rng.random() < 0.2:
            bad = rng.choice((-1, 76, 10**9, 2**70, 1.5, "1", None, rng.randrange(76)))
            if bad not in g.legal_actions():
                before = g.snapshot()
                try:
                    g.apply(bad)
                except IllegalActionError:
                    pass
                else:
                    raise AssertionError(f"illegal action {bad!r} was accepted")
                assert g.snapshot() == before, "a refused action changed the game"
        try:
            g.apply(rng.choice(g.legal_actions()))
        except SnapshotError:  # the position was accepted but cannot go on: a clear refusal too
            return


def fuzz(rounds: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    pool = positions(rng, 200)
    counts = {"refused": 0, "restored": 0}
    for i in range(rounds):
        d = mutate(rng.choice(pool), rng)
        try:
            g = Game.from_snapshot(d)
        except SnapshotError:
            counts["refused"] += 1
            continue
        counts["restored"] += 1
        play_out(g, rng)
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    counts = fuzz(args.rounds, args.seed)
    print(f"{args.rounds:,} mutated snapshots: {counts['refused']:,} refused with SnapshotError, "
          f"{counts['restored']:,} restored and played out; no crash "
          f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
