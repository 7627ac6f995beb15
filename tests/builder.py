"""A small position builder for rules tests.

``Pos`` describes a position; ``Pos.build()`` returns a :class:`havok_env.Game` in it. It starts from
a real game (so the seed, dragons and random generator are genuine), then moves the named cards to
where the test wants them, taking each from wherever it was, so that every one of the 80 cards stays
in exactly one place. The game is rebuilt with ``Game.from_snapshot``, which re-derives the pending
decision from the stack and checks card conservation.

Defaults, so that nothing unexpected happens in a test:

* a hoard not given holds one Bronze Talon;
* a hand not given holds filler play cards (by default 3 of them) and never a crash card, so
  players the test does not mention are never asked to crash;
* trash, discard pile and past events are empty unless given;
* the turn is the first (``turn``): a snapshot counts no more turns than there are Havok cards
  out of the deck, the seats' starting treasures among them;
* everything else stays in the two decks, below the cards given for their tops, in a fixed order
  that does not depend on the seed and keeps surprises away: the Havok deck continues with the
  treasures of printed value 4 or more (too valuable for Snatch), then the other treasures, then
  the events; the Hijinks deck continues with play cards, then crash cards. So a test whose turn
  ends by itself (when ending it is the only choice left) sees the next player flip a big treasure,
  and refills draw play cards. The seed still decides the random generator (contests, reshuffles).

By default the position starts at the current player's main decision, after its Havok flip
(``build()``). ``build(flip=True)`` instead starts the turn: the current player flips the top Havok
card (put a known card there with ``havok_top``) and the game runs to the first decision.
"""

from __future__ import annotations

from collections import Counter

from havok_env import Game, default_cards

CARDS = default_cards()
NAMES = CARDS.names
TREASURES = set(NAMES[: CARDS.n_treasures])
EVENTS = set(NAMES[CARDS.first_event: CARDS.first_hijinks])
HIJINKS = set(NAMES[CARDS.first_hijinks:])
CRASHES = {c.name for c in CARDS.hijinks if c.kind == "crash"}

# Filler for hands that a test does not specify: play cards that a test rarely needs, in order.
FILLER = ["Wishing Well", "Tidal Shift", "Grave Robbing", "Second Helping", "Stargazing",
          "Heist", "Sunny Side Up", "Bait and Switch", "Wrecking Tail", "Fair Trade",
          "Butterfingers", "Sticky Claws"]


