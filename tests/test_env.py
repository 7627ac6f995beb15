"""The PettingZoo AEC environment: conformance, crash windows, masks, labels, rendering, no leaks."""

import random
import re
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import havok_env
from havok_env import ConfigError, Game, IllegalActionError, SnapshotError
from havok_env.env import raw_env
from havok_env.observe import Observer
from havok_env.view import SeatView


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_conformance(n):
    api_test(havok_env.env(num_players=n), num_cycles=300)
    seed_test(lambda: havok_env.env(num_players=n), num_cycles=300)
    render_test(lambda render_mode=None: havok_env.env(num_players=n, render_mode=render_mode))


def play_random(e, seed, until=None):
    """Random legal play through an AEC env; yields before each step."""
    rng = random.Random(seed)
    e.reset(seed=seed)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            continue
        yield agent, obs
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)))


def test_selection_follows_every_decision_and_only_the_decider_has_a_mask():
    windows = 0
    for seed in range(20):
        e = raw_env(num_players=4)
        for agent, obs in play_random(e, seed):
            g = e.game
            seat = e.agent_name_mapping[agent]
            assert g.to_act == seat
            assert sorted(np.flatnonzero(obs["action_mask"])) == sorted(g.legal_actions())
            for other in e.agents:
                if other != agent:
                    assert not e.observe(other)["action_mask"].any()
            if g.pending["kind"] == "crash":
                windows += 1
                # a crash window: the decider may crash with exactly its legal crashes or decline
                assert g.pending["choices"][0] == g.END
                trig = g.pending["context"]["trigger"]
                assert g.pending["choices"][1:] == g.crash_choices(seat, trig)
    assert windows > 50


def test_crash_window_selects_out_of_turn_player():
    """Player 0 steals from Pearl (player 1), who holds Moonlit Ward: the selection moves to
    player 1, offered exactly Moonlit Ward, Moonward (its innate crash) and declining."""
    d = Game(2, ["fire", "moonlight"], seed=3).snapshot()
    pool = d["hijinks_deck"] + d["players"][0]["hand"] + d["players"][1]["hand"]
    quiet = [c for c in pool if c not in ("Sticky Claws", "Moonlit Ward", "Eclipse", "Smoke Bomb",
                                          "Blinding Flash")]
    d["players"][0]["hand"] = ["Sticky Claws"] + quiet[:2]
    d["players"][1]["hand"] = ["Moonlit Ward"] + quiet[2:4]
    for c in d["players"][0]["hand"] + d["players"][1]["hand"]:
        pool.remove(c)
    d["hijinks_deck"] = pool
    d["current_player"] = 0
    d["stack"] = [{"f": "turn", "step": "main"}]  # at the main decision: the flipped event is past
    d["past_events"] += d["in_play"]["resolving"]
    d["in_play"]["resolving"] = []
    d["pending"] = None
    e = raw_env(num_players=2)
    e.reset(options={"snapshot": d})
    game = e.game
    assert e.agent_selection == "player_0"
    e.step(game.card_action(game.cards.kind("Sticky Claws")))
    assert e.agent_selection == "player_1"
    mask = e.observe("player_1")["action_mask"]
    ward = game.card_action(game.cards.kind("Moonlit Ward"))
    assert sorted(np.flatnonzero(mask)) == [game.END, ward, game.INNATE_CRASH]
    assert e.action_label(ward) == "crash with Moonlit Ward"
    assert e.action_label(game.INNATE_CRASH).startswith("crash with Moonward")
    assert not e.observe("player_0")["action_mask"].any()
    e.step(ward)
    assert game.s.hoards[1] == [game.cards.kind("Bronze Talon")]  # the steal was canceled


def test_infos_name_dragons_and_seed_fixes_everything():
    e = havok_env.env(num_players=3, dragons=["fire", None, "Pearl"])
    e.reset(seed=11)
    dragons = [e.infos[a]["dragon"] for a in e.agents]
    assert dragons[0] == "Ruby" and dragons[2] == "Pearl" and dragons[1] in ("Obsidian", "Amber")
    runs = []
    for _ in range(2):
        e = havok_env.env(num_players=3)
        trace = []
        for agent, obs in play_random(e, seed=5):
            trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
        runs.append((trace, e.unwrapped.game.snapshot()))
    assert runs[0] == runs[1]
    # the env deals exactly the engine's game for the same seed
    e = raw_env(num_players=2)
    e.reset(seed=42)
    assert e.game.snapshot() == Game(2, seed=42).snapshot()


def test_replay_of_env_record_reproduces_the_game():
    e = raw_env(num_players=4)
    for _ in play_random(e, seed=9):
        pass
    again = Game.replay(e.record())
    assert again.snapshot() == e.game.snapshot()


