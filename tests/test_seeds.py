"""Seeds: every place a seed enters takes exactly the seeds a snapshot holds (-2**63 to
2**64 - 1, engine.check_seed) and refuses the rest with ConfigError; a game of any seed it takes
saves, pickles and restores."""

import pickle

import pytest

import havok_env
from havok_env import ConfigError, Game
from havok_env.engine import SEED_MAX, SEED_MIN
from havok_env.vector import LearnerGames, SingleAgentVectorEnv, VectorGames
from havok_env.wrappers import SingleAgentEnv

OUTSIDE = [SEED_MAX + 1, SEED_MIN - 1, 2**64, 2**100, -(2**100)]
BAD_TYPES = ["7", 1.0, True, [1], b"7"]  # (stable ids: pytest-xdist compares them)


def entries():
    """(name, a function of a seed that enters it there)."""
    raw, wrapped, single = havok_env.raw_env(), havok_env.env(), SingleAgentEnv()
    vg, lg, sv = VectorGames(2, seed=0), LearnerGames(2, seed=0), SingleAgentVectorEnv(2, seed=0)
    return [
        ("Game", lambda s: Game(3, seed=s)),
        ("Game, the general path", lambda s: Game(3, dragons=["Ruby", None, None], seed=s)),
        ("Game.replay", lambda s: Game.replay({"seed": s, "options": {"num_players": 2, "dragons": None},
                                               "actions": []})),
        ("raw_env.reset", lambda s: raw.reset(seed=s)),
        ("env().reset", lambda s: wrapped.reset(seed=s)),
        ("SingleAgentEnv.reset", lambda s: single.reset(seed=s)),
        ("VectorGames", lambda s: VectorGames(2, seed=s)),
        ("VectorGames.reset", lambda s: vg.reset(seed=s)),
        ("LearnerGames", lambda s: LearnerGames(2, seed=s)),
        ("LearnerGames.reset", lambda s: lg.reset(seed=s)),
        ("SingleAgentVectorEnv.reset", lambda s: sv.reset(seed=s)),
    ]


@pytest.mark.parametrize("seed", [SEED_MIN, -1, 0, 2**63, SEED_MAX])
def test_every_entry_takes_the_seeds_a_snapshot_holds(seed):
    for _, enter in entries():
        enter(seed)  # no error
    g = Game(2, seed=seed)
    d = g.snapshot()
    assert d["seed"] == seed
    for h in (Game.from_snapshot(d), pickle.loads(pickle.dumps(g))):
        assert h.seed == seed and h.snapshot() == d


@pytest.mark.parametrize("seed", OUTSIDE + BAD_TYPES, ids=repr)
def test_every_entry_refuses_any_other_seed_with_its_error(seed):
    for name, enter in entries():
        refused = r"^seed (must be an integer|-?\d+ is out of range)|^record\['seed'\]"
        with pytest.raises(ConfigError, match=refused) as e:
            enter(seed)
        assert "\n" not in str(e.value), name
        # (not wrapped round to a seed in range: 2**64 once played seed 0's game unsaveably)


def test_a_snapshot_refuses_a_seed_outside_the_range():
    d = Game(2, seed=5).snapshot()
    for seed in (SEED_MAX + 1, SEED_MIN - 1):
        with pytest.raises(havok_env.SnapshotError, match=r"^snapshot seed: -?\d+ is out of range "
                                                          r"\(-9223372036854775808 to 18446744073709551615\)"):
            Game.from_snapshot({**d, "seed": seed})


def test_a_negative_seed_deals_the_game_of_that_seed_modulo_2_to_the_64():
    a, b = Game(3, seed=-1), Game(3, seed=SEED_MAX)
    assert {**a.snapshot(), "seed": 0} == {**b.snapshot(), "seed": 0}
    e1, e2 = SingleAgentEnv(), SingleAgentEnv()  # its generator takes seeds >= 0 only
    assert (e1.reset(seed=-1)[0] == e2.reset(seed=SEED_MAX)[0]).all()
