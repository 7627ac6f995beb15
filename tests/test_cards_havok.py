"""The Havok deck of cards.md: treasures (values and affinity bonuses) and all 10 events, primary
effect and bonus ("you" is the dragon for whom the event resolves). Values, limits and draw counts
are read from the card data, which cards.md allows to be tuned."""

import pytest

from builder import (AFFINITY, CARDS, FULL_SET, NAMES, Pos, around, asked, count_cards, do, draws,
                     hand, hoard, labels, limit, op, ops, pile, plain, printed, target_labels,
                     worth)

# cards.md, "Treasures": name -> (copies, value, affinity); values may be tuned in the data
TREASURES = {
    "Bronze Talon": (4, 1, None), "Copper Kettle": (1, 1, None), "Chipped Goblet": (1, 1, None),
    "Lucky Horseshoe": (1, 1, None), "Tarnished Locket": (1, 1, None),
    "Silver Spoons": (1, 2, None), "Knight's Helm": (1, 2, None), "Bag of Coins": (2, 2, None),
    "Jeweled Dagger": (1, 2, None), "Map Case": (1, 2, None), "Ember Opal": (1, 2, "fire"),
    "Moonstone": (1, 2, "moonlight"), "Gold Chalice": (1, 3, None), "Enchanted Harp": (1, 3, None),
    "Crystal Ball": (1, 3, None), "Bard's Lute": (1, 3, None), "Silk Tapestry": (1, 3, None),
    "Onyx Skull": (1, 3, "darkness"), "Sunstone Ring": (1, 3, "sunlight"),
    "Royal Scepter": (1, 4, None), "Dwarven Anvil": (1, 4, None), "Cursed Idol": (1, 4, "darkness"),
    "Gilded Shield": (1, 4, "sunlight"), "King's Crown": (1, 5, None),
    "Phoenix Feather": (1, 5, "fire"), "Moonlit Tiara": (1, 5, "moonlight"),
}
EVENTS = {
    "Adventurer Ambush": None, "Knightly Raid": None, "Tribute": None, "Treasure Map": None,
    "Lost in the Woods": None, "Lucky Find": None, "Heat Wave": "fire",
    "Pickpocket Pixies": "darkness", "Spring Cleaning": "sunlight", "Dragon Nap": "moonlight",
}
DRAGON_AFFINITY = {"Ruby": "fire", "Obsidian": "darkness", "Amber": "sunlight", "Pearl": "moonlight"}


# -- the deck as a whole --------------------------------------------------------------------------


def test_havok_deck_matches_cards_md():
    # names, counts and event affinities are the design; treasure values (and, the balance work
    # permitting, copies and affinities) are tunable data, checked through their effects below
    names = CARDS.names
    assert {names[k] for k in range(CARDS.n_treasures)} == set(TREASURES)
    assert sum(CARDS.copies[k] for k in range(CARDS.n_treasures)) == 30
    assert CARDS.copies[CARDS.kind("Bronze Talon")] >= 4
    assert all(CARDS.value[k] >= 1 for k in range(CARDS.n_treasures))
    assert names[CARDS.starting_treasure] == "Bronze Talon"
    events = {names[k]: CARDS.affinity[k] for k in range(CARDS.first_event, CARDS.first_hijinks)}
    assert events == EVENTS
    assert sum(CARDS.copies[k] for k in range(CARDS.first_event, CARDS.first_hijinks)) == 10
    assert sum(CARDS.copies) == 80


@pytest.mark.parametrize("dragon", sorted(DRAGON_AFFINITY))
@pytest.mark.parametrize("treasure", sorted(TREASURES))
def test_treasure_value_with_affinity_bonus(treasure, dragon):
    k = CARDS.kind(treasure)
    aff, value = CARDS.affinity[k], CARDS.value[k]
    expected = value + (1 if aff is not None and aff == DRAGON_AFFINITY[dragon] else 0)
    other = next(d for d in DRAGON_AFFINITY if d != dragon)
    g = Pos(2, [dragon, other]).hoard(0, treasure).hoard(1).build()
    assert g.score(0) == expected
    assert g.snapshot()["players"][0]["score"] == expected
    assert g.value(0, k) == expected
    assert g.value(1, k) == value + (1 if aff == DRAGON_AFFINITY[other] else 0)


