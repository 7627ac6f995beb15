"""Every Hijinks card kind of cards.md: its primary effect and its bonus effect.

The primary effect is tested with a dragon of another affinity, the bonus with the matching dragon
(fire = Ruby, darkness = Obsidian, sunlight = Amber, moonlight = Pearl). Limits and draw counts are
read from the card data (cards.md lets them be tuned); what they mean is checked here.
"""

import pytest

from builder import (ANY, CARDS, FULL_SET, Pos, around, asked, can, canceled, count_cards, do, draws,
                     hand, hoard, labels, limit, menu, op, ops, pile, plain, printed, target_labels,
                     worth)


def end_turn(g):
    do(g, "end the turn")
    return g


def assert_conserved(g):
    assert count_cards(g) == FULL_SET
    g.check_cards()


def pick(g, purpose, expected, label):
    """At a treasure choice: the offered labels are ``expected``; choose ``label``. A choice with
    one option is taken by the engine itself."""
    if len(set(expected)) > 1:
        assert g.pending["purpose"] == purpose
        assert sorted(labels(g)) == sorted(set(expected))
        do(g, label)


def best(dragon, names):
    return max(names, key=lambda x: (worth(dragon, x), x))


# -- the deck as a whole --------------------------------------------------------------------------

# cards.md, "Hijinks deck": name -> (affinity, kind, type)
DESIGN = {
    "Sticky Claws": ("fire", "play", "steal"), "Heist": ("fire", "play", "steal"),
    "Second Helping": ("fire", "play", "havok"), "Hot Potato": ("fire", "crash", "nullify"),
    "Finders Keepers": ("fire", "crash", "steal"), "Butterfingers": ("darkness", "play", "break"),
    "Wrecking Tail": ("darkness", "play", "break"), "Grave Robbing": ("darkness", "play", "salvage"),
    "Shadow Veil": ("darkness", "crash", "nullify"), "Smoke Bomb": ("darkness", "crash", "cancel"),
    "Fair Trade": ("sunlight", "play", "trade"), "Bait and Switch": ("sunlight", "play", "trade"),
    "Sunny Side Up": ("sunlight", "play", "draw"), "Blinding Flash": ("sunlight", "crash", "defend"),
    "Daybreak": ("sunlight", "crash", "nullify"), "Stargazing": ("moonlight", "play", "foresight"),
    "Tidal Shift": ("moonlight", "play", "pass"), "Wishing Well": ("moonlight", "play", "recall"),
    "Moonlit Ward": ("moonlight", "crash", "defend"), "Eclipse": ("moonlight", "crash", "cancel"),
}
COPIES = {"Sticky Claws": 3, "Heist": 1, "Second Helping": 2, "Hot Potato": 2, "Finders Keepers": 2,
          "Butterfingers": 3, "Wrecking Tail": 2, "Grave Robbing": 2, "Shadow Veil": 2,
          "Smoke Bomb": 1, "Fair Trade": 3, "Bait and Switch": 2, "Sunny Side Up": 2,
          "Blinding Flash": 2, "Daybreak": 1, "Stargazing": 2, "Tidal Shift": 2, "Wishing Well": 1,
          "Moonlit Ward": 3, "Eclipse": 2}


def test_hijinks_deck_matches_the_design():
    table = {c.name: (c.affinity, c.kind, c.type) for c in CARDS.hijinks}
    assert table == DESIGN
    assert len(CARDS.hijinks) == 20
    copies = {c.name: CARDS.copies[CARDS.kind(c.name)] for c in CARDS.hijinks}
    assert sum(copies.values()) == 40
    # copies may be tuned; the shipped counts are those of cards.md
    assert copies == COPIES


@pytest.mark.parametrize("name", sorted(DESIGN))
def test_every_card_has_a_bonus(name):
    c = CARDS.card(CARDS.kind(name))
    assert c.bonus in ("instead", "also") and c.bonus_text
    assert c.ops(c.affinity) != c.ops(None)
    other = next(a for a in ("fire", "darkness", "sunlight", "moonlight") if a != c.affinity)
    assert c.ops(other) == c.ops(None)


# -- fire --------------------------------------------------------------------------------------


