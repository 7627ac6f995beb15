"""The four dragons of cards.md: innate play, innate crash and ready condition of each."""

import shutil

import pytest

from builder import (AFFINITY, CARDS, DRAGONS, FULL_SET, NAMES, Pos, around, asked, can, canceled,
                     count_cards, do, hand, hoard, labels, limit, op, pile, plain,
                     target_labels, worth)
from havok_env import load_cards
from havok_env.cards import DATA_DIR

PILFER = "use Pilfer (Ruby's innate play)"
SNATCH = "crash with Snatch (Ruby's innate crash)"
CRUMBLE = "use Crumble (Obsidian's innate play)"
SCAVENGE = "crash with Scavenge (Obsidian's innate crash)"
HAGGLE = "use Haggle (Amber's innate play)"
COUNTEROFFER = "crash with Counteroffer (Amber's innate crash)"
FORESIGHT = "use Foresight (Pearl's innate play)"
MOONWARD = "crash with Moonward (Pearl's innate crash)"


def test_dragons_match_cards_md():
    table = {d.name: (d.affinity, d.play.name, d.play.type, d.crash.name, d.crash.type, d.ready_type)
             for d in CARDS.dragons}
    assert table == {
        "Ruby": ("fire", "Pilfer", "steal", "Snatch", "steal", "steal"),
        "Obsidian": ("darkness", "Crumble", "break", "Scavenge", "salvage", "break"),
        "Amber": ("sunlight", "Haggle", "trade", "Counteroffer", "defend", "trade"),
        "Pearl": ("moonlight", "Foresight", "foresight", "Moonward", "defend", "defend"),
    }


# -- Ruby ---------------------------------------------------------------------------------------


