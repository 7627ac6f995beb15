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
  legal actions);
* with ``sample``, the decisions of seats whose policy draws on a generator of its own (the search
  bot): their distribution is not known in closed form, so it is estimated by asking the policy
  again with independent draws, and the outcomes are those answers, each weighted by how often it
  came (the action taken among them, weight 0 if none gave it). The estimate of the expected value
  is then an average over independent draws of the same distribution as the action taken, so the
  correction keeps expectation zero.

Shuffling itself reveals nothing, so it is not an event: the cards it orders become events one by
one as they are revealed. For each event the tracer gives the state that follows each outcome,
up to the next event or decision (or the end), which is what a value function is evaluated on.

How the rules are watched: the game runs in the native core, the one implementation of the rules,
through its chance points (:meth:`havok_env.engine.Game.run_chance`): a move is played with every
flip of a Havok card, every single Hijinks draw and every answer of the generator outside a shuffle
listed, with the state before each (and after each flip and draw). An outcome other than the one
played is produced by running the move again from the last decision with that point forced: the
revealed card swapped with an unseen card of the other kind, in the same deck, at the moment it is
revealed (swapping two unseen cards keeps the deck a uniform permutation), or the generator's
answer replaced; the rerun stops just before the next event, leaving the state there to be valued.
A plain replay is untouched, so seeded games stay the same byte for byte. Looks at the top of the
Havok deck are always followed at once by the looker's decision, so their outcomes are the
decision's state with the cards swapped. The deal and the first player happen before the first
flip and are rebuilt from the state there.

Which Havok cards somebody has seen is tracked here, not taken from the engine's per-seat
``known`` lists (a seat forgets, the table as a whole does not): the seen cards are always a run
at the top (looked at and still there) and a run at the bottom (cards put back under the deck after
being shown); between them lie the unseen ones.
"""


from __future__ import annotations

import itertools
from collections import Counter

from havok_env.engine import Game


class TraceError(ValueError):
    """A record that cannot be traced (not a replay of this engine, or an illegal action)."""


class _Seen:
    """Which cards of the Havok deck somebody has seen: the top ``top`` and the bottom ``bottom``
    cards; ``size`` is the deck's length when last reconciled (cards put under the deck since then
    are counted by the length they added)."""

    __slots__ = ("top", "bottom", "size")

    def __init__(self, top=0, bottom=0, size=0):
        self.top, self.bottom, self.size = top, bottom, size

    def copy(self) -> "_Seen":
        return _Seen(self.top, self.bottom, self.size)

    def sync(self, size: int) -> None:
        self.bottom += size - self.size  # the only cards added to the Havok deck go under it
        self.size = size

    def flip(self, size: int) -> int | None:
        """The top card leaves the Havok deck, of ``size`` cards just before: None if somebody had
        seen it, else where the unseen cards end (they lie from the top to there)."""
        self.sync(size)
        end = None
        if self.top:
            self.top -= 1
        elif self.size == self.bottom:
            self.bottom -= 1  # the top is a card that was put under the deck after being shown
        else:
            end = self.size - self.bottom
        self.size -= 1
        return end

    def put_under(self, state, action: int, game: Game) -> None:
        """Before ``action`` is taken at ``state``: a seen card put under the deck stays seen."""
        p = state.pending
        if p["purpose"] == "bottom" and action != game.END and len(state.havok) > 1:
            self.sync(len(state.havok))
            if action - game.OPTION < self.top:  # else it is one of the bottom cards, and stays one
                self.top -= 1
                self.bottom += 1


class _State:
    """A game's state as plain data (the fields of :meth:`havok_env.engine.Game.fields`, as
    attributes): what the value function reads."""

    def __init__(self, fields: dict):
        self.__dict__ = fields  # a fresh dict from the core, owned from now on

    def view(self, **changed) -> "_State":
        """A state sharing every field with this one but those given (states that are only valued)."""
        c = object.__new__(_State)
        c.__dict__ = {**self.__dict__, **changed}
        return c


# the fields an ``arrange`` may change (GameState writes them back to the core, checked)
_ARRANGED = ("rng", "turn", "current", "havok", "hijinks", "discard", "past_events", "trash", "in_play",
             "canceled", "hands", "hoards", "known", "ready", "innate_used", "restricted", "cards_used",
             "card_limit")


class _Node:
    """Where a move starts and is rerun from: the game (at a decision, or before its first move),
    the seen Havok cards, its state, the move played (None: the first, from the deal) and, on the
    way the game went, the index of that move in the record (-1: the first; None: elsewhere)."""

    __slots__ = ("game", "seen", "state", "action", "index")

    def __init__(self, game, seen, state, action, index=None):
        self.game, self.seen, self.state, self.action, self.index = game, seen, state, action, index


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

    ``after`` holds, once traced, the state after each outcome: a ``(state, top_seen)`` pair
    (``top_seen``: how many cards on top of the Havok deck somebody has seen; the state has the
    fields of :meth:`havok_env.engine.Game.fields` as attributes), or the final rewards where the
    outcome ends the game."""

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


