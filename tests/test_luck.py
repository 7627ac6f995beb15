"""The luck-corrected estimator (evaluation/): every chance event found, every outcome exact, each
correction zero on average over the outcomes, and nothing read but the replay."""

import json
import os
import random
import threading

import numpy as np
import pytest

import evaluation.report
import evaluation.tournament
from agents import make_agent
from agents.runner import play_game
from evaluation import chance, luck
from agents.value import DATA, ModelFileError, ValueModel, features, layout
from havok_env.cards import default_cards
from havok_env.engine import Game
from havok_env.state import rng_next

CARDS = default_cards()


def record(specs, seed, dragons=None):
    r = play_game([make_agent(s) for s in specs], seed=seed, dragons=dragons)
    return {k: r[k] for k in ("seed", "options", "actions")}


def flat(mean_and_ci):
    """(mean, [lo, hi]) as one flat list, for pytest.approx."""
    return [mean_and_ci[0], *mean_and_ci[1]]


def random_model(seed=0):
    """Any fixed value function keeps the corrections' mean zero: a random network will do."""
    rng = np.random.default_rng(seed)
    size = layout().size
    return ValueModel([(rng.normal(0, 0.2, (size, 16)), rng.normal(0, 0.1, 16)),
                       (rng.normal(0, 0.5, (16, 1)), np.zeros(1))], {})


def key(after):
    """What a value function may read of a state after an outcome (or the final rewards)."""
    if not isinstance(after, tuple):
        return ("end", after)
    s, top = after
    return (s.havok[:top], sorted(s.havok), sorted(s.hijinks), s.hands, s.hoards, s.discard, s.trash,
            s.past_events, s.in_play, s.ready, s.turn, s.current, s.cards_used, s.card_limit,
            s.innate_used, s.restricted, s.canceled, s.stack, s.dragons, s.result, top)


def deck_sizes(players):
    """The Havok and Hijinks decks once the deal is done."""
    havok = sum(CARDS.copies[k] for k in range(CARDS.first_hijinks)) - players  # a Bronze Talon each
    hijinks = sum(CARDS.copies[k] for k in range(CARDS.first_hijinks, CARDS.n_kinds)) - 3 * players
    return havok, hijinks


GAMES = [(("random", "heuristic"), 1, None), (("heuristic", "random"), 2, ["Pearl", "Ruby"]),
         (("random", "random", "heuristic"), 3, None), (("heuristic",) * 4, 4, None),
         (("random",) * 4, 5, ["moonlight", None, "fire", None]), (("random", "random"), 6, None)]


@pytest.mark.parametrize("specs,seed,dragons", GAMES)
def test_the_outcome_that_happened_is_the_state_the_replay_reached(specs, seed, dragons):
    rec = record(specs, seed, dragons)
    tr = chance.trace(rec, [i for i, s in enumerate(specs) if s == "random"], check=True)
    assert tr.rewards == Game.replay(rec).rewards()
    kinds = {ev.kind for ev in tr.events}
    assert {"deal", "first_player", "flip", "draw"} <= kinds
    assert ("decision" in kinds) == ("random" in specs) and ("dragons" in kinds) == (dragons != ["Pearl", "Ruby"])
    for ev in tr.events:
        assert len(ev.after) == len(ev.outcomes) == len(ev.weights) and min(ev.weights) > 0
        assert ev.immediate == (ev.kind == "draw" or ev.kind == "flip" and CARDS.is_treasure(ev.outcomes[ev.actual]))
        truth = tr.just_after[id(ev)] if ev.immediate else tr.points[ev.node + 1]
        assert key(ev.after[ev.actual]) == key(truth), ev


def test_flip_draw_and_deal_weights_count_the_unseen_cards():
    rec = record(("heuristic", "heuristic"), 11)
    tr = chance.trace(rec)
    first_flip = next(ev for ev in tr.events if ev.kind == "flip")
    assert first_flip.total == deck_sizes(2)[0]
    deal = [ev for ev in tr.events if ev.kind == "deal"]
    assert [ev.total for ev in deal] == list(range(40, 34, -1))
    assert [ev.seat for ev in deal] == [0, 1] * 3
    first_player = next(ev for ev in tr.events if ev.kind == "first_player")
    assert first_player.outcomes == [0, 1] and first_player.weights == [1, 1]


def test_tracing_leaves_seeded_games_as_they_were():
    before = Game(3, seed=99).snapshot()
    rec = record(("random", "heuristic", "random"), 99)
    chance.trace(rec, [0, 2])
    assert Game(3, seed=99).snapshot() == before
    replayed = Game.replay(rec)
    assert json.dumps(replayed.snapshot()) == json.dumps(Game.replay(rec).snapshot())


# -- every outcome enumerated: the corrections average to zero ---------------------------------------


def correction_table(rec, pick, arrange, model, random_seats=(), advance=None, deeper=None, depth=1):
    """(outcomes, weights, values after each outcome, correction) of the event ``pick`` chooses
    in ``rec`` played with the decks as ``arrange`` leaves them."""
    tr = chance.trace(rec, random_seats, arrange=arrange, advance=advance, deeper=deeper, depth=depth)
    ev = pick(tr.events)
    values = luck._values(model, ev.after, tr.num_players)
    p = np.asarray(ev.weights, float) / ev.total
    return ev.outcomes, ev.weights, values, values[ev.actual] - p @ values


def assert_mean_zero(tables, probabilities=None):
    outcomes, weights, values, _ = tables[0]
    for o, w, v, _ in tables[1:]:
        assert o == outcomes and w == weights and np.array_equal(v, values)
    corr = np.array([t[3] for t in tables])
    p = np.full(len(tables), 1 / len(tables)) if probabilities is None else np.asarray(probabilities)
    assert np.all(np.abs(p @ corr) < 1e-9)
    assert np.abs(corr).max() > 1e-6  # the outcomes did matter (far beyond the rounding allowed above)


def swap(deck: str, at: int, j: int):
    """An ``arrange`` that swaps the cards at ``at`` and ``j`` of the Havok or Hijinks deck."""
    def arrange(s):
        cards = getattr(s, deck)
        cards[at], cards[j] = cards[j], cards[at]
    return arrange


def first(kind: str):
    """Picks the first event of ``kind``."""
    return lambda evs: next(ev for ev in evs if ev.kind == kind)


@pytest.mark.parametrize("players", [2, 4])
def test_first_flip_corrections_average_to_zero_over_every_deck_position(players):
    """Every position of the shuffled Havok deck is equally likely to come up first: with the card
    there swapped to the top in turn, the correction of the first flip averages to exactly zero."""
    rec = {"seed": 20 + players, "options": {"num_players": players, "dragons": None}, "actions": []}
    model = random_model(players)
    size = deck_sizes(players)[0]
    tables = [correction_table(rec, first("flip"), swap("havok", 0, j), model) for j in range(size)]
    assert_mean_zero(tables)


