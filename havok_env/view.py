"""What one seat may know: a read-only view of a game for bots, and determinization for search.

A :class:`SeatView` exposes only public information and the seat's own hand and knowledge
(rules.md, "Information"). :meth:`SeatView.determinize` deals a full game consistent with that
information (other hands, deck orders, hidden crash declarations and the random generator are
resampled), which a search bot can play forward with the engine, or in the core with
:func:`rollout` and :func:`rollouts` (all of a world's actions in one call), drawing from its
generator copied into the core for the decision (:func:`core_random`).
"""

from __future__ import annotations

import random
from collections import Counter
from contextlib import contextmanager

from . import _core
from .engine import ArgumentError, Game, check_index


class SeatView:
    """Read-only, seat-limited view of a :class:`~havok_env.engine.Game`."""

    def __init__(self, game, seat: int):
        if not isinstance(game, Game):
            raise ArgumentError(f"game must be a Game, not {type(game).__name__}")
        self._game = game
        self.seat = game._seat(seat)
        self.cards = game.cards
        self.layout = game.layout
        self.num_players = game.num_players
        self._values = None

    # -- public state -------------------------------------------------------------------------

    @property
    def _s(self):
        return self._game.s

    @property
    def turn(self) -> int:
        return self._s.turn

    @property
    def current_player(self) -> int:
        return self._s.current

    @property
    def is_over(self) -> bool:
        return self._s.result is not None

    @property
    def result(self) -> dict | None:
        return self._s.result

    @property
    def hand(self) -> list[int]:
        return list(self._s.hands[self.seat])

    def hand_size(self, seat: int) -> int:
        return len(self._s.hands[self._game._seat(seat)])

    def hoard(self, seat: int) -> list[int]:
        return list(self._s.hoards[self._game._seat(seat)])

    def dragon(self, seat: int):
        return self._game.dragon(seat)

    def dragon_index(self, seat: int) -> int:
        return self._s.dragons[self._game._seat(seat)]

    def ready(self, seat: int) -> bool:
        return self._s.ready[self._game._seat(seat)]

    def innate_used(self, seat: int) -> bool:
        return self._s.innate_used[self._game._seat(seat)]

    def cards_used(self, seat: int) -> int:
        """How many Hijinks cards ``seat`` has used this turn."""
        return self._s.cards_used[self._game._seat(seat)]

    def restricted(self, seat: int) -> bool:
        """Whether ``seat`` is Lost in the Woods this turn (no cards, no innate play)."""
        return self._s.restricted[self._game._seat(seat)]

    def seat_name(self, seat: int) -> str:
        return self._game.seat_name(seat)

    def ability(self, ref):
        """A card kind (event or Hijinks) or ["innate", dragon, "play"|"crash"] -> its Ability."""
        return self._game.ability(ref)

    def cards_left(self, seat: int) -> int:
        """How many more Hijinks cards ``seat`` may use this turn."""
        s, seat = self._s, self._game._seat(seat)
        return 0 if s.restricted[seat] else max(0, s.card_limit[seat] - s.cards_used[seat])

    def value(self, owner: int, kind: int) -> int:
        return self._game.value(owner, kind)

    @property
    def values(self) -> tuple:
        """Treasure value tables by seat (public): ``values[seat][kind] == value(seat, kind)``.

        A read-only fast path for bots that price many treasure moves per decision.
        """
        if self._values is None:
            rows = self._game.values
            self._values = tuple(tuple(rows[d]) for d in self._s.dragons)
        return self._values

    def score(self, seat: int) -> int:
        return self._game.score(seat)

    def scores(self) -> list[int]:
        return self._game.scores()

    @property
    def discard(self) -> list[int]:
        return list(self._s.discard)

    @property
    def trash(self) -> list[int]:
        return list(self._s.trash)

    @property
    def past_events(self) -> list[int]:
        return list(self._s.past_events)

    @property
    def log(self) -> list[str]:
        """The game's log of public events so far, oldest first (empty when the game keeps none)."""
        return list(self._s.log or ())

    @property
    def canceled(self) -> list[tuple[int, int]]:
        """Canceled cards waiting to return to their owners at the end of the turn: (owner, kind)."""
        return [(o, k) for o, k in self._s.canceled]

    @property
    def havok_size(self) -> int:
        return len(self._s.havok)

    @property
    def hijinks_size(self) -> int:
        return len(self._s.hijinks)

    def havok_remaining(self) -> Counter:
        """Composition of the Havok deck (public by elimination)."""
        return Counter(self._s.havok)

    @property
    def known_top(self) -> list[int]:
        """Havok cards this seat has seen on top of the deck, top first, while still there."""
        return list(self._s.known[self.seat])

    def unseen_hijinks(self) -> Counter:
        """Hijinks cards this seat cannot see: other hands and the Hijinks deck together."""
        s = self._s
        out = Counter(s.hijinks)
        for q in range(self.num_players):
            if q != self.seat:
                out.update(s.hands[q])
        return out

    # -- the decision -------------------------------------------------------------------------

    @property
    def to_act(self) -> int | None:
        return self._game.to_act

    @property
    def pending(self) -> dict | None:
        """The pending decision if it is this seat's, else None."""
        p = self._s.pending
        if p is None or p["player"] != self.seat:
            return None
        return {"player": p["player"], "kind": p["kind"], "purpose": p["purpose"],
                "choices": list(p["choices"]), "context": p["context"]}

    def legal_actions(self) -> list[int]:
        p = self._s.pending
        return list(p["choices"]) if p is not None and p["player"] == self.seat else []

    def action_label(self, action: int) -> str:
        return self._game.action_label(action)

    # -- what an action means (the engine's encoding: engine.ActionLayout) ----------------------

    def _action(self, action) -> int:
        return check_index(action, "action", self.layout.size, "an action")

    def is_card(self, action: int) -> bool:
        """Does ``action`` play, crash with or take a Hijinks card (see :meth:`card_of`)?"""
        lay = self.layout
        return lay.PLAY <= self._action(action) < lay.INNATE_PLAY

    def card_action(self, kind: int) -> int:
        return self._game.card_action(kind)

    def card_of(self, action: int) -> int:
        """The Hijinks card kind that ``action`` plays, crashes with or takes."""
        return self._game.card_of(action)

    def is_discard(self, action: int) -> bool:
        """Does ``action`` discard a Hijinks card and draw (see :meth:`discard_of`)?"""
        lay = self.layout
        return lay.DISCARD <= self._action(action) < lay.SEAT

    def discard_action(self, kind: int) -> int:
        return self._game.discard_action(kind)

    def discard_of(self, action: int) -> int:
        return self._game.discard_of(action)

    def seat_action(self, seat: int) -> int:
        """The action by which this seat targets ``seat`` (actions name seats relative to it)."""
        return self._game.seat_action(self.seat, seat)

    def seat_of(self, action: int) -> int:
        """The seat that this seat's ``action`` targets."""
        return self._game.seat_from_action(self.seat, action)

    def is_treasure(self, action: int) -> bool:
        """Does ``action`` target a treasure kind (see :meth:`treasure_of`)?"""
        lay = self.layout
        return lay.TREASURE <= self._action(action) < lay.OPTION

    def treasure_action(self, kind: int) -> int:
        return self._game.treasure_action(kind)

    def treasure_of(self, action: int) -> int:
        return self._game.treasure_of(action)

    def is_option(self, action: int) -> bool:
        """Does ``action`` pick an option (see :meth:`option_of`)?"""
        lay = self.layout
        return lay.OPTION <= self._action(action) < lay.size

    def option_action(self, i: int) -> int:
        return self.layout.OPTION + check_index(i, "i", self.layout.N_OPTIONS, "an option")

    def option_of(self, action: int) -> int:
        """Which option (0 = the first, e.g. the top card shown) ``action`` picks."""
        lay = self.layout
        return check_index(action, "action", lay.N_OPTIONS, "an option action", lay.OPTION) - lay.OPTION

    # -- the targeting rules (the core's, through Game), on public information --------------------------
    # The effects ask with these functions; a bot that judges a card with them judges the same
    # targets the engine will offer. They read only seats, scores, hoards and the trash heap.

    def victims(self, you: int, actor: int, selector: str) -> list[int]:
        """Seats a steal, break or trade by ``actor`` for ``you`` may target with ``selector``."""
        return self._game.victims(you, actor, selector)

    def thief(self, you: int, op: dict) -> int:
        return self._game.thief(you, op)

    def eligible(self, owner: int, max_value: int, exclude: list[int] = ()) -> list[int]:
        """Distinct kinds in ``owner``'s hoard worth at most ``max_value`` to it, ascending (one
        copy of each kind in ``exclude`` set aside)."""
        return self._game.eligible(owner, max_value, exclude)

    def trade_gives(self, you: int, op: dict) -> list[int]:
        return self._game.trade_gives(you, op)

    def trade_takes(self, you: int, victim: int, op: dict) -> list[int]:
        return self._game.trade_takes(you, victim, op)

    def trade_gives_for(self, you: int, victim: int, take: int, op: dict) -> list[int]:
        return self._game.trade_gives_for(you, victim, take, op)

    # (op, a take's value to the victim) -> the least a give must be worth to you
    def trade_min_give(self, op: dict, take_value: int) -> int:
        return self._game.trade_min_give(op, take_value)

    def salvage_options(self, op: dict) -> list[int]:
        return self._game.salvage_options(op)

    def redirect_seats(self, flipper: int, op: dict) -> list[int]:
        return self._game.redirect_seats(flipper, op)

    def tribute_seats(self, you: int) -> tuple[int, int] | None:
        return self._game.tribute_seats(you)

    def pass_seats(self, you: int, op: dict) -> list[int]:
        return self._game.pass_seats(you, op)

    # -- bots in the core ----------------------------------------------------------------------

    def native_choice(self, bot) -> int:
        """The choice of a bot that plays in the core (``havok_env._core.Heuristic``) at this
        seat's pending decision; the core hands it only what this seat may know."""
        if not isinstance(bot, _core.Heuristic):
            raise ArgumentError(f"bot must be a bot of the core (havok_env._core.Heuristic), not "
                                f"{type(bot).__name__}")
        return bot.choose(self._game._core, self.seat)

    # -- search support -----------------------------------------------------------------------

    def determinize(self, rng: random.Random):
        """A full game that agrees with everything this seat knows; the hidden rest is sampled.

        Other hands, the Hijinks deck, the unseen part of the Havok deck, hidden crash
        declarations and choices, and the game's generator are resampled. The hidden cards are
        pooled in sorted order before shuffling, so the sample depends only on what the seat knows
        and on ``rng``.

        The draws are the core's (``_core.determinize``): Python's own ``random.Random``
        shuffles, ``getrandbits(64)`` for the world's generator and ``choice`` for hidden Tidal
        Shift choices, run on a copy of ``rng``'s state (:func:`core_random`), which is written
        back. ``rng`` may also be such a copy itself, which draws the same numbers without the
        copying in and out.
        """
        if rng.__class__ is not _core.Random:
            with core_random(rng, "determinize") as core:
                return SeatView.determinize(self, core)  # (SeatView's: a PeekingView puts back what it peeks at)
        g = self._game.clone()
        _core.determinize(g._core, self.seat, rng)
        return g


