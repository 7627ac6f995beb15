"""The rules of Havok & Hijinks in Python: the luck tracer's engine (see evaluation/rules/__init__.py).

This is the project's rules engine as it was before the native core replaced it (its behaviour is
the rules fingerprint's, which the core reproduces byte for byte), kept here for the tracer, which
must stop the rules at each card revealed and each use of the generator, out of the core's reach.
It is the old engine unchanged but for its imports and what the tracer does not use (snapshots,
action labels); what the core's Python face still has (errors, the action layout) comes from there.

The engine never calls a player. :class:`Game` advances the game until somebody must decide
something and stops there with a *pending decision* (``game.pending``): who decides, the kind of
decision, its context and the legal choices, which are actions of the one shared action space
(:class:`ActionLayout`). ``game.apply(action)`` takes a choice and advances to the next decision.
Decisions with a single legal choice are taken automatically, except crash windows.

Work in progress is an explicit stack of plain-dict frames (a turn, a flipped Havok card, a card or
ability being used, a crash window), each handled by a small state machine below; card effects are
lists of primitives from :mod:`havok_env.effects`. See ``docs/rules.md`` for every ruling.
"""

from __future__ import annotations

import string

from . import effects
from havok_env.cards import CardSet
from havok_env.constants import HAND_SIZE, WIN_SCORE
from havok_env.decisions import DECISION_KINDS, DECISIONS, KIND, PURPOSES, Purpose  # noqa: F401
from havok_env.engine import (END_REASONS, ActionLayout, ConfigError, GameCommon,  # noqa: F401
                              IllegalActionError, SnapshotError, as_action)

from .effects import CONTINUE, DONE, WAIT
from .state import GameState


class _LogFormatter(string.Formatter):
    """Formats :meth:`Game.say` templates: names for seats, cards and abilities."""

    def __init__(self, game: "Game"):
        self.game = game

    def format_field(self, value, spec: str) -> str:
        g = self.game
        if spec == "seat":
            return g.seat_name(value)
        if spec == "seats":
            return ", ".join(map(g.seat_name, value))
        if spec == "card":
            return g.cards.names[value]
        if spec == "ability":
            return g.ability(value).name
        return format(value, spec)


class _Tables:
    """Lookup tables for the engine's hot path, built once per card set: kind -> ability, whether
    it is a crash card, the effect list each dragon gets, and each dragon's treasure values."""

    def __init__(self, cs: CardSet):
        self.layout = ActionLayout(cs)
        self.abilities = [None] * cs.first_event + cs.events + cs.hijinks
        self.is_crash = [a is not None and a.kind == "crash" for a in self.abilities]
        self.kind_ops = [None if a is None else [a.ops(d.affinity) for d in cs.dragons]
                         for a in self.abilities]
        # values[dragon][kind]: a treasure's worth in the hoard of that dragon
        self.values = [[cs.value[k] + (1 if cs.affinity[k] == d.affinity and k < cs.n_treasures else 0)
                        for k in range(cs.n_kinds)] for d in cs.dragons]


# id(card set) -> (card set, its tables); the card set is kept so its id cannot be reused.
_TABLES: dict[int, tuple] = {}


