"""The batched training environment: a stable-baselines3 ``VecEnv`` over the core's batched games.

:class:`HavokVecEnv` runs ``num_envs`` games of one learner seat in one process
(:class:`havok_env.vector.LearnerGames`): each ``step`` takes the learner's action in every game,
the heuristic and random opponents play inside the core, and frozen policies (trained models,
self-play snapshots) act in one batched forward pass for all the games that wait on them, until
every game waits on its learner again. Finished games are replaced at once (the ended game's last
observation in ``infos[i]["terminal_observation"]``). ``action_masks()`` gives the legal actions
in the form sb3-contrib's MaskablePPO reads::

    from sb3_contrib import MaskablePPO
    from training.vec_env import HavokVecEnv

    venv = HavokVecEnv(64, dragon="fire", opponents=["heuristic"], seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=1024).learn(100_000)

The observation is the seat's documented observation (``havok_env.env``'s, byte for byte). With
``state=True`` it is the state instead: every seat's observation, the learner's own first
(``num_players * observer.size`` values), for :class:`agents.sb3_model.AsymmetricPolicy`, whose
actor reads only the first ``observer.size`` values and whose critic reads all of them.

Opponents are agent specs (``random``, ``heuristic``, a model path or ``pretrained:NAME``) or
batched policies (``policy(observations, masks) -> actions``); ``weights`` draw one per opponent
seat per game. :meth:`HavokVecEnv.set_opponents` changes them for the games dealt from then on
(the self-play league of :mod:`training.league`). Search and other slow bots cannot play inside a
batch: :func:`batchable` says which specs can; :func:`env_workers` starts the subprocess envs
train.py plays them in instead.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from havok_env.engine import ConfigError
from havok_env.vector import LearnerGames

IN_CORE = ("random", "heuristic")


def batchable(spec) -> bool:
    """Whether an opponent spec plays inside a batch: the core's bots and saved models."""
    from agents.policy import is_model_spec
    return not isinstance(spec, str) or spec.strip() in IN_CORE or (
        is_model_spec(spec) and not spec.strip().endswith(".zip"))


def batched_opponent(spec):
    """A :class:`LearnerGames` opponent from an agent spec (a model becomes its batched argmax
    policy, as :class:`agents.policy.PolicyAgent` plays it), or a batched policy as it is."""
    if not isinstance(spec, str):
        return spec
    s = spec.strip()
    if s in IN_CORE:
        return s
    if not batchable(s):
        raise ConfigError(f"opponent {s!r} cannot play inside the batched environment (only "
                          f"{', '.join(IN_CORE)} and saved models can)")
    from agents.policy import PolicyAgent
    return PolicyAgent.load(s).act_batch


class HavokVecEnv(VecEnv):
    """``num_envs`` games of one learner seat as a stable-baselines3 VecEnv (module docstring).

    ``HavokVecEnv(num_envs, dragon="fire", num_players=2, opponents=("heuristic",), weights=None,
    seed=0, threads=1, state=False, cards=None)``.
    """

    def __init__(self, num_envs: int, dragon="fire", num_players: int = 2, opponents=("heuristic",),
                 weights=None, seed: int | None = 0, threads: int = 1, state: bool = False, cards=None):
        self._built: dict = {}  # spec -> its batched opponent
        self._specs: dict = {}  # id of a built opponent -> its spec
        self._outcomes: list = []
        self.games = LearnerGames(num_envs, num_players, dragon=dragon,
                                  opponents=[self._opponent(o) for o in opponents], weights=weights,
                                  seed=seed, threads=threads, cards=cards, state=state)
        self.use_state = state
        low, high = self.games.observer.bounds()
        if state:
            low, high = np.tile(low, num_players), np.tile(high, num_players)
        self._base_seed = seed
        self._actions = None
        self.render_mode = None
        super().__init__(num_envs, spaces.Box(low, high, dtype=np.float32),
                         spaces.Discrete(self.games.observer.layout.size))

    def _opponent(self, spec):
        """A batched opponent, built once per spec (a model is not loaded again)."""
        if not isinstance(spec, str):
            return spec
        key = spec.strip()
        if key not in self._built:
            self._built[key] = batched_opponent(key)
            self._specs[id(self._built[key])] = key
        return self._built[key]

    def set_opponents(self, opponents, weights=None) -> None:
        """Opponents (specs or batched policies) for the games dealt from now on."""
        self.games.set_opponents([self._opponent(o) for o in opponents], weights)

    def take_outcomes(self) -> list:
        """(opponent, the learner's score: 1 won, 0.5 drawn, 0 lost) for each opponent seat of each
        game finished since the last call; an opponent is its spec, or the batched policy."""
        out, self._outcomes = self._outcomes, []
        return out

    def _view(self, final: bool = False) -> np.ndarray:
        """The buffer the learner's input is read from (the core's: copy what is kept)."""
        g = self.games
        if self.use_state:
            return g.final_state if final else g.state
        return g.final_obs if final else g.obs

    def reset(self):
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else self._base_seed
        self._reset_seeds()
        self._reset_options()
        self.games.reset(seed)
        return self._view().copy()

    def step_async(self, actions) -> None:
        self._actions = np.asarray(actions, dtype=np.int64)

    def step_wait(self):
        _, _, rewards, terminated = self.games.step(self._actions)
        obs = self._view().copy()
        infos = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(terminated)
        if ended.size:
            final = self._view(final=True)
            g = self.games
            for i in ended:
                infos[i]["terminal_observation"] = final[i].copy()
                infos[i]["is_success"] = bool(rewards[i] > 0)
                score = 1.0 if rewards[i] > 0 else 0.5 if rewards[i] == 0 else 0.0
                for c in g.ended_controllers[i]:
                    if c != 0:
                        o = g.opponent(c)
                        self._outcomes.append((self._specs.get(id(o), o), score))
            del self._outcomes[:-100_000]  # (bounded, if nobody takes them)
        return obs, rewards.copy(), terminated.copy(), infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, ``[num_envs, n_actions]`` booleans."""
        return self.games.mask.astype(bool)

    def close(self) -> None:
        pass

    # -- VecEnv's attribute plumbing: one process, every index is this object -------------------

    def get_attr(self, attr_name, indices=None):
        return [getattr(self, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks":  # (MaskablePPO np.stack()s the list: one array will do)
            return self.action_masks()[self._get_indices(indices)]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._get_indices(indices))


def env_workers(env_fns):
    """``SubprocVecEnv(env_fns)``, its workers forked from a server that has imported torch and
    stable-baselines3 once. A fork server (stable-baselines3's default start method where there is
    one) imports only the main module, and each of the 8 env workers then imported torch itself:
    22-31 s of wall time at the start of the run on 2 busy cores, 5-6 s from a preloaded server.
    The workers are the same processes (forked from a server, not from this one), so the games are."""
    import multiprocessing as mp

    from stable_baselines3.common.vec_env import SubprocVecEnv
    if "forkserver" in mp.get_all_start_methods():
        # before the server starts (the first worker starts it); "__main__" is the default preload
        mp.get_context("forkserver").set_forkserver_preload(["__main__", SubprocVecEnv.__module__])
    return SubprocVecEnv(env_fns)
