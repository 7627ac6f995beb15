"""Havok & Hijinks: a rules engine and PettingZoo environment for the card game."""

from .cards import CardDataError, CardSet, default_cards, load_cards
from .engine import ActionLayout, ConfigError, Game, IllegalActionError, SnapshotError

__all__ = ["ActionLayout", "CardDataError", "CardSet", "ConfigError", "Game", "IllegalActionError",
           "SnapshotError", "default_cards", "load_cards"]

from .env import env, raw_env  # noqa: E402

__all__ += ["env", "raw_env"]