def _sticky_claws(thief, victim):
    """``thief`` (player_0) plays Sticky Claws against Obsidian's hoard ``victim``."""
    g = (Pos(2, [thief, "Obsidian"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
         .hoard(1, *victim).tired(1).build())
    do(g, "play Sticky Claws")
    return g


def test_sticky_claws_primary_steals_worth_at_most_the_limit_in_the_victims_hoard():
    lim = limit("Sticky Claws", "steal")
    victim = around("Obsidian", lim)
    ok = [x for x in victim if worth("Obsidian", x) <= lim]
    assert 0 < len(ok) < len(victim)
    g = _sticky_claws("Amber", victim)
    take = best("Obsidian", ok)
    pick(g, "steal_pick", target_labels(1, ok), f"target player_1's {take}")
    assert hoard(g, 0) == sorted(["Bronze Talon", take])
    assert take not in hoard(g, 1)
    assert g.scores() == [1 + worth("Amber", take),
                          sum(worth("Obsidian", x) for x in victim) - worth("Obsidian", take)]
    assert not g.is_over
    assert pile(g, "discard") == ["Sticky Claws"]
    assert_conserved(g)


def test_sticky_claws_worth_counts_the_victims_affinity():
    # a darkness treasure printed at the limit is worth one more to Obsidian: not stealable
    lim = limit("Sticky Claws", "steal")
    dark = [x for x in menu("Obsidian") if CARDS.affinity[CARDS.kind(x)] == "darkness"
            and printed(x) == lim]
    if not dark:
        pytest.skip("no darkness treasure printed at the limit in this card set")
    g = _sticky_claws("Amber", [dark[0]] + plain(1)[:1])
    assert f"target player_1's {dark[0]}" not in labels(g)


def test_sticky_claws_bonus():
    # cards.md: "any value instead"; the limit and any extra draw are read from the data
    lim, lim_b = limit("Sticky Claws", "steal"), limit("Sticky Claws", "steal", bonus=True)
    assert ops("Sticky Claws", bonus=True) != ops("Sticky Claws")
    assert lim_b >= lim
    victim = around("Obsidian", lim_b)
    ok = [x for x in victim if worth("Obsidian", x) <= lim_b]
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse", "Heist")
         .hoard(1, *victim).tired(1).build())
    do(g, "play Sticky Claws")
    take = best("Obsidian", ok)
    pick(g, "steal_pick", target_labels(1, ok), f"target player_1's {take}")
    assert take in hoard(g, 0) and take not in hoard(g, 1)
    assert len(hand(g, 0)) == 3 + draws("Sticky Claws", bonus=True)


def test_sticky_claws_needs_a_legal_target():
    lim, lim_b = limit("Sticky Claws", "steal"), limit("Sticky Claws", "steal", bonus=True)
    above = [x for x in around("Amber", lim) if worth("Amber", x) > lim]
    assert above
    for thief in ("Pearl", "Ruby"):
        g = (Pos(2, [thief, "Amber"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
             .hoard(1, above[0]).tired(1).build())
        usable = worth("Amber", above[0]) <= (lim_b if thief == "Ruby" else lim)
        assert can(g, "play Sticky Claws") is usable, thief


def _heist(thief, victim_hoard, my_hoard=("Bronze Talon",)):
    # player_2 keeps its Bronze Talon
    g = (Pos(3, [thief, "Obsidian", "Pearl"]).hand(0, "Heist", "Eclipse", "Moonlit Ward")
         .hoard(0, *my_hoard).hoard(1, *victim_hoard).tired(1).tired(2).build())
    return g


def test_heist_primary_up_to_two_treasures_from_a_richer_opponent():
    steal = op("Heist", "steal")
    lim, count = steal["max_value"], steal["count"]
    assert count == 2 and steal["victim"] == "richer"
    victim = around("Obsidian", lim)
    ok = [x for x in victim if worth("Obsidian", x) <= lim]
    assert len(ok) >= 2
    # player_2 is exactly as rich as player_0 (a Bronze Talon): not a target; player_1 is chosen
    # automatically
    g = _heist("Amber", victim)
    do(g, "play Heist")
    first, second = sorted(ok, key=lambda x: worth("Obsidian", x))[-2:]
    pick(g, "steal_pick", target_labels(1, ok), f"target player_1's {first}")
    assert g.pending["purpose"] == "steal_pick"
    assert sorted(labels(g)) == sorted(["stop"] + target_labels(1, set(ok) - {first}))
    do(g, f"target player_1's {second}")
    assert hoard(g, 0) == sorted(["Bronze Talon", first, second])
    assert first not in hoard(g, 1) and second not in hoard(g, 1)


def test_heist_up_to_two_may_stop_after_one():
    lim = limit("Heist", "steal")
    victim = around("Obsidian", lim)
    ok = [x for x in victim if worth("Obsidian", x) <= lim]
    g = _heist("Amber", victim)
    do(g, "play Heist", f"target player_1's {ok[-1]}", "stop")
    assert hoard(g, 0) == sorted(["Bronze Talon", ok[-1]])


def test_heist_two_copies_of_the_same_treasure():
    assert worth("Obsidian", "Bag of Coins") <= limit("Heist", "steal")
    g = _heist("Amber", ["Bag of Coins", "Bag of Coins", "King's Crown"])
    do(g, "play Heist")  # one kind to choose from: the first pick is automatic
    assert sorted(labels(g)) == ["stop", "target player_1's Bag of Coins"]
    do(g, "target player_1's Bag of Coins")
    assert hoard(g, 0) == ["Bag of Coins", "Bag of Coins", "Bronze Talon"]
    assert "Bag of Coins" not in hoard(g, 1)


def test_heist_needs_a_richer_opponent():
    lim = limit("Heist", "steal")
    small = [x for x in menu() if worth("Obsidian", x) <= lim]
    g = _heist("Amber", small[:2], my_hoard=("King's Crown", "Royal Scepter"))
    assert g.score(0) > g.score(1)
    assert not can(g, "play Heist")


def test_heist_bonus_raises_the_limit():
    lim, lim_b = limit("Heist", "steal"), limit("Heist", "steal", bonus=True)
    assert lim_b > lim and op("Heist", "steal", bonus=True)["count"] == 2
    victim = around("Obsidian", lim_b)
    ok = [x for x in victim if worth("Obsidian", x) <= lim_b]
    assert any(worth("Obsidian", x) > lim for x in ok)
    g = _heist("Ruby", victim)
    do(g, "play Heist")
    assert sorted(labels(g)) == target_labels(1, ok)


def test_second_helping_primary_flips_and_resolves_the_top_card():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Second Helping", "Eclipse", "Moonlit Ward")
         .havok_top("Gold Chalice", "King's Crown").tired(1).build())
    size = len(pile(g, "havok"))
    do(g, "play Second Helping")
    assert hoard(g, 0) == ["Bronze Talon", "Gold Chalice"]
    assert pile(g, "havok")[0] == "King's Crown"
    assert len(pile(g, "havok")) == size - 1


def test_second_helping_primary_resolves_an_event():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Second Helping", "Eclipse", "Moonlit Ward")
         .havok_top("Dragon Nap").tired(1).build())
    assert g.s.ready[0]
    do(g, "play Second Helping")
    assert not g.s.ready[0]
    assert pile(g, "past_events") == ["Dragon Nap"]


def test_second_helping_bonus_flip_two_resolve_one_other_to_bottom():
    assert op("Second Helping", "flip", bonus=True)["choose_from"] == 2
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Second Helping", "Eclipse", "Moonlit Ward")
         .havok_top("Gold Chalice", "King's Crown", "Copper Kettle").tired(1).build())
    size = len(pile(g, "havok"))
    do(g, "play Second Helping")
    assert asked(g) == (0, "resolve_which")
    assert sorted(labels(g)) == ["resolve Gold Chalice", "resolve King's Crown"]
    do(g, "resolve King's Crown")
    assert hoard(g, 0) == ["Bronze Talon", "King's Crown"]
    havok = pile(g, "havok")
    assert havok[0] == "Copper Kettle" and havok[-1] == "Gold Chalice"
    assert len(havok) == size - 1
    assert_conserved(g)


