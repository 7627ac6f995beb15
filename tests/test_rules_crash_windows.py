"""rules.md, "Crash windows": who is asked and in which order, hidden declarations, contests,
crashes on crashes, canceled cards."""

from collections import Counter

from builder import SNATCHABLE, Pos, asked, canceled, do, hand, hoard, labels, pile

SNATCH = "crash with Snatch (Ruby's innate crash)"


def asked_in_window(g):
    """Decline the open window(s) and list who was asked, in order."""
    seen = []
    while g.pending is not None and g.pending["kind"] == "crash":
        seen.append(g.pending["player"])
        g.apply(g.END)
    return seen


def test_event_window_asks_eligible_players_in_turn_order_from_the_active_player_flipper_included():
    # current player_2 flips an event; players 2, 3 and 1 hold event crashes, player_0 does not
    g = (Pos(4, ["Ruby", "Obsidian", "Amber", "Pearl"], current=2)
         .hand(0, "Sticky Claws", "Heist", "Eclipse").hand(1, "Daybreak", "Fair Trade", "Tidal Shift")
         .hand(2, "Shadow Veil", "Butterfingers", "Stargazing")
         .hand(3, "Hot Potato", "Wishing Well", "Second Helping")
         .tired(0).tired(1).tired(3).havok_top("Dragon Nap").build(flip=True))
    assert asked(g) == (2, "crash")
    assert labels(g) == ["decline to crash", "crash with Shadow Veil"]
    assert asked_in_window(g) == [2, 3, 1]
    assert g.s.ready[2] is False  # the event resolved for the flipper
    assert pile(g, "past_events") == ["Dragon Nap"]


def test_no_window_when_nobody_can_crash():
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(0, "Sticky Claws", "Heist", "Fair Trade")
         .hoard(1, "Knight's Helm").tired(1).tired(2).build())
    do(g, "play Sticky Claws", "target player_1")
    assert hoard(g, 0) == ["Bronze Talon", "Knight's Helm"]


def test_use_window_not_asked_to_the_user_and_only_eligible_players():
    # 4 players: player_0 steals from player_1. player_1 (Moonlit Ward), player_2 (Blinding Flash),
    # player_3 (Eclipse) may crash; player_0 holds Eclipse too but used its card.
    g = (Pos(4, ["Ruby", "Obsidian", "Amber", "Pearl"])
         .hand(0, "Sticky Claws", "Eclipse", "Heist").hand(1, "Moonlit Ward", "Fair Trade", "Tidal Shift")
         .hand(2, "Blinding Flash", "Stargazing", "Wishing Well")
         .hand(3, "Eclipse", "Second Helping", "Bait and Switch")
         .hoard(1, "Knight's Helm").tired(1).tired(2).tired(3).build())
    do(g, "play Sticky Claws", "target player_1")
    assert asked_in_window(g) == [1, 2, 3]


def test_moonlit_ward_holder_not_asked_when_another_hoard_is_targeted():
    g = (Pos(4, ["Ruby", "Obsidian", "Amber", "Pearl"])
         .hand(0, "Sticky Claws", "Wishing Well", "Heist")
         .hand(1, "Moonlit Ward", "Fair Trade", "Tidal Shift")
         .hand(2, "Blinding Flash", "Stargazing", "Bait and Switch")
         .hoard(3, "Knight's Helm").tired(1).tired(2).tired(3).build())
    do(g, "play Sticky Claws", "target player_3")
    assert asked_in_window(g) == [2]


