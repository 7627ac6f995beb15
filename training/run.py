"""A train.py run (``Run``): its environment and model, the imitation stages, PPO with the
periodic evaluations, checkpoints and snapshots made between updates, the final evaluation, the
run record and its learning curve. train.py's docstring describes what a run does and writes;
:mod:`training.settings` checks its arguments. torch and stable-baselines3 are imported when a
run starts, not on import.
"""

from __future__ import annotations

import json
import os
import platform
import time
from functools import partial

from havok_env.files import replaced
from havok_env.version import ENV_VERSION

from .progress import Progress
from .settings import DEFAULTS, prev_record, say, validate
from .winrate import evaluate, fmt_eval, selection_score


def versions() -> dict:
    """The versions of the packages a run trained with, for its record."""
    import gymnasium
    import numpy
    import sb3_contrib
    import stable_baselines3
    import torch
    out = {"python": platform.python_version(), "numpy": numpy.__version__, "torch": torch.__version__,
           "gymnasium": gymnasium.__version__, "stable_baselines3": stable_baselines3.__version__,
           "sb3_contrib": sb3_contrib.__version__}
    try:
        import pettingzoo
        out["pettingzoo"] = pettingzoo.__version__
    except ImportError:
        pass
    return out


def plot_curve(curve: list[dict], path: str, title: str, xlabel: str = "timesteps (learner decisions)") -> bool:
    """The curve's win rates with their 95% intervals, by opponent, as a PNG at ``path``; False
    (and nothing drawn) without matplotlib or without a point."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if not curve:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.2))
    kinds = sorted({r["opponent"] for pt in curve for r in pt["results"]})
    for kind in kinds:
        xs, ys, lo, hi = [], [], [], []
        for pt in curve:
            for r in pt["results"]:
                if r["opponent"] == kind:
                    xs.append(pt["timesteps"])
                    ys.append(100 * r["win_rate"])
                    lo.append(100 * r["ci95"][0])
                    hi.append(100 * r["ci95"][1])
        line, = ax.plot(xs, ys, marker="o", label=f"vs {kind}")
        ax.fill_between(xs, lo, hi, alpha=0.2, color=line.get_color())
    ax.set_xlabel(xlabel)
    ax.set_ylabel("win rate, % (95% CI)")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    try:
        with replaced(path, "wb") as f:
            fig.savefig(f, format="png", dpi=110)
    finally:
        plt.close(fig)
    return True


class Run:
    """One train.py run: its environment and model, the imitation stages, PPO with the periodic
    evaluations, checkpoints and snapshots made between updates, the final evaluation and the run
    record. ``Run(args).train()`` does it all and returns the record."""

    def __init__(self, args):
        self.cfg = cfg = validate(args)
        self.args, self.t0 = args, time.time()
        self.dragon, self.n_envs, self.out = cfg["dragon"], cfg["n_envs"], cfg["out"]
        self.players, self.bots = args.players, list(args.opponents)
        self.ckpt_dir = self.out + "_checkpoints"
        self.cpus = os.cpu_count() or 1
        os.makedirs(os.path.dirname(self.out) or ".", exist_ok=True)
        self.league = self.batched_env = None
        self.venv = self._make_env()
        from havok_env.wrappers import SingleAgentEnv
        probe = SingleAgentEnv(self.dragon.affinity, self.players)
        self.obs_size, self.n_actions = probe.observation_space.shape[0], int(probe.action_space.n)
        self.meta = {"env_version": ENV_VERSION, "dragon": self.dragon.name, "affinity": self.dragon.affinity,
                     "players": self.players, "observation_size": self.obs_size, "action_size": self.n_actions}
        self.model, self.prev = self._make_model()
        self.stages = {"behaviour_cloning": None, "distillation": None, "guided_distillation": None, "value": None}
        self.curve = list(self.prev.get("curve", []))
        self.clock = self.prev.get("wall_time_s", 0.0)  # a resumed run's curve goes on from the run's wall time
        self.best, self.best_at, self.snapshots, self.evaluated_updates = -float("inf"), None, [], None
        if args.resume and self.prev.get("best_at_timesteps") is not None:  # keep the earlier best unless beaten
            scores = [selection_score(pt["results"]) for pt in self.curve
                      if pt["timesteps"] == self.prev["best_at_timesteps"]]
            if scores:
                self.best, self.best_at = scores[-1], self.prev["best_at_timesteps"]
        self.changes = list(self.prev.get("hyperparameter_changes") or [])
        if args.resume and args.changes:
            self.changes.append({"at_timesteps": int(self.model.num_timesteps), **args.changes})
        self.budget = None if args.minutes is None else 60.0 * args.minutes
        self.eval_seed = 1_000_000_000 + 7919 * args.seed
        ck = args.checkpoint_every if args.checkpoint_every is not None else args.eval_every
        self.every = {"eval": args.eval_every, "checkpoint": ck,
                      "snapshot": args.snapshot_every or max(1, args.timesteps // 10)}
        self.due = dict(self.every)
        self.start = self.model.num_timesteps

    # -- the environment and the model ---------------------------------------------------------

    def opponent_factory(self, snapshots=()):
        from agents import make_agent
        from training.selfplay import make_pool
        if self.args.self_play or len(self.bots) > 1:
            return partial(make_pool, self.bots, list(snapshots))
        return partial(make_agent, self.bots[0])

    def _make_env(self):
        from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor
        args, n_envs = self.args, self.n_envs
        if not self.cfg["batched"]:
            from havok_env.wrappers import make_env
            from training.vec_env import env_workers
            env_fns = [make_env(self.dragon.affinity, self.players, opponents=self.opponent_factory(),
                                seed=args.seed * 1000 + i, shaping=args.shaping)
                       for i in range(n_envs)]
            return VecMonitor(env_workers(env_fns) if n_envs > 1 else DummyVecEnv(env_fns))
        from agents.policy import PolicyAgent
        from training.checkpoints import saved_snapshots
        from training.league import League
        from training.vec_env import HavokVecEnv
        if args.self_play:
            self.league = League(self.bots, max_snapshots=args.pool_size)
            if args.resume:  # the pool the run had: its last snapshots, from an even score
                for name, path in saved_snapshots(self.ckpt_dir)[-args.pool_size:] if args.pool_size else []:
                    self.league.add(name, PolicyAgent.load(path).act_batch)
        league = self.league
        self.batched_env = HavokVecEnv(n_envs, self.dragon.affinity, self.players,
                                       opponents=league.opponents() if league else self.bots,
                                       weights=league.weights() if league else None, seed=args.seed,
                                       state=args.critic == "state")
        return VecMonitor(self.batched_env)

    def _make_model(self):
        import torch
        from sb3_contrib import MaskablePPO

        from agents import sb3_model
        args = self.args
        # Subprocess envs: one torch thread, as the env workers use the other cores and a
        # multi-threaded forward pass on batches this small is slower (measured 2.5x slower on 2
        # busy cores). Batched: the games are stepped between the passes in this process, and 2
        # threads ran PPO 1.6x as fast as 1 (docs/BENCHMARKS.md, "Learner throughput").
        self.ppo_threads = args.threads or (min(self.cpus, 2) if self.cfg["batched"] else 1)
        torch.set_num_threads(self.ppo_threads)
        tb = args.logdir or None
        prev = {}
        if args.resume:
            # rebuilt from the record's hyperparameters and the saved weights: nothing is unpickled
            model, resumed, restored = sb3_model.rebuild(self.cfg["resume_from"], self.venv, seed=args.seed,
                                                         tensorboard_log=tb, changes=args.changes)
            args.changes = {k: v for k, v in args.changes.items() if resumed["hyperparameters"].get(k) != v}
            prev = prev_record(self.out) or resumed
            say(args, f"resuming {self.cfg['resume_from']} at {model.num_timesteps:,} steps"
                       + ("" if restored else " (no optimizer state saved: Adam starts afresh)"))
        else:
            network = {"pi": list(args.net_arch), "vf": list(args.net_arch), "activation": "tanh"}
            if args.critic == "state":
                network["critic"] = "state"
            policy, policy_kwargs = sb3_model.policy_spec(network, self.obs_size)
            model = MaskablePPO(
                policy, self.venv, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
                n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=DEFAULTS["gae_lambda"],
                clip_range=args.clip_range, ent_coef=args.ent_coef, vf_coef=DEFAULTS["vf_coef"],
                policy_kwargs=policy_kwargs, tensorboard_log=tb, seed=args.seed, device="cpu", verbose=0)
        self.hyper = {**sb3_model.hyperparameters(model), "net_arch": sb3_model.network(model.policy)["pi"],
                      "shaping": args.shaping, "bc_games": 0 if args.resume else args.bc_games,
                      "bc_epochs": args.bc_epochs, "bc_teacher": args.bc_teacher,
                      "distill_games": 0 if args.resume else args.distill_games,
                      "distill_epochs": args.distill_epochs, "distill_teacher": args.distill_teacher,
                      "distill_temperature": args.distill_temperature,
                      "guided_games": 0 if args.resume else args.guided_games, "value_games": args.value_games}
        return model, prev

    def save(self, model, base: str, optimizer: bool = False) -> None:
        from agents import sb3_model
        sb3_model.save(model, base, sb3_model.record(model, self.meta, hyperparameters=self.hyper),
                       optimizer=optimizer)

    def frozen(self, model):
        """The model's policy now, as an agent that no later update changes."""
        from agents import sb3_model
        from agents.policy import PolicyAgent
        return PolicyAgent(sb3_model.tensors(model.policy), sb3_model.record(model, self.meta))

    def progress(self, games: int, desc: str):
        """A stage's games, reported in the run's log at each tenth with the time left (none with
        --quiet): a stage of games between the log's own lines, so lines rather than a bar."""
        return Progress(games, desc=desc, say=lambda m: say(self.args, m))

    # -- the imitation stages ------------------------------------------------------------------

    def start_imitation(self, stage: str, games: int, teacher: str, seed: int) -> dict:
        """Start playing a warm-start stage's games: ``teacher`` in the learner's seat."""
        from training.imitation import Collection
        t1 = time.time()
        say(self.args, f"{stage}: {games:,} games of {teacher} as {self.dragon.name} ...")
        job = Collection(self.dragon.affinity, self.players, games, opponents=self.bots, teacher=teacher,
                         seed=seed, workers=self.cpus, gamma=self.args.gamma, progress=self.progress(games, stage))
        return {"stage": stage, "games": games, "teacher": teacher, "t1": t1, "job": job}

    def finish_imitation(self, started: dict, epochs: int, temperature: float = 0.0, threads: int = 1) -> dict:
        """Wait for a stage's games, then fit its decisions (on ``threads`` torch threads)."""
        import torch

        from training.imitation import pretrain
        args = self.args
        stage, games, teacher, t1 = (started[k] for k in ("stage", "games", "teacher", "t1"))
        data = started["job"].result()
        played = time.time() - t1
        torch.set_num_threads(threads)
        info = pretrain(self.model.policy, data, epochs=epochs, seed=args.seed, stage=stage,
                        temperature=temperature, log=None if args.quiet else (lambda m: say(args, m)))
        torch.set_num_threads(self.ppo_threads)
        info.update(games=games, teacher=teacher, opponents=self.bots, games_wall_time_s=round(played, 3),
                    wall_time_s=round(time.time() - t1, 3))
        # the run's clock beside the stage's own, which starts with the stage's games
        say(args, f"{stage} done in {info['wall_time_s']:.0f}s (at {time.time() - self.t0:.0f}s): "
                   f"{info['samples']:,} decisions, held-out accuracy {100 * (info['holdout_accuracy'] or 0):.1f}%")
        return info

    def imitate(self) -> None:
        """The warm start: behaviour cloning, distillation and the guided round, as asked."""
        from agents.search import guided_spec
        args, threads = self.args, min(self.cpus, 4)
        if args.resume:
            return
        bc = distill = None
        if args.bc_games:
            bc = self.start_imitation("behaviour cloning", args.bc_games, args.bc_teacher,
                                      seed=args.seed * 7_654_321 + 99)
            # Its games first (they are quick), so that the search games' workers below are forked
            # from a process with no other threads running.
            bc["job"].result()
        if args.distill_games:
            # Expert iteration: the search bot's choices improve on the heuristic's (it beats it
            # ~62%), and imitating them teaches the network more per game than PPO's one outcome per
            # game. Its games do not depend on the network, so they are played while the warm start
            # is fitted.
            distill = self.start_imitation("distillation", args.distill_games, args.distill_teacher,
                                           seed=args.seed * 7_654_321 + 500_000_000)
        if bc is not None:
            # one thread while the search games share the cores, up to 4 otherwise
            self.stages["behaviour_cloning"] = self.finish_imitation(bc, args.bc_epochs,
                                                                     threads=1 if distill else threads)
        if distill is not None:
            self.stages["distillation"] = self.finish_imitation(
                distill, args.distill_epochs, temperature=args.distill_temperature, threads=threads)
        if args.guided_games and distill is not None:
            # The second round of expert iteration: the search now improves on the distilled
            # network rather than on the heuristic, and its games are imitated in turn. Its workers
            # load the network from the file, as any model spec.
            os.makedirs(self.ckpt_dir, exist_ok=True)
            guide = os.path.join(self.ckpt_dir, "distilled")
            self.save(self.model, guide)
            guided = self.start_imitation("guided distillation", args.guided_games,
                                          guided_spec(args.distill_teacher, guide + ".safetensors"),
                                          seed=args.seed * 7_654_321 + 1_000_000_000)
            self.stages["guided_distillation"] = self.finish_imitation(
                guided, args.distill_epochs, temperature=args.distill_temperature, threads=threads)

    def fit_value(self) -> dict:
        """The value function of the agent's search (``--value-games``), fitted on games of the
        heuristic, which plays the search's rollouts, and written beside the model."""
        import torch

        from training.value_fit import fit_rollout_value
        args, t1 = self.args, time.time()
        games, path = args.value_games, self.out + "_value.safetensors"
        say(args, f"value function: {games:,} games of {self.players} heuristic bots ...")
        model, record = fit_rollout_value(self.players, games, seed=3_000_000_000 + 7919 * args.seed,
                                          log=lambda m: None, progress=self.progress(games, "value function"))
        torch.set_num_threads(self.ppo_threads)  # the fit runs on one
        model.save(path)
        spec = f"search::value={path}:guide={self.out}.safetensors"
        say(args, f"value function done in {time.time() - t1:.0f}s (at {time.time() - self.t0:.0f}s): "
                   f"held-out error {record['fit']['held_out_error']:.3f} (of the mean: "
                   f"{record['fit']['held_out_error_of_the_mean']:.3f}); the agent with search: {spec}")
        return {"games": games, "file": path, "search_spec": spec, "rows": record["rows"], "fit": record["fit"],
                "wall_time_s": round(time.time() - t1, 3)}

    # -- between PPO's updates -------------------------------------------------------------------

    def keep_going(self) -> bool:
        """--minutes: the run's wall time, checked at every step (SB3 stops when told False)."""
        return self.budget is None or time.time() - self.t0 < self.budget

    def _is_due(self, what: str, done: int) -> bool:
        """Whether ``what`` is due after ``done`` steps; if so, the next time is the next multiple
        of its period past ``done`` (one act per update, however small the period)."""
        if not self.every[what] or done < self.due[what]:
            return False
        while self.due[what] <= done:
            self.due[what] += self.every[what]
        return True

    def between_updates(self, model) -> None:
        """Snapshots, checkpoints and evaluations, made between updates and not inside a rollout:
        the policy changes only in an update, so one made while a rollout is being collected would
        be the model before that rollout's update, labelled with steps it was not trained on."""
        args, done = self.args, model.num_timesteps - self.start
        if self.league is not None:
            if self._is_due("snapshot", done):  # saved like the subprocess path's, played from memory
                os.makedirs(self.ckpt_dir, exist_ok=True)
                name = f"snapshot_{model.num_timesteps}"
                self.save(model, os.path.join(self.ckpt_dir, name))
                self.league.add(name, self.frozen(model).act_batch)
            self.league.update(self.batched_env)
        elif args.self_play and self._is_due("snapshot", done):
            os.makedirs(self.ckpt_dir, exist_ok=True)
            p = os.path.join(self.ckpt_dir, f"snapshot_{model.num_timesteps}")
            self.save(model, p)
            self.snapshots = (self.snapshots + [p])[-args.pool_size:] if args.pool_size else []
            model.get_env().env_method("set_opponents", self.opponent_factory(self.snapshots))
        saved = self.checkpoint(model, done)
        if args.eval_games != 0 and self._is_due("eval", done):
            self.evaluate_now(model)
        if saved and self.best_at is not None:
            # what --resume continues from, should the run be stopped before its end
            self.save(model, self.out + ".last", optimizer=True)
            self.write_record([], None)

    def checkpoint(self, model, done: int) -> bool:
        if not self._is_due("checkpoint", done):
            return False
        os.makedirs(self.ckpt_dir, exist_ok=True)
        self.save(model, os.path.join(self.ckpt_dir, f"step_{model.num_timesteps}"))
        return True

    def periodic_eval(self, learner, spec: str) -> dict:
        """In a batch where the opponent can play there (the raw score over many games: seconds),
        else the luck-corrected games of training/winrate.py."""
        from training.vec_env import batchable
        from training.winrate import evaluate_batched
        args, affinity = self.args, self.dragon.affinity
        if self.cfg["batched"] and batchable(spec):
            return evaluate_batched(learner.act_batch, spec, affinity, self.players,
                                    args.eval_games or DEFAULTS["batched_eval_games"], seed=self.eval_seed)
        games = args.eval_games or DEFAULTS["eval_games"]
        return evaluate(learner, spec, affinity, self.players, games, seed=self.eval_seed, workers=self.cpus,
                        progress=self.progress(games, f"evaluation vs {spec}"))

    def evaluate_now(self, model, logger=True) -> None:
        """A point of the curve, and the model kept if it is the best so far."""
        self.evaluated_updates = model._n_updates
        learner = self.frozen(model)
        results = [self.periodic_eval(learner, spec) for spec in self.cfg["eval_opponents"]]
        ts = model.num_timesteps
        self.curve.append({"timesteps": ts, "wall_s": round(self.clock + time.time() - self.t0, 1),
                           "results": results})
        if logger:
            for r in results:
                key = r["opponent"].replace("/", "_")
                model.logger.record(f"eval/win_rate_vs_{key}", r["win_rate"])
                model.logger.record(f"eval/ci95_low_vs_{key}", r["ci95"][0])
                model.logger.record(f"eval/ci95_high_vs_{key}", r["ci95"][1])
                if r["corrected_score"] is not None:
                    model.logger.record(f"eval/corrected_score_vs_{key}", r["corrected_score"])
            model.logger.dump(ts)
        score = selection_score(results)
        mark = ""
        if score > self.best:
            self.best, self.best_at = score, ts
            self.save(model, self.out)
            self.write_record([], None)  # the best model's record is the run's, so far
            mark = "  * best, saved"
        say(self.args, f"[{ts:>9,} steps, {time.time() - self.t0:6.0f}s] "
                        + "; ".join(fmt_eval(r) for r in results) + mark)
        if self.league is not None:
            members = self.curve[-1]["league"] = self.league.summary()
            say(self.args, "  league: " + ", ".join(f"{m['name']} {100 * m['share']:.0f}% (learner scores "
                                                     f"{m['score']:.2f})" for m in members))

    # -- the record ----------------------------------------------------------------------------

    def write_record(self, final: list, train_wall: float | None) -> dict:
        """The run record: the best model's record completed (still a model record), written whole
        or not at all. During the run (``train_wall`` None) it is the record so far, for a run that
        is stopped and resumed."""
        from agents.policy import FORMAT, read_record
        args, prev, wall = self.args, self.prev, time.time() - self.t0
        record = {
            **read_record(self.out), "format": FORMAT,
            "dragon": self.dragon.name, "affinity": self.dragon.affinity, "players": self.players,
            "opponents": self.bots, "self_play": bool(args.self_play), "from_scratch": bool(args.from_scratch),
            "seed": args.seed, "vec_env": "batched" if self.cfg["batched"] else "subproc",
            "torch_threads": self.ppo_threads, "minutes": args.minutes,
            "league": self.league.summary() if self.league is not None else None,
            # the model's own steps (the best one's), and the run's
            "timesteps": self.best_at, "run_timesteps": int(self.model.num_timesteps),
            "timesteps_this_run": args.timesteps,
            "resumed": bool(args.resume), "finished": train_wall is not None, "n_envs": self.n_envs,
            "env_version": self.meta["env_version"], "observation_size": self.obs_size,
            "action_size": self.n_actions, "hyperparameters": self.hyper,
            "hyperparameter_changes": self.changes, "versions": versions(), "cpus": self.cpus,
            "wall_time_s": round(wall + prev.get("wall_time_s", 0.0), 1),
            "wall_time_this_run_s": round(wall, 1), "train_wall_time_s": round(train_wall or wall, 1),
            "model": self.out + ".safetensors", "best_at_timesteps": self.best_at,
            **{k: v if v is not None else prev.get(k) for k, v in self.stages.items()},
            "evaluation_opponents": self.cfg["eval_opponents"], "curve": self.curve,
            "final_evaluation": final,
        }
        with replaced(self.out + ".json") as f:
            json.dump(record, f, indent=2)
        return record

    # -- the whole run -------------------------------------------------------------------------

    def train(self) -> dict:
        from agents.policy import PolicyAgent
        from training.callbacks import BetweenUpdates
        args, model, out, dragon = self.args, self.model, self.out, self.dragon
        self.imitate()
        imitated = any(self.stages.values())
        if imitated and self.every["checkpoint"]:
            # the imitation stages' network, PPO's starting point, among the checkpoints
            os.makedirs(self.ckpt_dir, exist_ok=True)
            self.save(model, os.path.join(self.ckpt_dir, f"step_{model.num_timesteps}"))
        if imitated and args.eval_every and args.eval_games != 0:
            self.evaluate_now(model, logger=False)  # the warm start's strength: the curve's first point
        say(args, f"training {dragon.name} ({dragon.affinity}), {self.players} players, vs {' '.join(self.bots)}"
                   f"{' + self-play' if args.self_play else ''}: {args.timesteps:,} steps in {self.n_envs} envs "
                   f"-> {out}.safetensors")
        model.learn(total_timesteps=args.timesteps, callback=BetweenUpdates(self.between_updates, self.keep_going),
                    progress_bar=not (args.no_progress or args.quiet), reset_num_timesteps=not args.resume,
                    tb_log_name=f"{dragon.affinity}_{self.players}p")
        self.venv.close()
        self.checkpoint(model, model.num_timesteps - self.start)  # the last update's model, if one is due
        train_wall = time.time() - self.t0
        self.save(model, out + ".last", optimizer=True)
        # the network at the end, unless it was evaluated already: a run stopped by --minutes
        # inside a rollout counts that rollout's steps but never updates on them
        if args.eval_every and args.eval_games != 0 and self.evaluated_updates != model._n_updates:
            self.evaluate_now(model)
        if self.best_at is None:  # no evaluation ran: the final model is the result
            self.save(model, out)
            self.best_at = model.num_timesteps
        final = []
        if args.final_eval_games:
            best = PolicyAgent.load(out)
            for spec in self.cfg["eval_opponents"]:
                final.append(evaluate(best, spec, dragon.affinity, self.players, args.final_eval_games,
                                      seed=2_000_000_000 + 7919 * args.seed, workers=self.cpus,
                                      progress=self.progress(args.final_eval_games, f"final evaluation vs {spec}")))
        if args.value_games:
            self.stages["value"] = self.fit_value()
        wall = time.time() - self.t0
        record = self.write_record(final, train_wall)
        plot_curve(self.curve, out + ".curve.png",
                   f"{dragon.name} ({dragon.affinity}), {self.players} players, vs {' '.join(self.bots)}",
                   xlabel="PPO timesteps (learner decisions)"
                          + ("; 0 = after the imitation warm start"
                             if record["behaviour_cloning"] or record["distillation"] else ""))
        print(f"saved {out}.safetensors (best at {self.best_at:,} steps) and {out}.json; "
              f"wall time {wall / 60:.1f} min")
        for r in final:
            print("final " + fmt_eval(r))
        if self.stages["value"]:
            print(f"saved {self.stages['value']['file']}; the agent with search: {self.stages['value']['search_spec']}")
        return record


def run(args) -> dict:
    return Run(args).train()