@pytest.mark.parametrize("treasure", [t for t, (_, _, aff) in TREASURES.items() if aff])
def test_affinity_treasures_of_cards_md_are_worth_one_more_to_their_dragon(treasure):
    aff = TREASURES[treasure][2]
    dragon = next(d for d, a in DRAGON_AFFINITY.items() if a == aff)
    others = [d for d in DRAGON_AFFINITY if d != dragon]
    g = Pos(4, [dragon] + others).hoard(0, treasure).hoard(1, "Copper Kettle").build()
    assert g.score(0) == CARDS.value[CARDS.kind(treasure)] + 1


def test_affinity_treasures_add_up_in_a_hoard():
    ruby = ["Ember Opal", "Phoenix Feather", "Moonlit Tiara"]
    pearl = ["Moonstone", "Cursed Idol", "Bronze Talon"]
    g = Pos(2, ["Ruby", "Pearl"]).hoard(0, *ruby).hoard(1, *pearl).build()
    v = lambda x: CARDS.value[CARDS.kind(x)]  # noqa: E731 - a small local helper
    assert g.scores() == [v("Ember Opal") + 1 + v("Phoenix Feather") + 1 + v("Moonlit Tiara"),
                          v("Moonstone") + 1 + v("Cursed Idol") + v("Bronze Talon")]


# -- events ---------------------------------------------------------------------------------------


def flip(pos, *top):
    """Build ``pos`` at the start of the current player's turn with ``top`` on the Havok deck."""
    return pos.havok_top(*top).build(flip=True)


def test_adventurer_ambush_breaks_your_treasure_within_the_limit_of_your_choice():
    lim = limit("Adventurer Ambush", "break")
    assert op("Adventurer Ambush", "break")["victim"] == "you"
    mine = around("Obsidian", lim)  # a darkness treasure printed at the limit is worth more
    ok = [x for x in mine if worth("Obsidian", x) <= lim]
    assert 1 < len(ok) < len(mine)
    g = flip(Pos(2, ["Obsidian", "Ruby"]).hoard(0, *mine).tired(1), "Adventurer Ambush")
    assert asked(g) == (0, "break_pick")
    assert sorted(labels(g)) == target_labels(0, ok)
    do(g, f"target player_0's {ok[0]}")
    assert pile(g, "trash") == [ok[0]]
    assert hoard(g, 0) == sorted(set(mine) - {ok[0]})
    assert pile(g, "past_events") == ["Adventurer Ambush"]
    assert asked(g) == (0, "main")


def test_adventurer_ambush_no_eligible_treasure_no_effect():
    big = plain(limit("Adventurer Ambush", "break") + 1)[0]
    g = flip(Pos(2, ["Obsidian", "Ruby"]).hoard(0, big).tired(1), "Adventurer Ambush")
    assert hoard(g, 0) == [big]
    assert pile(g, "trash") == []
    assert pile(g, "past_events") == ["Adventurer Ambush"]


def test_adventurer_ambush_is_not_a_break_card_for_scavenge():
    g = flip(Pos(3, ["Ruby", "Obsidian", "Amber"]).hoard(0, "Copper Kettle").tired(2),
             "Adventurer Ambush")
    assert asked(g) == (0, "main")  # Obsidian was not asked
    assert pile(g, "trash") == ["Copper Kettle"]


def _affinity_twin():
    """(dragon, affinity treasure, plain treasure of the same printed value)."""
    for k in range(CARDS.n_treasures):
        aff = CARDS.affinity[k]
        if aff is not None:
            twins = [x for x in plain(CARDS.value[k]) if x != NAMES[k]]
            if twins:
                return next(d for d, a in AFFINITY.items() if a == aff), NAMES[k], twins[0]
    raise AssertionError("no affinity treasure has a plain twin")


def test_knightly_raid_every_dragon_breaks_its_lowest():
    # player_1's affinity treasure is worth one more to it, so its plain twin (same printed value)
    # is its lowest and goes without a question; player_0 holds two plain treasures of value 1 and
    # chooses; player_2 has nothing
    dragon, fancy, twin = _affinity_twin()
    other = next(d for d in AFFINITY if d != dragon)
    third = next(d for d in AFFINITY if d not in (dragon, other))
    ones = [x for x in plain(1) if x != twin][:2]
    g = flip(Pos(3, [other, dragon, third]).hoard(0, *ones, plain(5)[0]).hoard(1, fancy, twin)
             .hoard(2).tired(0).tired(1).tired(2), "Knightly Raid")
    assert asked(g) == (0, "raid_pick")
    assert sorted(labels(g)) == sorted(f"break your {x}" for x in ones)
    do(g, f"break your {ones[0]}")
    assert hoard(g, 0) == sorted([ones[1], plain(5)[0]])
    assert hoard(g, 1) == [fancy]
    assert hoard(g, 2) == []
    assert sorted(pile(g, "trash")) == sorted([ones[0], twin])
    assert count_cards(g) == FULL_SET


