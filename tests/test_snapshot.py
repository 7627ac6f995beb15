"""Snapshots (architecture.md): the required fields, card conservation, exact restore, pending
decision re-derived from the stack, clone and replay; and the position builder itself."""

import copy
import json
import pickle
import random
from collections import Counter

import pytest
from builder import FULL_SET, Pos, asked, count_cards, do, hand, hoard, labels, pile

from havok_env import Game, SnapshotError
from havok_env.engine import ArgumentError


def random_game(seed, n, steps):
    rng = random.Random(seed)
    g = Game(n, seed=seed)
    actions = []
    for _ in range(steps):
        if g.is_over:
            break
        a = rng.choice(g.legal_actions())
        g.apply(a)
        actions.append(a)
    return g, actions


def test_snapshot_fields():
    g, _ = random_game(1, 3, 10)
    d = g.snapshot()
    json.dumps(d)
    for key in ("havok_deck", "hijinks_deck", "discard", "past_events", "trash", "in_play",
                "players", "current_player", "turn", "pending", "result"):
        assert key in d, key
    assert d["turn"] >= 1
    assert d["result"] is None
    for pl in d["players"]:
        for key in ("dragon", "ready", "hand", "hoard", "score"):
            assert key in pl
        assert all(isinstance(x, str) for x in pl["hand"] + pl["hoard"])
    for key in ("player", "kind", "context"):
        assert key in d["pending"]
    assert count_cards(g) == FULL_SET


def test_snapshot_after_the_end():
    rng = random.Random(2)
    g = Game(2, seed=2)
    while not g.is_over:
        g.apply(rng.choice(g.legal_actions()))
    d = json.loads(json.dumps(g.snapshot()))
    assert d["pending"] is None
    assert d["result"]["winners"] and d["result"]["reason"] in ("hoard_15", "havok_empty")
    h = Game.from_snapshot(d)
    assert h.is_over and h.result == g.result and h.snapshot() == g.snapshot()
    assert h.rewards() == g.rewards()


def test_from_snapshot_restores_exactly_and_continues_identically():
    for seed in range(20):
        g, _ = random_game(seed, 2 + seed % 3, 5 + seed)
        d = json.loads(json.dumps(g.snapshot()))
        h = Game.from_snapshot(d)
        assert json.dumps(h.snapshot()) == json.dumps(g.snapshot())  # the same JSON, byte for byte
        rng = random.Random(seed)
        while not g.is_over:
            a = rng.choice(g.legal_actions())
            g.apply(a)
            h.apply(a)
        assert h.snapshot() == g.snapshot()


def test_from_snapshot_derives_a_null_pending_decision_and_checks_a_given_one():
    g, _ = random_game(4, 3, 6)
    d = json.loads(json.dumps(g.snapshot()))
    d["pending"] = None  # a hand-edited position: the engine derives the decision
    h = Game.from_snapshot(d)
    assert h.snapshot() == g.snapshot()
    d["pending"] = g.snapshot()["pending"]
    d["pending"]["choices"] = d["pending"]["choices"][:-1]
    with pytest.raises(SnapshotError, match=r"snapshot pending: does not match the position, "
                                            r"which asks player \d's \w+ decision"):
        Game.from_snapshot(d)


def test_snapshot_with_log():
    g = Game(2, seed=9, log=True)
    rng = random.Random(0)
    for _ in range(10):
        g.apply(rng.choice(g.legal_actions()))
    d = g.snapshot()
    assert isinstance(d["log"], list) and d["log"]
    assert Game.from_snapshot(json.loads(json.dumps(d))).snapshot() == d


def test_trade_context_names_the_treasure_taken_and_survives_a_restore():
    # regression: the pending context of the "give" question named no picks in play, but the
    # taken treasure after a restore, so a snapshot did not restore exactly
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Fair Trade", "Eclipse", "Heist")
         .hoard(0, "Bronze Talon", "Silver Spoons").hoard(1, "King's Crown", "Gold Chalice")
         .tired(1).build())
    do(g, "play Fair Trade", "target player_1's King's Crown")
    assert asked(g) == (0, "trade_give")
    assert g.pending["context"]["picks"] == [g.cards.kind("King's Crown")]
    d = json.loads(json.dumps(g.snapshot()))
    assert Game.from_snapshot(d).snapshot() == g.snapshot()