class Trace:
    """A traced game: ``events`` in the order they happened, the final ``rewards`` (None if the
    record stops before the end), ``num_players``, and ``decisions``: the state at each decision,
    as ``(state, top_seen)``. With ``check``, ``points`` lists every state the replay went
    through where something happened (before each event and decision, then the end) and
    ``just_after`` the state right after each flip or draw as played, to test the outcomes
    against, and ``deciders`` the seat deciding at each decision's index in ``points``."""

    def __init__(self, events, rewards, num_players, decisions, points=None, just_after=None, deciders=None):
        self.events, self.rewards, self.num_players = events, rewards, num_players
        self.decisions, self.points, self.just_after = decisions, points, just_after
        self.deciders = deciders or {}

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
          arrange=None, advance=None, sample=None, deeper=None, depth: int = 1) -> Trace:
    """Replay ``record`` and list its luck events, the decisions of ``random_seats`` (seats played
    by the uniformly random bot) included, each with the state after every outcome (see
    :class:`Event`; with ``every_outcome=False`` only after the actual one, the others None: what
    fitting a value function needs). Raises :class:`TraceError` for a record this engine cannot
    replay.

    ``arrange(state)``, if given, may reorder the decks (and reseed the generator) once the deal is
    done, before the first flip: the tests use it to play the same game with other unseen cards.

    ``advance(game, state)``, if given, says which action to play on with at a decision the engine
    reaches after an outcome (None: stop and value it there): the state after an outcome is then
    where those decisions lead, up to the next chance point, decision left to its seat or the end
    (:func:`evaluation.luck.lookahead`). Drawn cards and flipped treasures are then played on as
    well, not valued as soon as they are revealed; with ``check``, each decision's point is where
    it leads too. An ``advance`` whose policies stand differently at each point of the game (a
    replayed search bot, :class:`evaluation.luck.Lookahead`) has ``at(index)``, the ``advance`` for
    a way on from after the record's first ``index`` actions, which may keep what its own choices
    change, and whose ``copy()`` is one for another way on from the same point.

    ``sample`` (seat -> ``draw(game, seat, index)``), if given, makes the decisions of those seats
    events: ``draw`` gets a copy of the game at the decision and the action's index in the record,
    and returns actions the seat's policy takes there with draws independent of the game's (the
    module docstring).

    ``deeper(at, outcomes, weights)``, if given, is asked wherever the engine, playing on from an
    outcome (or from a decision, with ``check``), stops before a chance point it can list (a flip,
    a draw from a deck that needs no reshuffle, a contest) or at a decision of a random seat: ``at``
    is the state there, ``outcomes`` the state after each outcome of that next event, played on the
    same way but no further, and ``weights`` their probabilities (unnormalised). What it returns
    (a value per seat) is taken as the state after, as final rewards are: one chance event deeper.
    Every outcome's state still follows from the game so far and that outcome alone. With ``depth``
    K (default 1), each outcome of that next event is itself played on the same way to the stop
    before the event after it, and so on K events deep: ``outcomes`` then holds what ``deeper``
    made of the deeper ones wherever there were any."""
    return _Tracer(record, set(random_seats), check, every_outcome, arrange, advance, sample, deeper, depth).run()


