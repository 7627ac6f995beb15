"""One source for each fact: the environment's version, the player counts, the winning score, the
dragons and the decisions each live in one place, and everything else reads them there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

import evaluation.ledger
import evaluation.tournament
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
    # the native core plays by the same numbers
    from havok_env import _core
    assert (_core.MAX_PLAYERS, _core.HAND_SIZE, _core.WIN_SCORE, _core.N_OPTIONS) == (
        constants.MAX_PLAYERS, constants.HAND_SIZE, constants.WIN_SCORE, constants.N_OPTIONS)


def test_every_entry_point_allows_the_same_player_counts(tmp_path):
    from agents import AgentSpecError
    from agents.policy import check_record
    from havok_env import ConfigError, Game, SnapshotError
    from havok_env.constants import MAX_PLAYERS, MIN_PLAYERS, PLAYER_COUNTS
    from havok_env.wrappers import SingleAgentEnv
    from model_files import record

    sys.path.insert(0, ROOT)
    snap = Game(2, seed=1).snapshot()
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        assert Game(n, seed=1).num_players == SingleAgentEnv("fire", n).num_players == n
        check_record(record(players=n), "m.json")
    for n in (MIN_PLAYERS - 1, MAX_PLAYERS + 1):
        with pytest.raises(ConfigError, match=f"num_players must be {PLAYER_COUNTS}, not {n}"):
            Game(n, seed=1)
        with pytest.raises(ConfigError, match=f"num_players must be {PLAYER_COUNTS}, not {n}"):
            SingleAgentEnv("fire", n)
        with pytest.raises(SnapshotError, match=f"num_players: must be {PLAYER_COUNTS}, not {n}"):
            Game.from_snapshot({**snap, "num_players": n})
        with pytest.raises(AgentSpecError, match=f"players must be {PLAYER_COUNTS}, not {n}"):
            check_record(record(players=n), "m.json")
        with pytest.raises(evaluation.EvalError, match=f"--players must be {PLAYER_COUNTS}, not {n}"):
            evaluation.tournament.run_tournament(["random"] * 5, num_players=n, ledger=None)
        with pytest.raises(evaluation.ledger.LedgerLineError,
                           match=f"from {MIN_PLAYERS} to {MAX_PLAYERS}, not {n}"):
            evaluation.ledger.check_ledger_entry({**dict.fromkeys(evaluation.ledger._REQUIRED), "version": 1, "seed": 1,
                                         "options": {"num_players": n}})


def test_train_py_allows_the_same_player_counts():
    pytest.importorskip("sb3_contrib")
    from havok_env.constants import MAX_PLAYERS, PLAYER_COUNTS
    sys.path.insert(0, ROOT)
    import train
    from training.settings import UsageError, validate
    args = train.build_parser().parse_args(["--players", str(MAX_PLAYERS + 1), "--logdir", "",
                                            "--no-progress"])
    with pytest.raises(UsageError, match=f"--players must be {PLAYER_COUNTS}, not"):
        validate(args)
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


# -- the dragons: dragons.toml is their one list ------------------------------------------------

FIFTH = '''
[[dragon]]
name = "Zephyr"
affinity = "storm"
ready_type = "draw"
ready_text = "A draw card of yours resolves."

[dragon.play]
name = "Gust"
type = "draw"
text = "Draw 2 Hijinks cards."
effect = [{ op = "draw", n = 2 }]

[dragon.crash]
name = "Downdraft"
type = "steal"
text = "When another dragon is about to add a treasure of printed value 1 or less, flipped from the \
Havok deck, to its hoard, add it to yours instead."
trigger = { on = "treasure", max_printed = 1 }
effect = [{ op = "redirect_treasure" }]
'''


@pytest.fixture(scope="module")
def five_dragons(tmp_path_factory):
    """A copy of the card data with a fifth dragon, Zephyr (storm), and nothing else changed."""
    from havok_env.cards import DATA_DIR
    data = tmp_path_factory.mktemp("cards") / "data"
    shutil.copytree(DATA_DIR, data)
    with open(data / "dragons.toml", "a") as f:
        f.write(FIFTH)
    return data


def scripts_env(cards) -> dict:
    return {**os.environ, "HAVOK_CARDS": str(cards), "PYTHONPATH": ROOT}


def test_a_fifth_dragon_is_one_more_table_and_plays(five_dragons):
    from agents import make_agent, play_game
    from havok_env import Game, load_cards
    from havok_env.cards import default_cards
    from havok_env.constants import MAX_PLAYERS
    from havok_env.engine import ActionLayout
    from havok_env.observe import Observer
    cs, shipped = load_cards(five_dragons), default_cards()
    assert [d.name for d in cs.dragons] == [d.name for d in shipped.dragons] + ["Zephyr"]
    assert cs.affinities == shipped.affinities + ("storm",)
    # the observation grows by one dragon one-hot slot per seat and the dragon's two innate
    # abilities; the shipped layout stays as it is, and the actions do not depend on the dragons
    assert (Observer(shipped).size, ActionLayout(shipped).size) == (643, 76)
    assert Observer(cs).size == 643 + MAX_PLAYERS + 2 and ActionLayout(cs).size == 76
    for n in (2, 3, 4):
        for g in range(4):
            table = [make_agent(("heuristic", "random", "search:1")[(g + i) % 3]) for i in range(n)]
            rec = play_game(table, seed=40 + g, dragons=["storm"] + [None] * (n - 1), cards=cs)
            assert rec["result"] is not None and rec["dragons"][0] == "Zephyr"
            assert Game.replay(rec, cards=cs).result == rec["result"]


def test_a_fifth_dragon_plays_in_tournaments(five_dragons, tmp_path):
    pytest.importorskip("openskill")
    out = tmp_path / "rep.json"
    p = subprocess.run([sys.executable, "evaluate.py", "--agents", "heuristic", "random", "--games", "20",
                        "--seed", "1", "--workers", "2", "--no-progress", "--json", str(out), "--csv",
                        str(tmp_path / "rep.csv")], cwd=ROOT, env=scripts_env(five_dragons),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    import json
    rep = json.loads(out.read_text())
    names = ["Ruby", "Obsidian", "Amber", "Pearl", "Zephyr"]
    for a in rep["agents"]:
        assert list(a["by_dragon"]) == names  # every dragon in every seat once per 5 deals
    assert "Zephyr" in p.stdout.split("Win rate by dragon")[1]
    assert "zephyr_games" in (tmp_path / "rep.csv").read_text().splitlines()[0]
    p = subprocess.run([sys.executable, "evaluate.py", "--agents", "heuristic", "random", "--games", "4",
                        "--seed", "1", "--workers", "1", "--no-progress", "--dragons", "heuristic=storm"],
                       cwd=ROOT, env=scripts_env(five_dragons), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "heuristic plays Zephyr (--dragons)" in p.stdout


def test_a_fifth_dragon_trains_and_its_model_plays_it(five_dragons, tmp_path):
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("openskill")
    import json
    base = str(tmp_path / "storm")
    p = subprocess.run([sys.executable, "train.py", "--dragon", "storm", "--opponents", "random",
                        "--timesteps", "128", "--n-envs", "1", "--n-steps", "64", "--batch-size", "64",
                        "--n-epochs", "1", "--net-arch", "8", "--eval-every", "0", "--final-eval-games", "6",
                        "--bc-games", "4", "--bc-epochs", "1", "--distill-games", "0", "--value-games", "0",
                        "--out", base,
                        "--logdir", "", "--quiet"],
                       cwd=ROOT, env=scripts_env(five_dragons), capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    rec = json.loads(open(base + ".json").read())
    assert (rec["dragon"], rec["affinity"], rec["observation_size"]) == ("Zephyr", "storm", 649)
    assert rec["final_evaluation"][0]["games"] == 6
    p = subprocess.run([sys.executable, "evaluate.py", "--agents", base + ".safetensors", "heuristic",
                        "--games", "4", "--seed", "2", "--workers", "2", "--no-progress"],
                       cwd=ROOT, env=scripts_env(five_dragons), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "storm.safetensors plays Zephyr (as trained)" in p.stdout
    # the shipped card set refuses the model: it was trained for a dragon that set has not
    p = subprocess.run([sys.executable, "evaluate.py", "--agents", base + ".safetensors", "heuristic",
                        "--games", "2", "--no-progress"], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 2 and "no dragon of the game" in p.stderr


@pytest.mark.parametrize("script", ["train.py", "evaluate.py"])
def test_a_bad_card_folder_is_one_line(script, tmp_path):
    p = subprocess.run([sys.executable, script, "--agents", "random", "random"] if script == "evaluate.py"
                       else [sys.executable, script, "--timesteps", "1"],
                       cwd=ROOT, env=scripts_env(tmp_path / "nowhere"), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and f"HAVOK_CARDS={tmp_path / 'nowhere'}: " in p.stderr
    assert "dragons.toml: card file not found" in p.stderr


# -- decisions: one table of purposes, their kinds, questions and labels -------------------------

def test_the_purposes_keep_their_order_for_the_observation():
    from havok_env import engine, observe
    from havok_env.decisions import DECISION_KINDS, PURPOSES
    # the observation's one-hot order: a change here is a new environment version
    assert DECISION_KINDS == ("main", "crash", "target_seat", "target_treasure", "choose_card", "option")
    assert PURPOSES == (
        "main", "crash", "steal_from", "steal_pick", "break_from", "break_pick", "trade_from",
        "trade_take", "trade_give", "salvage_pick", "swap_pick", "redirect_to", "flip_or_not",
        "resolve_which", "bottom", "recall_pick", "pass_pick", "raid_pick", "tribute_pick")
    assert engine.PURPOSES is PURPOSES and engine.DECISION_KINDS is DECISION_KINDS
    assert observe.PURPOSES is PURPOSES and observe.DECISION_KINDS is DECISION_KINDS


def _asked_purposes() -> set[str]:
    """The purposes the native core's sources ask for (its ``P_...`` names, lower-cased)."""
    asked = set()
    for mod in ("engine.cpp", "effects.cpp"):
        src = open(os.path.join(ROOT, "src", "havok_core", mod)).read()
        src = src.split("const int PURPOSE_KINDS", 1)[-1]  # past the table of names
        asked.update(p.lower() for p in re.findall(r"\bP_([A-Z_]+)\b", src))
    return asked


