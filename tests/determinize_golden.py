"""Golden determinizations, to hold ``SeatView.determinize`` to the worlds it has always dealt
(tests/test_view.py): seeded games at 2, 3 and 4 players between heuristic and random bots; at
every seventh decision and every decision inside a crash window or a Tidal Shift, each seat
samples two worlds in a row from one ``random.Random``. Per sample the sha256 of both worlds'
fields and the generator's state after them (a seeded search's every later draw depends on it).

``python tests/determinize_golden.py > tests/data/determinize.json`` writes them (the stored ones
were recorded from the Python implementation before it moved into the core).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys

from agents import make_agent
from havok_env.engine import Game
from havok_env.observe import Observer
from havok_env.view import SeatView

# (agent specs by seat, seed)
GAMES = [(("heuristic", "random"), 11), (("random", "random"), 12), (("heuristic", "heuristic"), 13),
         (("random", "heuristic", "random"), 14), (("heuristic",) * 3, 15), (("random",) * 3, 16),
         (("heuristic", "random", "heuristic", "random"), 17), (("random",) * 4, 18),
         (("heuristic",) * 4, 19)]


def hidden_choices(game) -> bool:
    """Is the game inside a crash window or a Tidal Shift (hidden declarations or choices)?"""
    return any(fr["f"] == "window" or fr.get("o", {}).get("chosen") for fr in game.s.stack)


def samples(specs, seed) -> list[list]:
    """[decision, seat, sha256] for every sample of one game (see the module docstring)."""
    n = len(specs)
    game = Game(n, seed=seed)
    observer = Observer(game.cards)
    bots = [make_agent(s) for s in specs]
    for q, bot in enumerate(bots):
        bot.reset(q, n, seed=seed * 10 + q)
    views = [SeatView(game, q) for q in range(n)]
    out, decision = [], 0
    while not game.is_over:
        if decision % 7 == 0 or hidden_choices(game):
            for q in range(n):
                rng = random.Random(f"{seed}/{decision}/{q}")
                worlds = [views[q].determinize(rng).fields() for _ in range(2)]
                text = json.dumps([worlds, rng.getstate()], sort_keys=True)
                out.append([decision, q, hashlib.sha256(text.encode()).hexdigest()])
        seat = game.to_act
        obs, mask = observer.observe(game, seat)
        game.apply(int(bots[seat].act(obs, mask, views[seat])))
        decision += 1
    return out


def main() -> int:
    games = [{"specs": list(specs), "seed": seed, "samples": samples(specs, seed)} for specs, seed in GAMES]
    json.dump({"games": games}, sys.stdout, indent=0)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
