"""Golden value features, to hold the luck correction's encoding fixed (tests/test_luck_features.py).

Seeded games at 2, 3 and 4 players (heuristic and random bots, random seats marked), each traced
as the luck correction traces it, valued where each position stands and looking ahead, with every
outcome of every event: every state the tracer produces (the state after each outcome, each point
on the game's way, the state just after each flip and draw, each decision) and, to reach every
``top_seen`` from 0 to 3, each decision's state again with each other count of seen cards the deck
allows. Per game and mode the sha256 of the rows of :func:`agents.value.features` over those
states (float32 bytes, in order), and one row in full per player count.

``python tests/value_features_golden.py > tests/data/value_features.json`` writes them (the
stored ones were recorded from the Python feature loop before the encoding moved into the core).
"""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np

from agents import make_agent
from agents.runner import play_game
from evaluation import chance
from evaluation.luck import lookahead
from agents.value import features

# (agent specs by seat, seed, dragons)
GAMES = [(("heuristic", "random"), 1, None), (("random", "heuristic"), 2, None),
         (("heuristic", "heuristic"), 3, ["Pearl", "Ruby"]), (("random", "random"), 4, None),
         (("random", "heuristic", "random"), 5, None), (("heuristic",) * 3, 6, None),
         (("heuristic", "random", "heuristic", "random"), 7, None),
         (("random",) * 4, 8, ["moonlight", None, "fire", None]), (("heuristic",) * 4, 9, None)]


def random_seats(specs) -> list[int]:
    return [i for i, s in enumerate(specs) if s == "random"]


def states(specs, seed, dragons, ahead: bool) -> list:
    """Every ``(state, top_seen)`` the tracer produces for one game (see the module docstring)."""
    rec = play_game([make_agent(s) for s in specs], seed=seed, dragons=dragons)
    rec = {k: rec[k] for k in ("seed", "options", "actions")}
    advance = lookahead(list(specs), len(specs)) if ahead else None
    tr = chance.trace(rec, random_seats(specs), check=True, advance=advance)
    out = [a for ev in tr.events for a in ev.after]
    out += tr.points[1:] + list(tr.just_after.values())
    for s, top in tr.decisions:
        out.append((s, top))
        out += [(s, t) for t in range(min(3, len(s.havok)) + 1) if t != top]
    return [a for a in out if isinstance(a, tuple)]


def rows(specs, seed, dragons, ahead: bool) -> np.ndarray:
    return features(states(specs, seed, dragons, ahead), random_seats(specs))


def digest(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x, np.float32).tobytes()).hexdigest()


def main() -> int:
    games, full = [], []
    for i, (specs, seed, dragons) in enumerate(GAMES):
        for ahead in (False, True):
            x = rows(specs, seed, dragons, ahead)
            games.append({"specs": list(specs), "seed": seed, "dragons": dragons, "ahead": ahead,
                          "rows": len(x), "sha256": digest(x)})
            if not ahead and len(specs) != len(GAMES[i - 1][0]):  # a row in full per player count
                r = len(x) // 2
                full.append({"game": len(games) - 1, "row": r, "features": [float(v) for v in x[r]]})
    json.dump({"games": games, "full_rows": full}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
