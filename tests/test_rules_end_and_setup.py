"""rules.md, "Table and setup" and "End of the game": setup, first player, dragons, the end at 15,
the end on an empty Havok deck, winners, draws and rewards."""

from collections import Counter

import pytest

from builder import (CARDS, FULL_SET, SNATCHABLE, Pos, asked, count_cards, do, hoard, pile, plain,
                     printed, worth, worth_exactly)
from havok_env import Game, IllegalActionError

# -- setup ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4])
def test_setup(n):
    checked = 0
    for seed in range(30):
        g = Game(n, seed=seed)
        d = g.snapshot()
        assert d["turn"] == 1
        assert count_cards(g) == FULL_SET
        assert 40 - n - len(d["havok_deck"]) >= 1  # the first player flipped
        if d["past_events"] or d["in_play"]["resolving"] and d["in_play"]["resolving"][0] not in [
                CARDS.names[k] for k in range(CARDS.n_treasures)]:
            continue  # the first flip was an event: it may change hands and hoards
        checked += 1
        assert all(pl["hoard"][0] == "Bronze Talon" for pl in d["players"])
        # first flip a treasure: 3 cards each from the shuffled 40, one Bronze Talon each
        assert all(len(pl["hand"]) == 3 for pl in d["players"])
        assert len(d["hijinks_deck"]) == 40 - 3 * n
        for p, pl in enumerate(d["players"]):
            assert len(pl["hoard"]) == (2 if p == d["current_player"] and not d["in_play"]["resolving"]
                                        else 1)
    assert checked > 5


@pytest.mark.parametrize("n", [2, 3, 4])
def test_setup_before_the_first_flip(n):
    # a core game stopped right after the deal, before the first turn starts
    from havok_env import _core
    from havok_env.engine import tables
    from havok_env.state import GameState

    for seed in range(5):
        s = GameState(_core.Game.new(tables(CARDS).core, n, [-1] * n, seed, False, advance=False))
        assert all(len(h) == 3 for h in s.hands)
        assert all(CARDS.is_hijinks(k) for h in s.hands for k in h)
        assert all(h == [CARDS.starting_treasure] for h in s.hoards)
        assert len(s.hijinks) == 40 - 3 * n
        assert len(s.havok) == 40 - n
        assert s.havok.count(CARDS.starting_treasure) == CARDS.copies[CARDS.starting_treasure] - n
        assert s.ready == [True] * n
        assert 0 <= s.current < n and s.turn == 0
        assert s.stack == [{"f": "turn", "step": "start"}]
        assert s.discard == s.trash == s.past_events == s.in_play == []


def test_decks_are_shuffled_by_the_seed():
    a, b, c = Game(2, seed=1).snapshot(), Game(2, seed=1).snapshot(), Game(2, seed=2).snapshot()
    assert a == b
    assert a["havok_deck"] != c["havok_deck"] or a["hijinks_deck"] != c["hijinks_deck"]


def test_a_game_without_a_seed_draws_one_and_records_it():
    g = Game(2)
    assert isinstance(g.seed, int) and 0 <= g.seed < 2 ** 63
    again = Game(2, seed=g.seed)
    assert again.snapshot() == g.snapshot() and again.legal_actions() == g.legal_actions()


def test_first_player_from_the_seeded_rng():
    for n in (2, 3, 4):
        firsts = Counter(Game(n, seed=s).current_player for s in range(200))
        assert set(firsts) == set(range(n))
        for s in range(20):
            assert Game(n, seed=s).current_player == Game(n, seed=s).current_player


def test_dragons_by_configuration():
    g = Game(4, ["Pearl", "Ruby", "Amber", "Obsidian"], seed=3)
    assert [g.dragon(p).name for p in range(4)] == ["Pearl", "Ruby", "Amber", "Obsidian"]
    g = Game(2, ["moonlight", "fire"], seed=3)  # by affinity
    assert [g.dragon(p).name for p in range(2)] == ["Pearl", "Ruby"]
    assert g.snapshot()["players"][0]["dragon"] == "Pearl"