def test_hot_potato_primary_event_resolves_for_the_flippers_left():
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(2, "Hot Potato", "Fair Trade", "Heist")
         .havok_top("Dragon Nap").build(flip=True))
    assert asked(g) == (2, "crash")
    do(g, "crash with Hot Potato")
    assert g.s.ready == [True, False, True]
    assert pile(g, "past_events") == ["Dragon Nap"]
    assert "Hot Potato" in pile(g, "discard")


def test_hot_potato_primary_may_send_it_to_the_user_on_the_left():
    # the flipper's left may be the crasher itself: the card says "the flipper's left".
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(1, "Hot Potato", "Fair Trade", "Heist")
         .havok_top("Dragon Nap").build(flip=True))
    do(g, "crash with Hot Potato")
    assert g.s.ready == [True, False, True]


def test_hot_potato_bonus_choose_any_other_dragon_not_the_flipper():
    g = (Pos(3, ["Obsidian", "Amber", "Ruby"]).hand(2, "Hot Potato", "Fair Trade", "Heist")
         .havok_top("Dragon Nap").build(flip=True))
    do(g, "crash with Hot Potato")
    assert asked(g) == (2, "redirect_to")
    assert sorted(labels(g)) == ["target player_1", "target player_2 (yourself)"]
    do(g, "target player_1")
    assert g.s.ready == [True, False, True]


def _finders_keepers(crasher):
    return (Pos(2, ["Amber", crasher]).hand(1, "Finders Keepers", "Fair Trade", "Heist", "Wishing Well")
            .havok_top("King's Crown").build(flip=True))


def test_finders_keepers_primary_takes_the_flipped_treasure():
    g = _finders_keepers("Obsidian")
    assert asked(g) == (1, "crash")
    do(g, "crash with Finders Keepers")
    assert hoard(g, 1) == ["Bronze Talon", "King's Crown"]
    assert hoard(g, 0) == ["Bronze Talon"]
    assert len(hand(g, 1)) == 3 + draws("Finders Keepers")  # 4 - 1 (+ draws)
    assert "Finders Keepers" in pile(g, "discard")


def test_finders_keepers_bonus_also_draws():
    assert draws("Finders Keepers", bonus=True) > draws("Finders Keepers")
    g = _finders_keepers("Ruby")
    do(g, "crash with Finders Keepers")
    assert hoard(g, 1) == ["Bronze Talon", "King's Crown"]
    assert len(hand(g, 1)) == 3 + draws("Finders Keepers", bonus=True)


def test_finders_keepers_not_on_your_own_flip():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Finders Keepers", "Fair Trade", "Heist")
         .havok_top("King's Crown").build(flip=True))
    assert asked(g) == (0, "main")
    assert hoard(g, 0) == ["Bronze Talon", "King's Crown"]


# -- darkness ------------------------------------------------------------------------------------


def _break_card(card, breaker, victim, extra_hand=()):
    g = (Pos(2, [breaker, "Amber"]).hand(0, card, "Eclipse", "Moonlit Ward", *extra_hand)
         .hoard(1, *victim).tired(1).build())
    do(g, f"play {card}")
    return g


