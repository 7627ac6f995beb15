"""The stable-baselines3 callback of train.py's PPO stage: the run's own work, between updates."""

from __future__ import annotations

from stable_baselines3.common.callbacks import BaseCallback


class BetweenUpdates(BaseCallback):
    """Calls ``between(model)`` as each rollout starts, that is between two updates (where the
    policy is the one the steps so far trained), and stops the learning when ``keep_going()``
    says False at a step."""

    def __init__(self, between, keep_going):
        super().__init__()
        self._between, self._keep_going = between, keep_going

    def _on_step(self) -> bool:
        return self._keep_going()

    def _on_rollout_start(self) -> None:
        self._between(self.model)
