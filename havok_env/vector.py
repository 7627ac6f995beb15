"""Batched stepping: N games stepped in one call, for high-throughput learners.

:class:`VectorGames` holds ``num_envs`` games in the native core. ``step(actions)`` takes one
action per game (a NumPy integer array, each for the seat whose decision is pending there) and
returns, for every game, the observation and action mask of the seat to act next, the rewards
(per seat, nonzero only on the step that ends the game), whether the game ended, and the seat to
act; a game that ends is replaced at once by a new one (automatic reset), dealt from the batch's
seeded generator. The core works with the GIL released, optionally on ``threads`` worker threads,
and writes straight into NumPy buffers with the documented observation layout
(:mod:`havok_env.observe`). The arrays returned are those buffers: the next call overwrites them
(copy what you keep). A batch of actions with an illegal one is refused whole, with
:class:`~havok_env.engine.IllegalActionError`, and changes nothing.

:class:`SingleAgentVectorEnv` is a Gymnasium vector env on top of it for the single-agent view:
in each game one seat, drawn per game, is the learner, and the others play uniformly random legal
actions inside the core (the single-agent view's default opponents, ``havok_env.wrappers``);
rewards are the learner's (+1 sole winner, 0 tied leader, -1 otherwise), the legal actions are
``infos["action_mask"]``, and resets are Gymnasium's same-step autoreset (the ended game's last
observation in ``infos["final_obs"]``).

    import numpy as np
    from havok_env.vector import VectorGames, random_legal_actions

    games = VectorGames(256, num_players=2, seed=0, threads=2)
    obs, mask, to_act = games.reset()
    rng = np.random.default_rng(0)
    for _ in range(1000):
        actions = random_legal_actions(mask, rng)  # or a policy's choices, one per game
        obs, mask, rewards, terminated, to_act = games.step(actions)

``python -m havok_env.vector`` runs that loop and prints the steps per second.
"""

from __future__ import annotations

import secrets
from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import _core
from .cards import CardSet, default_cards
from .constants import PLAYER_COUNTS, is_player_count
from .engine import ConfigError, Game, IllegalActionError, check_seed, tables
from .observe import Observer

_SEED_MASK = (1 << 64) - 1


