"""Every chance event of a recorded game, with each of its possible outcomes.

:func:`trace` replays a record (``seed``, ``options``, ``actions``) and lists its *luck events*:

* a card's identity reaching anyone for the first time: the deal, a Havok flip of a card nobody has
  seen, a look at the top of the Havok deck (Foresight, Stargazing), a Hijinks draw. The outcome is
  uniform over the cards nobody has seen in that deck at that moment (the deck is a uniformly
  shuffled permutation, so its unseen part is a uniform permutation of the unseen cards whatever
  has been revealed and whatever anybody decided);
* every other use of the game's random generator: the dragons left to chance, the first player,
  the contest between crashes declared in one window (uniform over its range);
* the decisions of seats whose policy is known and random (the ``random`` bot: uniform over the
  legal actions).

Shuffling itself reveals nothing, so it is not an event: the cards it orders become events one by
one as they are revealed. For each event the tracer gives the state that follows each outcome,
up to the next event or decision (or the end), which is what a value function is evaluated on.

How the rules are watched: the game itself runs in the native core, which cannot be stopped inside
a move, so the replay runs on the project's Python rules (:mod:`evaluation.rules`, the engine the
core replaced), and every traced game is checked against the core's own replay of the record (the
same result and hoards; else :class:`TraceError`). It runs on :class:`_Probe`, a subclass of
:class:`evaluation.rules.engine.Game` whose ``flip_top`` and ``draw`` report each card before it leaves
its deck, and on a state whose ``rand_below`` reports every draw of the generator made outside a
shuffle. A plain replay is untouched, so seeded games stay the same byte for byte. An outcome other
than the one played is produced by rerunning the engine from the last decision with the revealed
card swapped with an unseen card of the other kind, in the same deck, at the moment it is revealed
(swapping two unseen cards keeps the deck a uniform permutation), or with the generator's answer
replaced; the rerun stops at the next event. Looks at the top of the Havok deck are always followed
at once by the looker's decision, so their outcomes are the decision's state with the cards
swapped. The deal and the first player happen before the first flip and are rebuilt from the
state there.

Which Havok cards somebody has seen is tracked here, not taken from the engine's per-seat
``known`` lists (a seat forgets, the table as a whole does not): the seen cards are always a run
at the top (looked at and still there) and a run at the bottom (cards put back under the deck after
being shown); between them lie the unseen ones.
"""

from __future__ import annotations

import itertools
from collections import Counter

from havok_env import engine as core

from .rules.engine import Game
from .rules.state import GameState


class TraceError(ValueError):
    """A record that cannot be traced (not a replay of this engine, or an illegal action)."""


class _Stop(Exception):
    """Raised by a probe at the event after the one it replaced: the rerun has gone far enough."""


# The watch of the run in progress (runs are short and never nested).
_watch = None


class _Seen:
    """Which cards of the Havok deck somebody has seen: the top ``top`` and the bottom ``bottom``
    cards; ``size`` is the deck's length when last reconciled (cards put under the deck since then
    are counted by the length they added)."""

    __slots__ = ("top", "bottom", "size")

    def __init__(self, top=0, bottom=0, size=0):
        self.top, self.bottom, self.size = top, bottom, size

    def copy(self) -> "_Seen":
        return _Seen(self.top, self.bottom, self.size)

    def sync(self, havok: list) -> None:
        self.bottom += len(havok) - self.size  # the only cards added to the Havok deck go under it
        self.size = len(havok)

    def unseen(self) -> range:
        return range(self.top, self.size - self.bottom)


# How to copy each field of the state (a hand-written copy is three times faster than the pickle
# round trip of GameState.clone, and probes copy a state for every outcome of every event): flat
# lists of ints, lists of them, or anything (nested dicts and lists, copied in full). A field added to
# GameState later is copied in full.
_FLAT = {"dragons", "havok", "hijinks", "discard", "past_events", "trash", "ready", "cards_used",
         "card_limit", "innate_used", "restricted", "in_play"}
_NESTED = {"hands", "hoards", "known"}
_ATOMS = {"num_players", "rng", "turn", "current", "log"}


