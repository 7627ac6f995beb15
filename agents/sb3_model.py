"""MaskablePPO models to and from the project's model format (:mod:`agents.policy`); the train extra.

``save(model, base, record)`` writes the policy's weights (``base.safetensors``) and its record
(``base.json``); with ``optimizer=True`` also the Adam moments (``base.optimizer.safetensors``),
so that ``--resume`` continues with the optimizer where it stopped. ``rebuild(base, env)``
constructs a MaskablePPO from a record's hyperparameters and loads the weights (and the optimizer
state, where saved) into it: nothing is unpickled.
"""

from __future__ import annotations

import math
import os

import numpy as np

from havok_env.files import replaced

from .base import AgentSpecError
from .policy import FORMAT, META_KEYS, expected_tensors, load_model, read_weights, save_model

# the hyperparameters a MaskablePPO is rebuilt from, with their types
PPO_HYPERPARAMETERS = {"learning_rate": float, "n_steps": int, "batch_size": int, "n_epochs": int,
                       "gamma": float, "gae_lambda": float, "clip_range": float, "ent_coef": float,
                       "vf_coef": float}
OPTIMIZER_SUFFIX = ".optimizer"


def network(policy) -> dict:
    """The record's ``network`` of an MlpPolicy (or of an :class:`AsymmetricPolicy`)."""
    arch = policy.net_arch
    pi, vf = (arch["pi"], arch["vf"]) if isinstance(arch, dict) else (arch, arch)
    activation = policy.activation_fn.__name__.lower()
    out = {"pi": [int(n) for n in pi], "vf": [int(n) for n in vf], "activation": activation}
    if getattr(policy, "critic_reads_state", False):
        out["critic"] = "state"
    return out


def _asymmetric_policy_class():
    """:class:`AsymmetricPolicy`, defined on first use (it subclasses sb3-contrib's policy)."""
    global AsymmetricPolicy
    if AsymmetricPolicy is not None:
        return AsymmetricPolicy
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import MlpExtractor
    from torch import nn

    class _Extractor(MlpExtractor):
        """MlpExtractor whose policy net reads only the first ``obs_size`` features."""

        def __init__(self, obs_size, state_size, net_arch, activation_fn, device):
            super().__init__(state_size, net_arch=net_arch, activation_fn=activation_fn, device=device)
            layers, last = [], obs_size
            for n in net_arch["pi"]:
                layers += [nn.Linear(last, n), activation_fn()]
                last = n
            self.policy_net = nn.Sequential(*layers).to(device)
            self.obs_size = obs_size

        def forward(self, features):
            return self.forward_actor(features), self.forward_critic(features)

        def forward_actor(self, features):
            return self.policy_net(features[..., :self.obs_size])

    class _AsymmetricPolicy(MaskableActorCriticPolicy):
        """MaskablePPO's policy with a centralised critic (the PerfectDou recipe): the input is
        the state of :class:`training.vec_env.HavokVecEnv` (``state=True``), every seat's
        observation with the learner's own first; the actor reads only that first
        ``obs_size`` (its own observation: what the seat may know), the critic all of it. The
        saved actor is an ordinary policy (:class:`agents.policy.PolicyAgent`)."""

        critic_reads_state = True

        def __init__(self, *args, obs_size: int, **kwargs):
            self.obs_size = obs_size
            super().__init__(*args, **kwargs)

        def _build_mlp_extractor(self) -> None:
            arch = self.net_arch if isinstance(self.net_arch, dict) else {"pi": self.net_arch, "vf": self.net_arch}
            self.mlp_extractor = _Extractor(self.obs_size, self.features_dim, arch, self.activation_fn, self.device)

    AsymmetricPolicy = _AsymmetricPolicy
    return AsymmetricPolicy


AsymmetricPolicy = None  # the class, once _asymmetric_policy_class() has made it


def policy_spec(network: dict, observation_size: int):
    """(policy class or name, policy_kwargs) for MaskablePPO from a record's ``network``."""
    import torch
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[network["activation"]]
    kwargs = {"net_arch": {"pi": list(network["pi"]), "vf": list(network["vf"])}, "activation_fn": act}
    if network.get("critic") == "state":
        return _asymmetric_policy_class(), {**kwargs, "obs_size": observation_size}
    return "MlpPolicy", kwargs


def tensors(policy) -> dict:
    return {k: v.detach().cpu().numpy() for k, v in policy.state_dict().items()}


def hyperparameters(model) -> dict:
    """The PPO hyperparameters of a MaskablePPO (its schedules' values at the start)."""
    out = {}
    for key, kind in PPO_HYPERPARAMETERS.items():
        v = getattr(model, key)
        out[key] = kind(v(1.0) if callable(v) else v)
    return out


