"""Play one game between agents with the bare engine: the one game loop of the project.

Tournaments (``evaluate.py``), train.py's evaluation, the imitation-learning games and the
benchmarks all play their games with :func:`play_game`; what they need to see of each decision
they get from its ``on_decision`` hook. The seed each agent is reset with comes from
:func:`agent_seed` (the arena's live games use it too), so the same game seed plays the same game
wherever it is played.
"""

from __future__ import annotations

from havok_env.engine import Game
from havok_env.observe import Observer
from havok_env.view import SeatView


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed the agent in ``seat`` is reset with, for a game of seed ``game_seed``."""
    return (game_seed * 1_000_003 + seat) & ((1 << 63) - 1)


def play_game(agents: list, seed: int, dragons=None, log: bool = False, cards=None,
              on_decision=None) -> dict:
    """Play a full game; ``agents[i]`` sits in seat ``i``. Returns the game record with its result.

    The record (``seed``, ``options``, ``actions``) replays the game exactly with
    ``Game.replay(record)``; the same seed deals the same game as ``env.reset(seed=seed)``. It also
    holds ``result``, ``dragons``, ``rewards``, ``turns``, ``decisions`` and ``first_player`` (the
    seat the engine drew to play the first turn).

    ``on_decision(seat, observation, mask, action)``, when given, is called at every decision after
    the agent in ``seat`` chose ``action`` and before it is applied (the observation and mask are
    the ones the agent saw).
    """
    n = len(agents)
    game = Game(n, dragons, seed=seed, cards=cards, log=log)
    first_player = game.current_player
    observer = Observer(game.cards)
    views = [SeatView(game, i) for i in range(n)]
    for i, agent in enumerate(agents):
        agent.reset(i, n, seed=agent_seed(seed, i))
    actions = []
    while not game.is_over:
        seat = game.to_act
        obs, mask = observer.observe(game, seat)
        action = int(agents[seat].act(obs, mask, views[seat]))
        if on_decision is not None:
            on_decision(seat, obs, mask, action)
        game.apply(action)
        actions.append(action)
    record = game.record(actions)
    record.update(result=game.result, dragons=[game.dragon(i).name for i in range(n)],
                  rewards=game.rewards(), turns=game.s.turn, decisions=len(actions),
                  first_player=first_player)
    return record
