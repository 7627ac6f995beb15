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


@pytest.mark.parametrize("content, quick, says", [
    (None, False, "has no full fingerprint: check --quick or write one"),
    ('{"full": {}}', True, "has no quick fingerprint: check without --quick or write one"),
    ("[1, 2]", True, "is not a fingerprint file"),
    ('{"quick": 3}', True, "is not a fingerprint file"),
    ("{", True, "is not a fingerprint file"),
])
def test_check_refuses_a_file_without_that_fingerprint_before_playing(tmp_path, monkeypatch, capsys,
                                                                      content, quick, says):
    monkeypatch.setattr(fingerprint, "fingerprint", lambda quick: pytest.fail("played before the check"))
    path = os.path.join(HERE, "data", "fingerprint.json")  # the stored file holds only the quick one
    if content is not None:
        path = tmp_path / "fp.json"
        path.write_text(content)
    assert fingerprint.main(["--check", str(path)] + ["--quick"] * quick) == 2
    err = capsys.readouterr().err
    assert err.startswith("fingerprint.py: ") and says in err and "Traceback" not in err
    assert fingerprint.main(["--check", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
