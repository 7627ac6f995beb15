"""Agents that play Havok & Hijinks: scripted bots, trained policies and humans.

``make_agent(spec)`` builds one from a spec string: ``random``, ``heuristic``, ``search`` or
``search:BUDGET`` (``search:BUDGET:heuristic-picks`` leaves the picks of
:data:`agents.search.HEURISTIC_PICKS` to the heuristic), ``human``, the path of a model saved
by ``train.py`` (``models/fire.safetensors`` or its ``.json``), or ``pretrained:NAME`` for a model
the package ships (``pretrained:fire``; see :mod:`agents.policy`).
"""

from __future__ import annotations

from .base import Agent
from .runner import play_game

__all__ = ["Agent", "make_agent", "play_game", "AgentSpecError"]


class AgentSpecError(ValueError):
    """An agent spec that names no agent, or a model that cannot be loaded."""


def make_agent(spec: str, **kwargs) -> Agent:
    spec = str(spec).strip()
    name, _, arg = spec.partition(":")
    if name == "random":
        from .random_agent import RandomAgent
        return RandomAgent()
    if name == "heuristic":
        from .heuristic import HeuristicAgent
        return HeuristicAgent()
    if name == "search":
        from .search import SearchAgent
        arg, _, option = arg.partition(":")
        if option not in ("", "heuristic-picks"):
            raise AgentSpecError(f"agent spec {spec!r}: unknown search option {option!r}; "
                                 "the only one is heuristic-picks")
        budget = None
        if arg:
            try:
                budget = int(arg)
            except ValueError:
                raise AgentSpecError(f"agent spec {spec!r}: the search budget must be an integer") from None
            if budget < 1:
                raise AgentSpecError(f"agent spec {spec!r}: the search budget must be at least 1")
        return SearchAgent(simulations=budget, heuristic_picks=bool(option))
    if name == "human":
        from .human import HumanAgent
        return HumanAgent(**kwargs)
    from .policy import PolicyAgent, is_model_spec
    if is_model_spec(spec):  # an old .zip is refused unread, with how to convert it
        return PolicyAgent.load(spec)
    raise AgentSpecError(f"unknown agent {spec!r}; use random, heuristic, search, search:BUDGET, "
                         "search:BUDGET:heuristic-picks, human, pretrained:NAME "
                         "or the path of a saved model (.safetensors)")