def test_every_purpose_the_engine_asks_has_a_kind_a_question_and_labels():
    from havok_env import _core
    from havok_env.decisions import DECISION_KINDS, DECISIONS, KIND, PURPOSES
    asked = _asked_purposes()
    assert {"main", "crash", "trade_give", "tribute_pick"} <= asked
    assert asked == set(DECISIONS)  # and nothing listed that the engine never asks
    # the core asks with the table's order and kinds
    assert tuple(_core.PURPOSES) == PURPOSES and tuple(_core.DECISION_KINDS) == DECISION_KINDS
    assert dict(_core.PURPOSE_KINDS) == KIND
    for p in DECISIONS.values():
        assert p.kind in DECISION_KINDS and p.question.endswith(("?", ".")), p
        assert p.end and p.card.format("X") != p.card, p
        assert p.treasure is None or p.treasure.format("X") != p.treasure, p
        assert p.own_hoard == (p.treasure is not None and "your" in p.treasure), p


def test_the_rules_document_every_purpose_with_its_kind():
    from havok_env.decisions import DECISIONS
    rules = open(os.path.join(ROOT, "docs", "rules.md")).read()
    table = rules.split("### Decisions", 1)[1].split("\n\n---", 1)[0]
    documented = {}
    for kind, purposes in re.findall(r"^\| `(\w+)` \| ([^|]+) \|", table, re.M):
        for p in re.findall(r"`(\w+)`", purposes):
            documented[p] = kind
    assert documented == {p.name: p.kind for p in DECISIONS.values()}


