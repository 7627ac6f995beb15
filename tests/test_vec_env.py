"""The batched training environment: havok_env.vector.LearnerGames and training/vec_env.py's
stable-baselines3 VecEnv: the same games and observations as env(), the bots in the core playing
as the Python bots do, frozen policies that see only their own seat, masks, resets, seeds, the
state of a centralised critic, and the self-play league."""

from __future__ import annotations

import numpy as np
import pytest

import havok_env
from agents import make_agent
from havok_env import ConfigError, IllegalActionError
from havok_env.observe import Observer
from havok_env.state import rng_next
from havok_env.vector import LearnerGames, random_legal_actions
from havok_env.view import SeatView

MASK63 = (1 << 63) - 1


def deals(seed, players, opponents):
    """The batch's stream of deals: (game seed, learner seat), as the core draws them."""
    stream = seed
    while True:
        stream, game_seed = rng_next(stream)
        stream, seat = rng_next(stream)
        stream, _ = rng_next(stream)  # the random opponents' generator
        for _ in range(players - 1 if opponents else 0):
            stream, _ = rng_next(stream)  # a controller per opponent seat
        yield game_seed & MASK63, seat % players


def play_batch(players, opponents, steps, seed=9, n=4):
    """Steps a LearnerGames with random learner actions; returns each finished game's deal, the
    learner's (observation, mask, action) at each of its decisions, its reward and last view."""
    games = LearnerGames(n, players, dragon="fire", opponents=opponents, seed=seed)
    stream = deals(seed, players, opponents)
    slot = [next(stream) for _ in range(n)]
    trace = [[] for _ in range(n)]
    obs, mask = games.reset()
    rng = np.random.default_rng(0)
    finished = []
    for _ in range(steps):
        actions = random_legal_actions(mask, rng)
        for i in range(n):
            trace[i].append((obs[i].copy(), mask[i].copy(), int(actions[i])))
        obs, mask, rewards, ended = games.step(actions)
        for i in np.flatnonzero(ended):  # new games are dealt in index order
            finished.append((slot[i], trace[i], float(rewards[i]), games.final_obs[i].copy()))
            trace[i], slot[i] = [], next(stream)
    return finished


@pytest.mark.parametrize("players", [2, 3])
def test_learner_games_are_env_games_with_the_python_heuristic_opponents(players):
    finished = play_batch(players, ["heuristic"], steps=120)
    assert len(finished) >= 6
    for (game_seed, seat), trace, reward, final_obs in finished:
        dragons = [None] * players
        dragons[seat] = "Ruby"
        env = havok_env.env(num_players=players, dragons=dragons)
        env.reset(seed=game_seed)
        game = env.unwrapped.game
        bots = {q: make_agent("heuristic") for q in range(players) if q != seat}
        for q, bot in bots.items():
            bot.reset(q, players)
        steps = iter(trace)
        for agent in env.agent_iter():
            o, r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            q = env.unwrapped.agent_name_mapping[agent]
            if q == seat:  # the learner's observation and mask are env()'s, byte for byte
                want_obs, want_mask, action = next(steps)
                assert o["observation"].tobytes() == want_obs.tobytes()
                assert o["action_mask"].tobytes() == want_mask.tobytes()
            else:  # the core's heuristic chose as the Python bot does
                action = bots[q].act(o["observation"], o["action_mask"], SeatView(game, q))
            env.step(action)
        assert next(steps, None) is None
        assert game.rewards()[seat] == reward
        assert final_obs.tobytes() == Observer(game.cards).observe(game, seat)[0].tobytes()


def test_random_opponents_and_the_default_stream_are_unchanged():
    # no league: the single-agent view's games, dealt exactly as before leagues existed
    from havok_env.vector import SingleAgentVectorEnv
    old = SingleAgentVectorEnv(5, num_players=3, seed=4)
    new = LearnerGames(5, 3, seed=4)
    o1, info = old.reset()
    o2, m2 = new.reset()
    assert np.array_equal(o1, o2) and np.array_equal(info["action_mask"], m2)
    from havok_env.vector import _game_copy
    for i in range(5):
        assert _game_copy(old._b, 3, i).snapshot() == new.game(i).snapshot()


