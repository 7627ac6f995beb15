"""Trained policies as agents: a model saved by ``train.py`` is an agent spec (``models/fire.safetensors``).

A model is two files that load without running any code from them: ``NAME.safetensors``, the
network's weights (read with ``safetensors.numpy``, no pickle, no torch), and ``NAME.json``, its
record (:data:`FORMAT`, what it was trained for, the network's shape, hyperparameters and, for
the model a run keeps, the whole run record). Either file, or ``pretrained:NAME`` for a model
the package ships in ``agents/pretrained/``, names the model. Loading checks every field of the
record and every tensor's name, shape, dtype and values against it, and refuses a model trained
for another environment version, observation size or action count; every problem is one
:class:`agents.AgentSpecError` line. Models of the old stable-baselines3 ``.zip`` format are
refused unread, with the command that converts a trusted one (``python -m agents.convert``).

``PolicyAgent.load(spec)`` acts with the masked policy evaluated in numpy: by default its argmax
(deterministic); ``deterministic=False`` samples from it, reproducibly from the seed given to
``reset``. ``agent.meta`` (and :func:`read_meta` for a spec) gives what it was trained for:
env_version, dragon, affinity, players, observation_size, action_size.
Self-play opponent pools (several agents, one drawn per game) are in :mod:`training.selfplay`.
"""

from __future__ import annotations

import json
import math
import os
import random

import numpy as np

from havok_env.constants import PLAYER_COUNTS, is_player_count
from havok_env.engine import ActionLayout
from havok_env.files import replaced
from havok_env.observe import Observer
from havok_env.version import ENV_VERSION

from .base import Agent, AgentSpecError

FORMAT = "havok-policy-v1"
META_KEYS = ("env_version", "dragon", "affinity", "players", "observation_size", "action_size")
ACTIVATIONS = ("tanh", "relu")
# what the value network reads: the seat's observation, or the state (every seat's observation,
# the seat's own first: havok_env.vector.LearnerGames) of a centralised critic. The policy network
# always reads the seat's observation alone.
CRITIC_INPUTS = ("observation", "state")
PRETRAINED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained")
MAX_RECORD_BYTES = 16 << 20   # a run record is a few tens of kB
MAX_LAYERS, MAX_WIDTH = 16, 1 << 16
# the most parameters a model may have (256 MiB of float32; a shipped model has under half a
# million): a record is read before its weights, and a claim past this is refused unread
MAX_PARAMETERS = 1 << 26
CONVERT = "python -m agents.convert"


def _spec_error(msg: str):
    return AgentSpecError(msg)


def expected_sizes(cards=None) -> tuple[int, int]:
    """(observation size, action count) of this environment."""
    from havok_env.cards import default_cards
    cs = cards or default_cards()
    return Observer(cs).size, ActionLayout(cs).size


# -- names ------------------------------------------------------------------------------------------

def is_model_spec(spec: str) -> bool:
    """Whether an agent spec names a saved model (it needs safetensors to load)."""
    s = str(spec).strip()
    return s.startswith("pretrained:") or s.endswith((".safetensors", ".json", ".zip"))


def shipped() -> list[str]:
    """Names of the models in the package (``pretrained:NAME``)."""
    try:
        names = os.listdir(PRETRAINED_DIR)
    except OSError:
        return []
    return sorted(n[:-12] for n in names if n.endswith(".safetensors")
                  and os.path.exists(os.path.join(PRETRAINED_DIR, n[:-12] + ".json")))


def pretrained_path(name: str) -> str:
    """The path (without extension) of ``pretrained:NAME``: a shipped model's name, or a dragon's
    name or affinity for the model of that dragon."""
    have = shipped()
    ships = "the package ships " + (", ".join(f"pretrained:{n}" for n in have) if have else "none")
    key = str(name).strip().lower()
    if key not in have:
        from havok_env.cards import default_cards
        cs = default_cards()
        try:
            d = cs.dragons[cs.dragon_index(key)]
        except ValueError:
            raise _spec_error(f"agent spec 'pretrained:{name}': no such model; {ships}") from None
        if d.affinity not in have:
            raise _spec_error(f"agent spec 'pretrained:{name}': no pretrained agent for {d.name} "
                              f"({d.affinity}); {ships}")
        key = d.affinity
    return os.path.join(PRETRAINED_DIR, key)


