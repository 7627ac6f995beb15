"""Hostile or corrupt input gets our own error, never an internal one (property-based).

Hypothesis drives the mutations of ``benchmarks/fuzz_inputs.py`` (through a random generator it
controls, so failures shrink): snapshots of random games at random points, and the card files,
changed in value, type and shape. Each mutant must be refused with ``SnapshotError`` /
``CardDataError``, or give a game that passes every invariant and plays to the end with random
legal actions. The standalone script runs the same check at scale and reports the counts.
"""

import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from havok_env import Game, SnapshotError

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
import fuzz_inputs  # noqa: E402

CARDS = Game(2, seed=0).cards
POOL = fuzz_inputs.positions(random.Random(24), 12)
DOCS = fuzz_inputs.card_docs()
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=100, **SETTINGS)
@given(st.randoms(use_true_random=False))
def test_a_mutated_snapshot_is_refused_or_plays_to_the_end(rng):
    d = fuzz_inputs.mutate_snapshot(rng.choice(POOL), rng, CARDS)
    outcome, detail = fuzz_inputs.try_snapshot(d, rng)
    assert outcome in ("rejected", "accepted"), detail


@settings(max_examples=20, **SETTINGS)
@given(st.randoms(use_true_random=False))
def test_mutated_card_files_are_refused_or_play_to_the_end(rng):
    files = fuzz_inputs.mutate_cards(DOCS, rng, CARDS.names)
    outcome, detail = fuzz_inputs.try_card_files(files, rng, games=2)
    assert outcome in ("rejected", "accepted"), detail


def test_the_oracle_catches_what_it_should():
    """The fuzzer's checks are not vacuous: a raw error, an invalid position and a card set that
    fails in play are each reported as such."""
    rng = random.Random(0)
    assert fuzz_inputs.try_snapshot(POOL[0], rng)[0] == "accepted"
    g = Game.from_snapshot(POOL[0])
    g.s.cards_used[0] = 5  # more cards used than allowed
    with pytest.raises(fuzz_inputs.Invalid, match="cards used"):
        fuzz_inputs.play_out(g, rng)
    g = Game.from_snapshot(POOL[0])
    # an answer left in the turn frame: the core holds it, but a snapshot never has one
    g.s.stack = [{**g.s.stack[0], "a": 0}]
    with pytest.raises(fuzz_inputs.Invalid, match="in play: SnapshotError: snapshot stack"):
        fuzz_inputs.play_out(g, rng)
    assert fuzz_inputs.try_snapshot({"version": 1}, rng)[0] == "rejected"
    files = {name: fuzz_inputs.to_toml(doc).encode() for name, doc in DOCS.items()}
    assert fuzz_inputs.try_card_files(files, rng, games=1)[0] == "accepted"


def test_to_toml_writes_the_card_files_back_exactly():
    for doc in DOCS.values():
        assert fuzz_inputs.tomllib.loads(fuzz_inputs.to_toml(doc)) == doc


# -- corruptions by hand: each ends in one clear line, never a crash of the native core --------

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
