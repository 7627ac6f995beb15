"""The engine's own interpretations, as numbered in docs/rules.md ("Rulings", marked [E]), where the
other test files do not already cover them."""

from builder import (AFFINITY, CARDS, FULL_SET, NAMES, Pos, asked, canceled, count_cards, do, hand,
                     hoard, labels, pile, plain)

COUNTEROFFER = "crash with Counteroffer (Amber's innate crash)"


def test_r5_known_top_after_a_flip_and_after_someone_else_bottoms_a_card():
    g = (Pos(2, ["Pearl", "Ruby"]).hand(0, "Heist", "Eclipse", "Fair Trade")
         .hand(1, "Stargazing", "Sticky Claws", "Wishing Well")
         .havok_top("Royal Scepter", "Dwarven Anvil", "King's Crown", "Gold Chalice").build())
    do(g, "use Foresight (Pearl's innate play)", "keep the order", "end the turn")
    # player_1 flipped Royal Scepter: player_0 still knows the next two
    assert g.snapshot()["players"][0]["known_top"] == ["Dwarven Anvil", "King's Crown"]
    do(g, "play Stargazing", "decline to crash",  # player_0 could Eclipse it
       "put King's Crown (card 2 from the top) on the bottom")
    assert g.snapshot()["players"][0]["known_top"] == []  # saw a card go to the bottom, not which
    assert g.snapshot()["players"][1]["known_top"] == ["Dwarven Anvil", "Gold Chalice"]


def test_r10_no_discard_after_a_losing_crash_declaration():
    for seed in range(10):
        # Ruby stays ready (Pilfer usable), so her turn does not end by itself
        g = (Pos(2, ["Ruby", "Obsidian"], seed=seed).hand(0, "Daybreak", "Heist", "Fair Trade")
             .hand(1, "Shadow Veil", "Tidal Shift", "Wishing Well").tired(1)
             .havok_top("Dragon Nap").build(flip=True))
        do(g, "crash with Daybreak", "crash with Shadow Veil")
        while g.pending["kind"] == "crash":
            do(g, "decline to crash")
        if canceled(g) == [(0, "Daybreak")]:  # player_0 lost the contest
            assert asked(g) == (0, "main")
            assert sorted(labels(g)) == ["end the turn", "use Pilfer (Ruby's innate play)"]
            assert g.s.cards_used[0] == 1
            return
    raise AssertionError("player_0 never lost the contest")


def test_r15_refill_after_a_flipped_treasure():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(1, "Tidal Shift", "Wishing Well").tired(1)
         .hijinks_top("Daybreak").havok_top("Royal Scepter").build(flip=True))
    assert hand(g, 1) == ["Daybreak", "Tidal Shift", "Wishing Well"]


def test_r19_a_declared_crash_card_stays_in_hand_until_the_window_closes():
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(1, "Shadow Veil", "Tidal Shift", "Wishing Well")
         .hand(2, "Daybreak", "Stargazing", "Second Helping").tired(1).tired(2)
         .havok_top("Dragon Nap").build(flip=True))
    do(g, "crash with Shadow Veil")
    assert asked(g) == (2, "crash")
    assert "Shadow Veil" in hand(g, 1) and len(hand(g, 1)) == 3


def test_r22_no_second_window_after_counteroffer():
    # Blinding Flash (player_2) declines the steal; Amber counteroffers; nobody is asked again
    g = (Pos(3, ["Ruby", "Amber", "Obsidian"]).hand(0, "Sticky Claws", "Heist", "Fair Trade")
         .hand(2, "Blinding Flash", "Tidal Shift", "Wishing Well")
         .hoard(1, "Gold Chalice", "Copper Kettle").tired(0).tired(2).build())
    do(g, "play Sticky Claws", "target player_1", "target player_1's Gold Chalice")
    assert asked(g) == (1, "crash")
    do(g, COUNTEROFFER)
    assert asked(g) == (2, "crash")
    do(g, "decline to crash")
    assert g.pending is None or g.pending["kind"] != "crash"
    assert "Copper Kettle" in hoard(g, 0)


# -- ruling 24: a crash only when it would change something ------------------------------------


def _veil_asked(pos) -> bool:
    """Is player_1, holding Shadow Veil (and tired, so no innate crash), asked into the window of
    the event player_0 flips?"""
    g = pos.hand(1, "Shadow Veil", "Tidal Shift", "Wishing Well").tired(1).build(flip=True)
    return asked(g) == (1, "crash")


def test_r24_tribute_with_equal_hoards_cannot_be_nullified():
    assert not _veil_asked(Pos(2, ["Ruby", "Obsidian"]).havok_top("Tribute"))
    assert _veil_asked(Pos(2, ["Ruby", "Obsidian"]).hoard(0, "Bronze Talon", "Copper Kettle")
                       .havok_top("Tribute"))