def test_the_seats_values_sum_as_the_rewards_do():
    rec = record(("heuristic", "random"), 8)
    states = [a for ev in chance.trace(rec, [1]).events for a in ev.after if isinstance(a, tuple)]
    model = luck.default_model()
    own = model.values(states, [1]).astype(np.float64)
    assert np.abs(own.sum(axis=1)).max() > 1e-2  # the network's own two values do not sum to zero
    got = luck._values(model, states, 2, [1])
    assert np.array_equal(got[:, 0], (own[:, 0] - own[:, 1]) / 2) and np.array_equal(got[:, 1], -got[:, 0])
    assert np.array_equal(luck._values(model, states, 2, [1], seats=[1])[:, 1], got[:, 1])
    lk = luck.analyse(rec, ["heuristic", "random"])
    assert np.array_equal(lk.corrected[1], -lk.corrected[0])  # one estimate, seen from either seat
    # three players and more: the rewards sum to 2 - n (but in a tie of three or more), and so do the
    # values, each the network's less an equal share of what its values sum to beyond that
    for specs, seed in ((("heuristic", "random", "heuristic"), 9), (("random", "heuristic", "random", "random"), 10)):
        n = len(specs)
        rec = record(specs, seed)
        rand = luck.random_seats(specs)
        states = [a for ev in chance.trace(rec, rand).events for a in ev.after if isinstance(a, tuple)]
        own = model.values(states, rand).astype(np.float64)
        got = luck._values(model, states, n, rand)
        assert np.allclose(got.sum(axis=1), 2 - n, atol=1e-12) and np.abs(own.sum(axis=1) - (2 - n)).max() > 1e-2
        assert np.allclose(got - own, (got - own)[:, :1], atol=1e-12)  # the same share off every seat
        assert np.array_equal(luck._values(model, states, n, rand, seats=[1])[:, 1], got[:, 1])


def first_action_with(rec, kind, random_seats=()):
    """The shortest prefix of ``rec`` that holds its first event of ``kind``, and that event."""
    ev = next(ev for ev in chance.trace(rec, random_seats).events if ev.kind == kind)
    return dict(rec, actions=rec["actions"][:ev.action + 1]), ev


def test_first_draw_corrections_average_to_zero_over_every_deck_position():
    rec = record(("heuristic", "heuristic"), 31)
    short, _ = first_action_with(rec, "draw")
    model = random_model(1)
    size = deck_sizes(2)[1]
    tables = [correction_table(short, first("draw"), swap("hijinks", 0, j), model) for j in range(size)]
    assert_mean_zero(tables)


def test_look_corrections_average_to_zero_over_every_deck_position():
    """A Foresight look at the Havok top: the first card it reveals."""
    rec = next(r for r in (record(("random", "random"), seed, ["Pearl", "Ruby"]) for seed in range(100))
               if any(ev.kind == "look" for ev in chance.trace(r, [0, 1]).events))
    short, _ = first_action_with(rec, "look", [0, 1])
    # the flips so far took the deck's first cards: the look shows the next one
    before = sum(1 for ev in chance.trace(short, [0, 1]).events if ev.kind == "flip")
    model = random_model(2)
    size = deck_sizes(2)[0]
    tables = [correction_table(short, first("look"), swap("havok", before, j), model, [0, 1])
              for j in range(before, size)]
    assert_mean_zero(tables)


@pytest.mark.parametrize("specs", [("heuristic", "heuristic"), ("search", "heuristic", "human")])
def test_looking_ahead_keeps_the_first_flip_and_draw_corrections_zero_on_average(specs):
    """With the value taken where the known policies lead (evaluation.luck.lookahead: the heuristic,
    and the heuristic's choice for the search bot and a person), every outcome's value is still
    the same whatever the unseen cards are, and the corrections average to exactly zero."""
    players = len(specs)
    advance = luck.lookahead(list(specs), players)
    model = random_model(5)
    rec = {"seed": 40 + players, "options": {"num_players": players, "dragons": None}, "actions": []}
    size = deck_sizes(players)[0]
    flips = [correction_table(rec, first("flip"), swap("havok", 0, j), model, advance=advance)
             for j in range(size)]
    assert_mean_zero(flips)
    played = record(["heuristic"] * players, 32)
    short, _ = first_action_with(played, "draw")
    draws = [correction_table(short, first("draw"), swap("hijinks", 0, j), model, advance=advance)
             for j in range(deck_sizes(players)[1])]
    assert_mean_zero(draws)


@pytest.mark.parametrize("specs,depth", [(("heuristic", "random"), 1), (("search", "heuristic", "random"), 1),
                                         (("heuristic", "random"), 2)])
def test_one_event_deeper_keeps_the_first_flip_draw_and_random_decision_corrections_zero_on_average(specs, depth):
    """With the value mixed with its expectation over the next event (``deeper``), or over the
    next ``depth`` events, every outcome's value is still the same whatever the unseen cards are, and
    the corrections average to exactly zero."""
    players = len(specs)
    rand = [players - 1]
    advance = luck.lookahead(list(specs), players)
    model = random_model(6)
    deeper = luck._Deeper(model, rand, None, 0.5)
    rec = {"seed": 50 + players, "options": {"num_players": players, "dragons": None}, "actions": []}
    flips = [correction_table(rec, first("flip"), swap("havok", 0, j), model, rand, advance, deeper, depth)
             for j in range(deck_sizes(players)[0])]
    assert_mean_zero(flips)
    played = record(specs, 33)
    if depth == 1:  # deeper, a draw's outcomes go the flips' way (spread): checked once, at the cheaper depth
        short, _ = first_action_with(played, "draw", rand)
        draws = [correction_table(short, first("draw"), swap("hijinks", 0, j), model, rand, advance, deeper)
                 for j in range(deck_sizes(players)[1])]
        assert_mean_zero(draws)
    decision = next(ev for ev in chance.trace(played, rand).events if ev.kind == "decision" and len(ev.outcomes) >= 3)
    tables = []
    for a in decision.outcomes:
        short = dict(played, actions=played["actions"][:decision.action] + [a])
        pick = lambda evs: [e for e in evs if e.kind == "decision"][-1]  # noqa: E731
        tables.append(correction_table(short, pick, None, model, rand, advance, deeper, depth))
    assert_mean_zero(tables)