def model_base(spec: str) -> str:
    """``models/fire``, ``models/fire.safetensors``, ``models/fire.json`` or ``pretrained:fire``
    -> the path without extension (``models/fire``)."""
    s = str(spec).strip()
    if s.startswith("pretrained:"):
        return pretrained_path(s[len("pretrained:"):])
    for ext in (".safetensors", ".json"):
        if s.endswith(ext):
            return s[:-len(ext)]
    return s


def _old_format(path: str) -> Exception:
    import zipfile
    try:  # the zip's directory only: reading it runs nothing
        with zipfile.ZipFile(path) as z:
            sb3 = "data" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        sb3 = False
    if not sb3:
        return _spec_error(f"{path} is not a model: models are saved as NAME.safetensors with NAME.json")
    return _spec_error(
        f"{path} is a model in the old stable-baselines3 format, which cannot be loaded without "
        f"running code from the file; if you trust it, convert it: {CONVERT} {path} "
        f"{os.path.splitext(path)[0]}")


# -- the record -------------------------------------------------------------------------------------

def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_record(rec, where: str) -> dict:
    """Raise AgentSpecError unless ``rec`` is a model record of this environment; returns it."""
    def bad(what):
        return _spec_error(f"{where} is not a valid model record: {what}")

    if not isinstance(rec, dict):
        raise bad(f"a JSON object is needed, not {type(rec).__name__}")
    if rec.get("format") != FORMAT:
        raise bad(f"format must be {FORMAT!r}, not {rec.get('format')!r}")
    for key in META_KEYS:
        if key not in rec:
            raise bad(f"{key} is missing")
    for key in ("env_version", "dragon", "affinity"):
        if not isinstance(rec[key], str):
            raise bad(f"{key} must be a string, not {type(rec[key]).__name__}")
    for key in ("players", "observation_size", "action_size"):
        if not _is_int(rec[key]):
            raise bad(f"{key} must be an integer, not {type(rec[key]).__name__}")
    if not is_player_count(rec["players"]):
        raise bad(f"players must be {PLAYER_COUNTS}, not {rec['players']}")
    from havok_env.cards import default_cards
    dragons = {d.name: d.affinity for d in default_cards().dragons}
    if dragons.get(rec["dragon"]) != rec["affinity"]:
        raise bad(f"dragon {rec['dragon']!r} with affinity {rec['affinity']!r} is no dragon of the game")
    if "timesteps" in rec and not (_is_int(rec["timesteps"]) and rec["timesteps"] >= 0):
        raise bad("timesteps must be a non-negative integer")
    net = rec.get("network")
    if not isinstance(net, dict):
        raise bad("network must be an object {pi, vf, activation}")
    for key in ("pi", "vf"):
        layers = net.get(key)
        if not (isinstance(layers, list) and len(layers) <= MAX_LAYERS
                and all(_is_int(n) and 1 <= n <= MAX_WIDTH for n in layers)):
            raise bad(f"network.{key} must be a list of at most {MAX_LAYERS} layer sizes 1-{MAX_WIDTH}")
    if net.get("activation") not in ACTIVATIONS:
        raise bad(f"network.activation must be one of {', '.join(ACTIVATIONS)}, not {net.get('activation')!r}")
    if net.get("critic", "observation") not in CRITIC_INPUTS:
        raise bad(f"network.critic must be one of {', '.join(CRITIC_INPUTS)}, not {net.get('critic')!r}")
    want_obs, want_act = expected_sizes()
    if rec["env_version"] != ENV_VERSION or rec["observation_size"] != want_obs or rec["action_size"] != want_act:
        raise _spec_error(
            f"{where} was trained for {rec['env_version']} (observation {rec['observation_size']}, "
            f"{rec['action_size']} actions) but this is {ENV_VERSION} (observation {want_obs}, "
            f"{want_act} actions); retrain it with train.py")
    n = parameters(expected_tensors(rec))
    if n > MAX_PARAMETERS:
        raise bad(f"its network has {n:,} parameters, more than the {MAX_PARAMETERS:,} a model may have")
    return rec