def test_r24_dragon_nap_on_a_tired_dragon_cannot_be_nullified():
    assert not _veil_asked(Pos(2, ["Ruby", "Obsidian"]).tired(0).havok_top("Dragon Nap"))
    assert _veil_asked(Pos(2, ["Ruby", "Obsidian"]).havok_top("Dragon Nap"))
    # Pearl's bonus readies a tired Pearl instead: that does something
    assert _veil_asked(Pos(2, ["Pearl", "Obsidian"]).tired(0).havok_top("Dragon Nap"))


def test_r24_adventurer_ambush_with_no_treasure_worth_3_or_less_cannot_be_nullified():
    assert not _veil_asked(Pos(2, ["Ruby", "Obsidian"]).hoard(0, "King's Crown")
                           .havok_top("Adventurer Ambush"))
    assert not _veil_asked(Pos(2, ["Ruby", "Obsidian"]).hoard(0).havok_top("Adventurer Ambush"))
    assert _veil_asked(Pos(2, ["Ruby", "Obsidian"]).hoard(0, "King's Crown", "Gold Chalice")
                       .havok_top("Adventurer Ambush"))


def test_r24_pickpocket_pixies_with_nothing_to_take_cannot_be_nullified():
    assert not _veil_asked(Pos(2, ["Ruby", "Obsidian"]).hoard(0, "Gold Chalice")
                           .havok_top("Pickpocket Pixies"))
    assert _veil_asked(Pos(2, ["Ruby", "Obsidian"]).havok_top("Pickpocket Pixies"))


def test_r24_knightly_raid_on_empty_hoards_cannot_be_nullified():
    assert not _veil_asked(Pos(2, ["Ruby", "Obsidian"]).hoard(0).hoard(1).havok_top("Knightly Raid"))
    assert _veil_asked(Pos(2, ["Ruby", "Obsidian"]).hoard(0).havok_top("Knightly Raid"))


def test_r24_treasure_map_with_no_treasure_left_cannot_be_nullified():
    assert not _veil_asked(Pos(2, ["Ruby", "Obsidian"])
                           .havok_deck("Treasure Map", "Tribute", "Dragon Nap"))
    assert _veil_asked(Pos(2, ["Ruby", "Obsidian"])
                       .havok_deck("Treasure Map", "Tribute", "Gold Chalice"))


def test_r24_events_that_always_do_something_can_be_nullified():
    # Lucky Find draws when the trash is empty; Spring Cleaning, Heat Wave and Lost in the Woods
    for event in ("Lucky Find", "Spring Cleaning", "Heat Wave", "Lost in the Woods"):
        assert _veil_asked(Pos(2, ["Ruby", "Obsidian"]).havok_top(event, "King's Crown")), event


def test_r24_an_event_nobody_may_crash_still_resolves():
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(1, "Shadow Veil", "Tidal Shift", "Wishing Well")
         .tired(0).tired(1).havok_top("Dragon Nap").build(flip=True))
    assert asked(g) == (0, "main")
    assert pile(g, "past_events") == ["Dragon Nap"] and "Shadow Veil" in hand(g, 1)


def test_r24_hot_potato_needs_an_event_that_does_something_for_someone():
    # player_0 flips Dragon Nap; Hot Potato (player_2, not fire) sends it to player_1
    def potato_asked(pos) -> bool:
        g = pos.hand(2, "Hot Potato", "Tidal Shift", "Wishing Well").tired(2).build(flip=True)
        return asked(g) == (2, "crash")
    three = ["Obsidian", "Amber", "Pearl"]
    assert not potato_asked(Pos(3, three).tired(0).tired(1).havok_top("Dragon Nap"))
    assert potato_asked(Pos(3, three).tired(0).havok_top("Dragon Nap"))  # napping player_1 does
    assert potato_asked(Pos(3, three).tired(1).havok_top("Dragon Nap"))  # saving player_0 does


def test_r24_ruby_hot_potato_counts_every_dragon_she_may_choose():
    # Ruby's bonus may send the event to any dragon but the flipper, herself included: a nap for
    # her (ready) changes something though the flipper and its left are both tired
    g = (Pos(3, ["Obsidian", "Amber", "Ruby"]).hand(2, "Hot Potato", "Tidal Shift", "Wishing Well")
         .tired(0).tired(1).havok_top("Dragon Nap").build(flip=True))
    assert asked(g) == (2, "crash")
    do(g, "crash with Hot Potato", "target player_2 (yourself)")
    assert g.s.ready == [False, False, False]