def test_unspecified_dragons_are_random_and_distinct():
    seen = Counter()
    for s in range(100):
        g = Game(3, ["Amber", None, None], seed=s)
        names = [g.dragon(p).name for p in range(3)]
        assert names[0] == "Amber"
        assert len(set(names)) == 3
        seen[names[1]] += 1
    assert set(seen) == {"Ruby", "Obsidian", "Pearl"}
    for s in range(50):
        g = Game(4, seed=s)
        assert sorted(g.dragon(p).name for p in range(4)) == ["Amber", "Obsidian", "Pearl", "Ruby"]
    assert len({tuple(Game(2, seed=s).dragon(p).name for p in range(2)) for s in range(50)}) > 3


def test_turn_order_is_clockwise():
    g = Game(4, seed=5)
    first = g.current_player
    order = [first]
    while len(order) < 6 and not g.is_over:
        p = g.current_player
        if g.pending["kind"] == "crash":
            g.apply(g.END)
        elif g.pending["purpose"] == "main":
            g.apply(g.END)
        else:
            g.apply(g.legal_actions()[0])
        if g.current_player != p:
            order.append(g.current_player)
    assert all(b == (a + 1) % 4 for a, b in zip(order, order[1:]))


# -- the end at 15 ------------------------------------------------------------------------------


def test_game_ends_when_a_hoard_reaches_15():
    # player_0 has 15 minus the flipped treasure
    flip = "Gold Chalice"
    g = (Pos(3, ["Amber", "Obsidian", "Pearl"]).hoard(0, *worth_exactly(15 - printed(flip), [flip]))
         .hoard(1, "Copper Kettle").havok_top(flip).build(flip=True))
    assert g.is_over
    assert g.result["reason"] == "hoard_15"
    assert g.result["winners"] == [0]
    assert g.result["scores"] == [15, printed("Copper Kettle"), 1]
    assert g.rewards() == [1.0, -1.0, -1.0]
    assert g.pending is None and g.legal_actions() == []
    assert g.snapshot()["result"]["winners"] == [0]
    with pytest.raises(IllegalActionError):
        g.apply(0)


def test_the_fewest_treasures_that_reach_15_end_the_game():
    # three treasures each worth Ruby's most (5, one with the fire affinity): a hoard that scores
    # exactly as many cards times its best worth ends the game like any other
    g = (Pos(2, ["Ruby", "Obsidian"]).hoard(0, "King's Crown", "Phoenix Feather")
         .havok_top("Moonlit Tiara").build(flip=True))
    assert [worth("Ruby", x) for x in ("King's Crown", "Phoenix Feather", "Moonlit Tiara")] == [5, 5, 5]
    assert g.is_over and g.result["reason"] == "hoard_15" and g.scores()[0] == 15
    g = (Pos(2, ["Amber", "Obsidian"]).hoard(0, "King's Crown", "Phoenix Feather")
         .havok_top("Moonlit Tiara").build(flip=True))
    assert not g.is_over and g.scores()[0] == 14


def test_game_goes_on_at_14():
    flip = "Gold Chalice"
    g = (Pos(3, ["Amber", "Obsidian", "Pearl"]).hoard(0, *worth_exactly(14 - printed(flip), [flip]))
         .havok_top(flip).build(flip=True))
    assert not g.is_over and g.scores()[0] == 14
    assert g.rewards() == [0.0, 0.0, 0.0]


def test_game_ends_above_15_and_with_affinity():
    # the affinity bonus makes the difference: 14 printed, 15 in the hoard of Ruby
    fire = "Phoenix Feather"
    rest = worth_exactly(14 - printed(fire))
    g = (Pos(2, ["Ruby", "Obsidian"]).hoard(0, *rest).havok_top(fire).build(flip=True))
    assert g.is_over and g.result["winners"] == [0] and g.scores()[0] == 15
    g = (Pos(2, ["Amber", "Obsidian"]).hoard(0, *rest).havok_top(fire).build(flip=True))
    assert not g.is_over and g.scores()[0] == 14
    # above 15
    g = (Pos(2, ["Amber", "Obsidian"]).hoard(0, *worth_exactly(14, ["King's Crown"]))
         .havok_top("King's Crown").build(flip=True))
    assert g.is_over and g.scores()[0] == 14 + printed("King's Crown")