def record(model, meta: dict, **more) -> dict:
    """A model record for ``model``: ``meta`` (the :data:`agents.policy.META_KEYS`), its network,
    ``timesteps``, and ``more`` (``hyperparameters`` default to the model's own)."""
    rec = {"format": FORMAT, **{k: meta[k] for k in META_KEYS}, "network": network(model.policy),
           "timesteps": int(model.num_timesteps), "hyperparameters": hyperparameters(model)}
    rec.update(more)
    return rec


def save(model, base: str, rec: dict, optimizer: bool = False) -> None:
    """Save ``model``'s weights and ``rec``; the Adam state too with ``optimizer``."""
    from safetensors.numpy import save as to_bytes
    save_model(base, tensors(model.policy), rec)
    opt_path = base + OPTIMIZER_SUFFIX + ".safetensors"
    if not optimizer:
        if os.path.exists(opt_path):  # a stale state would not belong to these weights
            os.remove(opt_path)
        return
    opt = model.policy.optimizer
    names = [n for n, _ in model.policy.named_parameters()]
    state = opt.state_dict()["state"]
    out = {}
    for i, name in enumerate(names):
        s = state.get(i)
        if s:
            out["exp_avg." + name] = s["exp_avg"].detach().cpu().numpy()
            out["exp_avg_sq." + name] = s["exp_avg_sq"].detach().cpu().numpy()
            out["step." + name] = np.array([float(s["step"])], np.float32)
    if len(out) != 3 * len(names):  # not stepped yet: a fresh optimizer is the same
        if os.path.exists(opt_path):
            os.remove(opt_path)
        return
    with replaced(opt_path, "wb") as f:
        f.write(to_bytes(out))


def check_hyperparameters(rec: dict, where: str) -> dict:
    """The PPO hyperparameters of a record, checked (AgentSpecError otherwise)."""
    h = rec.get("hyperparameters")
    if not isinstance(h, dict):
        raise AgentSpecError(f"{where} has no hyperparameters to resume from")
    out = {}
    for key, kind in PPO_HYPERPARAMETERS.items():
        v = h.get(key)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
        if kind is int:
            ok = ok and isinstance(v, int) and v >= 1
        if not ok:
            raise AgentSpecError(f"{where}: hyperparameters.{key} must be a "
                                 f"{'positive integer' if kind is int else 'non-negative number'}, not {v!r}")
        out[key] = kind(v)
    if out["n_steps"] < 2 or out["batch_size"] < 2:
        raise AgentSpecError(f"{where}: hyperparameters n_steps and batch_size must be at least 2")
    return out


def rebuild(base: str, env, seed: int = 0, tensorboard_log=None, changes: dict | None = None):
    """(MaskablePPO, record, whether the optimizer state was restored) from a saved model, with the
    PPO hyperparameters in ``changes`` (names of :data:`PPO_HYPERPARAMETERS`) replacing the record's."""
    import torch
    from sb3_contrib import MaskablePPO

    rec, weights = load_model(base)
    hyper = check_hyperparameters(rec, base + ".json")
    unknown = set(changes or {}) - set(PPO_HYPERPARAMETERS)
    if unknown:
        raise ValueError(f"not PPO hyperparameters: {sorted(unknown)}")
    hyper.update(changes or {})
    policy, policy_kwargs = policy_spec(rec["network"], rec["observation_size"])
    model = MaskablePPO(policy, env, **hyper, seed=seed, device="cpu", verbose=0,
                        tensorboard_log=tensorboard_log, policy_kwargs=policy_kwargs)
    model.policy.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()}, strict=True)
    model.num_timesteps = int(rec.get("timesteps", 0))
    restored = False
    opt_base = base + OPTIMIZER_SUFFIX
    if os.path.exists(opt_base + ".safetensors"):
        params = dict(model.policy.named_parameters())
        shapes = expected_tensors(rec)
        want = {}
        for name in params:
            want["exp_avg." + name] = want["exp_avg_sq." + name] = shapes[name]
            want["step." + name] = (1,)
        saved = read_weights(opt_base, rec, expected=want)
        sd = model.policy.optimizer.state_dict()
        sd["state"] = {i: {"step": torch.tensor(float(saved["step." + n][0])),
                           "exp_avg": torch.from_numpy(saved["exp_avg." + n]),
                           "exp_avg_sq": torch.from_numpy(saved["exp_avg_sq." + n])}
                       for i, n in enumerate(params)}
        model.policy.optimizer.load_state_dict(sd)
        restored = True
    return model, rec, restored
