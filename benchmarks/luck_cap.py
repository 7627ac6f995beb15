"""How much of the game's luck can any agent overcome against random play?

    python benchmarks/luck_cap.py                        # search (160) vs random, 400 games
    python benchmarks/luck_cap.py --budget 640 --games 1000 --workers 16
    python benchmarks/luck_cap.py --peek all --games 2000   # the same search, seeing everything
    python benchmarks/luck_cap.py --max-turns 0 --z 0 --prior 0 --games 2000  # other search settings
    python benchmarks/luck_cap.py --opponent heuristic --budget 80 --heuristic-picks \
        --seed 4000000000 --games 1000 --peek hands          # train.py's teacher, seeing the hand

The agent is a best response to random play as near as this project can build one: the search
bot (Ruby, 2 players) whose rollouts model its opponent as a uniformly random player
(``SearchAgent(rollout_opponents="random")``), against the random bot, the learner's seat rotated
as in ``train.py``'s evaluation (:mod:`training.winrate`). Game g uses seed ``--seed + g``. It
prints the win rate with a 95% Wilson interval: the reference that train.py's "95% against random"
bar is measured against
(docs/TRAINING.md). ``--opponent heuristic`` plays the heuristic bot instead, with rollouts that
model it as the heuristic (with ``--budget 80 --heuristic-picks``, train.py's distillation teacher).
``--max-turns``, ``--z`` and ``--prior`` change the search's own settings (:class:`SearchAgent`),
to check that the level it reaches is not an artefact of them.

``--peek`` lets the same search cheat, as a reference for what it cannot overcome: ``hands`` fills
its worlds with the opponent's true hand and hidden crash declarations (the decks' order and the
game's generator are still sampled), ``crash`` with the true crash cards of that hand and the
hidden declarations (the rest of the hand is dealt from the unseen cards that are not crash
cards), ``all`` hands it the true game (so every future flip too).
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from agents.search import SearchAgent  # noqa: E402
from havok_env.view import PeekingView  # noqa: E402
from training.parallel import run_script  # noqa: E402
from training.progress import Progress  # noqa: E402
from training.winrate import evaluate, fmt_eval  # noqa: E402


class PeekingSearch(SearchAgent):
    """The search bot with :class:`havok_env.view.PeekingView`'s worlds instead of fair samples:
    the one bot that looks behind its seat's view, on purpose, to measure the luck it removes."""

    def __init__(self, peek: str, **kwargs):
        super().__init__(**kwargs)
        self.peek = peek

    def act(self, observation, action_mask, view) -> int:
        return self.choose(PeekingView.behind(view, self.peek))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--budget", type=int, default=160, help="search budget (default 160)")
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--dragon", default="fire")
    p.add_argument("--seed", type=int, default=3_000_000_000)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--opponent", choices=("random", "heuristic"), default="random",
                   help="the opponent, which the rollouts model too (default random)")
    p.add_argument("--heuristic-picks", action="store_true",
                   help="leave the picks of a treasure or card to the heuristic, as train.py's "
                        "teacher does (search:N:heuristic-picks)")
    search = inspect.signature(SearchAgent).parameters  # the search bot's own settings
    p.add_argument("--max-turns", type=int, default=search["max_turns"].default or 0,
                   help="turns a rollout plays before the margin scores it; 0 plays to the end "
                        "(default %(default)s, the search bot's)")
    p.add_argument("--z", type=float, default=search["z"].default,
                   help="standard errors by which a move must beat the heuristic's to be chosen "
                        "(default %(default)s, the search bot's)")
    p.add_argument("--prior", type=float, default=search["prior"].default,
                   help="mean outcome by which a move must beat the heuristic's (default %(default)s)")
    p.add_argument("--peek", choices=PeekingView.PEEKS,
                   help="let the search see the opponent's hand, the crash cards in it, or the "
                        "whole game (not fair)")
    a = p.parse_args(argv)
    if a.max_turns < 0:
        p.error("--max-turns must be 0 (play to the end) or more")
    kwargs = {"simulations": a.budget, "rollout_opponents": a.opponent,
              "heuristic_picks": a.heuristic_picks, "max_turns": a.max_turns or None,
              "z": a.z, "prior": a.prior}
    agent = PeekingSearch(a.peek, **kwargs) if a.peek else SearchAgent(**kwargs)
    t = time.time()
    with Progress(a.games) as bar:  # on standard error, with the time left
        r = evaluate(agent, a.opponent, a.dragon, 2, a.games, seed=a.seed, workers=a.workers, progress=bar)
    kind = f"search peeking at {a.peek}" if a.peek else "search"
    picks = ":heuristic-picks" if a.heuristic_picks else ""
    turns = f"{a.max_turns}-turn rollouts" if a.max_turns else "rollouts to the end"
    print(f"{kind}:{a.budget}{picks} ({a.opponent} rollout opponents, {turns}, z {a.z:g}, "
          f"prior {a.prior:g}) as {a.dragon} " + fmt_eval(r)
          + f" in {time.time() - t:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main, "luck_cap.py"))
