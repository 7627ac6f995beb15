"""Self-play opponents: a pool of bots and frozen snapshots of the learner, one drawn per game.

``train.py --self-play`` keeps snapshots of the policy it trains; :func:`make_pool` builds the
opponent the learner's environments play against from them and the ``--opponents`` bots.
"""

from __future__ import annotations

import random
from functools import partial

from agents import make_agent
from agents.base import Agent
from agents.policy import PolicyAgent


class MixtureAgent(Agent):
    """Plays each game as one member drawn at random (seeded by ``reset``): an opponent pool.

    ``members`` are agents or zero-argument factories of agents (built on first use).
    """

    name = "mixture"

    def __init__(self, members, weights=None):
        if not members:
            raise ValueError("a MixtureAgent needs at least one member")
        self.members = list(members)
        self.weights = list(weights) if weights is not None else [1.0] * len(self.members)
        self._rng = random.Random(0)
        self.current = None

    def _member(self, i):
        m = self.members[i]
        if not callable(getattr(m, "act", None)):
            m = self.members[i] = m()
        return m

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self._rng.seed(seed)
        i = self._rng.choices(range(len(self.members)), weights=self.weights)[0]
        self.current = self._member(i)
        self.current.reset(seat, num_players, seed=self._rng.getrandbits(63))

    def act(self, observation, action_mask, view) -> int:
        return self.current.act(observation, action_mask, view)

    def close(self) -> None:
        for m in self.members:
            if callable(getattr(m, "close", None)):
                m.close()


def make_pool(bot_specs, snapshot_paths=(), snapshot_share: float = 0.5) -> Agent:
    """A self-play opponent: each game one of the bots or frozen snapshots (``snapshot_share`` of
    the games go to snapshots, split evenly; the rest to the bots). Picklable via ``partial``."""
    bots = [partial(make_agent, s) for s in bot_specs]
    snaps = [partial(PolicyAgent.load, p) for p in snapshot_paths]
    if not snaps:
        return MixtureAgent(bots)
    if not bots:
        return MixtureAgent(snaps)
    w = [(1 - snapshot_share) / len(bots)] * len(bots) + [snapshot_share / len(snaps)] * len(snaps)
    return MixtureAgent(bots + snaps, w)
