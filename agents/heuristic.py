"""A scripted player with a documented, sensible strategy (the middle rung of the ladder).

The strategy is played by the native core (``src/havok_core/heuristic.cpp``, the one
implementation): :class:`HeuristicAgent` asks it for the seat's choice through the seat's view,
and the core reads only what that seat may know. Search rollouts play the same bot inside the core
(:func:`havok_env.view.rollout`).
"""

from __future__ import annotations

from havok_env import _core

from .base import Agent

# The effect primitives this bot can judge, by where they appear (a Hijinks card or innate play, an
# event, a crash), each with the parameter value its judgement takes for granted, if any:
# (parameter, its default, the values judged). Targets come from the rules themselves
# (the native core's), so a new victim selector needs nothing here; a card
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
                                        f"(a {role}); teach src/havok_core/heuristic.cpp that primitive first")
            need = JUDGED[role][name]
            if need is not None and op.get(need[0], need[1]) not in need[2]:
                raise UnjudgedRuleError(
                    f"the heuristic bot cannot judge {name!r} with {need[0]} = "
                    f"{op.get(need[0], need[1])!r} in {ab.name} (a {role}); it judges "
                    + " or ".join(map(repr, need[2])))
    _JUDGED_SETS[id(cards)] = cards


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

    It is deterministic (no randomness) and uses only the seat-limited ``view``. The decisions are
    made in the native core (``src/havok_core/heuristic.cpp``); this class holds the seat's bot.
    """

    name = "heuristic"
    SPEC_FORMS = ("heuristic",)

    def __init__(self):
        self.seat = 0
        self._bot = _core.Heuristic()  # what the bot carries between decisions (last stake, trigger)

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.forget()

    def forget(self) -> None:
        """Forget what earlier decisions left behind (the stake of my last play, the trigger of
        the last crash window): a bot reused for another game then plays exactly like a fresh one."""
        self._bot.forget()

    def act(self, observation, action_mask, view) -> int:
        return self.choose(view)

    def choose(self, view) -> int:
        check_judged(view.cards)
        return view.native_choice(self._bot)
