"""Play one game between agents with the bare engine (what tournaments and benchmarks use)."""

from __future__ import annotations

from havok_env.engine import Game
from havok_env.observe import Observer
from havok_env.view import SeatView


def play_game(agents: list, seed: int, dragons=None, log: bool = False, cards=None) -> dict:
    """Play a full game; ``agents[i]`` sits in seat ``i``. Returns the game record with its result.

    The record (``seed``, ``options``, ``actions``) replays the game exactly with
    ``Game.replay(record)``; the same seed deals the same game as ``env.reset(seed=seed)``.
    """
    n = len(agents)
    game = Game(n, dragons, seed=seed, cards=cards, log=log)
    observer = Observer(game.cards)
    views = [SeatView(game, i) for i in range(n)]
    for i, agent in enumerate(agents):
        agent.reset(i, n, seed=(seed * 1_000_003 + i) & ((1 << 63) - 1))
    actions = []
    while not game.is_over:
        seat = game.to_act
        obs, mask = observer.observe(game, seat)
        action = int(agents[seat].act(obs, mask, views[seat]))
        game.apply(action)
        actions.append(action)
    record = game.record(actions)
    record.update(result=game.result, dragons=[game.dragon(i).name for i in range(n)],
                  rewards=game.rewards(), turns=game.s.turn, decisions=len(actions))
    return record
