"""Havok & Hijinks: a rules engine and PettingZoo environment for the card game."""

from .cards import CardDataError, CardSet, default_cards, load_cards
from .engine import ActionLayout, ConfigError, Game, IllegalActionError, SnapshotError
from .version import ENV_VERSION

__all__ = ["ActionLayout", "CardDataError", "CardSet", "ConfigError", "ENV_VERSION", "Game",
           "IllegalActionError", "SnapshotError", "default_cards", "load_cards"]

try:
    from .env import env, raw_env  # noqa: E402
except ImportError as e:
    # The engine, the card data, the version and saved models need numpy alone; without PettingZoo
    # or gymnasium only the environments are missing, and say so when asked for.
    _MISSING = (e.name or "").split(".")[0]
    if _MISSING not in ("pettingzoo", "gymnasium"):
        raise

    def __getattr__(name):
        if name in ("env", "raw_env"):
            raise ImportError(f"havok_env.{name} needs {_MISSING}, which is not installed "
                              "(pip install pettingzoo gymnasium)")
        raise AttributeError(f"module 'havok_env' has no attribute {name!r}")
else:
    __all__ += ["env", "raw_env", "GYM_ID"]
    import gymnasium as _gym

    # The single-agent view as a Gymnasium id. The entry point is named, not imported: it lives in
    # the agents package (it turns agent specs such as "heuristic" into opponents), which
    # gymnasium imports only when the id is made, so `import havok_env` stays light.
    GYM_ID = "havok_env/HavokHijinks-v0"
    if GYM_ID not in _gym.registry:
        _gym.register(id=GYM_ID, entry_point="agents.gym_env:single_agent_env")
