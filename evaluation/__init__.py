"""Evaluation of Havok & Hijinks agents: tournaments, their report, the human ledger, and
luck-corrected scores (AIVAT), which need fewer games for the same certainty.

* :mod:`evaluation.schedule`: a tournament's games (duplicate deals, rotated seats and dragons)
  and which dragon each agent plays; :mod:`evaluation.tournament` plays them
  (:func:`evaluation.tournament.run_tournament`); :mod:`evaluation.report` is their report (text,
  CSV, JSON, the head-to-head plot). ``evaluate.py`` is the command line over them.
* :mod:`evaluation.ledger`: the human benchmark ledger's format (its one writer and one checker)
  and its summary; :mod:`evaluation.results`: rewards, scores and OpenSkill ratings, for the
  report, the ledger and the arena.
* :func:`evaluation.luck.corrected_rewards` ``(record, policies) -> np.ndarray``: each seat's reward
  in a recorded game minus the luck of its chance events and of the random bot's decisions, an
  unbiased estimate of the same expected reward with a smaller variance;
  :func:`evaluation.luck.corrected_batch` does many games, :func:`evaluation.luck.analyse` gives
  the correction of every event (with ``steps=True``, where the variance left comes from; with
  ``deeper=0.7``, the value taken one chance event further on, which narrows the intervals more for
  some 0.1 s of CPU a game with heuristic look-aheads; with ``depth=2`` as well, two events further
  on, narrower still for some 1.2 s a game; docs/luck.md, "The walk in the core").
  :mod:`evaluation.chance` lists a replay's chance events with every outcome;
  :mod:`agents.value` is the fixed value function; :mod:`evaluation.fit` fitted it.

The luck method, its assumptions and a worked game are in docs/luck.md. The luck modules need only
numpy (and the engine); ``import havok_env`` never imports this package.
"""


class EvalError(Exception):
    """A problem with a tournament's options or inputs: evaluate.py reports it in one line (exit
    code 2)."""
