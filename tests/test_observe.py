"""The observation vector against a plain reference built feature by feature from the layout.

``Observer.observe`` is the env's hot path, written by the native core; this reference writes
every feature by its documented name and offset from the state, the slow and obvious way.
"""

import random

import numpy as np
import pytest

from havok_env import Game
from havok_env.observe import Observer

DECISION_SECTIONS = ("decision_kind", "purpose", "ability", "actor", "target", "trigger",
                     "trigger_card", "picks", "shown")


def reference(ob: Observer, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """Everything but the pending decision's context, feature by feature."""
    s, cs, off = game.s, game.cards, ob.offset
    obs = np.zeros(ob.size, np.float32)

    def count(section, kinds, first=0):
        for k in kinds:
            obs[off[section] + k - first] += 1

    count("hand", s.hands[seat], cs.first_hijinks)
    n = s.num_players
    for rel in range(n):
        p = (seat + rel) % n
        base = off["seats"] + rel * ob.seat_size

        def put(field, value, i=0):
            obs[base + ob.seat_offset[field] + i] = value

        put("present", 1)
        put("dragon", 1, s.dragons[p])
        put("ready", s.ready[p])
        put("innate_used", s.innate_used[p])
        put("cards_used", s.cards_used[p])
        put("cards_left", 0 if s.restricted[p] else max(0, s.card_limit[p] - s.cards_used[p]))
        put("restricted", s.restricted[p])
        put("is_current", p == s.current)
        put("hand_size", len(s.hands[p]) / 3.0)
        put("score", game.score(p) / 15.0)
        for k in s.hoards[p]:
            put("hoard", obs[base + ob.seat_offset["hoard"] + k] + 1, k)
    count("discard", s.discard, cs.first_hijinks)
    count("trash", s.trash)
    count("past_events", s.past_events, cs.first_event)
    count("canceled", [k for _, k in s.canceled], cs.first_hijinks)
    count("havok_remaining", s.havok)
    obs[off["havok_size"]] = len(s.havok) / 40.0
    obs[off["hijinks_size"]] = len(s.hijinks) / 40.0
    obs[off["turn"]] = s.turn / 40.0
    for i, k in enumerate(s.known[seat][:3]):
        obs[off["known_top"] + i * ob.n_havok + k] = 1
    mask = np.zeros(ob.layout.size, np.int8)
    if s.pending is not None and s.pending["player"] == seat:
        mask[s.pending["choices"]] = 1
    return obs, mask


def decision_part(ob: Observer, obs: np.ndarray) -> np.ndarray:
    return np.concatenate([obs[ob.offset[name]:ob.offset[name] + dict(ob.sections)[name]]
                           for name in DECISION_SECTIONS])


@pytest.mark.parametrize("n", [2, 3, 4])
def test_observation_matches_the_reference_for_every_seat(n):
    # the core writes the observation; the reference above computes it from the state in Python
    checked = 0
    for seed in range(12):
        game = Game(n, seed=seed)
        ob = Observer(game.cards)
        rng = random.Random(seed)
        while not game.is_over:
            for seat in range(n):
                obs, mask = ob.observe(game, seat)
                ref_obs, ref_mask = reference(ob, game, seat)
                assert obs.dtype == np.float32 and mask.dtype == np.int8
                assert np.array_equal(mask, ref_mask)
                deciding = seat == game.to_act
                if not deciding:  # no decision context for a seat that is not deciding
                    assert not decision_part(ob, obs).any()
                keep = np.ones(ob.size, bool)
                for name in DECISION_SECTIONS:
                    keep[ob.offset[name]:ob.offset[name] + dict(ob.sections)[name]] = False
                assert np.array_equal(obs[keep], ref_obs[keep]), (seed, seat)
                checked += 1
            choices = game.s.pending["choices"]
            game.apply(choices[rng.randrange(len(choices))])
    assert checked > 100 * n
