"""The game state: plain data held by the native core (``src/havok_core/state.hpp``).

:class:`GameState` is a live view of one game's state with the fields the engine has always had
(``havok``, ``hands``, ``ready``, ``stack``, ...): cards are card kinds (small ints, see
:mod:`havok_env.cards`), piles lists of kinds with decks top first, the work in progress
(``stack``) a list of plain dicts, and the random number generator a 64-bit integer
(SplitMix64), so nothing live hides inside the state. Reading a field copies it out of the core;
assigning one (``s.hoards = ...``, ``s.ready[1] = False``) writes it back, checked, for tests,
hand-built positions and search.
"""

from __future__ import annotations

_MASK = (1 << 64) - 1


def rng_next(state: int) -> tuple[int, int]:
    """SplitMix64: returns (new_state, 64-bit output); the core's generator, step for step."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


class _Written(list):
    """A list read out of the core that writes itself back when an item is assigned."""

    __slots__ = ("_core", "_name")

    def __init__(self, items, core, name: str):
        super().__init__(items)
        self._core, self._name = core, name

    def __setitem__(self, index, value):
        super().__setitem__(index, value)
        self._core.set(self._name, list(self))


# fields read and written as they are; the per-seat lists write back item assignments too
_FIELDS = ("rng", "turn", "current", "havok", "hijinks", "discard", "past_events", "trash",
           "in_play", "canceled", "log")
_SEAT_FIELDS = ("hands", "hoards", "known", "ready", "innate_used", "restricted", "cards_used",
                "card_limit")


class GameState:
    """A live view of a game's state in the core (see the module docstring)."""

    __slots__ = ("_core", "_pending")

    def __init__(self, core):
        object.__setattr__(self, "_core", core)
        object.__setattr__(self, "_pending", (None, None))

    @property
    def num_players(self) -> int:
        return self._core.num_players

    @property
    def dragons(self) -> list[int]:
        return self._core.dragons

    @property
    def stack(self) -> list[dict]:
        return self._core.stack()

    @property
    def pending(self) -> dict | None:
        """The pending decision: player, kind, purpose, choices, context (None once over).

        Built once per position; the same dict is returned until the game changes."""
        core = self._core
        version, p = self._pending
        if version != core.version:
            p = core.pending()
            object.__setattr__(self, "_pending", (core.version, p))
        return p

    @property
    def result(self) -> dict | None:
        return self._core.result()

    def __getattr__(self, name):
        if name in _FIELDS:
            return getattr(self._core, name)
        if name in _SEAT_FIELDS:
            return _Written(getattr(self._core, name), self._core, name)
        raise AttributeError(f"GameState has no field {name!r}")

    def __setattr__(self, name, value):
        if name not in _FIELDS and name not in _SEAT_FIELDS and name not in (
                "stack", "pending", "result"):
            raise AttributeError(f"GameState has no field {name!r}")
        self._core.set(name, value)

    def clone(self) -> "GameState":
        return GameState(self._core.clone())
