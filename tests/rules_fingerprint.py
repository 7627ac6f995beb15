"""The rules fingerprint: 10,000 seeded games, digested, kept as test data.

Every game is played with random legal actions drawn from a generator of its own (seeded from
the game's number, independent of the game's generator), half of them "eager" (rarely ending the
turn or declining a crash, so that crash chains, contests and extra plays come up often). At the
start, after every action and at the end, the digest takes in the snapshot (cards, players, the
pending decision with its labels, the result, the game's generator and, for every fourth game,
the event log), every seat's observation and action mask, and the action taken; the rewards
close it. The snapshot's ``stack`` (the engine's work-in-progress frames) is left out, and so
are the crash triggers' ``frame`` indices into it: they may change form.

``tests/data/rules_fingerprint.json.gz`` keeps a truncated SHA-256 per game and a few whole games
verbatim (every step's action, snapshot and observations), which say where a game goes astray.
``tests/test_rules_fingerprint.py`` checks a subset in the suite; this script checks or rewrites all:

    python tests/rules_fingerprint.py            # check all 10,000 games against the stored digests
    python tests/rules_fingerprint.py --write    # record them anew (only for a deliberate rules change)
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data" / "rules_fingerprint.json.gz"
GAMES = 10_000
VERBATIM = range(12)  # games stored whole: four per player count, half of them eager
DIGEST_BYTES = 16  # per game: a collision needs 2**64 games
FORMAT = 1


def game_setup(i: int) -> dict:
    """Game number ``i``: its player count, seed, options and action generator's seed."""
    return {"num_players": 2 + i % 3, "seed": 1_000 + i, "eager": i % 2 == 1, "log": i % 4 == 0,
            "actions_seed": f"havok fingerprint {i}"}


def canonical_snapshot(snap: dict) -> dict:
    """The snapshot without the engine's work-in-progress frames."""
    snap = dict(snap)
    snap.pop("stack", None)
    pend = snap.get("pending")
    if pend is not None:
        ctx = json.loads(json.dumps(pend["context"]))
        trig = ctx.get("trigger")
        if isinstance(trig, dict):
            trig.pop("frame", None)
        snap["pending"] = {**pend, "context": ctx}
    return snap


def _dumps(x) -> bytes:
    return json.dumps(x, sort_keys=True, separators=(",", ":")).encode()


def play(i: int, verbatim: bool = False):
    """Play game ``i``; returns (digest bytes, the verbatim record or None)."""
    from havok_env import Game
    from havok_env.observe import Observer

    setup = game_setup(i)
    n = setup["num_players"]
    g = Game(n, seed=setup["seed"], log=setup["log"])
    observer = _observer(g.cards, Observer)
    rng = random.Random(setup["actions_seed"])
    h = hashlib.sha256(_dumps(setup))
    steps = []

    def take_in(action):
        snap = canonical_snapshot(g.snapshot())
        h.update(_dumps(snap))
        seen = []
        for seat in range(n):
            obs, mask = observer.observe(g, seat)
            h.update(np.ascontiguousarray(obs, np.float32).tobytes())
            h.update(np.ascontiguousarray(mask, np.int8).tobytes())
            if verbatim:
                nz = np.flatnonzero(obs)
                seen.append({"obs": [[int(j), float(obs[j])] for j in nz],
                             "mask": [int(j) for j in np.flatnonzero(mask)]})
        if verbatim:
            steps.append({"action": action, "snapshot": snap, "seats": seen})

    take_in(None)
    while not g.is_over:
        legal = g.legal_actions()
        if setup["eager"] and g.END in legal and rng.random() < 0.9:
            legal = [a for a in legal if a != g.END and not g.DISCARD <= a < g.SEAT] or legal
        a = rng.choice(legal)
        h.update(_dumps(a))
        g.apply(a)
        take_in(a)
    h.update(_dumps(g.rewards()))
    digest = h.digest()[:DIGEST_BYTES]
    record = {"game": i, "setup": setup, "steps": steps, "rewards": g.rewards(),
              "digest": digest.hex()} if verbatim else None
    return digest, record


_OBSERVERS: dict = {}


def _observer(cards, cls):
    ob = _OBSERVERS.get(id(cards))
    if ob is None or ob.cards is not cards:
        ob = _OBSERVERS[id(cards)] = cls(cards)
    return ob


def load() -> dict:
    with gzip.open(DATA, "rt") as f:
        data = json.load(f)
    if data.get("format") != FORMAT:
        raise SystemExit(f"{DATA}: fingerprint format {data.get('format')!r}, expected {FORMAT}")
    return data


def stored_digest(data: dict, i: int) -> str:
    w = 2 * DIGEST_BYTES
    return data["digests"][i * w:(i + 1) * w]


def write(games: int = GAMES) -> None:
    digests, verbatim = [], []
    for i in range(games):
        d, rec = play(i, verbatim=i in VERBATIM)
        digests.append(d.hex())
        if rec is not None:
            verbatim.append(rec)
    data = {"format": FORMAT, "games": games, "digest_bytes": DIGEST_BYTES,
            "about": "tests/rules_fingerprint.py: truncated SHA-256 per game, then whole games",
            "digests": "".join(digests), "verbatim": verbatim}
    DATA.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(DATA, "wt", compresslevel=9) as f:
        json.dump(data, f, separators=(",", ":"))
    print(f"wrote {DATA} ({DATA.stat().st_size:,} bytes, {games:,} games)")


def check(games: int | None = None) -> int:
    data = load()
    games = data["games"] if games is None else games
    bad = [i for i in range(games) if play(i)[0].hex() != stored_digest(data, i)]
    for i in bad[:20]:
        print(f"game {i} ({game_setup(i)}) differs")
    print(f"{games - len(bad):,} of {games:,} games match the fingerprint")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="record the fingerprint anew")
    ap.add_argument("--games", type=int, default=None, help="check (or write) only the first N")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    if args.write:
        write(GAMES if args.games is None else args.games)
        rc = 0
    else:
        rc = check(args.games)
    print(f"{time.perf_counter() - start:.1f} s")
    return rc


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
