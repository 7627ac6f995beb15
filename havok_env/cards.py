"""The card set: loading and validating the data files in ``havok_env/data``.

Every card in the game is identified by one small integer, its *kind*: treasures first, then events,
then Hijinks cards (so a pile is a plain list of ints and copies of a card are interchangeable).
Dragons are numbered separately, in the order of ``dragons.toml``, which is the one list of the
dragons: each has its own affinity, and the affinities of treasures and cards are the dragons'
(a fifth dragon is one more ``[[dragon]]`` table, with an affinity of its own). The files are
validated on load; any problem raises :class:`CardDataError` naming the file, the card and what
is wrong.

``default_cards()`` is the card set every game uses unless given another: the package's
``havok_env/data``, or the folder named by the environment variable ``HAVOK_CARDS`` (a copy of
it with changed cards), which worker processes inherit.
"""

from __future__ import annotations

import os
import re
import reprlib
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from .constants import HAND_SIZE, MAX_PLAYERS, N_OPTIONS, WIN_SCORE

DATA_DIR = Path(__file__).parent / "data"
#: The environment variable naming another card-data folder for :func:`default_cards`.
CARDS_ENV = "HAVOK_CARDS"
_AFFINITY = re.compile(r"[a-z][a-z0-9_-]*")  # lower case: dragons are looked up by it, in any case
HIJINKS_TYPES = (
    "steal", "break", "trade", "salvage", "havok", "draw", "foresight", "pass", "recall",
    "nullify", "cancel", "defend",
)

# Effect primitives and the parameters each accepts (name -> allowed type or tuple of values).
# Their behaviour lives in the native core (src/havok_core/effects.cpp); a test checks that the
# core interprets exactly these.
_VICTIMS = ("opponent", "richer", "richest", "you", "right")
OP_PARAMS: dict[str, dict[str, object]] = {
    "steal": {"max_value": int, "count": int, "victim": _VICTIMS, "thief": ("you", "right")},
    "break": {"max_value": int, "victim": _VICTIMS},
    "trade": {"max_gain": int, "max_value": int, "give": ("choice", "lowest"), "victim": _VICTIMS},
    "salvage": {"max_value": int, "pick": ("choice", "best"), "else_draw": int},
    "pass_left": {"skip_you": bool},
    "draw": {"n": int},
    "discard_hand": {},
    "flip": {"choose_from": range(1, N_OPTIONS + 1), "optional": bool},
    "foresight": {"n": range(1, N_OPTIONS + 1)},
    "recall": {},
    "extra_play": {},
    "tire": {"who": ("you", "actor")},
    "ready": {},
    "restrict": {},
    "break_lowest_all": {},
    "tribute": {},
    "treasure_map": {},
    "cancel": {"to_discard": bool},
    "nullify": {},
    "redirect_event": {"to": ("left", "choice")},
    "redirect_treasure": {},
    "divert_break": {},
    "swap_target": {},
}
# Parameters a primitive cannot do without.
OP_REQUIRED: dict[str, set[str]] = {"draw": {"n"}, "foresight": {"n"}}
# Primitives whose targets are chosen before a crash window opens on the card that uses them.
TARGETED_OPS = frozenset({"steal", "break", "trade", "salvage", "swap_target", "redirect_event"})
# Primitives that act on the frame being crashed, and the trigger they need (what that frame
# is); only crash effects may use them. swap_target also needs a trigger on typed uses, which
# target a treasure for it to swap.
CRASH_OPS = {"cancel": "use", "nullify": "event", "redirect_event": "event",
             "redirect_treasure": "treasure", "divert_break": "use", "swap_target": "use"}


class ListOf(tuple):
    """A parameter spec: a list of these values."""


TRIGGER_PARAMS: dict[str, dict[str, object]] = {
    "event": {},
    "treasure": {"max_printed": int},
    "use": {"uses": ListOf(("play", "crash")), "types": ListOf(HIJINKS_TYPES),
            "targets": ("any", "own", "other"), "needs_spare": bool},
}
# At most this many copies of one card: no more than a whole shipped deck holds (and a count in
# a pile then stays within the observation's bound). A treasure is worth at most a winning hoard.
MAX_COPIES = 40
MAX_VALUE = WIN_SCORE
# the top-level keys of each file (besides its [[records]])
FILE_KEYS = {"havok.toml": {"starting_treasure", "treasure", "event"}, "hijinks.toml": {"card"},
             "dragons.toml": {"dragon"}}

