"""The luck tracer's game state (evaluation/rules/__init__.py): plain data only, so it can be
cloned, saved as JSON and compared.

Cards are card kinds (small ints, see :mod:`havok_env.cards`); piles are lists of kinds, decks with
the top card first. The engine's work in progress (``stack``) is a list of plain dicts, and the
random number generator is a 64-bit integer, so nothing live hides inside the state.
"""

from __future__ import annotations

import pickle

from havok_env.state import rng_next

_MASK = (1 << 64) - 1


class GameState:
    """Everything that determines a game from here on. Fields are public plain data."""

    __slots__ = (
        "num_players", "dragons", "rng", "havok", "hijinks", "discard", "past_events", "trash",
        "hands", "hoards", "ready", "turn", "current", "cards_used", "card_limit", "innate_used",
        "restricted", "canceled", "in_play", "known", "stack", "pending", "result", "log",
    )

    def __init__(self, num_players: int, dragons: list[int], seed: int):
        n = num_players
        self.num_players = n
        self.dragons = list(dragons)  # seat -> dragon index
        self.rng = seed & _MASK
        self.havok: list[int] = []  # top first
        self.hijinks: list[int] = []  # top first
        self.discard: list[int] = []
        self.past_events: list[int] = []
        self.trash: list[int] = []
        self.hands: list[list[int]] = [[] for _ in range(n)]
        self.hoards: list[list[int]] = [[] for _ in range(n)]
        self.ready = [True] * n
        self.turn = 0
        self.current = 0
        self.cards_used = [0] * n  # Hijinks cards used this turn (plays and crashes)
        self.card_limit = [1] * n  # Hijinks cards allowed this turn
        self.innate_used = [False] * n
        self.restricted = [False] * n  # Lost in the Woods
        self.canceled: list[list[int]] = []  # [owner, kind]: returns to the owner at end of turn
        self.in_play: list[int] = []  # cards being resolved or revealed
        self.known: list[list[int]] = [[] for _ in range(n)]  # Havok cards each seat saw on top
        self.stack: list[dict] = []  # the engine's work in progress
        self.pending: dict | None = None  # {"player", "kind", "choices", "context"}
        self.result: dict | None = None
        self.log: list[str] | None = None  # public event log, when enabled

    def rand_below(self, n: int) -> int:
        self.rng, out = rng_next(self.rng)
        return out % n

    def shuffle(self, cards: list[int]) -> None:
        for i in range(len(cards) - 1, 0, -1):
            j = self.rand_below(i + 1)
            cards[i], cards[j] = cards[j], cards[i]

    def clone(self) -> "GameState":
        return pickle.loads(pickle.dumps(self, pickle.HIGHEST_PROTOCOL))
