"""The rules of Havok & Hijinks as a decision machine.

The engine never calls a player. :class:`Game` advances the game until somebody must decide
something and stops there with a *pending decision* (``game.pending``): who decides, the kind of
decision, its context and the legal choices, which are actions of the one shared action space
(:class:`ActionLayout`). ``game.apply(action)`` takes a choice and advances to the next decision.
Decisions with a single legal choice are taken automatically, except crash windows.

The rules run in the native core (``src/havok_core/``, C++17 bound with nanobind, built by
``pip install``): work in progress is an explicit stack of frames (a turn, a flipped Havok card, a
card or ability being used, a crash window), each handled by a small state machine
(``engine.cpp``), and card effects are lists of primitives that the core interprets
(``effects.cpp``). This module is the Python face of it: configuration checks, the card tables
handed to the core, snapshots and replays, action labels and the errors users see. See
``docs/rules.md`` for every ruling.
"""

from __future__ import annotations

import json
import operator
import reprlib
import secrets
from typing import NamedTuple

try:
    from . import _core
except ImportError as e:  # a checkout whose core was never built
    raise ImportError(f"havok_env's native rules core is not built ({e}); in the project's "
                      "checkout run: pip install -e . (or ./build_core.sh, docs/GUIDE.md \"The native "
                      "core\")") from None
from .cards import OP_PARAMS, CardDataError, CardSet, default_cards
from .constants import (  # noqa: F401  (engine.HAND_SIZE, engine.END_REASONS)
    END_REASONS, HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, N_OPTIONS, PLAYER_COUNTS, SEED_MAX, SEED_MIN, WIN_SCORE,
    is_player_count)
from .decisions import DECISION_KINDS, DECISIONS, KIND, PURPOSES, Purpose  # noqa: F401  (engine.PURPOSES)
from .snapshot import SnapshotError, restore
from .state import GameState

_MASK = (1 << 64) - 1
ANY = 1 << 30  # "any value" (an effect primitive's max_value left out)


class ChancePoint(NamedTuple):
    """One chance point of a move (:meth:`Game.run_chance`)."""

    kind: str  # "flip", "draw" or "coin"
    seat: int | None  # flip: the seat it is flipped for; draw: the drawer; coin: None
    range: int  # flip, draw: the deck's size then (a draw's after any reshuffle); coin: answers 0..range-1
    outcome: int  # flip, draw: the card kind that came; coin: the answer (-1: stopped before it)
    before: dict | None  # with states=True: the state just before it (Game.fields)
    after: dict | None  # with states=True: the state just after a flip or draw


class ConfigError(ValueError):
    """A bad game configuration (player count, dragons)."""


class IllegalActionError(ValueError):
    """An action that is not legal in the pending decision."""


class ArgumentError(ValueError, TypeError):
    """A public call given an argument of the wrong type or out of range; the message names it.
    (Also a TypeError, which a wrong type raised before.)"""