def test_raw_env_raises_on_illegal_action_and_env_terminates():
    e = raw_env(num_players=2)
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match=rf"action {bad} .*not legal.*main decision"):
        e.step(bad)
    w = havok_env.env(num_players=2)
    w.reset(seed=1)
    offender = w.agent_selection
    w.step(bad)
    assert all(w.terminations.values())
    assert w.rewards[offender] == -1
    assert all(r == 0 for a, r in w.rewards.items() if a != offender)


def test_bad_configuration_raises_clear_errors():
    with pytest.raises(ConfigError, match="unknown dragon 'ice'"):
        havok_env.env(num_players=2, dragons=["ice", None])
    with pytest.raises(ConfigError, match="2, 3 or 4"):
        havok_env.env(num_players=5)
    with pytest.raises(ConfigError, match="different dragon"):
        havok_env.raw_env(num_players=2, dragons=["fire", "ruby"])
    with pytest.raises(ValueError, match="render_mode"):
        havok_env.raw_env(render_mode="rgb_array")


def test_action_labels_and_ansi_render():
    e = raw_env(num_players=2, render_mode="ansi")
    for _agent, _obs in play_random(e, seed=2):
        g = e.game
        labels = [e.action_label(a) for a in g.legal_actions()]
        assert all(isinstance(s, str) and s and "no such action" not in s for s in labels)
        assert len(set(labels)) == len(labels), labels
        if g.pending["purpose"] == "main":
            assert labels[0] == "end the turn"
            text = e.render()
            seat = g.to_act
            assert f"player_{seat}'s hand:" in text
            assert f"hoard {g.score(seat)}/15" in text
            for label in labels:
                assert label in text
            break


def _hide(game: Game, seat: int, seed: int) -> Game:
    """The same position with everything ``seat`` cannot see reshuffled."""
    return SeatView(game, seat).determinize(random.Random(seed))


def test_observation_holds_no_hidden_information():
    """Changing what a seat cannot see (other hands, unseen deck order, hidden declarations, the
    random generator) leaves that seat's observation unchanged; changing its own hand does not."""
    checked = 0
    for seed in range(40):
        n = 2 + seed % 3
        game = Game(n, seed=seed)
        obs = Observer(game.cards)
        rng = random.Random(seed)
        while not game.is_over:
            if rng.random() < 0.3:
                for seat in range(n):
                    before = obs.observe(game, seat)
                    other = _hide(game, seat, rng.getrandbits(32))
                    after = obs.observe(other, seat)
                    assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])
                    checked += 1
            game.apply(rng.choice(game.legal_actions()))
    assert checked > 1000


def test_observation_changes_with_what_the_seat_can_see():
    game = Game(2, seed=4)
    obs = Observer(game.cards)
    seat = game.to_act
    d = game.snapshot()
    hand = d["players"][seat]["hand"]
    swap = next(c for c in d["hijinks_deck"] if c not in hand)
    d["hijinks_deck"].remove(swap)
    d["hijinks_deck"].append(hand[0])
    hand[0] = swap
    d["pending"] = None  # an edited position: its decision is derived
    changed = Game.from_snapshot(d)
    assert not np.array_equal(obs.observe(game, seat)[0], obs.observe(changed, seat)[0])


def test_docstring_tables_match_the_layout():
    doc = sys.modules["havok_env.env"].__doc__
    game = Game(2, seed=0)
    observer = Observer(game.cards)
    for name, offset, length in observer.describe():
        assert re.search(rf"\|\s*{offset}\s*\|\s*{length}\s*\|\s*{name}\s*\|", doc), name
    assert f"Discrete({game.layout.size})" in doc
    assert f"({observer.size},)" in doc
    for _, first, count in game.layout.blocks():
        span = f"{first}" if count == 1 else f"{first}-{first + count - 1}"
        assert re.search(rf"\|\s*{span}\s*\|", doc), span
    assert raw_env.metadata["name"] == "havok_hijinks_v1"


def test_help_shows_our_documentation_and_the_declared_bounds():
    import pydoc
    from fractions import Fraction

    for obj in (havok_env.raw_env, havok_env.env):
        text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
        assert "## Action space" in text and "## Observation space" in text and "Bounds" in text
        assert "AECEnv steps agents one at a time" not in text  # PettingZoo's generic text
    doc = sys.modules["havok_env.env"].__doc__
    assert "[0, 9]" not in doc
    # every bound the docstring's table states for a named entry is the declared one
    game = Game(2, seed=0)
    ob = Observer(game.cards)
    low, high = ob.bounds()
    rows = re.findall(r"^\| `(\w+)`([^|]*)\| (\S+) +\| (\S+)", doc, re.M)
    assert len(rows) == 8
    for name, qualifier, least, greatest in rows:
        if name in ob.offset:
            entries = ob.offset[name] + np.arange(dict(ob.sections)[name])
        else:
            slots = (0, 1) if "slots 0 and 1" in qualifier else range(4)
            entries = [ob.offset["seats"] + r * ob.seat_size + ob.seat_offset[name] for r in slots]
        assert low[entries].min() == np.float32(Fraction(least)), name
        assert high[entries].max() == np.float32(np.inf if greatest == "inf" else Fraction(greatest)), name


