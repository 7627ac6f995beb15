"""Observation vector and action mask for one seat.

Everything is in *relative seat order*: slot 0 is the observing seat, slot 1 the seat on its left,
and so on (slots beyond the player count are zero). Counts are raw card counts; sizes and scores
are scaled to roughly [0, 1]. The pending-decision section is filled only for the seat that must
decide; every other seat sees zeros there (and an all-zero action mask), so an observation holds
exactly what its seat may know (rules.md, "Information").
"""

from __future__ import annotations

import numpy as np

from .constants import MIN_PLAYERS
from .decisions import DECISION_KINDS, PURPOSES
from .engine import HAND_SIZE, N_OPTIONS, WIN_SCORE, ActionLayout, Game, _Tables

MAX_SEATS = ActionLayout.MAX_PLAYERS
_WIN, _HAND = float(WIN_SCORE), float(HAND_SIZE)  # scales: a hoard's worth, a hand's size
TRIGGERS = ("event", "treasure", "use")
_CODE_SPACE = 256  # pile-count codes per bincount: they are bytes (see Observer._count_tables)
# the per-seat scalar features, in the order observe() lists them
_SEAT_SCALARS = ("ready", "innate_used", "cards_used", "cards_left", "restricted", "is_current",
                 "hand_size", "score")


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
        self._kind_index = {k: i for i, k in enumerate(DECISION_KINDS)}
        self._purpose_index = {p: i for i, p in enumerate(PURPOSES)}
        self._trigger_index = {t: i for i, t in enumerate(TRIGGERS)}
        self.layout = ActionLayout(cs)
        self._n_actions = self.layout.size
        self._count_tables()
        self._plans: dict = {}  # (seat, *dragons) -> _plan()

    def _count_tables(self):
        """Tables that turn each counted pile (a list of card kinds) into one-byte codes.

        Counting the cards of the piles is most of an observation, and done per card in Python
        it costs about as much as an engine step. observe() does it in C instead: ``bytearray``
        packs a pile's kinds, ``translate`` maps each kind to a *code* (one per observation slot
        the pile counts into), and one ``np.bincount`` over the joined codes counts them all.
        Codes are bytes, so the counted slots are split into code spaces of at most 256 codes,
        each counted by its own bincount (the shipped cards need just one).
        """
        cs, off = self.cards, self.offset
        nt, nh, fh = cs.n_treasures, cs.n_hijinks, cs.first_hijinks
        hoard = off["seats"] + self.seat_offset["hoard"]
        # (first slot, first kind, number of kinds) of each counted pile, in the order observe()
        # lists them; the hoards by relative seat (_plan() gives each seat its table)
        piles = [(off["hand"], fh, nh)]
        piles += [(hoard + r * self.seat_size, 0, nt) for r in range(MAX_SEATS)]
        piles += [(off["discard"], fh, nh), (off["trash"], 0, nt),
                  (off["past_events"], cs.first_event, cs.n_events), (off["canceled"], fh, nh),
                  (off["havok_remaining"], 0, self.n_havok)]
        # Tables are indexed by kind; bytes.translate needs exactly 256 entries, so card sets
        # with more kinds than that index them in Python instead. Kinds a pile cannot hold map
        # to code 0 and never occur.
        self._bytewise = cs.n_kinds <= 256
        self._tables = []  # pile -> table
        self._spaces = []  # ([pile, ...], code -> observation slot)
        for slot, first, n in piles:
            if not self._spaces or len(self._spaces[-1][1]) + n > _CODE_SPACE:
                self._spaces.append(([], []))
            members, dest = self._spaces[-1]
            table = bytearray(max(256, cs.n_kinds))
            table[first:first + n] = range(len(dest), len(dest) + n)
            self._tables.append(bytes(table))
            members.append(len(self._tables) - 1)
            dest += range(slot, slot + n)

    def describe(self) -> list[tuple[str, int, int]]:
        """(section, offset, length) for the documentation."""
        return [(name, self.offset[name], n) for name, n in self.sections]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high): the least and greatest value of every observation entry, from the card
        data, for every player count; the env's ``observation_space`` declares them.

        Each bound follows from the card data and the rules, and holds in every position play
        reaches (``tests/test_observe.py`` plays random games against them):

        * flags and one-hots: 0 to 1 (seat slots 0 and 1 are always present, but a low equal to
          the high reads as a mistake to gymnasium's env checker);
        * counts per card kind (hand, hoards, piles): the copies of that kind; picks: no more than
          one use targets (Heist: 2). The Havok deck holds at most copies - 2 of the starting
          treasure: each of at least 2 players starts with one, and no card ever returns to that
          deck from outside it;
        * Havok deck size: its cards less the 2 starting treasures, less the first turn's flip,
          which comes before any decision; turn: from 1 (the first turn begins before any
          decision) to the deck as dealt, as every turn flips a card;
        * hand size, Hijinks deck size: every Hijinks card (there is no maximum hand size);
          hoard value: every treasure in one hoard, at the best dragon's values;
        * cards still allowed this turn: 1, as Sunny Side Up's extra play replaces its own;
          cards used this turn is unbounded (infinite): once its discard is reshuffled into an
          empty Hijinks deck, a Sunny Side Up can be drawn and played again in the same turn.
        """
        cs, off, so = self.cards, self.offset, self.seat_offset
        nt, fh = cs.n_treasures, cs.first_hijinks
        copies = np.array(cs.copies, np.float32)
        treasures, events, hijinks = copies[:nt], copies[nt:fh], copies[fh:]
        in_havok = copies[:fh].copy()  # the most of each kind the Havok deck can hold
        in_havok[cs.starting_treasure] -= MIN_PLAYERS
        dealt = in_havok.sum()  # the Havok deck as dealt to the fewest players
        worth = max(sum(row[k] * cs.copies[k] for k in range(nt)) for row in _Tables(cs).values)
        low = np.zeros(self.size, np.float32)
        high = np.ones(self.size, np.float32)  # flags and one-hots

        def put(offset, values):
            high[offset:offset + np.size(values)] = values

        put(off["hand"], hijinks)
        for r in range(MAX_SEATS):
            b = off["seats"] + r * self.seat_size
            put(b + so["cards_used"], np.inf)
            put(b + so["hand_size"], hijinks.sum() / _HAND)
            put(b + so["score"], worth / _WIN)
            put(b + so["hoard"], treasures)
        put(off["discard"], hijinks)
        put(off["trash"], treasures)
        put(off["past_events"], events)
        put(off["canceled"], hijinks)
        put(off["havok_remaining"], in_havok)
        put(off["havok_size"], (dealt - 1) / 40.0)
        put(off["hijinks_size"], hijinks.sum() / 40.0)
        put(off["turn"], dealt / 40.0)
        low[off["turn"]] = 1 / 40.0
        abilities = [*cs.hijinks, *cs.events, *(a for d in cs.dragons for a in (d.play, d.crash))]
        most_picks = max(op.get("count", 1) for a in abilities for op in a.effect + a.bonus_effect)
        put(off["picks"], np.minimum(treasures, most_picks))
        return low, high

    def ability_index(self, ref) -> int:
        """Index in the 'ability' section: Hijinks kinds, then events, then innate abilities."""
        cs = self.cards
        if isinstance(ref, int):
            if cs.is_hijinks(ref):
                return ref - cs.first_hijinks
            return cs.n_hijinks + ref - cs.first_event
        return cs.n_hijinks + cs.n_events + 2 * ref[1] + (ref[2] == "crash")

    def _plan(self, seat: int, dragons: list[int], values: list[list[int]]) -> tuple:
        """What observe() needs that depends only on the seat, the dragons (and so the player
        count) and the game's treasure values, none of which change during a game.

        observe() lists the hoards and the per-seat scalars in absolute seat order, so that it
        need not rotate them; the tables and scalar slots here put each seat in its relative slot.
        """
        n = len(dragons)
        rel = [(p - seat) % n for p in range(n)]
        block = [self.offset["seats"] + r * self.seat_size for r in rel]
        so = self.seat_offset
        # the observation before anything is counted: 'present' and 'dragon' are fixed
        base = np.zeros(self.size, np.float32)
        for p in range(n):
            base[block[p] + so["present"]] = 1
            base[block[p] + so["dragon"] + dragons[p]] = 1
        # observe()'s pile list: the hand, the n hoards by absolute seat, the shared piles
        where = [0] + [1 + (seat + r) % n if r < n else None for r in range(MAX_SEATS)]
        where += range(n + 1, n + len(self._tables) - MAX_SEATS)
        tables = [None] * (n + len(self._tables) - MAX_SEATS)
        for i, table in enumerate(self._tables):
            if where[i] is not None:
                tables[where[i]] = table
        spaces = tuple((None if len(self._spaces) == 1 else
                        [where[i] for i in members if where[i] is not None],
                        np.array(dest, np.intp), len(dest))
                       for members, dest in self._spaces)
        # each seat's hoard worth, summed from a table of kind -> value like the pile counts
        rows = [values[d] for d in dragons]
        bytewise = self._bytewise and all(0 <= v < 256 for row in rows for v in row)
        worth = [bytes(row) + bytes(256 - len(row)) for row in rows] if bytewise else rows
        sidx = [block[p] + so[f] for f in _SEAT_SCALARS for p in range(n)]
        sidx += [self.offset[f] for f in ("havok_size", "hijinks_size", "turn")]
        is_current = [tuple(p == c for p in range(n)) for c in range(n)]
        return (values, bytewise, base, tables, spaces, worth, np.array(sidx, np.intp),
                is_current)

    def observe(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray]:
        # The env's hot path: measure any change. The piles are counted by _count_tables()'s byte
        # codes, the few dozen scalars written by one fancy assignment, and what depends only on
        # the seat and the dragons is cached by _plan().
        s = game.s
        dragons = s.dragons
        plan = self._plans.get((seat, *dragons))
        if plan is None or plan[0] is not game.values:  # the plan holds a value table
            plan = self._plans[(seat, *dragons)] = self._plan(seat, dragons, game.values)
        _, bytewise, base, tables, spaces, worth, sidx, is_current = plan
        obs = base.copy()

        n = s.num_players
        hoards = s.hoards
        piles = [s.hands[seat], *hoards, s.discard, s.trash, s.past_events,
                 [k for _, k in s.canceled] if s.canceled else (), s.havok]
        if bytewise:
            kinds = list(map(bytearray, piles))  # bytearray(list) is quicker than bytes(list)
            codes = list(map(bytearray.translate, kinds, tables))
            scores = [sum(b.translate(w)) / _WIN for b, w in zip(kinds[1:n + 1], worth)]
        else:  # kinds or values beyond a byte (never with the shipped cards)
            codes = [bytes(map(t.__getitem__, p)) for p, t in zip(piles, tables)]
            scores = [sum(map(row.__getitem__, h)) / _WIN for row, h in zip(worth, hoards)]
        for members, dest, n_codes in spaces:
            joined = b"".join(codes if members is None else [codes[i] for i in members])
            # cast before the scatter: a fancy assignment that also casts is much slower
            obs[dest] = np.bincount(np.frombuffer(joined, np.uint8), minlength=n_codes).astype(
                np.float32)

        used = s.cards_used
        obs[sidx] = [  # _SEAT_SCALARS, each by absolute seat, then havok_size, hijinks_size, turn
            *s.ready, *s.innate_used, *used,
            *[lim - u if lim > u and not r else 0  # cards_left; max() is a slow call
              for r, lim, u in zip(s.restricted, s.card_limit, used)],
            *s.restricted, *is_current[s.current], *[len(h) / _HAND for h in s.hands], *scores,
            len(s.havok) / 40.0, len(s.hijinks) / 40.0, s.turn / 40.0]

        # One-hot features, few enough that item assignments beat a fancy one: the top of the
        # Havok deck this seat saw, and the pending decision if the seat must decide.
        known = s.known[seat]
        if known:
            o, nh = self.offset["known_top"], self.n_havok
            for i, k in enumerate(known[:N_OPTIONS]):
                obs[o + i * nh + k] = 1
        p = s.pending
        if p is None or p["player"] != seat:
            return obs, np.zeros(self._n_actions, np.int8)
        for i in self._decision(p, seat, n):
            obs[i] += 1  # += as picks can repeat a treasure kind
        mask = bytearray(self._n_actions)
        for a in p["choices"]:
            mask[a] = 1
        # a writable int8 array over the bytearray, without a copy
        return obs, np.frombuffer(mask, np.int8)

    def _decision(self, p: dict, seat: int, n: int) -> list:
        """The observation slots of the pending decision (one-hot but for picks)."""
        off = self.offset
        ones = []
        ones.append(off["decision_kind"] + self._kind_index[p["kind"]])
        ones.append(off["purpose"] + self._purpose_index[p["purpose"]])
        ctx = p["context"]
        trig = ctx.get("trigger")
        if trig is not None:
            ones.append(off["trigger"] + self._trigger_index[trig["on"]])
            if "ability" in trig:
                ones.append(off["ability"] + self.ability_index(trig["ability"]))
            if "card" in trig:
                ones.append(off["trigger_card"] + trig["card"])
            actor = trig.get("user", trig.get("flipper", trig.get("to")))
            target = trig["owners"][0] if trig.get("owners") else None
            picks = trig.get("picks", ())
        else:
            if "ability" in ctx:
                ones.append(off["ability"] + self.ability_index(ctx["ability"]))
            actor, target, picks = ctx.get("actor"), ctx.get("target"), ctx.get("picks", ())
            o = off["shown"]
            ones.extend(o + i * self.n_havok + k for i, k in enumerate(ctx.get("shown", ())[:N_OPTIONS]))
        if actor is not None:
            ones.append(off["actor"] + (actor - seat) % n)
        if target is not None:
            ones.append(off["target"] + (target - seat) % n)
        o = off["picks"]
        ones.extend(o + k for k in picks)
        return ones
