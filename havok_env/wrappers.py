"""Single-agent Gymnasium view of Havok & Hijinks, for stable-baselines3 (MaskablePPO).

:class:`SingleAgentEnv` plays one seat, the *learner*, named by its dragon. Every other decision of
the game (the opponents' turns, their crash windows, targets they choose) is taken inside ``step``
by opponent agents, so the learner only sees the decisions that are its own. The learner's seat
position is drawn per episode from the env's seeded generator, so it plays every position; the
opponents' dragons are random and distinct unless given.

* observation: ``Box(float32, (observer.size,))``, the learner's observation vector (see
  ``havok_env.env``); ``action_masks()`` returns the learner's legal actions for MaskablePPO.
* action: ``Discrete(76)``, the shared action space.
* reward: 0 until the game ends, then the *learner's* own terminal reward (+1 sole winner, 0 tied
  leader, -1 otherwise). Optional ``shaping=c`` adds ``c`` times the change of the learner's lead
  (its hoard's worth minus the best opponent's, / 15, the winning score) at every step, a dense
  training signal; ``info["reward"]`` is always the game's own reward. An illegal action ends the
  episode with ``illegal_reward`` (default -1), like PettingZoo's ``TerminateIllegalWrapper``,
  unless ``illegal="raise"``.
* info at the end: ``result`` (the engine's result), ``reward``, ``won``, ``is_success``,
  ``learner_seat``, ``dragons`` and ``turns``.

Opponents follow the agents' duck-typed interface (``reset(seat, num_players, seed)`` and
``act(observation, action_mask, view) -> int``); this module never imports the ``agents`` package.
``opponents`` may be ``None`` (uniformly random legal play, seeded from the env's seed), an agent,
a factory (any callable without ``act``, called once per opponent seat with no arguments, which
is what to pass to ``SubprocVecEnv`` workers), or a list of those, one per opponent in clockwise
order from the learner. ``set_opponents(...)`` swaps them between episodes (``env_method`` in a
vector env), e.g. to add frozen self-play snapshots.
"""

from __future__ import annotations

import random
from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .cards import default_cards
from .constants import PLAYER_COUNTS, WIN_SCORE, is_player_count
from .engine import SEED_MAX, ActionLayout, ConfigError, Game, as_action, check_seed
from .observe import Observer
from .play import play_known
from .version import ENV_VERSION  # noqa: F401  (the environment's version, for the view's users)
from .view import SeatView

_SEED_MASK = (1 << 63) - 1
_WIN = float(WIN_SCORE)  # the lead is scaled like the observation's scores


class RandomOpponent:
    """Uniformly random legal play; reproducible from the seed given to :meth:`reset`."""

    name = "random"

    def __init__(self):
        self._rng = random.Random(0)

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self._rng.seed(seed)

    def act(self, observation, action_mask, view) -> int:
        return int(self._rng.choice(np.flatnonzero(action_mask)))

    def close(self) -> None:
        pass


def _is_agent(obj) -> bool:
    return not isinstance(obj, type) and callable(getattr(obj, "act", None))


def _build(spec):
    """An agent from an agent object or a zero-argument factory."""
    if spec is None:
        return RandomOpponent()
    if _is_agent(spec):
        return spec
    if callable(spec):
        agent = spec()
        if not _is_agent(agent):
            raise TypeError(f"opponent factory {spec!r} returned {agent!r}, which has no act()")
        return agent
    raise TypeError(f"an opponent must be an agent (with act()) or a factory of one, not {spec!r}")


