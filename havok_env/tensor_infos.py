"""The AEC environment with numeric infos only, for libraries that turn infos into tensors.

TorchRL's ``PettingZooWrapper`` makes a tensor of every info value and fixes the info keys at
reset; ``havok_env.env()``'s infos name the dragon (``"Ruby"``) and add the result (a dict) at
the end, which it cannot take. ``tensor_env(**kwargs)`` is ``havok_env.env(**kwargs)`` whose
``infos[agent]`` is ``{"dragon": index}`` all game long: the seat's dragon as its index in the
card set's dragons (``env.unwrapped.game.cards.dragons``). The game itself, observations, masks
and rewards are the same, and ``env.unwrapped.game.result`` still has the result.
"""

from __future__ import annotations

from pettingzoo.utils.wrappers import BaseWrapper

from .env import env


class TensorInfos(BaseWrapper):
    @property
    def infos(self):
        cards = self.env.unwrapped.game.cards
        return {a: {"dragon": cards.dragon_index(info["dragon"])} for a, info in self.env.infos.items()}


def tensor_env(**kwargs) -> TensorInfos:
    return TensorInfos(env(**kwargs))