def parameters(shapes: dict[str, tuple[int, ...]]) -> int:
    """How many numbers tensors of these shapes hold."""
    return sum(math.prod(s) for s in shapes.values())


def read_record(spec: str) -> dict:
    """The checked record of a saved model (its ``.json``); the weights are not read."""
    s = str(spec).strip()
    if s.endswith(".zip"):
        raise _old_format(s) if os.path.exists(s) else _spec_error(f"no saved model at {s}")
    base = model_base(s)
    path = base + ".json"
    if not os.path.exists(path) or not os.path.exists(base + ".safetensors"):
        if os.path.exists(base + ".zip"):
            raise _old_format(base + ".zip")
        missing = base + (".safetensors" if os.path.exists(path) else ".json")
        raise _spec_error(f"no saved model at {base}.safetensors (missing {missing})")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_RECORD_BYTES + 1)  # bounded: a device or a huge file is no record
        if len(data) > MAX_RECORD_BYTES:
            raise ValueError(f"larger than {MAX_RECORD_BYTES:,} bytes")
        rec = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError) as e:  # UnicodeDecodeError and JSONDecodeError too
        raise _spec_error(f"{path} is not a valid model record: {type(e).__name__}: {e}".splitlines()[0]) from None
    return check_record(rec, path)


def read_meta(spec: str) -> dict:
    """What a saved model was trained for: the :data:`META_KEYS` of its record, once the whole
    model (weights too) is checked."""
    rec, _ = load_model(spec)
    return {k: rec[k] for k in META_KEYS}


def expected_tensors(rec: dict) -> dict[str, tuple[int, ...]]:
    """Tensor name -> shape of the network a record describes (stable-baselines3's MlpPolicy names)."""
    out = {}
    for head, net in (("policy", "pi"), ("value", "vf")):
        n_in = rec["observation_size"]
        if net == "vf" and rec["network"].get("critic") == "state":
            n_in *= rec["players"]
        for i, n in enumerate(rec["network"][net]):
            out[f"mlp_extractor.{head}_net.{2 * i}.weight"] = (n, n_in)
            out[f"mlp_extractor.{head}_net.{2 * i}.bias"] = (n,)
            n_in = n
        last = rec["network"][net][-1] if rec["network"][net] else rec["observation_size"]
        size = rec["action_size"] if net == "pi" else 1
        name = "action_net" if net == "pi" else "value_net"
        out[f"{name}.weight"] = (size, last)
        out[f"{name}.bias"] = (size,)
    return out


def read_weights(base: str, rec: dict, expected: dict[str, tuple[int, ...]] | None = None) -> dict:
    """The tensors of ``base.safetensors``, checked against ``expected`` (default: the record's
    network): every name, shape and dtype (float32), and finite values."""
    path = base + ".safetensors"
    expected = expected_tensors(rec) if expected is None else expected
    need = 4 * parameters(expected)  # float32
    try:
        size = os.path.getsize(path)
    except OSError as e:
        raise _spec_error(f"{path} cannot be read: {e.strerror}") from None
    if size < need:  # before anything is read: the record's claim against the file itself
        raise _spec_error(f"{path} does not match its record: the network needs {need:,} bytes of "
                          f"weights, and the file holds {size:,}")
    try:
        from safetensors import safe_open
    except ImportError:
        raise _spec_error("loading a model needs safetensors: pip install -e '.[eval]'") from None
    try:
        with safe_open(path, framework="np") as f:
            names = set(f.keys())
            missing, extra = sorted(set(expected) - names), sorted(names - set(expected))
            if missing or extra:
                raise _spec_error(
                    f"{path} does not match its record: "
                    + (f"missing tensor {missing[0]}" if missing else f"unexpected tensor {extra[0]}")
                    + (f" ({len(missing) + len(extra)} names differ)" if len(missing) + len(extra) > 1 else ""))
            for name in sorted(expected):
                sl = f.get_slice(name)
                shape, dtype = tuple(sl.get_shape()), sl.get_dtype()
                if dtype != "F32" or shape != tuple(expected[name]):
                    raise _spec_error(f"{path} does not match its record: tensor {name} is {dtype} "
                                      f"{list(shape)}, expected F32 {list(expected[name])}")
            tensors = {name: f.get_tensor(name) for name in expected}
    except Exception as e:  # noqa: BLE001 - the parser's own errors: a corrupt or foreign file
        if isinstance(e, AgentSpecError):
            raise
        raise _spec_error(f"{path} is not a valid safetensors file: {e}".splitlines()[0]) from None
    for name, t in tensors.items():
        if not np.isfinite(t).all():
            raise _spec_error(f"{path}: tensor {name} has values that are not finite")
    return tensors


