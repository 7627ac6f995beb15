"""A scripted player with a documented, sensible strategy (the middle rung of the ladder)."""

from __future__ import annotations

from operator import itemgetter

from havok_env.engine import WIN_SCORE

from .base import Agent

BIG = 30.0  # utility of a won game (on the scale of treasure points)

# How much holding a Hijinks card of each type is worth (treasure points), before affinity and
# ready-condition bonuses. Used to pick what to discard and what a crash "costs".
KEEP = {"steal": 2.0, "break": 1.6, "trade": 1.2, "salvage": 1.0, "havok": 1.2, "draw": 0.9,
        "foresight": 0.6, "pass": 0.4, "recall": 0.7, "nullify": 1.4, "cancel": 1.6, "defend": 1.8}
SOFT_DRAW = 0.35  # one Hijinks card drawn
SOFT_READY = 0.9  # a ready dragon (its innate play and crash)
EVENT_FLIP = -0.3  # rough worth of flipping an event (for expected-flip estimates)

# The effect primitives this bot can judge, by where they appear (a Hijinks card or innate play, an
# event, a crash), each with the parameter value its judgement takes for granted, if any:
# (parameter, its default, the values judged). Targets come from the rules themselves
# (the native core's, through the seat view), so a new victim selector needs nothing here; a card
# outside this table is refused when the bot first sees the card set, rather than judged worth
# nothing (or judged with the wrong target) without a word.
JUDGED = {
    "play": {"steal": ("thief", "you", ("you",)),  # I pick the targets, so I am the thief
             "break": None, "trade": None, "salvage": None, "flip": None, "foresight": None,
             "draw": None, "extra_play": None, "recall": None, "pass_left": None},
    "event": {"break": ("victim", "opponent", ("you",)),  # you break your own cheapest
              "steal": ("victim", "opponent", ("you", "right")),  # one victim
              "tire": ("who", "you", ("you",)),
              "break_lowest_all": None, "tribute": None, "treasure_map": None, "restrict": None,
              "salvage": None, "flip": None, "discard_hand": None, "draw": None, "ready": None},
    "crash": {"tire": ("who", "you", ("actor",)),  # the user of the crashed card is tired
              "nullify": None, "redirect_event": None, "redirect_treasure": None, "cancel": None,
              "swap_target": None, "divert_break": None, "draw": None},
}
_JUDGED_SETS: dict[int, object] = {}  # id(card set) -> card set checked against JUDGED (kept alive)


class UnjudgedRuleError(ValueError):
    """The game has a card or decision this bot cannot judge: it refuses to play rather than guess."""


def check_judged(cards) -> None:
    """Raise :class:`UnjudgedRuleError` unless every ability of the card set is in ``JUDGED``."""
    if _JUDGED_SETS.get(id(cards)) is cards:
        return
    abilities = [("event", ab) for ab in cards.events] + [(ab.kind, ab) for ab in cards.hijinks]
    abilities += [(slot, getattr(d, slot)) for d in cards.dragons for slot in ("play", "crash")]
    for role, ab in abilities:
        for op in ab.effect + ab.bonus_effect:
            name = op["op"]
            if name not in JUDGED[role]:
                raise UnjudgedRuleError(f"the heuristic bot cannot judge {name!r} in {ab.name} "
                                        f"(a {role}); teach agents/heuristic.py that primitive first")
            need = JUDGED[role][name]
            if need is not None and op.get(need[0], need[1]) not in need[2]:
                raise UnjudgedRuleError(
                    f"the heuristic bot cannot judge {name!r} with {need[0]} = "
                    f"{op.get(need[0], need[1])!r} in {ab.name} (a {role}); it judges "
                    + " or ".join(map(repr, need[2])))
    _JUDGED_SETS[id(cards)] = cards


_ACTION_TABLES: dict[int, tuple] = {}  # id(card set) -> (card set, its action tables)


def _action_tables(view) -> tuple:
    """({card action: Hijinks kind}, {discard action: Hijinks kind}, {treasure action: kind})."""
    cs = view.cards
    got = _ACTION_TABLES.get(id(cs))
    if got is None or got[0] is not cs:
        hijinks = range(cs.first_hijinks, cs.n_kinds)
        got = _ACTION_TABLES[id(cs)] = (cs, (
            {view.card_action(k): k for k in hijinks}, {view.discard_action(k): k for k in hijinks},
            {view.treasure_action(k): k for k in range(cs.n_treasures)}))
    return got[1]


def _unjudged(name: str, where: str) -> UnjudgedRuleError:
    # JUDGED lists a primitive that this code has no branch for
    return UnjudgedRuleError(f"the heuristic bot has no judgement of {name!r} in {where}")


