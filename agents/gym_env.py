"""The entry point of the Gymnasium id ``havok_env/HavokHijinks-v0`` (registered by ``import havok_env``).

``gymnasium.make("havok_env/HavokHijinks-v0", dragon="fire", opponents=["heuristic"])`` builds
:class:`havok_env.wrappers.SingleAgentEnv` with its opponents given as agent specs (any spec of
:func:`agents.make_agent`: ``random``, ``heuristic``, ``search:40``, a saved model's path...), one
spec for every opponent seat or a list of one per opponent in clockwise order from the learner.
Agent objects and factories are taken as ``SingleAgentEnv`` takes them. Each spec becomes a
picklable factory, so the env also goes into subprocess vector envs; a bad spec fails at
``make`` with :class:`agents.AgentSpecError`.
"""

from __future__ import annotations

from havok_env.wrappers import SingleAgentEnv

from . import make_agent


class SpecFactory:
    """Builds the agent of a spec; picklable, one agent per call (one per opponent seat)."""

    def __init__(self, spec: str):
        self.spec = spec

    def __call__(self):
        return make_agent(self.spec)

    def __repr__(self) -> str:
        return f"SpecFactory({self.spec!r})"


def resolve(opponents):
    """``opponents`` with every spec string replaced by a :class:`SpecFactory`."""
    def one(o):
        return SpecFactory(o) if isinstance(o, str) else o
    if isinstance(opponents, (list, tuple)):
        return [one(o) for o in opponents]
    return one(opponents)


def single_agent_env(dragon="fire", num_players: int = 2, opponents=None, **kwargs) -> SingleAgentEnv:
    return SingleAgentEnv(dragon, num_players, opponents=resolve(opponents), **kwargs)