@pytest.mark.parametrize("card", ["Butterfingers", "Wrecking Tail"])
@pytest.mark.parametrize("bonus", [False, True])
def test_break_cards_break_worth_at_most_the_limit(card, bonus):
    """Butterfingers and Wrecking Tail, primary (Ruby) and bonus (Obsidian)."""
    lim = limit(card, "break", bonus)
    if bonus:
        assert lim > limit(card, "break")
    victim = around("Amber", lim)
    ok = [x for x in victim if worth("Amber", x) <= lim]
    assert ok
    if bonus:
        assert any(worth("Amber", x) > limit(card, "break") for x in ok)
    g = _break_card(card, "Obsidian" if bonus else "Ruby", victim, extra_hand=("Heist",))
    broken = best("Amber", ok)
    pick(g, "break_pick", target_labels(1, ok), f"target player_1's {broken}")
    assert pile(g, "trash") == [broken]
    assert broken not in hoard(g, 1)
    assert len(hoard(g, 1)) == len(victim) - 1
    assert len(hand(g, 0)) == 3 + draws(card, bonus)  # 4 - 1 (+ Wrecking Tail's draw)


def test_wrecking_tail_draws_after_the_break():
    assert [o["op"] for o in ops("Wrecking Tail")] == ["break", "draw"]
    g = (Pos(2, ["Ruby", "Amber"]).hand(0, "Wrecking Tail", "Eclipse", "Moonlit Ward", "Heist")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(1).hijinks_top("Daybreak").build())
    do(g, "play Wrecking Tail", "target player_1's Silver Spoons")
    assert pile(g, "trash") == ["Silver Spoons"]
    assert "Daybreak" in hand(g, 0)


def test_butterfingers_bonus_any_value():
    assert limit("Butterfingers", "break", bonus=True) == ANY
    g = _break_card("Butterfingers", "Obsidian", ["King's Crown", "Copper Kettle"])
    do(g, "target player_1's King's Crown")
    assert pile(g, "trash") == ["King's Crown"]


def _grave_robbing(robber, trash):
    g = (Pos(2, [robber, "Amber"]).hand(0, "Grave Robbing", "Eclipse", "Moonlit Ward")
         .trash(*trash).tired(1).build())
    return g


@pytest.mark.parametrize("bonus", [False, True])
def test_grave_robbing_takes_printed_value_within_the_limit_from_the_trash(bonus):
    lim = limit("Grave Robbing", "salvage", bonus)
    trash = menu("Obsidian")
    ok = [x for x in trash if CARDS.value[CARDS.kind(x)] <= lim]  # printed values in the trash
    assert ok
    if bonus:
        assert lim > limit("Grave Robbing", "salvage")
    g = _grave_robbing("Obsidian" if bonus else "Ruby", trash)
    do(g, "play Grave Robbing")
    take = max(ok, key=lambda x: (CARDS.value[CARDS.kind(x)], x))
    if len(ok) > 1:
        assert asked(g) == (0, "salvage_pick")
        assert sorted(labels(g)) == sorted(f"take from the trash heap: {x}" for x in ok)
        do(g, f"take from the trash heap: {take}")
    assert hoard(g, 0) == sorted(["Bronze Talon", take])
    assert sorted(pile(g, "trash")) == sorted(set(trash) - {take})


def test_grave_robbing_needs_something_in_the_trash():
    lim = limit("Grave Robbing", "salvage")
    too_much = [x for x in menu() if CARDS.value[CARDS.kind(x)] > lim]
    assert not can(_grave_robbing("Ruby", too_much[-1:]), "play Grave Robbing")
    assert not can(_grave_robbing("Ruby", []), "play Grave Robbing")


def _event_crash(card, crasher):
    return (Pos(2, ["Pearl", crasher]).hand(1, card, "Fair Trade", "Heist", "Wishing Well")
            .tired(0).havok_top("Dragon Nap").build(flip=True))


@pytest.mark.parametrize("card,affine", [("Shadow Veil", "Obsidian"), ("Daybreak", "Amber")])
@pytest.mark.parametrize("bonus", [False, True])
def test_nullify_cards_the_event_has_no_effect(card, affine, bonus):
    # Pearl is tired; Dragon Nap would ready her (bonus) if it resolved
    g = _event_crash(card, affine if bonus else "Ruby")
    assert asked(g) == (1, "crash")
    do(g, f"crash with {card}")
    assert g.s.ready == [False, True]
    assert pile(g, "past_events") == ["Dragon Nap"]
    assert len(hand(g, 1)) == 3 + draws(card, bonus)
    assert asked(g) == (0, "main")
    if bonus:
        assert draws(card, True) > draws(card, False)


