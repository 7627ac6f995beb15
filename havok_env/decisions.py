"""The decisions the engine asks for, in one table: each purpose, the kind of decision it is, the
question a person is asked and how its choices read.

A pending decision (``game.pending``) has a ``kind`` (what its actions are: targets, cards,
options...) and a ``purpose`` (what it is for). ``Game.ask`` takes the kind from this table, so
the engine can ask only for a purpose listed here, and every purpose has its question for people
(``agents/human.py``, the arena's pages) and the labels of its choices (``Game.action_label``).

The order of :data:`DECISION_KINDS` and of the table (:data:`PURPOSES`) is the order of the
observation's one-hot sections (``havok_env/observe.py``): a new purpose goes at the end, and any
change of order or size is a new environment version (``havok_env/version.py``).
"""

from __future__ import annotations

from typing import NamedTuple

DECISION_KINDS = ("main", "crash", "target_seat", "target_treasure", "choose_card", "option")


class Purpose(NamedTuple):
    """One purpose. The labels are ``str.format`` templates of one choice of it, in words."""

    name: str
    kind: str  # one of DECISION_KINDS
    question: str  # what a person is asked (for a crash, after what the window is about)
    end: str = "stop"  # END (action 0), where it is offered
    card: str = "play {}"  # a Hijinks card kind, by name
    treasure: str | None = None  # a treasure kind, by name; None: "target <owner>'s <name>"
    own_hoard: bool = False  # whether the treasures offered are the decider's own
    option: str | None = None  # an option: {n} its number, {card} the card shown for it


DECISIONS: dict[str, Purpose] = {p.name: p for p in (
    Purpose("main", "main", "Your turn: choose an action.", end="end the turn"),
    Purpose("crash", "crash", "Will you crash?", end="decline to crash", card="crash with {}"),
    Purpose("steal_from", "target_seat", "Steal from whom?"),
    Purpose("steal_pick", "target_treasure", "Which treasure do you steal?"),
    Purpose("break_from", "target_seat", "Whose treasure do you break?"),
    Purpose("break_pick", "target_treasure", "Which treasure do you break?"),
    Purpose("trade_from", "target_seat", "Trade with whom?"),
    Purpose("trade_take", "target_treasure", "Which treasure do you take in the trade?"),
    Purpose("trade_give", "target_treasure", "Which of your treasures do you give in exchange?",
            treasure="give your {}", own_hoard=True),
    Purpose("salvage_pick", "target_treasure", "Which treasure do you take from the trash heap?",
            treasure="take from the trash heap: {}"),
    Purpose("swap_pick", "target_treasure", "Which of your treasures do you offer instead?",
            treasure="offer your {}", own_hoard=True),
    Purpose("redirect_to", "target_seat", "Which player does the event go to?"),
    Purpose("flip_or_not", "option", "Do you flip the top Havok card?", end="do not flip",
            option="flip the top Havok card"),
    Purpose("resolve_which", "option", "Which card resolves?", option="resolve {card}"),
    Purpose("bottom", "option", "Do you put one of these on the bottom of the Havok deck?",
            end="keep the order", option="put {card} (card {n} from the top) on the bottom"),
    Purpose("recall_pick", "choose_card", "Which card do you take back from the discard pile?",
            card="take {} from the discard pile"),
    Purpose("pass_pick", "target_treasure", "Which treasure do you pass to the left?",
            treasure="pass your {}", own_hoard=True),
    Purpose("raid_pick", "target_treasure", "Which of your treasures breaks?",
            treasure="break your {}", own_hoard=True),
    Purpose("tribute_pick", "target_treasure", "Which treasure do you give?",
            treasure="give your {}", own_hoard=True),
)}

PURPOSES = tuple(DECISIONS)
#: purpose -> its kind, for Game.ask
KIND = {p.name: p.kind for p in DECISIONS.values()}