def test_tribute_richest_passes_a_treasure_of_its_choice_to_the_poorest():
    g = flip(Pos(3, ["Amber", "Ruby", "Pearl"]).hoard(0, "Bronze Talon")
             .hoard(1, "Gold Chalice", "King's Crown").hoard(2, "Silver Spoons", "Copper Kettle")
             .tired(1).tired(2), "Tribute")
    assert asked(g) == (1, "tribute_pick")
    assert sorted(labels(g)) == ["give your Gold Chalice", "give your King's Crown"]
    do(g, "give your Gold Chalice")
    assert hoard(g, 0) == ["Bronze Talon", "Gold Chalice"]
    assert hoard(g, 1) == ["King's Crown"]
    assert hoard(g, 2) == ["Copper Kettle", "Silver Spoons"]


def test_tribute_ties_nearest_clockwise_from_you():
    # current player_1; richest tie between player_2 and player_0 -> player_2 (next clockwise);
    # poorest tie between player_3 and player_1 -> player_1 (you, nearest)
    g = flip(Pos(4, ["Amber", "Ruby", "Pearl", "Obsidian"], current=1)
             .hoard(0, "King's Crown").hoard(1, "Bronze Talon").hoard(2, "Royal Scepter", "Copper Kettle")
             .hoard(3, "Bronze Talon").tired(0).tired(2).tired(3), "Tribute")
    assert g.scores() == [5, 1, 5, 1]
    assert asked(g) == (2, "tribute_pick")
    do(g, "give your Royal Scepter")
    assert hoard(g, 1) == ["Bronze Talon", "Royal Scepter"]
    assert hoard(g, 3) == ["Bronze Talon"]
    assert hoard(g, 0) == ["King's Crown"]


def test_tribute_no_effect_when_all_hoards_are_equal():
    g = flip(Pos(3, ["Amber", "Ruby", "Pearl"]).hoard(0, "Gold Chalice").hoard(1, "Enchanted Harp")
             .hoard(2, "Crystal Ball").tired(1).tired(2), "Tribute")
    assert asked(g) == (0, "main")
    assert (hoard(g, 0), hoard(g, 1), hoard(g, 2)) == (["Gold Chalice"], ["Enchanted Harp"],
                                                       ["Crystal Ball"])


def test_treasure_map_reveals_until_a_treasure_events_to_the_bottom_unresolved():
    g = flip(Pos(2, ["Amber", "Ruby"]).tired(1), "Treasure Map", "Dragon Nap", "Heat Wave",
             "Gold Chalice", "King's Crown")
    size = len(pile(g, "havok"))
    assert hoard(g, 0) == ["Bronze Talon", "Gold Chalice"]
    havok = pile(g, "havok")
    assert havok[0] == "King's Crown"
    assert havok[-2:] == ["Dragon Nap", "Heat Wave"]
    assert g.s.ready[0]  # Dragon Nap was not resolved
    assert pile(g, "past_events") == ["Treasure Map"]
    assert size == len(havok)
    assert count_cards(g) == FULL_SET


def test_treasure_map_without_treasure_puts_the_events_back():
    g = Pos(2, ["Amber", "Ruby"]).tired(1).havok_deck("Treasure Map", "Dragon Nap", "Tribute")
    g = g.build(flip=True)
    assert pile(g, "havok") == ["Dragon Nap", "Tribute"]
    assert hoard(g, 0) == ["Bronze Talon"]
    assert g.s.ready[0]
    assert count_cards(g) == FULL_SET


def test_lost_in_the_woods_no_card_and_no_innate_play_this_turn():
    g = flip(Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Sunny Side Up", "Eclipse")
             .hoard(1, "Silver Spoons", "Copper Kettle").tired(1), "Lost in the Woods")
    assert asked(g) == (0, "main")
    assert sorted(labels(g)) == ["discard Eclipse and draw", "discard Sticky Claws and draw",
                                 "discard Sunny Side Up and draw", "end the turn"]
    assert g.snapshot()["players"][0]["restricted"]