def _deep(x):
    t = type(x)
    if t is list:
        return [_deep(v) for v in x]
    if t is dict:
        return {k: _deep(v) for k, v in x.items()}
    return x


_COPY = tuple((name, 0 if name in _ATOMS else 1 if name in _FLAT else 2 if name in _NESTED else 3)
              for name in GameState.__slots__)


class _ProbeState(GameState):
    """A game state whose generator reports every answer given outside a shuffle."""

    __slots__ = ()

    def rand_below(self, n: int) -> int:
        out = GameState.rand_below(self, n)
        return out if _watch is None else _watch.coin(n, out)

    def shuffle(self, cards: list) -> None:
        for i in range(len(cards) - 1, 0, -1):  # GameState.shuffle, drawing without reporting
            j = GameState.rand_below(self, i + 1)
            cards[i], cards[j] = cards[j], cards[i]

    def view(self, **changed) -> "_ProbeState":
        """A state sharing every field with this one but those given: for states that are only
        valued, never played on."""
        c = object.__new__(_ProbeState)
        for name in GameState.__slots__:
            setattr(c, name, changed[name] if name in changed else getattr(self, name))
        return c

    def copy(self) -> "_ProbeState":
        c = object.__new__(_ProbeState)
        for name, how in _COPY:
            v = getattr(self, name)
            setattr(c, name, v if how == 0 else v[:] if how == 1 else [x[:] for x in v] if how == 2
                    else _deep(v))
        return c


class _Probe(Game):
    """The engine, reporting each card before it leaves a deck (and, when checking, after)."""

    seen: _Seen | None = None

    def flip_top(self) -> int:
        _watch.flip(self)
        k = Game.flip_top(self)
        if _watch.check:
            _watch.done(self)
        return k

    def draw(self, p: int, n: int):
        s = self.s
        for _ in range(n):  # draw(p, n) is n single draws; each card is its own event
            if not s.hijinks and not s.discard:
                return
            _watch.before_draw(self, p)
            Game.draw(self, p, 1)
            _watch.after_draw(self, p)

    def copy(self) -> "_Probe":
        g = object.__new__(_Probe)
        g.__dict__.update(self.__dict__)
        g.s = self.s.copy()
        g.seen = self.seen.copy()
        return g


def _outcomes(cards) -> tuple[list[int], list[int]]:
    """The distinct kinds among ``cards`` (sorted) and how many of each."""
    c = Counter(cards)
    kinds = sorted(c)
    return kinds, [c[k] for k in kinds]


class Event:
    """One luck event: ``kind`` (``dragons``, ``deal``, ``first_player``, ``flip``, ``look``,
    ``draw``, ``coin`` or ``decision``), the ``seat`` it concerns (the card's receiver, the
    flipper, the decider; None for the dragons, the first player and a contest), the ``turn``, the
    possible ``outcomes`` (card kinds, dragon assignments, seats, generator answers or actions) with
    their probabilities ``weights[i] / total``, ``actual``, the index of the outcome that happened,
    ``node``, the index in :attr:`Trace.points` of the state just before it (the state just after
    the actual outcome is the next point), and ``action``: the index in the record's actions of the
    decision it is, or of the action that led to it (-1 before the first decision).

    ``after`` holds, once traced, the state after each outcome: a ``(GameState, top_seen)`` pair
    (``top_seen``: how many cards on top of the Havok deck somebody has seen), or the final
    rewards where the outcome ends the game."""

    __slots__ = ("kind", "seat", "turn", "outcomes", "weights", "actual", "node", "action", "after",
                 "immediate", "_where")

    def __init__(self, kind, seat, turn, outcomes, weights, actual, node, action, where):
        self.kind, self.seat, self.turn, self.action = kind, seat, turn, action
        self.outcomes, self.weights, self.actual = list(outcomes), list(weights), actual
        self.node = node
        self.after = None
        self.immediate = False  # whether the actual outcome is valued as soon as it is revealed
        self._where = where  # how to rebuild the state after an outcome (see _Tracer.after)

    @property
    def total(self) -> int:
        return sum(self.weights)

    def __repr__(self):
        return (f"Event({self.kind}, seat={self.seat}, turn={self.turn}, "
                f"{len(self.outcomes)} outcomes, actual={self.outcomes[self.actual]!r})")


