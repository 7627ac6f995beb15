"""Thousands of complete games with random legal choices, with invariants checked after every
decision; replays and save/restore round trips."""

import json
import pickle
import random
from collections import Counter

import pytest

from havok_env import Game, IllegalActionError, default_cards
from havok_env.view import SeatView

CARDS = default_cards()
COPIES = Counter(CARDS.all_cards())
GAMES_PER_CHUNK = 100
CHUNKS = 7  # per player count: 3 * 7 * 100 = 2,100 games
MAX_TURNS = 40


def worth(dragon: int, kind: int) -> int:
    """A treasure's value in the hoard of ``dragon``, from the card data (cards.md rule)."""
    aff = CARDS.dragons[dragon].affinity
    return CARDS.value[kind] + (1 if CARDS.affinity[kind] is not None and CARDS.affinity[kind] == aff
                                else 0)


def check_invariants(g: Game):
    s = g.s
    # every card in exactly one place
    seen = Counter()
    for pile in (s.havok, s.hijinks, s.discard, s.past_events, s.trash, s.in_play, *s.hands, *s.hoards):
        seen.update(pile)
    assert seen == COPIES
    # canceled cards are in play, waiting for their owner
    assert not Counter(k for _, k in s.canceled) - Counter(s.in_play)
    # piles hold the right kinds of cards
    assert all(CARDS.is_hijinks(k) for p in (s.hijinks, s.discard, *s.hands) for k in p)
    assert all(CARDS.is_treasure(k) for p in (s.trash, *s.hoards) for k in p)
    assert all(CARDS.is_event(k) for k in s.past_events)
    assert all(not CARDS.is_hijinks(k) for k in s.havok)
    # scores: hoard values with affinity bonuses
    scores = [sum(worth(s.dragons[p], k) for k in s.hoards[p]) for p in range(s.num_players)]
    assert g.scores() == scores
    assert s.turn <= MAX_TURNS
    # at most the allowed number of Hijinks cards per player this turn
    assert all(0 <= u <= lim for u, lim in zip(s.cards_used, s.card_limit))
    # what a seat knows of the Havok deck is still on top of it, in that order
    for known in s.known:
        assert s.havok[:len(known)] == known
    if g.is_over:
        assert g.pending is None and g.legal_actions() == []
        best = max(scores)
        assert g.result["winners"] == [p for p in range(s.num_players) if scores[p] == best]
        if g.result["reason"] == "hoard_15":
            assert best >= 15
        else:
            assert g.result["reason"] == "havok_empty" and s.havok == [] and best < 15
        r = g.rewards()
        win = 1.0 if len(g.result["winners"]) == 1 else 0.0
        assert r == [win if p in g.result["winners"] else -1.0 for p in range(s.num_players)]
        return
    assert max(scores) < 15
    # only the pending player has choices
    pend = g.pending
    who = pend["player"]
    choices = g.legal_actions()
    assert choices and len(set(choices)) == len(choices)
    assert all(0 <= a < g.layout.size for a in choices)
    # single-choice decisions are taken automatically, crash windows excepted
    assert len(choices) > 1
    if pend["kind"] == "crash":
        assert g.END in choices and len(choices) >= 2
    labels = [g.action_label(a) for a in choices]
    assert not any(x.startswith("no such") for x in labels)
    if pend["purpose"] != "resolve_which":  # two flipped copies of one card read the same
        assert len(set(labels)) == len(labels)
    for p in range(s.num_players):
        v = SeatView(g, p)
        assert (v.legal_actions() == choices) if p == who else v.legal_actions() == []


def play(seed: int, n: int, roundtrip_at: int | None = None, eager: bool = False):
    """One random game. ``eager`` players rarely end the turn or decline a crash, so that chains
    of crashes, contests and extra plays come up more often."""
    rng = random.Random(seed * 7919 + n)
    g = Game(n, seed=seed)
    check_invariants(g)
    actions = []
    saved = None
    while not g.is_over:
        if roundtrip_at is not None and len(actions) == roundtrip_at:
            snap = g.snapshot()
            restored = Game.from_snapshot(json.loads(json.dumps(snap)))
            assert restored.snapshot() == snap
            clone = g.clone()
            assert clone.snapshot() == snap
            # pickled as its record, and (restored, it has none) as its snapshot
            pickled = [pickle.loads(pickle.dumps(x)) for x in (g, restored)]
            assert all(x.snapshot() == snap for x in pickled)
            saved = (restored, clone, *pickled)
        legal = g.legal_actions()
        if eager and g.END in legal and rng.random() < 0.9:
            legal = [x for x in legal if x != g.END and not g.DISCARD <= x < g.SEAT] or legal
        a = rng.choice(legal)
        g.apply(a)
        actions.append(a)
        if saved:
            for other in saved:
                other.apply(a)
        check_invariants(g)
    assert g.s.turn <= MAX_TURNS
    g.check_cards()
    if saved:
        final = g.snapshot()
        for other in saved:
            assert other.snapshot() == final
    return g, actions


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_games(n, chunk):
    reasons = Counter()
    for i in range(GAMES_PER_CHUNK):
        seed = chunk * GAMES_PER_CHUNK + i
        g, actions = play(seed, n, roundtrip_at=(seed % 40) if seed % 5 == 0 else None,
                          eager=seed % 2 == 1)
        reasons[g.result["reason"]] += 1
        if seed % 10 == 0:
            rec = json.loads(json.dumps(g.record()))
            assert Game.replay(rec).snapshot() == g.snapshot()
    assert sum(reasons.values()) == GAMES_PER_CHUNK


def test_same_seed_same_actions_same_game():
    for n in (2, 3, 4):
        for seed in (1, 2, 3):
            g1, a1 = play(seed, n)
            g2, a2 = play(seed, n)
            assert a1 == a2
            assert g1.snapshot() == g2.snapshot()


def test_replay_reproduces_every_intermediate_state():
    g, actions = play(12, 3)
    h = Game(**g.options, seed=g.seed)
    ref = Game(3, seed=12)
    for a in actions:
        assert h.snapshot() == ref.snapshot()
        h.apply(a)
        ref.apply(a)
    assert h.snapshot() == g.snapshot()


@pytest.mark.parametrize("n", [2, 3, 4])
def test_roundtrip_at_every_decision_of_some_games(n):
    for seed in range(10):
        rng = random.Random(seed)
        g = Game(n, seed=seed)
        while not g.is_over:
            snap = g.snapshot()
            h = Game.from_snapshot(json.loads(json.dumps(snap)))
            assert h.snapshot() == snap
            c = g.clone()
            a = rng.choice(g.legal_actions())
            for x in (g, h, c):
                x.apply(a)
            assert h.snapshot() == g.snapshot() == c.snapshot()


def test_clone_is_independent():
    g = Game(3, seed=8)
    before = g.snapshot()
    c = g.clone()
    rng = random.Random(0)
    while not c.is_over:
        c.apply(rng.choice(c.legal_actions()))
    assert g.snapshot() == before


def test_illegal_actions_in_random_positions_are_refused_without_changing_the_game():
    rng = random.Random(5)
    for seed in range(30):
        g = Game(2 + seed % 3, seed=seed)
        steps = 0
        while not g.is_over and steps < 25:
            legal = set(g.legal_actions())
            bad = [a for a in range(g.layout.size) if a not in legal]
            before = g.snapshot()
            for a in rng.sample(bad, min(3, len(bad))):
                with pytest.raises(IllegalActionError):
                    g.apply(a)
            assert g.snapshot() == before
            g.apply(rng.choice(sorted(legal)))
            steps += 1
