"""A uniformly random player: the bottom rung of the strength ladder."""

from __future__ import annotations

import random

import numpy as np

from .base import Agent


class RandomAgent(Agent):
    """Picks uniformly among the legal actions, with its own generator seeded by :meth:`reset`.

    It reads only the action mask (never the game), so it cannot peek; with the same seed it makes
    the same choices.
    """

    name = "random"
    SPEC_FORMS = ("random",)

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.rng = random.Random(seed)

    def act(self, observation, action_mask, view=None) -> int:
        legal = np.flatnonzero(np.asarray(action_mask))
        if len(legal) == 0:
            raise ValueError("RandomAgent.act: no legal action in the mask")
        return int(legal[self.rng.randrange(len(legal))])