class _Watch:
    """Watches one run of the engine on ``game``. Recording (``target is None``): lists the run's
    events, each as ``[kind, seat, outcomes, weights, actual, game before, game just after]`` (the
    last only for draws, and for flips when checking). Probing: lets the events before ``target``
    happen as played, makes event ``target`` come out as ``outcome`` and stops the run at the next
    event (``target == -1``: at the first one)."""

    def __init__(self, game=None, target=None, outcome=None, check=False):
        self.game, self.target, self.outcome, self.check = game, target, outcome, check
        self.n = 0
        self.events: list[list] = []
        self.setup = None  # recording the construction: the game at its first flip
        self.arrange = None
        self._swap_draw = self._flipped = False

    def _event(self) -> bool:
        """Count an event; True if this run must make it come out as ``outcome``."""
        k = self.n
        self.n += 1
        if self.target is None:
            return False
        if k == self.target + 1:
            raise _Stop
        return k == self.target

    def flip(self, g: _Probe) -> None:
        s, seen = g.s, g.seen
        if seen is None:  # the first flip of the game: setup is over
            if self.arrange is not None:
                self.arrange(s)
            seen = g.seen = _Seen(size=len(s.havok))
            s.__class__ = _ProbeState
            if self.target is None:
                self.setup = g.copy()
        seen.sync(s.havok)
        if seen.top:
            seen.top -= 1
        elif seen.size - seen.bottom == 0:
            seen.bottom -= 1  # the top is a card that was put under the deck after being shown
        else:
            end = seen.size - seen.bottom
            if self.target is None:
                kinds, counts = _outcomes(s.havok[:end])
                flipper = s.stack[-1].get("you", s.current)  # the turn's flip has no "you"
                self.events.append(["flip", flipper, kinds, counts, kinds.index(s.havok[0]), g.copy(),
                                    None])
                self._flipped = True
            if self._event() and s.havok[0] != self.outcome:
                j = s.havok.index(self.outcome, 0, end)
                s.havok[0], s.havok[j] = s.havok[j], s.havok[0]
        seen.size -= 1

    def done(self, g: _Probe) -> None:
        if self._flipped:
            self.events[-1][6] = g.copy()
            self._flipped = False

    def before_draw(self, g: _Probe, p: int) -> None:
        self._swap_draw = self._event()
        if self.target is None:
            self.events.append(["draw", p, None, None, None, g.copy(), None])

    def after_draw(self, g: _Probe, p: int) -> None:
        s = g.s
        drawn = s.hands[p][-1]
        if self.target is None:  # the outcomes are known once a reshuffle, if any, is done
            kinds, counts = _outcomes(s.hijinks + [drawn])
            self.events[-1][2:7] = kinds, counts, kinds.index(drawn), self.events[-1][5], g.copy()
        elif self._swap_draw and drawn != self.outcome:
            j = s.hijinks.index(self.outcome)
            s.hands[p][-1], s.hijinks[j] = s.hijinks[j], drawn

    def coin(self, n: int, out: int) -> int:
        if self.target is None:
            self.events.append(["coin", None, list(range(n)), [1] * n, out, self.game.copy(), None])
        return self.outcome if self._event() else out


def _run(fn, watch: _Watch) -> None:
    global _watch
    _watch = watch
    try:
        fn()
    except _Stop:
        pass
    finally:
        _watch = None


def _construct(record: dict, watch: _Watch) -> None:
    g = watch.game = object.__new__(_Probe)
    try:
        Game.__init__(g, seed=record["seed"], **record["options"])
    except (TypeError, KeyError, ValueError) as e:
        raise TraceError(f"not a game record ({type(e).__name__}: {e})") from None