def _check(num_envs, num_players, threads):
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or not 1 <= num_envs <= 1_000_000:
        raise ConfigError(f"num_envs must be an integer from 1 to 1000000, not {num_envs!r}")
    if not is_player_count(num_players):
        raise ConfigError(f"num_players must be {PLAYER_COUNTS}, not {num_players!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ConfigError(f"threads must be a positive integer, not {threads!r}")


def _seed(seed) -> int:
    if seed is None:
        return secrets.randbits(64)
    return check_seed(seed) & _SEED_MASK


class _Batch:
    """The core's batch and its buffers (shared by both views)."""

    def __init__(self, num_envs, num_players, seed, threads, cards, learner, state=False):
        _check(num_envs, num_players, threads)
        self.cards = cards or default_cards()
        self.observer = Observer(self.cards)
        self.num_envs, self.num_players, self.threads = num_envs, num_players, threads
        self._layout = self.observer._core_layout
        self._per_env = 1 if learner else num_players
        self._core = _core.Batch(tables(self.cards).core, self._layout, num_envs, num_players,
                                 _seed(seed), learner)
        n_actions = self.observer.layout.size
        self.obs = np.zeros((num_envs, self.observer.size), np.float32)
        self.mask = np.zeros((num_envs, n_actions), np.int8)
        self.rewards = np.zeros((num_envs, self._per_env) if not learner else num_envs, np.float32)
        self.terminated = np.zeros(num_envs, np.bool_)
        self._terminated_u8 = self.terminated.view(np.uint8)  # the core's view of it
        self.to_act = np.zeros(num_envs, np.int32)
        self.final_obs = np.zeros_like(self.obs) if learner else None
        # the learner view's controllers of each seat, and (when asked) every seat's observation
        self.ctrl = np.zeros((num_envs, num_players), np.int8) if learner else None
        width = num_players * self.observer.size
        self.state = np.zeros((num_envs, width), np.float32) if state else None
        self.final_state = np.zeros_like(self.state) if state else None

    def _extra(self):
        return {"ctrl": self.ctrl, "state": self.state}

    def reset(self, seed):
        self._core.reset(self._layout, self._per_env, _seed(seed), self.obs, self.mask,
                         self.rewards, self._terminated_u8, self.to_act, **self._extra())

    def step(self, actions):
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":  # (bools are kind "b")
            raise IllegalActionError(f"actions must be {self.num_envs} integers (one per game), not "
                                     f"an array of shape {a.shape} and type {a.dtype}")
        a = np.ascontiguousarray(a, np.int64)
        bad = self._core.step(self._layout, self._per_env, a, self.obs, self.mask, self.rewards,
                              self._terminated_u8, self.to_act, self.final_obs, self.threads,
                              final_state=self.final_state, **self._extra())
        if bad >= 0:
            raise IllegalActionError(f"game {bad}: action {int(a[bad])} is not legal for its pending "
                                     f"decision; legal: {np.flatnonzero(self.mask[bad]).tolist()}")

    def step_some(self, idx, actions):
        """The learner view: step games ``idx`` only (each waiting on a policy outside the core)."""
        idx = np.ascontiguousarray(idx, np.int64)
        a = np.ascontiguousarray(actions, np.int64)
        bad = self._core.step_some(self._layout, idx, a, self.obs, self.mask, self.rewards,
                                   self._terminated_u8, self.to_act, self.final_obs, self.threads,
                                   final_state=self.final_state, **self._extra())
        if bad >= 0:
            raise IllegalActionError(f"game {int(idx[bad])}: action {int(a[bad])} is not legal for its "
                                     f"pending decision")


class VectorGames:
    """``num_envs`` games stepped together (see the module docstring).

    ``VectorGames(num_envs, num_players=2, seed=None, threads=1, cards=None)``; dragons are drawn
    at random per game. ``game(i)`` is a copy of game ``i`` as a :class:`~havok_env.engine.Game`
    (to inspect or render it).
    """

    def __init__(self, num_envs: int, num_players: int = 2, seed: int | None = None,
                 threads: int = 1, cards: CardSet | None = None):
        self._b = _Batch(num_envs, num_players, seed, threads, cards, learner=False)
        self.num_envs, self.num_players = num_envs, num_players
        self.observer = self._b.observer
        self._seed = seed

    def reset(self, seed: int | None = None):
        """New games everywhere: (observations, masks, seats to act)."""
        b = self._b
        b.reset(self._seed if seed is None else seed)
        return b.obs, b.mask, b.to_act

    def step(self, actions):
        """(observations, masks, rewards [num_envs, num_players], terminated, seats to act)."""
        b = self._b
        b.step(actions)
        return b.obs, b.mask, b.rewards, b.terminated, b.to_act

    def game(self, i: int):
        return _game_copy(self._b, self.num_players, i)


class SingleAgentVectorEnv(gym.vector.VectorEnv):
    """Gymnasium vector env of the single-agent view against random opponents, stepped in the
    core (see the module docstring). ``infos["action_mask"]`` holds the legal actions."""

    metadata: ClassVar[dict] = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, num_players: int = 2, seed: int | None = None,
                 threads: int = 1, cards: CardSet | None = None, copy: bool = True):
        self._b = _Batch(num_envs, num_players, seed, threads, cards, learner=True)
        self._seed, self._copy = seed, copy
        self.num_envs = num_envs
        low, high = self._b.observer.bounds()
        self.single_observation_space = spaces.Box(low, high, dtype=np.float32)
        self.single_action_space = spaces.Discrete(self._b.observer.layout.size)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)

    def _out(self, x):
        return x.copy() if self._copy else x

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        b = self._b
        b.reset(self._seed if seed is None else seed)
        return self._out(b.obs), {"action_mask": self._out(b.mask),
                                  "learner_seat": self._out(b.to_act)}

    def step(self, actions):
        b = self._b
        b.step(actions)
        infos = {"action_mask": self._out(b.mask), "learner_seat": self._out(b.to_act)}
        if b.terminated.any():
            infos["final_obs"] = self._out(b.final_obs)
            infos["_final_obs"] = b.terminated.copy()
        return (self._out(b.obs), self._out(b.rewards), self._out(b.terminated),
                np.zeros(self.num_envs, np.bool_), infos)

    def action_masks(self) -> np.ndarray:
        return self._b.mask.copy()


