"""One source for each fact: the environment's version, the player counts, the winning score, the
dragons and the decisions each live in one place, and everything else reads them there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

import havok_env
from havok_env.version import ENV_VERSION

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run in a subprocess: make these modules unimportable, as if they were not installed.
BLOCK = "import sys\nfor _m in {mods!r}: sys.modules[_m] = None\n"


def run_blocked(code: str, mods=("pettingzoo", "gymnasium")) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.path.join(ROOT, "tests")}
    return subprocess.run([sys.executable, "-c", BLOCK.format(mods=mods) + code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


# -- the environment's version ---------------------------------------------------------------------

def test_the_env_the_single_agent_view_and_the_model_loader_share_one_version():
    from agents import policy
    from havok_env import wrappers
    assert havok_env.raw_env.metadata["name"] is ENV_VERSION
    assert wrappers.ENV_VERSION is ENV_VERSION and policy.ENV_VERSION is ENV_VERSION
    # the version history in the env's docstring ends with this version
    history = re.findall(r"^\* (v\d+):", sys.modules["havok_env.env"].__doc__, re.M)
    assert history and history[-1] == ENV_VERSION.rsplit("_", 1)[1]


def test_the_version_and_a_saved_model_load_without_pettingzoo_or_gymnasium(tmp_path):
    pytest.importorskip("safetensors")
    from model_files import write_model
    base = write_model(tmp_path / "fire", seed=1)
    p = run_blocked(
        "from havok_env.version import ENV_VERSION\n"
        "from agents import make_agent, play_game\n"
        f"agent = make_agent({base + '.safetensors'!r})\n"
        "assert agent.meta['env_version'] == ENV_VERSION\n"
        "rec = play_game([agent, make_agent('random')], seed=3, dragons=['fire', None])\n"
        "assert rec['result'] is not None\n"
        "assert sys.modules['pettingzoo'] is None and sys.modules['gymnasium'] is None\n"
        "import havok_env\n"
        "try:\n"
        "    havok_env.env()\n"
        "except ImportError as e:\n"
        "    print(e)\n"
        "print(ENV_VERSION)\n")
    assert p.returncode == 0, p.stderr
    said, version = p.stdout.splitlines()
    assert version == ENV_VERSION
    assert re.match(r"havok_env.env needs (gymnasium|pettingzoo), which is not installed \(pip install", said)


# -- the player counts, the hand size, the winning score ------------------------------------------

def test_the_numbers_are_the_rulebooks():
    from havok_env import constants, engine
    assert (constants.MIN_PLAYERS, constants.MAX_PLAYERS, constants.PLAYER_COUNTS) == (2, 4, "2, 3 or 4")
    assert (constants.HAND_SIZE, constants.WIN_SCORE, constants.N_OPTIONS) == (3, 15, 3)
    assert engine.WIN_SCORE is constants.WIN_SCORE and engine.HAND_SIZE is constants.HAND_SIZE
    assert engine.ActionLayout.MAX_PLAYERS == constants.MAX_PLAYERS
    assert engine.ActionLayout.N_OPTIONS == constants.N_OPTIONS


def test_every_entry_point_allows_the_same_player_counts(tmp_path):
    from agents import AgentSpecError
    from agents.policy import check_record
    from havok_env import ConfigError, Game, SnapshotError
    from havok_env.constants import MAX_PLAYERS, MIN_PLAYERS, PLAYER_COUNTS
    from havok_env.wrappers import SingleAgentEnv
    from model_files import record

    sys.path.insert(0, ROOT)
    import evaluate
    snap = Game(2, seed=1).snapshot()
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        assert Game(n, seed=1).num_players == SingleAgentEnv("fire", n).num_players == n
        check_record(record(players=n), "m.json")
    for n in (MIN_PLAYERS - 1, MAX_PLAYERS + 1):
        with pytest.raises(ConfigError, match=f"num_players must be {PLAYER_COUNTS}, not {n}"):
            Game(n, seed=1)
        with pytest.raises(ConfigError, match=f"num_players must be {PLAYER_COUNTS}, not {n}"):
            SingleAgentEnv("fire", n)
        with pytest.raises(SnapshotError, match=f"bad player count {n}"):
            Game.from_snapshot({**snap, "num_players": n})
        with pytest.raises(AgentSpecError, match=f"players must be {PLAYER_COUNTS}, not {n}"):
            check_record(record(players=n), "m.json")
        with pytest.raises(evaluate.EvalError, match=f"--players must be {PLAYER_COUNTS}, not {n}"):
            evaluate.run_tournament(["random"] * 5, num_players=n, ledger=None)
        with pytest.raises(evaluate.LedgerLineError,
                           match=f"from {MIN_PLAYERS} to {MAX_PLAYERS}, not {n}"):
            evaluate.check_ledger_entry({**dict.fromkeys(evaluate._REQUIRED), "version": 1, "seed": 1,
                                         "options": {"num_players": n}})


def test_train_py_allows_the_same_player_counts():
    pytest.importorskip("sb3_contrib")
    from havok_env.constants import MAX_PLAYERS, PLAYER_COUNTS
    sys.path.insert(0, ROOT)
    import train
    args = train.build_parser().parse_args(["--players", str(MAX_PLAYERS + 1), "--logdir", "",
                                            "--no-progress"])
    with pytest.raises(train.UsageError, match=f"--players must be {PLAYER_COUNTS}, not"):
        train.validate(args)
    assert PLAYER_COUNTS in train.build_parser().format_help().replace("\n", " ").replace("  ", " ")


def test_a_card_set_must_seat_and_deal_the_largest_table(tmp_path):
    from havok_env import CardDataError, load_cards
    from havok_env.cards import DATA_DIR
    from havok_env.constants import HAND_SIZE, MAX_PLAYERS
    data = tmp_path / "cards"
    shutil.copytree(DATA_DIR, data)
    text = (data / "dragons.toml").read_text()
    (data / "dragons.toml").write_text(text[:text.rindex("[[dragon]]")])  # one dragon fewer
    with pytest.raises(CardDataError, match=f"{MAX_PLAYERS} dragons are needed for {MAX_PLAYERS} "
                                            f"players, found {MAX_PLAYERS - 1}"):
        load_cards(data)
    shutil.copy(DATA_DIR / "dragons.toml", data / "dragons.toml")
    text = (data / "havok.toml").read_text()
    start = re.search(r'^starting_treasure = "([^"]+)"', text, re.M).group(1)
    at = text.index(f'name = "{start}"')
    copies = re.compile(r"^copies = \d+", re.M)
    (data / "havok.toml").write_text(text[:at] + copies.sub(f"copies = {MAX_PLAYERS - 1}",
                                                            text[at:], count=1))
    with pytest.raises(CardDataError, match=f"needs at least {MAX_PLAYERS} copies"):
        load_cards(data)
    assert MAX_PLAYERS * HAND_SIZE == 12  # the Hijinks deck's least size, in its message


def test_observations_and_shaping_scale_by_the_winning_score_and_hand_size():
    import numpy as np

    from havok_env import Game
    from havok_env.constants import HAND_SIZE, WIN_SCORE
    from havok_env.observe import Observer
    from havok_env.wrappers import SingleAgentEnv
    game = Game(3, seed=4)
    ob = Observer(game.cards)
    base = ob.offset["seats"]
    while not game.is_over:
        for seat in range(3):
            obs, _ = ob.observe(game, seat)
            for r in range(3):
                p = (seat + r) % 3
                at = base + r * ob.seat_size
                assert obs[at + ob.seat_offset["score"]] == np.float32(game.score(p) / WIN_SCORE)
                assert obs[at + ob.seat_offset["hand_size"]] == np.float32(len(game.s.hands[p]) / HAND_SIZE)
        game.apply(game.legal_actions()[-1])
    env = SingleAgentEnv("fire", 2, shaping=1.0)
    env.reset(seed=2)
    lead = 0.0
    for _ in range(200):
        _, reward, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[-1]))
        s = env.game.scores() if env.game is not None else info["result"]["scores"]
        me = env.seat
        new = (s[me] - s[1 - me]) / WIN_SCORE
        assert reward == (new - lead) + (info["reward"] if done else 0.0)
        lead = new
        if done:
            break


def test_the_env_docs_give_the_numbers():
    from havok_env.constants import HAND_SIZE, PLAYER_COUNTS, WIN_SCORE
    doc = sys.modules["havok_env.env"].__doc__
    assert re.search(rf"^\| Agents\s+\| {PLAYER_COUNTS}\s+\|$", doc, re.M)
    assert f"hand size / {HAND_SIZE}, hoard value / {WIN_SCORE}," in doc
    assert f"racing to a hoard worth {WIN_SCORE}." in doc
