"""``rllib:CHECKPOINT``: the policy a ``train_rllib.py`` checkpoint holds, as an agent.

``train_rllib.py`` writes the learner's network into its checkpoint as a model of
:mod:`agents.policy` (``policy.safetensors`` and ``policy.json``), so the agent loads without Ray
or torch and without unpickling anything from RLlib's own files, and plays like a ``train.py``
model (the masked argmax of its policy).
"""

from __future__ import annotations

import os

from .base import Agent, AgentSpecError
from .policy import PolicyAgent


class RLlibPolicy(Agent):
    SPEC_FORMS = ("rllib:CHECKPOINT",)

    @classmethod
    def from_spec(cls, spec: str, arg: str, **kwargs) -> PolicyAgent:
        if not arg:
            raise AgentSpecError(f"agent spec {spec!r}: name the checkpoint directory (rllib:models/rllib)")
        record = os.path.join(arg, "policy.json")
        if not os.path.isfile(record):
            raise AgentSpecError(f"agent spec {spec!r}: {arg} is no checkpoint of train_rllib.py "
                                 f"(it has no policy.json)")
        agent = PolicyAgent.load(record)
        agent.name = f"rllib:{os.path.basename(os.path.normpath(arg))}"
        return agent
