"""How much of the game's luck can any agent overcome against random play?

    python benchmarks/luck_cap.py                        # search (160) vs random, 400 games
    python benchmarks/luck_cap.py --budget 640 --games 1000 --workers 16
    python benchmarks/luck_cap.py --omniscient --games 2000   # the same search, seeing everything

The agent is a best response to random play as near as this project can build one: the search
bot (Ruby, 2 players) whose rollouts model its opponent as a uniformly random player
(``SearchAgent(rollout_opponents="random")``), against the random bot, the learner's seat rotated
as in ``train.py``'s evaluation. Game g uses seed ``--seed + g``. It prints the win rate with a 95%
Wilson interval: the ceiling that train.py's "95% against random" bar is measured against
(docs/TRAINING.md).

``--omniscient`` gives the same search every hidden card instead of sampled worlds (the opponent's
hand, the order of both decks, the game's random generator, so every future flip): not a fair
agent, but a reference for how much of what the fair search cannot overcome is hidden information
rather than the luck of the flips.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from agents.search import SearchAgent  # noqa: E402
from havok_env.view import SeatView  # noqa: E402
from train import evaluate, fmt_eval  # noqa: E402


class OmniscientView(SeatView):
    """A seat's view whose "sampled" world is the true game: it reads the private game on purpose."""

    def determinize(self, rng):
        return self._game.clone()


class OmniscientSearch(SearchAgent):
    """The search bot rolling out the true game (:class:`OmniscientView`) instead of sampled worlds."""

    def act(self, observation, action_mask, view) -> int:
        return self.choose(OmniscientView(view._game, view.seat))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--budget", type=int, default=160, help="search budget (default 160)")
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--dragon", default="fire")
    p.add_argument("--seed", type=int, default=3_000_000_000)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--omniscient", action="store_true",
                   help="let the search see every hidden card and the deck order (a reference, not fair)")
    a = p.parse_args(argv)
    agent = (OmniscientSearch if a.omniscient else SearchAgent)(simulations=a.budget,
                                                               rollout_opponents="random")
    t = time.time()
    r = evaluate(agent, "random", a.dragon, 2, a.games, seed=a.seed, workers=a.workers)
    kind = "omniscient search" if a.omniscient else "search"
    print(f"{kind}:{a.budget} (random rollout opponents) as {a.dragon} " + fmt_eval(r)
          + f" in {time.time() - t:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
