"""What a participant's page receives: only what its seat may know (compared across worlds that
differ in what the seat cannot see, as the observation tests do), and the decision as the terminal
player words it."""

from __future__ import annotations

import random

from arena import payload
from havok_env.engine import Game
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
            assert [c["label"] for c in dec["choices"]] == [game.action_label(a) for a in game.legal_actions()]
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
