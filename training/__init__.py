"""Training machinery: what train.py (and the scripts that measure it) uses, on top of agents/.

- :mod:`training.run` — a train.py run: its stages, checkpoints, evaluations and record.
- :mod:`training.settings` — a train.py run's defaults and the checks of its arguments.
- :mod:`training.imitation` — behaviour cloning and distillation from a teacher bot's games.
- :mod:`training.selfplay` — self-play opponent pools (bots and frozen snapshots of the learner).
- :mod:`training.winrate` — a learner's win rate against one opponent (train.py's evaluation).
- :mod:`training.parallel` — worker pools that end at once on Ctrl-C (train.py, evaluate.py, the
  benchmarks).
- :mod:`training.stats` — statistics shared by training, evaluation and the benchmarks (Wilson).

It imports agents/ and havok_env/, never the reverse; nothing here imports torch at import time
(:func:`training.imitation.pretrain` imports it when called).
"""
