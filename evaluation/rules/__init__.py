"""The rules in Python, for the luck tracer alone (:mod:`evaluation.chance`).

The game runs in the native core (``havok_env.engine``), which cannot be stopped inside a move.
The tracer must stop the rules at the moment each card is revealed and at each use of the game's
generator, and rerun them from there with another outcome; so it replays a record on this copy of
the project's Python engine (the one the core replaced, whose seeded behaviour the core reproduces
byte for byte: tests/rules_fingerprint.py), subclassing its ``Game`` and ``GameState``. Every
traced game is checked against the core's replay of the same record (the same result, every
hoard the same), and a game on which they differ is refused (:class:`evaluation.chance.TraceError`),
so a rules change made in the core alone shows at once instead of skewing the estimate.
"""
