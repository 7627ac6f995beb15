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
        # offsets of the per-seat scalar features, in the order observe() writes them
        self._seat_scalars = tuple(self.seat_offset[f] for f in (
            "ready", "innate_used", "cards_used", "cards_left", "restricted", "is_current",
            "hand_size", "score"))
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
        # Counted features are gathered as indices and summed by one bincount; the few scalar
        # features are written in one fancy assignment. This is the env's hot path.
        s, off = game.s, self.offset
        n = s.num_players
        fh = self.cards.first_hijinks
        idx = []
        add = idx.extend
        o = off["hand"] - fh
        add([o + k for k in s.hands[seat]])
        seat_base, ss = off["seats"], self.seat_size
        so = self.seat_offset
        dragon_off, hoard_off, scalar_off = so["dragon"], so["hoard"], self._seat_scalars
        sidx, svals = [], []
        values = game.values
        for rel in range(n):
            p = (seat + rel) % n
            b = seat_base + rel * ss
            hoard = s.hoards[p]
            idx.append(b)
            idx.append(b + dragon_off + s.dragons[p])
            h = b + hoard_off
            add([h + k for k in hoard])
            v = values[s.dragons[p]]
            sidx += [b + o for o in scalar_off]
            svals += (s.ready[p], s.innate_used[p], s.cards_used[p],
                      0 if s.restricted[p] else max(0, s.card_limit[p] - s.cards_used[p]),
                      s.restricted[p], p == s.current, len(s.hands[p]) / 3.0,
                      sum([v[k] for k in hoard]) / 15.0)
        o = off["discard"] - fh
        add([o + k for k in s.discard])
        o = off["trash"]
        add([o + k for k in s.trash])
        o = off["past_events"] - self.cards.first_event
        add([o + k for k in s.past_events])
        o = off["canceled"] - fh
        add([o + k for _, k in s.canceled])
        o = off["havok_remaining"]
        add([o + k for k in s.havok])
        o = off["known_top"]
        nh = self.n_havok
        add([o + i * nh + k for i, k in enumerate(s.known[seat][:3])])
        sidx += (off["havok_size"], off["hijinks_size"], off["turn"])
        svals += (len(s.havok) / 40.0, len(s.hijinks) / 40.0, s.turn / 40.0)
        mask = np.zeros(self.layout.size, dtype=np.int8)
        p = s.pending
        if p is not None and p["player"] == seat:
            mask[p["choices"]] = 1
            self._decision(p, seat, n, idx)
        obs = np.bincount(idx, minlength=self.size).astype(np.float32)
        obs[sidx] = svals
        return obs, mask

    def _decision(self, p: dict, seat: int, n: int, idx: list):
        off = self.offset
        idx.append(off["decision_kind"] + self._kind_index[p["kind"]])
        idx.append(off["purpose"] + self._purpose_index[p["purpose"]])
        ctx = p["context"]
        trig = ctx.get("trigger")
        if trig is not None:
            idx.append(off["trigger"] + self._trigger_index[trig["on"]])
            if "ability" in trig:
                idx.append(off["ability"] + self.ability_index(trig["ability"]))
            if "card" in trig:
                idx.append(off["trigger_card"] + trig["card"])
            actor = trig.get("user", trig.get("flipper", trig.get("to")))
            target = trig["owners"][0] if trig.get("owners") else None
            picks = trig.get("picks", ())
        else:
            if "ability" in ctx:
                idx.append(off["ability"] + self.ability_index(ctx["ability"]))
            actor, target, picks = ctx.get("actor"), ctx.get("target"), ctx.get("picks", ())
            o = off["shown"]
            idx.extend(o + i * self.n_havok + k for i, k in enumerate(ctx.get("shown", ())[:3]))
        if actor is not None:
            idx.append(off["actor"] + (actor - seat) % n)
        if target is not None:
            idx.append(off["target"] + (target - seat) % n)
        o = off["picks"]
        idx.extend(o + k for k in picks)