def _apply(g: _Probe, action: int) -> None:
    """``g.apply(action)``, keeping track of a seen Havok card put under the deck."""
    s = g.s
    if s.pending["purpose"] == "bottom" and action != g.END and len(s.havok) > 1:
        seen = g.seen
        seen.sync(s.havok)
        if action - g.OPTION < seen.top:  # else it is one of the bottom cards, and stays one
            seen.top -= 1
            seen.bottom += 1
    g.apply(action)
    g.seen.sync(s.havok)


def _agree(record: dict, g: _Probe) -> None:
    """Refuse a game on which the tracer's rules and the core's disagree."""
    try:
        ref = core.Game.replay(record)
    except (TypeError, KeyError, ValueError) as e:
        raise TraceError(f"not a game record ({type(e).__name__}: {e})") from None
    mine = (g.s.result, [g.score(p) for p in range(g.num_players)], g.pending is None)
    theirs = (ref.result, ref.scores(), ref.pending is None)
    if mine != theirs:
        raise TraceError("the luck tracer's rules (evaluation/rules) and the native core replay this "
                         "record differently; the tracer's copy of the rules needs the core's change")


def _settled(g: _Probe):
    """What a value function is evaluated on after an outcome: the rewards if the game is over."""
    if g.s.result is not None:
        return g.rewards()
    return (g.s, g.seen.top)


class Trace:
    """A traced game: ``events`` in the order they happened, the final ``rewards`` (None if the
    record stops before the end), ``num_players``, and ``decisions``: the state at each decision,
    as ``(GameState, top_seen)``. With ``check``, ``points`` lists every state the replay went
    through where something happened (before each event and decision, then the end) and
    ``just_after`` the state right after each flip or draw as played, to test the outcomes
    against."""

    def __init__(self, events, rewards, num_players, decisions, points=None, just_after=None):
        self.events, self.rewards, self.num_players = events, rewards, num_players
        self.decisions, self.points, self.just_after = decisions, points, just_after

    def path(self) -> list:
        """With ``check``: every state where the value is taken on the way the game went, in
        order (each point, and after a card valued as soon as it is revealed, the state just
        after it), then the final rewards."""
        by_node = {ev.node: ev for ev in self.events}
        out = []
        for t in range(1, len(self.points) - 1):
            out.append(self.points[t])
            ev = by_node.get(t)
            if ev is not None and ev.immediate:
                out.append(ev.after[ev.actual])
        out.append(self.points[-1])
        return out


def trace(record: dict, random_seats=(), check: bool = False, every_outcome: bool = True,
          arrange=None) -> Trace:
    """Replay ``record`` and list its luck events, the decisions of ``random_seats`` (seats played
    by the uniformly random bot) included, each with the state after every outcome (see
    :class:`Event`; with ``every_outcome=False`` only after the actual one, the others None: what
    fitting a value function needs). Raises :class:`TraceError` for a record this engine cannot
    replay.

    ``arrange(state)``, if given, may reorder the decks (and reseed the generator) once the deal is
    done, before the first flip: the tests use it to play the same game with other unseen cards."""
    return _Tracer(record, set(random_seats), check, every_outcome, arrange).run()


