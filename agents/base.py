"""The one small interface every agent implements."""

from __future__ import annotations

import numpy as np


class Agent:
    """A player. The runner calls :meth:`reset` before each game and :meth:`act` at each decision.

    ``act`` receives the seat's observation vector and action mask (see ``havok_env.env``) and a
    :class:`havok_env.view.SeatView`: a read-only view limited to what the seat may know, which bots
    that reason about the game or search (``view.determinize``) use instead of the vector. It
    returns one legal action (an int).
    """

    name = "agent"

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        """A new game begins; ``seed`` makes any randomness of the agent reproducible."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view) -> int:
        raise NotImplementedError

    def close(self) -> None:
        """Release resources (models, terminals)."""
