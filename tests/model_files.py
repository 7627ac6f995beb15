"""Small model files for the tests: weights written directly (no training, no torch), and hostile
files whose unpickling would write a marker file."""

from __future__ import annotations

import base64
import json
import pickle
import zipfile

import numpy as np

from agents.policy import FORMAT, expected_sizes, expected_tensors, save_model
from havok_env.version import ENV_VERSION

PPO = {"learning_rate": 3e-4, "n_steps": 64, "batch_size": 32, "n_epochs": 1, "gamma": 0.99,
       "gae_lambda": 0.95, "clip_range": 0.2, "ent_coef": 0.0, "vf_coef": 0.5}


def record(**over) -> dict:
    obs, act = expected_sizes()
    rec = {"format": FORMAT, "env_version": ENV_VERSION, "dragon": "Ruby", "affinity": "fire",
           "players": 2, "observation_size": obs, "action_size": act,
           "network": {"pi": [8], "vf": [8], "activation": "tanh"}, "timesteps": 0,
           "hyperparameters": dict(PPO)}
    rec.update(over)
    return rec


def weights(rec: dict, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {k: rng.normal(0, 0.3, shape).astype(np.float32) for k, shape in expected_tensors(rec).items()}


def write_model(base, seed: int = 0, **over) -> str:
    """A random network of the right shapes, saved as a model at ``base``; returns ``base``."""
    rec = record(**over)
    save_model(str(base), weights(rec, seed), rec)
    return str(base)


def payload(marker) -> bytes:
    """A pickle whose unpickling writes ``marker``."""
    class Hostile:
        def __reduce__(self):
            return exec, (f"open({str(marker)!r}, 'w').write('code ran')",)
    return pickle.dumps(Hostile(), protocol=2)


def hostile_zip(path, marker) -> str:
    """An SB3-like model zip: every ``:serialized:`` entry and the .pth files are the payload, and
    the metadata train.py stored is copied from a genuine model."""
    p = base64.b64encode(payload(marker)).decode()
    rec = record()
    meta = {k: rec[k] for k in ("env_version", "dragon", "affinity", "players", "observation_size",
                                "action_size")}
    data = {"policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": p},
            "observation_space": {":type:": "<class 'gymnasium.spaces.box.Box'>", ":serialized:": p},
            "action_space": {":type:": "<class 'gymnasium.spaces.discrete.Discrete'>", ":serialized:": p},
            "havok_meta": meta}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("policy.pth", payload(marker))
        z.writestr("pytorch_variables.pth", payload(marker))
        z.writestr("_stable_baselines3_version", "2.9.2")
    return str(path)
