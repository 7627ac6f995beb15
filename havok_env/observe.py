"""Observation vector and action mask for one seat: the layout here, the writing in the core.

Everything is in *relative seat order*: slot 0 is the observing seat, slot 1 the seat on its left,
and so on (slots beyond the player count are zero). Counts are raw card counts; sizes and scores
are scaled to roughly [0, 1]. The pending-decision section is filled only for the seat that must
decide; every other seat sees zeros there (and an all-zero action mask), so an observation holds
exactly what its seat may know (rules.md, "Information").
"""

from __future__ import annotations

import numpy as np

from . import _core
from .engine import DECISION_KINDS, PURPOSES, ActionLayout, Game, tables

MAX_SEATS = ActionLayout.MAX_PLAYERS
TRIGGERS = ("event", "treasure", "use")


class Observer:
    """Turns a :class:`Game` into ``(observation float32, action_mask int8)`` for a seat.

    The sections below are the documented layout; the native core writes them
    (``src/havok_core/observer.cpp``) at the offsets this class hands it."""

    def __init__(self, cards):
        self.cards = cs = cards
        nt, ne, nh = cs.n_treasures, cs.n_events, cs.n_hijinks
        self.n_havok = nt + ne
        nd = len(cs.dragons)
        n_abilities = nh + ne + 2 * nd
        seat = [("present", 1), ("dragon", nd), ("ready", 1), ("innate_used", 1), ("cards_used", 1),
                ("cards_left", 1), ("restricted", 1), ("is_current", 1), ("hand_size", 1),
                ("score", 1), ("hoard", nt)]
        self.seat_fields = seat
        self.seat_size = sum(n for _, n in seat)
        self.sections = [
            ("hand", nh),
            ("seats", MAX_SEATS * self.seat_size),
            ("discard", nh), ("trash", nt), ("past_events", ne), ("canceled", nh),
            ("havok_remaining", self.n_havok), ("havok_size", 1), ("hijinks_size", 1),
            ("known_top", 3 * self.n_havok),
            ("turn", 1),
            ("decision_kind", len(DECISION_KINDS)), ("purpose", len(PURPOSES)),
            ("ability", n_abilities), ("actor", MAX_SEATS), ("target", MAX_SEATS),
            ("trigger", len(TRIGGERS)), ("trigger_card", self.n_havok), ("picks", nt),
            ("shown", ActionLayout.N_OPTIONS * self.n_havok),
        ]
        self.offset = {}
        off = 0
        for name, n in self.sections:
            self.offset[name] = off
            off += n
        self.size = off
        so = 0
        self.seat_offset = {}
        for name, n in seat:
            self.seat_offset[name] = so
            so += n
        self.layout = ActionLayout(cs)
        self._n_actions = self.layout.size
        self._core_layout = _core.ObsLayout(tables(cs).core, self.size, self.seat_size, self.offset,
                                            self.seat_offset)

    def __reduce__(self):  # the core's layout object is rebuilt, not pickled
        return (Observer, (self.cards,))

    def describe(self) -> list[tuple[str, int, int]]:
        """(section, offset, length) for the documentation."""
        return [(name, self.offset[name], n) for name, n in self.sections]

    def ability_index(self, ref) -> int:
        """Index in the 'ability' section: Hijinks kinds, then events, then innate abilities."""
        cs = self.cards
        if isinstance(ref, int):
            if cs.is_hijinks(ref):
                return ref - cs.first_hijinks
            return cs.n_hijinks + ref - cs.first_event
        return cs.n_hijinks + cs.n_events + 2 * ref[1] + (ref[2] == "crash")

    def observe(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """Seat's observation (float32) and action mask (int8), written by the core."""
        obs = np.empty(self.size, np.float32)
        mask = np.empty(self._n_actions, np.int8)
        game._core.observe(self._core_layout, seat, obs, mask)
        return obs, mask
