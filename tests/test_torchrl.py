"""TorchRL's PettingZooWrapper steps the AEC environment with action masks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")
pytest.importorskip("torchrl", reason="torchrl is not installed (pip install -e '.[torchrl]')")

from havok_env.tensor_infos import tensor_env  # noqa: E402
from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402


def test_pettingzoo_wrapper_plays_a_game_with_masks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL warns that it was tested with PettingZoo 1.24.3
        env = PettingZooWrapper(env=tensor_env(num_players=3), use_mask=True, categorical_actions=True,
                                seed=4)
    groups = list(env.group_map)
    assert groups == ["player_0", "player_1", "player_2"]
    aec = env._env.unwrapped
    rng = np.random.default_rng(0)
    td = env.reset()
    steps = 0
    while not td["done"].item():
        acting = [g for g in groups if td[g, "mask"].item()]
        assert acting == [aec.agent_selection]  # only the seat that must decide is unmasked
        g = acting[0]
        mask = td[g, "action_mask"][0].numpy()
        seat = aec.agent_name_mapping[g]
        o, m = aec.observer.observe(aec.game, seat)
        assert np.array_equal(mask, m.astype(bool))
        assert np.array_equal(td[g, "observation", "observation"][0].numpy(), o)
        assert td[g, "info", "dragon"].item() == aec.game.cards.dragon_index(aec.game.dragon(seat).name)
        td[g, "action"] = torch.tensor([int(rng.choice(np.flatnonzero(mask)))])
        td = env.step(td)["next"]
        steps += 1
    assert aec.game.is_over and steps > 10
    rewards = [td[g, "reward"].item() for g in groups]
    assert rewards == aec.game.rewards()  # the game's own end, no illegal move
