"""The environment's version, the one name that the PettingZoo environment
(``raw_env.metadata["name"]``), the single-agent view and saved models share.

Bump it whenever observations, actions or rewards change meaning (the history is in
``havok_env/env.py``'s docstring): a model records the version it was trained for and is refused
by any other. This module imports nothing, so that loading a model needs neither PettingZoo nor
gymnasium.
"""

ENV_VERSION = "havok_hijinks_v1"