class Pos:
    """A position under construction. All setters return ``self`` so calls can be chained."""

    def __init__(self, num_players: int = 2, dragons=None, seed: int = 0, current: int = 0,
                 turn: int = 1, cards=None):
        if dragons is None:
            dragons = ["Ruby", "Obsidian", "Amber", "Pearl"][:num_players]
        self.num_players = num_players
        self.dragons = list(dragons)
        self.seed = seed
        self.current = current
        self.turn = turn
        self.cards = cards
        self._hands: dict[int, list[str]] = {}
        self._hoards: dict[int, list[str]] = {}
        self._havok_top: list[str] = []
        self._hijinks_top: list[str] = []
        self._trash: list[str] = []
        self._discard: list[str] = []
        self._past: list[str] = []
        self._ready: dict[int, bool] = {}
        self._innate_used: dict[int, bool] = {}
        self._cards_used: dict[int, int] = {}
        self._card_limit: dict[int, int] = {}
        self._havok_only: list[str] | None = None
        self._hijinks_only: list[str] | None = None
        self._filler_size = 3

    # -- setters -------------------------------------------------------------------------------

    def hand(self, p: int, *names: str) -> "Pos":
        self._hands[p] = list(names)
        return self

    def hoard(self, p: int, *names: str) -> "Pos":
        self._hoards[p] = list(names)
        return self

    def havok_top(self, *names: str) -> "Pos":
        self._havok_top = list(names)
        return self

    def havok_deck(self, *names: str) -> "Pos":
        """The whole Havok deck, top first; the Havok cards not placed elsewhere go to past events
        (events) or the trash heap (treasures)."""
        self._havok_only = list(names)
        return self

    def hijinks_top(self, *names: str) -> "Pos":
        self._hijinks_top = list(names)
        return self

    def hijinks_deck(self, *names: str) -> "Pos":
        """The whole Hijinks deck, top first; the rest not placed elsewhere go to the discard pile."""
        self._hijinks_only = list(names)
        return self

    def trash(self, *names: str) -> "Pos":
        self._trash = list(names)
        return self

    def discard(self, *names: str) -> "Pos":
        self._discard = list(names)
        return self

    def past_events(self, *names: str) -> "Pos":
        self._past = list(names)
        return self

    def ready(self, p: int, flag: bool = True) -> "Pos":
        self._ready[p] = flag
        return self

    def tired(self, p: int) -> "Pos":
        return self.ready(p, False)

    def innate_used(self, p: int, flag: bool = True) -> "Pos":
        self._innate_used[p] = flag
        return self

    def cards_used(self, p: int, n: int) -> "Pos":
        self._cards_used[p] = n
        return self

    def card_limit(self, p: int, n: int) -> "Pos":
        self._card_limit[p] = n
        return self

    def filler(self, size: int) -> "Pos":
        """How many filler cards go in hands not given (default 3)."""
        self._filler_size = size
        return self

    # -- building ------------------------------------------------------------------------------

    def snapshot(self, flip: bool = False) -> dict:
        g = Game(self.num_players, self.dragons, seed=self.seed, cards=self.cards)
        d = g.snapshot()
        n = self.num_players
        pool = Counter(CARDS.all_cards())
        pool = Counter({NAMES[k]: c for k, c in pool.items()})

        def take(name: str, where: str):
            if name not in pool and name not in NAMES:
                raise ValueError(f"unknown card {name!r} ({where})")
            if pool[name] <= 0:
                raise ValueError(f"no copy of {name!r} left for {where}")
            pool[name] -= 1
            return name

        hands, hoards = {}, {}
        for p, names in self._hands.items():
            for x in names:
                if x not in HIJINKS:
                    raise ValueError(f"{x!r} is not a Hijinks card (hand of {p})")
            hands[p] = [take(x, f"hand of player {p}") for x in names]
        for p, names in self._hoards.items():
            for x in names:
                if x not in TREASURES:
                    raise ValueError(f"{x!r} is not a treasure (hoard of {p})")
            hoards[p] = [take(x, f"hoard of player {p}") for x in names]
        trash = [take(x, "trash") for x in self._trash]
        discard = [take(x, "discard") for x in self._discard]
        past = [take(x, "past events") for x in self._past]
        havok_top = [take(x, "Havok deck") for x in (self._havok_only or self._havok_top)]
        hijinks_top = [take(x, "Hijinks deck") for x in (self._hijinks_only or self._hijinks_top)]
        for p in range(n):
            if p not in hoards:
                hoards[p] = [take("Bronze Talon", f"default hoard of player {p}")]
        for p in range(n):
            if p not in hands:
                hands[p] = []
                for x in FILLER:
                    while len(hands[p]) < self._filler_size and pool[x] > 0:
                        hands[p].append(take(x, "filler"))
                if len(hands[p]) < self._filler_size:
                    raise ValueError("not enough filler cards")
        # the rest, in a fixed order (see the module docstring)
        def rank(x):
            k = CARDS.kind(x)
            if CARDS.is_treasure(k):
                return (0 if CARDS.value[k] >= 4 else 1, k)
            if CARDS.is_event(k):
                return (2, k)
            if CARDS.card(k).kind == "play":
                return (3, FILLER.index(x) if x in FILLER else len(FILLER), k)
            return (4, k)
        rest = sorted((+pool).elements(), key=rank)
        rest_havok = [x for x in rest if x not in HIJINKS]
        rest_hijinks = [x for x in rest if x in HIJINKS]
        if self._havok_only is not None:
            for x in rest_havok:
                (trash if x in TREASURES else past).append(x)
            rest_havok = []
        if self._hijinks_only is not None:
            discard.extend(rest_hijinks)
            rest_hijinks = []
        d["havok_deck"] = havok_top + rest_havok
        d["hijinks_deck"] = hijinks_top + rest_hijinks
        d["trash"], d["discard"], d["past_events"] = trash, discard, past
        d["in_play"] = {"resolving": [], "canceled": []}
        for p, pl in enumerate(d["players"]):
            pl["hand"], pl["hoard"] = hands[p], hoards[p]
            del pl["score"]  # the new hoard's worth: from_snapshot derives it
            pl["ready"] = self._ready.get(p, True)
            pl["known_top"] = []
            pl["cards_used"] = self._cards_used.get(p, 0)
            pl["card_limit"] = self._card_limit.get(p, 1)
            pl["innate_used"] = self._innate_used.get(p, False)
            pl["restricted"] = False
        d["current_player"] = self.current
        if flip:
            d["turn"] = self.turn - 1
            d["stack"] = [{"f": "turn", "step": "start"}]
        else:
            d["turn"] = self.turn
            d["stack"] = [{"f": "turn", "step": "main"}]
        d["pending"] = None
        d["result"] = None
        return d

    def build(self, flip: bool = False) -> Game:
        return Game.from_snapshot(self.snapshot(flip), cards=self.cards)