def rollout(world, seat: int, max_turns: int | None, margin_weight: float, rng=None,
            leaf=None) -> tuple[float, int]:
    """Play a search rollout in the core, in place: ``world`` (a game, typically a determinized
    one) is played on with the core's heuristic in every seat, or with ``rng`` (a random.Random or
    a :func:`core_random` generator) given, with uniformly random legal actions drawn from ``rng``
    (as ``rng.randrange``) in the seats but ``seat``, for ``max_turns`` turns (None: to the end).
    Returns (the outcome for ``seat``: +1 a win, 0 a draw, -1 a loss, an unfinished game its
    margin / 8 clipped to +-1, or with ``leaf`` (a value model's ``leaf``,
    :class:`agents.value.ValueModel`) its network's value of the seat's features row, plus
    ``margin_weight`` times the margin; the decisions played). The GIL is released meanwhile."""
    if rng is not None and rng.__class__ is not _core.Random:
        with core_random(rng, "rollout") as core:
            return rollout(world, seat, max_turns, margin_weight, core, leaf)
    return _core.rollout(world._core, seat, -1 if max_turns is None else max_turns, margin_weight, rng, leaf)


def rollouts(world, actions: list[int], seat: int, max_turns: int | None, margin_weight: float,
             rng=None, leaf=None) -> tuple[list[float], list[int]]:
    """:func:`rollout` of each of ``actions`` in ``world``, in one call to the core: for each, in
    order, a copy of ``world`` (which is left as it is) with the action taken is played out.
    ``rng`` (a :func:`core_random` generator) draws for the random players, one rollout after
    the other; ``leaf`` values the unfinished ones as :func:`rollout` says. Returns (the
    outcomes, the decisions each rollout played)."""
    return _core.rollouts(world._core, actions, seat, -1 if max_turns is None else max_turns,
                          margin_weight, rng, leaf)