def test_lost_in_the_woods_lasts_only_for_this_turn():
    g = flip(Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Sunny Side Up", "Eclipse")
             .hand(1, "Sticky Claws", "Fair Trade", "Heist").hoard(0, "Silver Spoons", "Copper Kettle")
             .tired(1), "Lost in the Woods", "Chipped Goblet", "Gold Chalice")
    do(g, "end the turn")
    assert asked(g) == (0, "crash")  # Snatch window on the Chipped Goblet
    do(g, "decline to crash")
    assert asked(g) == (1, "main")
    assert "play Sticky Claws" in labels(g)
    assert not g.snapshot()["players"][0]["restricted"]


def test_lucky_find_takes_the_most_valuable_treasure_from_the_trash():
    assert op("Lucky Find", "salvage")["pick"] == "best"
    trash = ["Copper Kettle", "Gold Chalice", plain(5)[0]]
    g = flip(Pos(2, ["Obsidian", "Ruby"]).trash(*trash).tired(1), "Lucky Find")
    assert hoard(g, 0) == sorted(["Bronze Talon", plain(5)[0]])
    assert sorted(pile(g, "trash")) == ["Copper Kettle", "Gold Chalice"]


def test_lucky_find_compares_printed_values():
    # an affinity treasure one below a plain one: worth as much to its dragon, but the trash
    # heap is in no hoard, so the plain one (higher printed value) is taken without a question
    for k in range(CARDS.n_treasures):
        aff = CARDS.affinity[k]
        if aff is not None and plain(CARDS.value[k] + 1):
            dragon = next(d for d, a in AFFINITY.items() if a == aff)
            better = plain(CARDS.value[k] + 1)[0]
            g = flip(Pos(2, [dragon, "Ruby" if dragon != "Ruby" else "Amber"])
                     .trash(NAMES[k], better).tired(1), "Lucky Find")
            assert worth(dragon, NAMES[k]) == printed(better)
            assert hoard(g, 0) == sorted(["Bronze Talon", better])
            return
    pytest.skip("no affinity treasure just below a plain one")


def test_lucky_find_ties_are_your_choice():
    g = flip(Pos(2, ["Amber", "Ruby"]).trash("Gold Chalice", "Enchanted Harp", "Copper Kettle")
             .tired(1), "Lucky Find")
    assert asked(g) == (0, "salvage_pick")
    assert sorted(labels(g)) == ["take from the trash heap: Enchanted Harp",
                                 "take from the trash heap: Gold Chalice"]
    do(g, "take from the trash heap: Enchanted Harp")
    assert hoard(g, 0) == ["Bronze Talon", "Enchanted Harp"]


def test_lucky_find_with_empty_trash_draws():
    n = op("Lucky Find", "salvage")["else_draw"]
    assert n >= 1
    top = ["Daybreak", "Shadow Veil", "Smoke Bomb"][:n]
    g = flip(Pos(2, ["Amber", "Ruby"]).hand(0, "Sticky Claws", "Eclipse", "Heist").tired(1)
             .hijinks_top(*top), "Lucky Find")
    assert hand(g, 0) == sorted(["Eclipse", "Heist", "Sticky Claws"] + top)
    assert hoard(g, 0) == ["Bronze Talon"]


def test_heat_wave_primary_flips_another_card_and_resolves_it():
    g = flip(Pos(2, ["Amber", "Obsidian"]).hand(0, "Sticky Claws", "Eclipse", "Heist").tired(1),
             "Heat Wave", "Gold Chalice", "Copper Kettle")
    assert hoard(g, 0) == ["Bronze Talon", "Gold Chalice"]
    assert pile(g, "havok")[0] == "Copper Kettle"
    assert len(hand(g, 0)) == 3
    assert pile(g, "past_events") == ["Heat Wave"]


def test_heat_wave_primary_chains_into_an_event():
    g = flip(Pos(2, ["Amber", "Obsidian"]).tired(1), "Heat Wave", "Dragon Nap")
    assert not g.s.ready[0]
    assert sorted(pile(g, "past_events")) == ["Dragon Nap", "Heat Wave"]


def test_heat_wave_bonus_also_draws():
    n = draws("Heat Wave", bonus=True)
    assert n > draws("Heat Wave")
    top = ["Daybreak", "Shadow Veil", "Smoke Bomb"][:n]
    g = flip(Pos(2, ["Ruby", "Obsidian"]).hand(0, "Sticky Claws", "Eclipse", "Heist").tired(1)
             .hijinks_top(*top), "Heat Wave", "Gold Chalice")
    assert hoard(g, 0) == ["Bronze Talon", "Gold Chalice"]
    assert hand(g, 0) == sorted(["Eclipse", "Heist", "Sticky Claws"] + top)


