"""New games dealt into pooled finished ones (py_game.cpp's game pool, Game.new) and Game()'s lean
path for its common call: the same games, byte for byte, as fresh ones."""

import random

import pytest

from havok_env import Game
from havok_env.cards import default_cards
from havok_env.engine import _core, _Tables, tables


@pytest.fixture
def pool():
    """The pool emptied (limit 0) and put back to its limit afterwards."""
    _, limit = _core.game_pool(0)
    _core.game_pool(limit)
    yield limit
    _core.game_pool(limit)


def trajectory(g: Game, seed: int) -> list:
    """Snapshot and legal actions at every decision of ``g`` played with seeded random actions."""
    rng, out = random.Random(seed), []
    while True:
        legal = g.legal_actions()
        out.append((g.snapshot(), legal, g.result))
        if g.is_over:
            return out
        g.apply(legal[rng.randrange(len(legal))])


def fresh(n: int, seed: int, **kw) -> Game:
    before = _core.game_pool(0)
    try:
        return Game(n, seed=seed, **kw)
    finally:
        _core.game_pool(before[1])


def pooled_game(n: int, seed: int, left_by, **kw) -> Game:
    """Game(n, seed) dealt into the game ``left_by()`` leaves in the pool."""
    used = left_by()
    count = _core.game_pool()[0]
    del used
    assert _core.game_pool()[0] == count + 1
    g = Game(n, seed=seed, **kw)
    assert _core.game_pool()[0] == count  # taken from the pool, not made fresh
    return g


def half_played(n=4, seed=99, **kw):
    g = Game(n, seed=seed, **kw)
    rng = random.Random(1)
    for _ in range(15):
        if g.is_over:
            break
        legal = g.legal_actions()
        g.apply(legal[rng.randrange(len(legal))])
    return g


def stopped_mid_move():
    g = Game(3, seed=5)
    g.run_chance(g.legal_actions()[0], stop=0)
    return g


@pytest.mark.parametrize("left_by", [
    lambda: Game(2, seed=1),
    lambda: half_played(),
    lambda: half_played(log=True),
    lambda: Game(4, seed=3, advance=False),
    stopped_mid_move,
    lambda: Game(2, seed=7, dragons=["Ruby", None]),
])
@pytest.mark.parametrize("n,seed", [(2, 11), (3, 2024), (4, 31)])
def test_a_pooled_game_plays_as_a_fresh_one(pool, left_by, n, seed):
    assert trajectory(pooled_game(n, seed, left_by), seed) == trajectory(fresh(n, seed), seed)


def test_a_logged_game_from_the_pool_logs_as_a_fresh_one(pool):
    g = pooled_game(2, 8, half_played, log=True)
    want = trajectory(fresh(2, 8, log=True), 8)
    assert want[-1][0]["log"]  # the log is kept
    assert trajectory(g, 8) == want


def test_a_game_after_a_logged_one_does_not_log(pool):
    assert trajectory(pooled_game(2, 8, lambda: half_played(log=True)), 8) == trajectory(fresh(2, 8), 8)
    assert Game(2, seed=8).snapshot()["log"] is None


def test_an_unadvanced_game_is_made_fresh(pool):
    used = half_played()
    del used
    count = _core.game_pool()[0]
    g = Game(2, seed=4, advance=False)
    assert _core.game_pool()[0] == count  # the pooled game is left alone: redeal always advances
    assert g.fields() == fresh(2, 4, advance=False).fields()
    assert g.to_act is None and not g.is_over


def test_a_pooled_game_of_other_tables_is_dropped(pool):
    other = _Tables(default_cards()).core  # the same cards, other tables: not to be dealt into
    assert other is not tables(default_cards()).core
    used = _core.Game.new(other, 2, [-1, -1], 5, False, True)
    del used
    assert _core.game_pool()[0] == 1
    g = Game(2, seed=6)
    assert _core.game_pool()[0] == 0
    assert trajectory(g, 6) == trajectory(fresh(2, 6), 6)


def test_a_failed_deal_does_not_pool_a_broken_game(pool):
    used = Game(2, seed=1)
    del used
    with pytest.raises(_core.CoreError):
        _core.Game.new(tables(default_cards()).core, 2, [99, -1], 1, False, True)
    assert trajectory(Game(2, seed=3), 3) == trajectory(fresh(2, 3), 3)


def test_the_pool_keeps_at_most_its_limit(pool):
    assert pool == 8
    games = [Game(2, seed=i) for i in range(20)]
    del games
    assert _core.game_pool() == (8, 8)
    assert _core.game_pool(3) == (8, 8)
    assert _core.game_pool() == (3, 3)
    with pytest.raises(_core.CoreError, match="limit"):
        _core.game_pool(-1)


def test_the_lean_path_makes_the_general_paths_game():
    lean = Game(3, seed=42)
    general = Game(3, seed=42, dragons=[None, None, None], advance=1)
    assert list(lean.__dict__) == list(general.__dict__)
    assert lean.options == {"num_players": 3, "dragons": None}
    assert general.options == {"num_players": 3, "dragons": [None, None, None]}
    a, b = lean.snapshot(), general.snapshot()
    a.pop("options"), b.pop("options")
    assert a == b
    assert lean.legal_actions() == general.legal_actions()
    assert lean.cards is default_cards() and lean.seed == 42
