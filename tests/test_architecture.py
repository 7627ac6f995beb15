"""The project's structure holds: one game loop, one agent-seed formula, imports one way."""

from __future__ import annotations

import ast
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = ("agents", "training", "evaluation", "benchmarks", "arena", "havok_env", "examples",
        "train.py", "train_rllib.py", "evaluate.py")


def sources():
    for top in CODE:
        path = os.path.join(ROOT, top)
        if top.endswith(".py"):
            yield top, path
            continue
        for folder, _, files in os.walk(path):
            for f in sorted(files):
                if f.endswith(".py"):
                    full = os.path.join(folder, f)
                    yield os.path.relpath(full, ROOT), full


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def imports(path):
    out = set()
    for node in ast.walk(ast.parse(read(path))):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


# Loops that ask agents to act while a game is not over, other than agents.runner.play_game, and why
OTHER_LOOPS = {
    # the fingerprint's own reference loop (its seeds are its own), so that it checks play_game
    # rather than trusting it
    "benchmarks/fingerprint.py",
    # the one loop of the games that stop for somebody else's decision: the single-agent env's
    # learner, RLlib's seats, the arena's person (the bots play between their decisions)
    "havok_env/play.py",
}


def test_play_game_and_play_known_are_the_loops_of_agents():
    loops = {name for name, path in sources()
             if re.search(r"while not [\w.]+\.is_over", read(path)) and ".act(" in read(path)}
    assert loops == {"agents/runner.py"} | OTHER_LOOPS


def test_the_seed_formulas_live_in_the_runner():
    # the agent seed and the arena study's hashed game seeds
    for mark in ("1_000_003", "havok-arena"):
        copies = {name for name, path in sources() if mark in read(path)}
        assert copies == {"agents/runner.py"}, mark


def test_imports_run_one_way():
    # data -> engine -> env (havok_env) -> agents -> training -> scripts; arena on the side
    below = {"havok_env": {"agents", "training", "arena", "train", "evaluate"},
             "agents": {"training", "arena", "train", "evaluate"},
             "training": {"arena", "train", "evaluate"},
             "evaluation": {"arena", "train", "evaluate"},
             "benchmarks": {"train"}}
    wrong = []
    for name, path in sources():
        top = name.split("/")[0]
        bad = imports(path) & below.get(top, set())
        wrong += [f"{name} imports {m}" for m in sorted(bad)]
    assert wrong == []


SCRIPTS = {"train", "train_rllib", "evaluate"}


def test_no_script_is_imported_and_train_py_is_only_its_command_line():
    # a script is a thin command line: what it runs lives in a library module (a test may call
    # its main); train.py's run is training/run.py, its settings' checks training/settings.py
    wrong = [f"{name} imports {m}" for name, path in sources() for m in sorted(imports(path) & SCRIPTS)]
    assert wrong == []
    tree = ast.parse(read(os.path.join(ROOT, "train.py")))
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert defined == ["_Parser", "build_parser", "main"]


def relative_imports(path):
    """The havok_env modules a module of havok_env imports (``from . import x``, ``from .x import``)."""
    out = set()
    for node in ast.walk(ast.parse(read(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out.update([node.module] if node.module else [a.name for a in node.names])
    return out


# havok_env's engine layer, bottom first (docs/architecture.md, "The layers"): each imports only
# modules before it; the snapshot reader is handed the way to make games by Game.from_snapshot.
# files.py (writing a file whole) imports none: every layer above uses it
ENGINE_LAYER = ("files", "constants", "decisions", "version", "cards", "state", "snapshot", "engine")


def test_the_engine_layer_imports_one_way():
    wrong = []
    for i, module in enumerate(ENGINE_LAYER):
        above = set(ENGINE_LAYER[i:]) | {"env", "observe", "view", "vector", "wrappers", "play", "render"}
        bad = relative_imports(os.path.join(ROOT, "havok_env", module + ".py")) & above
        wrong += [f"havok_env/{module}.py imports {m}" for m in sorted(bad)]
    assert wrong == []


def test_a_game_is_made_only_by_its_class():
    # Game(...) or Game._from_core: no module builds one field by field
    makers = {name for name, path in sources()
              if re.search(r"object\.__new__\(Game\)|\._set_core\(|\._layout\(\)", read(path))}
    assert makers <= {"havok_env/engine.py"}


def test_bots_decode_actions_through_the_seat_view():
    # an action's offset inside its block (engine.ActionLayout) is the view's business
    # (SeatView.card_of, seat_of, treasure_of, option_of...): no bot counts from a block's start
    offsets = re.compile(r"\.(PLAY|DISCARD|SEAT|TREASURE|OPTION)\b")
    found = [f"{name}: {m.group(0)}" for name, path in sources()
             if name.startswith(("agents/", "arena/")) for m in offsets.finditer(read(path))]
    assert found == []


def test_the_lint_passes():
    # the rules of pyproject.toml's [tool.ruff], which .ci/run checks before the tests
    import shutil
    import subprocess
    import sys

    import pytest

    ruff = shutil.which("ruff") or shutil.which("ruff", path=os.path.dirname(sys.executable))
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    p = subprocess.run([ruff, "check", "--no-cache", "--quiet", ROOT], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


ARCHITECTURE = os.path.join(ROOT, "docs", "architecture.md")
# `path` tokens of the page: anything with a slash or a file suffix (NAME is a placeholder)
PATH_TOKEN = re.compile(r"`([\w./-]+(?:/|\.(?:py|toml|md|json|gz)))`")


def test_the_architecture_page_names_files_that_exist():
    page = read(ARCHITECTURE)
    paths = {p for p in PATH_TOKEN.findall(page) if "NAME" not in p}
    assert len(paths) > 30  # the page is read, not an empty match
    assert sorted(p for p in paths if not os.path.exists(os.path.join(ROOT, p))) == []


def test_the_architecture_page_names_what_is_in_its_files():
    # "`NAME` in `path`": the name is defined or used in that file
    page = read(ARCHITECTURE)
    pairs = re.findall(r"`([\w.]+)`(?: and the checks)? in `([\w./]+\.(?:py|cpp|hpp))`", page)
    assert len(pairs) >= 8
    missing = [f"{name} in {path}" for name, path in pairs
               if not re.search(rf"\b{re.escape(name.split('.')[-1])}\b", read(os.path.join(ROOT, path)))]
    assert missing == []


def test_the_readme_links_the_architecture_page():
    assert "(docs/architecture.md)" in read(os.path.join(ROOT, "README.md"))
