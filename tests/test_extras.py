"""With only the core install, the scripts name the missing extra in one line before any work."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(missing, code, tmp_path):
    """Run ``code`` in a fresh interpreter where the modules ``missing`` cannot be imported."""
    prelude = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in missing)
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": ROOT})


# any game played or model written would fail these scripts loudly
NO_GAMES = ("import evaluate, evaluation.tournament\ndef _no(*a, **k): raise SystemExit('a game was played')\n"
            "evaluation.tournament.play_game = _no\n")


@pytest.mark.parametrize("missing, argv, words", [
    (["openskill"], ["--agents", "random", "heuristic"], "openskill (the report's ratings) is not installed"),
    (["matplotlib"], ["--agents", "random", "heuristic", "--plot", "h.png"], "matplotlib (--plot)"),
    (["safetensors"], ["--agents", "pretrained:fire", "random"], "safetensors (loading models)"),
    (["openskill", "matplotlib"], ["--agents", "random", "random", "--plot", "h.png"],
     "openskill (the report's ratings), matplotlib (--plot) are not installed"),
])
def test_evaluate_names_the_eval_extra_before_playing(tmp_path, missing, argv, words):
    p = run(missing, NO_GAMES + f"sys.exit(evaluate.main({argv + ['--games', '4', '--workers', '1']!r}))",
            tmp_path)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert lines[0].startswith("evaluate.py: error:") and words in lines[0] and "pip install -e '.[eval]'" in lines[0]


def test_evaluate_needs_matplotlib_only_for_plots(tmp_path):
    p = run(["matplotlib"], "import evaluate\nsys.exit(evaluate.main(['--agents', 'random', 'random', "
                            "'--games', '2', '--workers', '1', '--no-progress', '--seed', '1']))", tmp_path)
    assert p.returncode == 0 and "Seat win rates" in p.stdout, p.stderr


@pytest.mark.parametrize("missing, extra_args, words", [
    (["torch"], [], "torch (training) is not installed"),
    (["sb3_contrib", "stable_baselines3"], [], "stable-baselines3 (training), sb3-contrib (training)"),
    (["safetensors"], [], "safetensors (saving models)"),
    (["tensorboard"], [], "tensorboard (--logdir; --logdir '' logs nothing)"),
    (["rich"], ["--logdir", ""], "rich (the progress bar)"),
])
def test_train_names_the_train_extra_before_any_work(tmp_path, missing, extra_args, words):
    code = ("import train\n"
            "def _no(*a, **k): raise SystemExit('work was done')\n"
            "import agents; agents.make_agent = _no\n"  # validating the opponents is the first piece of work
            f"sys.exit(train.main({['--out', 'out/fire', '--timesteps', '64'] + extra_args!r}))")
    p = run(missing, code, tmp_path)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert lines[0].startswith("train.py: error:") and words in lines[0] and "pip install -e '.[train]'" in lines[0]
    assert not os.path.exists(tmp_path / "out")


def test_loading_a_model_without_safetensors_names_it(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from model_files import write_model
    base = write_model(tmp_path / "m")
    p = run(["safetensors"], f"from agents import make_agent\nmake_agent({base + '.json'!r})", tmp_path)
    assert "AgentSpecError: loading a model needs safetensors: pip install -e '.[eval]'" in p.stderr
