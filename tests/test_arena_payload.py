"""What a participant's page receives: only what its seat may know (compared across worlds that
differ in what the seat cannot see, as the observation tests do), and the decision as the terminal
player words it."""

from __future__ import annotations

import random

from arena import payload
from havok_env.decisions import DECISIONS
from havok_env.engine import Game
from havok_env.render import choice_label
from havok_env.view import SeatView


def _labels(n: int, seat: int) -> list[str]:
    return ["you" if p == seat else "bot" for p in range(n)]


def test_payloads_hold_no_hidden_information():
    """Other hands, the decks' order, hidden declarations and the generator are resampled by
    ``determinize``; every seat's payload (table, decision, log, result) stays the same."""
    checked = crash_checked = 0
    for seed in range(30):
        n = 2 + seed % 3
        game = Game(n, seed=seed, log=True)
        rng = random.Random(seed)
        while not game.is_over:
            if rng.random() < 0.3:
                for seat in range(n):
                    view = SeatView(game, seat)
                    mine = payload.seat_payload(view, _labels(n, seat))
                    for _ in range(2):
                        other = view.determinize(random.Random(rng.getrandbits(32)))
                        assert payload.seat_payload(SeatView(other, seat), _labels(n, seat)) == mine
                    checked += 1
                    crash_checked += game.pending["purpose"] == "crash"
            game.apply(rng.choice(game.legal_actions()))
        for seat in range(n):  # the end of the game too
            view = SeatView(game, seat)
            assert payload.seat_payload(view, _labels(n, seat))["result"] is not None
    assert checked > 900 and crash_checked > 50


def test_payloads_change_with_what_the_seat_can_see():
    """The comparison above can fail: swapping a card of the seat's own hand changes its payload."""
    game = Game(2, seed=4, log=True)
    seat = game.to_act
    d = game.snapshot()
    hand = d["players"][seat]["hand"]
    before = sorted(hand)
    swap = next(c for c in d["hijinks_deck"] if c not in hand)
    d["hijinks_deck"].remove(swap)
    d["hijinks_deck"].append(hand[0])
    hand[0] = swap
    d["pending"] = None  # the changed hand changes the choices: derive them
    changed = Game.from_snapshot(d)
    labels = _labels(2, seat)
    assert payload.seat_payload(SeatView(game, seat), labels) != \
        payload.seat_payload(SeatView(changed, seat), labels)
    assert sorted(c["name"] for c in payload.table(SeatView(game, seat), labels)["hand"]) == before


def test_decisions_are_the_legal_choices_labelled_and_crash_windows_name_their_target():
    seen = set()
    for seed in range(200):
        game = Game(2 + seed % 3, seed=seed, log=True)
        rng = random.Random(seed)
        while not game.is_over:
            seat = game.to_act
            dec = payload.decision(SeatView(game, seat))
            assert [c["action"] for c in dec["choices"]] == game.legal_actions()
            assert [c["label"] for c in dec["choices"]] == \
                [choice_label(SeatView(game, seat), a) for a in game.legal_actions()]
            for s in range(game.num_players):
                assert (payload.decision(SeatView(game, s)) is None) == (s != seat)
            trig = game.pending["context"].get("trigger") or {}
            if dec["crash"] and trig.get("on") == "use" and trig.get("picks"):
                target = game.cards.names[trig["picks"][0]]
                assert "Will you crash?" in dec["question"] and target in dec["question"]
                name = game.ability(trig["ability"]).name
                assert name in dec["question"] and dec["detail"].startswith(name + ": ")
                seen.add("use")
            elif dec["crash"] and trig.get("on") == "event":
                name = game.cards.names[trig["card"]]
                assert name in dec["question"] and game.cards.texts[trig["card"]] in dec["detail"]
                seen.add("event")
            elif dec["crash"] and trig.get("on") == "treasure":
                assert game.cards.names[trig["card"]] in dec["question"]
                seen.add("treasure")
            assert "A crash window is open" not in dec["question"]
            game.apply(rng.choice(game.legal_actions()))
    assert seen == {"use", "event", "treasure"}


def test_a_choice_that_names_a_treasure_says_its_worth_where_it_lies():
    """A steal, break or trade names the treasure with its worth in its owner's hoard, a salvage or
    a card shown from the Havok deck with its printed value (it is in no hoard): what a card's
    "worth 3 or less" means."""
    seen = set()
    for seed in range(300):
        game = Game(2, seed=seed, log=True)
        rng = random.Random(seed)
        while not game.is_over:
            view = SeatView(game, game.to_act)
            p = game.pending
            for a in p["choices"]:
                label = choice_label(view, a)
                shown = p["context"].get("shown") or []
                if view.is_option(a) and "{card}" in (DECISIONS[p["purpose"]].option or "") \
                        and view.option_of(a) < len(shown) and game.cards.is_treasure(shown[view.option_of(a)]):
                    k = shown[view.option_of(a)]  # a treasure shown from the Havok deck: its printed value
                    assert label == f"{view.action_label(a)} (worth {game.cards.value[k]})"
                    seen.add("shown")
                    continue
                if not view.is_treasure(a):
                    assert "(worth" not in label
                    continue
                k = view.treasure_of(a)
                owner = view.seat if DECISIONS[p["purpose"]].own_hoard else p["context"].get("target")
                worth = game.cards.value[k] if owner is None else view.value(owner, k)
                assert label == f"{view.action_label(a)} (worth {worth})"
                seen.add(p["purpose"])
                if owner is not None and worth != game.cards.value[k]:
                    seen.add("affinity counted")
            game.apply(rng.choice(p["choices"]))
        if {"steal_pick", "salvage_pick", "trade_give", "affinity counted", "shown"} <= seen:
            break
    assert {"steal_pick", "salvage_pick", "trade_give", "affinity counted", "shown"} <= seen, seen


def test_log_lines_give_each_treasure_they_name_its_worth():
    from havok_env import Game
    from havok_env.render import log_with_worth
    cs = Game(2, seed=3).cards
    treasures = [k for k in range(len(cs.names)) if cs.is_treasure(k)]
    longest = max(treasures, key=lambda k: len(cs.names[k]))
    a, b = treasures[0], treasures[1]
    lines = [f"player_1 flips {cs.names[a]}", f"{cs.names[b]} (worth 9) stays", "player_0 passes",
             f"player_0 takes {cs.names[longest]}"]
    assert log_with_worth(cs, lines) == [
        f"player_1 flips {cs.names[a]} (worth {cs.value[a]})",
        f"{cs.names[b]} (worth 9) stays",  # said already: not said twice
        "player_0 passes",
        f"player_0 takes {cs.names[longest]} (worth {cs.value[longest]})"]
