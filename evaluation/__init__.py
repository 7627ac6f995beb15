"""Luck-corrected evaluation (AIVAT) for Havok & Hijinks: fewer games for the same certainty.

* :func:`evaluation.luck.corrected_rewards` ``(record, policies) -> np.ndarray``: each seat's reward
  in a recorded game minus the luck of its chance events and of the random bot's decisions, an
  unbiased estimate of the same expected reward with a smaller variance;
  :func:`evaluation.luck.corrected_batch` does many games, :func:`evaluation.luck.analyse` gives
  the correction of every event (and, with ``steps=True``, where the variance left comes from).
* :mod:`evaluation.chance` lists a replay's chance events with every outcome;
  :mod:`evaluation.value` is the fixed value function; :mod:`evaluation.fit` fitted it.

The method, its assumptions and a worked game are in docs/luck.md. The package needs only numpy
(and the engine); ``import havok_env`` never imports it.
"""