def test_frozen_policies_see_only_their_own_seat_and_act_in_one_call_per_step():
    seen = []
    observer = None

    def policy(obs, mask):
        seen.append((obs.copy(), mask.copy(), [games.game(int(i)) for i in np.flatnonzero(waiting())]))
        return random_legal_actions(mask, rng)

    def waiting():
        b = games._b
        return b.ctrl[np.arange(games.num_envs), b.to_act] == 1

    rng = np.random.default_rng(3)
    games = LearnerGames(8, 2, dragon="fire", opponents=[policy], seed=2)
    observer = Observer(games.observer.cards)
    obs, mask = games.reset()
    for _ in range(30):
        calls = len(seen)
        obs, mask, rewards, ended = games.step(random_legal_actions(mask, rng))
        assert (games.learner_seat >= 0).all()
        # every game waits on its learner, whose observation is written for it
        for i in range(8):
            g = games.game(i)
            assert g.to_act == games.learner_seat[i]
            assert obs[i].tobytes() == observer.observe(g, g.to_act)[0].tobytes()
        assert len(seen) - calls <= 40  # one call per round of the games waiting on it, not per game
    assert seen
    for pobs, pmask, gs in seen:
        assert len(pobs) == len(gs)
        for o, m, g in zip(pobs, pmask, gs):
            seat = g.to_act
            assert seat != -1
            want_o, want_m = observer.observe(g, seat)
            assert o.tobytes() == want_o.tobytes() and m.tobytes() == want_m.tobytes()


def test_a_frozen_policys_illegal_action_is_our_error():
    games = LearnerGames(4, 2, opponents=[lambda o, m: np.zeros(len(o), np.int64) + 75], seed=1)
    with pytest.raises(IllegalActionError, match="not legal"):
        for _ in range(10):
            obs, mask = games.reset() if _ == 0 else (games.obs, games.mask)
            games.step(random_legal_actions(mask, np.random.default_rng(0)))


@pytest.mark.parametrize("bad", [[], ["search"], [3]])
def test_bad_opponents_are_config_errors(bad):
    with pytest.raises(ConfigError):
        LearnerGames(2, 2, opponents=bad)


def test_bad_weights_are_config_errors():
    for w in ([1.0], [-1.0, 1.0], [0.0, 0.0], [float("nan"), 1.0]):
        with pytest.raises(ConfigError):
            LearnerGames(2, 2, opponents=["random", "heuristic"], weights=w)


def test_the_state_is_every_seats_observation_the_learners_first():
    games = LearnerGames(3, 3, dragon="fire", opponents=["heuristic"], seed=5, state=True)
    obs, mask = games.reset()
    observer = Observer(games.observer.cards)
    rng = np.random.default_rng(1)
    size = observer.size
    for _ in range(40):
        for i in range(3):
            g, me = games.game(i), int(games.learner_seat[i])
            state = games.state[i]
            assert state[:size].tobytes() == obs[i].tobytes()
            for k in range(3):
                want = observer.observe(g, (me + k) % 3)[0]
                assert state[k * size:(k + 1) * size].tobytes() == want.tobytes()
        obs, mask, _, _ = games.step(random_legal_actions(mask, rng))


# -- the stable-baselines3 VecEnv -------------------------------------------------------------------

def test_vec_env_masks_resets_and_seeds():
    pytest.importorskip("sb3_contrib")
    from training.vec_env import HavokVecEnv

    def run(seed):
        venv = HavokVecEnv(6, "fire", 2, opponents=["heuristic", "random"], seed=seed)
        venv.seed(seed)
        obs = venv.reset()
        out, done_seen = [obs], 0
        rng = np.random.default_rng(0)
        for _ in range(60):
            masks = venv.action_masks()
            assert masks.dtype == bool and masks.shape == (6, 76) and masks.any(axis=1).all()
            from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
            assert is_masking_supported(venv) and np.array_equal(get_action_masks(venv), masks)
            obs, rewards, dones, infos = venv.step(random_legal_actions(masks, rng))
            for i in np.flatnonzero(dones):
                done_seen += 1
                assert infos[i]["terminal_observation"].shape == (643,) and rewards[i] in (-1.0, 0.0, 1.0)
            assert not rewards[~dones].any()
            out.append(obs)
        return np.array(out), done_seen

    a, ended = run(11)
    b, _ = run(11)
    c, _ = run(12)
    assert ended >= 4 and np.array_equal(a, b) and not np.array_equal(a, c)