def test_the_arena_takes_the_player_counts_questions_and_end_reasons_from_their_homes():
    arena = pytest.importorskip("arena")
    from arena import payload
    from havok_env import Game
    from havok_env.constants import MAX_PLAYERS, PLAYER_COUNTS, WIN_SCORE
    from havok_env.decisions import DECISIONS
    from havok_env.engine import END_REASONS
    from havok_env.view import SeatView
    with pytest.raises(arena.ArenaError, match=f"--players must be {PLAYER_COUNTS}, not {MAX_PLAYERS + 1}"):
        arena.make_study(None, ["heuristic"], MAX_PLAYERS + 1, None, None, None)
    assert END_REASONS["hoard_15"] == f"a hoard reached {WIN_SCORE}"
    g = Game(2, seed=3)
    seen = set()
    while not g.is_over:
        p = g.pending
        q, _ = payload.question(SeatView(g, p["player"]), p["purpose"], p["context"])
        want = DECISIONS[p["purpose"]].question
        assert q.endswith(want if p["purpose"] == "crash" else want[1:]), (q, want)
        seen.add(p["purpose"])
        g.apply(g.legal_actions()[-1])
    assert {"main", "crash"} <= seen
    assert payload.result(SeatView(g, 0))["reason"] == END_REASONS[g.result["reason"]]


