"""Bad input never crashes the process: a short run of benchmarks/fuzz_core.py, and a few
corruptions by hand that each end in the project's own one-line error."""

import json
import sys
from pathlib import Path

import pytest

from havok_env import Game, SnapshotError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import fuzz_core  # noqa: E402


def test_mutated_snapshots_and_actions_never_crash():
    counts = fuzz_core.fuzz(300, seed=1)
    assert counts["refused"] > 50 and counts["restored"] > 20


def _snap():
    g = Game(3, seed=4)
    for _ in range(5):
        g.apply(g.legal_actions()[-1])
    return json.loads(json.dumps(g.snapshot()))


@pytest.mark.parametrize("corrupt", [
    lambda d: d["stack"].append({"f": "window", "trig": {"on": "use", "frame": 99}}),
    lambda d: d["stack"].insert(1, {"f": "use", "user": 7, "you": 0, "ability": 40, "card": 40,
                                    "use": "play", "crashed": None, "step": "effect", "t": {},
                                    "o": {}, "pc": 0}),
    lambda d: d["stack"].__setitem__(0, {"f": "havok", "card": 3, "you": 0, "flipper": 0, "step": 9}),
    lambda d: d["stack"].clear(),
    lambda d: d["players"][0].__setitem__("hand", ["Bronze Talon"] + d["players"][0]["hand"]),
    lambda d: d.__setitem__("current_player", 5),
    lambda d: d.__setitem__("rng", -1),
    lambda d: d["players"][1].__setitem__("card_limit", 1 << 40),
])
def test_a_corrupt_snapshot_is_refused_with_one_clear_line(corrupt):
    d = _snap()
    corrupt(d)
    with pytest.raises(SnapshotError) as e:
        Game.from_snapshot(d)
    assert "\n" not in str(e.value) and str(e.value)
