"""Play one game between agents with the bare engine: the one game loop of the project.

Tournaments (``evaluation.tournament``), train.py's evaluation, the imitation-learning games and
the benchmarks all play their games with :func:`play_game`; what they need to see of each decision
they get from its ``on_decision`` hook.

The seeds of the games between agents live here too: a tournament's deals (:func:`deal_seeds`),
an arena study's games (:func:`study_seed`) and the seed each agent is reset with
(:func:`agent_seed`; the arena's live games use it too), so the same game seed plays the same game
wherever it is played.
"""

from __future__ import annotations

import hashlib
import random

from havok_env.engine import Game
from havok_env.observe import Observer
from havok_env.view import SeatView


_MASK63 = (1 << 63) - 1


def agent_seed(game_seed: int, seat: int, agent: int | None = None) -> int:
    """The seed the agent in ``seat`` is reset with, for a game of seed ``game_seed``.

    ``agent`` (its index among a tournament's agents) mixes the agent into the seed: in duplicate
    play the same seed is dealt with the agents rotated over the seats, and two copies of a random
    agent would otherwise replay each other's choices from one rotation to the next.
    """
    seed = (game_seed * 1_000_003 + seat) & _MASK63
    if agent is not None:
        seed ^= ((agent + 1) * 0x9E3779B97F4A7C15) & _MASK63
    return seed


def deal_seeds(seed: int, deals: int) -> list[int]:
    """The game seeds of a tournament's first ``deals`` deals, fixed by its seed."""
    rng = random.Random(seed)
    return [rng.getrandbits(63) for _ in range(deals)]


def study_seed(seed: int, *place) -> int:
    """The game seed of one game of an arena study: 63 bits of a hash of the study's ``seed`` and
    the game's ``place`` in it (a deal number; ``"practice", n``), so that a study can deal any
    of its games without the ones before it."""
    key = "/".join(str(x) for x in ("havok-arena", seed, *place))
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


def play_game(agents: list, seed: int, dragons=None, log: bool = False, cards=None,
              on_decision=None, agent_ids: list[int] | None = None) -> dict:
    """Play a full game; ``agents[i]`` sits in seat ``i``. Returns the game record with its result.

    The record (``seed``, ``options``, ``actions``) replays the game exactly with
    ``Game.replay(record)``; the same seed deals the same game as ``env.reset(seed=seed)``. It also
    holds ``result``, ``dragons``, ``rewards``, ``turns``, ``decisions`` and ``first_player`` (the
    seat the engine drew to play the first turn).

    ``on_decision(seat, observation, mask, action)``, when given, is called at every decision after
    the agent in ``seat`` chose ``action`` and before it is applied (the observation and mask are
    the ones the agent saw). ``agent_ids[i]``, when given, is the tournament index of the agent in
    seat ``i``, mixed into its seed (:func:`agent_seed`).
    """
    n = len(agents)
    game = Game(n, dragons, seed=seed, cards=cards, log=log)
    first_player = game.current_player
    observer = Observer(game.cards)
    views = [SeatView(game, i) for i in range(n)]
    for i, agent in enumerate(agents):
        agent.reset(i, n, seed=agent_seed(seed, i, None if agent_ids is None else agent_ids[i]))
    while not game.is_over:
        seat = game.to_act
        obs, mask = observer.observe(game, seat)
        action = int(agents[seat].act(obs, mask, views[seat]))
        if on_decision is not None:
            on_decision(seat, obs, mask, action)
        game.apply(action)
    record = game.record()
    record.update(result=game.result, dragons=[game.dragon(i).name for i in range(n)],
                  rewards=game.rewards(), turns=game.s.turn, decisions=len(record["actions"]),
                  first_player=first_player)
    return record