def test_one_event_deeper_is_the_mix_of_the_value_and_its_expectation_over_the_next_event():
    specs = ["heuristic", "random"]
    rec = record(specs, 34)
    model = random_model(7)
    shallow, deep, half = (luck.analyse(rec, specs, model, steps=True, deeper=w) for w in (0.0, 1.0, 0.5))
    assert np.allclose(half.corrected, (shallow.corrected + deep.corrected) / 2, atol=1e-9)
    assert np.abs(deep.corrected - shallow.corrected).max() > 1e-3
    assert np.allclose(sum(v for _, _, v in deep.steps), deep.corrected, atol=1e-9)
    # where the engine stops before a flip, the deeper value is V's mean over the cards that could come
    tr = chance.trace(rec, [1], advance=luck.lookahead(specs, 2), deeper=luck._Deeper(model, [1], None, 1.0))
    i = next(i for i, e in enumerate(tr.events) if e.kind == "flip" and isinstance(e.after[e.actual], list))
    plain = chance.trace(rec, [1], advance=luck.lookahead(specs, 2))
    assert [e.kind for e in plain.events] == [e.kind for e in tr.events]
    ev, nxt = tr.events[i], plain.events[i + 1]  # the next event on the way the game went
    assert nxt.kind in ("flip", "draw", "coin", "decision")
    p = np.asarray(nxt.weights, float) / nxt.total
    assert np.allclose(ev.after[ev.actual], p @ luck._values(model, nxt.after, 2, [1]), atol=1e-9)
    for bad in (1.5, -0.1, float("nan"), "0.5", True, None):
        with pytest.raises(ValueError, match="deeper must be from 0 to 1"):
            luck.analyse(rec, specs, model, deeper=bad)


@pytest.mark.parametrize("specs, seed, depth, kinds, seats", [
    (["heuristic", "random"], 33, 1, {"look", "decision"}, None),  # a look, a card put back under the deck
    (["heuristic", "random"], 33, 2, {"look", "decision"}, [1]),
    (["heuristic", "random", "random", "random"], 30, 1, {"coin", "look", "decision"}, [0, 2]),
    (["search", "heuristic"], 31, 1, {"flip", "draw"}, None),  # the search bot's seat: the heuristic's choice
])
def test_the_cores_look_through_gives_the_tracers_own_bits(specs, seed, depth, kinds, seats, monkeypatch):
    """Deeper, a look-ahead that plays every seat but the random bot's with the heuristic's choice
    is walked in the core (``_Deeper.through``, src/havok_core/lookthrough.cpp); the Python tracer
    is its definition: every correction and step is the same bits either way."""
    rec = record(["heuristic" if s == "search" else s for s in specs], seed)
    assert kinds <= {ev.kind for ev in chance.trace(rec, luck.random_seats(specs)).events}
    walked, real = [], luck._Deeper.through
    monkeypatch.setattr(luck._Deeper, "through", lambda self, *a: walked.append(1) or real(self, *a))
    core = luck.analyse(rec, specs, steps=True, deeper=0.7, depth=depth, seats=seats)
    assert len(walked) > 20
    monkeypatch.setattr(luck._Deeper, "through", None)  # the tracer's own walk
    python = luck.analyse(rec, specs, steps=True, deeper=0.7, depth=depth, seats=seats)
    for x, y in ((core.corrected, python.corrected), (core.corrections, python.corrections),
                 (core.expected, python.expected)):
        assert np.array_equal(x, y, equal_nan=True)
    assert [(k, q) for k, q, _ in core.steps] == [(k, q) for k, q, _ in python.steps]
    assert all(np.array_equal(x, y, equal_nan=True) for (_, _, x), (_, _, y) in zip(core.steps, python.steps))