def test_r26_event_steals_open_no_window():
    # Pickpocket Pixies: player_1 (right of player_0) steals; player_0's Moonlit Ward and Pearl's
    # Moonward are not asked
    g = (Pos(2, ["Pearl", "Ruby"]).hand(0, "Moonlit Ward", "Heist", "Fair Trade")
         .hoard(0, "Silver Spoons", "Gold Chalice").tired(1).havok_top("Pickpocket Pixies")
         .build(flip=True))
    assert asked(g) == (0, "main")
    assert hoard(g, 1) == ["Bronze Talon", "Silver Spoons"]
    assert hoard(g, 0) == ["Gold Chalice"]


def test_r28_treasure_map_treasure_opens_no_window():
    g = (Pos(2, ["Amber", "Ruby"]).hand(1, "Finders Keepers", "Heist", "Tidal Shift")
         .havok_top("Treasure Map", "Gold Chalice").build(flip=True))
    assert asked(g) == (0, "main")  # neither Snatch nor Finders Keepers was offered
    assert hoard(g, 0) == ["Bronze Talon", "Gold Chalice"]


def test_r28_treasure_map_on_an_empty_deck_does_nothing():
    g = Pos(2, ["Amber", "Ruby"]).tired(1).havok_deck("Treasure Map").build(flip=True)
    assert not g.is_over
    assert hoard(g, 0) == ["Bronze Talon"]
    assert pile(g, "past_events")[-1] == "Treasure Map"


def test_r29_redirected_event_opens_no_second_window():
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(1, "Hot Potato", "Tidal Shift", "Wishing Well")
         .hand(2, "Shadow Veil", "Stargazing", "Second Helping").tired(2)
         .havok_top("Dragon Nap").build(flip=True))
    do(g, "crash with Hot Potato", "decline to crash")
    assert g.pending is None or g.pending["kind"] != "crash"
    assert g.s.ready == [True, False, False]  # the nap went to player_1
    assert asked(g) == (0, "main")


def test_r29_hot_potato_sends_pixies_to_the_left_your_right_is_the_new_dragons_right():
    # 3 players: player_0 flips Pickpocket Pixies; Hot Potato sends it to player_1, whose right is
    # player_0: player_0 steals from player_1
    g = (Pos(3, ["Amber", "Ruby", "Pearl"]).hand(2, "Hot Potato", "Tidal Shift", "Wishing Well")
         .hoard(1, "Silver Spoons", "King's Crown").tired(1).tired(2)
         .havok_top("Pickpocket Pixies").build(flip=True))
    do(g, "crash with Hot Potato")
    assert hoard(g, 0) == ["Bronze Talon", "Silver Spoons"]
    assert hoard(g, 1) == ["King's Crown"]


def test_r31_knightly_raid_asks_owners_in_turn_order_from_you():
    g = (Pos(3, ["Amber", "Ruby", "Obsidian"], current=1)
         .hoard(0, "Bronze Talon", "Copper Kettle").hoard(1, "Bronze Talon", "Chipped Goblet")
         .hoard(2, "Lucky Horseshoe", "Tarnished Locket").tired(0).tired(1).tired(2)
         .havok_top("Knightly Raid").build(flip=True))
    order = []
    while g.pending["purpose"] == "raid_pick":
        order.append(g.pending["player"])
        g.apply(g.legal_actions()[0])
    assert order == [1, 2, 0]
    assert len(pile(g, "trash")) == 3


def test_r35_heat_wave_bonus_draw_after_the_flipped_card():
    # Ruby: Heat Wave flips Spring Cleaning (discard hand, draw 3), then the bonus draws 1
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Heist", "Fair Trade", "Tidal Shift").tired(1)
         .hijinks_top("Daybreak", "Shadow Veil", "Smoke Bomb", "Butterfingers")
         .havok_top("Heat Wave", "Spring Cleaning").build(flip=True))
    assert hand(g, 0) == ["Butterfingers", "Daybreak", "Shadow Veil", "Smoke Bomb"]


def test_r37_dragon_nap_bonus_does_not_restore_a_used_innate():
    # Pearl used Foresight earlier this turn; Second Helping flips Dragon Nap: ready, no innate
    g = (Pos(2, ["Pearl", "Ruby"]).hand(0, "Second Helping", "Eclipse", "Sunny Side Up")
         .innate_used(0).tired(0).card_limit(0, 2).havok_top("Dragon Nap", "Royal Scepter").build())
    do(g, "play Second Helping")
    assert g.s.ready[0] and g.s.innate_used[0]
    assert asked(g) == (0, "main")
    assert "use Foresight (Pearl's innate play)" not in labels(g)


def test_r39_second_helping_other_card_is_on_the_bottom_before_the_window():
    g2 = (Pos(2, ["Ruby", "Amber"]).hand(0, "Second Helping", "Heist", "Fair Trade")
          .hand(1, "Shadow Veil", "Tidal Shift", "Wishing Well").tired(1)
          .havok_top("Gold Chalice", "Dragon Nap", "Royal Scepter").build())
    do(g2, "play Second Helping", "resolve Dragon Nap")
    assert asked(g2) == (1, "crash")
    assert pile(g2, "havok")[0] == "Royal Scepter" and pile(g2, "havok")[-1] == "Gold Chalice"


