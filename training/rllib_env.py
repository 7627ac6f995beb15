"""Havok & Hijinks as an RLlib ``MultiAgentEnv`` for ``train_rllib.py`` (RLlib's new API stack).

Each game seats one *learner* (agent id ``"learner"``, RLlib module ``"learner"``) on a random seat,
playing ``dragon`` (a policy per dragon, as ``train.py`` trains; ``None``: a random dragon each
game, one policy shared by every dragon, the observation naming the one it plays), and fills every
other seat from ``opponents``: a bot spec (``heuristic``, ``random``, ``search:40``...; it plays
inside the env, like :class:`havok_env.wrappers.SingleAgentEnv`'s opponents) or ``"self"``, a seat
played through RLlib by a frozen earlier copy of the learner (agent id ``"frozen_SEAT"``, mapped to
one of the modules ``frozen_0..frozen_{k-1}``, which ``train_rllib.py`` refreshes with the learner's
weights as it trains). ``agents`` maps specs to agents already made, or is a Ray object
reference to such a map (``train_rllib.py`` loads every saved model once, in the driver, with
:func:`load_opponents`, and puts them in Ray's object store, from which each node reads them once):
a spec found there is not resolved again, so a model file need exist only where the driver runs.

Every decision goes to the seat that must take it, crash windows included, so RLlib sees each
RLlib-played seat's own decisions in order. Observations are
``{"observations": float32[643], "action_mask": float32[76]}`` (the keys of RLlib's
``ActionMaskingTorchRLModule``), only for the seat that must decide. The reward is 0 until the
end, then the game's reward (+1 sole winner, -1 the rest, 0 to tied leaders) to every RLlib seat
that has played. An illegal action raises :class:`havok_env.IllegalActionError`: the masking
module never samples one, and a run that did would stop rather than learn from it.
"""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np
import ray
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from agents import make_agent
from agents.policy import is_model_spec
from havok_env.cards import default_cards
from havok_env.constants import PLAYER_COUNTS, is_player_count
from havok_env.engine import ActionLayout, ConfigError, Game
from havok_env.observe import Observer
from havok_env.play import play_known
from havok_env.view import SeatView

LEARNER = "learner"
SELF = "self"


def load_opponents(specs) -> dict:
    """The saved models among ``specs`` (a model's path, ``pretrained:NAME``, ``rllib:CHECKPOINT``),
    each loaded once, as ``{spec: agent}`` for the ``agents`` of the env's config; every other
    spec is checked (:class:`agents.AgentSpecError` for a bad one) and left to the env."""
    loaded = {}
    for spec in dict.fromkeys(specs):
        if spec == SELF:
            continue
        agent = make_agent(spec)
        if is_model_spec(spec) or spec.strip().startswith("rllib:"):
            loaded[spec] = agent
    return loaded


def frozen_modules(k: int) -> list[str]:
    return [f"frozen_{i}" for i in range(k)]


def map_agent(agent_id, episode=None, *, frozen=(), **kwargs) -> str:
    """RLlib's policy mapping: the learner to its module, a frozen seat to one of the snapshots."""
    if agent_id == LEARNER:
        return LEARNER
    return random.choice(frozen)


class HavokMultiAgentEnv(MultiAgentEnv):
    """``config``: ``dragon`` (default ``"fire"``), ``players`` (2-4, default 2) and ``opponents``
    (specs, ``"self"`` allowed); the opponents' dragons are random and distinct."""

    def __init__(self, config=None):
        super().__init__()
        config = dict(config or {})
        self.num_players = config.get("players", 2)
        if not is_player_count(self.num_players):
            raise ConfigError(f"players must be {PLAYER_COUNTS}, not {self.num_players!r}")
        self.opponent_specs = list(config.get("opponents", ["heuristic"]))
        if not self.opponent_specs:
            raise ConfigError("opponents names no opponent")
        shipped = config.get("agents") or {}
        if isinstance(shipped, ray.ObjectRef):
            shipped = ray.get(shipped)
        self._bots = {s: shipped[s] if s in shipped else make_agent(s)  # make_agent checks the spec
                      for s in self.opponent_specs if s != SELF}
        self.cards = default_cards()
        dragon = config.get("dragon", "fire")
        try:
            self.dragon = None if dragon is None else self.cards.dragons[self.cards.dragon_index(dragon)].name
        except ValueError as e:
            raise ConfigError(str(e)) from None
        self.observer = Observer(self.cards)
        n_actions = ActionLayout(self.cards).size
        self.possible_agents = [LEARNER] + [f"frozen_{q}" for q in range(self.num_players)]
        self.agents = []
        space = gym.spaces.Dict({
            "observations": gym.spaces.Box(*self.observer.bounds(), dtype=np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (n_actions,), np.float32),
        })
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gym.spaces.Discrete(n_actions) for a in self.possible_agents}
        self._rng = random.Random()
        self.game = None

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._rng.seed(seed)
        for _ in range(1000):  # a game over before any RLlib seat decides is dealt again
            self._deal()
            if not self.game.is_over:
                break
        return self._obs(), {}

    def _deal(self):
        rng, n = self._rng, self.num_players
        self.learner_seat = rng.randrange(n)
        dragons = [self.dragon if q == self.learner_seat else None for q in range(n)]
        self.game = Game(n, dragons, seed=rng.getrandbits(63), cards=self.cards)
        self._player = {self.learner_seat: LEARNER}  # seat -> RLlib agent id, or the bot
        self._views = {}
        for q in range(n):
            if q == self.learner_seat:
                continue
            spec = rng.choice(self.opponent_specs)
            if spec == SELF:
                self._player[q] = f"frozen_{q}"
            else:
                bot = self._player[q] = self._bots[spec]
                bot.reset(q, n, seed=rng.getrandbits(63))
                self._views[q] = SeatView(self.game, q)
        self.agents = [a for a in self._player.values() if isinstance(a, str)]
        self._bots_at = {q: bot for q, bot in self._player.items() if not isinstance(bot, str)}
        self._played = set()
        self._play_bots()

    def _play_bots(self):
        play_known(self.game, self._bots_at, self.observer, self._views)  # up to an RLlib seat's turn

    def _obs(self):
        q = self.game.to_act
        obs, mask = self.observer.observe(self.game, q)
        return {self._player[q]: {"observations": obs, "action_mask": mask.astype(np.float32)}}

    def step(self, action_dict):
        (agent, action), = action_dict.items()
        q = self.game.to_act
        if self._player[q] != agent:
            raise RuntimeError(f"{agent} acted, but the decision is {self._player[q]}'s")
        self.game.apply(int(action))  # IllegalActionError for a masked action
        self._played.add(agent)
        self._play_bots()
        if not self.game.is_over:
            return self._obs(), {agent: 0.0}, {"__all__": False}, {"__all__": False}, {}
        rewards = self.game.rewards()
        seat_of = {a: q for q, a in self._player.items() if isinstance(a, str)}
        done = sorted(self._played)
        final = {}
        for a in done:
            obs, mask = self.observer.observe(self.game, seat_of[a])
            mask = np.zeros(len(mask), np.float32)
            mask[0] = 1.0  # never all masked, should a final observation be evaluated
            final[a] = {"observations": obs, "action_mask": mask}
        return (final, {a: float(rewards[seat_of[a]]) for a in done},
                {**{a: True for a in done}, "__all__": True},
                {**{a: False for a in done}, "__all__": False}, {})