_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlevel = 40, 40, 3
_r = _repr.repr


class CardDataError(ValueError):
    """A card file is malformed or inconsistent."""


@dataclass(frozen=True)
class Ability:
    """A Hijinks card kind or a dragon's innate ability: what the engine resolves."""

    name: str
    kind: str  # "play" or "crash"
    type: str
    text: str
    effect: tuple
    affinity: str | None = None
    bonus: str | None = None  # "instead" | "also" | None
    bonus_text: str = ""
    bonus_effect: tuple = ()
    trigger: dict | None = None

    def ops(self, affinity: str | None) -> tuple:
        """The effect list for a user whose dragon has ``affinity`` (bonus applied)."""
        if self.bonus and affinity is not None and affinity == self.affinity:
            return self.bonus_effect if self.bonus == "instead" else self.effect + self.bonus_effect
        return self.effect


@dataclass(frozen=True)
class Dragon:
    name: str
    affinity: str
    ready_type: str
    ready_text: str
    play: Ability
    crash: Ability


@dataclass
class CardSet:
    """All card definitions, indexed by kind. Built by :func:`load_cards`."""

    names: list[str]  # kind -> name
    copies: list[int]  # kind -> number of copies in the game
    value: list[int]  # kind -> printed treasure value (0 for non-treasures)
    affinity: list[str | None]  # kind -> affinity
    n_treasures: int
    n_events: int
    n_hijinks: int
    events: list[Ability]  # event index -> definition (kind = n_treasures + index)
    hijinks: list[Ability]  # hijinks index -> definition (kind = first_hijinks + index)
    dragons: list[Dragon]
    starting_treasure: int
    texts: list[str] = field(default_factory=list)  # kind -> rules text for people
    kind_of: dict[str, int] = field(default_factory=dict)

    @property
    def affinities(self) -> tuple[str, ...]:
        """The dragons' affinities, in the order of the dragons."""
        return tuple(d.affinity for d in self.dragons)

    @property
    def first_event(self) -> int:
        return self.n_treasures

    @property
    def first_hijinks(self) -> int:
        return self.n_treasures + self.n_events

    @property
    def n_kinds(self) -> int:
        return self.n_treasures + self.n_events + self.n_hijinks

    def is_treasure(self, kind: int) -> bool:
        return kind < self.n_treasures

    def is_event(self, kind: int) -> bool:
        return self.n_treasures <= kind < self.first_hijinks

    def is_hijinks(self, kind: int) -> bool:
        return kind >= self.first_hijinks

    def event(self, kind: int) -> Ability:
        return self.events[kind - self.n_treasures]

    def card(self, kind: int) -> Ability:
        return self.hijinks[kind - self.first_hijinks]

    def kind(self, name: str) -> int:
        try:
            return self.kind_of[name]
        except KeyError:
            raise KeyError(f"unknown card {name!r}") from None

    def dragon_index(self, name: str) -> int:
        """Dragon by name or affinity, case-insensitive."""
        key = str(name).strip().lower()
        for i, d in enumerate(self.dragons):
            if key in (d.name.lower(), d.affinity):
                return i
        choices = ", ".join(f"{d.affinity} ({d.name})" for d in self.dragons)
        raise ValueError(f"unknown dragon {name!r}; choose one of: {choices}")

    @property
    def extra_plays_come_with_a_card(self) -> bool:
        """Whether only Hijinks cards grant extra plays (``extra_play``): then each comes with
        its card's own play, and a turn never has more than one card left to play."""
        others = [*self.events, *(a for d in self.dragons for a in (d.play, d.crash))]
        return not any(op["op"] == "extra_play" for a in others for op in a.effect + a.bonus_effect)

    def all_cards(self) -> list[int]:
        """Every physical card as a list of kinds (copies repeated)."""
        return [k for k in range(self.n_kinds) for _ in range(self.copies[k])]


