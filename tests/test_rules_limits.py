"""rules.md, "Limits": one Hijinks card per player per turn (crashes included), extra plays,
innate ability once per turn, the ready condition."""

from builder import SNATCHABLE, Pos, asked, can, canceled, do, hand, hoard, labels, pile

PILFER = "use Pilfer (Ruby's innate play)"


def test_one_play_card_per_turn():
    g = (Pos(2, ["Obsidian", "Pearl"]).hand(0, "Sticky Claws", "Butterfingers", "Heist")
         .hoard(1, "Silver Spoons", "Copper Kettle", "Knight's Helm").tired(1).build())
    assert can(g, "play Sticky Claws") and can(g, "play Butterfingers")
    do(g, "play Sticky Claws", "target player_1's Silver Spoons")
    assert asked(g) == (0, "main")
    assert sorted(labels(g)) == ["end the turn", "use Crumble (Obsidian's innate play)"]


def test_crash_card_in_another_players_turn_counts_for_that_turn():
    # player_1 crashes once in player_0's turn; player_0 then targets player_1 again with its
    # innate ability: player_1 holds another Moonlit Ward but may not use it this turn
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Butterfingers", "Heist")
         .hand(1, "Moonlit Ward", "Moonlit Ward", "Tidal Shift")
         .hoard(1, "Silver Spoons", "Knight's Helm").tired(1).build())
    do(g, "play Sticky Claws", "target player_1's Knight's Helm")
    assert asked(g) == (1, "crash")
    do(g, "crash with Moonlit Ward")
    assert g.s.cards_used[1] == 1
    assert hoard(g, 1) == ["Knight's Helm", "Silver Spoons"]
    do(g, PILFER, "target player_1's Silver Spoons")
    assert hoard(g, 0) == ["Bronze Talon", "Silver Spoons"]  # player_1 was not asked
    assert hand(g, 1).count("Moonlit Ward") == 1


def test_the_user_of_a_card_cannot_crash_the_crash_on_it():
    # player_0 used its card; it holds Eclipse but is not asked in the window on Moonlit Ward
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Eclipse", "Butterfingers")
         .hand(1, "Moonlit Ward", "Fair Trade", "Tidal Shift")
         .hoard(1, "Silver Spoons", "Knight's Helm").tired(1).build())
    do(g, "play Sticky Claws", "target player_1's Knight's Helm", "crash with Moonlit Ward")
    assert asked(g) == (0, "main")
    assert canceled(g) == [(0, "Sticky Claws")]


def test_a_crash_on_your_own_havok_step_is_your_card_for_the_turn():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Shadow Veil", "Sticky Claws", "Heist")
         .hoard(1, "Silver Spoons").tired(1).havok_top("Dragon Nap").build(flip=True))
    assert asked(g) == (0, "crash")
    do(g, "crash with Shadow Veil")
    assert g.s.cards_used[0] == 1
    assert asked(g) == (0, "main")
    assert not can(g, "play Sticky Claws")
    assert can(g, PILFER)  # the innate ability does not count toward the limit


def test_sunny_side_up_extra_allowance_can_be_a_crash():
    # after Sunny Side Up player_0 may use one more card: here, Eclipse on the crash that
    # defends against its innate steal
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sunny Side Up", "Eclipse", "Heist")
         .hand(1, "Moonlit Ward", "Fair Trade", "Tidal Shift")
         .hoard(1, "Silver Spoons", "Knight's Helm").tired(1).build())
    do(g, "play Sunny Side Up", PILFER, "target player_1's Silver Spoons")
    assert asked(g) == (1, "crash")
    do(g, "crash with Moonlit Ward")
    assert asked(g) == (0, "crash")
    assert labels(g) == ["decline to crash", "crash with Eclipse"]
    do(g, "crash with Eclipse")
    assert hoard(g, 0) == ["Bronze Talon", "Silver Spoons"]
    assert "Eclipse" in pile(g, "discard")


def test_without_an_extra_allowance_no_crash_after_your_card():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Eclipse", "Heist")
         .hand(1, "Moonlit Ward", "Fair Trade", "Tidal Shift")
         .hoard(1, "Silver Spoons", "Knight's Helm").tired(1).build())
    do(g, "play Sticky Claws", "target player_1's Knight's Helm", "crash with Moonlit Ward")
    assert asked(g) == (0, "main")
    assert hoard(g, 1) == ["Knight's Helm", "Silver Spoons"]


