"""Seeded behaviour stays put: bot games, search estimates, tournament, benchmark and training
figures match the stored fingerprint (benchmarks/fingerprint.py).

A change that is meant to alter behaviour (a rules change, a stronger bot) rewrites the stored
fingerprint with ``python benchmarks/fingerprint.py --write tests/data/fingerprint.json --quick``
(and without ``--quick``) and says so in its commit; any other change must leave it as it is."""

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "benchmarks"))

pytest.importorskip("openskill")
pytest.importorskip("torch")

import fingerprint  # noqa: E402


def test_behaviour_matches_the_stored_fingerprint():
    with open(os.path.join(HERE, "data", "fingerprint.json")) as f:
        want = json.load(f)["quick"]
    got = fingerprint.fingerprint(quick=True)
    assert sorted(k for k in want if want[k] != got.get(k)) == []
    assert set(got) == set(want)
