"""One source for each fact: the environment's version, the player counts, the winning score, the
dragons and the decisions each live in one place, and everything else reads them there."""

from __future__ import annotations

import os
import re
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
