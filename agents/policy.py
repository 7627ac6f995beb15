"""Trained policies as agents: a model saved by ``train.py`` is an agent spec (``models/fire.zip``).

``PolicyAgent.load(path)`` reads a MaskablePPO model and acts with it: by default the argmax of the
masked policy (deterministic); ``deterministic=False`` samples from it, reproducibly from the seed
given to ``reset``. A model trained for another environment version, observation size or action
count is refused with :class:`agents.AgentSpecError` naming both.

For speed the policy network (an MLP) is evaluated with numpy; other network shapes fall back to
torch. :class:`MixtureAgent` draws one of several agents per game (self-play opponent pools).
"""

from __future__ import annotations

import json
import os
import random
import zipfile

import numpy as np

from havok_env.engine import ActionLayout
from havok_env.observe import Observer
from havok_env.wrappers import ENV_VERSION

from .base import Agent

META_KEY = "havok_meta"


def _spec_error(msg: str):
    from . import AgentSpecError
    return AgentSpecError(msg)


def expected_sizes(cards=None) -> tuple[int, int]:
    """(observation size, action count) of this environment."""
    from havok_env.cards import default_cards
    cs = cards or default_cards()
    return Observer(cs).size, ActionLayout(cs).size


def model_path(path: str) -> str:
    """``models/fire``, ``models/fire.zip`` or ``models/fire.json`` -> ``models/fire.zip``."""
    p = str(path)
    if p.endswith(".json"):
        p = p[:-5]
    if not p.endswith(".zip"):
        p += ".zip"
    return p


def read_meta(path: str) -> dict:
    """The metadata ``train.py`` stored in a model zip (``{}`` if it has none); no torch needed."""
    zp = model_path(path)
    try:
        with zipfile.ZipFile(zp) as z:
            data = json.loads(z.read("data"))
    except FileNotFoundError:
        raise _spec_error(f"no saved model at {zp}") from None
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        raise _spec_error(f"{zp} is not a model saved by train.py ({e})") from None
    meta = data.get(META_KEY)
    return meta if isinstance(meta, dict) else {}


def check_compatible(path: str, meta: dict, obs_size: int | None = None,
                     n_actions: int | None = None) -> None:
    """Raise AgentSpecError if the model's environment differs from this one."""
    want_obs, want_act = expected_sizes()
    got_ver = meta.get("env_version")
    got_obs = meta.get("observation_size", obs_size)
    got_act = meta.get("action_size", n_actions)
    if (got_ver is not None and got_ver != ENV_VERSION) or got_obs != want_obs or got_act != want_act:
        raise _spec_error(
            f"{model_path(path)} was trained for {got_ver or 'an unknown environment'} "
            f"(observation {got_obs}, {got_act} actions) but this is {ENV_VERSION} "
            f"(observation {want_obs}, {want_act} actions); retrain it with train.py")


class _NumpyMLP:
    """The masked-policy logits of an SB3 MlpPolicy, evaluated with numpy."""

    def __init__(self, policy):
        import torch.nn as nn
        from stable_baselines3.common.torch_layers import FlattenExtractor
        if not isinstance(policy.features_extractor, FlattenExtractor):
            raise TypeError("not an MLP policy")
        net = policy.mlp_extractor.policy_net
        layers = []
        for m in net:
            if isinstance(m, nn.Linear):
                layers.append(("linear", m.weight.detach().cpu().numpy().T.copy(),
                               m.bias.detach().cpu().numpy().copy()))
            elif isinstance(m, nn.Tanh):
                layers.append(("tanh",))
            elif isinstance(m, nn.ReLU):
                layers.append(("relu",))
            else:
                raise TypeError(f"unsupported layer {m}")
        a = policy.action_net
        layers.append(("linear", a.weight.detach().cpu().numpy().T.copy(),
                       a.bias.detach().cpu().numpy().copy()))
        self.layers = layers

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = obs.astype(np.float32).reshape(-1)
        for layer in self.layers:
            if layer[0] == "linear":
                x = x @ layer[1] + layer[2]
            elif layer[0] == "tanh":
                x = np.tanh(x)
            else:
                x = np.maximum(x, 0.0)
        return x


class PolicyAgent(Agent):
    """Acts with a trained MaskablePPO policy."""

    def __init__(self, model, deterministic: bool = True, name: str = "policy", meta: dict | None = None):
        self.model = model
        self.policy = model.policy
        self.deterministic = deterministic
        self.name = name
        self.meta = meta or {}
        self._rng = random.Random(0)
        try:
            self._fast = _NumpyMLP(self.policy)
        except TypeError:
            self._fast = None

    def __getstate__(self):
        # with the numpy fast path the agent travels (to evaluation workers) without torch objects
        d = dict(self.__dict__)
        if d.get("_fast") is not None:
            d["model"] = d["policy"] = None
        return d

    @classmethod
    def load(cls, path: str, deterministic: bool = True, device: str = "cpu") -> "PolicyAgent":
        zp = model_path(path)
        if not os.path.exists(zp):
            raise _spec_error(f"no saved model at {zp}")
        meta = read_meta(zp)
        if meta:
            check_compatible(zp, meta)
        try:
            from sb3_contrib import MaskablePPO
        except ImportError:
            raise _spec_error("loading a model needs sb3-contrib: pip install -e '.[train]'") from None
        try:
            model = MaskablePPO.load(zp, device=device)
        except Exception as e:  # noqa: BLE001 - any failure to load is a bad spec
            raise _spec_error(f"cannot load {zp}: {type(e).__name__}: {e}".splitlines()[0]) from None
        if not meta:
            check_compatible(zp, {}, int(np.prod(model.observation_space.shape)),
                             int(model.action_space.n))
        name = os.path.splitext(os.path.basename(zp))[0]
        return cls(model, deterministic=deterministic, name=name, meta=meta)

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self._rng.seed(seed)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        if self._fast is not None:
            return self._fast.logits(observation)
        import torch
        with torch.no_grad():
            obs_t, _ = self.policy.obs_to_tensor(np.asarray(observation, dtype=np.float32))
            dist = self.policy.get_distribution(obs_t)
            return dist.distribution.logits.cpu().numpy().reshape(-1)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view=None) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        z = self.logits(observation)[legal]
        if self.deterministic:
            return int(legal[int(np.argmax(z))])
        p = np.exp(z - z.max())
        return int(legal[self._rng.choices(range(len(legal)), weights=p.tolist())[0]])


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
    from functools import partial

    from . import make_agent
    bots = [partial(make_agent, s) for s in bot_specs]
    snaps = [partial(PolicyAgent.load, p) for p in snapshot_paths]
    if not snaps:
        return MixtureAgent(bots)
    if not bots:
        return MixtureAgent(snaps)
    w = [(1 - snapshot_share) / len(bots)] * len(bots) + [snapshot_share / len(snaps)] * len(snaps)
    return MixtureAgent(bots + snaps, w)