# -- helpers for tests ----------------------------------------------------------------------------


def labels(g: Game) -> list[str]:
    """The labels of the pending decision's legal actions."""
    return [g.action_label(a) for a in g.legal_actions()]


def action(g: Game, label: str) -> int:
    """The legal action with this exact label (AssertionError listing the choices if none)."""
    found = [a for a in g.legal_actions() if g.action_label(a) == label]
    assert found, f"{label!r} is not a legal choice for {who(g)}; choices: {labels(g)}"
    return found[0]


def do(g: Game, *steps: str) -> Game:
    """Apply the legal actions with these labels, in order."""
    for label in steps:
        g.apply(action(g, label))
    return g


def can(g: Game, label: str) -> bool:
    return label in labels(g)


def who(g: Game) -> str:
    p = g.pending
    return "nobody (game over)" if p is None else f"player_{p['player']} ({p['purpose']})"


def asked(g: Game) -> tuple:
    """(player, purpose) of the pending decision, or None."""
    p = g.pending
    return None if p is None else (p["player"], p["purpose"])


def snap(g: Game) -> dict:
    return g.snapshot()


def hand(g: Game, p: int) -> list[str]:
    return sorted(NAMES[k] for k in g.s.hands[p])


def hoard(g: Game, p: int) -> list[str]:
    return sorted(NAMES[k] for k in g.s.hoards[p])


def pile(g: Game, name: str) -> list[str]:
    """A public pile or deck as names (decks top first)."""
    s = g.s
    ks = {"trash": s.trash, "discard": s.discard, "past_events": s.past_events, "havok": s.havok,
          "hijinks": s.hijinks}[name]
    return [NAMES[k] for k in ks]


def canceled(g: Game) -> list[tuple[int, str]]:
    return [(o, NAMES[k]) for o, k in g.s.canceled]


def decline_all(g: Game) -> Game:
    """Decline every crash window that is pending right now (and any that follow)."""
    while g.pending is not None and g.pending["kind"] == "crash":
        g.apply(g.END)
    return g


def count_cards(g: Game) -> Counter:
    """Every card's count, from the snapshot's lists (in_play included)."""
    d = g.snapshot()
    c = Counter()
    for key in ("havok_deck", "hijinks_deck", "discard", "past_events", "trash"):
        c.update(d[key])
    c.update(d["in_play"]["resolving"])
    c.update(x for _, x in d["in_play"]["canceled"])
    for pl in d["players"]:
        c.update(pl["hand"])
        c.update(pl["hoard"])
    return c


FULL_SET = Counter({NAMES[k]: c for k, c in Counter(CARDS.all_cards()).items()})


# -- the card data, for tests that must follow tuned values ---------------------------------------
#
# cards.md allows the numbers of the card set (values, limits, draws) to be tuned in the data files.
# Card tests read those numbers from the data and check the behaviour they imply; the names, kinds,
# types, affinities and primitives of the design are checked as they are.

ANY = 1 << 30
DRAGONS = {d.name: d for d in CARDS.dragons}
AFFINITY = {d.name: d.affinity for d in CARDS.dragons}


def ability(name: str):
    """A Hijinks card or event by name, or a dragon's innate ability as 'Ruby.play' / 'Ruby.crash'."""
    if "." in name:
        dragon, slot = name.split(".")
        return getattr(DRAGONS[dragon], slot)
    k = CARDS.kind(name)
    return CARDS.event(k) if CARDS.is_event(k) else CARDS.card(k)