def test_r40_foresight_shows_fewer_when_the_deck_is_short():
    g = (Pos(2, ["Pearl", "Ruby"]).hand(0, "Heist", "Eclipse", "Fair Trade")
         .havok_deck("Royal Scepter", "Gold Chalice").build())
    do(g, "use Foresight (Pearl's innate play)")
    assert sorted(labels(g)) == ["keep the order",
                                 "put Gold Chalice (card 2 from the top) on the bottom",
                                 "put Royal Scepter (card 1 from the top) on the bottom"]
    do(g, "put Royal Scepter (card 1 from the top) on the bottom")
    assert pile(g, "havok") == ["Gold Chalice", "Royal Scepter"]


def test_r41_wishing_well_cannot_take_itself():
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Wishing Well", "Heist", "Fair Trade")
         .discard("Eclipse").build())
    do(g, "play Wishing Well")
    assert "Eclipse" in hand(g, 0)
    assert pile(g, "discard") == ["Wishing Well"]


def test_r41_trade_needs_a_treasure_to_give():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Fair Trade", "Heist", "Eclipse").hoard(0)
         .hoard(1, "Copper Kettle").tired(1).build())
    assert "play Fair Trade" not in labels(g)
    assert "use Haggle (Amber's innate play)" not in labels(g)


def test_r42_heist_richer_uses_hoard_worth_with_affinity():
    # an affinity treasure is worth one more to its dragon: against a hoard worth exactly that
    # much, its dragon is not poorer (no Heist), another dragon is
    for k in range(CARDS.n_treasures):
        aff = CARDS.affinity[k]
        if aff is None or CARDS.value[k] + 1 > 4:
            continue
        dragon = next(d for d, a in AFFINITY.items() if a == aff)
        other = next(d for d in AFFINITY if d not in (dragon, "Obsidian"))
        victim = plain(1)[:CARDS.value[k] + 1]
        for thief, usable in ((dragon, False), (other, True)):
            g = (Pos(2, [thief, "Obsidian" if dragon != "Obsidian" else "Pearl"])
                 .hand(0, "Heist", "Eclipse", "Fair Trade").hoard(0, NAMES[k]).hoard(1, *victim)
                 .tired(1).build())
            assert ("play Heist" in labels(g)) is usable, (thief, NAMES[k])
        return
    raise AssertionError("no small affinity treasure")


def test_r44_bait_and_switch_choose_among_equally_rich_opponents():
    g = (Pos(3, ["Ruby", "Obsidian", "Pearl"]).hand(0, "Bait and Switch", "Eclipse", "Heist")
         .hoard(1, "Gold Chalice").hoard(2, "Enchanted Harp").tired(1).tired(2).build())
    do(g, "play Bait and Switch")
    assert asked(g) == (0, "trade_from")
    assert sorted(labels(g)) == ["target player_1", "target player_2"]
    do(g, "target player_2")
    assert hoard(g, 0) == ["Enchanted Harp"] and hoard(g, 2) == ["Bronze Talon"]


def test_r46_counteroffer_against_heist_replaces_the_most_valuable_pick():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Heist", "Eclipse", "Fair Trade")
         .hoard(1, "Silver Spoons", "Copper Kettle", "Chipped Goblet", "King's Crown").tired(0).build())
    do(g, "play Heist", "target player_1's Silver Spoons", "target player_1's Copper Kettle")
    assert asked(g) == (1, "crash")
    do(g, COUNTEROFFER)
    assert sorted(labels(g)) == ["offer your Chipped Goblet", "offer your King's Crown"]
    do(g, "offer your Chipped Goblet")
    assert hoard(g, 0) == ["Bronze Talon", "Chipped Goblet", "Copper Kettle"]
    assert {"Silver Spoons", "King's Crown"} <= set(hoard(g, 1))
    assert not {"Chipped Goblet", "Copper Kettle"} & set(hoard(g, 1))


def test_r48_tidal_shift_with_an_empty_hoard():
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(0, "Tidal Shift", "Eclipse", "Heist")
         .hoard(0, "Gold Chalice", "Copper Kettle").hoard(1).hoard(2, "King's Crown")
         .tired(1).tired(2).build())
    do(g, "play Tidal Shift", "pass your Copper Kettle")
    assert hoard(g, 0) == ["Gold Chalice", "King's Crown"]
    assert hoard(g, 1) == ["Copper Kettle"]
    assert hoard(g, 2) == []
    assert count_cards(g) == FULL_SET
