"""Restoring a game from a snapshot (``Game.from_snapshot``), every field checked first.

A snapshot is plain data that anyone may have edited, so :func:`restore` reads it against a schema
(the type, range and place of every field, the engine's work-in-progress frames included) and then
against itself: each card of the set in exactly one place, distinct dragons, scores and a result
that agree with the hoards, each frame of the stack consistent with the frame below it and with the
cards held in play. Only then does the native core run, from the validated frames, to the pending
decision. A snapshot whose ``pending`` is null has it derived that way (how a hand-built position is
given); one that gives it, as :meth:`Game.snapshot` writes it, must agree with it and with every
other field. Every problem raises :class:`SnapshotError` naming the field, e.g.
``snapshot players[1].hand[2]: 'Foo' is not a Hijinks card``.

The stack, bottom first: the turn frame; above it the Havok card flipped at the start of the turn
or the card or ability played; above a flipped card or a used one, its crash window or the crash
that won it; above an event or a card resolving, a Havok card its ``flip`` primitive turned over.
Each frame's scratch space (``t``, ``o``, ``pc``) must be one its primitives can be in.

This module sits below ``engine.py``, which uses it and is never imported by it: the reader asks
the rules of games made for it by the ``load`` that :meth:`Game.from_snapshot` hands it.
"""

from __future__ import annotations

import reprlib
from collections import Counter

from . import _core
from .constants import END_REASONS, N_OPTIONS, PLAYER_COUNTS, SEED_MAX, SEED_MIN, WIN_SCORE, is_player_count
from .decisions import DECISION_KINDS, PURPOSES


class SnapshotError(ValueError):
    """A saved game that cannot be restored."""


TOP_KEYS = {"version", "num_players", "players", "havok_deck", "hijinks_deck", "discard",
            "past_events", "trash", "in_play", "current_player", "turn", "pending", "result", "rng",
            "stack"}
TOP_OPTIONAL = {"seed", "options", "log"}
PLAYER_KEYS = {"dragon", "ready", "hand", "hoard"}
PLAYER_OPTIONAL = {"score", "known_top", "cards_used", "card_limit", "innate_used", "restricted"}
# the piles and the kind of card each holds
PILES = {"havok_deck": "Havok", "hijinks_deck": "Hijinks", "discard": "Hijinks",
         "past_events": "event", "trash": "treasure"}
PENDING_KEYS = {"player", "kind", "purpose", "choices", "context"}
RESULT_REASONS = tuple(END_REASONS)  # the engine's, in its order

# frame kind -> (required keys, optional keys, the steps it can be at)
FRAMES = {
    "turn": ({"f", "step"}, set(), ("start", "main")),
    "havok": ({"f", "card", "you", "flipper", "step"},
              {"to", "nullified", "ok", "ability", "t", "o", "pc"}, (0, 1, 2)),
    "use": ({"f", "user", "you", "ability", "card", "use", "crashed", "step", "t", "o", "pc"},
            {"canceled", "to_discard", "divert", "ok"}, ("target", "window", "effect")),
    "window": ({"f", "trig", "order", "i", "decl"}, set(), None),
}
# (frame kind, step) -> the frame kinds that can lie on top of it; a frame not listed is always
# the top one (it is asking a question, or about to go on without one)
ABOVE = {("turn", "main"): ("havok", "use"), ("havok", 1): ("window", "use"),
         ("havok", 2): ("havok",), ("use", "window"): ("window", "use"), ("use", "effect"): ("havok",)}
# the keys of a primitive's scratch space (frame["o"]) while it waits; every other primitive
# finishes without waiting, so its scratch space is empty
SCRATCH = {"flip": {"shown", "pushed"}, "pass_left": {"chosen", "asking"}, "break_lowest_all": {"i"}}
# the targets (frame["t"]) a chooser fills in, besides "done"
TARGETS = {"steal": {"victim", "actor", "picks"}, "break": {"victim", "actor", "picks"},
           "trade": {"victim", "actor", "picks", "give"}, "salvage": {"picks"},
           "swap_target": {"swap"}, "redirect_event": {"seat"}}

_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlevel = 40, 40, 3
_r = _repr.repr


def _fail(path: str, problem: str):
    raise SnapshotError(f"snapshot {path}: {problem}" if path else f"snapshot: {problem}")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(v, path: str, lo: int, hi: int) -> int:
    if not _is_int(v):
        _fail(path, f"must be an integer, not {_r(v)}")
    if not lo <= v <= hi:
        _fail(path, f"{v} is out of range ({lo} to {hi})")
    return int(v)


def _bool(v, path: str) -> bool:
    if not isinstance(v, bool):
        _fail(path, f"must be true or false, not {_r(v)}")
    return v