def test_pilfer_steals_worth_at_most_the_limit_from_an_opponent():
    lim = limit("Ruby.play", "steal")
    victim = around("Pearl", lim)
    ok = [x for x in victim if worth("Pearl", x) <= lim]
    assert 0 < len(ok) < len(victim)
    # player_1 is Pearl; player_2 (Amber) has nothing within the limit: player_1 is the only target
    big = [x for x in plain(lim + 1) + plain(lim + 2) if x not in victim][:1]
    g = (Pos(3, ["Ruby", "Pearl", "Amber"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(1, *victim).hoard(2, *big).tired(1).tired(2).build())
    do(g, PILFER)
    take = max(ok, key=lambda x: (worth("Pearl", x), x))
    if len(ok) > 1:
        assert asked(g) == (0, "steal_pick")
        assert sorted(labels(g)) == target_labels(1, ok)
        do(g, f"target player_1's {take}")
    assert hoard(g, 0) == sorted(["Bronze Talon", take])
    assert take not in hoard(g, 1)
    assert g.score(0) == 1 + worth("Ruby", take)
    assert not g.s.ready[0] and g.s.innate_used[0]
    # the innate ability is not the Hijinks card of the turn
    assert g.s.cards_used[0] == 0
    assert can(g, "play Sticky Claws")
    assert not can(g, PILFER)


def test_pilfer_needs_a_target():
    lim = limit("Ruby.play", "steal")
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Heist", "Eclipse", "Fair Trade")
         .hoard(1, *[x for x in around("Amber", lim) if worth("Amber", x) > lim]).tired(1).build())
    assert not can(g, PILFER)


SNATCH_MAX = DRAGONS["Ruby"].crash.trigger["max_printed"]


def test_snatch_takes_a_treasure_flipped_by_another_dragon():
    small = plain(SNATCH_MAX)[0]
    g = (Pos(2, ["Ruby", "Amber"], current=1).havok_top(small).build(flip=True))
    assert asked(g) == (0, "crash")
    assert labels(g) == ["decline to crash", SNATCH]
    do(g, SNATCH)
    assert hoard(g, 0) == sorted(["Bronze Talon", small])
    assert hoard(g, 1) == ["Bronze Talon"]
    assert not g.s.ready[0] and g.s.innate_used[0]
    assert count_cards(g) == FULL_SET


def test_snatch_printed_value_limit():
    big = plain(SNATCH_MAX + 1)[0]
    g = Pos(2, ["Ruby", "Amber"], current=1).havok_top(big).build(flip=True)
    assert asked(g) == (1, "main")
    assert hoard(g, 1) == sorted(["Bronze Talon", big])
    # a treasure printed at the limit but worth one more to the dragon who flips it: allowed
    for k in range(CARDS.n_treasures):
        if CARDS.value[k] == SNATCH_MAX and CARDS.affinity[k] not in (None, "fire"):
            flipper = next(d for d, a in AFFINITY.items() if a == CARDS.affinity[k])
            g = Pos(2, ["Ruby", flipper], current=1).havok_top(NAMES[k]).build(flip=True)
            assert asked(g) == (0, "crash")
            do(g, SNATCH)
            assert hoard(g, 0) == sorted(["Bronze Talon", NAMES[k]])


def test_snatch_not_on_your_own_flip():
    small = plain(SNATCH_MAX)[0]
    g = Pos(2, ["Ruby", "Amber"]).hand(0, "Heist", "Eclipse", "Fair Trade").havok_top(
        small).build(flip=True)
    assert asked(g) == (0, "main")
    assert hoard(g, 0) == sorted(["Bronze Talon", small])
    assert g.s.ready[0]


def test_ruby_ready_condition_steal_card_resolves():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Eclipse", "Fair Trade")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(0).tired(1).build())
    do(g, "play Sticky Claws", "target player_1's Silver Spoons")
    assert g.s.ready[0]


def test_ruby_ready_condition_heist():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Heist", "Eclipse", "Fair Trade")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(0).tired(1).build())
    do(g, "play Heist", "target player_1's Copper Kettle", "stop")
    assert g.s.ready[0]


def test_ruby_ready_condition_finders_keepers_is_a_steal_card():
    g = (Pos(2, ["Ruby", "Amber"], current=1).hand(0, "Finders Keepers", "Heist", "Eclipse")
         .tired(0).havok_top("King's Crown").build(flip=True))
    do(g, "crash with Finders Keepers")
    assert hoard(g, 0) == ["Bronze Talon", "King's Crown"]
    assert g.s.ready[0]


def test_ruby_not_ready_when_the_steal_card_is_canceled():
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Eclipse", "Fair Trade")
         .hand(1, "Moonlit Ward", "Tidal Shift", "Wishing Well")
         .hoard(1, "Silver Spoons").tired(0).tired(1).build())
    do(g, "play Sticky Claws", "crash with Moonlit Ward")
    assert not g.s.ready[0]


def test_ruby_not_ready_by_another_type():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Butterfingers", "Eclipse", "Fair Trade")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(0).tired(1).build())
    do(g, "play Butterfingers", "target player_1's Silver Spoons")
    assert not g.s.ready[0]


def test_ruby_innate_steal_does_not_ready_ruby():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Heist", "Eclipse", "Fair Trade")
         .hoard(1, "Copper Kettle", "Chipped Goblet").tired(1).build())
    do(g, PILFER, "target player_1's Copper Kettle")
    assert hoard(g, 0) == ["Bronze Talon", "Copper Kettle"]
    assert not g.s.ready[0]


# -- Obsidian -----------------------------------------------------------------------------------


def test_crumble_breaks_worth_at_most_the_limit_in_an_opponents_hoard():
    lim = limit("Obsidian.play", "break")
    victim = around("Ruby", lim)
    ok = [x for x in victim if worth("Ruby", x) <= lim]
    assert 1 < len(ok) < len(victim)
    g = (Pos(2, ["Obsidian", "Ruby"]).hand(0, "Heist", "Eclipse", "Fair Trade")
         .hoard(1, *victim).tired(1).build())
    do(g, CRUMBLE)
    assert asked(g) == (0, "break_pick")
    assert sorted(labels(g)) == target_labels(1, ok)
    do(g, f"target player_1's {ok[0]}")
    assert pile(g, "trash") == [ok[0]]
    assert hoard(g, 1) == sorted(set(victim) - {ok[0]})
    # innate abilities never ready a dragon, even when a treasure goes to the trash heap
    assert not g.s.ready[0] and g.s.innate_used[0]