class LearnerGames:
    """``num_envs`` games, each with one learner seat against a league of opponents, stepped in
    the core (see the module docstring).

    ``LearnerGames(num_envs, num_players=2, dragon=None, opponents=("random",), weights=None,
    seed=None, threads=1, cards=None, state=False)``. ``dragon`` fixes the learner's dragon (name
    or affinity; ``None``: random per game). Each opponent seat of each new game is drawn from
    ``opponents`` with ``weights`` (default equal): ``"random"`` and ``"heuristic"`` play inside
    the core during the step; any other member is a *batched policy*, a callable
    ``policy(observations [k, obs], masks [k, actions]) -> actions [k]`` that gets, in one call,
    every game waiting on it (its own seat's observations: nothing of the learner's). A step
    returns once every game waits on its learner again. ``set_opponents`` changes the league for
    the games dealt from then on (a self-play league adds snapshots there).

    ``reset(seed=None)`` -> (observations, masks); ``step(actions)`` -> (observations, masks,
    rewards, terminated): the learner's reward (+1 sole winner, 0 tied leader, -1 otherwise) on
    the step that ends its game, after which the game is replaced by a new one (its learner's
    last observation in ``final_obs``). ``learner_seat`` is each game's learner seat. With
    ``state=True`` the batch also keeps ``state`` (and ``final_state``): every seat's observation
    of the game, the learner's first and the others clockwise from it, ``num_players *
    observer.size`` values, for a centralised critic (never for the actor: it holds the other
    seats' hands). The arrays are the core's buffers, overwritten by the next call.
    """

    def __init__(self, num_envs: int, num_players: int = 2, dragon=None, opponents=("random",),
                 weights=None, seed: int | None = None, threads: int = 1, cards: CardSet | None = None,
                 state: bool = False):
        self._b = b = _Batch(num_envs, num_players, seed, threads, cards, learner=True, state=state)
        self.num_envs, self.num_players, self.observer = num_envs, num_players, b.observer
        if dragon is None:
            self.dragon_index = -1
        else:
            try:
                self.dragon_index = b.cards.dragon_index(dragon)
            except ValueError as e:
                raise ConfigError(str(e)) from None
        self._seed = seed
        self._policies: dict = {}  # controller number -> batched policy
        self.ended_controllers = np.zeros_like(b.ctrl)
        self._rows = np.arange(num_envs)  # (each game's row, for reading its seat to act)
        self.set_opponents(opponents, weights)

    @property
    def obs(self):
        return self._b.obs

    @property
    def mask(self):
        return self._b.mask

    @property
    def state(self):
        return self._b.state

    @property
    def final_obs(self):
        return self._b.final_obs

    @property
    def final_state(self):
        return self._b.final_state

    @property
    def learner_seat(self):
        return self._b.to_act

    def set_opponents(self, opponents, weights=None) -> None:
        """The league of the games dealt from now on (see the class docstring)."""
        opponents = list(opponents)
        if not opponents:
            raise ConfigError("opponents must name at least one opponent")
        weights = [1.0] * len(opponents) if weights is None else [float(w) for w in weights]
        if len(weights) != len(opponents) or not all(np.isfinite(w) and w >= 0 for w in weights) \
                or sum(weights) <= 0:
            raise ConfigError("weights must be one finite, non-negative number per opponent, "
                              "not all zero")
        # a policy stays registered while a game in progress is played by it
        in_use = set(np.unique(self._b.ctrl).tolist())
        self._policies = {k: f for k, f in self._policies.items() if k in in_use}
        kinds = []
        for o in opponents:
            if isinstance(o, str) and o in ("random", "heuristic"):
                kinds.append(_core.Batch.RANDOM if o == "random" else _core.Batch.HEURISTIC)
                continue
            if not callable(o):
                raise ConfigError(f"an opponent is 'random', 'heuristic' or a batched policy "
                                  f"(a callable), not {o!r}")
            slot = next((k for k, f in self._policies.items() if f is o), None)
            if slot is None:
                free = [k for k in range(1, _core.Batch.MAX_POLICIES) if k not in self._policies]
                if not free:
                    raise ConfigError(f"at most {_core.Batch.MAX_POLICIES - 1} policies at once")
                slot = free[0]
                self._policies[slot] = o
            kinds.append(slot)
        if all(k == _core.Batch.RANDOM for k in kinds):  # the default, drawn as it always was
            kinds, weights = [], []
        self._b._core.set_league(self.dragon_index, kinds, weights)

    def reset(self, seed: int | None = None):
        """New games everywhere: (observations, masks)."""
        self._b.reset(self._seed if seed is None else seed)
        self._settle()
        return self._b.obs, self._b.mask

    def step(self, actions):
        """The learners' actions, one per game: (observations, masks, rewards, terminated).
        ``ended_controllers`` then holds each game's seat controllers as they were before the
        step: for a game that ended, whom its learner played (:meth:`opponent`)."""
        b = self._b
        np.copyto(self.ended_controllers, b.ctrl)
        b.step(actions)
        self._settle()
        return b.obs, b.mask, b.rewards, b.terminated

    def opponent(self, controller: int):
        """The opponent a seat controller stands for (``"random"``, ``"heuristic"`` or a batched
        policy), ``None`` for the learner's own seat (0)."""
        c = int(controller)
        if c == 0:
            return None
        if c < 0:
            return "random" if c == _core.Batch.RANDOM else "heuristic"
        return self._policies.get(c)

    def _settle(self) -> None:
        """Let the batched policies act, each once for all the games waiting on it, until every
        game waits on its learner."""
        b = self._b
        while True:
            waiting = b.ctrl[self._rows, b.to_act]
            idx = np.flatnonzero(waiting > 0)
            if not idx.size:
                return
            who = waiting[idx]
            actions = np.empty(idx.size, np.int64)
            for k in np.unique(who):
                sel = who == k
                actions[sel] = self._policies[int(k)](b.obs[idx[sel]], b.mask[idx[sel]])
            b.step_some(idx, actions)

    def game(self, i: int):
        """A copy of game ``i`` as a :class:`~havok_env.engine.Game`."""
        return _game_copy(self._b, self.num_players, i)