def _list(v, path: str, what: str = "a list") -> list:
    if not isinstance(v, list):
        _fail(path, f"must be {what}, not {_r(v)}")
    return v


def _keys(v, path: str, required: set, optional: set = frozenset(), what: str = "an object"):
    if not isinstance(v, dict):
        _fail(path, f"must be {what}, not {_r(v)}")
    extra = [k for k in v if k not in required and k not in optional]
    if extra:
        _fail(path, f"unknown field {_r(extra[0])}")
    missing = sorted(required - set(v))
    if missing:
        _fail(path, f"missing field {missing[0]!r}")
    return v


def _choice(v, path: str, choices) -> object:
    if not any(v == c and type(v) is type(c) for c in choices):
        _fail(path, f"{_r(v)} is not one of {', '.join(map(repr, choices))}")
    return v


# the fields a snapshot may leave out (they are derived or take their defaults)
OPTIONAL = TOP_OPTIONAL | PLAYER_OPTIONAL | {"labels"}


def _differs(given, derived, optional=frozenset()) -> list | None:
    """The path (a list of keys and indices) to the first place where ``given`` differs from
    ``derived``, or None. Keys named in ``optional`` may be missing from ``given``. It walks
    ``derived``, so a deeply nested ``given`` costs no deeper recursion than the engine's data."""
    if isinstance(derived, dict):
        if not isinstance(given, dict):
            return []
        for k in given:
            if k not in derived:
                return [k]
        for k, v in derived.items():
            if k not in given:
                if k in optional:
                    continue
                return [k]
            where = _differs(given[k], v, optional)
            if where is not None:
                return [k, *where]
        return None
    if isinstance(derived, list):
        if not isinstance(given, list) or len(given) != len(derived):
            return []
        for i, (a, b) in enumerate(zip(given, derived)):
            where = _differs(a, b, optional)
            if where is not None:
                return [i, *where]
        return None
    return None if type(given) is type(derived) and given == derived else []


def _path(parts: list) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _get(d, parts: list):
    for p in parts:
        d = d.get(p) if isinstance(d, dict) else d[p] if isinstance(d, list) and p < len(d) else None
    return d


class _Draft:
    """The state read so far, in the core's plain form (card kinds, frames as dicts); the core
    gets a copy of it whenever a rule is asked (:meth:`_Reader.sync`)."""

    def __init__(self, n: int, dragons: list[int], rng: int):
        self.num_players, self.dragons, self.rng = n, dragons, rng
        self.havok, self.hijinks, self.discard, self.past_events, self.trash = [], [], [], [], []
        self.in_play, self.canceled, self.stack = [], [], []
        self.hands, self.hoards, self.known = ([[] for _ in range(n)] for _ in range(3))
        self.ready, self.innate_used, self.restricted = [False] * n, [False] * n, [False] * n
        self.cards_used, self.card_limit = [0] * n, [1] * n
        self.current = self.turn = 0
        self.result = self.log = None
        self.seed, self.options = None, None

    def plain(self, stack: list, result) -> dict:
        return {"num_players": self.num_players, "dragons": self.dragons, "rng": self.rng,
                "havok": self.havok, "hijinks": self.hijinks, "discard": self.discard,
                "past_events": self.past_events, "trash": self.trash, "in_play": self.in_play,
                "canceled": self.canceled, "hands": self.hands, "hoards": self.hoards,
                "known": self.known, "ready": self.ready, "innate_used": self.innate_used,
                "restricted": self.restricted, "cards_used": self.cards_used,
                "card_limit": self.card_limit, "current": self.current, "turn": self.turn,
                "stack": stack, "result": result, "log": self.log}