def test_scavenge_takes_a_broken_treasure_of_another_dragon():
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(0, "Butterfingers", "Heist", "Eclipse")
         .hoard(2, "Silver Spoons").tired(2).build())
    do(g, "play Butterfingers", "target player_2")
    assert asked(g) == (1, "crash")
    assert labels(g) == ["decline to crash", SCAVENGE]
    do(g, SCAVENGE)
    assert hoard(g, 1) == ["Bronze Talon", "Silver Spoons"]
    assert hoard(g, 2) == []
    assert pile(g, "trash") == []
    assert not g.s.ready[1] and g.s.innate_used[1]


def test_scavenge_on_wrecking_tail_the_rest_of_the_card_still_happens():
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(0, "Wrecking Tail", "Heist", "Eclipse", "Fair Trade")
         .hoard(2, "Silver Spoons").tired(2).build())
    do(g, "play Wrecking Tail", "target player_2", SCAVENGE)
    assert hoard(g, 1) == ["Bronze Talon", "Silver Spoons"]
    assert pile(g, "trash") == []
    assert len(hand(g, 0)) == 4  # 4 - 1 + 1 drawn


def test_scavenge_not_when_the_break_targets_obsidian():
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Butterfingers", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").build())
    do(g, "play Butterfingers", "target player_1's Silver Spoons")
    assert pile(g, "trash") == ["Silver Spoons"]
    assert g.s.ready[1]