_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlevel = 40, 40, 2
_r = _repr.repr


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` if a game takes it (an int from SEED_MIN to SEED_MAX, not a bool), else
    ConfigError naming ``name``: the one check of every place a seed enters (Game, the envs'
    resets, the batched games, snapshots)."""
    if seed.__class__ is not int and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError(f"{name} must be an integer, not {_r(seed)}")
    if not SEED_MIN <= seed <= SEED_MAX:
        raise ConfigError(f"{name} {seed} is out of range: a seed is an integer from -2**63 to "
                          f"2**64 - 1 (what a snapshot holds)")
    return int(seed)


def check_index(v, name: str, n: int, what: str, first: int = 0) -> int:
    """``v`` as an int from ``first`` to ``first + n - 1`` (numpy ints too; never a bool or a
    float), else ArgumentError naming ``name`` and what it must be."""
    if v.__class__ is int:
        if first <= v < first + n:
            return v
    elif not isinstance(v, bool):
        try:
            i = operator.index(v)
        except TypeError:
            pass
        else:
            if first <= i < first + n:
                return i
    raise ArgumentError(f"{name} must be {what} (an integer from {first} to {first + n - 1}), "
                        f"not {_r(v)}")


def check_ref(cs: CardSet, ref, name: str = "ref"):
    """``ref`` if it names an ability of card set ``cs``: an event or Hijinks card kind, or
    ``["innate", dragon index, "play" | "crash"]``; else ArgumentError naming ``name``."""
    if isinstance(ref, (list, tuple)) and len(ref) == 3 and ref[0] == "innate" and ref[2] in ("play", "crash"):
        check_index(ref[1], f"{name}[1]", len(cs.dragons), "a dragon index")
        return ref
    if ref.__class__ is int and cs.first_event <= ref < cs.n_kinds:
        return ref
    raise ArgumentError(f"{name} must be an event or Hijinks card kind ({cs.first_event} to "
                        f"{cs.n_kinds - 1}) or ['innate', dragon index, 'play' or 'crash'], "
                        f"not {_r(ref)}")


def _fits(v, spec) -> bool:
    if spec is int:
        return v.__class__ is int
    if spec is bool:
        return v.__class__ is bool
    return any(v == c and type(v) is type(c) for c in spec)


def check_op(op, name: str = "op") -> dict:
    """``op`` if it is an effect primitive as ``Ability.ops`` gives one (a dict with ``"op"``
    naming a primitive of ``cards.OP_PARAMS`` and only its parameters, each of its type), else
    ArgumentError naming ``name``."""
    spec = OP_PARAMS.get(op.get("op")) if isinstance(op, dict) and isinstance(op.get("op"), str) else None
    if spec is None:
        raise ArgumentError(f"{name} must be an effect primitive (a dict with 'op' one of "
                            f"{', '.join(OP_PARAMS)}), not {_r(op)}")
    for k, v in op.items():
        if k != "op" and (k not in spec or not _fits(v, spec[k])):
            raise ArgumentError(f"{name} {_r(op)}: {'an unknown parameter' if k not in spec else 'a bad value of'} "
                                f"{k!r} for {op['op']}")
    return op


def as_action(action) -> int:
    """``action`` as a plain int: integral numbers (numpy ints, 3.0) are accepted, booleans and
    everything else refused with IllegalActionError."""
    if action.__class__ is int:
        return action
    try:
        if isinstance(action, bool) or getattr(getattr(action, "dtype", None), "kind", None) == "b" \
                or int(action) != action:
            raise ValueError
        return int(action)
    except (TypeError, ValueError, OverflowError):
        raise IllegalActionError(f"action {action!r} is not an integer") from None


class ActionLayout:
    """The shared action space, in blocks (offsets depend on the card set's sizes).

    ``END`` ends the turn / declines a crash / stops / keeps; ``PLAY + i`` plays, crashes with or
    takes Hijinks card kind ``i``; ``INNATE_PLAY`` and ``INNATE_CRASH`` use the dragon's abilities;
    ``DISCARD + i`` discards Hijinks kind ``i`` and draws; ``SEAT + r`` targets the seat ``r`` places
    to the decider's left (0 = itself); ``TREASURE + j`` targets treasure kind ``j``;
    ``OPTION + i`` picks option ``i``.
    """

    MAX_PLAYERS = MAX_PLAYERS  # seat targets, one per seat of the largest table
    N_OPTIONS = N_OPTIONS

    def __init__(self, cards: CardSet):
        self.END = 0
        self.PLAY = 1
        self.INNATE_PLAY = self.PLAY + cards.n_hijinks
        self.INNATE_CRASH = self.INNATE_PLAY + 1
        self.DISCARD = self.INNATE_CRASH + 1
        self.SEAT = self.DISCARD + cards.n_hijinks
        self.TREASURE = self.SEAT + self.MAX_PLAYERS
        self.OPTION = self.TREASURE + cards.n_treasures
        self.size = self.OPTION + self.N_OPTIONS

    def blocks(self) -> list[tuple[str, int, int]]:
        """(name, first action, count) for each block."""
        return [
            ("end / decline / stop", self.END, 1),
            ("play / crash with / take Hijinks card kind", self.PLAY, self.INNATE_PLAY - self.PLAY),
            ("innate play ability", self.INNATE_PLAY, 1),
            ("innate crash ability", self.INNATE_CRASH, 1),
            ("discard Hijinks card kind and draw", self.DISCARD, self.SEAT - self.DISCARD),
            ("target seat (relative: 0 = self, 1 = left, ...)", self.SEAT, self.MAX_PLAYERS),
            ("target treasure kind", self.TREASURE, self.OPTION - self.TREASURE),
            ("option", self.OPTION, self.N_OPTIONS),
        ]


class _Tables:
    """What a card set needs at run time, built once per card set: the action layout, the
    native core's tables (the effect lists each dragon gets, with its affinity's bonus applied),
    each dragon's treasure values, and kind -> ability."""

    def __init__(self, cs: CardSet):
        self.layout = ActionLayout(cs)
        self.abilities = [None] * cs.first_event + cs.events + cs.hijinks
        self.kind_ops = [None if a is None else [a.ops(d.affinity) for d in cs.dragons]
                         for a in self.abilities]
        # values[dragon][kind]: a treasure's worth in the hoard of that dragon
        self.values = [[cs.value[k] + (1 if cs.affinity[k] == d.affinity and k < cs.n_treasures else 0)
                        for k in range(cs.n_kinds)] for d in cs.dragons]
        innates = [a for d in cs.dragons for a in (d.play, d.crash)]

        def plain(a):
            if a is None:
                return None
            return {"name": a.name, "kind": a.kind, "type": a.type, "trigger": a.trigger,
                    "ops": [list(a.ops(d.affinity)) for d in cs.dragons]}

        # affinities are the dragons' (cards.py): the core numbers them in the dragons' order
        aff = {a: i for i, a in reversed(list(enumerate(cs.affinities)))}
        try:
            self.core = _core.make_tables({
                "names": list(cs.names), "copies": list(cs.copies), "value": list(cs.value),
                "affinity": [aff.get(a, -1) for a in cs.affinity],
                "n_treasures": cs.n_treasures, "n_events": cs.n_events, "n_hijinks": cs.n_hijinks,
                "starting_treasure": cs.starting_treasure,
                "dragons": [{"name": d.name, "affinity": aff[d.affinity],
                             "ready_type": d.ready_type} for d in cs.dragons],
                "abilities": [plain(a) for a in self.abilities + innates]})
        except (ValueError, TypeError, IndexError, KeyError, AttributeError) as e:
            raise CardDataError(f"the card set cannot be used: {e}") from None
        lay = self.layout
        # a new game's whole __dict__, copied in one go (Game.__init__: a dict built key by key
        # was a tenth of a game's cost in the benchmark's loop): the card set's attributes of
        # every game, then the None entries that are each game's own
        self.new_game_dict = {
            "cards": cs, "_tables": self.core, "layout": lay, "END": lay.END, "PLAY": lay.PLAY,
            "OPTION": lay.OPTION, "INNATE_PLAY": lay.INNATE_PLAY, "INNATE_CRASH": lay.INNATE_CRASH,
            "DISCARD": lay.DISCARD, "SEAT": lay.SEAT, "TREASURE": lay.TREASURE, "_n_actions": lay.size,
            "_abilities": self.abilities, "_kind_ops": self.kind_ops, "values": self.values,
            "seed": None, "options": None, "_core": None, "_view": None, "legal_actions": None}


# id(card set) -> (card set, its tables); the card set is kept so its id cannot be reused.
_TABLES: dict[int, tuple] = {}


def tables(cs: CardSet) -> _Tables:
    """The run-time tables of a card set (built on first use)."""
    entry = _TABLES.get(id(cs))
    if entry is None or entry[0] is not cs:
        entry = _TABLES[id(cs)] = (cs, _Tables(cs))
    return entry[1]


class Game:
    """One game of Havok & Hijinks.

    ``Game(num_players=2, dragons=None, seed=None)``: ``dragons`` is a list of dragon names or
    affinities per seat (``None`` entries, or ``None`` for all, are chosen at random, distinct).
    The rules run in the native core; ``game.s`` is a live view of its state.
    """

    def _configure(self, num_players: int, dragons, seed: int | None, cards: CardSet | None) -> list:
        """Check and keep a new game's options; returns the dragon of each seat (-1: to draw)."""
        if cards is not None and not isinstance(cards, CardSet):
            raise ConfigError(f"cards must be a card set (havok_env.load_cards), not {_r(cards)}")
        self.__dict__ = tables(cards or default_cards()).new_game_dict.copy()
        if not is_player_count(num_players):
            raise ConfigError(f"num_players must be {PLAYER_COUNTS}, not {_r(num_players)}")
        self.seed = secrets.randbits(63) if seed is None else check_seed(seed)
        if dragons is None:
            self.options = {"num_players": num_players, "dragons": None}
            return [-1] * num_players
        self.options = {"num_players": num_players, "dragons": list(dragons)}
        return self._parse_dragons(num_players, dragons)

    def _parse_dragons(self, n: int, dragons) -> list:
        """The dragon index of each seat of a list of names or affinities, -1 for None (to draw)."""
        if isinstance(dragons, str) or not hasattr(dragons, "__len__"):
            raise ConfigError(f"dragons must be a list with one entry per seat, not {dragons!r}")
        if len(dragons) != n:
            raise ConfigError(f"dragons names {len(dragons)} dragon(s) for {n} players")
        out = []
        for d in dragons:
            if d is None:
                out.append(-1)
                continue
            try:
                out.append(self.cards.dragon_index(d))
            except ValueError as e:
                raise ConfigError(str(e)) from None
        named = [d for d in out if d >= 0]
        if len(set(named)) != len(named):
            dup = next(self.cards.dragons[d].name for d in named if named.count(d) > 1)
            raise ConfigError(f"each player needs a different dragon; {dup} is chosen twice")
        return out

    def seat_name(self, seat: int) -> str:
        return f"player_{self._seat(seat)}"

    # -- the checks of the public calls' arguments (each raises ArgumentError naming it) ------------

    def _seat(self, v, name: str = "seat") -> int:
        return check_index(v, name, self._core.num_players, "a seat of this game")

    def _hijinks(self, v, name: str = "kind") -> int:
        cs = self.cards
        return check_index(v, name, cs.n_hijinks, "a Hijinks card kind", cs.first_hijinks)

    def _treasure(self, v, name: str = "kind") -> int:
        return check_index(v, name, self.cards.n_treasures, "a treasure kind")

    def _in_block(self, v, first: int, end: int, what: str, name: str = "action") -> int:
        return check_index(v, name, end - first, f"a {what} action", first)

    def _ref(self, ref, name: str = "ref"):
        return check_ref(self.cards, ref, name)

    def _ask(self, fn, *args, name: str = "op"):
        """The core's answer to a targeting question; a value it cannot take (a primitive's
        parameter, a trigger) as ArgumentError naming the argument."""
        try:
            return fn(*args)
        except (_core.CoreError, TypeError) as e:
            raise ArgumentError(f"{name}: {e}") from None

    # -- action encoding -------------------------------------------------------------------------

    def seat_action(self, decider: int, seat: int) -> int:
        return self.SEAT + (self._seat(seat) - self._seat(decider, "decider")) % self.num_players

    def seat_from_action(self, decider: int, action: int) -> int:
        action = self._in_block(action, self.SEAT, self.SEAT + self.num_players, "seat target")
        return (self._seat(decider, "decider") + action - self.SEAT) % self.num_players

    def treasure_action(self, kind: int) -> int:
        return self.TREASURE + self._treasure(kind)

    def treasure_of(self, action: int) -> int:
        return self._in_block(action, self.TREASURE, self.OPTION, "treasure target") - self.TREASURE

    def card_action(self, kind: int) -> int:
        return self.PLAY + self._hijinks(kind) - self.cards.first_hijinks

    def card_of(self, action: int) -> int:
        return self._in_block(action, self.PLAY, self.INNATE_PLAY, "card") - self.PLAY + self.cards.first_hijinks

    def discard_action(self, kind: int) -> int:
        return self.DISCARD + self._hijinks(kind) - self.cards.first_hijinks

    def discard_of(self, action: int) -> int:
        return self._in_block(action, self.DISCARD, self.SEAT, "discard") - self.DISCARD + self.cards.first_hijinks

    def ability(self, ref):
        """A card kind (event or Hijinks) or ["innate", dragon, "play"|"crash"] -> Ability."""
        ref = self._ref(ref)
        if ref.__class__ is int:
            return self._abilities[ref]
        d = self.cards.dragons[ref[1]]
        return d.play if ref[2] == "play" else d.crash

    # -- replays ---------------------------------------------------------------------------------

    def record(self) -> dict:
        """The game's record: its ``seed``, ``options`` and the ``actions`` taken since the deal,
        plain JSON data that :meth:`replay` plays back to this very position. It is how a game
        is saved, exchanged and pickled. A game restored from a snapshot, or changed other than
        by its actions (a field written, a forced chance point), has none: save it with
        :meth:`snapshot`."""
        actions = self._core.actions
        if actions is None or self.options is None:
            raise ArgumentError("this game has no record: it was restored from a snapshot or changed "
                                "other than by its actions (save it with snapshot())")
        options = {k: list(v) if isinstance(v, list) else v for k, v in self.options.items()}
        return {"seed": self.seed, "options": options, "actions": actions}

    @classmethod
    def replay(cls, record: dict, cards: CardSet | None = None, log: bool = False) -> "Game":
        """The game of a record (``seed``, ``options``, ``actions``), played to its last action."""
        *_, (game, _) = cls.positions(record, cards, log)
        return game

    @classmethod
    def positions(cls, record: dict, cards: CardSet | None = None, log: bool = False):
        """Replay a record position by position: ``(game, action)`` before each of its actions is
        applied (the same game, moved on), then ``(game, None)`` after the last one. A bad record
        raises ConfigError (its options) or IllegalActionError (at the action that is not legal)."""
        if not isinstance(record, dict) or any(k not in record for k in ("seed", "options", "actions")):
            raise ConfigError(f"record must be a dict with 'seed', 'options' and 'actions' (as "
                              f"Game.record writes it), not {_r(record)}")
        options, actions = record["options"], record["actions"]
        if not isinstance(options, dict) or not set(options) <= {"num_players", "dragons"}:
            raise ConfigError(f"record['options'] must be a dict of num_players and dragons (as "
                              f"Game.record writes it), not {_r(options)}")
        if not isinstance(actions, (list, tuple)):
            raise ConfigError(f"record['actions'] must be a list of actions, not {_r(actions)}")
        g = cls(seed=check_seed(record["seed"], "record['seed']"), cards=cards, log=log, **options)
        for a in actions:
            yield g, a
            g.apply(a)
        yield g, None

    def __init__(self, num_players: int = 2, dragons=None, seed: int | None = None,
                 cards: CardSet | None = None, log: bool = False, advance: bool = True):
        if (type(seed) is int and type(num_players) is int and MIN_PLAYERS <= num_players <= MAX_PLAYERS
                and dragons is None and cards is None and log is False and advance is True
                and SEED_MIN <= seed <= SEED_MAX):
            # the common call (a loop's next game), the checks of _configure all passed: a new
            # game is made every twenty-odd decisions, and the general path was half its cost
            d = tables(default_cards()).new_game_dict.copy()
            d["seed"] = seed
            d["options"] = {"num_players": num_players, "dragons": None}
            d["_core"] = core = _core.Game.new(d["_tables"], num_players, [-1] * num_players,
                                               seed & _MASK, False, True)
            d["legal_actions"] = core.legal_actions  # as _set_core sets it
            self.__dict__ = d
            return
        chosen = self._configure(num_players, dragons, seed, cards)
        for name, flag in (("log", log), ("advance", advance)):
            if flag.__class__ not in (bool, int) or flag not in (0, 1):
                raise ConfigError(f"{name} must be True or False, not {_r(flag)}")
        # dragons left open are drawn, then the decks dealt, from the seeded generator in the core;
        # with advance=False the game stops there, before the first turn (for run_chance)
        self._set_core(_core.Game.new(self._tables, num_players, chosen, self.seed & _MASK, log,
                                      bool(advance)))

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def _from_core(cls, core, cards: CardSet, seed: int | None = None, options: dict | None = None) -> "Game":
        """A game around a core game already made, of card set ``cards``: a copy (:meth:`clone`),
        a restored position (:meth:`from_snapshot`), a batched game's copy (``havok_env.vector``).
        Besides ``Game(...)``, the one way a Game is made."""
        g = object.__new__(cls)
        g.__dict__ = tables(cards).new_game_dict.copy()
        g.seed, g.options = seed, options
        g._set_core(core)
        return g

    def _set_core(self, core) -> None:
        self._core = core
        self._view = None  # the GameState view, made when first asked for (most games never are)
        # the core's own method: one Python call per decision is the benchmark's bar, and a
        # wrapper around this one was a tenth of that call's time
        self.legal_actions = core.legal_actions

    @property
    def s(self) -> GameState:
        """The game's state, read from (and, for tests and search, written to) the core."""
        view = self._view
        if view is None:
            view = self._view = GameState(self._core)
        return view

    @s.setter
    def s(self, state: GameState) -> None:
        self._set_core(state._core)

    # -- queries -------------------------------------------------------------------------------

    @property
    def num_players(self) -> int:
        return self._core.num_players

    @property
    def pending(self) -> dict | None:
        return self.s.pending

    @property
    def result(self) -> dict | None:
        return self._core.result()

    @property
    def is_over(self) -> bool:
        return self._core.is_over

    @property
    def current_player(self) -> int:
        return self._core.current

    @property
    def to_act(self) -> int | None:
        """The seat whose decision is pending (None once the game is over)."""
        return self._core.to_act

    def legal_actions(self) -> list[int]:
        # (each game replaces this with its core's legal_actions, in _set_core)
        return self._core.legal_actions()

    def dragon(self, seat: int):
        return self.cards.dragons[self._core.dragons[self._seat(seat)]]

    def value(self, owner: int, kind: int) -> int:
        kind = check_index(kind, "kind", self.cards.n_kinds, "a card kind")
        return self.values[self._core.dragons[self._seat(owner, "owner")]][kind]

    def score(self, seat: int) -> int:
        return self._core.score(self._seat(seat))

    def scores(self) -> list[int]:
        return self._core.scores()

    def rewards(self) -> list[float]:
        """+1 to the sole winner, -1 to the rest; in a draw 0 to the tied leaders. Zeros until over."""
        return self._core.rewards()

    # -- the rules' answers ----------------------------------------------------------------------

    def ops_for(self, ref, seat: int) -> tuple:
        """The effect list of ability ``ref`` for the dragon of ``seat`` (its bonus applied)."""
        seat = self._seat(seat)
        if ref.__class__ is int:
            return self._kind_ops[self._ref(ref)][self._core.dragons[seat]]
        return self.ability(ref).ops(self.dragon(seat).affinity)

    def crash_choices(self, p: int, trig: dict) -> list[int]:
        """The crashes seat ``p`` could declare in a window on ``trig`` (a pending crash
        decision's ``context["trigger"]``), END not included."""
        if not isinstance(trig, dict):
            raise ArgumentError(f"trig must be a trigger (a dict, as a crash decision's context "
                                f"gives it), not {_r(trig)}")
        return self._ask(self._core.crash_choices, self._seat(p, "p"), trig, name="trig")

    def trigger(self, idx: int) -> dict:
        """The trigger of the crash window that opens on the frame ``stack[idx]``: a Havok card
        just flipped or a card or ability whose targets are chosen (snapshot.py rebuilds one to
        check it)."""
        return self._core.trigger(check_index(idx, "idx", len(self.s.stack), "a frame of the stack"))

    # -- the targeting rules ------------------------------------------------------------------
    # The core's, in one place: its effects ask with them, and bots judge cards with them
    # through havok_env.view.SeatView (they read only public information: seats, scores, hoards,
    # the trash heap). ``op`` is one primitive of an effect list, as ``Ability.ops`` gives it.

    def victims(self, you: int, actor: int, selector: str) -> list[int]:
        """Seats a primitive may target, for victim selector ``selector`` (see cards.OP_PARAMS)."""
        if not isinstance(selector, str):
            raise ArgumentError(f"selector must be a victim selector (a str), not {_r(selector)}")
        return self._ask(self._core.victims, self._seat(you, "you"), self._seat(actor, "actor"), selector,
                         name="selector")

    def thief(self, you: int, op: dict) -> int:
        """Who takes in a steal: ``you``, or with ``thief = "right"`` the seat to your right."""
        return self._core.thief(self._seat(you, "you"), check_op(op))

    def eligible(self, owner: int, max_value: int, exclude=()) -> list[int]:
        """Distinct treasure kinds in ``owner``'s hoard worth at most ``max_value`` there,
        ascending, ignoring one copy for each kind in ``exclude``."""
        if max_value.__class__ is not int:
            raise ArgumentError(f"max_value must be an integer, not {_r(max_value)}")
        if not isinstance(exclude, (list, tuple)):
            raise ArgumentError(f"exclude must be a list of treasure kinds, not {_r(exclude)}")
        return self._core.eligible(self._seat(owner, "owner"), min(max_value, ANY),
                                   [self._treasure(k, "exclude[]") for k in exclude])

    def trade_gives(self, you: int, op: dict) -> list[int]:
        """The kinds ``you`` may give in a trade (all of its hoard, or its lowest with
        ``give = "lowest"``), before ``max_gain`` narrows them to a chosen take."""
        return self._core.trade_gives(self._seat(you, "you"), check_op(op))

    @staticmethod
    def trade_min_give(op: dict, take_value: int) -> int:
        """The least a give must be worth to you for a take worth ``take_value`` to the victim:
        ``max_gain`` caps how much more the take may be worth."""
        if take_value.__class__ is not int:
            raise ArgumentError(f"take_value must be an integer, not {_r(take_value)}")
        return _core.Game.trade_min_give(check_op(op), take_value)

    def trade_takes(self, you: int, victim: int, op: dict) -> list[int]:
        """The kinds ``you`` may take from ``victim`` in a trade: some give must be worth enough."""
        return self._core.trade_takes(self._seat(you, "you"), self._seat(victim, "victim"), check_op(op))

    def trade_gives_for(self, you: int, victim: int, take: int, op: dict) -> list[int]:
        """The kinds ``you`` may give for ``take`` from ``victim``."""
        return self._core.trade_gives_for(self._seat(you, "you"), self._seat(victim, "victim"),
                                          self._treasure(take, "take"), check_op(op))

    def candidates(self, you: int, op: dict) -> list[int]:
        """Victim seats that have something this steal/break/trade could take."""
        return self._core.candidates(self._seat(you, "you"), check_op(op))

    def salvage_options(self, op: dict) -> list[int]:
        """The kinds a salvage may take from the trash heap: the best printed value with
        ``pick = "best"``, else any worth at most ``max_value``."""
        return self._core.salvage_options(check_op(op))

    def redirect_seats(self, flipper: int, op: dict) -> list[int]:
        """Where a redirected event may go: the flipper's left, or with ``to = "choice"`` any
        other seat."""
        return self._core.redirect_seats(self._seat(flipper, "flipper"), check_op(op))

    def tribute_seats(self, you: int) -> tuple[int, int] | None:
        """(giver, taker) of a tribute: the richest and the poorest dragon, ties to the nearest
        clockwise from ``you``; None when all hoards are worth the same."""
        return self._core.tribute_seats(self._seat(you, "you"))

    def pass_seats(self, you: int, op: dict) -> list[int]:
        """The seats that pass a treasure to their left in a pass_left, in turn order from
        ``you`` (without ``you`` with ``skip_you``): those with a treasure to pass."""
        return self._core.pass_seats(self._seat(you, "you"), check_op(op))

    # -- the decision machine --------------------------------------------------------------------

    def _apply_checked(self, action) -> None:
        """:meth:`apply` for every action the core's fast path does not take itself (anything
        but a plain int that is legal): converts numpy ints and integral floats, and raises the
        clear errors."""
        core = self._core
        if action.__class__ is not int:
            if core.is_over:
                raise IllegalActionError(f"action {action!r}: the game is over, no decision is pending")
            action = as_action(action)
        try:
            applied = 0 <= action < self._n_actions and core.apply(action)
        except _core.CoreError as e:  # only a position restored from a corrupt snapshot
            raise SnapshotError(f"the game cannot go on from this position: {e}") from None
        if not applied:
            p = self.pending
            if p is None:
                raise IllegalActionError(f"action {action!r}: the game is over, no decision is pending")
            legal = ", ".join(f"{a} ({self.action_label(a)})" for a in p["choices"])
            raise IllegalActionError(
                f"action {action} ({self.action_label(action)}) is not legal for "
                f"{self.seat_name(p['player'])}'s {p['purpose']} decision; legal: {legal}")

    # -- chance points ----------------------------------------------------------------------------

    def run_chance(self, action=None, force=(), stop: int | None = None, states: bool = False):
        """Play one move watching its *chance points*, every use of luck inside it: ``flip`` (a
        card leaving the top of the Havok deck), ``draw`` (one Hijinks card drawn) and ``coin``
        (an answer of the game's generator outside a shuffle: the contest between crashes of one
        window). ``action`` is the pending decision's answer, or None for a game made with
        ``advance=False`` (its first move). ``force`` lists ``(point, outcome)`` pairs that make
        a point come out otherwise: for a flip or a draw the card at that position of the deck
        (after any reshuffle) is swapped to the top first, for a coin ``outcome`` is the answer.
        ``stop`` stops the run just before that point, leaving the game in the middle of the move,
        to be read (:meth:`fields`), never played on. Plain play (:meth:`apply`) is unchanged.

        Returns ``(points, stopped)``: one :class:`ChancePoint` per point met, in order (when
        stopped, the last is the one it stopped at: its outcome -1, and its range -1 if it is a
        draw that waits for the discard pile to be reshuffled); with ``states``
        each holds the state just before it and, for a flip or draw, just after it (as
        :meth:`fields` gives them). The luck tracer (``evaluation/chance.py``) is built on it."""
        if stop is not None and (isinstance(stop, bool) or not isinstance(stop, int) or stop < 0):
            raise ArgumentError(f"stop must be a chance point's index (an int >= 0) or None, not {_r(stop)}")
        if states.__class__ is not bool:
            raise ArgumentError(f"states must be True or False, not {_r(states)}")
        core = self._core
        if action is not None:
            action = as_action(action)
            if not core.stopped and not (0 <= action < self._n_actions and core.is_legal(action)):
                raise IllegalActionError(f"action {action} is not legal here; legal: {core.legal_actions()}")
        try:
            force = [(as_action(i), as_action(j)) for i, j in force]
        except (TypeError, ValueError):
            raise ArgumentError(f"force must be a list of (point, outcome) pairs, not {_r(force)}") from None
        try:
            points, stopped = core.run_chance(action, force, -1 if stop is None else stop, bool(states))
        except _core.CoreError as e:
            raise ArgumentError(f"run_chance: {e}") from None
        return [ChancePoint(*p) for p in points], stopped

    @property
    def stopped(self) -> bool:
        """Whether :meth:`run_chance` left this game in the middle of a move."""
        return self._core.stopped

    def fields(self) -> dict:
        """Every field of the state at once, as plain data (a dict of :class:`GameState`'s field
        names, the pending decision and the result included): a copy, quicker than reading
        ``game.s`` field by field."""
        return self._core.fields()

    # -- saving, loading, cloning ----------------------------------------------------------------

    def clone(self) -> "Game":
        return self._from_core(self._core.clone(), self.cards, self.seed, self.options)

    def __reduce__(self):
        # pickled (for worker processes) as its record where it has one, else as its snapshot:
        # either restores it exactly. The standard card set goes as None, so that an unpickled
        # game shares it (a copy of it per unpickled game built its own tables, kept for good:
        # 2 GB in a worker after some 100,000 unpickles)
        cards = None if self.cards is default_cards() else self.cards
        try:
            return (_replay, (self.record(), cards, self._core.log is not None))
        except ArgumentError:  # no record
            return (_restore, (self.snapshot(), cards))

    def snapshot(self) -> dict:
        """A JSON-serialisable picture of the whole game; card lists hold names, decks top first."""
        c, names = self._core, self.cards.names
        nm = lambda ks: [names[k] for k in ks]  # noqa: E731 - a small local helper
        p = self.pending
        n = c.num_players
        hands, hoards, known = c.hands, c.hoards, c.known
        ready, used, limit = c.ready, c.cards_used, c.card_limit
        innate, restricted = c.innate_used, c.restricted
        canceled = c.canceled
        result = c.result()
        return {
            "version": 1,
            "seed": self.seed,
            "options": self.options,
            "num_players": n,
            "havok_deck": nm(c.havok),
            "hijinks_deck": nm(c.hijinks),
            "discard": nm(c.discard),
            "past_events": nm(c.past_events),
            "trash": nm(c.trash),
            "in_play": {"resolving": nm(self._resolving(c.in_play, canceled)),
                        "canceled": [[o, names[k]] for o, k in canceled]},
            "players": [{"dragon": self.dragon(i).name, "ready": ready[i], "hand": nm(hands[i]),
                         "hoard": nm(hoards[i]), "score": c.score(i),
                         "known_top": nm(known[i]), "cards_used": used[i],
                         "card_limit": limit[i], "innate_used": innate[i],
                         "restricted": restricted[i]} for i in range(n)],
            "current_player": c.current,
            "turn": c.turn,
            "pending": None if p is None else {
                "player": p["player"], "kind": p["kind"], "purpose": p["purpose"],
                "choices": list(p["choices"]), "labels": [self.action_label(a) for a in p["choices"]],
                "context": json.loads(json.dumps(p["context"]))},
            "result": result,
            "rng": c.rng,
            "stack": c.stack(),
            "log": c.log,
        }

    @staticmethod
    def _resolving(in_play: list[int], canceled: list) -> list[int]:
        rest = list(in_play)
        for _, k in canceled:
            rest.remove(k)
        return rest

    @classmethod
    def from_snapshot(cls, d: dict, cards: CardSet | None = None) -> "Game":
        """Restore a game saved by :meth:`snapshot`, or a hand-edited one (give ``pending`` null
        to have the decision derived). Every field is validated first (:mod:`havok_env.snapshot`);
        any problem raises :class:`SnapshotError` naming the field."""
        if cards is not None and not isinstance(cards, CardSet):
            raise ArgumentError(f"cards must be a card set (havok_env.load_cards), not {_r(cards)}")
        cards = cards or default_cards()
        core_tables = tables(cards).core

        def load(state: dict, advance: bool, seed, options) -> Game:
            return cls._from_core(_core.Game.load(core_tables, state, advance), cards, seed, options)

        return restore(d, cards, load)

    def check_cards(self):
        """Raise SnapshotError unless every card of the set is in exactly one place."""
        try:
            self._core.check_cards()
        except _core.CoreError as e:
            raise SnapshotError(str(e)) from None

    # -- labels ----------------------------------------------------------------------------------

    def action_label(self, action: int, pending: dict | None = None) -> str:
        """What ``action`` means in the pending decision, in words."""
        if pending is not None and not (isinstance(pending, dict) and {"player", "purpose", "context"} <= set(pending)):
            raise ArgumentError(f"pending must be None or a pending decision (Game.pending), not {_r(pending)}")
        p = pending if pending is not None else self.pending
        cs = self.cards
        if not isinstance(action, int) or not 0 <= action < self.layout.size:
            return f"no such action {action!r}"
        words = DECISIONS.get(p["purpose"] if p else "main", _UNKNOWN)
        ctx = p["context"] if p else {}
        me = p["player"] if p else self._core.current
        if action == self.END:
            return words.end
        if action < self.INNATE_PLAY:
            return words.card.format(cs.names[self.card_of(action)])
        d = self.dragon(me)
        if action == self.INNATE_PLAY:
            return f"use {d.play.name} ({d.name}'s innate play)"
        if action == self.INNATE_CRASH:
            return f"crash with {d.crash.name} ({d.name}'s innate crash)"
        if action < self.SEAT:
            return f"discard {cs.names[self.discard_of(action)]} and draw"
        if action < self.TREASURE:
            if action - self.SEAT >= self.num_players:  # the seat block holds the largest table's seats
                return "target a seat this table does not have"
            seat = self.seat_from_action(me, action)
            return f"target {self.seat_name(seat)}" + (" (yourself)" if seat == me else "")
        if action < self.OPTION:
            name = cs.names[self.treasure_of(action)]
            owner = ctx.get("target")
            if words.treasure:
                return words.treasure.format(name)
            return f"target {self.seat_name(owner)}'s {name}" if owner is not None else f"target {name}"
        i = action - self.OPTION
        shown = ctx.get("shown", [])
        if words.option and (i < len(shown) or "{card}" not in words.option):
            return words.option.format(n=i + 1, card=cs.names[shown[i]] if i < len(shown) else None)
        return f"option {i + 1}"


# Game.apply(action), "take ``action`` for the pending decision and advance to the next one", is
# a C method of the class (py_game.cpp): a legal plain int costs one C call and no Python frame,
# the benchmark's "one Python call per decision"; everything else goes to Game._apply_checked.
Game.apply = _core.install_apply(Game, SnapshotError)

# the labels of a purpose outside the table (a hand-made pending decision)
_UNKNOWN = Purpose("", "", "Choose:")


def _restore(snapshot: dict, cards: CardSet) -> Game:
    return Game.from_snapshot(snapshot, cards=cards)


def _replay(record: dict, cards: CardSet, log: bool) -> Game:
    return Game.replay(record, cards=cards, log=log)