def test_vec_env_outcomes_name_the_opponent_and_feed_the_league():
    pytest.importorskip("sb3_contrib")
    from training.league import League
    from training.vec_env import HavokVecEnv
    league = League(["heuristic", "random"])
    venv = HavokVecEnv(16, "fire", 2, opponents=league.opponents(), weights=league.weights(), seed=0)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(300):
        venv.step(random_legal_actions(venv.action_masks(), rng))
    outcomes = venv.take_outcomes()
    assert {o for o, _ in outcomes} == {"heuristic", "random"}
    league.record(outcomes)
    heur, rand = league.members
    # a random learner loses to the heuristic more than to random play: the heuristic is played more
    assert heur.score < rand.score and heur.played + rand.played == len(outcomes)
    w = league.weights()
    assert w[0] > w[1]
    # the bots keep at least bot_share of the games however many snapshots there are
    crowd = League(["heuristic"], max_snapshots=8)
    for k in range(8):
        crowd.add(f"s{k}", object())
    assert crowd.weights()[0] == pytest.approx(0.5) and sum(crowd.weights()) == pytest.approx(1)
    crowd.members[1].score = 0.2  # a snapshot that beats the learner is played more than the others
    assert crowd.weights()[1] > crowd.weights()[2] and crowd.weights()[0] == pytest.approx(0.5)
    # a snapshot joins; the oldest beyond the pool leaves; the bots stay
    league.max_snapshots = 2
    for k in range(3):
        league.add(f"s{k}", lambda o, m: random_legal_actions(m, rng))
    assert [m.name for m in league.members] == ["heuristic", "random", "s1", "s2"]
    league.update(venv)
    assert venv.take_outcomes() == []


def test_maskable_ppo_learns_on_the_vec_env_and_the_actor_never_reads_hidden_state():
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from agents.policy import PolicyAgent
    from agents.sb3_model import network, policy_spec, record, tensors
    from training.vec_env import HavokVecEnv
    venv = HavokVecEnv(8, "fire", 2, opponents=["random"], seed=0, state=True)
    policy, kwargs = policy_spec({"pi": [16], "vf": [16], "activation": "tanh", "critic": "state"}, 643)
    model = MaskablePPO(policy, venv, n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs=kwargs)
    model.learn(256)
    assert network(model.policy)["critic"] == "state"
    # the actor reads the learner's observation only: changing the rest of the state (the other
    # seats' hands and all that only they know) changes no logit; the critic does read it
    obs = torch.as_tensor(venv.reset())
    other = obs.clone()
    other[:, 643:] = torch.rand_like(other[:, 643:])
    p = model.policy
    with torch.no_grad():
        assert torch.equal(p.get_distribution(obs).distribution.logits,
                           p.get_distribution(other).distribution.logits)
        assert not torch.equal(p.predict_values(obs), p.predict_values(other))
    # the saved actor is an ordinary policy: its numpy argmax is the model's on the observation
    from havok_env.version import ENV_VERSION
    meta = {"env_version": ENV_VERSION, "dragon": "Ruby", "affinity": "fire", "players": 2,
            "observation_size": 643, "action_size": 76}
    agent = PolicyAgent(tensors(model.policy), record(model, meta))
    masks = venv.action_masks()
    want, _ = model.predict(obs.numpy(), action_masks=masks, deterministic=True)
    assert np.array_equal(agent.act_batch(obs.numpy()[:, :643], masks), want)


def test_the_aec_state_is_every_seats_observation_and_lies_in_its_space():
    env = havok_env.env(num_players=3)
    with pytest.raises(IllegalActionError):
        env.unwrapped.state()
    env.reset(seed=8)
    observer = env.unwrapped.observer
    assert env.unwrapped.state_space.shape == (3 * observer.size,)
    for _ in env.agent_iter(max_iter=300):
        obs, _, term, trunc, _ = env.last()
        state = env.unwrapped.state()
        assert env.unwrapped.state_space.contains(state)
        game = env.unwrapped.game
        for q in range(3):
            assert state[q * observer.size:(q + 1) * observer.size].tobytes() == \
                observer.observe(game, q)[0].tobytes()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