def ops(name: str, bonus: bool = False) -> tuple:
    ab = ability(name)
    return ab.ops(ab.affinity if bonus else None)


def op(name: str, opname: str, bonus: bool = False) -> dict:
    found = [o for o in ops(name, bonus) if o["op"] == opname]
    assert found, f"{name} has no {opname} primitive"
    return found[0]


def limit(name: str, opname: str, bonus: bool = False) -> int:
    """The 'worth at most' limit of a primitive (ANY when unlimited)."""
    return op(name, opname, bonus).get("max_value", ANY)


def draws(name: str, bonus: bool = False) -> int:
    """How many cards the effect draws ('draw' primitives)."""
    return sum(o["n"] for o in ops(name, bonus) if o["op"] == "draw")


def printed(treasure: str) -> int:
    return CARDS.value[CARDS.kind(treasure)]


def worth(dragon: str, treasure: str) -> int:
    """A treasure's worth in the hoard of ``dragon``: printed value, +1 on matching affinity."""
    k = CARDS.kind(treasure)
    return CARDS.value[k] + (1 if CARDS.affinity[k] == AFFINITY[dragon] else 0)


def plain(value: int) -> list[str]:
    """Treasures without affinity of this printed value, one name per kind."""
    return [NAMES[k] for k in range(CARDS.n_treasures)
            if CARDS.value[k] == value and CARDS.affinity[k] is None and NAMES[k] != "Bronze Talon"]


def menu(dragon: str | None = None) -> list[str]:
    """A hoard with one plain treasure of each printed value, plus (for ``dragon``) the treasures of
    its affinity: a menu to see which treasures a limit allows."""
    values = sorted({CARDS.value[k] for k in range(CARDS.n_treasures)})
    out = [plain(v)[0] for v in values if plain(v)]
    if dragon is not None:
        out += [NAMES[k] for k in range(CARDS.n_treasures) if CARDS.affinity[k] == AFFINITY[dragon]]
    return out


def target_labels(owner: int, names) -> list[str]:
    return sorted(f"target player_{owner}'s {x}" for x in set(names))


def around(dragon: str, lim: int) -> list[str]:
    """A hoard for ``dragon`` to test a 'worth at most ``lim``' rule, worth less than 15 in all (so
    that nobody wins on the spot): a plain treasure at the limit, one just above it, a small one,
    and the dragon's affinity treasures printed at the limit (worth one more to it), as far as they
    fit under 15."""
    values = sorted({CARDS.value[k] for k in range(CARDS.n_treasures)})
    wanted = []
    if lim > max(values):
        wanted.append(plain(max(values))[0])
    else:
        at = max((v for v in values if v <= lim and plain(v)), default=None)
        if at is not None:
            wanted.append(plain(at)[0])
        if plain(lim + 1):
            wanted.append(plain(lim + 1)[0])
    wanted += [x for x in plain(1) if x not in wanted][:1]
    if lim <= max(values):
        wanted += [NAMES[k] for k in range(CARDS.n_treasures)
                   if CARDS.affinity[k] == AFFINITY[dragon] and CARDS.value[k] == lim]
    out = []
    for x in wanted:
        if sum(worth(dragon, y) for y in out) + worth(dragon, x) < 15:
            out.append(x)
    return out


SNATCH_MAX = DRAGONS["Ruby"].crash.trigger.get("max_printed", ANY)
SNATCHABLE = plain(min(SNATCH_MAX, 5))[0]  # a treasure Ruby may Snatch


def worth_exactly(total: int, avoid=()) -> list[str]:
    """Plain treasures (no affinity, so worth the same to every dragon) worth exactly ``total``
    together, avoiding the names in ``avoid``."""
    pool = sorted((x for k in range(CARDS.n_treasures) for x in [NAMES[k]]
                   if CARDS.affinity[k] is None and x != "Bronze Talon" and x not in avoid
                   for _ in range(CARDS.copies[k])), key=lambda x: (-printed(x), x))
    out, left = [], total
    for x in pool:
        if printed(x) <= left:
            out.append(x)
            left -= printed(x)
    assert left == 0, f"cannot make {total} from plain treasures"
    return out