def test_heist_second_pick_context_and_restore():
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Heist", "Eclipse", "Fair Trade")
         .hoard(1, "Silver Spoons", "Bag of Coins", "Copper Kettle").tired(1).build())
    do(g, "play Heist", "target player_1's Silver Spoons")
    assert asked(g) == (0, "steal_pick")
    assert g.pending["context"]["picks"] == [g.cards.kind("Silver Spoons")]
    d = json.loads(json.dumps(g.snapshot()))
    assert Game.from_snapshot(d).snapshot() == g.snapshot()


def test_snapshot_mid_window_and_mid_effect():
    # inside a crash window, with a declaration made but hidden
    g = (Pos(3, ["Ruby", "Obsidian", "Pearl"]).hand(1, "Shadow Veil", "Tidal Shift", "Wishing Well")
         .hand(2, "Daybreak", "Stargazing", "Second Helping").tired(1).tired(2)
         .havok_top("Dragon Nap").build(flip=True))
    do(g, "crash with Shadow Veil")
    d = json.loads(json.dumps(g.snapshot()))
    h = Game.from_snapshot(d)
    assert h.snapshot() == g.snapshot()
    do(g, "crash with Daybreak")
    do(h, "crash with Daybreak")
    assert h.snapshot() == g.snapshot()
    # inside Tidal Shift, after the first choice
    g = (Pos(3, ["Ruby", "Obsidian", "Amber"]).hand(0, "Tidal Shift", "Eclipse", "Heist")
         .hoard(0, "Bronze Talon", "Gold Chalice").hoard(1, "Copper Kettle", "King's Crown")
         .hoard(2, "Silver Spoons", "Royal Scepter").tired(1).tired(2).build())
    do(g, "play Tidal Shift", "pass your Gold Chalice")
    h = Game.from_snapshot(json.loads(json.dumps(g.snapshot())))
    assert h.snapshot() == g.snapshot()
    for x in (g, h):
        do(x, "pass your King's Crown", "pass your Silver Spoons")
    assert h.snapshot() == g.snapshot()
    assert hoard(g, 1) == ["Copper Kettle", "Gold Chalice"]


def test_known_top_survives_a_restore():
    g = (Pos(2, ["Pearl", "Ruby"]).hand(0, "Heist", "Eclipse", "Sticky Claws")
         .havok_top("Dragon Nap", "Gold Chalice", "Tribute").build())
    do(g, "use Foresight (Pearl's innate play)", "keep the order")
    d = json.loads(json.dumps(g.snapshot()))
    assert d["players"][0]["known_top"] == ["Dragon Nap", "Gold Chalice", "Tribute"]
    assert Game.from_snapshot(d).snapshot()["players"][0]["known_top"] == d["players"][0]["known_top"]


def test_a_card_both_canceled_and_resolving_survives_a_restore_and_a_pickle():
    # Dragon Nap, Shadow Veil crashing it and Eclipse crashing that resolve, while a second
    # Shadow Veil, which lost the contest, waits canceled: the restore once read the canceled
    # copy back after Eclipse and wrote the resolving cards in another order
    g = Game(4, seed=32576)
    for a in [0, 9, 9, 20, 0]:
        g.apply(a)
    d = g.snapshot()
    assert d["in_play"] == {"resolving": ["Dragon Nap", "Shadow Veil", "Eclipse"],
                            "canceled": [[3, "Shadow Veil"]]}
    copies = [Game.from_snapshot(json.loads(json.dumps(d))), pickle.loads(pickle.dumps(g)),
              pickle.loads(pickle.dumps(Game.from_snapshot(d))), copy.deepcopy(g)]
    for h in copies:
        assert h.snapshot() == d
    rng = random.Random(0)
    while not g.is_over:
        a = rng.choice(g.legal_actions())
        for x in (g, *copies):
            x.apply(a)
    assert all(h.snapshot() == g.snapshot() for h in copies)