def _load_toml(path: Path) -> dict:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CardDataError(f"{path}: card file not found") from None
    except OSError as e:
        raise CardDataError(f"{path}: cannot read the card file: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CardDataError(f"{path}: not UTF-8 text (byte {e.start})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CardDataError(f"{path}: not valid TOML: {e}") from None
    except RecursionError:
        raise CardDataError(f"{path}: not valid card data: nested too deeply") from None
    extra = sorted(set(doc) - FILE_KEYS.get(path.name, set(doc)))
    if extra:
        raise CardDataError(f"{path.name}: unknown top-level field(s) {', '.join(extra)}")
    return doc


class _Checker:
    """Validates one record of one file; every error names both."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = path, what

    def fail(self, problem: str):
        raise CardDataError(f"{self.path.name}: {self.what}: {problem}")

    def get(self, rec: dict, key: str, typ, default=..., choices=None, bounds=None):
        if key not in rec:
            if default is ...:
                self.fail(f"missing field {key!r}")
            return default
        val = rec[key]
        if typ is int and (isinstance(val, bool) or not isinstance(val, int)):
            self.fail(f"field {key!r} must be an integer, not {_r(val)}")
        if typ is not int and not isinstance(val, typ):
            self.fail(f"field {key!r} must be {'text' if typ is str else typ.__name__}, not {_r(val)}")
        if typ is str and key == "name" and not val.strip():
            self.fail("field 'name' is empty")
        if choices is not None and val not in choices:
            self.fail(f"field {key!r} is {_r(val)}; expected one of {', '.join(map(str, choices))}")
        if bounds is not None and not bounds[0] <= val <= bounds[1]:
            self.fail(f"field {key!r} must be from {bounds[0]} to {bounds[1]}, not {val}")
        return val

    def copies(self, rec: dict) -> int:
        return self.get(rec, "copies", int, 1, bounds=(1, MAX_COPIES))

    def known_fields(self, rec: dict, allowed: set[str]):
        extra = set(rec) - allowed
        if extra:
            self.fail(f"unknown field(s) {', '.join(sorted(extra))}")

    def param(self, where: str, v, spec):
        """Checks one parameter value against its spec (see OP_PARAMS and TRIGGER_PARAMS)."""
        if isinstance(spec, range):  # bounded by the action space's option block
            if isinstance(v, bool) or not isinstance(v, int) or v not in spec:
                self.fail(f"{where} must be an integer from {spec.start} to {spec.stop - 1}, "
                          f"not {_r(v)}")
        elif isinstance(spec, ListOf):
            if not isinstance(v, list) or not all(isinstance(x, str) and x in spec for x in v):
                self.fail(f"{where} must be a list of {', '.join(spec)}; got {_r(v)}")
        elif isinstance(spec, tuple):
            if not isinstance(v, str) or v not in spec:
                self.fail(f"{where} is {_r(v)}; expected one of {', '.join(map(str, spec))}")
        elif spec is int and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            self.fail(f"{where} must be a non-negative integer, not {_r(v)}")
        elif spec is bool and not isinstance(v, bool):
            self.fail(f"{where} must be true or false, not {_r(v)}")

    def effect(self, rec: dict, key: str, crash: bool) -> tuple:
        ops = self.get(rec, key, list)
        if not ops:
            self.fail(f"{key!r} is empty")
        out = []
        for op in ops:
            if not isinstance(op, dict) or "op" not in op:
                self.fail(f"{key!r} entries must be tables with an 'op' field, got {_r(op)}")
            name = op["op"]
            if not isinstance(name, str) or name not in OP_PARAMS:
                self.fail(f"unknown effect primitive {_r(name)} in {key!r}")
            if name in CRASH_OPS and not crash:
                self.fail(f"effect primitive {name!r} can only be used by a crash")
            if name == "tire" and op.get("who") == "actor" and not crash:
                self.fail("tire with who = \"actor\" can only be used by a crash")
            for p, v in op.items():
                if p == "op":
                    continue
                spec = OP_PARAMS[name].get(p)
                if spec is None:
                    self.fail(f"effect primitive {name!r} takes no parameter {_r(p)}")
                self.param(f"{name}.{p}", v, spec)
            for p in sorted(OP_REQUIRED.get(name, set()) - set(op)):
                self.fail(f"effect primitive {name!r} needs parameter {p!r}")
            out.append(dict(op))
        if sum(o["op"] in TARGETED_OPS for o in out) > 1:
            self.fail(f"{key!r} has more than one targeted primitive")
        return tuple(out)

    def crash_fits(self, ops: tuple, trigger: dict):
        """A crash primitive acts on what its trigger opens a window on (see CRASH_OPS)."""
        for op in ops:
            name = op["op"]
            need = "use" if name == "tire" and op.get("who") == "actor" else CRASH_OPS.get(name)
            if need and trigger["on"] != need:
                self.fail(f"effect primitive {name!r}{' (who = actor)' if name == 'tire' else ''} "
                          f"needs a trigger on {need!r}, not on {trigger['on']!r}")
            if name == "swap_target" and "types" not in trigger:
                self.fail("swap_target needs a trigger on typed uses ('types'), which target a "
                          "treasure to swap")

    def trigger(self, rec: dict) -> dict:
        trig = self.get(rec, "trigger", dict)
        on = trig.get("on")
        if not isinstance(on, str) or on not in TRIGGER_PARAMS:
            self.fail(f"trigger 'on' is {_r(on)}; expected one of {', '.join(TRIGGER_PARAMS)}")
        for p, v in trig.items():
            if p == "on":
                continue
            spec = TRIGGER_PARAMS[on].get(p)
            if spec is None:
                self.fail(f"trigger on {on!r} takes no parameter {_r(p)}")
            self.param(f"trigger {p}", v, spec)
        if on == "use" and "types" in trig and "targets" not in trig:
            self.fail("a trigger on typed uses must say which hoard is targeted ('targets')")
        return dict(trig)

    def ability(self, rec: dict, kind: str, affinity: str | None, with_bonus: bool) -> Ability:
        name = self.get(rec, "name", str)
        typ = self.get(rec, "type", str, choices=HIJINKS_TYPES)
        text = self.get(rec, "text", str)
        crash = kind == "crash"
        trigger = self.trigger(rec) if crash else None
        if not crash and "trigger" in rec:
            self.fail("a play has no trigger")
        effect = self.effect(rec, "effect", crash)
        bonus, bonus_text, bonus_effect = None, "", ()
        if with_bonus and "bonus" in rec:
            bonus = self.get(rec, "bonus", str, choices=("instead", "also"))
            bonus_text = self.get(rec, "bonus_text", str)
            bonus_effect = self.effect(rec, "bonus_effect", crash)
            if bonus == "also" and sum(o["op"] in TARGETED_OPS for o in effect + bonus_effect) > 1:
                self.fail("'effect' and an \"also\" 'bonus_effect' have more than one targeted "
                          "primitive between them")
        elif "bonus_effect" in rec or "bonus_text" in rec:
            self.fail("'bonus_effect' and 'bonus_text' need 'bonus = \"instead\"' or '\"also\"'")
        if crash:
            self.crash_fits(effect + bonus_effect, trigger)
        return Ability(name, kind, typ, text, effect, affinity, bonus, bonus_text, bonus_effect, trigger)


def _records(path: Path, doc: dict, key: str) -> list[dict]:
    recs = doc.get(key)
    if not isinstance(recs, list) or not recs or not all(isinstance(r, dict) for r in recs):
        raise CardDataError(f"{path.name}: expected one or more [[{key}]] tables")
    return recs


def load_cards(data_dir: str | Path = DATA_DIR) -> CardSet:
    """Load and validate ``havok.toml``, ``hijinks.toml`` and ``dragons.toml`` from ``data_dir``."""
    data_dir = Path(data_dir)
    names: list[str] = []
    copies: list[int] = []
    value: list[int] = []
    affinity: list[str | None] = []
    texts: list[str] = []

    def add(path: Path, name: str, n: int, v: int, aff, text: str):
        if name in names:
            raise CardDataError(f"{path.name}: {name!r}: duplicate card name")
        names.append(name)
        copies.append(n)
        value.append(v)
        affinity.append(aff)
        texts.append(text)

    # Dragons first: their affinities are the ones cards may have
    path = data_dir / "dragons.toml"
    doc = _load_toml(path)
    dragons = []
    for i, rec in enumerate(_records(path, doc, "dragon")):
        c = _Checker(path, f"dragon {_r(rec.get('name', f'#{i + 1}'))}")
        c.known_fields(rec, {"name", "affinity", "ready_type", "ready_text", "play", "crash"})
        name = c.get(rec, "name", str)
        aff = c.get(rec, "affinity", str)
        if not _AFFINITY.fullmatch(aff):
            c.fail(f"affinity {aff!r} must be one lower-case word (letters, digits, '-' or '_')")
        # a dragon is named by its name or its affinity, in any case: no two may answer to one
        if any({aff, name.lower()} & {d.affinity, d.name.lower()} for d in dragons):
            c.fail("two dragons share a name or an affinity")
        abilities = {}
        for slot in ("play", "crash"):
            sub = c.get(rec, slot, dict)
            cs = _Checker(path, f"dragon {name!r} innate {slot}")
            cs.known_fields(sub, {"name", "type", "text", "effect", "trigger"})
            abilities[slot] = cs.ability(sub, slot, aff, with_bonus=False)
        dragons.append(Dragon(name, aff, c.get(rec, "ready_type", str, choices=HIJINKS_TYPES),
                              c.get(rec, "ready_text", str), abilities["play"], abilities["crash"]))
    if len(dragons) < MAX_PLAYERS:
        raise CardDataError(f"{path.name}: {MAX_PLAYERS} dragons are needed for {MAX_PLAYERS} players, "
                            f"found {len(dragons)}")
    affinities = tuple(d.affinity for d in dragons)

    # Havok deck
    path = data_dir / "havok.toml"
    doc = _load_toml(path)
    for i, rec in enumerate(_records(path, doc, "treasure")):
        c = _Checker(path, f"treasure {_r(rec.get('name', f'#{i + 1}'))}")
        c.known_fields(rec, {"name", "copies", "value", "affinity"})
        n = c.copies(rec)
        v = c.get(rec, "value", int, bounds=(0, MAX_VALUE))
        aff = c.get(rec, "affinity", str, None, affinities)
        text = f"Treasure worth {v}" + (f" ({v + 1} to a {aff} dragon)" if aff else "") + "."
        add(path, c.get(rec, "name", str), n, v, aff, text)
    n_treasures = len(names)
    events = []
    for i, rec in enumerate(_records(path, doc, "event")):
        c = _Checker(path, f"event {_r(rec.get('name', f'#{i + 1}'))}")
        c.known_fields(rec, {"name", "copies", "affinity", "text", "effect", "bonus", "bonus_text",
                             "bonus_effect"})
        aff = c.get(rec, "affinity", str, None, affinities)
        ev = c.ability({**rec, "type": "havok"}, "play", aff, with_bonus=True)
        if ev.bonus and aff is None:
            c.fail("a bonus needs an affinity")
        events.append(ev)
        add(path, ev.name, c.copies(rec), 0, aff,
            ev.text + (f" Bonus ({aff}): {ev.bonus_text}" if ev.bonus else ""))
    start_name = doc.get("starting_treasure")
    if not isinstance(start_name, str) or start_name not in names[:n_treasures]:
        raise CardDataError(f"{path.name}: starting_treasure {_r(start_name)} is not a treasure")
    starting = names.index(start_name)
    if copies[starting] < MAX_PLAYERS:  # one in each hoard
        raise CardDataError(f"{path.name}: starting treasure {start_name!r} needs at least "
                            f"{MAX_PLAYERS} copies")

    # Hijinks deck
    path = data_dir / "hijinks.toml"
    doc = _load_toml(path)
    hijinks = []
    for i, rec in enumerate(_records(path, doc, "card")):
        c = _Checker(path, f"card {_r(rec.get('name', f'#{i + 1}'))}")
        c.known_fields(rec, {"name", "copies", "affinity", "kind", "type", "trigger", "text", "effect",
                             "bonus", "bonus_text", "bonus_effect"})
        aff = c.get(rec, "affinity", str, choices=affinities)
        kind = c.get(rec, "kind", str, choices=("play", "crash"))
        card = c.ability(rec, kind, aff, with_bonus=True)
        hijinks.append(card)
        add(path, card.name, c.copies(rec), 0, aff,
            card.text + (f" Bonus ({aff}): {card.bonus_text}" if card.bonus else ""))
    if sum(copies[len(names) - len(hijinks):]) < MAX_PLAYERS * HAND_SIZE:
        raise CardDataError(f"{path.name}: the Hijinks deck needs at least {MAX_PLAYERS * HAND_SIZE} "
                            f"cards to deal {MAX_PLAYERS} hands")

    cs = CardSet(names, copies, value, affinity, n_treasures, len(events), len(hijinks), events,
                 hijinks, dragons, starting, texts)
    cs.kind_of = {n: i for i, n in enumerate(names)}
    return cs


@lru_cache(maxsize=1)
def default_cards() -> CardSet:
    """The card set every game uses unless given another (loaded once): the package's, or the
    folder named by ``HAVOK_CARDS``, so that scripts and their worker processes all use it."""
    folder = os.environ.get(CARDS_ENV)
    if not folder:
        return load_cards(DATA_DIR)
    try:
        return load_cards(folder)
    except CardDataError as e:
        raise CardDataError(f"{CARDS_ENV}={folder}: {e}") from None