def test_smoke_bomb_primary_cancels_a_play_card_which_returns_at_end_of_turn():
    # Amber's Haggle stays usable, so the turn does not end by itself after the cancel
    g = (Pos(2, ["Amber", "Ruby"]).hand(0, "Sticky Claws", "Eclipse", "Moonlit Ward")
         .hoard(0, "Silver Spoons").hand(1, "Smoke Bomb", "Fair Trade", "Heist")
         .hoard(1, "Gold Chalice", "Copper Kettle").tired(1).build())
    do(g, "play Sticky Claws", "target player_1's Copper Kettle")
    assert asked(g) == (1, "crash")
    do(g, "crash with Smoke Bomb")
    assert hoard(g, 1) == ["Copper Kettle", "Gold Chalice"]
    assert canceled(g) == [(0, "Sticky Claws")]
    assert pile(g, "discard") == ["Smoke Bomb"]
    assert len(hand(g, 0)) == 3  # refilled after the cancel
    assert asked(g) == (0, "main")
    assert_conserved(g)
    end_turn(g)
    assert "Sticky Claws" in hand(g, 0) and len(hand(g, 0)) == 4
    assert canceled(g) == []
    assert_conserved(g)


def test_smoke_bomb_bonus_canceled_card_goes_to_discard():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Sticky Claws", "Eclipse", "Moonlit Ward")
         .hoard(0, "Silver Spoons").hand(1, "Smoke Bomb", "Fair Trade", "Heist")
         .hoard(1, "Gold Chalice", "Copper Kettle").tired(1).hijinks_top("Daybreak").build())
    do(g, "play Sticky Claws", "target player_1's Copper Kettle", "crash with Smoke Bomb")
    assert hoard(g, 1) == ["Copper Kettle", "Gold Chalice"]
    assert canceled(g) == []
    assert sorted(pile(g, "discard")) == ["Smoke Bomb", "Sticky Claws"]
    end_turn(g)
    assert "Sticky Claws" not in hand(g, 0)
    assert_conserved(g)


def test_smoke_bomb_cancels_an_innate_play():
    g = (Pos(2, ["Ruby", "Amber"]).hand(1, "Smoke Bomb", "Fair Trade", "Heist")
         .hoard(1, "Copper Kettle").build())
    do(g, "use Pilfer (Ruby's innate play)")
    assert asked(g) == (1, "crash")
    do(g, "crash with Smoke Bomb")
    assert hoard(g, 1) == ["Copper Kettle"]
    assert not g.s.ready[0]  # tired even though canceled


def test_smoke_bomb_does_not_apply_to_events():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(1, "Smoke Bomb", "Fair Trade", "Heist")
         .havok_top("Dragon Nap").tired(1).build(flip=True))
    assert asked(g) == (0, "main")


# -- sunlight ------------------------------------------------------------------------------------


def _fair_trade(trader, mine, theirs):
    g = (Pos(2, [trader, "Obsidian"]).hand(0, "Fair Trade", "Eclipse", "Moonlit Ward")
         .hoard(0, *mine).hoard(1, *theirs).tired(1).build())
    do(g, "play Fair Trade")
    return g


def test_fair_trade_primary_takes_at_most_gain_more_than_you_can_give():
    gain = op("Fair Trade", "trade")["max_gain"]
    mine = ["Chipped Goblet", "Knight's Helm"]
    top = max(worth("Ruby", x) for x in mine)
    theirs = around("Obsidian", top + gain)
    takes = [x for x in theirs if worth("Obsidian", x) <= top + gain]
    assert 0 < len(takes) < len(theirs)
    g = _fair_trade("Ruby", mine, theirs)
    take = best("Obsidian", takes)
    pick(g, "trade_take", target_labels(1, takes), f"target player_1's {take}")
    gives = [x for x in mine if worth("Ruby", x) >= worth("Obsidian", take) - gain]
    give = gives[0]
    if len(gives) > 1:
        assert asked(g) == (0, "trade_give")
        assert sorted(labels(g)) == sorted(f"give your {x}" for x in gives)
        do(g, f"give your {give}")
    assert hoard(g, 0) == sorted((set(mine) - {give}) | {take})
    assert hoard(g, 1) == sorted((set(theirs) - {take}) | {give})
    assert pile(g, "discard") == ["Fair Trade"]


def test_fair_trade_give_choices():
    gain = op("Fair Trade", "trade")["max_gain"]
    mine = ["Bronze Talon", "Silver Spoons", "Gold Chalice"]
    g = _fair_trade("Ruby", mine, ["Copper Kettle", "King's Crown"])
    # the take is automatic (King's Crown is too valuable)
    assert asked(g) == (0, "trade_give")
    assert sorted(labels(g)) == sorted(f"give your {x}" for x in mine
                                       if worth("Ruby", x) >= worth("Obsidian", "Copper Kettle") - gain)
    do(g, "give your Silver Spoons")
    assert hoard(g, 0) == ["Bronze Talon", "Copper Kettle", "Gold Chalice"]
    assert hoard(g, 1) == ["King's Crown", "Silver Spoons"]


def test_fair_trade_bonus_any_values():
    assert "max_gain" not in op("Fair Trade", "trade", bonus=True)
    g = _fair_trade("Amber", ["Bronze Talon"], ["King's Crown", "Copper Kettle"])
    do(g, "target player_1's King's Crown")
    assert hoard(g, 0) == ["King's Crown"]
    assert hoard(g, 1) == ["Bronze Talon", "Copper Kettle"]


def _bait(trader, p1, p2, mine=("Bronze Talon", "Enchanted Harp")):
    g = (Pos(3, [trader, "Obsidian", "Pearl"]).hand(0, "Bait and Switch", "Eclipse", "Moonlit Ward")
         .hoard(0, *mine).hoard(1, *p1).hoard(2, *p2).tired(1).tired(2).build())
    do(g, "play Bait and Switch")
    return g


