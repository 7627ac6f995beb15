"""rules.md, "A turn" and the hand rules of "Limits": Havok flip, Hijinks step, discard-and-draw,
pass; refilling hands, no maximum hand size, reshuffling the discard pile."""

from builder import (FULL_SET, Pos, asked, can, canceled, count_cards, do, hand, hoard, labels,
                     pile)


def test_turn_starts_with_a_flip_treasure_to_the_flippers_hoard():
    g = Pos(3, ["Amber", "Obsidian", "Pearl"], current=1, turn=3).havok_top("Royal Scepter")
    g = g.build(flip=True)
    assert g.s.turn == 3
    assert hoard(g, 1) == ["Bronze Talon", "Royal Scepter"]
    assert asked(g) == (1, "main")
    assert g.current_player == 1


def test_event_goes_to_past_events_after_resolving():
    g = Pos(2, ["Amber", "Obsidian"]).havok_top("Dragon Nap").build(flip=True)
    assert pile(g, "past_events") == ["Dragon Nap"]
    assert g.snapshot()["in_play"] == {"resolving": [], "canceled": []}


def test_main_decision_choices():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
         .hoard(1, "Silver Spoons").tired(1).build())
    # crash cards cannot be played from the main decision
    assert sorted(labels(g)) == sorted([
        "end the turn", "play Sticky Claws", "use Pilfer (Ruby's innate play)",
        "discard Sticky Claws and draw", "discard Moonlit Ward and draw", "discard Eclipse and draw"])


def test_end_the_turn_passes_left():
    for n in (2, 3, 4):
        for cur in range(n):
            g = Pos(n, current=cur).tired(0).tired(1).havok_top(
                "Royal Scepter", "Dwarven Anvil").build()
            for p in range(n):
                g.s.ready[p] = False
            turn = g.s.turn
            do(g, "end the turn")
            assert g.current_player == (cur + 1) % n
            assert g.s.turn == turn + 1
            assert asked(g) == ((cur + 1) % n, "main")
            assert hoard(g, (cur + 1) % n) == ["Bronze Talon", "Royal Scepter"]


def test_discard_and_draw_ends_the_turn():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
         .hijinks_top("Daybreak").havok_top("Royal Scepter", "Dwarven Anvil").tired(1).build())
    do(g, "discard Moonlit Ward and draw")
    assert hand(g, 0) == ["Daybreak", "Eclipse", "Sticky Claws"]
    assert pile(g, "discard") == ["Moonlit Ward"]
    assert g.current_player == 1
    assert asked(g) == (1, "main")


def test_discard_with_four_cards_does_not_draw():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse", "Heist")
         .havok_top("Royal Scepter", "Dwarven Anvil").tired(1).build())
    hijinks = len(pile(g, "hijinks"))
    do(g, "discard Heist and draw")
    assert hand(g, 0) == ["Eclipse", "Moonlit Ward", "Sticky Claws"]
    assert len(pile(g, "hijinks")) == hijinks


def test_no_discard_after_a_card_was_played():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sunny Side Up", "Moonlit Ward", "Eclipse")
         .tired(1).build())
    do(g, "play Sunny Side Up")
    assert asked(g) == (0, "main")
    assert not any(x.startswith("discard") for x in labels(g))


def test_discard_allowed_after_an_innate_play():
    # rules.md: "only if no Hijinks card was played this turn"; an innate ability is not a card
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Heist", "Moonlit Ward", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(1).build())
    do(g, "use Pilfer (Ruby's innate play)", "target player_1's Silver Spoons")
    assert can(g, "discard Heist and draw")


def test_no_discard_after_a_crash_on_your_own_havok_step():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Shadow Veil", "Sticky Claws", "Heist")
         .hoard(1, "Silver Spoons").tired(1).havok_top("Dragon Nap").build(flip=True))
    do(g, "crash with Shadow Veil")
    assert asked(g) == (0, "main")
    assert sorted(labels(g)) == ["end the turn", "use Pilfer (Ruby's innate play)"]


def test_refill_immediately_after_a_card_resolves():
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(1).hijinks_top("Daybreak").build())
    do(g, "play Sticky Claws")
    assert asked(g) == (0, "steal_pick")
    assert len(hand(g, 0)) == 2  # not before the card resolves
    do(g, "target player_1's Silver Spoons")
    assert hand(g, 0) == ["Daybreak", "Eclipse", "Moonlit Ward"]


