"""Play the agents a caller knows until a seat it does not must act: the one loop of the games that
stop for somebody else's decision.

The single-agent env (``havok_env/wrappers.py``) stops for its learner, RLlib's multi-agent env
(``training/rllib_env.py``) for the seats RLlib plays, and the arena (``arena/bots.py``) for the
person; between those decisions :func:`play_known` plays the bots. A whole game between agents is
:func:`agents.runner.play_game`.
"""

from __future__ import annotations


def play_known(game, agents: dict, observer, views) -> list[int]:
    """Let ``agents[seat]`` (``agent.act(observation, mask, view)``) take each decision until the
    game is over or the seat to act has no agent here; returns the actions taken, in order.
    ``views[seat]`` is the seat's :class:`havok_env.view.SeatView`, ``observer`` the game's
    :class:`havok_env.observe.Observer`."""
    played = []
    while not game.is_over:
        seat = game.to_act
        agent = agents.get(seat)
        if agent is None:
            break
        obs, mask = observer.observe(game, seat)
        action = int(agent.act(obs, mask, views[seat]))
        game.apply(action)
        played.append(action)
    return played