@pytest.mark.parametrize("bonus", [False, True])
def test_bait_and_switch_lowest_for_a_treasure_within_the_limit_from_the_richest(bonus):
    lim = limit("Bait and Switch", "trade", bonus)
    t = op("Bait and Switch", "trade", bonus)
    assert t["give"] == "lowest" and t["victim"] == "richest"
    if bonus:
        assert lim > limit("Bait and Switch", "trade")
    richest = around("Pearl", lim)
    ok = [x for x in richest if worth("Pearl", x) <= lim]
    g = _bait("Amber" if bonus else "Ruby", ["Knight's Helm"], richest)
    # player_2 is the richest; the lowest of yours (Bronze Talon) is given automatically
    take = best("Pearl", ok)
    pick(g, "trade_take", target_labels(2, ok), f"target player_2's {take}")
    assert hoard(g, 0) == sorted(["Enchanted Harp", take])
    assert "Bronze Talon" in hoard(g, 2) and take not in hoard(g, 2)
    assert hoard(g, 1) == ["Knight's Helm"]


def test_bait_and_switch_gives_a_lowest_value_treasure_of_your_choice():
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Bait and Switch", "Eclipse", "Moonlit Ward")
         .hoard(0, "Bronze Talon", "Copper Kettle", "Gold Chalice")
         .hoard(1, "Silver Spoons", "King's Crown").tired(1).build())
    do(g, "play Bait and Switch")
    assert asked(g) == (0, "trade_give")
    assert sorted(labels(g)) == ["give your Bronze Talon", "give your Copper Kettle"]
    do(g, "give your Copper Kettle")
    assert hoard(g, 0) == ["Bronze Talon", "Gold Chalice", "Silver Spoons"]
    assert hoard(g, 1) == ["Copper Kettle", "King's Crown"]


@pytest.mark.parametrize("bonus", [False, True])
def test_sunny_side_up_draws_and_allows_one_more_card(bonus):
    n = draws("Sunny Side Up", bonus)
    if bonus:
        assert n > draws("Sunny Side Up")
    g = (Pos(2, ["Amber" if bonus else "Ruby", "Obsidian"])
         .hand(0, "Sunny Side Up", "Sticky Claws", "Butterfingers")
         .hoard(1, "Copper Kettle", "Silver Spoons").tired(1)
         .hijinks_top("Eclipse", "Moonlit Ward", "Daybreak", "Shadow Veil", "Smoke Bomb").build())
    do(g, "play Sunny Side Up")
    assert hand(g, 0) == sorted(["Butterfingers", "Sticky Claws"]
                                + ["Eclipse", "Moonlit Ward", "Daybreak", "Shadow Veil", "Smoke Bomb"][:n])
    assert g.s.card_limit[0] == 2 and g.s.cards_used[0] == 1
    assert can(g, "play Sticky Claws") and can(g, "play Butterfingers")
    do(g, "play Butterfingers", "target player_1's Silver Spoons")
    assert not can(g, "play Sticky Claws")


def _blinding_flash(thief, defender, card="Sticky Claws"):
    g = (Pos(3, [thief, "Pearl", defender]).hand(0, card, "Eclipse", "Moonlit Ward")
         .hoard(1, "Copper Kettle").tired(1).hand(2, "Blinding Flash", "Heist", "Fair Trade").build())
    do(g, f"play {card}", "target player_1")
    return g


def test_blinding_flash_primary_cancels_a_steal_on_any_hoard():
    g = _blinding_flash("Amber", "Ruby")
    assert asked(g) == (2, "crash")  # player_2 defends player_1's hoard
    do(g, "crash with Blinding Flash")
    assert hoard(g, 1) == ["Copper Kettle"]
    assert canceled(g) == [(0, "Sticky Claws")] or "Sticky Claws" in hand(g, 0)
    assert g.s.ready[0]  # primary: the acting dragon is not tired


def test_blinding_flash_bonus_also_tires_the_acting_dragon():
    g = _blinding_flash("Ruby", "Amber", card="Butterfingers")
    do(g, "crash with Blinding Flash")
    assert "Copper Kettle" in hoard(g, 1)
    assert pile(g, "trash") == []
    assert g.s.ready == [False, False, True]


def test_blinding_flash_does_not_apply_to_trades():
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Fair Trade", "Eclipse", "Moonlit Ward")
         .hoard(1, "Copper Kettle").tired(1).hand(1, "Blinding Flash", "Heist", "Wishing Well")
         .build())
    do(g, "play Fair Trade")
    assert asked(g) == (0, "main")
    assert hoard(g, 0) == ["Copper Kettle"]


# -- moonlight -----------------------------------------------------------------------------------