class _Reader:
    """Reads one snapshot into a new game, field by field. ``load(state, advance, seed, options)``
    makes a game (engine.Game) from the core's plain state; ``self.g`` is the game of the last
    :meth:`sync`, whose rules the checks ask."""

    def __init__(self, cards, load):
        self.cs = cards
        self.load = load
        self.g = None

    def sync(self, stack: list | None = None, advance: bool = False):
        """Makes a game of the draft (``self.g``), so that its rules can be asked about it: with
        ``stack`` the frames validated so far (a turn frame by default), without the result;
        with ``advance`` the whole position, which the core then plays on to the next decision
        (as the engine does from any position), refusing a question with no answer (which an
        edited position can ask: a trade whose chosen victim has nothing left to take, a
        counteroffer with no treasure to offer). That last game is the one restored, with the
        snapshot's seed and options."""
        s = self.s
        if advance:
            plain = s.plain(s.stack, s.result)
        else:
            plain = s.plain(stack or [{"f": "turn", "step": "start"}], None)
        try:
            self.g = self.load(plain, advance, s.seed, s.options)
        except _core.CoreError as e:
            msg = str(e)
            if msg.startswith("cards out of place"):
                raise SnapshotError(msg) from None
            _fail("stack", msg if msg.startswith("the position asks") else
                  f"the game cannot go on from this position: {msg}")

    # -- cards and seats ---------------------------------------------------------------------

    def kind_class(self, k: int) -> str:
        cs = self.cs
        return "treasure" if cs.is_treasure(k) else "event" if cs.is_event(k) else "Hijinks"

    def fits(self, k: int, what: str) -> bool:
        c = self.kind_class(k)
        return what in (c, "any") or what == "Havok" and c != "Hijinks"

    @staticmethod
    def article(what: str) -> str:
        return {"treasure": "a treasure", "event": "an event", "Hijinks": "a Hijinks card",
                "Havok": "a Havok card (treasure or event)", "any": "a card"}[what]

    def card(self, v, path: str, what: str) -> int:
        """A card name in a pile -> its kind."""
        if not isinstance(v, str):
            _fail(path, f"must be a card name, not {_r(v)}")
        k = self.cs.kind_of.get(v)
        if k is None:
            _fail(path, f"{_r(v)} is not a card of this set")
        if not self.fits(k, what):
            _fail(path, f"{v!r} is not {self.article(what)}")
        return k

    def cards(self, v, path: str, what: str) -> list[int]:
        return [self.card(x, f"{path}[{i}]", what)
                for i, x in enumerate(_list(v, path, "a list of card names"))]

    def kind(self, v, path: str, what: str) -> int:
        """A card kind in a frame (frames hold kinds, not names)."""
        k = _int(v, path, 0, self.cs.n_kinds - 1)
        if not self.fits(k, what):
            _fail(path, f"card kind {k} ({self.cs.names[k]}) is not {self.article(what)}")
        return k

    def seat(self, v, path: str) -> int:
        return _int(v, path, 0, self.n - 1)

    # -- the snapshot ---------------------------------------------------------------------------

    def read(self, d):
        if not isinstance(d, dict) or not (_is_int(d.get("version")) and d["version"] == 1):
            raise SnapshotError("not a Havok & Hijinks snapshot (an object with 'version': 1)")
        _keys(d, "", TOP_KEYS, TOP_OPTIONAL)
        cs = self.cs
        if not is_player_count(d["num_players"]):
            _fail("num_players", f"must be {PLAYER_COUNTS}, not {_r(d['num_players'])}")
        n = self.n = d["num_players"]
        players = _list(d["players"], "players")
        if len(players) != n:
            _fail("players", f"{len(players)} players for num_players {n}")
        for i, pl in enumerate(players):
            _keys(pl, f"players[{i}]", PLAYER_KEYS, PLAYER_OPTIONAL)
        dragons = [self.dragon(pl["dragon"], f"players[{i}].dragon") for i, pl in enumerate(players)]
        for i, dr in enumerate(dragons):
            if dr in dragons[:i]:
                _fail(f"players[{i}].dragon", f"{cs.dragons[dr].name} is already player "
                                              f"{dragons.index(dr)}'s dragon")
        s = self.s = _Draft(n, dragons, _int(d["rng"], "rng", 0, (1 << 64) - 1))
        s.havok, s.hijinks, s.discard, s.past_events, s.trash = (
            self.cards(d[key], key, what) for key, what in PILES.items())
        in_play = _keys(d["in_play"], "in_play", {"resolving", "canceled"})
        resolving = self.cards(in_play["resolving"], "in_play.resolving", "any")
        for i, c in enumerate(_list(in_play["canceled"], "in_play.canceled")):
            path = f"in_play.canceled[{i}]"
            if not isinstance(c, list) or len(c) != 2:
                _fail(path, f"must be [owner seat, card name], not {_r(c)}")
            s.canceled.append([self.seat(c[0], path + "[0]"), self.card(c[1], path + "[1]", "Hijinks")])
        # the canceled copies first: the writer (Game.snapshot) lists as resolving what is left
        # once the first copy of each canceled card is taken out, so a card both canceled and
        # resolving (two copies of one Hijinks card) reads back as it was written
        s.in_play = [k for _, k in s.canceled] + resolving
        max_limit = 1 + len(cs.all_cards())  # one more card per card of the set, at the very most
        for i, pl in enumerate(players):
            at = f"players[{i}]"
            s.hands[i] = self.cards(pl["hand"], f"{at}.hand", "Hijinks")
            s.hoards[i] = self.cards(pl["hoard"], f"{at}.hoard", "treasure")
            s.ready[i] = _bool(pl["ready"], f"{at}.ready")
            s.known[i] = self.cards(pl.get("known_top", []), f"{at}.known_top", "Havok")
            s.card_limit[i] = _int(pl.get("card_limit", 1), f"{at}.card_limit", 1, max_limit)
            s.cards_used[i] = _int(pl.get("cards_used", 0), f"{at}.cards_used", 0, s.card_limit[i])
            s.innate_used[i] = _bool(pl.get("innate_used", False), f"{at}.innate_used")
            s.restricted[i] = _bool(pl.get("restricted", False), f"{at}.restricted")
        self.sync()
        g = self.g
        g.check_cards()
        for i, pl in enumerate(players):
            at = f"players[{i}]"
            if "score" in pl and not (_is_int(pl["score"]) and pl["score"] == g.score(i)):
                _fail(f"{at}.score", f"{_r(pl['score'])}, but the hoard is worth {g.score(i)}")
            known = s.known[i]
            if len(known) > N_OPTIONS or known != s.havok[:len(known)]:
                _fail(f"{at}.known_top", f"must be the top {N_OPTIONS} Havok cards at "
                                         f"most (the ones this seat saw), not {_r(pl['known_top'])}")
        s.current = self.seat(d["current_player"], "current_player")
        n_havok = sum(cs.copies[:cs.first_hijinks])
        s.turn = _int(d["turn"], "turn", 0, n_havok)
        # a game has at most one turn per Havok card, counting the turns still to come (each
        # turns one over): a count past that is no position of a game, and play from it would
        # count turns past the observation's bounds
        if s.turn > n_havok - len(s.havok):
            _fail("turn", f"{s.turn}, but {len(s.havok)} of the {n_havok} Havok cards are still in the "
                          f"deck (one turn per Havok card: {n_havok - len(s.havok)} turns at most by now)")
        s.seed = None if d.get("seed") is None else _int(d["seed"], "seed", SEED_MIN, SEED_MAX)
        s.options = self.options(d.get("options"), dragons)
        if d.get("log") is not None:
            s.log = list(_list(d["log"], "log", "a list of lines or null"))
            for i, line in enumerate(s.log):
                if not isinstance(line, str):
                    _fail(f"log[{i}]", f"must be text, not {_r(line)}")
        for i, fr in enumerate(_list(d["stack"], "stack")):
            s.stack.append(self.frame(i, fr))
        if not s.stack:
            _fail("stack", "is empty; it holds at least the turn frame")
        if s.stack[0]["step"] == "main" and s.turn == 0:
            _fail("turn", "0, but the turn has begun (turns count from 1)")
        held = Counter(resolving)
        held.subtract(self.held())
        if +held or -held:
            _fail("in_play.resolving", f"holds {sorted(cs.names[k] for k in resolving)}, but the "
                                       f"stack resolves {sorted(cs.names[k] for k in self.held())}")
        s.result = self.result(d["result"])
        pend = self.pending(d["pending"])
        self.sync(advance=True)
        if s.result is None and pend is not None:
            self.agrees(d)
        return self.g

    def dragon(self, v, path: str) -> int:
        if not isinstance(v, str):
            _fail(path, f"must be a dragon's name, not {_r(v)}")
        try:
            return self.cs.dragon_index(v)
        except ValueError as e:
            _fail(path, str(e))

    def options(self, v, dragons: list[int]) -> dict:
        """The game's options (for replays): num_players and the dragons asked for."""
        if v is None:
            return {"num_players": self.n, "dragons": None}
        _keys(v, "options", {"num_players", "dragons"})
        if not (_is_int(v["num_players"]) and v["num_players"] == self.n):
            _fail("options.num_players", f"{_r(v['num_players'])}, but the game has {self.n} players")
        asked = v["dragons"]
        if asked is not None:
            if not isinstance(asked, list) or len(asked) != self.n:
                _fail("options.dragons", f"must be null or one entry per seat, not {_r(asked)}")
            for i, x in enumerate(asked):
                if x is not None and self.dragon(x, f"options.dragons[{i}]") != dragons[i]:
                    _fail(f"options.dragons[{i}]", f"{x!r}, but player {i} plays "
                                                   f"{self.cs.dragons[dragons[i]].name}")
            asked = list(asked)
        return {"num_players": self.n, "dragons": asked}

    def result(self, v) -> dict | None:
        g = self.g
        scores = g.scores()
        if v is None:  # not over: a hoard worth 15 or more is checked when something resolves
            return None
        _keys(v, "result", {"winners", "reason", "scores"})
        if _differs(v["scores"], scores) is not None:
            _fail("result.scores", f"{_r(v['scores'])}, but the hoards are worth {scores}")
        winners = [p for p in range(self.n) if scores[p] == max(scores)]
        if _differs(v["winners"], winners) is not None:
            _fail("result.winners", f"{_r(v['winners'])}, but the highest hoards are {winners}'s")
        reason = _choice(v["reason"], "result.reason", RESULT_REASONS)
        if reason == "hoard_15" and max(scores) < WIN_SCORE:
            _fail("result.reason", f"'hoard_15', but the best hoard is worth {max(scores)}")
        if reason == "havok_empty" and self.s.havok:
            _fail("result.reason", f"'havok_empty', but {len(self.s.havok)} Havok cards are left")
        return {"winners": winners, "reason": reason, "scores": scores}

    def pending(self, v) -> dict | None:
        """Checks the pending decision's fields; the decision itself is derived (derive())."""
        if v is None:
            return None
        if self.s.result is not None:
            _fail("pending", "must be null: the game is over")
        _keys(v, "pending", PENDING_KEYS, {"labels"})
        self.seat(v["player"], "pending.player")
        _choice(v["kind"], "pending.kind", DECISION_KINDS)
        _choice(v["purpose"], "pending.purpose", PURPOSES)
        for i, a in enumerate(_list(v["choices"], "pending.choices")):
            _int(a, f"pending.choices[{i}]", 0, self.g.layout.size - 1)
        for i, x in enumerate(_list(v.get("labels", []), "pending.labels")):
            if not isinstance(x, str):
                _fail(f"pending.labels[{i}]", f"must be text, not {_r(x)}")
        if not isinstance(v["context"], dict):
            _fail("pending.context", f"must be an object, not {_r(v['context'])}")
        return v

    # -- the stack ----------------------------------------------------------------------------

    def frame(self, i: int, v) -> dict:
        """Validates stack[i] against its kind's schema and the frames below it (already in
        s.stack); returns an internal copy."""
        path = f"stack[{i}]"
        if not isinstance(v, dict):
            _fail(path, f"must be a frame (an object), not {_r(v)}")
        f = v.get("f")
        if not isinstance(f, str) or f not in FRAMES:
            _fail(f"{path}.f", f"{_r(f)} is not one of {', '.join(map(repr, FRAMES))}")
        required, optional, steps = FRAMES[f]
        _keys(v, path, required, optional)
        if (f == "turn") != (i == 0):
            _fail(path, "the turn frame is the bottom of the stack, and the only one"
                  if f == "turn" else f"a {f} frame cannot be the bottom of the stack")
        fr = {"f": f}
        if steps is not None:
            fr["step"] = _choice(v["step"], f"{path}.step", steps)
        if i:
            below = self.s.stack[i - 1]
            allowed = ABOVE.get((below["f"], below.get("step")), ())
            if f not in allowed:
                _fail(path, f"a {f} frame cannot lie on a {below['f']} frame at step "
                            f"{below.get('step')!r}")
        getattr(self, f)(i, v, fr, path)
        return {k: fr[k] for k in v if k in fr}  # in the snapshot's order, so its JSON is the same

    def turn(self, i, v, fr, path):
        pass

    def havok(self, i, v, fr, path):
        s, cs = self.s, self.cs
        k = fr["card"] = self.kind(v["card"], f"{path}.card", "Havok")
        fr["you"] = self.seat(v["you"], f"{path}.you")
        fr["flipper"] = self.seat(v["flipper"], f"{path}.flipper")
        step = fr["step"]
        treasure = cs.is_treasure(k)
        if (treasure or step == 0) and fr["you"] != fr["flipper"]:
            _fail(f"{path}.you", "only a crash on an event makes it resolve for another dragon "
                                 "than the one that flipped it")
        if treasure and step == 2:
            _fail(f"{path}.step", "a treasure has no step 2 (only events resolve effects)")
        below = s.stack[i - 1]
        if below["f"] == "turn" and fr["flipper"] != s.current:
            _fail(f"{path}.flipper", f"{fr['flipper']}, but the turn's flip is the current "
                                     f"player's ({s.current})")
        if below["f"] != "turn":  # turned over by the flip primitive of the frame below
            o = below["o"]
            if not o.get("pushed") or k not in o["shown"]:
                _fail(f"{path}.card", "no flip of the frame below turned this card over")
            if fr["flipper"] != below["you"]:
                _fail(f"{path}.flipper", f"{fr['flipper']}, but the flip below was player "
                                         f"{below['you']}'s")
        flags = {"to": treasure and step == 1, "nullified": not treasure and step == 1,
                 "ok": step == 2}
        for key, ok in flags.items():
            if key in v:
                if not ok:
                    _fail(f"{path}.{key}", f"cannot be set on this frame at step {step}")
                fr[key] = self.seat(v[key], f"{path}.{key}") if key == "to" else \
                    _choice(v[key], f"{path}.{key}", (True,))
        effect = ("ability", "t", "o", "pc")
        if step != 2:
            for key in effect:
                if key in v:
                    _fail(f"{path}.{key}", f"a flipped card has no {key!r} until its event "
                                           f"resolves (step 2)")
            return
        for key in effect:
            if key not in v:
                _fail(path, f"missing field {key!r}")
        if not (_is_int(v["ability"]) and v["ability"] == k):
            _fail(f"{path}.ability", f"{_r(v['ability'])}, but an event resolves itself ({k})")
        fr["ability"] = k
        self.effect_state(i, v, fr, path, self.g.ops_for(k, fr["you"]), chosen=None)

    def use(self, i, v, fr, path):
        g, s, cs = self.g, self.s, self.cs
        user = fr["user"] = self.seat(v["user"], f"{path}.user")
        if not (_is_int(v["you"]) and v["you"] == user):
            _fail(f"{path}.you", f"{_r(v['you'])}, but a card or ability resolves for its user ({user})")
        fr["you"] = user
        use = fr["use"] = _choice(v["use"], f"{path}.use", ("play", "crash"))
        ref = v["ability"]
        if _is_int(ref):
            k = self.kind(ref, f"{path}.ability", "Hijinks")
            fr["ability"] = k
            if cs.card(k).kind != use:
                _fail(f"{path}.ability", f"{cs.names[k]} is a {cs.card(k).kind} card, not a {use}")
            if not (_is_int(v["card"]) and v["card"] == k):
                _fail(f"{path}.card", f"{_r(v['card'])}, but the card used is {k} ({cs.names[k]})")
            fr["card"] = k
        else:
            want = ["innate", s.dragons[user], use]
            if _differs(ref, want) is not None:
                _fail(f"{path}.ability", f"must be a Hijinks card kind or {want} (the user's "
                                         f"innate {use}), not {_r(ref)}")
            if v["card"] is not None:
                _fail(f"{path}.card", f"{_r(v['card'])}, but an innate ability uses no card")
            if not s.innate_used[user]:
                _fail(f"{path}.ability", f"player {user} uses its innate {use}, but "
                                         f"players[{user}].innate_used is false")
            fr["ability"], fr["card"] = want, None
        ab = g.ability(fr["ability"])
        below = s.stack[i - 1]
        if use == "play":
            if v["crashed"] is not None:
                _fail(f"{path}.crashed", "must be null for a play")
            if below["f"] != "turn":
                _fail(path, "a play lies on the turn frame")
            if user != s.current:
                _fail(f"{path}.user", f"{user}, but only the current player ({s.current}) plays")
            fr["crashed"] = None
        else:
            if below["f"] not in ("havok", "use"):
                _fail(path, "a crash lies on the card or ability it crashes")
            if not (_is_int(v["crashed"]) and v["crashed"] == i - 1):
                _fail(f"{path}.crashed", f"{_r(v['crashed'])}, but a crash acts on the frame "
                                         f"below it ({i - 1})")
            fr["crashed"] = i - 1
            on = below["f"] if below["f"] == "use" else \
                "treasure" if cs.is_treasure(below["card"]) else "event"
            if ab.trigger["on"] != on:
                _fail(f"{path}.ability", f"{ab.name} crashes on {ab.trigger['on']!r}, not on "
                                         f"the {on} below it")
            if "types" in ab.trigger:  # it acts on the treasures the crashed card targets
                t = below["t"]
                if g.ability(below["ability"]).type not in ab.trigger["types"] \
                        or not (t.get("picks") and t.get("victim") is not None):
                    _fail(f"{path}.ability", f"{ab.name} needs a {'/'.join(ab.trigger['types'])} "
                                             f"that targets a treasure below it")
        step = fr["step"]
        for key, steps in (("canceled", ("window",)), ("to_discard", ("window",)),
                           ("divert", ("window", "effect")), ("ok", ("effect",))):
            if key in v:
                if step not in steps:
                    _fail(f"{path}.{key}", f"cannot be set on a use at step {step!r}")
                fr[key] = self.seat(v[key], f"{path}.{key}") if key == "divert" else \
                    _choice(v[key], f"{path}.{key}", (True,))
        if "to_discard" in fr and "canceled" not in fr:
            _fail(f"{path}.to_discard", "is set, but the use is not canceled")
        self.effect_state(i, v, fr, path, g.ops_for(fr["ability"], user),
                          chosen="partly" if step == "target" else "all")

    def effect_state(self, i, v, fr, path, ops: tuple, chosen: str | None):
        """pc, t and o of a frame resolving ``ops``: ``chosen`` says how far its targets are
        chosen ("partly" while a card's targets are chosen, "all" once they are; None for an
        event, which chooses them when its targeted primitive runs)."""
        if fr["f"] == "use" and fr["step"] != "effect":
            pc = _int(v["pc"], f"{path}.pc", 0, 0)
        else:
            pc = _int(v["pc"], f"{path}.pc", 0, len(ops) - 1)
        fr["pc"] = pc
        targeted = [j for j, op in enumerate(ops) if op["op"] in TARGETS]
        if chosen is None and targeted:
            j = targeted[0]
            chosen = "none" if pc < j else "partly" if pc == j else "all"
        t = self.targets(v["t"], f"{path}.t", fr, ops[targeted[0]] if targeted else None,
                         chosen or "none")
        fr["t"] = {k: t[k] for k in v["t"] if k in t}
        op = ops[pc]
        keys = SCRATCH.get(op["op"], set()) if fr["f"] == "havok" or fr["step"] == "effect" else set()
        _keys(v["o"], f"{path}.o", set(), keys)
        o = self.scratch(v["o"], f"{path}.o", fr, op)
        fr["o"] = {k: o[k] for k in v["o"] if k in o}

    def targets(self, t, path: str, fr: dict, op: dict | None, chosen: str) -> dict:
        name = op["op"] if op else None
        if name is None:  # nothing to target
            _keys(t, path, set(), set())
            return {}
        _keys(t, path, set(), TARGETS[name] | {"done"})
        if not t:
            if chosen == "all":
                _fail(path, f"is empty, but the targets of {name} are chosen")
            return {}
        if chosen == "none":
            _fail(path, "must be empty: nothing is targeted yet")
        done = "done" in t
        if done:
            _choice(t["done"], f"{path}.done", (True,))
        elif chosen == "all":
            _fail(path, f"the targets of {name} must be chosen (done) by now")
        out = {"done": True} if done else {}
        you, n = fr["you"], self.n
        if name in ("steal", "break", "trade"):
            for key in ("victim", "actor", "picks"):
                if key not in t:
                    _fail(path, f"missing field {key!r}")
            actor = self.g.thief(you, op) if name == "steal" else you
            if not (_is_int(t["actor"]) and t["actor"] == actor):
                _fail(f"{path}.actor", f"{_r(t['actor'])}, but player {actor} acts")
            victim = None if t["victim"] is None else self.seat(t["victim"], f"{path}.victim")
            picks = [self.kind(k, f"{path}.picks[{j}]", "treasure")
                     for j, k in enumerate(_list(t["picks"], f"{path}.picks"))]
            most = op.get("count", 1) if name == "steal" else 1
            if victim is None and (picks or not done or "give" in t):
                _fail(f"{path}.victim", "is null (nobody could be targeted), so nothing is picked")
            if len(picks) > most or not done and name != "trade" and len(picks) >= most:
                _fail(f"{path}.picks", f"{len(picks)} treasures picked, for {name} "
                                       f"{'at most ' if done else 'fewer than '}{most}")
            out.update(victim=victim, actor=actor, picks=picks)
            if name == "trade" and victim is not None:
                if done != ("give" in t) or done and not picks:
                    _fail(path, "a trade is chosen once it has a treasure to take and one to give")
                if done:
                    out["give"] = self.kind(t["give"], f"{path}.give", "treasure")
            return out
        if not done:
            _fail(path, f"must be empty or chosen (done) for {name}")
        if name == "salvage":
            picks = _list(t.get("picks"), f"{path}.picks")
            if len(picks) > 1:
                _fail(f"{path}.picks", "salvage takes one treasure at most")
            out["picks"] = [self.kind(k, f"{path}.picks[0]", "treasure") for k in picks]
        elif name == "swap_target":
            out["swap"] = self.kind(t.get("swap"), f"{path}.swap", "treasure")
        else:  # redirect_event
            seat = out["seat"] = self.seat(t.get("seat"), f"{path}.seat")
            flipper = self.s.stack[fr["crashed"]]["flipper"]
            if seat == flipper or op.get("to") != "choice" and seat != (flipper + 1) % n:
                _fail(f"{path}.seat", f"{seat} is not a seat {op['op']} can send the event to")
        return out

    def scratch(self, o: dict, path: str, fr: dict, op: dict) -> dict:
        """frame["o"] of the primitive ``op`` (its keys are checked)."""
        g, s, name = self.g, self.s, op["op"]
        if name == "flip" and o:
            if "shown" not in o:
                _fail(path, "missing field 'shown'")
            shown = [self.kind(k, f"{path}.shown[{j}]", "Havok")
                     for j, k in enumerate(_list(o["shown"], f"{path}.shown"))]
            if not 1 <= len(shown) <= op.get("choose_from", 1):
                _fail(f"{path}.shown", f"{len(shown)} cards shown, for a flip of "
                                       f"{op.get('choose_from', 1)}")
            out = {"shown": shown}
            if "pushed" in o:
                out["pushed"] = _choice(o["pushed"], f"{path}.pushed", (True,))
            return out
        if name == "pass_left" and o:
            if "chosen" not in o:
                _fail(path, "missing field 'chosen'")
            chosen = []
            for j, c in enumerate(_list(o["chosen"], f"{path}.chosen")):
                at = f"{path}.chosen[{j}]"
                if not isinstance(c, list) or len(c) != 2:
                    _fail(at, f"must be [seat, treasure kind], not {_r(c)}")
                p, k = self.seat(c[0], f"{at}[0]"), self.kind(c[1], f"{at}[1]", "treasure")
                if k not in s.hoards[p] or any(q == p for q, _ in chosen):
                    _fail(at, f"player {p} cannot pass {g.cards.names[k]} (not in its hoard, or it "
                              f"chose already)")
                chosen.append([p, k])
            out = {"chosen": chosen}
            if "asking" in o:
                out["asking"] = self.seat(o["asking"], f"{path}.asking")
            return out
        if name == "break_lowest_all" and o:
            return {"i": _int(o["i"], f"{path}.i", 0, self.n - 1)}
        return {}

    def window(self, i, v, fr, path):
        self.sync(self.s.stack)  # the frames below this one, each validated
        g = self.g
        trig = g.trigger(i - 1)
        if _differs(v["trig"], trig) is not None:
            _fail(f"{path}.trig", f"{_r(v['trig'])} is not the trigger of the frame below it "
                                  f"({_r(trig)})")
        fr.update(trig=trig, order=None, i=0, decl=[])
        if v["order"] is None:
            fr["i"] = _int(v["i"], f"{path}.i", 0, 0)
            if not isinstance(v["decl"], list) or v["decl"]:
                _fail(f"{path}.decl", "must be empty: nobody has been asked yet")
            return
        s, n = self.s, self.n
        order = [[p, c] for p in ((s.current + j) % n for j in range(n))
                 if (c := g.crash_choices(p, trig))]
        if _differs(v["order"], order) is not None:
            _fail(f"{path}.order", f"{_r(v['order'])}, but the seats that may crash, with their "
                                   f"crash actions, are {order}")
        fr["order"] = order
        asked = fr["i"] = _int(v["i"], f"{path}.i", 0, len(order))
        seen = -1
        for j, x in enumerate(_list(v["decl"], f"{path}.decl")):
            at = f"{path}.decl[{j}]"
            if not isinstance(x, list) or len(x) != 2:
                _fail(at, f"must be [seat, crash action], not {_r(x)}")
            where = [m for m in range(seen + 1, asked) if order[m][0] == x[0] and _is_int(x[0])]
            if not where or not (_is_int(x[1]) and x[1] in order[where[0]][1]):
                _fail(at, f"{_r(x)} is not a crash declared by a seat already asked, in turn order")
            seen = where[0]
            fr["decl"].append([x[0], x[1]])

    def held(self) -> list[int]:
        """The cards the stack holds in play: the Havok cards and cards being resolved, and the
        cards a flip shows before one is chosen."""
        out = []
        for fr in self.s.stack:
            if fr["f"] == "havok" or fr["f"] == "use" and fr["card"] is not None:
                out.append(fr["card"])
            o = fr.get("o")
            if o and "shown" in o and not o.get("pushed"):
                out += o["shown"]
        return out

    # -- the pending decision -----------------------------------------------------------------

    def agrees(self, d: dict):
        """A snapshot that gives its pending decision must be the one the engine writes."""
        out = self.g.snapshot()
        p = out["pending"]
        if p is None:
            _fail("pending", "must be null: the position plays on to the end of the game")
        if _differs(d["pending"], p, OPTIONAL) is not None:
            _fail("pending", f"does not match the position, which asks player {p['player']}'s "
                             f"{p['purpose']} decision with choices {p['choices']} (give null to "
                             f"have it derived)")
        # dragons may be named by affinity or in any case; the snapshot names them
        d = {**d, "players": [{**pl, "dragon": self.cs.dragons[k].name}
                              for pl, k in zip(d["players"], self.s.dragons)]}
        where = _differs(d, out, OPTIONAL)
        if where is not None:
            _fail(_path(where), f"{_r(_get(d, where))} does not match the position: "
                                f"{_r(_get(out, where))} (give pending null to have it derived)")


def restore(d, cards, load):
    """The game of snapshot ``d`` (card set ``cards``), made by ``load`` (see :class:`_Reader`)
    once every field is checked."""
    return _Reader(cards, load).read(d)