def test_the_cores_walk_values_each_state_once_and_refuses_what_does_not_fit():
    """The core's valuer keeps each state's values for the game (a state met again, by another way
    or another walk, is not valued again): walking the same move again values nothing new and gives
    the same bits; a valuer that cannot fit the game is refused with our error."""
    from havok_env import _core

    specs = ["heuristic", "random"]
    rec = record(specs, 33)
    model = luck.default_model()
    deeper = luck._Deeper(model, [1], None, 0.7)
    g = Game(seed=rec["seed"], **rec["options"])
    for a in rec["actions"]:  # to a move with events after it (as if no card had been seen: any will do)
        seen = chance._Seen(0, 0, len(g.s.havok))
        first = deeper.through(g, seen, a, [], 0, 2)
        if deeper._valuer.kept > 100:
            break
        g.apply(a)
    kept = deeper._valuer.kept
    assert kept > 100
    assert deeper.through(g, seen, a, [], 0, 2) == first
    assert deeper._valuer.kept == kept  # every state met was valued the first time
    got = []  # it walks without the GIL: threads asking one valuer at once take turns
    threads = [threading.Thread(target=lambda: got.append(deeper.through(g, seen, a, [], 0, 2))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [first] * 3
    lay = layout(g.cards).core
    for args, match in [((lay, model.net, 2, [2], [0, 1], 0.7), "random seat 2 is not a seat"),
                        ((lay, model.net, 2, [], [0, 3], 0.7), "valued seat 3 is not a seat"),
                        ((lay, model.net, 5, [], [0], 0.7), "2 to 4 players, not 5"),
                        ((lay, model.net, 2, [], [0, 1], 1.5), "weight is from 0 to 1"),
                        ((lay, model.net, 2, [], [0, 1], float("nan")), "weight is from 0 to 1"),
                        ((lay, random_model().net, 2, [], [0, 1], 0.7), None),
                        ((model.net, lay, 2, [], [0, 1], 0.7), "made of a ValueLayout and a ValueNet")]:
        if match is None:  # a network of the layout's width is fine, whatever its hidden layers
            _core.LookValuer(*args, g.END, g.OPTION)
            continue
        with pytest.raises(_core.CoreError, match=match):
            _core.LookValuer(*args, g.END, g.OPTION)
    four = Game(seed=1, num_players=4)
    with pytest.raises(_core.CoreError, match="made for another number of players"):
        deeper._valuer.value(four._core, 0, 0, len(four.s.havok), four.legal_actions()[0], [], 0, 1)
    with pytest.raises(_core.CoreError, match="a depth and a stop of 0 or more"):
        deeper._valuer.value(g._core, 0, 0, len(g.s.havok), a, [], 0, -1)


def test_two_events_deeper_is_the_mix_taken_again_at_every_outcome_of_the_next_event():
    """``depth=2``: wherever the value is taken, it is (1 - W) V + W times the mean, over the next
    event's outcomes, of each outcome's own one-event-deeper value: (1 - W) V + W (1 - W) E[V]
    + W^2 E[E[V]], every outcome of every event of the game."""
    specs = ["heuristic", "random"]
    rec = record(specs, 34)
    rec = dict(rec, actions=rec["actions"][:8])
    model = random_model(7)
    advance = luck.lookahead(specs, 2)

    def values(weight, depth):
        deeper = luck._Deeper(model, [1], None, weight) if weight else None
        tr = chance.trace(rec, [1], advance=advance, deeper=deeper, depth=depth)
        return [luck._values(model, ev.after, 2, [1]) for ev in tr.events]

    w = 0.7
    v, e1, e2, mixed = values(0.0, 1), values(1.0, 1), values(1.0, 2), values(w, 2)
    assert len(v) == len(mixed) > 10
    for a, b, c, m in zip(v, e1, e2, mixed):
        assert np.allclose(m, (1 - w) * a + w * (1 - w) * b + w * w * c, atol=1e-9)
    assert max(np.abs(c - b).max() for b, c in zip(e1, e2)) > 1e-3  # the second event deeper did matter
    for bad in (0, 4, 1.5, "2", True, None):
        with pytest.raises(ValueError, match="depth must be a whole number from 1 to 3"):
            luck.analyse(record(specs, 34), specs, model, deeper=0.5, depth=bad)
    with pytest.raises(ValueError, match="depth applies with deeper above 0"):
        luck.analyse(record(specs, 34), specs, model, depth=2)


@pytest.mark.parametrize("seed, flip", [(42, 0), (41, 1)])
def test_replaying_the_search_bot_keeps_the_flip_corrections_zero_on_average(seed, flip):
    """With the search bot replayed in the look-ahead (``lookahead(..., record)``), every card that
    could come up at a flip is still valued the same whatever the other unseen cards are, and the
    corrections average to exactly zero: the bot's choices after the flip follow from its seed and
    what it has seen. The first flip of a game (the bot as it was reset) and one after its first
    decisions (as it stood then); the replay changes the values (the bot is asked, not the
    heuristic)."""
    specs = ["search:8", "heuristic"]
    played = record(specs, seed)
    ev = [e for e in chance.trace(played).events if e.kind == "flip"][flip]
    short = dict(played, actions=played["actions"][:ev.action + 1])
    replay = luck.lookahead(specs, 2, short)
    assert replay.replayed == {0: None}
    model = random_model(8)
    pick = lambda evs: [e for e in evs if e.kind == "flip"][flip]  # noqa: E731
    tables = [correction_table(short, pick, swap("havok", flip, j), model, advance=replay)
              for j in range(flip, deck_sizes(2)[0])]
    assert_mean_zero(tables)
    proxy = correction_table(short, pick, None, model, advance=luck.lookahead(specs, 2))
    assert np.abs(proxy[2] - tables[0][2]).max() > 1e-3


def test_the_replayed_search_bot_takes_the_recorded_actions_and_stands_where_it_stood():
    """``Lookahead.at(i)``: the search bot as it stood before the record's action ``i``, so it takes
    the recorded action there; from a wrong seed it does not, ``replayed`` says where, and from
    there on its seat is looked through with the heuristic's choice (the bot still stands where it
    stood before)."""
    from agents.heuristic import HeuristicAgent
    from agents.runner import agent_seed
    from havok_env.view import SeatView

    specs = ["heuristic", "search:8"]
    rec = record(specs, 44)
    replay = luck.lookahead(specs, 2, rec)
    assert replay.replayed == {1: None}
    asked = 0
    for i, (g, action) in enumerate(Game.positions(rec)):
        if action is None or g.to_act != 1:
            continue
        s = chance._State(g.fields())
        assert replay.at(i)(g, s) == action
        asked += 1
    assert asked > 5
    wrong = luck.lookahead(specs, 2, rec, agent_seeds=[0, agent_seed(rec["seed"], 1) + 1])
    k = wrong.replayed[1]
    assert k is not None
    positions = [(g.clone(), a) for g, a in Game.positions(rec)]
    g, action = positions[k]
    assert wrong.at(k)(g, chance._State(g.fields())) != action  # as it stood: the other seed's choice
    heuristic = HeuristicAgent()
    heuristic.reset(1, 2)
    later = [g for g, a in positions[k + 1:] if a is not None and g.to_act == 1 and len(g.pending["choices"]) > 1]
    assert later
    for j, (g, a) in enumerate(positions):
        if j > k and a is not None and g.to_act == 1:
            assert wrong.at(j)(g, chance._State(g.fields())) == heuristic.choose(SeatView(g, 1))
    # without the record, the seat is looked through with the heuristic everywhere
    assert luck.lookahead(specs, 2).replayed == {}
    for bad in ([1], [1, "2"], [1, True], 5):
        with pytest.raises(ValueError, match="agent_seeds must be a list of 2 integers"):
            luck.analyse(rec, specs, replay_search=True, agent_seeds=bad)


def test_replaying_the_search_bot_leaves_its_decisions_nothing():
    """``analyse(..., replay_search=True)``: the search bot's decisions leave nothing uncorrected
    (its decisions after a look at the Havok deck, where the value is taken as the deck is seen,
    aside), the estimate still splits into its steps, and it differs from looking through the
    bot's seat with the heuristic."""
    specs = ["search:8", "heuristic"]
    rec = record(specs, 45)
    model = random_model(9)
    plain = luck.analyse(rec, specs, model, steps=True)
    replayed = luck.analyse(rec, specs, model, steps=True, replay_search=True)
    assert replayed.replayed == {0: None} and plain.replayed == {}
    decisions = [v for label, seat, v in replayed.steps if label == "decision: search:8"]
    purposes = [g.pending["purpose"] for g, a in Game.positions(rec) if a is not None and g.to_act == 0]
    assert len(decisions) == len(purposes) > 5 and "bottom" in purposes
    assert all(np.abs(v).max() < 1e-9 for v, p in zip(decisions, purposes) if p != "bottom")
    assert any(np.abs(v).max() > 1e-3 for label, _, v in plain.steps if label == "decision: search:8")
    assert np.allclose(sum(v for _, _, v in replayed.steps), replayed.corrected, atol=1e-9)
    assert np.abs(replayed.corrected - plain.corrected).max() > 1e-3
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match="replay_search must be True or False"):
            luck.analyse(rec, specs, model, replay_search=bad)


def test_looking_ahead_plays_on_with_each_seats_policy_and_stops_where_it_must():
    g = Game(3, seed=9)
    advance = luck.lookahead(["random", "heuristic", "search"], 3)
    from agents.heuristic import HeuristicAgent
    from havok_env.view import SeatView
    seen = set()
    while not g.is_over and len(seen) < 3:
        p = g.pending
        s = chance._State(g.fields())
        a = advance(g, s)
        if len(p["choices"]) == 1:
            assert a == p["choices"][0]
        elif p["purpose"] == "bottom" or p["player"] == 0:
            assert a is None  # a look is an event; the random bot's decisions are corrected
        else:
            bot = HeuristicAgent()
            bot.reset(p["player"], 3)
            assert a == bot.choose(SeatView(g, p["player"]))
            seen.add(p["player"])
        if p["player"] == 0 and len(p["choices"]) > 1:
            seen.add(0)
        g.apply(random.Random(len(seen)).choice(p["choices"]))
    assert seen == {0, 1, 2}


def test_a_stateless_policys_decisions_leave_nothing_when_looked_through():
    """The trained model decides from the position alone: looked through, each of its decisions
    leaves exactly zero in the estimate; without looking ahead they leave the value's errors."""
    specs = ["pretrained:fire", "pretrained:fire"]
    r = play_game([make_agent(s) for s in specs], seed=73, dragons=["fire", "moonlight"])
    rec = {k: r[k] for k in ("seed", "options", "actions")}
    ahead = luck.analyse(rec, specs, steps=True)
    flat_ = luck.analyse(rec, specs, steps=True, ahead=False)
    # (but for the decision after a look at the Havok deck, where the look's outcomes are valued)
    decisions = [v for (before, _, _), (label, _, v) in zip(ahead.steps, ahead.steps[1:])
                 if label.startswith("decision") and not before.startswith("look")]
    assert len(decisions) > 20 and np.abs(decisions).max() < 1e-6  # the network computes in float32
    assert np.abs([v for label, _, v in flat_.steps if label.startswith("decision")]).max() > 1e-3
    for lk in (ahead, flat_):
        assert np.allclose(sum(v for _, _, v in lk.steps), lk.corrected, atol=1e-9)


def test_contest_corrections_average_to_zero_over_the_coin():
    """Two crashes declared in one window: the generator picks the winner. Reseeding it to give
    each answer in turn, the contest's correction averages to zero."""
    def contest_first(rec):  # a contest before any reshuffle, so the generator decides it alone
        evs = chance.trace(rec, [0, 1]).events
        coins = [i for i, ev in enumerate(evs) if ev.kind == "coin"]
        return coins and sum(1 for ev in evs[:coins[0]] if ev.kind == "draw") < deck_sizes(2)[1]

    rec = next(r for r in (record(("random", "random"), seed) for seed in range(400)) if contest_first(r))
    short, ev = first_action_with(rec, "coin", [0, 1])
    m = len(ev.outcomes)
    model = random_model(3)

    def answer(j):
        r = next(r for r in range(1, 10_000) if rng_next(r)[1] % m == j)

        def arrange(s):
            s.rng = r
        return arrange

    tables = [correction_table(short, first("coin"), answer(j), model, [0, 1]) for j in range(m)]
    assert [t[0] for t in tables][0] == list(range(m))
    assert_mean_zero(tables)


def test_random_bot_decision_corrections_average_to_zero_over_its_choices():
    """Whichever legal action the random bot took, the same values; their mean is the expectation."""
    rec = record(("random", "heuristic"), 41)
    model = random_model(4)
    decision = next(ev for ev in chance.trace(rec, [0]).events if ev.kind == "decision" and len(ev.outcomes) >= 3)
    tables = []
    for a in decision.outcomes:
        short = dict(rec, actions=rec["actions"][:decision.action] + [a])
        pick = lambda evs: [e for e in evs if e.kind == "decision"][-1]  # noqa: E731
        tables.append(correction_table(short, pick, None, model, [0]))
    assert_mean_zero(tables)


# -- nothing but the replay --------------------------------------------------------------------------


@pytest.mark.parametrize("specs,seed,deeper", [(("random", "heuristic"), 51, 0.0), (("heuristic",) * 4, 52, 0.0),
                                              (("random", "heuristic"), 53, 0.5)])
def test_corrections_ignore_the_order_of_cards_nobody_saw(specs, seed, deeper, monkeypatch):
    """Reordering the cards that were never revealed, in both decks, changes nothing."""
    rec = record(specs, seed)
    seats = [i for i, s in enumerate(specs) if s == "random"]
    tr = chance.trace(rec, seats)
    havok_seen = sum(1 for ev in tr.events if ev.kind in ("flip", "look"))
    drawn = sum(1 for ev in tr.events if ev.kind == "draw")
    assert drawn <= deck_sizes(len(specs))[1]  # no reshuffle: the rest of the deck was never seen
    model = luck.default_model()
    base = luck.analyse(rec, specs, model, deeper=deeper)

    def arrange(s):
        rng = random.Random(seed)
        tail = s.havok[havok_seen:]
        rng.shuffle(tail)
        s.havok[havok_seen:] = tail
        rest = s.hijinks[drawn:]
        rng.shuffle(rest)
        s.hijinks[drawn:] = rest
        arranged.append(tail)

    arranged = []
    real = chance.trace
    monkeypatch.setattr(luck, "trace", lambda *a, **k: real(*a, **dict(k, arrange=arrange)))
    other = luck.analyse(rec, specs, model, deeper=deeper)
    assert arranged and Game.replay(rec).rewards() == list(other.rewards)
    assert np.array_equal(base.corrections, other.corrections)
    assert np.array_equal(base.corrected, other.corrected)


# -- the estimator -------------------------------------------------------------------------------------


def test_corrected_rewards_are_unbiased_over_bot_games():
    """The mean correction is zero: over these games it is well within its interval. (The
    20,000-game check is benchmarks/luck_gain.py --check; its figures are in the README.)"""
    for players, games in ((2, 80), (4, 30)):
        totals = []
        for g in range(games):
            specs = ["heuristic"] + ["random"] * (players - 1)
            specs = specs[g % players:] + specs[:g % players]
            rec = record(specs, 60_000 + g)
            lk = luck.analyse(rec, specs)
            totals.append(lk.corrections.sum(axis=0))
        totals = np.array(totals)
        se = totals.std(axis=0, ddof=1) / np.sqrt(games)
        assert np.all(np.abs(totals.mean(axis=0)) < 4 * se + 1e-9), (players, totals.mean(axis=0), se)


def test_steps_add_up_to_the_corrected_reward():
    rec = record(("random", "heuristic"), 71)
    lk = luck.analyse(rec, ["random", "heuristic"], steps=True)
    total = sum(v for _, _, v in lk.steps)
    assert np.allclose(total, lk.corrected, atol=1e-9)
    labels = {label for label, _, _ in lk.steps}
    assert "decision: heuristic" in labels and "flip" in labels and "decision" in labels


def test_batch_and_api():
    recs = [record(("heuristic", "random"), 80 + g) for g in range(3)]
    batch = luck.corrected_batch(recs, ["heuristic", "random"])
    assert batch.shape == (3, 2)
    assert np.array_equal(batch[1], luck.corrected_rewards(recs[1], ["heuristic", "random"]))
    # the heuristic's decisions are not corrected, the random bot's are
    lk = luck.analyse(recs[0], ["heuristic", "random"])
    assert {lk.seats[i] for i, k in enumerate(lk.kinds) if k == "decision"} == {1}


@pytest.mark.parametrize("bad,msg", [
    ({"seed": 1}, "not a game record"),
    ({"seed": 1, "options": {"num_players": 9}, "actions": []}, "num_players"),
    ({"seed": 1, "options": {"num_players": 2, "dragons": None}, "actions": [999]}, "not legal"),
    ({"seed": 1, "options": {"num_players": 2, "dragons": None}, "actions": []}, "stops before the end"),
    ("not a dict", "not a game record"),
])
def test_bad_records_get_one_line_errors(bad, msg):
    with pytest.raises(chance.TraceError) as e:
        luck.analyse(bad, ())
    assert msg in str(e.value) and "\n" not in str(e.value)


def test_shipped_model_loads_without_pickles_and_says_what_it_was_fitted_on(tmp_path):
    from safetensors import safe_open

    with safe_open(str(DATA / "value.safetensors"), framework="np") as f:  # plain tensors, no code
        assert all(f.get_tensor(k).dtype == np.float32 for k in f.keys())
    assert not list(DATA.glob("*.npz")) and not list(DATA.glob("*.pkl"))
    meta = json.loads((DATA / "value.json").read_text())
    assert meta["features_version"] and meta["games"] >= 10_000 and len(meta["seeds"]) == 2
    model = ValueModel.load()
    x = features([(Game(2, seed=1).s, 0)])
    assert x.shape == (2, layout().size) and np.all(np.abs(model.predict(x)) <= 1)
    bad = tmp_path / "value.safetensors"
    bad.write_bytes(b"not a model")
    (tmp_path / "value.json").write_text("{}")
    with pytest.raises(ModelFileError, match="not a value model"):
        ValueModel.load(bad)
    with pytest.raises(ModelFileError, match="no value model"):
        ValueModel.load(tmp_path / "missing.safetensors")


# -- reported everywhere ---------------------------------------------------------------------------


def test_a_tournament_reports_raw_and_corrected_scores_and_paired_differences(tmp_path, capsys):
    import csv

    import evaluate
    from training.stats import mean_ci

    argv = ["--agents", "heuristic", "random", "--games", "8", "--seed", "5", "--workers", "1",
            "--no-progress", "--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")]
    assert evaluate.main(argv) == 0
    out = capsys.readouterr().out
    assert "corrected" in out and "Paired score differences" in out
    rep = json.loads((tmp_path / "r.json").read_text())
    games = rep["games"]
    for i, a in enumerate(rep["agents"]):
        seats = [g["seats"].index(i) for g in games]
        raw = [g["rewards"][s] for g, s in zip(games, seats)]
        cor = [g["corrected"][s] for g, s in zip(games, seats)]
        assert [a["score"], *a["score_ci95"]] == pytest.approx(flat(mean_ci(raw)))
        assert [a["corrected_score"], *a["corrected_ci95"]] == pytest.approx(flat(mean_ci(cor)))
        assert raw != pytest.approx(cor)  # the luck was taken out
    # each game's correction is the estimator's, on the game's replay
    g = games[0]
    specs = [rep["config"]["agents"][a] for a in g["seats"]]
    rec = play_game([make_agent(s) for s in specs], g["seed"], dragons=g["dragons"], agent_ids=g["seats"])
    assert g["corrected"] == pytest.approx(list(luck.corrected_rewards(rec, specs)))
    # the paired difference: per deal (every agent plays every game of it here), over the deals
    (p,) = rep["paired"]
    per_deal = {}
    for g in games:
        d = per_deal.setdefault(g["deal"], [[], []])
        for seat, a in enumerate(g["seats"]):
            d[0 if a == 0 else 1].append(g["corrected"][seat])
    diffs = [np.mean(x) - np.mean(y) for x, y in per_deal.values()]
    assert p["deals"] == 4
    assert [p["corrected_difference"], *p["corrected_difference_ci95"]] == pytest.approx(flat(mean_ci(diffs)))
    assert p["difference"] == pytest.approx(rep["agents"][0]["score"] - rep["agents"][1]["score"])
    rows = list(csv.DictReader(open(tmp_path / "r.csv")))
    assert float(rows[0]["corrected_score"]) == pytest.approx(rep["agents"][0]["corrected_score"], abs=1e-6)
    assert float(rows[1]["score_ci95_high"]) == pytest.approx(rep["agents"][1]["score_ci95"][1], abs=1e-6)