def test_stargazing_primary_look_at_the_top_and_put_one_on_the_bottom():
    n = op("Stargazing", "foresight")["n"]
    assert n == 3
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Stargazing", "Eclipse", "Moonlit Ward")
         .havok_top("Gold Chalice", "Dragon Nap", "King's Crown", "Copper Kettle").build())
    size = len(pile(g, "havok"))
    do(g, "play Stargazing")
    assert asked(g) == (0, "bottom")
    assert g.pending["context"]["shown"] == [g.cards.kind(x) for x in
                                             ("Gold Chalice", "Dragon Nap", "King's Crown")]
    assert sorted(labels(g)) == sorted([
        "keep the order", "put Gold Chalice (card 1 from the top) on the bottom",
        "put Dragon Nap (card 2 from the top) on the bottom",
        "put King's Crown (card 3 from the top) on the bottom"])
    do(g, "put Dragon Nap (card 2 from the top) on the bottom")
    havok = pile(g, "havok")
    assert havok[:3] == ["Gold Chalice", "King's Crown", "Copper Kettle"]
    assert havok[-1] == "Dragon Nap" and len(havok) == size
    assert g.snapshot()["players"][0]["known_top"] == ["Gold Chalice", "King's Crown"]
    assert g.snapshot()["players"][1]["known_top"] == []
    assert hoard(g, 0) == ["Bronze Talon"]  # primary: no flip
    assert asked(g) == (0, "main")


def test_stargazing_primary_keep_the_order():
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Stargazing", "Eclipse", "Moonlit Ward")
         .havok_top("Gold Chalice", "Dragon Nap", "King's Crown").build())
    before = pile(g, "havok")
    do(g, "play Stargazing", "keep the order")
    assert pile(g, "havok") == before
    assert g.snapshot()["players"][0]["known_top"] == ["Gold Chalice", "Dragon Nap", "King's Crown"]


def test_stargazing_bonus_may_then_flip_the_top_card():
    g = (Pos(2, ["Pearl", "Obsidian"]).hand(0, "Stargazing", "Eclipse", "Moonlit Ward")
         .havok_top("Dragon Nap", "King's Crown", "Copper Kettle").tired(1).build())
    do(g, "play Stargazing", "put Dragon Nap (card 1 from the top) on the bottom")
    assert asked(g) == (0, "flip_or_not")
    do(g, "flip the top Havok card")
    assert hoard(g, 0) == ["Bronze Talon", "King's Crown"]
    assert pile(g, "havok")[0] == "Copper Kettle"


def test_stargazing_bonus_may_decline_the_flip():
    g = (Pos(2, ["Pearl", "Obsidian"]).hand(0, "Stargazing", "Eclipse", "Moonlit Ward")
         .havok_top("Dragon Nap", "King's Crown", "Copper Kettle").tired(1).build())
    do(g, "play Stargazing", "keep the order", "do not flip")
    assert pile(g, "havok")[0] == "Dragon Nap"
    assert hoard(g, 0) == ["Bronze Talon"]


def _tidal_shift(user):
    return (Pos(3, [user, "Obsidian", "Amber"]).hand(0, "Tidal Shift", "Eclipse", "Moonlit Ward")
            .hoard(0, "Bronze Talon", "Gold Chalice").hoard(1, "Copper Kettle", "King's Crown")
            .hoard(2, "Silver Spoons", "Royal Scepter").tired(1).tired(2).build())


def test_tidal_shift_primary_everyone_passes_left():
    g = _tidal_shift("Ruby")
    do(g, "play Tidal Shift")
    assert asked(g) == (0, "pass_pick")
    do(g, "pass your Bronze Talon")
    assert asked(g) == (1, "pass_pick")
    do(g, "pass your Copper Kettle")
    assert asked(g) == (2, "pass_pick")
    do(g, "pass your Royal Scepter")
    assert hoard(g, 0) == ["Gold Chalice", "Royal Scepter"]
    assert hoard(g, 1) == ["Bronze Talon", "King's Crown"]
    assert hoard(g, 2) == ["Copper Kettle", "Silver Spoons"]


def test_tidal_shift_bonus_you_do_not_pass_but_receive():
    g = _tidal_shift("Pearl")
    do(g, "play Tidal Shift")
    assert asked(g) == (1, "pass_pick")
    do(g, "pass your King's Crown")
    assert asked(g) == (2, "pass_pick")
    do(g, "pass your Royal Scepter")
    assert hoard(g, 0) == ["Bronze Talon", "Gold Chalice", "Royal Scepter"]
    assert hoard(g, 1) == ["Copper Kettle"]
    assert hoard(g, 2) == ["King's Crown", "Silver Spoons"]


@pytest.mark.parametrize("bonus", [False, True])
def test_wishing_well_takes_a_card_from_the_discard_pile(bonus):
    g = (Pos(2, ["Pearl" if bonus else "Ruby", "Obsidian"]).hand(0, "Wishing Well", "Heist", "Moonlit Ward")
         .discard("Eclipse", "Sticky Claws").hijinks_top("Daybreak", "Shadow Veil").build())
    do(g, "play Wishing Well")
    assert asked(g) == (0, "recall_pick")
    assert sorted(labels(g)) == ["take Eclipse from the discard pile",
                                 "take Sticky Claws from the discard pile"]
    do(g, "take Eclipse from the discard pile")
    n = draws("Wishing Well", bonus)
    assert hand(g, 0) == sorted(["Eclipse", "Heist", "Moonlit Ward"] + ["Daybreak", "Shadow Veil"][:n])
    assert pile(g, "discard") == ["Sticky Claws", "Wishing Well"]
    if bonus:
        assert n > draws("Wishing Well")


