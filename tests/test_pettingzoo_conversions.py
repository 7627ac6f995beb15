"""PettingZoo's parallel conversions: aec_to_parallel is refused, turn_based_aec_to_parallel plays."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel

import havok_env


def test_aec_to_parallel_is_refused():
    # a step changes the game at once (a crash window opens mid-cycle), so the env says it is not
    # parallelizable and PettingZoo's converter refuses it
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(havok_env.env())


def test_turn_based_parallel_plays_the_aec_game():
    par = turn_based_aec_to_parallel(havok_env.env(num_players=3))
    ref = havok_env.env(num_players=3)
    obs, _ = par.reset(seed=5)
    ref.reset(seed=5)
    rng = np.random.default_rng(1)
    while par.agents:
        deciding = [a for a in par.agents if obs[a]["action_mask"].any()]
        assert deciding == [ref.agent_selection]  # one seat decides per parallel step, crash windows too
        action = int(rng.choice(np.flatnonzero(obs[deciding[0]]["action_mask"])))
        obs, rewards, *_ = par.step({a: action if a in deciding else 0 for a in par.agents})
        ref.step(action)
        while ref.agents and (ref.terminations[ref.agent_selection] or ref.truncations[ref.agent_selection]):
            ref.step(None)
    assert rewards == {a: r for a, r in zip(ref.possible_agents, ref.unwrapped.game.rewards())}