def test_core_env_and_bots_import_without_torch():
    import subprocess

    code = ("import sys, havok_env, havok_env.wrappers, agents.heuristic, agents.search; "
            "sys.exit('torch' in sys.modules or 'stable_baselines3' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# -- edge cases of the AEC loop -------------------------------------------------------------------


def finished_snapshot(n=2, seed=2):
    g = Game(n, seed=seed)
    rng = random.Random(seed)
    while not g.is_over:
        g.apply(rng.choice(g.legal_actions()))
    return g


@pytest.mark.parametrize("make", [havok_env.env, raw_env])
def test_reset_to_a_finished_game_ends_every_agent_with_its_reward(make):
    """As just after a game's last step: every agent terminated with its reward and the result,
    stepped with None until none is left."""
    g = finished_snapshot(3, seed=4)
    e = make(num_players=3)
    e.reset(options={"snapshot": g.snapshot()})
    assert e.agents == e.possible_agents and all(e.terminations.values())
    seen = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        assert term and not trunc and info["result"] == g.result
        assert not obs["action_mask"].any()
        seen[agent] = reward
        e.step(None)
    assert seen == {f"player_{i}": r for i, r in enumerate(g.rewards())} and e.agents == []


def test_snapshot_for_another_player_count_is_refused():
    e = raw_env(num_players=2)
    with pytest.raises(SnapshotError, match="the snapshot has 3 players, this env 2"):
        e.reset(options={"snapshot": Game(3, seed=1).snapshot()})


def test_raw_env_step_before_reset_and_after_the_end():
    e = raw_env()
    with pytest.raises(IllegalActionError, match=r"^step\(\) before reset\(\): no game has started$"):
        e.step(0)
    e.reset(options={"snapshot": finished_snapshot().snapshot()})
    with pytest.raises(ValueError, match="when an agent is dead, the only valid action is None"):
        e.step(0)  # PettingZoo's own rule for a terminated agent
    e.step(None)
    e.step(None)
    with pytest.raises(IllegalActionError, match=r"^step\(\) after the game is over and every "
                                                 r"agent is done: call reset\(\)$"):
        e.step(None)
    e.reset(seed=1)  # and it plays again
    e.step(e.game.legal_actions()[0])


def test_wrapped_env_step_before_reset_and_after_the_end():
    from pettingzoo.utils.env_logger import EnvLogger

    e = havok_env.env()
    with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before step"):
        e.step(0)  # PettingZoo's OrderEnforcingWrapper
    e.reset(options={"snapshot": finished_snapshot().snapshot()})
    e.step(None)
    e.step(None)
    EnvLogger.flush()
    e.step(None)  # PettingZoo: a warning, nothing else
    assert EnvLogger.mqueue == ["[WARNING]: step() called after all agents are terminated or "
                                "truncated. Should reset() first."]
    assert e.agents == []


@pytest.mark.parametrize("make", [havok_env.env, raw_env])
@pytest.mark.parametrize("action", [True, False, np.bool_(True), "3", 2.5, float("inf"), [1]])
def test_a_non_integer_action_gets_our_error_through_every_env(make, action):
    e = make()
    e.reset(seed=3)
    before = e.game.snapshot()
    with pytest.raises(IllegalActionError, match=r"^action .* is not an integer$"):
        e.step(action)
    assert e.game.snapshot() == before and e.unwrapped.actions == []


@pytest.mark.parametrize("make", [havok_env.env, raw_env])
def test_integral_actions_of_other_types_are_taken(make):
    e = make()
    e.reset(seed=3)
    a = e.game.legal_actions()[-1]
    e.step(np.int64(a))
    assert e.unwrapped.actions == [a]
    e.step(float(e.game.legal_actions()[0]))
    assert len(e.unwrapped.actions) == 2


def test_envs_share_the_bounds_of_their_spaces_but_not_their_generators(monkeypatch):
    import numpy as np
    from gymnasium import spaces

    import havok_env
    first = havok_env.env(num_players=3).unwrapped
    made = []
    monkeypatch.setattr(spaces.Box, "__init__", lambda self, *a, **k: made.append(a))
    second = havok_env.env(num_players=3).unwrapped
    assert made == []  # no Box formats its 643 bounds again: an env builds in well under 2 ms
    a, b = first.observation_space("player_0"), second.observation_space("player_0")
    assert a is not b and a["observation"].low is b["observation"].low
    assert not a["observation"].low.flags.writeable  # shared, so nobody's to change
    assert first.state_space.shape == second.state_space.shape == (3 * 643,)
    a.seed(5)
    b.seed(5)
    xa = [a.sample()["observation"] for _ in range(3)]  # one env's draws leave the other's stream alone
    xb = [b.sample()["observation"] for _ in range(3)]
    assert all(np.array_equal(p, q) for p, q in zip(xa, xb))
