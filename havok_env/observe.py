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
from .constants import MIN_PLAYERS
from .decisions import DECISION_KINDS, PURPOSES
from .engine import HAND_SIZE, N_OPTIONS, WIN_SCORE, ActionLayout, ArgumentError, CardSet, Game, check_ref, tables

MAX_SEATS = ActionLayout.MAX_PLAYERS
_WIN, _HAND = float(WIN_SCORE), float(HAND_SIZE)  # scales: a hoard's worth, a hand's size
TRIGGERS = ("event", "treasure", "use")


class Observer:
    """Turns a :class:`Game` into ``(observation float32, action_mask int8)`` for a seat.

    The sections below are the documented layout; the native core writes them
    (``src/havok_core/observer.cpp``) at the offsets this class hands it."""

    def __init__(self, cards):
        if not isinstance(cards, CardSet):
            raise ArgumentError(f"cards must be a card set (havok_env.load_cards), not {type(cards).__name__}")
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
            ("known_top", N_OPTIONS * self.n_havok),
            ("turn", 1),
            ("decision_kind", len(DECISION_KINDS)), ("purpose", len(PURPOSES)),
            ("ability", n_abilities), ("actor", MAX_SEATS), ("target", MAX_SEATS),
            ("trigger", len(TRIGGERS)), ("trigger_card", self.n_havok), ("picks", nt),
            ("shown", N_OPTIONS * self.n_havok),
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
        # the turns a game can have: every turn turns over a Havok card, and each of at least
        # MIN_PLAYERS seats starts with one of its treasures
        self.most_turns = sum(cs.copies[:cs.first_hijinks]) - MIN_PLAYERS
        # the cards a turn can have left to play: one, when only Hijinks cards grant extra plays
        # (each then comes with its own play); else no bound (-1 to the core)
        self.most_cards_left = 1 if cs.extra_plays_come_with_a_card else np.inf
        self._core_layout = _core.ObsLayout(tables(cs).core, self.size, self.seat_size, self.offset,
                                            self.seat_offset, self.most_turns,
                                            -1 if np.isinf(self.most_cards_left) else self.most_cards_left)

    def __reduce__(self):  # the core's layout object is rebuilt, not pickled
        return (Observer, (self.cards,))

    def describe(self) -> list[tuple[str, int, int]]:
        """(section, offset, length) for the documentation."""
        return [(name, self.offset[name], n) for name, n in self.sections]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high): the least and greatest value of every observation entry, from the card
        data, for every player count; the env's ``observation_space`` declares them.

        Each bound follows from the card data and the rules, and holds in every position play
        reaches (``tests/test_observe.py`` plays random games against them) and every position a
        snapshot restores (``benchmarks/fuzz_inputs.py`` checks mutated ones):

        * flags and one-hots: 0 to 1 (seat slots 0 and 1 are always present, but a low equal to
          the high reads as a mistake to gymnasium's env checker);
        * counts per card kind (hand, hoards, piles, the Havok deck): the copies of that kind;
          picks: no more than one use targets (Heist: 2);
        * Havok deck size: every Havok card (a restored position may hold them all; play never
          holds more than the deck as dealt, less the first turn's flip); turn: from 1 (the first
          turn begins before any decision) to the deck as dealt, as every turn flips a card (a
          snapshot may count no more turns than the Havok cards out of the deck; one restored
          before its first turn reads as 1);
        * hand size, Hijinks deck size: every Hijinks card (there is no maximum hand size);
          hoard value: every treasure in one hoard, at the best dragon's values;
        * cards still allowed this turn: 1, as Sunny Side Up's extra play replaces its own (a
          restored position allowing more reads as 1; unbounded for a card set whose events or
          dragons grant extra plays);
          cards used this turn is unbounded (infinite): once its discard is reshuffled into an
          empty Hijinks deck, a Sunny Side Up can be drawn and played again in the same turn.
        """
        cs, off, so = self.cards, self.offset, self.seat_offset
        nt, fh = cs.n_treasures, cs.first_hijinks
        copies = np.array(cs.copies, np.float32)
        treasures, events, hijinks = copies[:nt], copies[nt:fh], copies[fh:]
        worth = max(sum(row[k] * cs.copies[k] for k in range(nt)) for row in tables(cs).values)
        low = np.zeros(self.size, np.float32)
        high = np.ones(self.size, np.float32)  # flags and one-hots

        def put(offset, values):
            high[offset:offset + np.size(values)] = values

        put(off["hand"], hijinks)
        for r in range(MAX_SEATS):
            b = off["seats"] + r * self.seat_size
            put(b + so["cards_used"], np.inf)
            put(b + so["cards_left"], self.most_cards_left)
            put(b + so["hand_size"], hijinks.sum() / _HAND)
            put(b + so["score"], worth / _WIN)
            put(b + so["hoard"], treasures)
        put(off["discard"], hijinks)
        put(off["trash"], treasures)
        put(off["past_events"], events)
        put(off["canceled"], hijinks)
        put(off["havok_remaining"], copies[:fh])
        put(off["havok_size"], copies[:fh].sum() / 40.0)
        put(off["hijinks_size"], hijinks.sum() / 40.0)
        put(off["turn"], self.most_turns / 40.0)
        low[off["turn"]] = 1 / 40.0
        abilities = [*cs.hijinks, *cs.events, *(a for d in cs.dragons for a in (d.play, d.crash))]
        most_picks = max(op.get("count", 1) for a in abilities for op in a.effect + a.bonus_effect)
        put(off["picks"], np.minimum(treasures, most_picks))
        return low, high

    def ability_index(self, ref) -> int:
        """Index in the 'ability' section: Hijinks kinds, then events, then innate abilities."""
        cs = self.cards
        ref = check_ref(cs, ref)
        if isinstance(ref, int):
            if cs.is_hijinks(ref):
                return ref - cs.first_hijinks
            return cs.n_hijinks + ref - cs.first_event
        return cs.n_hijinks + cs.n_events + 2 * ref[1] + (ref[2] == "crash")

    def observe(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """Seat's observation (float32) and action mask (int8), written by the core."""
        if game.__class__ is not Game and not isinstance(game, Game):
            raise ArgumentError(f"game must be a Game, not {type(game).__name__}")
        obs = np.empty(self.size, np.float32)
        mask = np.empty(self._n_actions, np.int8)
        if seat.__class__ is not int:  # numpy ints, or a wrong type: checked, named
            seat = game._seat(seat)
        try:  # a plain int's range is the core's to check (a Python check cost 14% of the call)
            game._core.observe(self._core_layout, seat, obs, mask)
        except (_core.CoreError, TypeError):
            game._seat(seat)  # our error, naming the seat, where that was what was wrong
            raise
        return obs, mask