class _Tracer:
    def __init__(self, record, random_seats, check, every_outcome=True, arrange=None):
        if not isinstance(record, dict) or not {"seed", "options", "actions"} <= set(record) \
                or not isinstance(record["options"], dict) or not isinstance(record["actions"], list):
            raise TraceError("not a game record: it needs 'seed', 'options' and a list of 'actions'")
        self.record = record
        self.random_seats = random_seats
        self.check = check
        self.every_outcome = every_outcome
        self.arrange = arrange
        self.events: list[Event] = []
        self.action = -1
        self.decisions: list = []
        self.points: list = [None]
        self.just_after: dict = {}

    def event(self, kind, seat, turn, outcomes, weights, actual, where) -> Event:
        ev = Event(kind, seat, turn, outcomes, weights, actual, len(self.points) - 1, self.action, where)
        self.events.append(ev)
        return ev

    def point(self, g: _Probe, top: int | None = None) -> None:
        if self.check:
            self.points.append((g.s, g.seen.top if top is None else top))

    # -- the played game ---------------------------------------------------------------------------

    def run(self) -> Trace:
        rec = self.record
        watch = _Watch(check=self.check)
        watch.arrange = self.arrange
        _run(lambda: _construct(rec, watch), watch)
        g = watch.game
        if watch.setup is None:
            raise TraceError("not a game record: the game never started")
        self.cards = g.cards
        self.setup_events(watch.setup)
        # Events before the first decision are rerun from the state where the first turn begins.
        start = watch.setup.copy()
        start.s.turn = 0
        start.s.stack = [{"f": "turn", "step": "start"}]
        self.recorded(watch, (start, None))
        self.looks(g)
        for i, a in enumerate(rec["actions"]):
            s = g.s
            if s.pending is None:
                raise TraceError(f"action {i} ({a!r}): the game is already over")
            if isinstance(a, bool) or a not in s.pending["choices"]:
                raise TraceError(f"action {i} ({a!r}) is not legal in the replayed game")
            a = int(a)
            self.action = i
            before = g.copy()
            self.point(before)
            self.decisions.append((before.s, before.seen.top))
            seat = s.pending["player"]
            if seat in self.random_seats:
                choices = list(s.pending["choices"])
                self.event("decision", seat, s.turn, choices, [1] * len(choices), choices.index(a),
                           ("decision", before))
            watch = _Watch(g, check=self.check)
            _run(lambda a=a: _apply(g, a), watch)
            self.recorded(watch, (before, a))
            self.looks(g)
        rewards = g.rewards() if g.is_over else None
        _agree(rec, g)
        if self.check:
            self.points.append(rewards if rewards is not None else (g.s, g.seen.top))
        for ev in self.events:
            o = ev.outcomes[ev.actual]
            ev.immediate = ev.kind == "draw" or ev.kind == "flip" and self.cards.is_treasure(o)
            if self.every_outcome:
                ev.after = [self.after(ev, o) for o in ev.outcomes]
            else:
                ev.after = [None] * len(ev.outcomes)
                ev.after[ev.actual] = self.after(ev, ev.outcomes[ev.actual])
            ev._where = None  # the copies it holds are no longer needed
        return Trace(self.events, rewards, g.num_players, self.decisions, self.points if self.check else None,
                     self.just_after if self.check else None)

    def recorded(self, watch: _Watch, rerun) -> None:
        for c, (kind, seat, kinds, counts, actual, before, just_after) in enumerate(watch.events):
            self.point(before)
            ev = self.event(kind, seat, before.s.turn, kinds, counts, actual, (kind, rerun, c, before, just_after))
            if self.check and just_after is not None:
                self.just_after[id(ev)] = (just_after.s, just_after.seen.top)

    def looks(self, g: _Probe) -> None:
        """A look at the Havok top has just happened if the looker must now decide what to put
        under the deck: one event per card nobody had seen, top first."""
        s = g.s
        p = s.pending
        if p is None or p["purpose"] != "bottom":
            return
        seen = g.seen
        end = seen.size - seen.bottom
        for m in range(seen.top, min(len(p["context"]["shown"]), end)):
            kinds, counts = _outcomes(s.havok[m:end])
            before = g.copy()
            self.point(before, m)
            self.event("look", p["player"], s.turn, kinds, counts, kinds.index(s.havok[m]),
                       ("look", before, m))
            seen.top = m + 1

    def setup_events(self, g: _Probe) -> None:
        """The dragons left to chance, the deal and the first player: all decided before the first
        flip, whose state ``g`` is."""
        s, cs = g.s, g.cards
        n = s.num_players
        named = self.record["options"].get("dragons") or [None] * n
        free_seats = [i for i in range(n) if named[i] is None]
        self.deck = [k for k in range(cs.first_hijinks, cs.n_kinds) for _ in range(cs.copies[k])]
        if free_seats:
            taken = {s.dragons[i] for i in range(n) if named[i] is not None}
            free = [d for d in range(len(cs.dragons)) if d not in taken]
            picks = list(itertools.permutations(free, len(free_seats)))
            ev = self.event("dragons", None, 0, picks, [1] * len(picks),
                            picks.index(tuple(s.dragons[i] for i in free_seats)), ("dragons", g, free_seats))
            if self.check:
                self.points.append(self.after(ev, ev.outcomes[ev.actual]))
        dealt = [[] for _ in range(n)]
        pool = Counter(self.deck)
        for r in range(len(s.hands[0])):
            for p in range(n):
                card = s.hands[p][r]
                kinds = sorted(pool)
                ev = self.event("deal", p, 0, kinds, [pool[k] for k in kinds], kinds.index(card),
                                ("deal", g, [list(h) for h in dealt], p))
                if self.check:
                    self.points.append(self.after(ev, card))
                dealt[p].append(card)
                pool[card] -= 1
                if not pool[card]:
                    del pool[card]
        # its state after is the first flip's state before, which the recording adds
        self.event("first_player", None, 0, list(range(n)), [1] * n, s.current, ("first", g))

    # -- every outcome -----------------------------------------------------------------------------

    def after(self, ev: Event, o):
        """The state after outcome ``o`` of ``ev`` (see :attr:`Event.after`)."""
        where = ev._where
        how = where[0]
        # A drawn card and a flipped treasure change nothing until somebody decides, or go where the
        # value function can see they are going (the hoard of the seat they were flipped for), so
        # they are valued at once: rerunning the engine for each of them would take most of the
        # time for little. Flipped events, contests and decisions are valued where the engine,
        # carrying on, next stops (a decision, another event or the end): their effect is what the
        # engine does next. Any such rule keeps every correction's expectation zero, as the state
        # valued follows from the game so far and the outcome alone.
        if how == "draw":
            g, p = where[4], ev.seat  # the game just after the draw as played
            s = g.s
            drawn = s.hands[p][-1]
            if drawn == o:
                return (s, g.seen.top)
            hands, hijinks = [h[:] for h in s.hands], s.hijinks[:]
            j = hijinks.index(o)
            hands[p][-1], hijinks[j] = o, drawn
            return (s.view(hands=hands, hijinks=hijinks), g.seen.top)
        if how == "flip" and self.cards.is_treasure(o):
            g = where[3]  # the game just before the flip
            s = g.s
            havok = s.havok[:]
            j = havok.index(o, 0, g.seen.size - g.seen.bottom)
            havok[0], havok[j] = havok[j], havok[0]
            del havok[0]
            # as Game.flip_top: the card is in play; the seats' knowledge of the top does not matter
            # to the value (which reads who has seen what from top_seen)
            return (s.view(havok=havok, in_play=s.in_play + [o]), g.seen.top)
        if how in ("flip", "coin"):
            (before, a), c = where[1], where[2]
            g = before.copy()
            watch = _Watch(g, c, o)
            _run((lambda: _apply(g, a)) if a is not None else g._advance, watch)
            return _settled(g)
        if how == "decision":
            g = where[1].copy()
            _run(lambda: _apply(g, o), _Watch(g, -1))
            return _settled(g)
        g = where[1]
        s = g.s
        if how == "look":
            m = where[2]
            havok = s.havok[:]
            j = havok.index(o, m, g.seen.size - g.seen.bottom)
            havok[m], havok[j] = havok[j], havok[m]
            return (s.view(havok=havok), m + 1)
        if how == "first":
            return (s.view(current=o), 0)
        # the deal: no turn has begun and nobody is the current player yet
        if how == "dragons":
            dragons = list(s.dragons)
            for seat, d in zip(where[2], o):
                dragons[seat] = d
            hands = [[] for _ in range(s.num_players)]
        else:
            dragons = s.dragons
            hands = [list(h) for h in where[2]]
            hands[where[3]].append(o)
        rest = list(self.deck)
        for h in hands:
            for k in h:
                rest.remove(k)
        return (s.view(turn=0, current=-1, stack=[], hands=hands, hijinks=rest, dragons=dragons), 0)
