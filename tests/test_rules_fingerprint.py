"""The engine still plays the fingerprinted games byte for byte (tests/rules_fingerprint.py).

The suite checks the games stored whole step by step, so a difference is reported where it first
appears, and the digests of a spread-out sample; ``python tests/rules_fingerprint.py`` checks all 10,000.
"""

import pytest

import rules_fingerprint as fingerprint

DATA = fingerprint.load()
SAMPLE = range(0, fingerprint.GAMES, 67)  # 150 games, every player count and mode


def test_the_fingerprint_is_complete_and_small():
    assert DATA["games"] == fingerprint.GAMES >= 10_000
    assert len(DATA["digests"]) == 2 * fingerprint.DIGEST_BYTES * DATA["games"]
    assert fingerprint.DATA.stat().st_size < 1_000_000
    counts = {n: sum(fingerprint.game_setup(i)["num_players"] == n for i in range(DATA["games"]))
              for n in (2, 3, 4)}
    assert min(counts.values()) >= 3_333


def _first_difference(a, b, where=""):
    if type(a) is not type(b):
        return f"{where}: {a!r} != {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}.{k}: only in {'stored' if k in a else 'played'}"
            d = _first_difference(a[k], b[k], f"{where}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        for j, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{where}[{j}]")
            if d:
                return d
        return None if len(a) == len(b) else f"{where}: {len(a)} != {len(b)} items"
    return None if a == b else f"{where}: {a!r} != {b!r}"


@pytest.mark.parametrize("record", DATA["verbatim"], ids=lambda r: f"game{r['game']}")
def test_verbatim_games_step_by_step(record):
    digest, played = fingerprint.play(record["game"], verbatim=True)
    assert played["setup"] == record["setup"]
    for j, (want, got) in enumerate(zip(record["steps"], played["steps"])):
        diff = _first_difference(want, got, f"step {j}")
        assert diff is None, diff
    assert len(played["steps"]) == len(record["steps"])
    assert played["rewards"] == record["rewards"]
    assert digest.hex() == record["digest"] == fingerprint.stored_digest(DATA, record["game"])


@pytest.mark.parametrize("chunk", range(3))
def test_sample_of_digests(chunk):
    games = list(SAMPLE)[chunk::3]
    bad = [i for i in games if fingerprint.play(i)[0].hex() != fingerprint.stored_digest(DATA, i)]
    assert not bad, f"games {bad} differ from the fingerprint"


def test_a_changed_game_changes_its_digest(monkeypatch):
    """The digest does see the things it claims to: one observation value changed differs."""
    from havok_env.observe import Observer

    real = Observer.observe

    def nudged(self, game, seat):
        obs, mask = real(self, game, seat)
        if game.s.turn == 3 and seat == 1:
            obs = obs.copy()
            obs[-1] += 1
        return obs, mask

    monkeypatch.setattr(Observer, "observe", nudged)
    assert fingerprint.play(0)[0].hex() != fingerprint.stored_digest(DATA, 0)