def test_extra_play_lasts_for_this_turn_only():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Sunny Side Up", "Sticky Claws", "Heist")
         .tired(1).havok_top("Royal Scepter", "Dwarven Anvil", "King's Crown").build())
    do(g, "play Sunny Side Up")
    assert g.s.card_limit[0] == 2
    do(g, "end the turn")
    assert g.s.card_limit == [1, 1]
    assert g.s.cards_used == [0, 0]


def test_two_sunny_side_ups_raise_the_limit_twice():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Sunny Side Up", "Sunny Side Up", "Heist")
         .tired(1).build())
    do(g, "play Sunny Side Up", "play Sunny Side Up")
    assert g.s.card_limit[0] == 3 and g.s.cards_used[0] == 2
    assert asked(g) == (0, "main")


def test_contest_loser_card_counts_for_the_turn():
    # player_1 and player_2 both crash the event; whoever loses has still used its card
    for seed in range(6):
        g = (Pos(3, ["Ruby", "Obsidian", "Amber"], seed=seed)
             .hand(1, "Shadow Veil", "Sticky Claws", "Heist").hand(2, "Daybreak", "Fair Trade", "Tidal Shift")
             .tired(1).tired(2).havok_top("Dragon Nap").build(flip=True))
        do(g, "crash with Shadow Veil", "crash with Daybreak")
        assert g.s.cards_used[1] == 1 and g.s.cards_used[2] == 1


def test_lost_in_the_woods_blocks_crash_cards_but_not_innate_crashes():
    # player_0 flips Lost in the Woods; player_1 sends it back to... itself with Hot Potato
    # (the flipper's left in 2 players): player_1 is restricted for the rest of player_0's turn.
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Heist", "Fair Trade")
         .hand(1, "Hot Potato", "Moonlit Ward", "Tidal Shift").hoard(1, "Silver Spoons", "Knight's Helm")
         .tired(0).havok_top("Lost in the Woods").build(flip=True))
    do(g, "crash with Hot Potato")
    assert g.snapshot()["players"][1]["restricted"]
    assert not g.snapshot()["players"][0]["restricted"]
    do(g, "play Sticky Claws", "target player_1's Knight's Helm")
    # Moonlit Ward is not offered (no card this turn, and Hot Potato was the card anyway);
    # Pearl's innate crash still is
    assert asked(g) == (1, "crash")
    assert labels(g) == ["decline to crash", "crash with Moonward (Pearl's innate crash)"]


def _snatch_in_own_turn(pilfer_first: bool):
    """Ruby (player_0, two cards allowed this turn) plays Sticky Claws and Second Helping, which
    flips Heat Wave (and Royal Scepter, put on the bottom); player_1 sends it to itself with Hot
    Potato and flips a treasure: another dragon is about to add it to its hoard, during Ruby's
    own turn."""
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Second Helping", "Heist")
         .hand(1, "Hot Potato", "Fair Trade", "Tidal Shift")
         .hoard(1, "Copper Kettle", "Bag of Coins", "King's Crown").tired(1).card_limit(0, 2)
         .havok_top("Heat Wave", "Royal Scepter", SNATCHABLE).build())
    if pilfer_first:
        do(g, PILFER, "target player_1's Copper Kettle")
        assert not g.s.ready[0]
    do(g, "play Sticky Claws")
    if asked(g) == (0, "steal_pick"):  # (after Pilfer took the Copper Kettle, no choice is left)
        do(g, "target player_1's Bag of Coins")
    assert "Bag of Coins" in hoard(g, 0)
    assert g.s.ready[0]
    do(g, "play Second Helping", "resolve Heat Wave", "crash with Hot Potato")
    return g


def test_innate_play_then_no_innate_crash_in_the_same_turn():
    g = _snatch_in_own_turn(pilfer_first=False)
    assert asked(g) == (0, "crash")
    assert labels(g) == ["decline to crash", "crash with Snatch (Ruby's innate crash)"]
    g = _snatch_in_own_turn(pilfer_first=True)
    assert asked(g) != (0, "crash")  # Ruby was not asked (then her turn ended by itself)
    assert SNATCHABLE in hoard(g, 1)
