"""The value function: each seat's expected final reward from a state. The luck correction
(evaluation/luck.py) takes its expectations with it, and a search with the ``value`` option
(agents/search.py) scores its unfinished rollouts with it.

:func:`features` encodes a state as everything revealed to anyone so far, one row per seat seen
from that seat (itself first, then the others in turn order): every hoard and what is on its way
to it, every hand (all hands, since the estimator works after the game, from the replay), dragons,
ready and per-turn state, who plays next, the cards being resolved, the Havok deck's remaining
composition and the cards on its top that somebody has seen, the piles and the turn. It never reads
the order of cards nobody has seen (it takes the decks as compositions, and only the seen top of
the Havok deck in order), the generator, nor anything of the stack but what the table has seen
played. The native core writes the rows (``src/havok_core/value_features.cpp``), at the positions
this module's layout hands it, straight from the states' fields.

:class:`ValueModel` is a small fixed network over those rows, shipped in
``agents/data/value.safetensors`` (weights only, read with ``safetensors.numpy``: no pickle,
no torch) with ``value.json`` saying what it was fitted on (``evaluation/fit.py``). Its forward pass runs in the
core too (``src/havok_core/value_net.cpp``): each row on its own in a fixed order of float32
operations, skipping zero inputs and hidden units, so a value has the same bits on every machine,
at any thread count and in any batch.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

import numpy as np

from havok_env import _core
from havok_env.cards import default_cards
from havok_env.engine import tables
from havok_env.files import replaced
from havok_env.state import GameState

DATA = Path(__file__).parent / "data"
FEATURES_VERSION = 2
MAX_SEATS = 4
_WORTH_BINS = 5  # treasures worth 1, 2, 3, 4, 5 or more


class _Layout:
    """Feature positions for one card set (built once), handed to the native core, which writes
    the rows (``src/havok_core/value_features.cpp``)."""

    def __init__(self, cs):
        self.cs = cs
        nh, ne, nd = cs.n_hijinks, cs.n_events, len(cs.dragons)
        # per seat: worth, worth with what is on its way, what is on its way; ready, innate used,
        # cards left, restricted; hand size and hand; dragon; treasures by worth, treasure count;
        # turn-order distance from the current player; events on their way to it; the abilities it
        # is using; its treasures targeted by a pending steal, break or trade; whether the seat is
        # played by the uniformly random bot (the policies are known before the game)
        o = {}
        o["worth"], o["ready"], o["size"], o["hand"] = 0, 3, 7, 8
        o["dragon"] = o["hand"] + nh
        o["bins"] = o["dragon"] + nd
        o["count"] = o["bins"] + _WORTH_BINS
        o["dist"] = o["count"] + 1
        o["events"] = o["dist"] + MAX_SEATS
        o["using"] = o["events"] + ne
        o["stake"] = o["using"] + nh + 2
        o["random"] = o["stake"] + 1
        o["margin"] = o["random"] + 1  # worth (with what is on its way) less the best other's, and
        self.seat = o["margin"] + 2    # whether it is the best (ties included)
        self.o = o
        # the table, after MAX_SEATS seat blocks: player count; turn; Havok deck size; its seen top
        # (the first card in full: seen, treasure, value, event; the next two as seen, value and
        # event); the unseen Havok cards (treasures, their value, each event left, treasures by
        # value); Hijinks deck and discard sizes; trash (size, best and total value); canceled cards
        g = {"players": 0, "turn": 3, "havok_size": 4, "top": 5}
        g["next"] = g["top"] + 3 + ne
        g["unseen"] = g["next"] + 6
        g["hijinks_size"] = g["unseen"] + 2 + ne + 5
        g["discard_size"] = g["hijinks_size"] + 1
        g["trash"] = g["discard_size"] + 1
        g["canceled"] = g["trash"] + 3
        self.g = g
        self.glob = g["canceled"] + 1
        self.size = MAX_SEATS * self.seat + self.glob
        # a live GameState is read from its game in the core, with no copy of its fields
        self.core = _core.ValueLayout(tables(cs).core, self.size, self.seat, self.glob, _WORTH_BINS, o, g, GameState)


_LAYOUTS: dict[int, tuple] = {}


def layout(cs=None) -> _Layout:
    """The feature layout of a card set (the default set if None)."""
    cs = cs or default_cards()
    got = _LAYOUTS.get(id(cs))
    if got is None or got[0] is not cs:
        got = _LAYOUTS[id(cs)] = (cs, _Layout(cs))
    return got[1]


def features(states, random_seats=(), cs=None, seats=None) -> np.ndarray:
    """Rows of features for a list of ``(GameState, top_seen)`` of one game's player count: one
    row per seat of each state, in order (state 0's seats, then state 1's...), each seen from its
    seat; with ``seats`` (distinct seats), only those seats' rows, in that order, the same rows as
    among all seats'. ``random_seats`` are the seats played by the uniformly random bot. A state is
    any object with :class:`havok_env.state.GameState`'s fields (the tracer's plain-data states
    included); the native core reads them and writes the rows."""
    states = states if isinstance(states, (list, tuple)) else list(states)
    seats = None if seats is None else [int(q) for q in seats]
    return _core.value_features(layout(cs).core, states, [int(q) for q in random_seats], seats)


class ValueModel:
    """A fixed network from :func:`features` rows to a seat's value: ReLU hidden layers and one
    output, whose tanh estimates the seat's final reward. ``layers`` are (weights, biases) pairs,
    weights of shape (inputs, outputs); :class:`ModelFileError` where they do not make such a
    network (shapes that do not chain, a last layer of more than one output, a number that is not
    finite). The core holds a copy of them, which values the rows."""

    def __init__(self, layers, meta: dict, cs=None):
        try:
            self.layers = [(np.ascontiguousarray(w, np.float32), np.ascontiguousarray(b, np.float32))
                           for w, b in layers]
        except (TypeError, ValueError) as e:
            raise ModelFileError(f"a value network's layers are (weights, biases) pairs of numbers ({e})") from None
        for i, (w, b) in enumerate(self.layers):
            if w.ndim != 2 or b.ndim != 1:
                raise ModelFileError(f"value network layer {i}: weights must be a matrix and biases a vector, "
                                     f"not of shapes {w.shape} and {b.shape}")
        try:
            self.net = _core.ValueNet([w for w, _ in self.layers], [b for _, b in self.layers])
        except _core.CoreError as e:
            raise ModelFileError(str(e)) from None
        self.meta = meta
        self.cards = cs or default_cards()

    @classmethod
    def load(cls, path: str | Path | None = None) -> "ValueModel":
        """Load ``path`` (``value.safetensors`` next to ``value.json``); the shipped model by
        default. The weights are tensors ``w0``, ``b0``, ``w1``, ... (float32)."""
        file = Path(path) if path is not None else DATA / "value.safetensors"
        try:
            from safetensors import SafetensorError, safe_open
        except ImportError:
            raise ModelFileError("loading the value model needs safetensors: pip install -e '.[eval]'") from None
        try:
            with safe_open(str(file), framework="np") as f:
                names = set(f.keys())
                count = len(names) // 2
                want = {f"{k}{i}" for i in range(count) for k in "wb"}
                if names != want:
                    odd = sorted(names ^ want)[0]
                    raise ModelFileError(f"{file} is not a value model (tensor {odd} "
                                         f"{'missing' if odd in want else 'unexpected'})")
                layers = [(f.get_tensor(f"w{i}"), f.get_tensor(f"b{i}")) for i in range(count)]
            meta = json.loads(file.with_suffix(".json").read_text())
        except FileNotFoundError as e:
            raise ModelFileError(f"no value model at {e.filename or file}") from None
        except (SafetensorError, ValueError, OSError) as e:
            if isinstance(e, ModelFileError):
                raise
            raise ModelFileError(f"{file} is not a value model ({type(e).__name__}: {e})") from None
        for i, (w, b) in enumerate(layers):
            if w.dtype != np.float32 or b.dtype != np.float32:
                raise ModelFileError(f"{file} is not a value model (layer {i} holds {w.dtype} and {b.dtype}, "
                                     "not float32)")
        try:
            model = cls(layers, meta)
        except ModelFileError as e:
            raise ModelFileError(f"{file} is not a value model ({e})") from None
        if not isinstance(meta, dict):
            raise ModelFileError(f"{file.with_suffix('.json')} is not a value model's description")
        want = layout().size
        got = model.net.inputs
        if meta.get("features_version") != FEATURES_VERSION or got != want:
            raise ModelFileError(f"{file} reads features version {meta.get('features_version')} "
                                 f"({got} inputs); this is version {FEATURES_VERSION} ({want} inputs): "
                                 "refit it with python -m evaluation.fit")
        return model

    def save(self, path: str | Path) -> None:
        """Write ``path`` (``.safetensors``) and its ``.json`` record, each whole or not at all."""
        from safetensors.numpy import save as to_bytes

        file = Path(path)
        tensors = {}
        for i, (w, b) in enumerate(self.layers):
            tensors[f"w{i}"], tensors[f"b{i}"] = np.ascontiguousarray(w), np.ascontiguousarray(b)
        for dst, data in ((file, to_bytes(tensors)),
                          (file.with_suffix(".json"), (json.dumps(self.meta, indent=2) + "\n").encode())):
            with replaced(str(dst), "wb") as f:
                f.write(data)

    @cached_property
    def leaf(self):
        """What a search's rollouts value their last states with (:func:`havok_env.view.rollout`),
        made and checked once: CoreError if the network does not read this card set's rows."""
        return _core.NetLeaf(layout(self.cards).core, self.net)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Values (float32) for rows of features, in [-1, 1]: each row's the same whatever the
        batch (the core's forward pass, ``src/havok_core/value_net.cpp``)."""
        x = np.ascontiguousarray(x, np.float32)
        if x.ndim != 2:
            raise ValueError(f"predict() takes a matrix of feature rows, not an array of shape {x.shape}")
        return self.net.predict(x)

    def values(self, states, random_seats=(), seats=None) -> np.ndarray:
        """Each seat's value in each ``(GameState, top_seen)``: shape (len(states), seats); with
        ``seats``, only those seats' (one column each, in that order)."""
        if not states:
            return np.zeros((0, 0))
        k = states[0][0].num_players if seats is None else len(seats)
        return self.predict(features(states, random_seats, self.cards, seats)).reshape(len(states), k)


class ModelFileError(ValueError):
    """A value model file that is missing or does not fit this environment."""
