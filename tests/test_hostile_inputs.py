"""Hostile or corrupt input gets our own error, never an internal one (property-based).

Hypothesis drives the mutations of ``benchmarks/fuzz_inputs.py`` (through a random generator it
controls, so failures shrink): snapshots of random games at random points, and the card files,
changed in value, type and shape. Each mutant must be refused with ``SnapshotError`` /
``CardDataError``, or give a game that passes every invariant and plays to the end with random
legal actions. The standalone script runs the same check at scale and reports the counts.
"""

import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from havok_env import Game

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
    g.s.stack.append({"f": "nonsense"})  # no such frame
    with pytest.raises(fuzz_inputs.Invalid, match="in play: SnapshotError: snapshot stack"):
        fuzz_inputs.play_out(g, rng)
    assert fuzz_inputs.try_snapshot({"version": 1}, rng)[0] == "rejected"
    files = {name: fuzz_inputs.to_toml(doc).encode() for name, doc in DOCS.items()}
    assert fuzz_inputs.try_card_files(files, rng, games=1)[0] == "accepted"


def test_to_toml_writes_the_card_files_back_exactly():
    for doc in DOCS.values():
        assert fuzz_inputs.tomllib.loads(fuzz_inputs.to_toml(doc)) == doc
