"""Agents that play Havok & Hijinks: scripted bots, trained policies and humans.

``make_agent(spec)`` builds one from a spec string: ``random``, ``heuristic``, ``search`` or
``search:BUDGET`` (``search:BUDGET:heuristic-picks`` leaves the picks of
:data:`agents.search.HEURISTIC_PICKS` to the heuristic; ``search:BUDGET:guide=MODEL`` departs from a
trained policy's choice instead of the heuristic's), ``human``, the path of a model saved
by ``train.py`` (``models/fire.safetensors`` or its ``.json``), ``pretrained:NAME`` for a model
the package ships (``pretrained:fire``; see :mod:`agents.policy`), or ``rllib:CHECKPOINT`` for the
policy of a ``train_rllib.py`` checkpoint.

A new bot is one file with an :class:`Agent` subclass (its ``from_spec`` reads the spec's settings,
if it has any; its ``SPEC_FORMS`` name the specs) and one line in :data:`AGENTS`.
"""

from __future__ import annotations

import importlib

from .base import Agent, AgentSpecError
from .runner import play_game

__all__ = ["Agent", "make_agent", "play_game", "AgentSpecError", "AGENTS"]

# spec name (before the first ":") -> "module:class" of the agent; imported when first asked for
AGENTS = {
    "random": "agents.random_agent:RandomAgent",
    "heuristic": "agents.heuristic:HeuristicAgent",
    "search": "agents.search:SearchAgent",
    "human": "agents.human:HumanAgent",
    "rllib": "agents.rllib_policy:RLlibPolicy",  # a train_rllib.py checkpoint's policy
}


def agent_class(name: str) -> type[Agent]:
    """The agent class registered as ``name`` in :data:`AGENTS`."""
    module, _, cls = AGENTS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def make_agent(spec: str, **kwargs) -> Agent:
    spec = str(spec).strip()
    name, _, arg = spec.partition(":")
    if name in AGENTS:
        return agent_class(name).from_spec(spec, arg, **kwargs)
    from .policy import PolicyAgent, is_model_spec
    if is_model_spec(spec):  # an old .zip is refused unread, with how to convert it
        return PolicyAgent.load(spec)
    forms = [form for n in AGENTS for form in agent_class(n).SPEC_FORMS]
    raise AgentSpecError(f"unknown agent {spec!r}; use {', '.join(forms)}, pretrained:NAME "
                         "or the path of a saved model (.safetensors)")
