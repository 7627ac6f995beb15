"""The OpenSpiel Python game python_havok_hijinks (havok_env.openspiel) and OpenSpiel's tools on it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install -e '.[openspiel]')")

import havok_env.openspiel  # noqa: E402,F401  (registers the game)
from havok_env.engine import ConfigError  # noqa: E402
from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts  # noqa: E402


@pytest.mark.parametrize("players", [2, 3, 4])
def test_openspiel_random_simulation_test(players):
    game = pyspiel.load_game("python_havok_hijinks", {"players": players, "seed": players})
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    assert game.observation_tensor_shape() == game.information_state_tensor_shape() == [643]
    assert game.num_distinct_actions() == 76 and game.num_players() == players
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


def test_seeded_games_strings_and_returns():
    a = pyspiel.load_game("python_havok_hijinks", {"seed": 5})
    b = pyspiel.load_game("python_havok_hijinks", {"seed": 5})
    first = [str(a.new_initial_state()) for _ in range(2)]
    assert first == [str(b.new_initial_state()) for _ in range(2)] and first[0] != first[1]
    state = a.new_initial_state()
    p = state.current_player()
    labels = [state.action_to_string(p, x) for x in state.legal_actions()]
    assert labels == [f"p{p}: {state.engine.action_label(x)}" for x in state.legal_actions()]
    assert labels[0] == f"p{p}: end the turn"
    rng = np.random.RandomState(0)
    while not state.is_terminal():
        assert state.legal_actions() == sorted(state.engine.pending["choices"])
        state.apply_action(rng.choice(state.legal_actions()))
    assert state.returns() == state.engine.rewards() and sorted(state.returns())[-1] in (0.0, 1.0)
    with pytest.raises(ConfigError, match="players must be 2 to 4, not 5"):
        pyspiel.load_game("python_havok_hijinks", {"players": 5})


def test_resampled_worlds_keep_only_what_the_seat_knows():
    game = pyspiel.load_game("python_havok_hijinks", {"players": 3, "seed": 1})
    state = game.new_initial_state()
    rng = np.random.RandomState(2)
    for _ in range(12):
        state.apply_action(rng.choice(state.legal_actions()))
    me = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    hands = set()
    for _ in range(8):
        world = state.resample_from_infostate(me, sampler)
        # the seat's information state and observation are the same in every sampled world...
        assert world.information_state_string(me) == state.information_state_string(me)
        assert world.observation_tensor(me) == state.observation_tensor(me)
        assert world.information_state_tensor(me) == state.information_state_tensor(me)
        assert world.legal_actions() == state.legal_actions()
        hands.add(tuple(tuple(world.engine.s.hands[q]) for q in range(3) if q != me))
    assert len(hands) > 1  # ...while the hands it cannot see differ
    # recall: the information state string changes with every decision the seat takes
    a = state.information_state_string(me)
    state.apply_action(state.legal_actions()[0])
    assert state.information_state_string(me) != a


def test_ismcts_bot_plays_a_game_and_mcts_runs_in_evaluate_bots():
    game = pyspiel.load_game("python_havok_hijinks", {"seed": 2})
    rng = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 2.0, 8, random_state=rng)
    state = game.new_initial_state()
    while not state.is_terminal():
        action = bot.step(state) if state.current_player() == 0 else rng.choice(state.legal_actions())
        assert action in state.legal_actions()
        state.apply_action(action)
    assert sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])
    # OpenSpiel's evaluation utility with its (Python) MCTS bot; its IS-MCTS lacks restart_at()
    mcts_bot = mcts.MCTSBot(game, 2.0, 4, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    bots = [mcts_bot, pyspiel.make_uniform_random_bot(1, 3)]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


def test_observers_refuse_other_views():
    game = pyspiel.load_game("python_havok_hijinks")
    public_only = pyspiel.IIGObservationType(perfect_recall=False, public_info=True,
                                             private_info=pyspiel.PrivateInfoType.NONE)
    with pytest.raises(ValueError, match="only a seat's own view"):
        game.make_py_observer(public_only)


def test_import_havok_env_does_not_import_pyspiel():
    code = "import sys, havok_env; sys.exit('pyspiel' in sys.modules or 'open_spiel' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_a_script_that_played_the_game_exits_without_noise(tmp_path):
    """OpenSpiel keeps every loaded game until the process ends; leaving must print nothing."""
    script = ("import pyspiel, havok_env.openspiel\n"
              "g = pyspiel.load_game('python_havok_hijinks', {'seed': 1})\n"
              "s = g.new_initial_state()\n"
              "while not s.is_terminal(): s.apply_action(s.legal_actions()[0])\n"
              "print(s.returns())\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr[-2000:]