def load_model(spec: str) -> tuple[dict, dict]:
    """(record, tensors) of a saved model, both checked."""
    rec = read_record(spec)
    return rec, read_weights(model_base(spec), rec)


def save_model(base: str, tensors: dict, record: dict) -> None:
    """Write ``base.safetensors`` and ``base.json`` (each written whole, then moved into place).
    The record must be a valid model record for these tensors."""
    from safetensors.numpy import save as to_bytes
    check_record(record, base + ".json")
    want = expected_tensors(record)
    got = {k: tuple(np.shape(v)) for k, v in tensors.items()}
    if got != want:
        raise ValueError(f"the tensors do not match the record's network: {sorted(set(got) ^ set(want))}")
    # Both are written before either is moved into place, and the record is moved last: a model
    # is there for its loaders once its record is (read_record reads it first), so a first save
    # stopped between the two moves leaves no model rather than a record without its weights.
    with replaced(base + ".json") as rec:
        json.dump(record, rec, indent=2)
        rec.write("\n")
        with replaced(base + ".safetensors", "wb") as f:  # (save_file would make it private: mode 600)
            f.write(to_bytes({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()}))


# -- the agent ----------------------------------------------------------------------------------------

class _NumpyMLP:
    """The policy logits of a stable-baselines3 MlpPolicy's weights, evaluated with numpy."""

    def __init__(self, tensors: dict, layers: list[int], activation: str):
        self.layers = [(tensors[f"mlp_extractor.policy_net.{2 * i}.weight"].T.copy(),
                        tensors[f"mlp_extractor.policy_net.{2 * i}.bias"].copy()) for i in range(len(layers))]
        self.out = (tensors["action_net.weight"].T.copy(), tensors["action_net.bias"].copy())
        self.activation = np.tanh if activation == "tanh" else (lambda x: np.maximum(x, 0.0))

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Logits of one observation (any shape of its values), or of a batch ``[k, obs]``."""
        x = np.asarray(obs, dtype=np.float32)
        if x.ndim != 2:
            x = x.reshape(-1)
        for w, b in self.layers:
            x = self.activation(x @ w + b)
        return x @ self.out[0] + self.out[1]


class PolicyAgent(Agent):
    """Acts with a trained policy network (numpy only)."""

    def __init__(self, tensors: dict, record: dict, deterministic: bool = True, name: str = "policy"):
        self.record = record
        self.meta = {k: record[k] for k in META_KEYS}
        self.deterministic = deterministic
        self.name = name
        self._rng = random.Random(0)
        net = record["network"]
        self._fast = _NumpyMLP(tensors, net["pi"], net["activation"])

    @classmethod
    def load(cls, spec: str, deterministic: bool = True) -> "PolicyAgent":
        rec, tensors = load_model(spec)
        name = str(spec).strip() if str(spec).strip().startswith("pretrained:") \
            else os.path.basename(model_base(spec))
        return cls(tensors, rec, deterministic=deterministic, name=name)

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self._rng.seed(seed)

    def logits(self, observation: np.ndarray) -> np.ndarray:
        return self._fast.logits(observation)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The deterministic choice for each row of a batch (one forward pass for all): the legal
        action of highest logit, as :meth:`act` chooses. A batched policy of
        :class:`havok_env.vector.LearnerGames`."""
        z = self._fast.logits(observations)
        z = np.where(np.asarray(action_masks) != 0, z, -np.inf)
        return z.argmax(axis=1)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view=None) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        z = self.logits(observation)[legal]
        if self.deterministic:
            return int(legal[int(np.argmax(z))])
        p = np.exp(z - z.max())
        return int(legal[self._rng.choices(range(len(legal)), weights=p.tolist())[0]])