def test_without_a_fitting_value_model_the_corrected_score_is_missing_and_says_why(monkeypatch, capsys):

    def refuse(path=None):
        raise ModelFileError("value.safetensors reads features version 2; this card set needs another")
    monkeypatch.setattr(luck, "_MODEL", None)
    monkeypatch.setattr(ValueModel, "load", classmethod(lambda cls, path=None: refuse()))
    rep = evaluation.tournament.run_tournament(["heuristic", "random"], games=2, seed=1, workers=1, progress=False,
                                  ledger=None)
    assert all(a["corrected_score"] is None and a["score"] is not None for a in rep["agents"])
    assert "features version" in rep["luck"]
    assert "not available: value.safetensors reads" in evaluation.report.format_report(rep)


def ledger_entry(specs, seed, humans):
    rec = play_game([make_agent("random" if s.startswith("human") else s) for s in specs], seed)
    return {"version": 1, "seed": rec["seed"], "options": rec["options"], "actions": rec["actions"],
            "seats": list(specs), "humans": humans, "agents": sorted(set(specs)), "result": rec["result"],
            "turns": rec["turns"], "dragons": rec["dragons"], "decisions": rec["decisions"]}


def test_the_ledger_summary_gives_each_human_a_corrected_score_against_each_bot(tmp_path, capsys):
    import evaluate
    from training.stats import mean_ci

    entries = [ledger_entry(("human:zoe", "random"), s, [0]) for s in range(4)]
    entries += [ledger_entry(("heuristic", "human:zoe"), s, [1]) for s in range(4, 7)]
    path = tmp_path / "ledger.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    assert evaluate.main(["--ledger", str(path), "--json", str(tmp_path / "s.json")]) == 0
    assert "corrected" in capsys.readouterr().out
    summary = json.loads((tmp_path / "s.json").read_text())
    by = {m["opponent"]: m for m in summary["matchups"]}
    for opp, es in (("random", entries[:4]), ("heuristic", entries[4:])):
        # the person's decisions are not corrected (here a random bot played them: the estimate
        # must not treat them as random), the random bot's are
        cor = [luck.corrected_rewards(e, e["seats"])[e["humans"][0]] for e in es]
        assert [by[opp]["corrected_score"], *by[opp]["corrected_ci95"]] == pytest.approx(flat(mean_ci(cor)))
        assert by[opp]["score"] == pytest.approx(np.mean([Game.replay(e).rewards()[e["humans"][0]] for e in es]))
    lk = luck.analyse(entries[0], entries[0]["seats"])
    assert {lk.seats[i] for i, k in enumerate(lk.kinds) if k == "decision"} == {1}
    # one event deeper (evaluate.py --deeper W)
    assert evaluate.main(["--ledger", str(path), "--deeper", "0.5", "--json", str(tmp_path / "d.json")]) == 0
    deep = {m["opponent"]: m for m in json.loads((tmp_path / "d.json").read_text())["matchups"]}
    cor = [luck.analyse(e, e["seats"], deeper=0.5).corrected[e["humans"][0]] for e in entries[4:]]
    assert deep["heuristic"]["corrected_score"] == pytest.approx(np.mean(cor))
    assert deep["heuristic"]["corrected_score"] != pytest.approx(by["heuristic"]["corrected_score"])
    for argv, msg in ((["--ledger", str(path), "--deeper", "2"], "--deeper must be from 0 to 1"),
                      (["--agents", "heuristic", "random", "--deeper", "0.5"], "applies to a ledger's summary"),
                      (["--ledger", str(path), "--deeper", "0.5", "--depth", "0"], "--depth must be a whole number"),
                      (["--ledger", str(path), "--depth", "2"], "--depth applies with deeper above 0"),
                      (["--ledger", str(path), "--deeper", "0.5", "--workers", "0"], "--workers must be at least 1")):
        with pytest.raises(SystemExit):
            evaluate.main(argv)
        assert msg in capsys.readouterr().err