def test_clone_is_exact_and_independent():
    g, _ = random_game(6, 4, 12)
    c = g.clone()
    assert c.snapshot() == g.snapshot()
    rng = random.Random(1)
    before = g.snapshot()
    while not c.is_over:
        c.apply(rng.choice(c.legal_actions()))
    assert g.snapshot() == before


def test_record_and_replay_as_json_lines():
    g, actions = random_game(7, 3, 40)
    rec = g.record()
    assert rec["actions"] == actions
    line = json.dumps(rec)
    assert "\n" not in line
    h = Game.replay(json.loads(line))
    assert h.snapshot() == g.snapshot()
    assert rec["seed"] == 7 and rec["options"]["num_players"] == 3


def test_replay_with_configured_dragons():
    g = Game(2, ["Amber", "Pearl"], seed=3)
    rng = random.Random(3)
    actions = []
    for _ in range(15):
        if g.is_over:
            break
        a = rng.choice(g.legal_actions())
        g.apply(a)
        actions.append(a)
    assert g.record()["actions"] == actions
    h = Game.replay(json.loads(json.dumps(g.record())))
    assert h.snapshot() == g.snapshot()
    assert [h.dragon(p).name for p in range(2)] == ["Amber", "Pearl"]


# -- the position builder -----------------------------------------------------------------------


def test_builder_places_cards_and_conserves_the_set():
    g = (Pos(4, current=2, turn=7).hand(1, "Eclipse", "Eclipse").hoard(3, "King's Crown", "Moonstone")
         .trash("Gold Chalice").discard("Heist").past_events("Tribute")
         .havok_top("Dragon Nap", "Copper Kettle").hijinks_top("Daybreak").tired(3).build())
    assert count_cards(g) == FULL_SET
    g.check_cards()
    assert hand(g, 1) == ["Eclipse", "Eclipse"]
    assert hoard(g, 3) == ["King's Crown", "Moonstone"]
    assert hoard(g, 0) == ["Bronze Talon"]
    assert pile(g, "trash") == ["Gold Chalice"] and pile(g, "discard") == ["Heist"]
    assert pile(g, "past_events") == ["Tribute"]
    assert pile(g, "havok")[:2] == ["Dragon Nap", "Copper Kettle"]
    assert pile(g, "hijinks")[0] == "Daybreak"
    assert g.s.ready == [True, True, True, False]
    assert g.current_player == 2 and g.s.turn == 7
    assert asked(g) == (2, "main")
    # filler hands hold no crash cards
    from builder import CRASHES
    assert not set(hand(g, 0)) & CRASHES and len(hand(g, 0)) == 3


def test_builder_flip_starts_the_turn():
    g = Pos(2, current=1, turn=2).havok_top("Royal Scepter").build(flip=True)
    assert g.s.turn == 2 and hoard(g, 1) == ["Bronze Talon", "Royal Scepter"]
    assert asked(g) == (1, "main")


def test_builder_rejects_impossible_positions():
    import pytest
    with pytest.raises(ValueError, match="no copy of 'Heist'"):
        Pos(2).hand(0, "Heist", "Heist").build()
    with pytest.raises(ValueError, match="not a treasure"):
        Pos(2).hoard(0, "Heist").build()


def test_builder_card_counts_from_snapshot():
    d = Pos(3).snapshot()
    c = Counter()
    for key in ("havok_deck", "hijinks_deck", "discard", "past_events", "trash"):
        c.update(d[key])
    for pl in d["players"]:
        c.update(pl["hand"] + pl["hoard"])
    assert c == FULL_SET
    assert labels(Game.from_snapshot(d))


def test_the_core_refuses_a_crash_window_that_asks_more_seats_than_a_game_has():
    # a window keeps at most one entry per seat; a frame written with more (through the state's
    # writable view, which only the snapshot checks stand before) is refused, not overrun
    from havok_env import _core

    g, rng = Game(2, seed=0), random.Random(0)
    while g.pending["purpose"] != "crash":
        g.apply(rng.choice(g.legal_actions()))
    stack = g.s.stack
    stack[-1]["order"] = [stack[-1]["order"][0]] * 5
    with pytest.raises(_core.CoreError, match="^a crash window asks more seats than there are$"):
        g.s.stack = stack