class _Tracer:
    def __init__(self, record, random_seats, check, every_outcome=True, arrange=None, advance=None, sample=None,
                 deeper=None, depth=1):
        if not isinstance(record, dict) or not {"seed", "options", "actions"} <= set(record) \
                or not isinstance(record["options"], dict) or not isinstance(record["actions"], list):
            raise TraceError("not a game record: it needs 'seed', 'options' and a list of 'actions'")
        self.record = record
        self.random_seats = random_seats
        self.check = check
        self.every_outcome = every_outcome
        self.arrange = arrange
        self.advance = advance
        self.sample = dict(sample or {})
        self.deeper = deeper
        self.depth = depth if deeper is not None else 0
        self.events: list[Event] = []
        self.action = -1
        self.decisions: list = []
        self.points: list = [None]
        self.just_after: dict = {}
        self.deciders: dict = {}  # with check: the index of each decision's point -> its seat

    def event(self, kind, seat, turn, outcomes, weights, actual, where) -> Event:
        ev = Event(kind, seat, turn, outcomes, weights, actual, len(self.points) - 1, self.action, where)
        self.events.append(ev)
        return ev

    def point(self, state, top: int) -> None:
        if self.check:
            self.points.append((state, top))

    # -- the played game ---------------------------------------------------------------------------

    def run(self) -> Trace:
        rec = self.record
        try:
            g = Game(seed=rec["seed"], advance=False, **rec["options"])
        except (TypeError, KeyError, ValueError) as e:
            raise TraceError(f"not a game record ({type(e).__name__}: {e})") from None
        self.game = g
        self.cards = g.cards
        if self.arrange is not None:
            self.arranged(g)
        seen = _Seen(size=len(g.fields()["havok"]))
        start = _Node(g.clone(), seen.copy(), None, None, -1)
        points, _ = g.run_chance(None, states=True)
        if not points or points[0].kind != "flip":
            raise TraceError("not a game record: the game never started")
        self.setup_events(_State(points[0].before))
        self.recorded(points, seen, start)
        state = _State(g.fields())
        self.looks(state, seen)
        for i, a in enumerate(rec["actions"]):
            p = state.pending
            if p is None:
                raise TraceError(f"action {i} ({a!r}): the game is already over")
            if isinstance(a, bool) or a not in p["choices"]:
                raise TraceError(f"action {i} ({a!r}) is not legal in the replayed game")
            a = int(a)
            self.action = i
            node = _Node(g.clone(), seen.copy(), state, a, i)
            if self.check:
                self.deciders[len(self.points)] = p["player"]
                self.points.append(self.ahead(node))
            self.decisions.append((state, seen.top))
            seat = p["player"]
            if seat in self.random_seats:
                choices = list(p["choices"])
                self.event("decision", seat, state.turn, choices, [1] * len(choices), choices.index(a),
                           ("decision", node))
            elif seat in self.sample:
                drawn = [int(x) for x in self.sample[seat](g.clone(), seat, i)]
                if not drawn or any(x not in p["choices"] for x in drawn):
                    raise ValueError(f"the policy of seat {seat} sampled no legal action at action {i}")
                outcomes = list(dict.fromkeys(drawn + [a]))
                self.event("decision", seat, state.turn, outcomes, [drawn.count(o) for o in outcomes],
                           outcomes.index(a), ("decision", node))
            seen.put_under(state, a, g)
            points, _ = g.run_chance(a, states=True)
            self.recorded(points, seen, node)
            state = _State(g.fields())
            seen.sync(len(state.havok))
            self.looks(state, seen)
        rewards = g.rewards() if g.is_over else None
        if self.check:
            self.points.append(rewards if rewards is not None else (state, seen.top))
        for ev in self.events:
            o = ev.outcomes[ev.actual]
            ev.immediate = self.advance is None and (ev.kind == "draw" or ev.kind == "flip"
                                                     and self.cards.is_treasure(o))
            if self.every_outcome:
                ev.after = [self.after(ev, o) for o in ev.outcomes]
            else:
                ev.after = [None] * len(ev.outcomes)
                ev.after[ev.actual] = self.after(ev, ev.outcomes[ev.actual])
            ev._where = None  # the games it holds are no longer needed
        return Trace(self.events, rewards, g.num_players, self.decisions, self.points if self.check else None,
                     self.just_after if self.check else None, self.deciders)

    def arranged(self, g: Game) -> None:
        """Let ``arrange`` change the dealt game's state, and write what it changed back."""
        fields = g.fields()
        s = _State(g.fields())
        self.arrange(s)
        try:
            for name in _ARRANGED:
                if getattr(s, name) != fields[name]:
                    setattr(g.s, name, getattr(s, name))
        except ValueError as e:
            raise TraceError(f"the arranged game is not a game ({e})") from None

    def recorded(self, points, seen: _Seen, node: _Node) -> None:
        """The events among the chance points of a move played from ``node``."""
        for c, pt in enumerate(points):
            kind = pt.kind
            if kind == "flip":
                end = seen.flip(pt.range)
                if end is None:
                    continue
                s = _State(pt.before)
                kinds, counts = _outcomes(s.havok[:end])
                self.point(s, 0)
                ev = self.event("flip", pt.seat, s.turn, kinds, counts, kinds.index(pt.outcome),
                                ("flip", node, c, s, end))
            elif kind == "draw":
                s = _State(pt.after)
                kinds, counts = _outcomes(s.hijinks + [pt.outcome])
                self.point(_State(pt.before) if self.check else None, seen.top)
                ev = self.event("draw", pt.seat, s.turn, kinds, counts, kinds.index(pt.outcome),
                                ("draw", s, seen.top, node, c, pt.outcome))
            else:
                s = _State(pt.before)
                self.point(s, seen.top)
                self.event("coin", None, s.turn, list(range(pt.range)), [1] * pt.range, pt.outcome,
                           ("coin", node, c))
                continue
            if self.check:
                self.just_after[id(ev)] = (_State(pt.after), seen.top)

    def looks(self, state: _State, seen: _Seen) -> None:
        """A look at the Havok top has just happened if the looker must now decide what to put
        under the deck: one event per card nobody had seen, top first."""
        p = state.pending
        if p is None or p["purpose"] != "bottom":
            return
        end = seen.size - seen.bottom
        havok = state.havok
        for m in range(seen.top, min(len(p["context"]["shown"]), end)):
            kinds, counts = _outcomes(havok[m:end])
            self.point(state, m)
            self.event("look", p["player"], state.turn, kinds, counts, kinds.index(havok[m]),
                       ("look", state, m, end))
            seen.top = m + 1

    def setup_events(self, s: _State) -> None:
        """The dragons left to chance, the deal and the first player: all decided before the first
        flip, whose state ``s`` is."""
        cs = self.cards
        n = s.num_players
        named = self.record["options"].get("dragons") or [None] * n
        free_seats = [i for i in range(n) if named[i] is None]
        self.deck = [k for k in range(cs.first_hijinks, cs.n_kinds) for _ in range(cs.copies[k])]
        if free_seats:
            taken = {s.dragons[i] for i in range(n) if named[i] is not None}
            free = [d for d in range(len(cs.dragons)) if d not in taken]
            picks = list(itertools.permutations(free, len(free_seats)))
            ev = self.event("dragons", None, 0, picks, [1] * len(picks),
                            picks.index(tuple(s.dragons[i] for i in free_seats)), ("dragons", s, free_seats))
            if self.check:
                self.points.append(self.after(ev, ev.outcomes[ev.actual]))
        dealt = [[] for _ in range(n)]
        pool = Counter(self.deck)
        undealt = list(self.deck)  # in the deck's order: a card's kind, by copies
        for r in range(len(s.hands[0])):
            for p in range(n):
                card = s.hands[p][r]
                kinds = sorted(pool)
                ev = self.event("deal", p, 0, kinds, [pool[k] for k in kinds], kinds.index(card),
                                ("deal", s, [list(h) for h in dealt], p, undealt[:]))
                if self.check:
                    self.points.append(self.after(ev, card))
                dealt[p].append(card)
                undealt.remove(card)
                pool[card] -= 1
                if not pool[card]:
                    del pool[card]
        # its state after is the first flip's state before, which the recording adds
        self.event("first_player", None, 0, list(range(n)), [1] * n, s.current, ("first", s))

    # -- every outcome -----------------------------------------------------------------------------

    def branch(self, index: int):
        """``advance`` from after the record's first ``index`` actions: its ``at(index)`` where it
        has one (a policy that stands differently at each point of the game), else itself."""
        at = getattr(self.advance, "at", None)
        return self.advance if at is None else at(index)

    @staticmethod
    def fork(advance):
        """``advance`` for another way on from the same point."""
        copy = getattr(advance, "copy", None)
        return advance if copy is None else copy()

    def rerun(self, node: _Node, action, force, stop: int, deep: int | None = None, advance=None):
        """The move from ``node`` played again (``action`` taken there; None: the first move) with
        the chance points ``force`` makes come out otherwise, stopped just before the first event
        from point ``stop`` on: what a value function reads there, at the next decision or at the
        end. With ``deeper``, that next event's outcomes are played on too (:meth:`spread`), ``deep``
        events deep (by default the tracer's ``depth``; 0: none). ``advance`` plays on (by default
        :meth:`branch` after ``node``'s move, which must then be on the way the game went)."""
        deep = self.depth if deep is None else deep
        if advance is None and self.advance is not None:
            advance = self.branch(node.index + 1)
        through = getattr(self.deeper, "through", None)
        if deep and through is not None and getattr(advance, "heuristic_only", False):
            return through(node.game, node.seen, action, force, stop, deep)  # the same, in the core
        while True:
            g = node.game.clone()
            seen = node.seen.copy()
            if action is not None:
                seen.put_under(node.state, action, g)
            points, stopped = g.run_chance(action, force, stop)
            for pt in points[:-1] if stopped else points:
                if pt.kind == "flip":
                    seen.flip(pt.range)
            # g is a copy that is never played on again (a move from it runs on a copy of it):
            # its state is read where it lies, through a live view, not copied out
            if stopped:
                state = g.s
                end = None
                if points[-1].kind == "flip":
                    end = seen.flip(len(state.havok))
                    if end is None:
                        stop += 1  # a card somebody had seen: no event, the move goes on
                        continue
                if deep:
                    return self.spread((state, seen.top), node, action, force, stop, points[-1], end, advance, deep)
                return (state, seen.top)
            if g.is_over:
                return g.rewards()
            state = g.s
            a = advance(g, state) if advance is not None else None
            if a is None:
                p = state.pending
                if deep and p is not None and p["player"] in self.random_seats and p["purpose"] != "bottom":
                    choices = list(p["choices"])
                    return self.deeper((state, seen.top),
                                       [self.rerun(_Node(g, seen, state, c), c, (), 0, deep - 1, self.fork(advance))
                                        for c in choices], [1] * len(choices))
                return (state, seen.top)
            node, action, force, stop = _Node(g, seen, state, a), a, (), 0

    def spread(self, at, node: _Node, action, force, stop: int, pt, end, advance=None, deep: int = 1):
        """With ``deeper``: what it makes of the outcomes of the chance point ``pt``, which the move
        from ``node`` (``action``, ``force``) stopped before at ``at``, each played on to the next
        stop; ``at`` itself where they cannot be listed before the point (a draw that reshuffles
        the discard pile first, its order still to come). Each is played ``deep - 1`` events deeper."""
        state = at[0]
        if pt.kind == "flip":
            kinds, counts = _outcomes(state.havok[:end])
            where = [state.havok.index(o, 0, end) for o in kinds]
        elif pt.kind == "draw":
            if pt.range < 0:
                return at
            kinds, counts = _outcomes(state.hijinks)
            where = [state.hijinks.index(o) for o in kinds]
        else:
            counts = [1] * pt.range
            where = list(range(pt.range))
        force = list(force)
        return self.deeper(at, [self.rerun(node, action, force + [(stop, j)], stop + 1, deep - 1, self.fork(advance))
                                for j in where], counts)

    def ahead(self, node: _Node):
        """Where the value is taken for the decision at ``node``: there, or with ``advance``, where
        the decisions it plays from there lead (see :meth:`rerun`)."""
        advance = self.branch(node.index) if self.advance is not None else None
        a = advance(node.game, node.state) if advance is not None else None
        if a is None:
            return (node.state, node.seen.top)
        return self.rerun(_Node(node.game.clone(), node.seen.copy(), node.state, a), a, (), 0, advance=advance)

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
        if how == "draw" and self.advance is not None:
            node, c, drawn = where[3:]
            s = where[1]  # just after the draw: the deck just before it was the drawn card on top of it
            j = 0 if o == drawn else 1 + s.hijinks.index(o)
            return self.rerun(node, node.action, [(c, j)], c + 1)
        if how == "draw":
            s, top, p = where[1], where[2], ev.seat  # the state just after the draw as played
            drawn = s.hands[p][-1]
            if drawn == o:
                return (s, top)
            hands, hijinks = [h[:] for h in s.hands], s.hijinks[:]
            j = hijinks.index(o)
            hands[p][-1], hijinks[j] = o, drawn
            return (s.view(hands=hands, hijinks=hijinks), top)
        if how == "flip":
            node, c, s, end = where[1:]  # s: the state just before the flip
            j = s.havok.index(o, 0, end)
            if self.advance is not None or not self.cards.is_treasure(o):
                return self.rerun(node, node.action, [(c, j)], c + 1)
            havok = s.havok[:]
            havok[0], havok[j] = havok[j], havok[0]
            del havok[0]
            # as the flip leaves it: the card is in play; the seats' knowledge of the top does not
            # matter to the value (which reads who has seen what from top_seen)
            return (s.view(havok=havok, in_play=s.in_play + [o]), 0)
        if how == "coin":
            node, c = where[1:]
            return self.rerun(node, node.action, [(c, o)], c + 1)
        if how == "decision":
            return self.rerun(where[1], o, (), 0)
        s = where[1]
        if how == "look":
            m, end = where[2:]
            havok = s.havok[:]
            j = havok.index(o, m, end)
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
            rest = list(self.deck)
        else:
            dragons = s.dragons
            hands = [list(h) for h in where[2]]
            hands[where[3]].append(o)
            rest = where[4][:]  # the cards not dealt before this one
            rest.remove(o)
        return (s.view(turn=0, current=-1, stack=[], hands=hands, hijinks=rest, dragons=dragons), 0)