def test_games_corrected_in_several_processes_are_the_same_bits(monkeypatch):
    import training.parallel
    from training.progress import Progress

    games = [(play_game([make_agent("heuristic"), make_agent("random")], s), ["heuristic", "random"])
             for s in range(20, 23)]
    games = [({k: r[k] for k in ("seed", "options", "actions")}, p) for r, p in games]
    one = [luck.corrected_or_none(r, p, deeper=0.5) for r, p in games]
    bar = Progress(len(games), show=False)
    assert luck.corrected_all(games, deeper=0.5, workers=2, progress=bar) == one
    assert bar.done == 3
    # the plain correction is quicker than starting a process: it stays in this one
    monkeypatch.setattr(training.parallel, "Pool", None)
    assert luck.corrected_all(games, workers=2) == [luck.corrected_or_none(r, p) for r, p in games]


_NUMPY_SEES = """
import importlib.abc, os, runpy, sys
seen = []
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and not seen:
            seen.append(os.environ.get("OPENBLAS_NUM_THREADS"))
        return None
sys.meta_path.insert(0, Watch())
sys.argv = [sys.argv[1], "--help"]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
print("NUMPY SAW", seen)
"""


@pytest.mark.parametrize("script", ["train.py", "evaluate.py", "benchmarks/luck_gain.py"])
def test_the_scripts_that_correct_games_give_numpy_one_blas_thread(script):
    # numpy's BLAS threads spin between the value network's small products: with two of them per
    # worker process a correction took twice the CPU, and an evaluation's workers twice the time
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", _NUMPY_SEES, os.path.join(root, script)], env=env, cwd=root,
                         capture_output=True, text=True, timeout=120).stdout
    assert "NUMPY SAW ['1']" in out
    env["OPENBLAS_NUM_THREADS"] = "3"  # a user's own setting is kept
    out = subprocess.run([sys.executable, "-c", _NUMPY_SEES, os.path.join(root, script)], env=env, cwd=root,
                         capture_output=True, text=True, timeout=120).stdout
    assert "NUMPY SAW ['3']" in out