class HeuristicAgent(Agent):
    """A rule-based bot that reads only its seat's view and plays a greedy, value-driven game.

    The strategy in plain words:

    * **Scoring.** Every choice is judged by how it changes the hoards: my hoard counts for me; the
      opponents' hoards count against me, the leader's most (in a 2-player game simply my score
      minus the opponent's). Reaching 15 is worth far more than any treasure, and letting an
      opponent reach 15 costs as much: that is how the end game is played.
    * **On my turn.** First use my dragon's innate play (Pilfer, Crumble, Haggle, Foresight) when it
      gains more than a ready dragon is worth (it tires the dragon and so gives up its innate crash);
      if I hold a card of my dragon's preferred type, the innate play is cheap, because playing
      that card afterwards readies the dragon again. Then play the one Hijinks card that gains the
      most: steal or break from the leader, its most valuable reachable treasure; trade my cheapest
      treasure for its best; salvage from the trash heap; flip extra Havok cards; draw. A card of my
      dragon's preferred type gets a bonus while my dragon is tired (meet the ready condition). A card
      is played only when it gains clearly more than keeping it; if nothing is worth playing I
      discard my least useful card (never before a better one) to cycle the hand, else pass.
    * **Crashes.** Crash when the harm stopped (or the gain taken) is worth more than the crash
      card kept for later (crash cards, defensive ones above all, are valued highly, so small harms
      are let through and the card is kept for when it matters): nullify or redirect harmful events
      (a steal from me, a broken treasure, a nap) and events that would help an opponent a lot;
      defend my best treasures against steals, trades and breaks; cancel opponents' plays that hurt
      me; snatch valuable flipped treasures from opponents; scavenge broken treasures. Anything that
      would let an opponent reach 15 is always crashed when I can.
    * **Choices inside effects.** Steal, break and trade target the best treasure of the opponent
      it hurts most; I give away, pass or lose my least valuable treasure; Counteroffer offers my
      cheapest treasure; harmful events are redirected to the leader; foresight puts on the bottom
      the card that would help an opponent most (or hurt me most); I take the best card from the
      discard pile and the best treasure from the trash heap.

    It is deterministic (no randomness) and uses only the seat-limited ``view``.
    """

    name = "heuristic"
    SPEC_FORMS = ("heuristic",)

    def __init__(self):
        self.seat = 0
        self._trigger = None
        self._stake = 1.5
        self._decider = None

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.forget()
        self._decider = None

    def forget(self) -> None:
        """Forget what earlier decisions left behind (the stake of my last play, the trigger of
        the last crash window), keeping the tables set up for this game's view: a search
        rollout that reuses the bot then plays exactly like a fresh one."""
        self._trigger = None
        self._stake = 1.5

    def act(self, observation, action_mask, view) -> int:
        return self.choose(view)

    # -- entry point ------------------------------------------------------------------------

    def choose(self, view) -> int:
        p = view.pending
        choices = p["choices"]
        if len(choices) == 1:
            return choices[0]
        d = self._decider
        if d is None or d.v is not view:
            d = self._decider = _Decision(self, view)
        d.start(p)
        return d.run()


