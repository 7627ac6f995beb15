"""How much of the game's luck can any agent overcome against random play?

    python benchmarks/luck_cap.py                        # search (160) vs random, 400 games
    python benchmarks/luck_cap.py --budget 640 --games 1000 --workers 16
    python benchmarks/luck_cap.py --peek all --games 2000   # the same search, seeing everything

The agent is a best response to random play as near as this project can build one: the search
bot (Ruby, 2 players) whose rollouts model its opponent as a uniformly random player
(``SearchAgent(rollout_opponents="random")``), against the random bot, the learner's seat rotated
as in ``train.py``'s evaluation. Game g uses seed ``--seed + g``. It prints the win rate with a 95%
Wilson interval: the ceiling that train.py's "95% against random" bar is measured against
(docs/TRAINING.md).

``--peek`` lets the same search cheat, as a reference for what it cannot overcome: ``hands`` fills
its worlds with the opponent's true hand and hidden crash declarations (the decks' order and the
game's generator are still sampled), ``all`` hands it the true game (so every future flip too).
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


class PeekingView(SeatView):
    """A seat's view whose sampled worlds keep what ``peek`` names true: it reads the private game
    on purpose. ``"hands"``: the others' hands and hidden declarations (only the decks and the
    generator are resampled); ``"all"``: the whole game."""

    def __init__(self, game, seat: int, peek: str):
        super().__init__(game, seat)
        self.peek = peek

    def determinize(self, rng):
        truth = self._game.clone()
        if self.peek == "all":
            return truth
        g = super().determinize(rng)  # a fair sample, then the true hands and declarations
        s, t = g.s, truth.s
        s.hands, s.stack = t.hands, t.stack
        deck = sorted(t.hijinks)
        rng.shuffle(deck)
        s.hijinks = deck
        return g


class PeekingSearch(SearchAgent):
    """The search bot with :class:`PeekingView`'s worlds instead of fair samples."""

    def __init__(self, peek: str, **kwargs):
        super().__init__(**kwargs)
        self.peek = peek

    def act(self, observation, action_mask, view) -> int:
        return self.choose(PeekingView(view._game, view.seat, self.peek))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--budget", type=int, default=160, help="search budget (default 160)")
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--dragon", default="fire")
    p.add_argument("--seed", type=int, default=3_000_000_000)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--peek", choices=("hands", "all"),
                   help="let the search see the opponent's hand, or the whole game (not fair)")
    a = p.parse_args(argv)
    kwargs = {"simulations": a.budget, "rollout_opponents": "random"}
    agent = PeekingSearch(a.peek, **kwargs) if a.peek else SearchAgent(**kwargs)
    t = time.time()
    r = evaluate(agent, "random", a.dragon, 2, a.games, seed=a.seed, workers=a.workers)
    kind = f"search peeking at {a.peek}" if a.peek else "search"
    print(f"{kind}:{a.budget} (random rollout opponents) as {a.dragon} " + fmt_eval(r)
          + f" in {time.time() - t:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