def _luck_gain():
    """benchmarks/luck_gain.py as a module of its own."""
    import importlib.util
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location("luck_gain", os.path.join(root, "benchmarks", "luck_gain.py"))
    lg = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.join(root, "benchmarks"))
    try:
        spec.loader.exec_module(lg)
    finally:
        sys.path.remove(os.path.join(root, "benchmarks"))
    return lg


def test_luck_gain_compares_two_ways_of_correcting_the_same_games(tmp_path, capsys):
    lg = _luck_gain()
    args = ["--pair", "heuristic", "heuristic", "--games", "8", "--seed", "40", "--records", str(tmp_path / "r.jsonl")]
    assert lg.main(args + ["--out", str(tmp_path / "plain.jsonl")]) == 0
    assert lg.main(args + ["--deeper", "0.5", "--out", str(tmp_path / "deep.jsonl")]) == 0
    capsys.readouterr()
    assert lg.main(["--compare", str(tmp_path / "plain.jsonl"), str(tmp_path / "deep.jsonl")]) == 0
    out = capsys.readouterr().out
    rows = [[json.loads(x) for x in (tmp_path / f).read_text().splitlines()] for f in ("plain.jsonl", "deep.jsonl")]
    x, y = (np.array([r["corrected"] for r in rs]) for rs in rows)
    sd = np.std([r["raw"] for r in rows[0]], ddof=1)
    assert sd > 0
    assert (f"| heuristic vs heuristic: plain, then one event deeper, weight 0.5 | 2 | 8 | {x.std(ddof=1) / sd:.3f} | "
            f"{y.std(ddof=1) / sd:.3f} | **{y.var(ddof=1) / x.var(ddof=1):.3f}** [") in out
    # seeded: the same interval every time
    assert lg.main(["--compare", str(tmp_path / "plain.jsonl"), str(tmp_path / "deep.jsonl")]) == 0
    assert capsys.readouterr().out == out
    other = tmp_path / "other.jsonl"  # the same seeds and seats, other games
    other.write_text("".join(json.dumps(dict(r, raw=-r["raw"])) + "\n" for r in rows[1]))
    both = tmp_path / "both.jsonl"
    both.write_text((tmp_path / "plain.jsonl").read_text() + (tmp_path / "deep.jsonl").read_text())
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": "heuristic"}\n')  # no seed, seat, scores
    for second, msg in ((other, "not the same games"), (both, "holds 2 ways of correcting"),
                        (bad, "is not a file of luck_gain.py --out rows"), (tmp_path / "none.jsonl", "cannot read")):
        with pytest.raises(SystemExit):
            lg.main(["--compare", str(tmp_path / "plain.jsonl"), str(second)])
        assert msg in capsys.readouterr().err