class Game(GameCommon):
    """One game of Havok & Hijinks.

    ``Game(num_players=2, dragons=None, seed=None)``: ``dragons`` is a list of dragon names or
    affinities per seat (``None`` entries, or ``None`` for all, are chosen at random, distinct).
    """

    def __init__(self, num_players: int = 2, dragons=None, seed: int | None = None,
                 cards: CardSet | None = None, log: bool = False):
        chosen = self._configure(num_players, dragons, seed, cards)
        s = self.s = GameState(num_players, [0] * num_players, seed)
        if log:
            s.log = []
        free = [d for d in range(len(self.cards.dragons)) if d not in chosen]
        for seat in range(num_players):
            if chosen[seat] is None:
                chosen[seat] = free.pop(s.rand_below(len(free)))
        s.dragons = chosen
        self._setup()

    # -- construction ------------------------------------------------------------------------

    def _layout(self):
        tables = _TABLES.get(id(self.cards))
        if tables is None or tables[0] is not self.cards:
            tables = _TABLES[id(self.cards)] = (self.cards, _Tables(self.cards))
        t = tables[1]
        self.layout = lay = t.layout
        self.END, self.PLAY, self.OPTION = lay.END, lay.PLAY, lay.OPTION
        self.INNATE_PLAY, self.INNATE_CRASH, self.DISCARD = lay.INNATE_PLAY, lay.INNATE_CRASH, lay.DISCARD
        self.SEAT, self.TREASURE = lay.SEAT, lay.TREASURE
        self._abilities, self._is_crash, self._kind_ops = t.abilities, t.is_crash, t.kind_ops
        self.values = t.values

    def _setup(self):
        s, cs = self.s, self.cards
        havok = [k for k in range(cs.first_hijinks) for _ in range(cs.copies[k])]
        for p in range(s.num_players):
            havok.remove(cs.starting_treasure)
            s.hoards[p].append(cs.starting_treasure)
        s.shuffle(havok)
        s.havok = havok
        s.hijinks = [k for k in range(cs.first_hijinks, cs.n_kinds) for _ in range(cs.copies[k])]
        s.shuffle(s.hijinks)
        for _ in range(HAND_SIZE):
            for p in range(s.num_players):
                s.hands[p].append(s.hijinks.pop(0))
        s.current = s.rand_below(s.num_players)
        s.stack.append({"f": "turn", "step": "start"})
        self._advance()

    # -- queries -------------------------------------------------------------------------------

    @property
    def num_players(self) -> int:
        return self.s.num_players

    @property
    def pending(self) -> dict | None:
        return self.s.pending

    @property
    def result(self) -> dict | None:
        return self.s.result

    @property
    def is_over(self) -> bool:
        return self.s.result is not None

    @property
    def current_player(self) -> int:
        return self.s.current

    @property
    def to_act(self) -> int | None:
        """The seat whose decision is pending (None once the game is over)."""
        return None if self.s.pending is None else self.s.pending["player"]

    def legal_actions(self) -> list[int]:
        return [] if self.s.pending is None else list(self.s.pending["choices"])

    def dragon(self, seat: int):
        return self.cards.dragons[self.s.dragons[seat]]

    def value(self, owner: int, kind: int) -> int:
        return self.values[self.s.dragons[owner]][kind]

    def score(self, seat: int) -> int:
        v = self.values[self.s.dragons[seat]]
        return sum([v[k] for k in self.s.hoards[seat]])

    def scores(self) -> list[int]:
        values, s = self.values, self.s
        return [sum(map(values[d].__getitem__, hoard)) for d, hoard in zip(s.dragons, s.hoards)]

    def rewards(self) -> list[float]:
        """+1 to the sole winner, -1 to the rest; in a draw 0 to the tied leaders. Zeros until over."""
        r = self.s.result
        if r is None:
            return [0.0] * self.s.num_players
        winners = r["winners"]
        won = 1.0 if len(winners) == 1 else 0.0
        return [won if p in winners else -1.0 for p in range(self.s.num_players)]

    # -- helpers used by the effect primitives ---------------------------------------------------

    def ask(self, player: int, choices: list[int], purpose: str, context=None) -> int:
        """Stop for ``player``'s decision; ``purpose`` is one of havok_env/decisions.py's table,
        which gives its kind."""
        self.s.pending = {"player": player, "kind": KIND[purpose], "purpose": purpose,
                          "choices": choices, "context": context or {}}
        return WAIT

    def say(self, template: str, *args):
        """Log a public event. ``template`` is a :meth:`str.format` string whose ``{:seat}``,
        ``{:seats}``, ``{:card}`` and ``{:ability}`` fields name a seat, a list of seats, a card
        kind and an ability reference. It is formatted only when the game keeps a log: most games
        (training, search rollouts) keep none, and formatting every event cost about 5% of a step."""
        if self.s.log is not None:
            self.s.log.append(_LogFormatter(self).format(template, *args))

    def end(self, reason: str):
        s = self.s
        scores = self.scores()
        best = max(scores)
        s.result = {"winners": [p for p in range(s.num_players) if scores[p] == best],
                    "reason": reason, "scores": scores}
        s.pending = None
        self.say("game over ({}): scores {}", reason, scores)

    def flip_top(self) -> int:
        """Take the top Havok card into play (face up); seats that knew it forget it."""
        s = self.s
        k = s.havok.pop(0)
        s.in_play.append(k)
        for known in s.known:
            if known:
                if known[0] == k:
                    known.pop(0)
                else:
                    known.clear()
        return k

    def push_havok(self, card: int, you: int):
        self.say("{:seat} flips {:card}", you, card)
        self.s.stack.append({"f": "havok", "card": card, "you": you, "flipper": you, "step": 0})

    def move_treasure(self, src: int, kind: int, dst: int) -> bool:
        hoard = self.s.hoards[src]
        if kind not in hoard:
            return False
        hoard.remove(kind)
        self.s.hoards[dst].append(kind)
        self.say("{:card} moves from {:seat} to {:seat}", kind, src, dst)
        return True

    def draw(self, p: int, n: int):
        s = self.s
        for _ in range(n):
            if not s.hijinks:
                if not s.discard:
                    return
                s.hijinks, s.discard = s.discard, []
                s.shuffle(s.hijinks)
                self.say("the discard pile is shuffled into a new Hijinks deck")
            s.hands[p].append(s.hijinks.pop(0))

    def refill_all(self):
        s = self.s
        n = s.num_players
        for i in range(n):
            p = (s.current + i) % n
            if len(s.hands[p]) < HAND_SIZE:
                self.draw(p, HAND_SIZE - len(s.hands[p]))

    def _after_resolution(self):
        s = self.s
        if min(map(len, s.hands)) < HAND_SIZE:
            self.refill_all()
        if s.result is None and max(self.scores()) >= WIN_SCORE:
            self.end("hoard_15")

    def ops_for(self, ref, seat: int) -> tuple:
        if ref.__class__ is int:
            return self._kind_ops[ref][self.s.dragons[seat]]
        return self.ability(ref).ops(self.dragon(seat).affinity)

    def usable(self, ref, seat: int) -> bool:
        conditional = effects.CONDITIONAL
        for op in self.ops_for(ref, seat):
            if op["op"] in conditional and not effects.usable(self, seat, op):
                return False
        return True

    # -- legal choices ---------------------------------------------------------------------------

    def main_choices(self, p: int) -> list[int]:
        s = self.s
        out = [self.END]
        kinds = sorted(set(s.hands[p]))
        if s.cards_used[p] < s.card_limit[p] and not s.restricted[p]:
            for k in kinds:
                if not self._is_crash[k] and self.usable(k, p):
                    out.append(self.card_action(k))
        if s.ready[p] and not s.innate_used[p] and not s.restricted[p] \
                and self.usable(["innate", s.dragons[p], "play"], p):
            out.append(self.INNATE_PLAY)
        if s.cards_used[p] == 0:
            out.extend(self.DISCARD + k - self.cards.first_hijinks for k in kinds)
        return out

    def _triggered(self, ab, p: int, trig: dict) -> bool:
        T = ab.trigger
        on = T["on"]
        if on != trig["on"]:
            return False
        if on == "event":
            return self._changes_event(ab, p, trig)
        if on == "treasure":
            return p != trig["to"] and self.cards.value[trig["card"]] <= T.get("max_printed", 1 << 30)
        if p == trig["user"] or trig["use"] not in T.get("uses", ("play",)):
            return False
        if "types" not in T:
            return True
        owners = trig["owners"]
        if trig["type"] not in T["types"] or not owners:
            return False
        where = T["targets"]
        if where == "own" and p not in owners or where == "other" and all(o == p for o in owners):
            return False
        if T.get("needs_spare"):
            return bool(set(self.s.hoards[p]) - set(trig["picks"]))
        return True

    def event_has_effect(self, card: int, you: int) -> bool:
        """Would the event ``card`` change anything if it resolved for seat ``you`` now?"""
        return any(effects.has_effect(self, you, op) for op in self.ops_for(card, you))

    def _changes_event(self, ab, p: int, trig: dict) -> bool:
        """Ruling 24: an event crash needs an event that does something, for the dragon it
        resolves for or, for a redirect, for a dragon it could be sent to."""
        ev = self.s.stack[trig["frame"]]
        card, you = ev["card"], ev["you"]
        if self.event_has_effect(card, you):
            return True
        for op in ab.ops(self.dragon(p).affinity):
            if op["op"] == "redirect_event":
                return any(self.event_has_effect(card, q)
                           for q in effects.redirect_seats(self, ev["flipper"], op))
        return False

    def crash_choices(self, p: int, trig: dict) -> list[int]:
        s = self.s
        out = []
        if s.cards_used[p] < s.card_limit[p] and not s.restricted[p]:
            is_crash = self._is_crash
            crashes = [k for k in s.hands[p] if is_crash[k]]
            if crashes:
                abilities, play = self._abilities, self.PLAY - self.cards.first_hijinks
                for k in sorted(set(crashes)):
                    if self._triggered(abilities[k], p, trig):
                        out.append(play + k)
        if s.ready[p] and not s.innate_used[p] \
                and self._triggered(self.cards.dragons[s.dragons[p]].crash, p, trig):
            out.append(self.INNATE_CRASH)
        return out

    # -- the decision machine --------------------------------------------------------------------

    def apply(self, action) -> None:
        """Take ``action`` for the pending decision and advance to the next one."""
        s = self.s
        if s.pending is None:
            raise IllegalActionError(f"action {action!r}: the game is over, no decision is pending")
        if action.__class__ is not int:
            action = as_action(action)
        if action not in s.pending["choices"]:
            raise IllegalActionError(f"action {action} is not legal for "
                                     f"{self.seat_name(s.pending['player'])}'s {s.pending['purpose']} "
                                     f"decision; legal: {s.pending['choices']}")
        s.pending = None
        s.stack[-1]["a"] = action
        self._advance()

    def _advance(self):
        s = self.s
        while s.result is None:
            fr = s.stack[-1]
            if _HANDLERS[fr["f"]](self, fr) == WAIT:
                p = s.pending
                if len(p["choices"]) > 1 or p["kind"] == "crash":
                    return
                s.pending = None
                fr["a"] = p["choices"][0]

    def _turn(self, fr: dict) -> int:
        s = self.s
        n = s.num_players
        if fr["step"] == "start":
            if not s.havok:  # the turn cannot begin: it is not counted
                self.end("havok_empty")
                return CONTINUE
            s.turn += 1
            s.cards_used = [0] * n
            s.card_limit = [1] * n
            s.innate_used = [False] * n
            s.restricted = [False] * n
            fr["step"] = "main"
            self.push_havok(self.flip_top(), s.current)
            return CONTINUE
        p = s.current
        a = fr.pop("a", None)
        if a is None:
            return self.ask(p, self.main_choices(p), "main")
        if a == self.END or a >= self.DISCARD:
            if a != self.END:
                k = self.discard_of(a)
                s.hands[p].remove(k)
                s.discard.append(k)
                self.say("{:seat} discards {:card}", p, k)
                self.draw(p, HAND_SIZE - len(s.hands[p]))
            for owner, k in s.canceled:
                s.in_play.remove(k)
                s.hands[owner].append(k)
            s.canceled = []
            s.current = (p + 1) % n
            fr["step"] = "start"
            return CONTINUE
        if a == self.INNATE_PLAY:
            ref, card = ["innate", s.dragons[p], "play"], None
            s.innate_used[p] = True
            s.ready[p] = False
        else:
            card = ref = self.card_of(a)
            s.hands[p].remove(card)
            s.in_play.append(card)
            s.cards_used[p] += 1
        self.say("{:seat} uses {:ability}", p, ref)
        s.stack.append({"f": "use", "user": p, "you": p, "ability": ref, "card": card, "use": "play",
                        "crashed": None, "step": "target", "t": {}, "o": {}, "pc": 0})
        return CONTINUE

    def _havok(self, fr: dict) -> int:
        s, cs = self.s, self.cards
        card = fr["card"]
        idx = len(s.stack) - 1
        if fr["step"] == 0:
            fr["step"] = 1
            s.stack.append({"f": "window", "trig": self.trigger(idx), "order": None, "i": 0,
                            "decl": []})
            return CONTINUE
        if cs.is_treasure(card):
            to = fr.get("to", fr["you"])
            s.in_play.remove(card)
            s.hoards[to].append(card)
            self.say("{:card} goes to {:seat}'s hoard", card, to)
        else:
            if fr["step"] == 1:
                fr.update(step=2, ability=card, t={}, o={}, pc=0)
            if not fr.get("nullified"):
                r = self._run_ops(fr, self.ops_for(card, fr["you"]))
                if r != DONE:
                    return r
            else:
                self.say("{:card} is nullified", card)
            s.in_play.remove(card)
            s.past_events.append(card)
        s.stack.pop()
        self._after_resolution()
        return CONTINUE

    def _run_ops(self, fr: dict, ops: tuple) -> int:
        while fr["pc"] < len(ops):
            op = ops[fr["pc"]]
            r = effects.PRIMITIVES[op["op"]](self, fr, op)
            if r != DONE:
                return r
            fr["pc"] += 1
            fr["o"] = {}
        return DONE

    def _use(self, fr: dict) -> int:
        s = self.s
        user = fr["user"]
        ab = self.ability(fr["ability"])
        ops = self.ops_for(fr["ability"], user)
        if fr["step"] == "target":
            for op in ops:
                if op["op"] in effects.CHOOSERS:
                    r = effects.CHOOSERS[op["op"]](self, fr, op)
                    if r != DONE:
                        return r
                    break
            fr["step"] = "window"
            s.stack.append({"f": "window", "trig": self.trigger(len(s.stack) - 1), "order": None,
                            "i": 0, "decl": []})
            return CONTINUE
        if fr["step"] == "window":
            if fr.get("canceled"):
                card = fr["card"]
                self.say("{:ability} is canceled", fr["ability"])
                if card is not None:
                    if fr.get("to_discard"):
                        s.in_play.remove(card)
                        s.discard.append(card)
                    else:
                        s.canceled.append([user, card])
                s.stack.pop()
                self._after_resolution()
                return CONTINUE
            fr["step"] = "effect"
        r = self._run_ops(fr, ops)
        if r != DONE:
            return r
        card = fr["card"]
        if card is not None:
            s.in_play.remove(card)
            s.discard.append(card)
            if not s.ready[user] and fr.get("ok") and self.dragon(user).ready_type == ab.type:
                s.ready[user] = True
                self.say("{:seat}'s dragon is ready again", user)
        s.stack.pop()
        self._after_resolution()
        return CONTINUE

    def trigger(self, idx: int) -> dict:
        """The trigger of the crash window that opens on the frame ``stack[idx]``: a Havok card
        just flipped (at step 0) or a card or ability whose targets are chosen. The window's copy
        is taken then, before any crash changes the frame (snapshot.py rebuilds it to check one)."""
        fr = self.s.stack[idx]
        if fr["f"] == "havok":
            card = fr["card"]
            if self.cards.is_treasure(card):
                return {"on": "treasure", "frame": idx, "to": fr["you"], "card": card}
            return {"on": "event", "frame": idx, "flipper": fr["flipper"], "card": card}
        t = fr["t"]
        owners = [t["victim"]] if t.get("picks") and "victim" in t else []
        return {"on": "use", "frame": idx, "user": fr["user"], "use": fr["use"],
                "type": self.ability(fr["ability"]).type, "owners": owners,
                "picks": list(t.get("picks", ())), "give": t.get("give"), "ability": fr["ability"]}

    def _window(self, fr: dict) -> int:
        s = self.s
        trig = fr["trig"]
        n = s.num_players
        if fr["order"] is None:  # [seat, its crash choices] for each eligible seat, in turn order
            order = fr["order"] = []
            for i in range(n):
                p = (s.current + i) % n
                choices = self.crash_choices(p, trig)
                if choices:
                    order.append([p, choices])
        a = fr.pop("a", None)
        if a is not None:
            if a != self.END:
                fr["decl"].append([fr["order"][fr["i"]][0], a])
            fr["i"] += 1
        if fr["i"] < len(fr["order"]):
            p, choices = fr["order"][fr["i"]]
            return self.ask(p, [self.END] + choices, "crash", {"trigger": trig})
        s.stack.pop()
        decl = fr["decl"]
        if not decl:
            return CONTINUE
        win = decl[s.rand_below(len(decl))] if len(decl) > 1 else decl[0]
        if len(decl) > 1:
            self.say("contest between {:seats}: {:seat} wins", [p for p, _ in decl], win[0])
        for p, a in decl:
            if a == self.INNATE_CRASH:
                if (p, a) == tuple(win):
                    s.innate_used[p] = True
                    s.ready[p] = False
                    ref, card = ["innate", s.dragons[p], "crash"], None
                continue
            k = self.card_of(a)
            s.hands[p].remove(k)
            s.in_play.append(k)
            s.cards_used[p] += 1
            if [p, a] == win:
                ref = card = k
            else:
                s.canceled.append([p, k])
                self.say("{:seat}'s {:card} is canceled", p, k)
        p = win[0]
        self.say("{:seat} crashes with {:ability}", p, ref)
        s.stack.append({"f": "use", "user": p, "you": p, "ability": ref, "card": card, "use": "crash",
                        "crashed": trig["frame"], "step": "target", "t": {}, "o": {}, "pc": 0})
        return CONTINUE

    # -- saving, loading, cloning ----------------------------------------------------------------

    def clone(self) -> "Game":
        g = object.__new__(Game)
        g.__dict__.update(self.__dict__)
        g.s = self.s.clone()
        return g

    def _resolving(self) -> list[int]:
        rest = list(self.s.in_play)
        for _, k in self.s.canceled:
            rest.remove(k)
        return rest

    def check_cards(self):
        """Raise SnapshotError unless every card of the set is in exactly one place."""
        s = self.s
        counts = [0] * self.cards.n_kinds
        for pile in (s.havok, s.hijinks, s.discard, s.past_events, s.trash, s.in_play,
                     *s.hands, *s.hoards):
            for k in pile:
                counts[k] += 1
        bad = [f"{self.cards.names[k]}: {counts[k]} instead of {self.cards.copies[k]}"
               for k in range(self.cards.n_kinds) if counts[k] != self.cards.copies[k]]
        if bad:
            raise SnapshotError("cards out of place: " + "; ".join(bad))


_UNKNOWN = Purpose("", "", "Choose:")

_HANDLERS = {"turn": Game._turn, "havok": Game._havok, "use": Game._use, "window": Game._window}