def test_the_core_refuses_a_crash_window_with_more_declarations_than_seats():
    # a seat declares at most once in a window; a window that closes on more is refused with
    # the project's error, before any declared card is taken from a hand
    g, rng = Game(2, seed=0), random.Random(0)
    while g.pending["purpose"] != "crash":
        g.apply(rng.choice(g.legal_actions()))
    stack = g.s.stack
    seat, choices = stack[-1]["order"][0]
    stack[-1]["decl"] = [[seat, choices[0]]] * 5
    g.s.stack = stack
    with pytest.raises(SnapshotError, match="^the game cannot go on from this position: bad crash window$"):
        g.apply(g.END)


def test_unpickled_games_share_the_standard_card_set_and_its_tables():
    # each unpickled game once brought a copy of the card set, whose tables were built and kept
    # for good: a worker unpickling games grew by gigabytes
    from havok_env import engine

    g = Game(3, seed=4)
    before = len(engine._TABLES)
    copies = [pickle.loads(pickle.dumps(g)) for _ in range(20)]
    assert all(h.cards is g.cards and h.snapshot() == g.snapshot() for h in copies)
    assert len(engine._TABLES) == before


# -- records: how a game is saved, exchanged and pickled --------------------------------------


def test_a_game_is_pickled_as_its_record_and_comes_back_the_same():
    from havok_env import engine

    g = Game(3, ["Amber", None, "Pearl"], seed=11, log=True)
    g2, actions = random_game(12, 4, 30)
    for game in (g, g2):
        fn, args = game.__reduce__()
        assert fn is engine._replay and args[0] == game.record()
        copy_ = pickle.loads(pickle.dumps(game))
        assert copy_.snapshot() == game.snapshot() and copy_.record() == game.record()
    assert g2.record()["actions"] == actions
    assert pickle.loads(pickle.dumps(g)).s.log == g.s.log != []  # the log comes back with the game
    # far smaller than the snapshot it was pickled as before
    assert len(pickle.dumps(g2)) * 4 < len(pickle.dumps(g2.snapshot()))


def test_a_game_without_a_record_is_pickled_as_its_snapshot():
    from havok_env import engine

    g, _ = random_game(5, 2, 12)
    assert g.clone().record() == g.record()
    restored = Game.from_snapshot(g.snapshot())
    written = g.clone()
    written.s.havok = written.s.havok[::-1]  # another order of the same cards
    for game in (restored, written):
        with pytest.raises(ArgumentError, match="^this game has no record"):
            game.record()
        fn, _ = game.__reduce__()
        assert fn is engine._restore
        assert pickle.loads(pickle.dumps(game)).snapshot() == game.snapshot()
    # a record, once lost, is not regained by playing on
    written.apply(written.legal_actions()[0])
    with pytest.raises(ArgumentError, match="^this game has no record"):
        written.record()


def test_a_move_watched_at_its_chance_points_is_recorded_unless_an_outcome_was_forced():
    g = Game(2, seed=8)
    while True:  # moves watched as dealt are recorded, up to one with a flip
        a = g.legal_actions()[-1]
        h = g.clone()
        points, stopped = h.run_chance(a)
        assert not stopped and h.record()["actions"] == g.record()["actions"] + [a]
        assert Game.replay(h.record()).snapshot() == h.snapshot()
        flips = [i for i, p in enumerate(points) if p.kind == "flip" and p.range > 1]
        if flips:
            break
        assert not h.is_over
        g = h
    i = flips[0]
    forced = g.clone()
    forced.run_chance(a, force=[(i, points[i].range - 1)])
    stopped_game = g.clone()
    stopped_game.run_chance(a, stop=i)
    for game in (forced, stopped_game):
        with pytest.raises(ArgumentError, match="^this game has no record"):
            game.record()