def test_luck_gain_refuses_the_fitting_seeds_and_a_value_file_that_is_not_one(tmp_path, capsys):
    lg = _luck_gain()
    lo, hi = luck.default_model().meta["seeds"]
    for seed in (lo, hi - 1, lo - 5):  # a piece that ends inside the range overlaps it too
        with pytest.raises(SystemExit, match="overlap the value function's fitting seeds"):
            lg.main(["--pair", "heuristic", "random", "--games", "10", "--seed", str(seed)])
    with pytest.raises(SystemExit):
        lg.main(["--pair", "heuristic", "random", "--games", "2", "--value", str(tmp_path / "none.safetensors")])
    assert "no value model at" in capsys.readouterr().err
    model = luck.default_model()
    model.save(tmp_path / "v.safetensors")
    args = ["--pair", "heuristic", "heuristic", "--games", "4", "--seed", "5", "--records", str(tmp_path / "r.jsonl")]
    assert lg.main(args + ["--value", str(tmp_path / "v.safetensors")]) == 0
    first = capsys.readouterr().out
    assert "heuristic vs heuristic | 2 | 4 |" in first
    lg.play_game = None  # the games kept are replayed, not played again
    assert lg.main(args) == 0
    assert capsys.readouterr().out == first
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 4
    # a piece of the same sequence (--skip) is the same games: found in the records, not played
    assert lg.main(args[:4] + ["2"] + args[5:] + ["--skip", "2", "--out", str(tmp_path / "piece.jsonl")]) == 0
    capsys.readouterr()
    piece = [json.loads(x) for x in (tmp_path / "piece.jsonl").read_text().splitlines()]
    assert [r["seed"] for r in piece] == [7, 8] and [r["seat"] for r in piece] == [0, 1]
    with pytest.raises(SystemExit):
        lg.main(args + ["--skip", "-1"])
    assert "--skip must be 0 or more" in capsys.readouterr().err
    for extra, msg in ((["--depth", "2"], "--depth applies with deeper above 0"),
                       (["--deeper", "0.7", "--depth", "4"], "--depth must be a whole number from 1 to 3"),
                       (["--workers", "0"], "--workers must be at least 1")):
        with pytest.raises(SystemExit):
            lg.main(args + extra)
        assert msg in capsys.readouterr().err


def test_luck_gain_gives_the_same_rows_in_several_processes(tmp_path):
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "luck_gain.py")
    rows = []
    for workers in ("1", "2"):
        path = tmp_path / f"{workers}.jsonl"
        subprocess.run([sys.executable, script, "--pair", "heuristic", "random", "--games", "4", "--seed", "5",
                        "--deeper", "0.5", "--workers", workers, "--records", str(tmp_path / f"{workers}.rec"),
                        "--out", str(path)], check=True, capture_output=True, timeout=120)
        rows.append(path.read_text())
    assert rows[0] == rows[1] and [json.loads(x)["seed"] for x in rows[0].splitlines()] == [5, 6, 7, 8]
    assert (tmp_path / "1.rec").read_text() == (tmp_path / "2.rec").read_text()


def test_search_reruns_start_from_the_played_bots_memory_and_are_its_choices_with_other_draws():
    """The search bot's decisions, with reruns: each rerun starts from the heuristic memory the
    played bot's baseline had at that decision (checked against the played bot's own baseline),
    draws of its own, and the event's outcomes are the reruns' choices (the action taken among
    them, weight 0 if no rerun took it), so the correction is V after the action taken minus the
    reruns' mean."""
    import copy

    from havok_env.view import SeatView

    bot = make_agent("search:8")
    priors = []

    def hook(seat, obs, mask, action):
        if seat == 0:
            priors.append(bot._last[1])  # the played bot's baseline: its heuristic's choice

    rec = play_game([bot, make_agent("heuristic")], seed=31, on_decision=hook)
    rec = {k: rec[k] for k in ("seed", "options", "actions")}
    specs = ["search:8", "heuristic"]
    rerun = luck.resamplers(specs, 2, rec["seed"], 3)[0]
    seen, drawn = [], []

    def check(game, seat, index):
        seen.append(copy.deepcopy(rerun.memory).choose(SeatView(game, seat)))
        out = rerun(game, seat, index)
        drawn.append((index, out))
        return out

    tr = chance.trace(rec, (), sample={0: check})
    assert seen == priors and len(seen) > 5
    events = [ev for ev in tr.events if ev.kind == "decision"]
    assert [ev.action for ev in events] == [i for i, _ in drawn]
    for ev, (i, out) in zip(events, drawn):
        assert ev.seat == 0 and ev.outcomes[ev.actual] == rec["actions"][i]
        assert sorted(o for o, w in zip(ev.outcomes, ev.weights) for _ in range(w)) == sorted(out)
        assert len(out) == 3 or len(out) == 1  # one legal action: itself
    assert any(len(set(out)) > 1 for _, out in drawn)  # the draws matter, now and then
    # the estimator: the reruns' events are corrected like any other; without reruns nothing is
    plain = luck.analyse(rec, specs)
    lk = luck.analyse(rec, specs, reruns=3)
    assert "decision" not in plain.by_kind() and "decision" in lk.by_kind()
    assert np.allclose(lk.rewards - lk.corrections.sum(axis=0), lk.corrected)
    assert luck.rerun_seed(rec["seed"], 4, 0) != luck.rerun_seed(rec["seed"], 4, 1)
    assert not luck.resamplers(specs, 2, rec["seed"], 0) and not luck.resamplers(["heuristic"] * 2, 2, 1, 3)


def test_a_guided_searchs_reruns_depart_from_its_policy(monkeypatch):
    """Reruns of ``search:N:guide=MODEL`` are that bot's choices: its baseline is the policy's
    choice (from the seat's observation), not the heuristic's. With no evidence ever clear enough
    to depart from the baseline, every rerun is the policy's choice."""
    import copy

    from agents.search import SearchAgent
    from havok_env.observe import Observer
    from havok_env.view import SeatView

    spec = "search:4:guide=pretrained:fire"
    guide, heuristic = make_agent("pretrained:fire"), make_agent("heuristic")
    monkeypatch.setattr(SearchAgent, "_paired", staticmethod(lambda xs, base: (0.0, 0.0)))
    differ = 0
    for seed in range(3):
        rec = play_game([make_agent(spec), make_agent("heuristic")], seed=seed)
        rerun = luck.resamplers([spec, "heuristic"], 2, rec["seed"], 2)[0]
        for i, (g, action) in enumerate(Game.positions(rec)):
            if action is None or g.to_act != 0:
                continue
            obs, mask = Observer(g.cards).observe(g, 0)
            mine = guide.act(obs, mask)
            differ += mine != copy.deepcopy(heuristic).choose(SeatView(g, 0))
            assert rerun(g, 0, i) == ([mine, mine] if mask.sum() > 1 else [mine])
    assert differ >= 3
