"""Batched stepping (havok_env.vector): the same games as the Game API, step for step, with
automatic resets, illegal batches refused whole, and the Gymnasium single-agent vector env."""

import numpy as np
import pytest

from havok_env import ConfigError, IllegalActionError
from havok_env.observe import Observer
from havok_env.vector import SingleAgentVectorEnv, VectorGames, _demo, random_legal_actions


def random_actions(rng, mask):
    return (rng.random(mask.shape) * mask).argmax(axis=1)


@pytest.mark.parametrize("players", [2, 4])
def test_every_step_is_the_game_apis_step(players):
    games = VectorGames(6, num_players=players, seed=3)
    obs, mask, to_act = games.reset()
    ob = Observer(games.observer.cards)
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(300):
        before = [games.game(i) for i in range(6)]
        actions = random_actions(rng, mask)
        obs, mask, rewards, terminated, to_act = games.step(actions)
        for i, g in enumerate(before):
            g.apply(int(actions[i]))
            if terminated[i]:  # the finished game's rewards, then a new game's first decision
                ended += 1
                assert g.is_over and rewards[i].tolist() == g.rewards()
                g = games.game(i)
                assert g.s.turn == 1 and not g.is_over
            else:
                assert not rewards[i].any()
            assert to_act[i] == g.to_act
            o, m = ob.observe(g, g.to_act)
            assert np.array_equal(obs[i], o) and np.array_equal(mask[i], m)
    assert ended > 3


def test_a_new_game_in_a_batch_is_the_seeded_game_whatever_came_before():
    # a finished game's replacement is dealt into its buffers: it must hold nothing of the old one
    from havok_env import Game
    from havok_env.state import rng_next

    def fresh(seed):
        snap = Game(2, seed=seed & (2 ** 63 - 1)).snapshot()
        del snap["seed"]  # (a batch's game does not record its seed)
        return snap

    games = VectorGames(2, num_players=2, seed=5)
    obs, mask, to_act = games.reset()
    stream, seeds = 5, []
    for _ in range(12):
        stream, out = rng_next(stream)
        seeds.append(out)
    dealt = 2
    for i in range(2):
        snap = games.game(i).snapshot()
        del snap["seed"]
        assert snap == fresh(seeds[i])
    rng = np.random.default_rng(0)
    while dealt < 6:
        obs, mask, rewards, terminated, to_act = games.step(random_actions(rng, mask))
        for i in np.flatnonzero(terminated):
            snap = games.game(int(i)).snapshot()
            del snap["seed"]
            assert snap == fresh(seeds[dealt])
            dealt += 1


def test_same_seed_same_games_with_or_without_threads():
    runs = []
    for threads in (1, 3):
        games = VectorGames(40, num_players=3, seed=11, threads=threads)
        obs, mask, _ = games.reset()
        rng = np.random.default_rng(5)
        trace = []
        for _ in range(150):
            obs, mask, rewards, terminated, to_act = games.step(random_actions(rng, mask))
            trace.append((obs.copy(), rewards.copy(), terminated.copy(), to_act.copy()))
        runs.append(trace)
    for a, b in zip(*runs):
        assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_an_illegal_batch_is_refused_whole():
    games = VectorGames(4, seed=2)
    obs, mask, to_act = games.reset()
    before = [games.game(i).snapshot() for i in range(4)]
    actions = mask.argmax(axis=1)
    actions[2] = np.flatnonzero(mask[2] == 0)[0]
    with pytest.raises(IllegalActionError, match="^game 2: action"):
        games.step(actions)
    assert [games.game(i).snapshot() for i in range(4)] == before
    for bad in (np.zeros(3, np.int64), np.zeros(4, np.float64), np.zeros(4, np.bool_)):
        with pytest.raises(IllegalActionError, match="one per game"):
            games.step(bad)
    with pytest.raises(ConfigError, match="num_envs"):
        VectorGames(0)
    with pytest.raises(ConfigError, match="num_players must be 2, 3 or 4"):
        VectorGames(2, num_players=5)
    with pytest.raises(ConfigError, match="threads"):
        VectorGames(2, threads=0)


def test_actions_of_any_integer_type_are_taken_and_others_refused():
    games, ref = VectorGames(4, seed=2), VectorGames(4, seed=2)
    mask = games.reset()[1]
    ref.reset()
    actions = mask.argmax(axis=1)
    ref.step(actions)
    games.step(actions.astype(np.uint16))
    assert [games.game(i).snapshot() for i in range(4)] == [ref.game(i).snapshot() for i in range(4)]
    for bad in (actions.astype(object), actions.astype(str), actions.astype(np.float32)):
        with pytest.raises(IllegalActionError, match="one per game"):
            games.step(bad)


@pytest.mark.parametrize("dtype", [np.int8, np.bool_, np.int64])
def test_random_legal_actions_are_legal_and_uniform(dtype):
    rng = np.random.default_rng(5)
    legal = [[0], [1, 3, 4], [0, 2], [0, 1, 2, 3, 4]]
    mask = np.zeros((4, 5), dtype)
    for row, actions in enumerate(legal):
        mask[row, actions] = 1
    draws = np.array([random_legal_actions(mask, rng) for _ in range(6000)])  # [draw, game]
    for row, actions in enumerate(legal):
        seen = np.bincount(draws[:, row], minlength=5)
        assert set(np.flatnonzero(seen)) == set(actions)  # each legal action, and only those
        share = seen[actions] / len(draws)
        assert np.abs(share - 1 / len(actions)).max() < 0.03  # 6,000 draws: about 4 sigma
    mask[2] = 0
    with pytest.raises(ValueError, match="game 2 has no legal action"):
        random_legal_actions(mask, rng)


def test_random_legal_actions_drive_a_batch():
    games = VectorGames(64, num_players=3, seed=1)
    mask = games.reset()[1]
    rng = np.random.default_rng(0)
    for _ in range(200):
        mask = games.step(random_legal_actions(mask, rng))[1]


def test_the_single_agent_vector_env_plays_the_learners_decisions():
    env = SingleAgentVectorEnv(8, num_players=3, seed=4)
    obs, infos = env.reset()
    assert env.observation_space.contains(obs) and obs.shape == (8, env.single_observation_space.shape[0])
    rng = np.random.default_rng(2)
    finals = 0
    for _ in range(400):
        mask = infos["action_mask"]
        seats = infos["learner_seat"]
        assert mask.any(axis=1).all()  # the learner always has a decision to take
        obs, rewards, terminated, truncated, infos = env.step(random_actions(rng, mask))
        assert not truncated.any()
        assert set(np.unique(rewards[~terminated])) <= {0.0}
        assert set(np.unique(rewards[terminated])) <= {-1.0, 0.0, 1.0}
        if terminated.any():
            finals += int(terminated.sum())
            assert infos["_final_obs"].tolist() == terminated.tolist()
            assert env.single_observation_space.contains(infos["final_obs"][terminated][0])
        assert seats.shape == (8,)
    assert finals > 5


def test_the_example_runs(capsys):
    _demo(num_envs=4, steps=20)
    assert "steps/s" in capsys.readouterr().out
