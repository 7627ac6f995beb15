"""A card set with card kinds past 127 plays the same games as the shipped one.

The core keeps the kinds a hand holds as bits for kinds below 128, and a hand with a wider kind
takes another path (state.hpp's ``Hand``, engine.hpp's ``each_kind``). The shipped card set has
56 kinds, so its games never take that path. Here the same card set is widened: padding events
come before the Hijinks cards, so every Hijinks card's kind is past 127. The padding cards start
in the past events, where nothing reads them. Actions do not number events, and snapshots name
cards, so a game restored into the wide set from a shipped set's game must then go the same way:
every decision, snapshot and score, and every action taken.
"""

import dataclasses
import random

import pytest

from havok_env.cards import default_cards
from havok_env.engine import Game

NARROW = default_cards()
EXTRA = 130 - NARROW.first_hijinks
PADDING = [f"Padding {i}" for i in range(EXTRA)]


def _padded(values: list, fill: list) -> list:
    return values[: NARROW.first_hijinks] + fill + values[NARROW.first_hijinks :]


def _wide_cards():
    names = _padded(NARROW.names, PADDING)
    return dataclasses.replace(
        NARROW, names=names, copies=_padded(NARROW.copies, [1] * EXTRA), value=_padded(NARROW.value, [0] * EXTRA),
        affinity=_padded(NARROW.affinity, [None] * EXTRA), n_events=NARROW.n_events + EXTRA,
        events=NARROW.events + [dataclasses.replace(NARROW.events[0], name=n) for n in PADDING],
        texts=_padded(NARROW.texts, [""] * EXTRA), kind_of={n: i for i, n in enumerate(names)})


WIDE = _wide_cards()


def _narrowed(d: dict) -> None:
    # ability references in the pending context number Hijinks cards and innate abilities by
    # kind, so the wide set's are EXTRA higher
    for key, value in d.items():
        if isinstance(value, dict):
            _narrowed(value)
        elif key == "ability" and isinstance(value, int) and value >= WIDE.first_hijinks:
            d[key] = value - EXTRA


def _trace(game: Game, rng: random.Random, wide: bool) -> tuple[list, list]:
    steps = []
    while legal := game.legal_actions():
        action = legal[rng.randrange(len(legal))]
        snap = game.snapshot()
        del snap["stack"]  # (its frames hold card kinds as numbers)
        snap["past_events"] = [e for e in snap["past_events"] if e not in PADDING]
        if wide:
            _narrowed(snap["pending"]["context"])
        steps.append((snap, action))
        game.apply(action)
    return steps, game.scores()


def test_every_hijinks_kind_is_past_the_bits():
    assert WIDE.first_hijinks >= 128 and WIDE.n_kinds == NARROW.n_kinds + EXTRA


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_wide_card_set_plays_the_same_games(num_players):
    decisions = 0
    for seed in range(40):
        narrow = Game(num_players, seed=seed)
        snap = narrow.snapshot()
        wide = Game.from_snapshot({**snap, "past_events": snap["past_events"] + PADDING}, cards=WIDE)
        expected = _trace(narrow, random.Random(seed), wide=False)
        assert _trace(wide, random.Random(seed), wide=True) == expected, f"seed {seed}"
        decisions += len(expected[0])
    assert decisions > 500  # whole games, crash windows and main decisions among them