def test_game_ends_at_once_in_the_middle_of_a_turn():
    loot = "Silver Spoons"
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(0, *worth_exactly(15 - printed(loot), [loot, "Copper Kettle"]))
         .hoard(1, loot, "Copper Kettle").tired(1).build())
    assert not g.is_over
    do(g, "play Sticky Claws", f"target player_1's {loot}")
    assert g.is_over and g.result["winners"] == [0] and g.rewards() == [1.0, -1.0]
    assert g.scores()[0] == 15
    assert count_cards(g) == FULL_SET


def test_a_crash_can_stop_the_15():
    # player_1 would reach 15 with the flipped treasure, but Ruby snatches it
    g = (Pos(2, ["Ruby", "Obsidian"], current=1)
         .hoard(1, *worth_exactly(15 - printed(SNATCHABLE), [SNATCHABLE])).havok_top(SNATCHABLE)
         .build(flip=True))
    assert asked(g) == (0, "crash")
    do(g, "crash with Snatch (Ruby's innate crash)")
    assert not g.is_over
    assert g.scores() == [1 + printed(SNATCHABLE), 15 - printed(SNATCHABLE)]


def test_draw_when_the_highest_hoards_are_equal():
    # player_0 already holds 15 (not checked until something resolves); player_1 reaches 15 with
    # its flip
    a = worth_exactly(15, ["Tarnished Locket"])
    b = worth_exactly(14, a + ["Tarnished Locket"])
    g = (Pos(3, ["Amber", "Obsidian", "Pearl"], current=1).hoard(0, *a).hoard(1, *b)
         .havok_top("Tarnished Locket").build(flip=True))
    assert printed("Tarnished Locket") == 1
    assert g.is_over
    assert g.result["reason"] == "hoard_15"
    assert g.result["scores"][:2] == [15, 15]
    assert g.result["winners"] == [0, 1]
    assert g.rewards() == [0.0, 0.0, -1.0]


def test_the_highest_hoard_wins_not_the_one_that_reached_15():
    a = worth_exactly(16, ["Tarnished Locket"])
    b = worth_exactly(14, a + ["Tarnished Locket"])
    g = (Pos(2, ["Amber", "Obsidian"], current=1).hoard(0, *a).hoard(1, *b)
         .havok_top("Tarnished Locket").build(flip=True))
    assert g.is_over and g.result["winners"] == [0] and g.rewards() == [1.0, -1.0]


def test_rewards_are_zero_until_the_end():
    g = Game(3, seed=4)
    assert g.rewards() == [0.0, 0.0, 0.0]


# -- the end on an empty Havok deck -------------------------------------------------------------


def test_game_ends_when_the_havok_deck_is_empty_at_the_flip():
    g = (Pos(3, ["Amber", "Obsidian", "Pearl"]).hoard(0, plain(3)[0]).hoard(1, plain(5)[0])
         .havok_deck().build(flip=True))
    assert g.is_over
    assert g.result["reason"] == "havok_empty"
    assert g.result["winners"] == [1]
    assert g.rewards() == [-1.0, 1.0, -1.0]
    assert pile(g, "havok") == []


def test_empty_havok_deck_draw():
    g = (Pos(3, ["Amber", "Obsidian", "Pearl"]).hoard(0, plain(3)[0]).hoard(1, plain(3)[1])
         .havok_deck().build(flip=True))
    assert g.is_over and g.result["reason"] == "havok_empty"
    assert g.result["winners"] == [0, 1]
    assert g.rewards() == [0.0, 0.0, -1.0]


def test_last_havok_card_is_flipped_then_the_next_turn_ends_the_game():
    g = (Pos(2, ["Amber", "Obsidian"]).hoard(0, "Gold Chalice").havok_deck("King's Crown")
         .build(flip=True))
    assert not g.is_over
    assert hoard(g, 0) == ["Gold Chalice", "King's Crown"]
    do(g, "end the turn")
    assert g.is_over and g.result["reason"] == "havok_empty" and g.result["winners"] == [0]


def test_second_helping_not_playable_on_an_empty_havok_deck():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Second Helping", "Heist", "Eclipse")
         .havok_deck().build())
    assert "play Second Helping" not in [g.action_label(a) for a in g.legal_actions()]


def test_every_kind_is_accounted_for():
    assert sum(CARDS.copies) == 80