def test_window_opens_after_targets_are_chosen_and_names_them():
    g = (Pos(2, ["Ruby", "Pearl"]).hand(0, "Sticky Claws", "Eclipse", "Heist")
         .hand(1, "Moonlit Ward", "Fair Trade", "Tidal Shift").hoard(1, "Knight's Helm", "Copper Kettle")
         .tired(1).build())
    do(g, "play Sticky Claws", "target player_1's Knight's Helm")
    assert asked(g) == (1, "crash")
    trig = g.pending["context"]["trigger"]
    assert trig["on"] == "use" and trig["user"] == 0 and trig["type"] == "steal"
    assert trig["owners"] == [1] and trig["picks"] == [g.cards.kind("Knight's Helm")]
    assert hoard(g, 1) == ["Copper Kettle", "Knight's Helm"]  # nothing happened yet


def test_crash_window_order_on_a_crash_starts_from_the_active_player():
    # player_0 (two cards allowed) steals from player_1, who crashes with Moonlit Ward; in the
    # window on the Moonlit Ward, Eclipse holders are asked from player_0 on; player_1 is not asked
    g = (Pos(4, ["Ruby", "Pearl", "Amber", "Obsidian"]).card_limit(0, 2)
         .hand(0, "Sticky Claws", "Eclipse", "Heist").hand(1, "Moonlit Ward", "Fair Trade", "Tidal Shift")
         .hand(2, "Eclipse", "Stargazing", "Wishing Well")
         .hand(3, "Smoke Bomb", "Blinding Flash", "Bait and Switch")
         .hoard(1, "Knight's Helm").tired(1).tired(2).tired(3).build())
    do(g, "play Sticky Claws", "target player_1")
    # first window (on Sticky Claws): player_1, player_2 (Eclipse), player_3 (Smoke Bomb, Flash)
    assert asked(g) == (1, "crash")
    do(g, "crash with Moonlit Ward")
    assert asked(g) == (2, "crash")
    do(g, "decline to crash")
    assert asked(g) == (3, "crash")
    assert sorted(labels(g)) == ["crash with Blinding Flash", "crash with Smoke Bomb",
                                 "decline to crash"]
    do(g, "decline to crash")
    # window on Moonlit Ward: only Eclipse ("crashes included") applies; player_3 has none
    assert g.pending["context"]["trigger"]["use"] == "crash"
    assert asked_in_window(g) == [0, 2]
    assert canceled(g) == [(0, "Sticky Claws")]


def test_only_eclipse_applies_to_a_crash():
    g = (Pos(3, ["Ruby", "Pearl", "Amber"])
         .hand(0, "Sticky Claws", "Heist", "Fair Trade")
         .hand(1, "Moonlit Ward", "Tidal Shift", "Wishing Well")
         .hand(2, "Blinding Flash", "Moonlit Ward", "Smoke Bomb", "Shadow Veil", "Eclipse",
               "Finders Keepers", "Hot Potato")
         .hoard(1, "Knight's Helm").hoard(2, "Silver Spoons").tired(1).tired(2).build())
    do(g, "play Sticky Claws", "target player_1")
    assert asked(g) == (1, "crash")
    do(g, "crash with Moonlit Ward")
    assert asked(g) == (2, "crash")
    assert sorted(labels(g)) == ["crash with Blinding Flash", "crash with Eclipse",
                                 "crash with Smoke Bomb", "decline to crash"]
    do(g, "decline to crash")
    assert asked(g) == (2, "crash")
    assert labels(g) == ["decline to crash", "crash with Eclipse"]


