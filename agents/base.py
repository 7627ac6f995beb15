"""The one small interface every agent implements."""

from __future__ import annotations

import numpy as np


class AgentSpecError(ValueError):
    """An agent spec that names no agent, or a model that cannot be loaded."""


class Agent:
    """A player. The runner calls :meth:`reset` before each game and :meth:`act` at each decision.

    ``act`` receives the seat's observation vector and action mask (see ``havok_env.env``) and a
    :class:`havok_env.view.SeatView`: a read-only view limited to what the seat may know, which bots
    that reason about the game or search (``view.determinize``) use instead of the vector. It
    returns one legal action (an int).
    """

    name = "agent"
    # the spec forms that build this agent, for make_agent's message on an unknown spec
    SPEC_FORMS: tuple[str, ...] = ()

    @classmethod
    def from_spec(cls, spec: str, arg: str, **kwargs) -> "Agent":
        """The agent that ``make_agent(spec, **kwargs)`` builds; ``arg`` is what follows the
        spec's first ``:`` (a bot without settings ignores it, and the keyword arguments)."""
        return cls()

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        """A new game begins; ``seed`` makes any randomness of the agent reproducible."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view) -> int:
        raise NotImplementedError

    def close(self) -> None:
        """Release resources (models, terminals)."""