def test_the_human_player_asks_the_tables_questions_and_names_the_end_in_its_words(capsys):
    import io

    from agents.human import HumanAgent
    from havok_env import Game
    from havok_env.constants import WIN_SCORE
    from havok_env.decisions import DECISIONS
    from havok_env.engine import END_REASONS
    from havok_env.view import SeatView
    human = HumanAgent(input=io.StringIO(), output=io.StringIO(), width=200)
    seen = set()
    for seed in range(3):
        g = Game(3, seed=seed)
        human.reset(0, 3)
        while not g.is_over:
            p = g.pending
            human.seat = p["player"]
            want = DECISIONS[p["purpose"]].question  # said of its ability, if any: "Your X: choose..."
            assert want[1:] in human._question(SeatView(g, p["player"]))
            seen.add(p["purpose"])
            g.apply(g.legal_actions()[len(g.legal_actions()) // 2])
        human.game_over({"result": g.result}, None)
    assert {"main", "crash"} <= seen
    out = human.output.getvalue()
    assert f"Game over ({END_REASONS[g.result['reason']]})" in out
    from havok_env.render import describe_table
    assert f"/{WIN_SCORE}: " in describe_table(SeatView(g, 0))


def test_no_module_keeps_its_own_copy_of_the_winning_score():
    """The number 15 in arithmetic, a comparison or an assignment, or "/15", "worth 15" and
    "reached 15" in a text people read, outside constants.py and docstrings."""
    import ast
    from pathlib import Path
    root = Path(ROOT)
    files = [p for d in ("havok_env", "agents", "arena", "benchmarks") for p in (root / d).rglob("*.py")]
    files += [root / "train.py", root / "evaluate.py"]
    copies = []
    words = re.compile(r"(/ ?|worth |reached? |to )15\b")
    for f in files:
        if f.name == "constants.py":
            continue
        tree = ast.parse(f.read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            operands = {ast.BinOp: lambda n: [n.left, n.right], ast.Compare: lambda n: [n.left, *n.comparators],
                        ast.Assign: lambda n: [n.value], ast.AugAssign: lambda n: [n.value]}.get(type(node))
            for x in operands(node) if operands else ():
                if isinstance(x, ast.Constant) and type(x.value) in (int, float) and x.value == 15:
                    copies.append(f"{f.relative_to(root)}:{x.lineno}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                    and words.search(node.value):
                copies.append(f"{f.relative_to(root)}:{node.lineno}")
    assert copies == []