def _game_copy(b: _Batch, num_players: int, i: int) -> Game:
    return Game._from_core(b._core.game(i), b.cards, None, {"num_players": num_players, "dragons": None})


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (``[num_envs, n_actions]``, nonzero
    where legal, every row with at least one), drawn as a learner samples a masked categorical
    policy: one uniform number per game picks among its legal actions (inverse CDF), vectorised,
    without a random number per action."""
    n, width = mask.shape
    legal = np.flatnonzero(mask.view(np.bool_) if mask.dtype.itemsize == 1 else mask)
    counts = np.bincount(legal // width, minlength=n)  # legal actions per game, in game order
    if not counts.all():
        raise ValueError(f"game {int(np.argmin(counts))} has no legal action in the mask")
    first = np.cumsum(counts) - counts
    return legal[first + (rng.random(n) * counts).astype(np.intp)] - np.arange(n) * width


def _demo(num_envs: int = 256, steps: int = 2000, threads: int = 1):
    import time

    games = VectorGames(num_envs, num_players=2, seed=0, threads=threads)
    obs, mask, to_act = games.reset()
    rng = np.random.default_rng(0)
    ended = 0
    start = time.perf_counter()
    for _ in range(steps):
        obs, mask, rewards, terminated, to_act = games.step(random_legal_actions(mask, rng))
        ended += int(terminated.sum())
    took = time.perf_counter() - start
    print(f"{num_envs} games x {steps} steps: {num_envs * steps / took:,.0f} steps/s "
          f"({ended} games ended and were reset)")


if __name__ == "__main__":
    _demo()