class SingleAgentEnv(gym.Env):
    """One learner seat of Havok & Hijinks as a Gymnasium env; opponents play inside ``step``.

    Arguments: ``dragon`` (name or affinity of the learner's dragon, e.g. ``"fire"`` or
    ``"Ruby"``), ``num_players`` (2-4), ``opponents`` (see the module docstring),
    ``opponent_dragons`` (a list of num_players-1 dragon names or ``None`` entries, for the
    opponents in clockwise order from the learner; ``None``: random distinct), ``seat``
    (``None``: a random seat each episode; an int fixes it), ``illegal`` (``"lose"`` or
    ``"raise"``), ``illegal_reward``, ``cards`` (a card set; default the standard one).
    """

    metadata: ClassVar[dict] = {"render_modes": [], "name": "havok_hijinks_single_v0"}

    def __init__(self, dragon="fire", num_players: int = 2, opponents=None, opponent_dragons=None,
                 seat: int | None = None, illegal: str = "lose", illegal_reward: float = -1.0,
                 shaping: float = 0.0, cards=None):
        super().__init__()
        self.cards = cards or default_cards()
        if not is_player_count(num_players):
            raise ConfigError(f"num_players must be {PLAYER_COUNTS}, not {num_players!r}")
        try:
            self.dragon_index = self.cards.dragon_index(dragon)
        except ValueError as e:
            raise ConfigError(str(e)) from None
        self.dragon = self.cards.dragons[self.dragon_index].name
        self.num_players = num_players
        if opponent_dragons is not None:
            opponent_dragons = list(opponent_dragons)
            if len(opponent_dragons) != num_players - 1:
                raise ConfigError(f"opponent_dragons names {len(opponent_dragons)} dragon(s) for "
                                  f"{num_players - 1} opponent(s)")
            # validates names and distinctness with the engine's own messages
            Game(num_players, [dragon] + opponent_dragons, seed=0, cards=self.cards)
        self.opponent_dragons = opponent_dragons
        if seat is not None and not (isinstance(seat, int) and 0 <= seat < num_players):
            raise ConfigError(f"seat must be None or 0..{num_players - 1}, not {seat!r}")
        self.fixed_seat = seat
        if illegal not in ("lose", "raise"):
            raise ValueError(f"illegal must be 'lose' or 'raise', not {illegal!r}")
        self.illegal = illegal
        self.illegal_reward = float(illegal_reward)
        self.shaping = float(shaping)
        self.observer = Observer(self.cards)
        self.layout = ActionLayout(self.cards)
        self.observation_space = spaces.Box(*self.observer.bounds(), dtype=np.float32)
        self.action_space = spaces.Discrete(self.layout.size)
        self.set_opponents(opponents)
        self.game: Game | None = None
        self.seat = 0
        self._mask = np.zeros(self.layout.size, dtype=np.int8)
        self._views: list = []

    # -- opponents --------------------------------------------------------------------------------

    def set_opponents(self, opponents=None) -> None:
        """Replace the opponents (takes effect at the next reset)."""
        n_opp = self.num_players - 1
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != n_opp:
                raise ConfigError(f"opponents names {len(opponents)} agent(s) for {n_opp} opponent(s)")
            specs = list(opponents)
        else:
            specs = [opponents] * n_opp
        built = []
        for spec in specs:
            # one agent object given for all seats is shared; factories build one per seat
            built.append(_build(spec))
        self.opponents = built

    # -- gymnasium API ---------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        # the seeds a game takes (engine.check_seed), each as the game's generator takes it
        super().reset(seed=None if seed is None else check_seed(seed) & SEED_MAX)
        # A game that ends before the learner's first decision (rare) has nothing to learn from:
        # deal another one.
        for _ in range(1000):
            self._new_game()
            if not self.game.is_over:
                break
        self._potential = self._lead()
        obs = self._observe()
        return obs, self._info()

    def _new_game(self) -> None:
        rng = self.np_random
        n = self.num_players
        self.seat = int(rng.integers(n)) if self.fixed_seat is None else self.fixed_seat
        dragons = [None] * n
        dragons[self.seat] = self.dragon_index
        self._opp_seats = [(self.seat + i) % n for i in range(1, n)]
        if self.opponent_dragons is not None:
            for q, d in zip(self._opp_seats, self.opponent_dragons):
                dragons[q] = d
        game_seed = int(rng.integers(_SEED_MASK))
        self.game = Game(n, [self.cards.dragons[d].name if isinstance(d, int) else d for d in dragons],
                         seed=game_seed, cards=self.cards)
        self._views = [SeatView(self.game, q) for q in range(n)]
        self._agent_of = {}
        for q, agent in zip(self._opp_seats, self.opponents):
            agent.reset(q, n, seed=int(rng.integers(_SEED_MASK)))
            self._agent_of[q] = agent
        self._play_opponents()

    def step(self, action):
        game = self.game
        if game is None or game.is_over:
            raise RuntimeError("step() called on a finished episode; call reset()")
        action = as_action(action)  # (not an integer: IllegalActionError, whatever ``illegal`` says)
        if action not in game.s.pending["choices"]:
            if self.illegal == "raise":
                game.apply(action)  # raises IllegalActionError with a full explanation
            obs = self._observe()
            self._mask[:] = 0
            self._mask[0] = 1
            info = self._info()
            info.update(illegal_action=True, reward=self.illegal_reward, won=False, is_success=False)
            self.game = None
            return obs, self.illegal_reward, True, False, info
        game.apply(action)
        self._play_opponents()
        obs = self._observe()
        shaped = 0.0
        if self.shaping:
            lead = self._lead()
            shaped, self._potential = self.shaping * (lead - self._potential), lead
        if game.is_over:
            reward = float(game.rewards()[self.seat])
            info = self._info()
            return obs, reward + shaped, True, False, info
        return obs, shaped, False, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (bool); a dummy 'action 0' mask once the episode is over."""
        return self._mask.astype(bool)

    def close(self):
        for agent in self.opponents:
            close = getattr(agent, "close", None)
            if close is not None:
                close()

    # -- internals -----------------------------------------------------------------------------

    def _play_opponents(self) -> None:
        play_known(self.game, self._agent_of, self.observer, self._views)  # up to the learner's turn

    def _lead(self) -> float:
        """The learner's score minus the best opponent's, / WIN_SCORE (the shaping potential)."""
        if not self.shaping:
            return 0.0
        scores = self.game.scores()
        return (scores[self.seat] - max(scores[q] for q in self._opp_seats)) / _WIN

    def _observe(self) -> np.ndarray:
        obs, mask = self.observer.observe(self.game, self.seat)
        if self.game.is_over:
            mask[:] = 0
            mask[0] = 1  # never all-False: MaskablePPO may evaluate the final observation
        self._mask = mask
        return obs

    def _info(self) -> dict:
        game = self.game
        info = {"learner_seat": self.seat}
        if game.is_over:
            winners = game.result["winners"]
            reward = float(game.rewards()[self.seat])
            info.update(result=game.result, reward=reward,
                        won=winners == [self.seat], is_success=winners == [self.seat],
                        draw=len(winners) > 1 and self.seat in winners,
                        dragons=[game.dragon(q).name for q in range(self.num_players)],
                        turns=game.s.turn)
        return info


def make_env(dragon="fire", num_players: int = 2, opponents=None, seed: int | None = None, **kwargs):
    """A zero-argument constructor of :class:`SingleAgentEnv` for ``SubprocVecEnv``."""

    def _init():
        env = SingleAgentEnv(dragon, num_players, opponents=opponents, **kwargs)
        if seed is not None:
            env.reset(seed=seed)
            env.action_space.seed(seed)
        return env

    return _init
