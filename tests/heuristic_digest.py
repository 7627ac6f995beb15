"""A digest of the heuristic bot's decisions, to hold its behaviour fixed (tests/test_heuristic.py).

Three kinds of seeded games at 2, 3 and 4 players, the heuristic's every decision hashed with the
position it was taken in (turn, seat, purpose, choices, and the deciding seat's observation):

* ``hh``: the heuristic in every seat;
* ``hr``: one heuristic against random players, its seat rotated with the game seed;
* ``probe``: random players only, the heuristic of the seat to act asked at every decision (its
  answer recorded, a random action played), which reaches positions heuristic play never does.

``python tests/heuristic_digest.py GAMES`` prints the digests for GAMES games of each kind and
player count (the stored ones in tests/data/heuristic_digest.json were recorded from the Python
implementation before it moved into the core, with 1,000 and with 60 games; the 1,000-game set
again when the heuristic's sums over the unseen Havok cards stopped following their hidden order,
which changed a few rare choices).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys

from agents.heuristic import HeuristicAgent
from havok_env.engine import Game
from havok_env.observe import Observer
from havok_env.view import SeatView

KINDS = ("hh", "hr", "probe")


def play(kind: str, n: int, seed: int, h, observer) -> int:
    """Play one game of ``kind``, feeding every heuristic decision to hash ``h``; decisions made."""
    game = Game(n, seed=seed)
    rng = random.Random(seed)
    views = [SeatView(game, q) for q in range(n)]
    bots = [HeuristicAgent() for _ in range(n)]
    for q, b in enumerate(bots):
        b.reset(q, n, seed)
    hero = seed % n
    made = 0
    while not game.is_over:
        seat = game.to_act
        legal = game.legal_actions()
        asked = kind != "hr" or seat == hero
        choice = bots[seat].choose(views[seat]) if asked else None
        if asked:
            p = game.pending
            obs, _ = observer.observe(game, seat)
            h.update(repr((game.s.turn, seat, p["purpose"], legal, choice)).encode())
            h.update(obs.tobytes())
            made += 1
        if kind == "hh" or kind == "hr" and seat == hero:
            action = choice
        else:
            action = legal[rng.randrange(len(legal))]
        game.apply(action)
    h.update(repr(game.result).encode())
    return made


def digests(games: int, seed0: int = 0) -> dict:
    out = {}
    for kind in KINDS:
        for n in (2, 3, 4):
            h = hashlib.sha256()
            observer = None
            made = 0
            for i in range(games):
                if observer is None:
                    observer = Observer(Game(n, seed=0).cards)
                made += play(kind, n, seed0 + 1000 * n + i, h, observer)
            out[f"{kind}-{n}"] = {"decisions": made, "sha256": h.hexdigest()}
    return out


if __name__ == "__main__":
    print(json.dumps(digests(int(sys.argv[1]) if len(sys.argv) > 1 else 60), indent=1, sort_keys=True))
