"""The value function of the luck correction: each seat's expected final reward from a state.

:func:`features` encodes a state as everything revealed to anyone so far, one row per seat seen
from that seat (itself first, then the others in turn order): every hoard and what is on its way
to it, every hand (all hands, since the estimator works after the game, from the replay), dragons,
ready and per-turn state, who plays next, the cards being resolved, the Havok deck's remaining
composition and the cards on its top that somebody has seen, the piles and the turn. It never reads
the order of cards nobody has seen (it takes the decks as compositions, and only the seen top of
the Havok deck in order), the generator, nor anything of the stack but what the table has seen
played.

:class:`ValueModel` is a small fixed network over those rows (numpy only, batched), shipped in
``evaluation/data/value.npz`` (no pickles: loaded with ``allow_pickle=False``) with
``value.json`` saying what it was fitted on (``evaluation/fit.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from havok_env.cards import default_cards
from havok_env.engine import tables

DATA = Path(__file__).parent / "data"
FEATURES_VERSION = 2
MAX_SEATS = 4
_WORTH_BINS = 5  # treasures worth 1, 2, 3, 4, 5 or more


class _Layout:
    """Feature positions and per-kind tables for one card set (built once)."""

    def __init__(self, cs):
        self.cs = cs
        nh, ne, nd = cs.n_hijinks, cs.n_events, len(cs.dragons)
        self.n_hij, self.n_ev, self.n_dragons = nh, ne, nd
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
        # global: player count; turn; Havok deck size; its seen top (the first card in full, the
        # next two as value and event); the unseen Havok cards (treasures, their value, each event
        # left, treasures by value); Hijinks deck and discard sizes; trash; canceled cards
        self.glob = 3 + 1 + 1 + (3 + ne) + 6 + (2 + ne + 5) + 2 + 3 + 1
        self.size = MAX_SEATS * self.seat + self.glob
        self.worths = np.asarray(tables(cs).values, np.float32)  # [dragon, kind], as the engine counts
        self.printed = [cs.value[k] for k in range(cs.n_kinds)]
        self.first_ev, self.first_hij = cs.first_event, cs.first_hijinks
        # what one unseen Havok card adds to the unseen-composition features
        comp = np.zeros((cs.first_hijinks, 2 + ne + 5), np.float32)
        for k in range(cs.first_hijinks):
            if k < cs.n_treasures:
                comp[k, 0] = 1 / 30
                comp[k, 1] = cs.value[k] / 76
                comp[k, 2 + ne + min(cs.value[k], 5) - 1] = 1 / 8
            else:
                comp[k, 2 + k - cs.first_event] = 1.0
        self.comp = comp


_LAYOUTS: dict[int, tuple] = {}


def layout(cs=None) -> _Layout:
    """The feature layout of a card set (the default set if None)."""
    cs = cs or default_cards()
    got = _LAYOUTS.get(id(cs))
    if got is None or got[0] is not cs:
        got = _LAYOUTS[id(cs)] = (cs, _Layout(cs))
    return got[1]


def _in_flight(s, cs):
    """What the stack says is on its way: (treasure worth by seat, events by seat (kind list),
    abilities in use by seat, worth at stake by seat). A Havok card in play with no frame yet (just
    flipped) is on its way to the seat its flip is for."""
    n = s.num_players
    treasure = [[] for _ in range(n)]
    events = [[] for _ in range(n)]
    using = [[] for _ in range(n)]
    stake = [0] * n
    framed = []
    for fr in s.stack:
        f = fr["f"]
        if f == "havok":
            k = fr["card"]
            framed.append(k)
            if k < cs.n_treasures:
                treasure[fr.get("to", fr["you"])].append(k)
            elif not fr.get("nullified"):
                events[fr["you"]].append(k)
        elif f == "use" and not fr.get("canceled"):
            ref = fr["ability"]
            if ref.__class__ is int:
                using[fr["user"]].append(ref - cs.first_hijinks)
            else:
                using[fr["user"]].append(cs.n_hijinks + (0 if ref[2] == "play" else 1))
            t = fr.get("t") or {}
            victim = t.get("victim")
            if victim is not None and t.get("picks"):
                stake[victim] += sum(1 for k in t["picks"] if k in s.hoards[victim])
    loose = [k for k in s.in_play if k < cs.first_hijinks]
    for k in framed:
        if k in loose:
            loose.remove(k)
    if loose and s.current >= 0:
        top = s.stack[-1] if s.stack else {}
        to = top.get("you", s.current)
        for k in loose:
            (treasure if k < cs.n_treasures else events)[to].append(k)
    return treasure, events, using, stake


def features(states, random_seats=(), cs=None) -> np.ndarray:
    """Rows of features for a list of ``(GameState, top_seen)`` of one game's player count: one
    row per seat of each state, in order (state 0's seats, then state 1's...), each seen from its
    seat. ``random_seats`` are the seats played by the uniformly random bot."""
    L = layout(cs)
    cs = L.cs
    B = len(states)
    if B == 0:
        return np.zeros((0, L.size), np.float32)
    n = states[0][0].num_players
    o, P, nh, ne = L.o, L.seat, L.n_hij, L.n_ev
    fh, fe, nt = L.first_hij, L.first_ev, cs.n_treasures
    seat = np.zeros((B, n, P), np.float32)
    for q in random_seats:
        seat[:, q, o["random"]] = 1.0
    glob = np.zeros((B, L.glob), np.float32)
    # flat lists, one entry per card, gathered in one pass and counted by numpy
    hoard_kinds, hoard_len, hoard_dragon = [], [], []
    hand_idx = []  # (state * n + seat) * nh + hijinks index
    havok_kinds, havok_len = [], []
    flying = np.zeros((B, n), np.float32)
    small = []  # (state, seat, offset, value) for the few per-seat entries set one by one
    for b, (s, top) in enumerate(states):
        if s.num_players != n:
            raise ValueError("features() takes states of one player count at a time")
        base = b * n
        for q in range(n):
            h = s.hoards[q]
            hoard_kinds.extend(h)
            hoard_len.append(len(h))
            d = s.dragons[q]
            hoard_dragon.append(d)
            row = seat[b, q]
            row[o["ready"]] = s.ready[q]
            row[o["ready"] + 1] = s.innate_used[q]
            left = 0 if s.restricted[q] else s.card_limit[q] - s.cards_used[q]
            row[o["ready"] + 2] = min(max(left, 0), 2) / 2
            row[o["ready"] + 3] = s.restricted[q]
            row[o["dragon"] + d] = 1.0
            row[o["count"]] = len(h) / 8
            if s.current >= 0:
                row[o["dist"] + (q - s.current) % n] = 1.0
            off = (base + q) * nh - fh
            hand_idx.extend(off + k for k in s.hands[q])
        for owner, k in s.canceled:  # back in its owner's hand at the end of the turn
            hand_idx.append((base + owner) * nh + k - fh)
        if s.stack:
            treasure, events, using, stake = _in_flight(s, cs)
            for q in range(n):
                if treasure[q]:
                    flying[b, q] = sum(L.worths[s.dragons[q], k] for k in treasure[q])
                for k in events[q]:
                    seat[b, q, o["events"] + k - fe] += 1
                for i in using[q]:
                    seat[b, q, o["using"] + i] += 1
                seat[b, q, o["stake"]] = stake[q] / 2
        havok = s.havok
        havok_kinds.extend(havok)
        havok_len.append(len(havok))
        g = glob[b]
        g[n - 2] = 1.0
        g[3] = s.turn / 20
        g[4] = len(havok) / 40
        if top >= 1:
            k = havok[0]
            g[5] = 1.0
            if k < nt:
                g[6], g[7] = 1.0, L.printed[k] / 5
            else:
                g[8 + k - fe] = 1.0
        for m in (1, 2):
            if top > m:
                k = havok[m]
                j = 8 + ne + 3 * (m - 1)
                g[j] = 1.0
                if k < nt:
                    g[j + 1] = L.printed[k] / 5
                else:
                    g[j + 2] = 1.0
        j = 8 + ne + 6 + 2 + ne + 5
        g[j] = len(s.hijinks) / 40
        g[j + 1] = len(s.discard) / 40
        trash = s.trash
        if trash:
            g[j + 2] = len(trash) / 10
            g[j + 3] = max(L.printed[k] for k in trash) / 5
            g[j + 4] = sum(L.printed[k] for k in trash) / 20
        g[j + 5] = len(s.canceled) / 2
        if top:  # the seen top is not part of the unseen composition
            for k in havok[:top]:
                small.append((b, k))
    # hands
    counts = np.bincount(np.asarray(hand_idx, np.int64), minlength=B * n * nh).reshape(B, n, nh)
    seat[:, :, o["hand"]:o["hand"] + nh] = counts
    seat[:, :, o["size"]] = counts.sum(axis=2) / 5
    # hoards: worth and treasures by worth
    if hoard_kinds:
        owner = np.repeat(np.arange(B * n), hoard_len)
        worth = L.worths[np.repeat(np.asarray(hoard_dragon), hoard_len), np.asarray(hoard_kinds)]
        total = np.bincount(owner, weights=worth, minlength=B * n).reshape(B, n)
        bins = np.bincount(owner * _WORTH_BINS + np.minimum(worth, _WORTH_BINS).astype(np.int64) - 1,
                           minlength=B * n * _WORTH_BINS).reshape(B, n, _WORTH_BINS)
        seat[:, :, o["bins"]:o["bins"] + _WORTH_BINS] = bins / 3
    else:
        total = np.zeros((B, n))
    seat[:, :, o["worth"]] = total / 15
    projected = total + flying
    seat[:, :, o["worth"] + 1] = projected / 15
    seat[:, :, o["worth"] + 2] = flying / 5
    if n > 1:
        others = np.stack([np.delete(projected, q, axis=1).max(axis=1) for q in range(n)], axis=1)
        seat[:, :, o["margin"]] = (projected - others) / 15
        seat[:, :, o["margin"] + 1] = projected >= others
    # the unseen Havok cards
    kinds = np.bincount(np.repeat(np.arange(B), havok_len) * cs.first_hijinks + np.asarray(havok_kinds, np.int64),
                        minlength=B * cs.first_hijinks).reshape(B, cs.first_hijinks)
    for b, k in small:
        kinds[b, k] -= 1
    comp = kinds @ L.comp
    j = 8 + ne + 6
    glob[:, j:j + 2 + ne + 5] = comp
    glob[:, j + 2:j + 2 + ne] = np.minimum(glob[:, j + 2:j + 2 + ne], 1.0)
    # each seat's row: its own block first, then the others in turn order
    rot = (np.arange(n)[:, None] + np.arange(n)[None, :]) % n  # rot[i, r] = seat r places after i
    rows = np.zeros((B, n, L.size), np.float32)
    rows[:, :, :n * P] = seat[:, rot, :].reshape(B, n, n * P)
    rows[:, :, MAX_SEATS * P:] = glob[:, None, :]
    return rows.reshape(B * n, L.size)


class ValueModel:
    """A fixed network from :func:`features` rows to a seat's value: ReLU hidden layers and one
    output, whose tanh estimates the seat's final reward."""

    def __init__(self, layers, meta: dict, cs=None):
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        self.meta = meta
        self.cards = cs or default_cards()

    @classmethod
    def load(cls, path: str | Path | None = None) -> "ValueModel":
        """Load ``path`` (``value.npz`` next to ``value.json``); the shipped model by default."""
        npz = Path(path) if path is not None else DATA / "value.npz"
        try:
            with np.load(npz, allow_pickle=False) as z:
                count = int(z["layers"])
                layers = [(z[f"w{i}"], z[f"b{i}"]) for i in range(count)]
            meta = json.loads(npz.with_suffix(".json").read_text())
        except FileNotFoundError as e:
            raise ModelFileError(f"no value model at {e.filename}") from None
        except (KeyError, ValueError, OSError) as e:
            raise ModelFileError(f"{npz} is not a value model ({type(e).__name__}: {e})") from None
        want = layout().size
        got = layers[0][0].shape[0] if layers else None
        if meta.get("features_version") != FEATURES_VERSION or got != want:
            raise ModelFileError(f"{npz} reads features version {meta.get('features_version')} "
                                 f"({got} inputs); this is version {FEATURES_VERSION} ({want} inputs): "
                                 "refit it with python -m evaluation.fit")
        return cls(layers, meta)

    def save(self, path: str | Path) -> None:
        npz = Path(path)
        arrays = {"layers": np.array(len(self.layers))}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        np.savez(npz, **arrays)
        npz.with_suffix(".json").write_text(json.dumps(self.meta, indent=2) + "\n")

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Values for rows of features, in [-1, 1]."""
        h = x
        for w, b in self.layers[:-1]:
            h = np.maximum(h @ w + b, 0.0)
        w, b = self.layers[-1]
        return np.tanh(h @ w + b)[:, 0]

    def values(self, states, random_seats=()) -> np.ndarray:
        """Each seat's value in each ``(GameState, top_seen)``: shape (len(states), seats)."""
        if not states:
            return np.zeros((0, 0))
        n = states[0][0].num_players
        return self.predict(features(states, random_seats, self.cards)).reshape(len(states), n)


class ModelFileError(ValueError):
    """A value model file that is missing or does not fit this environment."""