def test_obsidian_ready_condition_break_card_to_trash():
    g = (Pos(2, ["Obsidian", "Ruby"]).hand(0, "Butterfingers", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(0).tired(1).build())
    do(g, "play Butterfingers", "target player_1's Silver Spoons")
    assert pile(g, "trash") == ["Silver Spoons"]
    assert g.s.ready[0]


def test_obsidian_ready_condition_wrecking_tail():
    g = (Pos(2, ["Obsidian", "Ruby"]).hand(0, "Wrecking Tail", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(0).tired(1).build())
    do(g, "play Wrecking Tail", "target player_1's Silver Spoons")
    assert g.s.ready[0]


def test_obsidian_not_ready_when_the_break_card_is_canceled():
    g = (Pos(2, ["Obsidian", "Pearl"]).hand(0, "Butterfingers", "Heist", "Eclipse")
         .hand(1, "Moonlit Ward", "Tidal Shift", "Wishing Well")
         .hoard(1, "Silver Spoons").tired(0).tired(1).build())
    do(g, "play Butterfingers", "crash with Moonlit Ward")
    assert pile(g, "trash") == []
    assert not g.s.ready[0]


def test_obsidian_ready_when_counteroffer_sends_another_treasure_to_the_trash():
    g = (Pos(2, ["Obsidian", "Amber"]).hand(0, "Butterfingers", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(0).havok_top("Royal Scepter").build())
    do(g, "play Butterfingers", "target player_1's Silver Spoons", COUNTEROFFER)
    assert pile(g, "trash") == ["Copper Kettle"]
    assert g.s.ready[0]


def _cards_with_second_scavenger(tmp_path):
    """The shipped card set, except that Amber's innate crash is a copy of Scavenge."""
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    path = data / "dragons.toml"
    text = path.read_text()
    start = text.index('name = "Counteroffer"')
    end = text.index("[[dragon]]", start)
    text = text[:start] + (
        'name = "Counteroffer"\ntype = "salvage"\ntext = "Scavenge, for the test."\n'
        'trigger = { on = "use", types = ["break"], targets = "other" }\n'
        'effect = [{ op = "divert_break" }]\n\n') + text[end:]
    path.write_text(text)
    return load_cards(data)


def test_obsidian_not_ready_when_its_break_is_scavenged(tmp_path):
    # With the shipped cards only Obsidian can Scavenge, and never its own break; a card set
    # with a second scavenger shows the ready condition needs the treasure in the trash heap.
    cards = _cards_with_second_scavenger(tmp_path)
    g = (Pos(3, ["Obsidian", "Ruby", "Amber"], cards=cards)
         .hand(0, "Butterfingers", "Heist", "Eclipse").hoard(1, "Silver Spoons", "Copper Kettle")
         .tired(0).tired(1).build())
    do(g, "play Butterfingers", "target player_1", "target player_1's Silver Spoons")
    assert asked(g) == (2, "crash")
    do(g, COUNTEROFFER)
    assert hoard(g, 2) == ["Bronze Talon", "Silver Spoons"]
    assert pile(g, "trash") == []
    assert not g.s.ready[0]


# -- Amber --------------------------------------------------------------------------------------


def test_haggle_trades_for_a_treasure_worth_at_most_gain_more():
    gain = op("Amber.play", "trade")["max_gain"]
    mine = ["Bronze Talon", "Knight's Helm"]
    top = max(worth("Amber", x) for x in mine)
    theirs = around("Ruby", top + gain)
    takes = [x for x in theirs if worth("Ruby", x) <= top + gain]
    assert 1 < len(takes) < len(theirs)
    g = (Pos(2, ["Amber", "Ruby"]).hand(0, "Heist", "Eclipse", "Sticky Claws")
         .hoard(0, *mine).hoard(1, *theirs).tired(1).build())
    do(g, HAGGLE)
    assert asked(g) == (0, "trade_take")
    assert sorted(labels(g)) == target_labels(1, takes)
    take = max(takes, key=lambda x: (worth("Ruby", x), x))
    do(g, f"target player_1's {take}")
    gives = [x for x in mine if worth("Amber", x) >= worth("Ruby", take) - gain]
    if len(gives) > 1:
        assert sorted(labels(g)) == sorted(f"give your {x}" for x in gives)
        do(g, f"give your {gives[-1]}")
    assert take in hoard(g, 0) and len(hoard(g, 0)) == 2
    assert not g.s.ready[0] and g.s.innate_used[0]
    assert can(g, "play Sticky Claws")  # not the card of the turn


def test_haggle_needs_a_target():
    g = (Pos(2, ["Amber", "Ruby"]).hand(0, "Heist", "Eclipse", "Sticky Claws")
         .hoard(0, "Bronze Talon").hoard(1, "King's Crown").tired(1).build())
    assert not can(g, HAGGLE)


def test_counteroffer_redirects_a_steal_to_another_treasure_of_any_value():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "King's Crown", "Copper Kettle").tired(0).build())
    do(g, "play Sticky Claws", "target player_1's Silver Spoons")
    assert asked(g) == (1, "crash")
    do(g, COUNTEROFFER)
    assert asked(g) == (1, "swap_pick")
    assert sorted(labels(g)) == ["offer your Copper Kettle", "offer your King's Crown"]
    do(g, "offer your Copper Kettle")
    assert hoard(g, 0) == ["Bronze Talon", "Copper Kettle"]
    assert "Silver Spoons" in hoard(g, 1) and "King's Crown" in hoard(g, 1)
    assert not g.s.ready[1]


def test_counteroffer_on_a_break():
    g = (Pos(2, ["Obsidian", "Amber"]).hand(0, "Butterfingers", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "King's Crown").build())
    do(g, "play Butterfingers", "target player_1's Silver Spoons", COUNTEROFFER)
    # one other treasure: offered automatically
    assert pile(g, "trash") == ["King's Crown"]


def test_counteroffer_needs_another_treasure():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons").tired(0).build())
    do(g, "play Sticky Claws")
    assert hoard(g, 0) == ["Bronze Talon", "Silver Spoons"]  # Amber was not asked


def test_counteroffer_not_on_a_trade():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Fair Trade", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "King's Crown").tired(0).build())
    do(g, "play Fair Trade")
    assert asked(g) != (1, "crash")
    assert "Silver Spoons" in hoard(g, 0)


def test_amber_ready_condition_trade_card_resolves():
    for card in ("Fair Trade", "Bait and Switch"):
        g = (Pos(2, ["Amber", "Ruby"]).hand(0, card, "Heist", "Eclipse")
             .hoard(1, "Silver Spoons", "Copper Kettle").tired(0).tired(1).build())
        do(g, f"play {card}")
        while g.pending["player"] == 0 and g.pending["purpose"] != "main":
            g.apply(g.legal_actions()[0])
        assert g.s.ready[0], card


def test_amber_innate_trade_does_not_ready_amber():
    g = (Pos(2, ["Amber", "Ruby"]).hand(0, "Heist", "Eclipse", "Sticky Claws")
         .hoard(1, "Silver Spoons", "King's Crown").tired(1).build())
    do(g, HAGGLE)
    assert not g.s.ready[0]


# -- Pearl --------------------------------------------------------------------------------------


def test_foresight_looks_at_three_and_may_bottom_one():
    g = (Pos(2, ["Pearl", "Ruby"]).hand(0, "Heist", "Eclipse", "Sticky Claws")
         .havok_top("Dragon Nap", "Silver Spoons", "Tribute", "King's Crown").build())
    do(g, FORESIGHT)
    assert asked(g) == (0, "bottom")
    do(g, "put Tribute (card 3 from the top) on the bottom")
    havok = pile(g, "havok")
    assert havok[:3] == ["Dragon Nap", "Silver Spoons", "King's Crown"]
    assert havok[-1] == "Tribute"
    assert not g.s.ready[0] and g.s.innate_used[0]
    assert g.snapshot()["players"][0]["known_top"] == ["Dragon Nap", "Silver Spoons"]
    assert can(g, "play Sticky Claws")


def test_moonward_cancels_a_steal_on_pearls_hoard():
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").build())
    do(g, "play Sticky Claws", "target player_1's Silver Spoons")
    assert asked(g) == (1, "crash")
    assert labels(g) == ["decline to crash", MOONWARD]
    do(g, MOONWARD)
    assert hoard(g, 1) == ["Copper Kettle", "Silver Spoons"]
    assert canceled(g) == [(0, "Sticky Claws")]
    assert not g.s.ready[1] and g.s.innate_used[1]


def test_moonward_on_trade_and_innate_break():
    g = (Pos(2, ["Amber", "Pearl"]).hand(0, "Fair Trade", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons").build())
    do(g, "play Fair Trade", MOONWARD)
    assert hoard(g, 1) == ["Silver Spoons"]
    g = Pos(2, ["Obsidian", "Pearl"]).hoard(1, "Silver Spoons").build()
    do(g, CRUMBLE, MOONWARD)
    assert pile(g, "trash") == []
    assert not g.s.ready[0] and not g.s.ready[1]


def test_moonward_not_for_another_hoard():
    g = (Pos(3, ["Ruby", "Amber", "Pearl"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons").tired(1).build())
    do(g, "play Sticky Claws", "target player_1")
    assert hoard(g, 0) == ["Bronze Talon", "Silver Spoons"]


def test_pearl_ready_condition_defend_card_resolves():
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hand(1, "Moonlit Ward", "Tidal Shift", "Wishing Well")
         .hoard(1, "Silver Spoons").tired(1).build())
    do(g, "play Sticky Claws", "crash with Moonlit Ward")
    assert g.s.ready[1]


def test_pearl_ready_condition_blinding_flash_for_another_hoard():
    g = (Pos(3, ["Ruby", "Amber", "Pearl"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hand(2, "Blinding Flash", "Tidal Shift", "Wishing Well")
         .hoard(1, "Silver Spoons").tired(1).tired(2).build())
    do(g, "play Sticky Claws", "target player_1", "crash with Blinding Flash")
    assert g.s.ready[2]


def test_pearl_not_ready_by_a_nullify_card():
    g = (Pos(2, ["Ruby", "Pearl"]).hand(1, "Daybreak", "Tidal Shift", "Wishing Well").tired(1)
         .hoard(0, "Bronze Talon", "Copper Kettle").havok_top("Tribute").build(flip=True))
    do(g, "crash with Daybreak")
    assert not g.s.ready[1]


def test_pearl_innate_defend_does_not_ready_pearl():
    # Moonward is a defend ability but not a card: Pearl stays tired
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").build())
    do(g, "play Sticky Claws", "target player_1's Silver Spoons", MOONWARD)
    assert not g.s.ready[1]


# -- innate ability limits --------------------------------------------------------------------


def test_innate_once_per_turn_even_if_ready_again():
    # a second card allowed this turn (as after Sunny Side Up) keeps the turn open
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Sticky Claws", "Eclipse")
         .hoard(1, "Copper Kettle", "Chipped Goblet", "Silver Spoons", "Bag of Coins")
         .card_limit(0, 2).tired(1).build())
    do(g, PILFER, "target player_1's Copper Kettle")
    assert not g.s.ready[0]
    do(g, "play Sticky Claws", "target player_1's Silver Spoons")
    assert g.s.ready[0]  # readied by the steal card
    assert g.s.innate_used[0]
    assert not can(g, PILFER)


def test_innate_crash_not_after_innate_play_in_the_same_turn():
    # Pearl is ready (e.g. readied again this turn) but already used an innate ability this turn
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").innate_used(1).build())
    do(g, "play Sticky Claws", "target player_1's Silver Spoons")
    assert hoard(g, 0) == ["Bronze Talon", "Silver Spoons"]  # Pearl was not asked


def test_innate_available_again_next_turn():
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Heist", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").innate_used(1)
         .havok_top("Royal Scepter", "King's Crown").build())
    do(g, "end the turn")
    assert asked(g) == (1, "main")
    assert can(g, FORESIGHT)


@pytest.mark.parametrize("dragon,label,setup", [
    ("Ruby", PILFER, lambda p: p.hoard(1, "Silver Spoons")),
    ("Obsidian", CRUMBLE, lambda p: p.hoard(1, "Silver Spoons")),
    ("Amber", HAGGLE, lambda p: p.hoard(1, "Silver Spoons")),
    ("Pearl", FORESIGHT, lambda p: p),
])
def test_tired_dragon_has_no_innate_play(dragon, label, setup):
    other = "Pearl" if dragon != "Pearl" else "Ruby"
    pos = setup(Pos(2, [dragon, other]).hand(0, "Heist", "Eclipse", "Sticky Claws").tired(1))
    assert can(pos.build(), label)
    assert not can(pos.tired(0).build(), label)


def test_tired_dragon_has_no_innate_crash():
    g = Pos(2, ["Ruby", "Amber"], current=1).havok_top("Silver Spoons").tired(0).build(flip=True)
    assert asked(g) == (1, "main")
    assert hoard(g, 1) == ["Bronze Talon", "Silver Spoons"]


def test_innate_crash_tired_even_when_canceled():
    g = (Pos(3, ["Ruby", "Obsidian", "Pearl"]).hand(0, "Butterfingers", "Heist", "Sticky Claws")
         .hand(2, "Eclipse", "Tidal Shift", "Wishing Well").hoard(2, "Silver Spoons").tired(2)
         .build())
    do(g, "play Butterfingers", "target player_2", SCAVENGE)
    # Pearl could Eclipse the Butterfingers in the same window; she waits for the Scavenge window
    assert asked(g) == (2, "crash")
    do(g, "decline to crash")
    assert asked(g) == (2, "crash")
    do(g, "crash with Eclipse")
    assert pile(g, "trash") == ["Silver Spoons"]
    assert not g.s.ready[1] and g.s.innate_used[1]