def test_heat_wave_with_an_empty_havok_deck_ends_the_game():
    g = Pos(2, ["Amber", "Obsidian"]).hoard(1, "Gold Chalice").havok_deck("Heat Wave")
    g = g.build(flip=True)
    assert g.is_over
    assert g.result["reason"] == "havok_empty"
    assert g.result["winners"] == [1]


def test_pickpocket_pixies_primary_the_dragon_on_your_right_steals_from_you():
    lim = limit("Pickpocket Pixies", "steal")
    mine = around("Amber", lim)
    ok = [x for x in mine if worth("Amber", x) <= lim]
    assert 1 < len(ok) < len(mine)
    g = flip(Pos(3, ["Amber", "Ruby", "Pearl"]).hoard(0, *mine).tired(1).tired(2),
             "Pickpocket Pixies")
    # player_2 is on player_0's right; it chooses among player_0's treasures within the limit
    assert asked(g) == (2, "steal_pick")
    assert sorted(labels(g)) == target_labels(0, ok)
    do(g, f"target player_0's {ok[0]}")
    assert hoard(g, 0) == sorted(set(mine) - {ok[0]})
    assert hoard(g, 2) == sorted(["Bronze Talon", ok[0]])
    assert hoard(g, 1) == ["Bronze Talon"]


def test_pickpocket_pixies_bonus_you_steal_from_the_dragon_on_your_right():
    lim = limit("Pickpocket Pixies", "steal", bonus=True)
    theirs = around("Pearl", lim)
    ok = [x for x in theirs if worth("Pearl", x) <= lim]
    assert 1 < len(ok) < len(theirs)
    g = flip(Pos(3, ["Obsidian", "Ruby", "Pearl"]).hoard(2, *theirs).tired(1).tired(2),
             "Pickpocket Pixies")
    assert asked(g) == (0, "steal_pick")
    assert sorted(labels(g)) == target_labels(2, ok)
    do(g, f"target player_2's {ok[0]}")
    assert hoard(g, 0) == sorted(["Bronze Talon", ok[0]])
    assert hoard(g, 2) == sorted(set(theirs) - {ok[0]})


SPRING = ["Daybreak", "Shadow Veil", "Butterfingers", "Smoke Bomb", "Second Helping", "Stargazing"]


@pytest.mark.parametrize("bonus", [False, True])
def test_spring_cleaning_discard_hand_then_draw(bonus):
    n = draws("Spring Cleaning", bonus)
    assert [o["op"] for o in ops("Spring Cleaning", bonus)] == ["discard_hand", "draw"]
    if bonus:
        assert n > draws("Spring Cleaning")
    g = flip(Pos(2, ["Amber" if bonus else "Ruby", "Obsidian"])
             .hand(0, "Sticky Claws", "Eclipse", "Heist", "Fair Trade").tired(1)
             .hijinks_top(*SPRING), "Spring Cleaning")
    assert hand(g, 0) == sorted(SPRING[:max(n, 3)])
    assert sorted(pile(g, "discard")) == ["Eclipse", "Fair Trade", "Heist", "Sticky Claws"]


def test_dragon_nap_primary_your_dragon_becomes_tired():
    g = flip(Pos(2, ["Ruby", "Obsidian"]).hand(0, "Sticky Claws", "Eclipse", "Heist"), "Dragon Nap")
    assert g.s.ready == [False, True]
    assert len(hand(g, 0)) == 3
    assert "use Pilfer (Ruby's innate play)" not in labels(g)


def test_dragon_nap_bonus_your_dragon_becomes_ready_and_you_draw():
    g = flip(Pos(2, ["Pearl", "Obsidian"]).hand(0, "Sticky Claws", "Eclipse", "Heist").tired(0),
             "Dragon Nap")
    assert g.s.ready == [True, True]
    assert len(hand(g, 0)) == 3 + draws("Dragon Nap", bonus=True)
    assert "use Foresight (Pearl's innate play)" in labels(g)


def test_event_bonus_follows_the_dragon_it_resolves_for():
    # Ruby flips Dragon Nap; Obsidian sends it with Hot Potato to the flipper's left, Pearl:
    # it resolves for Pearl, who gets the bonus.
    g = flip(Pos(3, ["Ruby", "Pearl", "Obsidian"]).hand(2, "Hot Potato", "Heist", "Fair Trade")
             .hand(1, "Sticky Claws", "Fair Trade", "Tidal Shift").tired(1), "Dragon Nap")
    do(g, "crash with Hot Potato")
    assert g.s.ready == [True, True, True]
    assert len(hand(g, 1)) == 3 + draws("Dragon Nap", bonus=True)