@contextmanager
def core_random(rng: random.Random, user: str = "core_random"):
    """``rng``'s generator copied into the core for a run of draws (``with core_random(rng) as
    r``: :meth:`SeatView.determinize`, :func:`rollout`, :func:`rollouts` and ``r.shuffle`` draw
    from ``r`` as they would from ``rng``), written back into ``rng`` at the end, on an error too.
    The core draws only from such a copy; those given ``rng`` itself make one for the call. A
    search samples thousands of worlds per decision, and reading and writing a random.Random's
    625-word state at every one of them was a tenth of its time. Anything but a random.Random with
    a state is a TypeError naming ``user``. (The core moves the copy only for a call that
    succeeds, so writing it back after an error leaves ``rng`` where that call found it.)"""
    if not isinstance(rng, random.Random):
        raise ArgumentError(f"{user} needs a random.Random, not {type(rng).__name__}")
    try:
        version, words, gauss = rng.getstate()
    except (NotImplementedError, TypeError, ValueError):  # random.SystemRandom has no state
        raise ArgumentError(f"{user} needs a random.Random with a state, not {type(rng).__name__}") from None
    core = _core.Random(words)
    try:
        yield core
    finally:
        rng.setstate((version, core.state(), gauss))


class PeekingView(SeatView):
    """A seat's view that sees MORE than the seat may: not fair play, only for measuring how much
    hidden information is worth (benchmarks/luck_cap.py). No bot may use one to play.

    It is made from the game itself, ``PeekingView(game, seat, peek)``, or from a fair view with
    :meth:`behind`. Everything reads as in :class:`SeatView` except :meth:`determinize`, whose
    worlds keep true what ``peek`` names: ``"hands"`` the others' hands and the hidden crash
    declarations (only the decks' order and the game's generator are resampled); ``"crash"`` the
    crash cards in the others' hands and the hidden declarations (the rest of each hand is dealt
    from the unseen cards that are not crash cards); ``"all"`` the whole game.
    """

    PEEKS = ("hands", "crash", "all")

    def __init__(self, game, seat: int, peek: str):
        if peek not in self.PEEKS:
            raise ValueError(f"peek must be one of {', '.join(self.PEEKS)}, not {peek!r}")
        super().__init__(game, seat)
        self.peek = peek

    @classmethod
    def behind(cls, view: SeatView, peek: str) -> "PeekingView":
        """A peeking view of the game behind the fair ``view``, for the same seat."""
        return cls(view._game, view.seat, peek)

    def determinize(self, rng: random.Random):
        truth = self._game.clone()
        if self.peek == "all":
            return truth
        g = super().determinize(rng)  # a fair sample, then what is peeked at put back
        s, t = g.s, truth.s
        cards = truth.cards
        kept = ((lambda k: True) if self.peek == "hands"
                else (lambda k: cards.card(k).kind == "crash"))
        others = [q for q in range(self.num_players) if q != self.seat]
        unseen = Counter(t.hijinks)
        for q in others:
            unseen.update(t.hands[q])
            s.hands[q] = [k for k in t.hands[q] if kept(k)]
            unseen.subtract(s.hands[q])
        # The rest of each hand comes from the unseen cards the peek would have shown if held.
        fillers = sorted(k for k in unseen.elements() if not kept(k))
        rng.shuffle(fillers)
        for q in others:
            fill = fillers[: len(t.hands[q]) - len(s.hands[q])]
            fillers = fillers[len(fill):]
            s.hands[q] += fill
            unseen.subtract(fill)
        deck = sorted(unseen.elements())
        rng.shuffle(deck)
        s.hijinks = deck
        s.stack = t.stack
        return g