class _Decision:
    """The seat's decisions for one game (one per view): its knowledge and the evaluation helpers.

    The dragons, value tables and card abilities never change during a game and are set up once.
    :meth:`start` begins each decision and clears what is only valid for one decision (hands and
    decks change between decisions). What depends only on the hoards (the scores, every treasure
    move's gain, the best steal, break or trade from each opponent) is kept for as long as the
    hoards stay the same: in a rollout that is about half of a bot's decisions.
    """

    def __init__(self, agent: HeuristicAgent, view):
        self.agent, self.v = agent, view
        cs = self.cs = view.cards
        check_judged(cs)
        self.lay = view.layout
        me = self.me = view.seat
        n = self.n = view.num_players
        # action -> what it names (the Hijinks kind played or discarded, the treasure kind, the
        # seat targeted), decoded by the view once and looked up in the hot loops
        self.card_kind, self.discard_kind, self.treasure_kind = _action_tables(view)
        self.target_seat = {view.seat_action(q): q for q in range(n)}
        vals = getattr(view, "values", None)
        if vals is None:  # a view without the fast table: build it from value()
            vals = tuple(tuple(view.value(q, k) for k in range(cs.n_kinds)) for q in range(n))
        self.vals = vals  # vals[seat][kind]: that treasure's worth in seat's hoard
        self.my_dragon = view.dragon(me)
        self.dragon_aff = [view.dragon(q).affinity for q in range(n)]
        self.others = tuple(q for q in range(n) if q != me)
        # S -> tuple of the opponents' scores (only used with 3 or more players)
        self.others_scores = itemgetter(*self.others) if n > 2 else None
        self.nt = cs.n_treasures  # kinds below this are treasures
        # kind -> its Ability (events and Hijinks cards; None for treasures), without the
        # property and method calls of CardSet.event/card in the hot loops
        self.abilities = [None] * self.nt + list(cs.events) + list(cs.hijinks)
        self._ops = {}  # (ability ref, seat) -> effect list for that seat's dragon
        self.hoards = None  # the hoards the hoard-only caches were computed for
        self.S = None

    def start(self, pending: dict) -> None:
        """Begin a decision: clear the per-decision caches, and the hoard-only ones if need be."""
        self.p = pending
        v = self.v
        hoards = [v.hoard(q) for q in range(self.n)]
        if hoards != self.hoards:  # neither is ever mutated: the caches below depend on them
            self.hoards = hoards
            S = v.scores()  # a function of the hoards (and the fixed value tables)
            if S != self.S:
                self.S = S
                self.u0 = self.util(S)
                self._g1 = {}  # (kind, src, dst) -> gain_move
                self._g2 = {}  # (seat a, its change, seat b, its change) -> score_change_gain
                self._top = None  # the best-scoring opponent (lowest seat on ties), once needed
                self._vic = {}  # (actor, selector) -> victims
            self._elig = {}  # (owner, max value) -> eligible
            self._take = {}  # (victim, dst, max value, count) -> best_take
            self._gives = {}  # (me, give lowest only) -> kinds I may give in a trade
            self._trade = {}  # (me, victim, give lowest only, max value, max gain) -> best_trade
        self._eflip = {}
        self._est = {}  # estimate cache
        self._keep = {}  # keep cache

    # -- evaluation ---------------------------------------------------------------------------

    def util(self, S) -> float:
        mine = S[self.me]
        if self.n == 2:
            top = S[self.others[0]]
            u = mine - top
        else:
            others = self.others_scores(S)
            top = max(others)
            u = mine - 0.7 * top - 0.3 * sum(others) / len(others)
        best = max(mine, top)  # max(S)
        if best >= WIN_SCORE:
            u += BIG if mine == best and top < best else -BIG
        return u

    def gain_moves(self, moves) -> float:
        """Utility change for a list of (kind, src, dst) treasure moves (None = outside hoards)."""
        S = list(self.S)
        vals = self.vals
        for k, src, dst in moves:
            if src is not None:
                S[src] -= vals[src][k]
            if dst is not None:
                S[dst] += vals[dst][k]
        return self.util(S) - self.u0

    def gain_move(self, k, src, dst) -> float:
        key = (k, src, dst)
        g = self._g1.get(key)
        if g is None:
            vals = self.vals
            g = self._g1[key] = self.score_change_gain(
                src, 0 if src is None else -vals[src][k], dst, 0 if dst is None else vals[dst][k])
        return g

    def score_change_gain(self, a, da, b, db) -> float:
        """Utility change when seat ``a``'s score changes by ``da`` and ``b``'s by ``db``.

        A seat of None changes nothing. Moves of different kinds (and trades of different pairs)
        often change the scores alike, so this is cached, for as long as the scores are unchanged.
        """
        key = (a, da, b, db)
        x = self._g2.get(key)
        if x is None:
            S = list(self.S)
            if a is not None:
                S[a] += da
            if b is not None:
                S[b] += db
            x = self._g2[key] = self.util(S) - self.u0
        return x

    def soft(self, seat, x) -> float:
        """A non-treasure benefit ``x`` (cards, a ready dragon) to ``seat``, seen by me."""
        if seat == self.me:
            return x
        if self.n == 2:
            return -x
        top = self._top
        if top is None:
            top = self._top = max(self.others, key=self.S.__getitem__)
        return -x * (0.7 if seat == top else 0.3)

    def lowest(self, seat, pool=None):
        pool = self.hoards[seat] if pool is None else pool
        if not pool:
            return None
        vs = self.vals[seat]
        return min(pool, key=lambda k: (vs[k], k))

    def flip_gain(self, seat) -> float:
        """Expected utility change (for me) of ``seat`` flipping the top Havok card."""
        if seat in self._eflip:
            return self._eflip[seat]
        v, nt = self.v, self.nt
        known = v.known_top
        if known:
            k = known[0]
            out = self.gain_move(k, None, seat) if k < nt else self.soft(seat, EVENT_FLIP)
        else:
            comp = v.havok_remaining()
            tot = sum(comp.values())
            if not tot:
                out = 0.0
            else:
                out = 0.0
                ev, gm = self.soft(seat, EVENT_FLIP), self.gain_move
                for k, c in comp.items():  # in the Counter's order, as the float sum depends on it
                    out += c * (gm(k, None, seat) if k < nt else ev)
                out /= tot
        self._eflip[seat] = out
        return out

    def avg_treasure_gain(self, seat) -> float:
        comp = self.v.havok_remaining()
        nt = self.nt
        ts = [(k, c) for k, c in comp.items() if k < nt]
        tot = sum(c for _, c in ts)
        if not tot:
            return 0.0
        return sum(c * self.gain_move(k, None, seat) for k, c in ts) / tot

    def keep(self, k) -> float:
        """What holding Hijinks card kind ``k`` is worth to me."""
        x = self._keep.get(k)
        if x is None:
            x = self._keep[k] = self._keep_value(k)
        return x

    def _keep_value(self, k) -> float:
        ab = self.abilities[k]
        x = KEEP.get(ab.type, 1.0)
        d = self.my_dragon
        if ab.affinity == d.affinity:
            x += 0.4
        if ab.type == d.ready_type:
            x += 0.4 if self.v.ready(self.me) else 0.8
        if ab.type == "salvage" and not self.v.trash:
            x -= 0.5
        return x

    def ability(self, ref):
        if isinstance(ref, int):
            return self.abilities[ref] if ref >= self.nt else self.cs.card(ref)
        dr = self.cs.dragons[ref[1]]
        return dr.play if ref[2] == "play" else dr.crash

    def ops(self, ref, seat):
        key = (ref if isinstance(ref, int) else tuple(ref), seat)
        out = self._ops.get(key)
        if out is None:  # fixed for the game: the card data and the seat's dragon
            out = self._ops[key] = self.ability(ref).ops(self.dragon_aff[seat])
        return out

    # -- victims and best targets ---------------------------------------------------------------

    def victims(self, actor, sel):
        """The seats ``actor``'s own steal, break or trade may target with selector ``sel``."""
        key = (actor, sel)
        out = self._vic.get(key)
        if out is None:  # a function of the scores
            out = self._vic[key] = self.v.victims(actor, actor, sel)
        return out

    def eligible(self, owner, max_value):
        """The distinct kinds in ``owner``'s hoard worth at most ``max_value`` to it, ascending."""
        key = (owner, max_value)
        out = self._elig.get(key)
        if out is None:  # a function of the hoards
            out = self._elig[key] = self.v.eligible(owner, max_value)
        return out

    def best_take(self, op, actor, victim, dst):
        """(gain, picks) of the best steal (dst = actor) or break (dst = None) from ``victim``."""
        m, count = op.get("max_value", 1 << 30), op.get("count", 1)
        key = (victim, dst, m, count)
        out = self._take.get(key)
        if out is None:
            out = self._take[key] = self._best_take(victim, dst, m, count)
        return out

    def _best_take(self, victim, dst, m, count):
        opts = self.eligible(victim, m)
        if not opts:
            return None, []
        if count == 1:
            # max over (gain, kind): opts ascend, so ">=" hands ties to the larger kind
            gm = self.gain_move
            best_g = best_k = None
            for k in opts:
                g = gm(k, victim, dst)
                if best_k is None or g >= best_g:
                    best_g, best_k = g, k
            return best_g, [best_k]
        picks = []
        for _ in range(count):
            cand = self.v.eligible(victim, m, picks)
            if not cand:
                break
            k = max(cand, key=lambda k: (self.gain_moves([(j, victim, dst) for j in picks + [k]]), -k))
            picks.append(k)
        return self.gain_moves([(k, victim, dst) for k in picks]), picks

    def trade_gives(self, op, me):
        key = (me, op.get("give") == "lowest")  # all that the rule reads in op
        out = self._gives.get(key)
        if out is None:  # a function of my hoard
            out = self._gives[key] = self.v.trade_gives(me, op)
        return out

    def trade_options(self, op, me, victim) -> list:
        """(gain, take, give) for each legal trade with ``victim``."""
        v = self.v
        vm, vv = self.vals[me], self.vals[victim]
        gives = self.trade_gives(op, me)
        out = []
        for t in v.trade_takes(me, victim, op):
            need = v.trade_min_give(op, vv[t])
            for g in gives:
                if vm[g] >= need:
                    out.append((self.score_change_gain(me, vm[t] - vm[g], victim, vv[g] - vv[t]),
                                t, g))
        return out

    def best_trade(self, op, me, victim, default):
        """The best gain in ``trade_options`` (``default`` if there is no legal trade)."""
        key = (me, victim, op.get("give") == "lowest", op.get("max_value", 1 << 30),
               op.get("max_gain", 1 << 30))  # all that the rules read in op
        best = self._trade.get(key, False)  # None: no legal trade
        if best is False:
            best = self._trade[key] = self._best_trade(op, me, victim)
        return default if best is None else best

    def _best_trade(self, op, me, victim):
        # the trades of trade_options, but which gives a take allows and what a trade gains depend
        # only on the two treasures' values (to me, to the victim): try each pair of those once
        v = self.v
        vm, vv = self.vals[me], self.vals[victim]
        gives = {(vm[k], vv[k]) for k in self.trade_gives(op, me)}
        if not gives:
            return None
        gain, min_give = self.score_change_gain, v.trade_min_give
        best = None
        for tm, tv in {(vm[t], vv[t]) for t in v.trade_takes(me, victim, op)}:
            need = min_give(op, tv)
            for gm, gv in gives:
                if gm >= need:
                    x = gain(me, tm - gm, victim, gv - tv)
                    if best is None or x > best:
                        best = x
        return best

    def estimate(self, ref, seat=None) -> float:
        """Utility (for me) of ``seat`` (default me) using ability ``ref`` with its best targets."""
        me = self.me if seat is None else seat
        key = (tuple(ref) if isinstance(ref, list) else ref, me)
        out = self._est.get(key)
        if out is None:
            out = self._est[key] = self._estimate(ref, me)
        return out

    def _estimate(self, ref, me) -> float:
        total = 0.0
        for op in self.ops(ref, me):
            name = op["op"]
            if name in ("steal", "break"):
                dst = me if name == "steal" else None
                best = None
                for vic in self.victims(me, op.get("victim", "opponent")):
                    g, _ = self.best_take(op, me, vic, dst)
                    if g is not None and (best is None or g > best):
                        best = g
                total += best or 0.0
            elif name == "trade":
                best = 0.0
                for vic in self.victims(me, op.get("victim", "opponent")):
                    best = max(best, self.best_trade(op, me, vic, 0.0))
                total += best
            elif name == "salvage":
                total += max((self.gain_move(k, None, me) for k in self.v.salvage_options(op)),
                             default=0.0)
            elif name == "flip":
                f = self.flip_gain(me)
                if op.get("optional"):
                    f = max(f, 0.0)
                total += f + (0.8 if op.get("choose_from", 1) > 1 else 0.0)
            elif name == "foresight":
                total += self.soft(me, 0.5)
            elif name == "draw":
                total += self.soft(me, SOFT_DRAW * op["n"])
            elif name == "extra_play":
                total += self.soft(me, 0.2)
            elif name == "recall":
                total += self.soft(me, 0.6 if self.v.discard else 0.0)
            elif name == "pass_left":
                total += self.pass_left_gain(op, me)
            else:
                raise _unjudged(name, "a play")
        return total

    def event_gain(self, ev, you) -> float:
        """Utility change (for me) if event ``ev`` resolves for seat ``you``."""
        v, n = self.v, self.n
        total = 0.0
        for op in self.ops(ev, you):
            name = op["op"]
            if name == "break":  # Adventurer Ambush: you break your own cheapest (JUDGED)
                opts = self.eligible(you, op.get("max_value", 1 << 30))
                if opts:
                    total += self.gain_move(min(opts, key=self.vals[you].__getitem__), you, None)
            elif name == "break_lowest_all":
                total += self.gain_moves([(self.lowest(q), q, None) for q in range(n) if self.hoards[q]])
            elif name == "tribute":
                seats = v.tribute_seats(you)
                if seats is not None:
                    giver, taker = seats
                    k = self.lowest(giver)
                    if k is not None:
                        total += self.gain_move(k, giver, taker)
            elif name == "treasure_map":
                total += self.avg_treasure_gain(you)
            elif name == "restrict":
                total += self.soft(you, -0.7 if v.hand_size(you) else 0.0)
            elif name == "salvage":
                opts = v.salvage_options(op)
                if opts:  # the first of them in the trash heap
                    k = next(k for k in v.trash if k in opts)
                    total += self.gain_move(k, None, you)
                else:
                    total += self.soft(you, SOFT_DRAW * op.get("else_draw", 0))
            elif name == "flip":
                total += self.flip_gain(you)
            elif name == "steal":
                thief = v.thief(you, op)
                vic, = v.victims(you, thief, op.get("victim", "opponent"))  # one (JUDGED)
                if thief != vic:
                    opts = self.eligible(vic, op.get("max_value", 1 << 30))
                    if opts:  # the thief takes what is worth most to it
                        vt = self.vals[thief]
                        k = max(opts, key=lambda k: (vt[k], k))
                        total += self.gain_move(k, vic, thief)
            elif name == "discard_hand":
                total += self.soft(you, -SOFT_DRAW * v.hand_size(you))
            elif name == "draw":
                total += self.soft(you, SOFT_DRAW * op["n"])
            elif name == "tire":
                total += self.soft(you, -SOFT_READY if v.ready(you) else 0.0)
            elif name == "ready":
                total += self.soft(you, 0.0 if v.ready(you) else SOFT_READY)
            else:
                raise _unjudged(name, "an event")
        return total

    def use_gain(self, trig) -> float:
        """Utility change (for me) if the card or ability in a 'use' trigger takes effect."""
        u = trig["user"]
        owners, picks = trig.get("owners") or [], trig.get("picks") or []
        if trig.get("use") == "crash":
            if u != self.me and self.v.current_player == self.me:
                return -self.agent._stake  # an opponent crashes what I did on my turn
            return self.soft(u, 1.0) if u != self.me else 1.0
        total = 0.0
        for op in self.ops(trig["ability"], u):
            name = op["op"]
            if name == "steal" and owners:
                total += self.gain_moves([(k, owners[0], u) for k in picks])
            elif name == "break" and owners:
                total += self.gain_moves([(k, owners[0], None) for k in picks])
            elif name == "trade" and owners and picks:
                give = self.lowest(u)
                moves = [(picks[0], owners[0], u)]
                if give is not None:
                    moves.append((give, u, owners[0]))
                total += self.gain_moves(moves)
            elif name == "salvage" and picks:
                total += self.gain_move(picks[0], None, u)
            elif name in ("steal", "break", "trade", "salvage"):
                continue
            else:
                total += self.estimate_op_soft(op, u)
        return total

    def estimate_op_soft(self, op, u) -> float:
        name = op["op"]
        if name == "flip":
            return self.flip_gain(u) + (self.soft(u, 0.8) if op.get("choose_from", 1) > 1 else 0.0)
        if name == "draw":
            return self.soft(u, SOFT_DRAW * op["n"])
        if name in ("foresight", "recall", "extra_play"):
            return self.soft(u, 0.5)
        if name == "pass_left":
            return self.pass_left_gain(op, u)
        raise _unjudged(name, "a play")

    def pass_left_gain(self, op: dict, you: int) -> float:
        """Every seat (but ``you`` with skip_you) passes its lowest treasure to its left."""
        n, lowest = self.n, self.lowest
        return self.gain_moves([(lowest(q), q, (q + 1) % n) for q in self.v.pass_seats(you, op)])

    # -- decisions -------------------------------------------------------------------------------

    def run(self) -> int:
        purpose = self.p["purpose"]
        fn = getattr(self, "d_" + purpose, None)
        if fn is None:
            raise UnjudgedRuleError(f"the heuristic bot has no answer for a {purpose!r} decision")
        return fn(self.p["choices"], self.p["context"])

    def d_main(self, choices, ctx):
        lay, abilities, v, me = self.lay, self.abilities, self.v, self.me
        ready_type = self.my_dragon.ready_type
        INNATE_PLAY = lay.INNATE_PLAY
        card_kind, discard_kind = self.card_kind, self.discard_kind
        plays, discards = [], []
        for a in choices:
            if a in card_kind:
                plays.append(a)
            elif a in discard_kind:
                discards.append(a)
        can_play_more = v.cards_left(me) > 0
        # 1. the innate play, when it gains more than a ready dragon is worth
        if INNATE_PLAY in choices:
            gain = self.estimate(["innate", v.dragon_index(me), "play"])
            can_reready = any(abilities[k].type == ready_type and abilities[k].kind == "play"
                              for k in v.hand) and can_play_more
            cost = 0.3 if can_reready else 1.2
            if gain > cost:
                return INNATE_PLAY
        # 2. the best Hijinks card, when it gains clearly more than keeping it
        best, best_a = None, None
        if plays:
            tired = not v.ready(me)
            for a in plays:
                k = card_kind[a]
                ab_type = abilities[k].type
                g = self.estimate(k)
                if ab_type == ready_type and tired:
                    g += SOFT_READY
                if ab_type == "draw" and can_play_more:
                    g += 0.3 * len(plays)  # Sunny Side Up: more cards and another play
                margin = g - 0.45 * self.keep(k)
                if margin > 0.25 and (best is None or margin > best):
                    best, best_a = margin, a
        if best_a is not None:
            self.agent._stake = max(1.0, best + 0.45 * self.keep(card_kind[best_a]))
            return best_a
        # 3. cycle the least useful card, else pass
        if discards:
            worst = min(discards, key=lambda a: (self.keep(discard_kind[a]), a))
            if self.keep(discard_kind[worst]) < 1.25:
                return worst
        return lay.END

    def crash_cost(self, a) -> float:
        lay, abilities, v, me = self.lay, self.abilities, self.v, self.me
        if a == lay.INNATE_CRASH:
            rt = self.my_dragon.ready_type
            has = any(abilities[k].type == rt for k in v.hand)
            return 0.6 if has else 1.0
        k = self.card_kind[a]
        cost = 0.5 * self.keep(k)
        if v.current_player == me and v.cards_left(me) > 0:
            # crashing on my own turn uses my card for the turn
            best = 0.0
            for h in set(v.hand):
                if h != k and abilities[h].kind == "play":
                    best = max(best, self.estimate(h) - 0.45 * self.keep(h))
            cost += best
        return cost

    def crash_benefit(self, a, trig) -> float:
        lay, v, me = self.lay, self.v, self.me
        if a == lay.INNATE_CRASH:
            ref = ["innate", v.dragon_index(me), "crash"]
        else:
            ref = self.card_kind[a]
        ab = self.ability(ref)
        total = 0.0
        on = trig["on"]
        for op in ab.ops(self.dragon_aff[me]):
            name = op["op"]
            if name == "nullify":
                total -= self.event_gain(trig["card"], trig["flipper"])
            elif name == "redirect_event":
                f = trig["flipper"]
                seats = v.redirect_seats(f, op)
                new = seats[0] if len(seats) == 1 else \
                    max(seats, key=lambda q: (self.event_gain(trig["card"], q), -q))
                total += self.event_gain(trig["card"], new) - self.event_gain(trig["card"], f)
            elif name == "redirect_treasure":
                k = trig["card"]
                total += self.gain_move(k, None, me) - self.gain_move(k, None, trig["to"])
            elif name == "cancel":
                total -= self.use_gain(trig) if on == "use" else 0.0
            elif name == "swap_target":
                g = self.use_gain(trig)
                picks = list(trig.get("picks") or [])
                spare = [k for k in self.hoards[me] if k not in picks]
                if spare and picks:
                    u = trig["user"]
                    steal = self.ability(trig["ability"]).type == "steal"
                    dst = u if steal else None
                    sw = min(spare, key=lambda k: -self.gain_move(k, me, dst))
                    mine = max(picks, key=self.vals[me].__getitem__)
                    new_picks = [sw if k == mine else k for k in picks]
                    g2 = self.gain_moves([(k, me, dst) for k in new_picks])
                    total += g2 - g
            elif name == "divert_break":
                owners = trig.get("owners") or []
                if owners:
                    total += sum(self.gain_move(k, owners[0], me) - self.gain_move(k, owners[0], None)
                                 for k in trig.get("picks") or [])
            elif name == "draw":
                total += SOFT_DRAW * op["n"]
            elif name == "tire":
                if on == "use":
                    u = trig["user"]
                    total += self.soft(u, -SOFT_READY if v.ready(u) else 0.0)
            else:
                raise _unjudged(name, "a crash")
        if ab.type == self.my_dragon.ready_type and not v.ready(me) and a != lay.INNATE_CRASH:
            total += SOFT_READY
        return total

    def d_crash(self, choices, ctx):
        trig = ctx["trigger"]
        self.agent._trigger = trig
        best, best_a = 0.0, self.lay.END
        for a in choices:
            if a == self.lay.END:
                continue
            margin = self.crash_benefit(a, trig) - self.crash_cost(a)
            if margin > best:
                best, best_a = margin, a
        return best_a

    # -- targets -------------------------------------------------------------------------------

    def _op_of(self, ctx, names):
        ref = ctx.get("ability")
        actor = ctx.get("actor", self.me)
        if ref is None:
            return {}
        for op in self.ops(ref, actor if isinstance(ref, list) or not self.cs.is_event(ref)
                           else self.me):
            if op["op"] in names:
                return op
        return {}

    def _seat(self, a):
        return self.target_seat[a]

    def _kind(self, a):
        return self.treasure_kind[a]

    def d_steal_from(self, choices, ctx):
        op = self._op_of(ctx, ("steal",))
        return max(choices, key=lambda a: ((self.best_take(op, self.me, self._seat(a), self.me)[0]
                                            or -99), -a))

    def d_break_from(self, choices, ctx):
        op = self._op_of(ctx, ("break",))
        return max(choices, key=lambda a: ((self.best_take(op, self.me, self._seat(a), None)[0]
                                            or -99), -a))

    def d_trade_from(self, choices, ctx):
        op = self._op_of(ctx, ("trade",))
        return max(choices, key=lambda a: (self.best_trade(op, self.me, self._seat(a), -99), -a))

    def d_steal_pick(self, choices, ctx):
        vic = ctx.get("target")
        best = max((a for a in choices if a != self.lay.END),
                   key=lambda a: (self.gain_moves([(k, vic, self.me) for k in ctx.get("picks", [])]
                                                  + [(self._kind(a), vic, self.me)]), -a))
        if self.lay.END in choices and self.gain_move(self._kind(best), vic, self.me) <= 0:
            return self.lay.END
        return best

    def d_break_pick(self, choices, ctx):
        vic = ctx.get("target")
        return max(choices, key=lambda a: (self.gain_move(self._kind(a), vic, None)
                                           if a != self.lay.END else 0.0, -a))

    def d_trade_take(self, choices, ctx):
        op = self._op_of(ctx, ("trade",))
        vic = ctx.get("target")
        best = {}
        for g, t, _ in self.trade_options(op, self.me, vic):
            best[t] = max(best.get(t, -99.0), g)
        return max(choices, key=lambda a: (best.get(self._kind(a), -99.0), -a))

    def d_trade_give(self, choices, ctx):
        vic = ctx.get("target")
        take = (ctx.get("picks") or [None])[0]
        return max(choices, key=lambda a: (self.gain_moves(
            ([(take, vic, self.me)] if take is not None else []) + [(self._kind(a), self.me, vic)]), -a))

    def d_salvage_pick(self, choices, ctx):
        return max(choices, key=lambda a: (self.gain_move(self._kind(a), None, self.me), -a))

    def d_swap_pick(self, choices, ctx):
        trig = self.agent._trigger or {}
        u = trig.get("user")
        steal = trig.get("ability") is not None and self.ability(trig["ability"]).type == "steal"
        dst = u if steal else None
        return max(choices, key=lambda a: (self.gain_move(self._kind(a), self.me, dst), -a))

    def d_pass_pick(self, choices, ctx):
        left = (self.me + 1) % self.n
        return max(choices, key=lambda a: (self.gain_move(self._kind(a), self.me, left), -a))

    def d_tribute_pick(self, choices, ctx):
        taker = ctx.get("target")
        return max(choices, key=lambda a: (self.gain_move(self._kind(a), self.me, taker), -a))

    def d_raid_pick(self, choices, ctx):
        return choices[0]

    def d_redirect_to(self, choices, ctx):
        trig = self.agent._trigger or {}
        ev = trig.get("card")
        if ev is None or not self.cs.is_event(ev):
            return max(choices, key=lambda a: (self.S[self._seat(a)], -a))
        return max(choices, key=lambda a: (self.event_gain(ev, self._seat(a)), -a))

    def d_recall_pick(self, choices, ctx):
        return max(choices, key=lambda a: (self.keep(self.card_kind[a]), -a))

    def card_gain(self, k, seat) -> float:
        if self.cs.is_treasure(k):
            return self.gain_move(k, None, seat)
        return self.event_gain(k, seat)

    def d_flip_or_not(self, choices, ctx):
        known = self.v.known_top
        g = self.card_gain(known[0], self.me) if known else self.flip_gain(self.me)
        flip = self.v.option_action(0)  # the first option: flip it
        return flip if g > 0 and flip in choices else self.lay.END

    def d_resolve_which(self, choices, ctx):
        shown = ctx.get("shown", [])
        return max(choices, key=lambda a: (self.card_gain(shown[self.v.option_of(a)], self.me), -a))

    def d_bottom(self, choices, ctx):
        shown = list(ctx.get("shown", []))
        n, cur = self.n, self.v.current_player
        flippers = [(cur + 1 + i) % n for i in range(len(shown))]
        unknown = [self.flip_gain(q) for q in flippers]

        def total(order):
            return sum(self.card_gain(k, flippers[i]) if k is not None else unknown[i]
                       for i, k in enumerate(order))

        def after(a):
            if a == self.lay.END:
                return shown
            j = self.v.option_of(a)
            return [k for i, k in enumerate(shown) if i != j] + [None]

        return max(choices, key=lambda a: (total(after(a)), a == self.lay.END, -a))