def test_chain_eclipse_on_eclipse():
    # player_1's Moonlit Ward is Eclipsed by player_2, whose Eclipse is Eclipsed by player_3:
    # the Moonlit Ward resolves and the steal is canceled
    g = (Pos(4, ["Ruby", "Pearl", "Amber", "Obsidian"])
         .hand(0, "Sticky Claws", "Heist", "Fair Trade")
         .hand(1, "Moonlit Ward", "Tidal Shift", "Wishing Well")
         .hand(2, "Eclipse", "Stargazing", "Second Helping")
         .hand(3, "Eclipse", "Bait and Switch", "Grave Robbing")
         .hoard(1, "Knight's Helm").tired(1).tired(2).tired(3).build())
    do(g, "play Sticky Claws", "target player_1", "crash with Moonlit Ward")
    do(g, "decline to crash", "decline to crash")  # players 2 and 3 on the Sticky Claws
    do(g, "crash with Eclipse")  # player_2 on the Moonlit Ward
    assert asked(g) == (3, "crash")
    do(g, "decline to crash")  # player_3 on the Moonlit Ward
    assert asked(g) == (3, "crash")
    assert g.pending["context"]["trigger"]["user"] == 2
    do(g, "crash with Eclipse")  # player_3 on player_2's Eclipse
    assert g.pending is None or g.pending["kind"] != "crash"
    assert hoard(g, 1) == ["Knight's Helm"]
    assert sorted(canceled(g)) == [(0, "Sticky Claws"), (2, "Eclipse")]
    assert g.s.ready[1]  # Moonlit Ward resolved: Pearl's ready condition


def test_declarations_are_hidden_until_the_window_closes():
    def position():
        return (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(0, "Sticky Claws", "Heist", "Fair Trade")
                .hand(1, "Shadow Veil", "Tidal Shift", "Wishing Well")
                .hand(2, "Daybreak", "Stargazing", "Second Helping")
                .tired(1).tired(2).havok_top("Dragon Nap").build(flip=True))
    a, b = position(), position()
    do(a, "crash with Shadow Veil")
    do(b, "decline to crash")
    assert asked(a) == asked(b) == (2, "crash")
    assert a.pending == b.pending
    # what player_2 may see of the game does not depend on player_1's declaration
    from havok_env.view import SeatView
    va, vb = SeatView(a, 2), SeatView(b, 2)
    assert va.hand == vb.hand and va.pending == vb.pending
    assert [va.hand_size(p) for p in range(3)] == [vb.hand_size(p) for p in range(3)]
    assert va.discard == vb.discard and va.scores() == vb.scores()


def test_contest_seeded_random_winner_loser_canceled_returns_at_end_of_turn():
    winners = Counter()
    for seed in range(40):
        g = (Pos(3, ["Ruby", "Obsidian", "Pearl"], seed=seed).hand(0, "Sticky Claws", "Heist", "Fair Trade")
             .hand(1, "Hot Potato", "Tidal Shift", "Wishing Well")
             .hand(2, "Daybreak", "Stargazing", "Bait and Switch")
             .tired(1).tired(2).havok_top("Dragon Nap", "Royal Scepter").build(flip=True))
        do(g, "crash with Hot Potato", "crash with Daybreak")
        if g.pending is not None and g.pending["kind"] == "crash":
            do(g, "decline to crash")  # nobody else may crash the winner's crash here
        # exactly one resolved; the other was canceled and will come back at end of turn
        if canceled(g) == [(1, "Hot Potato")]:
            winners["Daybreak"] += 1
            assert "Daybreak" in pile(g, "discard")
        else:
            assert canceled(g) == [(2, "Daybreak")]
            winners["Hot Potato"] += 1
            assert "Hot Potato" in pile(g, "discard")
        assert g.s.cards_used[1] == g.s.cards_used[2] == 1
        assert len(hand(g, 1)) == len(hand(g, 2)) == 3  # both refilled
        loser, card = canceled(g)[0]
        do(g, "end the turn")
        assert card in hand(g, loser) and len(hand(g, loser)) == 4
    assert winners["Daybreak"] > 5 and winners["Hot Potato"] > 5


def test_contest_is_deterministic_for_a_seed():
    def run(seed):
        g = (Pos(3, ["Ruby", "Obsidian", "Amber"], seed=seed)
             .hand(1, "Hot Potato", "Tidal Shift", "Wishing Well")
             .hand(2, "Daybreak", "Stargazing", "Bait and Switch").tired(1).tired(2)
             .havok_top("Dragon Nap", "Royal Scepter").build(flip=True))
        do(g, "crash with Hot Potato", "crash with Daybreak")
        return g.snapshot()
    for seed in range(5):
        assert run(seed) == run(seed)