def test_refill_after_a_cancel_in_turn_order_from_the_active_player():
    # current player_1 plays, player_2 crashes; player_0 also holds only 2 cards: after the crash
    # resolves, player_1 draws first, then player_2, then player_0
    g = (Pos(3, ["Ruby", "Pearl", "Amber"], current=1)
         .hand(0, "Second Helping", "Stargazing").hand(1, "Sticky Claws", "Fair Trade", "Heist")
         .hand(2, "Moonlit Ward", "Tidal Shift", "Wishing Well").hoard(2, "Knight's Helm")
         .tired(0).tired(2).hijinks_top("Daybreak", "Shadow Veil", "Smoke Bomb").build())
    do(g, "play Sticky Claws", "target player_2", "crash with Moonlit Ward")
    assert "Daybreak" in hand(g, 1) and len(hand(g, 1)) == 3
    assert "Shadow Veil" in hand(g, 2) and len(hand(g, 2)) == 3
    assert "Smoke Bomb" in hand(g, 0) and len(hand(g, 0)) == 3
    assert canceled(g) == [(1, "Sticky Claws")]


def test_no_maximum_hand_size_canceled_card_comes_back():
    # Ruby is tired, so after the cancel her only choice is to end the turn (taken automatically)
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
         .hand(1, "Moonlit Ward", "Tidal Shift", "Wishing Well").hoard(1, "Silver Spoons")
         .tired(0).tired(1).havok_top("Royal Scepter").build())
    do(g, "play Sticky Claws", "crash with Moonlit Ward")
    assert asked(g) == (1, "main")
    assert len(hand(g, 0)) == 4 and "Sticky Claws" in hand(g, 0)
    assert count_cards(g) == FULL_SET


def test_empty_hijinks_deck_reshuffles_the_discard_pile():
    g = (Pos(2, ["Amber", "Ruby"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(1).hijinks_deck().build())
    assert pile(g, "hijinks") == []
    discard = len(pile(g, "discard"))
    do(g, "play Sticky Claws", "target player_1's Silver Spoons")
    assert len(hand(g, 0)) == 3
    assert pile(g, "discard") == []
    assert len(pile(g, "hijinks")) == discard + 1 - 1  # the played card was reshuffled in too
    assert count_cards(g) == FULL_SET


def test_reshuffle_is_seeded():
    def deck(seed):
        g = (Pos(2, ["Amber", "Ruby"], seed=seed).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
             .hoard(1, "Silver Spoons", "Copper Kettle").tired(1).hijinks_deck().build())
        do(g, "play Sticky Claws", "target player_1's Silver Spoons")
        return pile(g, "hijinks")
    assert deck(1) == deck(1)
    assert len({tuple(deck(s)) for s in range(5)}) > 1


def test_nothing_drawn_when_deck_and_discard_are_empty():
    # every Hijinks card is in a hand except player_0's one card: after the Moonlit Ward
    # resolves, the discard pile holds only it, so player_0 draws it back and then nothing more
    from builder import CARDS, NAMES
    rest = [NAMES[k] for k in CARDS.all_cards() if CARDS.is_hijinks(k)]
    rest.remove("Sticky Claws")
    rest.remove("Moonlit Ward")
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws").hand(1, "Moonlit Ward", *rest)
         .hoard(1, "Silver Spoons").tired(1).havok_top("Royal Scepter").hijinks_deck().build())
    assert pile(g, "hijinks") == [] and pile(g, "discard") == []
    do(g, "play Sticky Claws", "crash with Moonlit Ward")
    assert pile(g, "hijinks") == [] and pile(g, "discard") == []
    assert hand(g, 0) in (["Moonlit Ward"], ["Moonlit Ward", "Sticky Claws"])
    assert count_cards(g) == FULL_SET


def test_canceled_cards_return_at_end_of_turn_not_before():
    g = (Pos(2, ["Amber", "Pearl"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
         .hoard(0, "Silver Spoons").hand(1, "Moonlit Ward", "Tidal Shift", "Wishing Well")
         .hoard(1, "Knight's Helm").tired(1).havok_top("Royal Scepter").build())
    do(g, "play Sticky Claws", "crash with Moonlit Ward")
    assert asked(g) == (0, "main")
    assert "Sticky Claws" not in hand(g, 0)
    assert canceled(g) == [(0, "Sticky Claws")]
    assert g.snapshot()["in_play"]["canceled"] == [[0, "Sticky Claws"]]
    do(g, "end the turn")
    assert "Sticky Claws" in hand(g, 0)
    assert canceled(g) == []


def test_only_conditional_primitives_can_make_a_card_unusable():
    # A card may be refused for want of a target only through the primitives that need one
    # (steal, break, trade, salvage, flip, foresight, recall); every other primitive must be
    # usable even in the emptiest position (no trash, discard pile, decks or treasures).
    from havok_env.cards import OP_PARAMS

    conditional = {"steal", "break", "trade", "salvage", "flip", "foresight", "recall"}
    g = Pos().build()
    g.s.havok, g.s.discard, g.s.trash, g.s.hoards = [], [], [], [[], []]
    for name in OP_PARAMS:
        op = {"op": name, "n": 1} if name in ("draw", "foresight") else {"op": name}
        assert g._core.op_usable(0, op) == (name not in conditional), name
