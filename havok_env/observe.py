"""Observation vector and action mask for one seat.

Everything is in *relative seat order*: slot 0 is the observing seat, slot 1 the seat on its left,
and so on (slots beyond the player count are zero). Counts are raw card counts; sizes and scores
are scaled to roughly [0, 1]. The pending-decision section is filled only for the seat that must
decide; every other seat sees zeros there (and an all-zero action mask), so an observation holds
exactly what its seat may know (rules.md, "Information").
"""

from __future__ import annotations

import numpy as np

from .engine import DECISION_KINDS, PURPOSES, ActionLayout, Game

MAX_SEATS = ActionLayout.MAX_PLAYERS
TRIGGERS = ("event", "treasure", "use")


class Observer:
    """Turns a :class:`Game` into ``(observation float32, action_mask int8)`` for a seat."""

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
        self._kind_index = {k: i for i, k in enumerate(DECISION_KINDS)}
        self._purpose_index = {p: i for i, p in enumerate(PURPOSES)}
        self._trigger_index = {t: i for i, t in enumerate(TRIGGERS)}
        self.layout = ActionLayout(cs)

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
        s, cs, off = game.s, self.cards, self.offset
        n = s.num_players
        obs = np.zeros(self.size, dtype=np.float32)
        mask = np.zeros(self.layout.size, dtype=np.int8)
        fh = cs.first_hijinks
        o = off["hand"] - fh
        for k in s.hands[seat]:
            obs[o + k] += 1
        seat_base, so, ss = off["seats"], self.seat_offset, self.seat_size
        for rel in range(n):
            p = (seat + rel) % n
            b = seat_base + rel * ss
            obs[b] = 1
            obs[b + so["dragon"] + s.dragons[p]] = 1
            obs[b + so["ready"]] = s.ready[p]
            obs[b + so["innate_used"]] = s.innate_used[p]
            obs[b + so["cards_used"]] = s.cards_used[p]
            obs[b + so["cards_left"]] = 0 if s.restricted[p] else max(0, s.card_limit[p] - s.cards_used[p])
            obs[b + so["restricted"]] = s.restricted[p]
            obs[b + so["is_current"]] = p == s.current
            obs[b + so["hand_size"]] = len(s.hands[p]) / 3.0
            obs[b + so["score"]] = game.score(p) / 15.0
            h = b + so["hoard"]
            for k in s.hoards[p]:
                obs[h + k] += 1
        for name, pile, first in (("discard", s.discard, fh), ("trash", s.trash, 0),
                                  ("past_events", s.past_events, cs.first_event)):
            o = off[name] - first
            for k in pile:
                obs[o + k] += 1
        o = off["canceled"] - fh
        for _, k in s.canceled:
            obs[o + k] += 1
        o = off["havok_remaining"]
        for k in s.havok:
            obs[o + k] += 1
        obs[off["havok_size"]] = len(s.havok) / 40.0
        obs[off["hijinks_size"]] = len(s.hijinks) / 40.0
        o = off["known_top"]
        for i, k in enumerate(s.known[seat][:3]):
            obs[o + i * self.n_havok + k] = 1
        obs[off["turn"]] = s.turn / 40.0
        p = s.pending
        if p is None or p["player"] != seat:
            return obs, mask
        mask[p["choices"]] = 1
        obs[off["decision_kind"] + self._kind_index[p["kind"]]] = 1
        obs[off["purpose"] + self._purpose_index[p["purpose"]]] = 1
        ctx = p["context"]
        trig = ctx.get("trigger")
        if trig is not None:
            obs[off["trigger"] + self._trigger_index[trig["on"]]] = 1
            if "ability" in trig:
                obs[off["ability"] + self.ability_index(trig["ability"])] = 1
            if "card" in trig:
                obs[off["trigger_card"] + trig["card"]] = 1
            actor = trig.get("user", trig.get("flipper", trig.get("to")))
            target = trig["owners"][0] if trig.get("owners") else None
            picks = trig.get("picks", ())
        else:
            if "ability" in ctx:
                obs[off["ability"] + self.ability_index(ctx["ability"])] = 1
            actor, target, picks = ctx.get("actor"), ctx.get("target"), ctx.get("picks", ())
            o = off["shown"]
            for i, k in enumerate(ctx.get("shown", ())[:3]):
                obs[o + i * self.n_havok + k] = 1
        if actor is not None:
            obs[off["actor"] + (actor - seat) % n] = 1
        if target is not None:
            obs[off["target"] + (target - seat) % n] = 1
        o = off["picks"]
        for k in picks:
            obs[o + k] += 1
        return obs, mask