def test_contest_three_way_each_can_win():
    winners = Counter()
    for seed in range(60):
        g = (Pos(4, ["Ruby", "Obsidian", "Amber", "Pearl"], seed=seed)
             .hand(1, "Shadow Veil", "Tidal Shift", "Wishing Well")
             .hand(2, "Daybreak", "Stargazing", "Bait and Switch")
             .hand(3, "Shadow Veil", "Second Helping", "Grave Robbing")
             .hoard(0, "Bronze Talon", "Copper Kettle").tired(0).tired(1).tired(2).tired(3)
             .havok_top("Tribute", "Royal Scepter").build(flip=True))
        do(g, "crash with Shadow Veil", "crash with Daybreak", "crash with Shadow Veil")
        lost = {p for p, _ in canceled(g)}
        assert len(lost) == 2
        winners[({1, 2, 3} - lost).pop()] += 1
    assert set(winners) == {1, 2, 3}


def test_losing_innate_crash_is_not_used():
    # Ruby's Snatch against Obsidian's Finders Keepers on a treasure Amber flips
    outcomes = set()
    for seed in range(30):
        g = (Pos(3, ["Ruby", "Obsidian", "Amber"], seed=seed, current=2)
             .hand(0, "Heist", "Tidal Shift", "Wishing Well")
             .hand(1, "Finders Keepers", "Fair Trade", "Grave Robbing")
             .tired(1).havok_top(SNATCHABLE).build(flip=True))
        do(g, SNATCH, "crash with Finders Keepers")
        while g.pending is not None and g.pending["kind"] == "crash":
            do(g, "decline to crash")
        if SNATCHABLE in hoard(g, 0):  # Snatch won
            outcomes.add("snatch")
            assert not g.s.ready[0] and g.s.innate_used[0]
            assert canceled(g) == [(1, "Finders Keepers")]
        else:
            outcomes.add("finders")
            assert SNATCHABLE in hoard(g, 1)
            assert g.s.ready[0] and not g.s.innate_used[0]  # the losing innate crash was not used
            assert canceled(g) == []
    assert outcomes == {"snatch", "finders"}


def test_canceled_card_with_smoke_bomb_bonus_goes_to_discard_not_back():
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Sticky Claws", "Heist", "Fair Trade")
         .hand(1, "Smoke Bomb", "Tidal Shift", "Wishing Well").hoard(1, "Knight's Helm", "Silver Spoons")
         .tired(1).havok_top("Royal Scepter").build())
    do(g, "play Sticky Claws", "target player_1's Knight's Helm", "crash with Smoke Bomb")
    assert canceled(g) == []
    assert sorted(pile(g, "discard")) == ["Smoke Bomb", "Sticky Claws"]
    do(g, "end the turn")
    assert "Sticky Claws" not in hand(g, 0)


def test_canceled_innate_ability_still_tires():
    g = (Pos(2, ["Obsidian", "Pearl"]).hoard(1, "Silver Spoons")
         .hand(1, "Eclipse", "Tidal Shift", "Wishing Well").build())
    do(g, "use Crumble (Obsidian's innate play)")
    assert asked(g) == (1, "crash")
    assert sorted(labels(g)) == ["crash with Eclipse", "crash with Moonward (Pearl's innate crash)",
                                 "decline to crash"]
    do(g, "crash with Eclipse")
    assert hoard(g, 1) == ["Silver Spoons"]
    assert not g.s.ready[0] and g.s.innate_used[0]
    assert canceled(g) == []  # no card to return


def test_crash_window_is_never_skipped_even_with_one_crash_option():
    g = Pos(2, ["Ruby", "Amber"], current=1).havok_top(SNATCHABLE).build(flip=True)
    assert asked(g) == (0, "crash")
    assert len(g.legal_actions()) == 2