def test_wishing_well_needs_a_discard_pile():
    g = Pos(2, ["Ruby", "Obsidian"]).hand(0, "Wishing Well", "Heist", "Moonlit Ward").build()
    assert not can(g, "play Wishing Well")


@pytest.mark.parametrize("bonus", [False, True])
def test_moonlit_ward_cancels_a_steal_on_your_hoard(bonus):
    g = (Pos(2, ["Ruby", "Pearl" if bonus else "Amber"]).hand(0, "Sticky Claws", "Eclipse", "Heist")
         .hand(1, "Moonlit Ward", "Fair Trade", "Wishing Well", "Second Helping")
         .hoard(1, "Silver Spoons", "Copper Kettle").tired(1).build())
    do(g, "play Sticky Claws", "target player_1's Silver Spoons")
    assert asked(g) == (1, "crash")
    do(g, "crash with Moonlit Ward")
    assert asked(g) == (0, "main")  # Pilfer is still usable
    assert hoard(g, 1) == ["Copper Kettle", "Silver Spoons"] and hoard(g, 0) == ["Bronze Talon"]
    assert canceled(g) == [(0, "Sticky Claws")]
    assert len(hand(g, 1)) == 3 + draws("Moonlit Ward", bonus)
    # Pearl's ready condition is a defend card; Amber's is a trade
    assert g.s.ready[1] is bonus


def test_moonlit_ward_covers_trade_and_break():
    for card, dragon in (("Fair Trade", "Ruby"), ("Butterfingers", "Ruby")):
        g = (Pos(2, [dragon, "Amber"]).hand(0, card, "Eclipse", "Heist")
             .hand(1, "Moonlit Ward", "Fair Trade", "Wishing Well").hoard(1, "Copper Kettle")
             .tired(1).build())
        do(g, f"play {card}")
        assert asked(g) == (1, "crash"), card
        do(g, "crash with Moonlit Ward")
        assert "Copper Kettle" in hoard(g, 1), card
        assert pile(g, "trash") == [], card


def test_moonlit_ward_only_for_your_own_hoard():
    g = (Pos(3, ["Ruby", "Amber", "Obsidian"]).hand(0, "Sticky Claws", "Eclipse", "Heist")
         .hand(1, "Moonlit Ward", "Fair Trade", "Wishing Well").hoard(2, "Copper Kettle")
         .tired(1).tired(2).build())
    do(g, "play Sticky Claws", "target player_2")
    assert asked(g) == (0, "main")
    assert hoard(g, 0) == ["Bronze Talon", "Copper Kettle"]


@pytest.mark.parametrize("bonus", [False, True])
def test_eclipse_cancels_a_play_card(bonus):
    g = (Pos(2, ["Ruby", "Pearl" if bonus else "Amber"]).hand(0, "Second Helping", "Heist", "Moonlit Ward")
         .hand(1, "Eclipse", "Fair Trade", "Wishing Well", "Tidal Shift")
         .havok_top("King's Crown").tired(1).build())
    do(g, "play Second Helping")
    assert asked(g) == (1, "crash")
    do(g, "crash with Eclipse")
    assert hoard(g, 0) == ["Bronze Talon"]
    assert pile(g, "havok")[0] == "King's Crown"
    assert canceled(g) == [(0, "Second Helping")]
    assert len(hand(g, 1)) == 3 + draws("Eclipse", bonus)


def test_eclipse_cancels_an_innate_ability():
    g = (Pos(2, ["Ruby", "Amber"]).hand(1, "Eclipse", "Fair Trade", "Wishing Well")
         .hoard(1, "Copper Kettle").tired(1).build())
    do(g, "use Pilfer (Ruby's innate play)", "crash with Eclipse")
    assert hoard(g, 1) == ["Copper Kettle"]
    assert not g.s.ready[0]


def test_eclipse_cancels_a_crash_card():
    g = (Pos(3, ["Ruby", "Pearl", "Amber"]).hand(0, "Sticky Claws", "Heist", "Fair Trade")
         .hand(1, "Moonlit Ward", "Wishing Well", "Tidal Shift")
         .hand(2, "Eclipse", "Second Helping", "Stargazing")
         .hoard(1, "Copper Kettle").tired(1).tired(2).build())
    do(g, "play Sticky Claws", "target player_1", "crash with Moonlit Ward")
    # player_2 could Eclipse the Sticky Claws in this window too; it waits for the Moonlit Ward
    assert asked(g) == (2, "crash")
    do(g, "decline to crash")
    assert asked(g) == (2, "crash")
    assert g.pending["context"]["trigger"]["use"] == "crash"
    do(g, "crash with Eclipse")
    assert hoard(g, 0) == ["Bronze Talon", "Copper Kettle"]  # the steal went through
    assert canceled(g) == [(1, "Moonlit Ward")]
    assert sorted(pile(g, "discard")) == ["Eclipse", "Sticky Claws"]
    assert not g.s.ready[1]  # the canceled defend card does not ready Pearl
    end_turn(g)
    assert "Moonlit Ward" in hand(g, 1)
