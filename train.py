#!/usr/bin/env python
"""Train a Havok & Hijinks agent with MaskablePPO through the single-agent view.

    python train.py --dragon fire                 # Ruby vs the heuristic bot, 2 players
    python train.py --dragon pearl --players 3 --opponents heuristic random --timesteps 2000000
    python train.py --dragon fire --self-play     # bots mixed with frozen snapshots of itself
    python train.py --dragon fire --resume        # continue the run of models/fire

By default the policy network is warm-started in two imitation stages (``training/imitation.py``:
a teacher bot plays in the learner's seat, its choices are imitated by cross-entropy on the masked
logits and the value head is fitted to the outcomes): behaviour cloning of the heuristic bot on
``--bc-games`` games, then distillation of the search bot, which beats the heuristic, on
``--distill-games`` games (expert iteration), learning soft targets from its value estimates
(``--distill-temperature``). PPO then fine-tunes the network against the opponents.
``--bc-games 0 --distill-games 0`` trains from scratch.

Writes ``PATH.safetensors`` (the weights of the best model found by the periodic evaluation) with
``PATH.json`` (its record: what it was trained for, its network, settings, versions, wall time,
learning curve, final evaluation), a model that is an agent spec anywhere agents are named and
loads without running code (``agents/policy.py``); ``PATH.last.*`` (the model at the end, with
the optimizer state ``--resume`` continues from), ``PATH.curve.png`` (win rate against timesteps),
checkpoints under ``PATH_checkpoints/`` and TensorBoard logs under ``runs/``.
See docs/TRAINING.md for the default run's wall time and results.
"""

from __future__ import annotations

import os

# Before numpy loads: its BLAS would run the small matrix products of the games' policy networks
# on a thread per core that spin between calls, starving the worker processes beside them (when
# the luck correction's value network ran in numpy too, 600 corrected games on 2 workers took
# 31 s with them, 16 s without).
if __name__ == "__main__":  # a program of its own (importing it leaves the environment alone)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import platform
import sys
import time
from functools import partial

from havok_env.cards import CardDataError, default_cards
from havok_env.constants import PLAYER_COUNTS, is_player_count
from training.parallel import handle_interrupts
from training.winrate import evaluate, fmt_eval, selection_score

# Defaults of the documented run (docs/TRAINING.md).
DEFAULTS = dict(
    timesteps=100_000,     # after the distillation PPO adds nothing (docs/TRAINING.md)
    learning_rate=3e-4,
    n_steps=512,           # per env and rollout (8 envs on 2 cores: 4096 per rollout, ~300 games)
    envs_per_core=4,
    batch_size=1024,
    n_epochs=4,
    gamma=0.99,
    gae_lambda=0.95,
    clip_range=0.2,
    bc_games=20_000,       # behaviour-cloning warm start: heuristic games in the learner's seat
    bc_epochs=10,
    # then imitate the search bot on these games (expert iteration): about 32 minutes on 2 cores.
    # 10,000 put the agent past the 60% bar, where 5,000 (a 19-minute run) left it at the bar and
    # a teacher of twice the budget on 5,000 did not help (docs/TRAINING.md)
    distill_games=10_000,
    # half the default budget (twice the games for the same time), and no search on picks,
    # where the search almost never beats the heuristic: a fifth less time (docs/TRAINING.md)
    distill_teacher="search:80:heuristic-picks",
    distill_epochs=20,
    distill_temperature=0.05,  # soft targets: softmax of the search's value estimates / 0.05
    ent_coef=0.001,        # small: a larger bonus pulls the warm-started policy away from its teacher
    vf_coef=0.5,
    net_arch=[256, 256],
    shaping=0.0,
    eval_every=25_000,
    eval_games=3000,       # picks the best model: 1,000 games let one lucky checkpoint win
    final_eval_games=6000,  # a 95% interval of about ±1.2 points; policy games are cheap
)


class UsageError(Exception):
    """A bad command line: reported on one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="train.py", description=__doc__.split("\n\n")[0],
                formatter_class=argparse.RawDescriptionHelpFormatter)
    dragons = default_cards().dragons  # dragons.toml's (or HAVOK_CARDS's), by affinity or name
    p.add_argument("--dragon", default="fire", help="learner's dragon: " + ", ".join(
        [d.affinity for d in dragons] + [d.name.lower() for d in dragons]))
    p.add_argument("--players", type=int, default=2, help=f"{PLAYER_COUNTS} (default 2)")
    p.add_argument("--opponents", nargs="+", default=["heuristic"], metavar="SPEC",
                   help="opponent agent specs: random, heuristic, search[:N] or a saved model path; "
                        "with several, each game draws one per seat (default heuristic)")
    p.add_argument("--timesteps", type=int, default=DEFAULTS["timesteps"],
                   help=f"learner decisions to train on (default {DEFAULTS['timesteps']:,})")
    p.add_argument("--n-envs", type=int, default=None,
                   help=f"parallel envs, each in its own process (default: {DEFAULTS['envs_per_core']} per "
                        "CPU core; the policy's forward pass is batched across them)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="output path without extension (default models/DRAGON)")
    p.add_argument("--resume", action="store_true",
                   help="continue training from PATH.last (or PATH) with the hyperparameters of its record")
    p.add_argument("--self-play", action="store_true",
                   help="opponents drawn from frozen earlier snapshots mixed with the bots")
    p.add_argument("--snapshot-every", type=int, default=None,
                   help="self-play snapshot interval in timesteps (default timesteps/10)")
    p.add_argument("--pool-size", type=int, default=5, help="self-play snapshots kept in the pool")
    p.add_argument("--eval-every", type=int, default=DEFAULTS["eval_every"],
                   help="timesteps between evaluations (0: none)")
    p.add_argument("--eval-games", type=int, default=DEFAULTS["eval_games"],
                   help="games per opponent kind in each periodic evaluation")
    p.add_argument("--final-eval-games", type=int, default=DEFAULTS["final_eval_games"],
                   help="games per opponent kind in the final evaluation")
    p.add_argument("--eval-opponents", nargs="+", default=None, metavar="SPEC",
                   help="opponent kinds to evaluate against (default: the opponents, and random)")
    p.add_argument("--checkpoint-every", type=int, default=None,
                   help="timesteps between checkpoints (default: every evaluation)")
    p.add_argument("--logdir", default="runs", help="TensorBoard log directory ('' for none)")
    p.add_argument("--lr", type=float, default=DEFAULTS["learning_rate"], help="learning rate")
    p.add_argument("--n-steps", type=int, default=DEFAULTS["n_steps"], help="rollout length per env")
    p.add_argument("--batch-size", type=int, default=DEFAULTS["batch_size"])
    p.add_argument("--n-epochs", type=int, default=DEFAULTS["n_epochs"])
    p.add_argument("--ent-coef", type=float, default=DEFAULTS["ent_coef"])
    p.add_argument("--gamma", type=float, default=DEFAULTS["gamma"])
    p.add_argument("--shaping", type=float, default=DEFAULTS["shaping"],
                   help="weight of the dense reward for changes of the learner's lead (0: terminal reward only)")
    p.add_argument("--net-arch", type=int, nargs="+", default=DEFAULTS["net_arch"], metavar="N",
                   help="hidden layer sizes of the policy and value networks")
    p.add_argument("--bc-games", type=int, default=DEFAULTS["bc_games"],
                   help="behaviour-cloning warm start: games of the --bc-teacher in the learner's seat "
                        f"against the opponents, imitated before PPO (default {DEFAULTS['bc_games']:,}; 0: none)")
    p.add_argument("--bc-epochs", type=int, default=DEFAULTS["bc_epochs"],
                   help=f"epochs of behaviour cloning (default {DEFAULTS['bc_epochs']})")
    p.add_argument("--bc-teacher", default="heuristic", metavar="SPEC",
                   help="the bot imitated by the warm start (default heuristic)")
    p.add_argument("--distill-games", type=int, default=DEFAULTS["distill_games"],
                   help="distillation after the warm start: games of the --distill-teacher in the learner's "
                        f"seat, imitated before PPO (default {DEFAULTS['distill_games']:,}; 0: none)")
    p.add_argument("--distill-epochs", type=int, default=DEFAULTS["distill_epochs"],
                   help=f"epochs of distillation (default {DEFAULTS['distill_epochs']})")
    p.add_argument("--distill-teacher", default=DEFAULTS["distill_teacher"], metavar="SPEC",
                   help=f"the bot imitated by the distillation (default {DEFAULTS['distill_teacher']})")
    p.add_argument("--distill-temperature", type=float, default=DEFAULTS["distill_temperature"],
                   help="temperature of the soft targets built from the teacher's value estimates "
                        f"(default {DEFAULTS['distill_temperature']}; 0: imitate its choices only)")
    p.add_argument("--clip-range", type=float, default=DEFAULTS["clip_range"])
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--quiet", action="store_true", help="print only the final summary")
    return p


# -- helpers -----------------------------------------------------------------------------------------

def versions() -> dict:
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
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


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


def _say(args, msg: str) -> None:
    if args.quiet:
        return
    try:
        from tqdm import tqdm
        tqdm.write(msg)
    except ImportError:
        print(msg, flush=True)


def require_extras(args) -> None:
    """Name the missing packages of the train extra before any work."""
    from agents.extras import missing
    needs = {"torch": "training", "stable_baselines3": "training", "sb3_contrib": "training",
             "safetensors": "saving models"}
    if args.logdir:
        needs["tensorboard"] = "--logdir; --logdir '' logs nothing"
    if not (args.no_progress or args.quiet):
        needs.update(tqdm="the progress bar; --no-progress shows none", rich="the progress bar")
    msg = missing(needs, "train")
    if msg:
        raise UsageError(msg)


def validate(args) -> dict:
    """Check the command line; returns derived settings. Raises UsageError with one line."""
    require_extras(args)
    cs = default_cards()
    try:
        d = cs.dragons[cs.dragon_index(args.dragon)]
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not is_player_count(args.players):
        raise UsageError(f"--players must be {PLAYER_COUNTS}, not {args.players}")
    if args.timesteps < 1:
        raise UsageError(f"--timesteps must be positive, not {args.timesteps}")
    n_envs = args.n_envs if args.n_envs is not None else DEFAULTS["envs_per_core"] * (os.cpu_count() or 1)
    if n_envs < 1:
        raise UsageError(f"--n-envs must be at least 1, not {n_envs}")
    for name in ("eval_games", "final_eval_games", "eval_every", "pool_size", "bc_games", "distill_games",
                 "distill_temperature"):
        if getattr(args, name) < 0:
            raise UsageError(f"--{name.replace('_', '-')} must not be negative")
    if args.n_steps < 2 or args.batch_size < 2 or args.n_epochs < 1:
        raise UsageError("--n-steps and --batch-size must be at least 2, --n-epochs at least 1")
    out = args.out or os.path.join("models", d.affinity)
    if out.endswith((".zip", ".json", ".safetensors")):
        out = os.path.splitext(out)[0]
    from agents import AgentSpecError, make_agent
    eval_opps = args.eval_opponents
    if eval_opps is None:
        eval_opps = list(dict.fromkeys(list(args.opponents) + ["random"]))
    for spec in list(args.opponents) + list(eval_opps) + [args.bc_teacher, args.distill_teacher]:
        if spec.strip().startswith("human"):
            raise UsageError("human cannot be a training or evaluation opponent, nor a teacher")
        try:
            agent = make_agent(spec)
        except AgentSpecError as e:
            raise UsageError(str(e)) from None
        except ImportError as e:
            raise UsageError(f"agent {spec!r} is not available: {e}") from None
        close = getattr(agent, "close", None)
        if close:
            close()
    resume_from = None
    if args.resume:
        from agents.policy import load_model, read_record
        from agents.sb3_model import check_hyperparameters
        resume_from = out + ".last" if os.path.exists(out + ".last.json") else out
        try:
            rec, _ = load_model(resume_from)
            check_hyperparameters(rec, resume_from + ".json")
            if resume_from != out and os.path.exists(out + ".json"):
                read_record(out)  # the run record the resumed run extends
        except AgentSpecError as e:
            raise UsageError(f"--resume: {e}") from None
        if (rec["affinity"], rec["players"]) != (d.affinity, args.players):
            raise UsageError(f"--resume: {resume_from}.json was trained as {rec['dragon']} ({rec['affinity']}) "
                             f"for {rec['players']} players, not {d.name} ({d.affinity}) for {args.players}")
    return {"dragon": d, "n_envs": n_envs, "out": out, "eval_opponents": eval_opps, "resume_from": resume_from}


# -- training -----------------------------------------------------------------------------------------

def run(args) -> dict:
    cfg = validate(args)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from agents import make_agent, sb3_model
    from agents.policy import FORMAT, PolicyAgent, read_record
    from havok_env.version import ENV_VERSION
    from havok_env.wrappers import SingleAgentEnv, make_env
    from training.selfplay import make_pool

    t0 = time.time()
    dragon, n_envs, out = cfg["dragon"], cfg["n_envs"], cfg["out"]
    players = args.players
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    ckpt_dir = out + "_checkpoints"
    bots = list(args.opponents)
    cpus = os.cpu_count() or 1

    def opponent_factory(snapshots=()):
        if args.self_play or len(bots) > 1:
            return partial(make_pool, bots, list(snapshots))
        return partial(make_agent, bots[0])

    env_fns = [make_env(dragon.affinity, players, opponents=opponent_factory(),
                       seed=args.seed * 1000 + i, shaping=args.shaping)
               for i in range(n_envs)]
    venv = env_workers(env_fns) if n_envs > 1 else DummyVecEnv(env_fns)
    venv = VecMonitor(venv)
    probe = SingleAgentEnv(dragon.affinity, players)
    obs_size, n_actions = probe.observation_space.shape[0], int(probe.action_space.n)

    # One torch thread: the env workers use the other cores, and a multi-threaded forward pass on
    # batches this small is slower (measured 2.5x slower on 2 busy cores).
    torch.set_num_threads(1)
    tb = args.logdir or None
    prev = {}
    if args.resume:
        # rebuilt from the record's hyperparameters and the saved weights: nothing is unpickled
        model, resumed, restored = sb3_model.rebuild(cfg["resume_from"], venv, seed=args.seed,
                                                     tensorboard_log=tb)
        prev = read_record(out) if os.path.exists(out + ".json") else resumed
        _say(args, f"resuming {cfg['resume_from']} at {model.num_timesteps:,} steps"
                   + ("" if restored else " (no optimizer state saved: Adam starts afresh)"))
    else:
        model = MaskablePPO(
            "MlpPolicy", venv, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
            n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=DEFAULTS["gae_lambda"],
            clip_range=args.clip_range, ent_coef=args.ent_coef, vf_coef=DEFAULTS["vf_coef"],
            policy_kwargs={"net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)}},
            tensorboard_log=tb, seed=args.seed, device="cpu", verbose=0)
    hyper = {**sb3_model.hyperparameters(model), "net_arch": sb3_model.network(model.policy)["pi"],
             "shaping": args.shaping, "bc_games": 0 if args.resume else args.bc_games,
             "bc_epochs": args.bc_epochs, "bc_teacher": args.bc_teacher,
             "distill_games": 0 if args.resume else args.distill_games, "distill_epochs": args.distill_epochs,
             "distill_teacher": args.distill_teacher, "distill_temperature": args.distill_temperature}

    def start_imitation(stage: str, games: int, teacher: str, seed: int):
        """Start playing a warm-start stage's games: ``teacher`` in the learner's seat."""
        from training.imitation import Collection
        t1 = time.time()
        _say(args, f"{stage}: {games:,} games of {teacher} as {dragon.name} ...")
        marks = [games * i // 10 for i in range(1, 10)]  # report every tenth of the games

        def progress(done, total):
            if marks and done >= marks[0]:
                while marks and done >= marks[0]:
                    marks.pop(0)
                _say(args, f"{stage}: {done:,}/{total:,} games, {time.time() - t1:.0f}s")

        job = Collection(dragon.affinity, players, games, opponents=bots, teacher=teacher,
                         seed=seed, workers=cpus, gamma=args.gamma, progress=progress)
        return {"stage": stage, "games": games, "teacher": teacher, "t1": t1, "job": job}

    def finish_imitation(started, epochs: int, temperature: float = 0.0, threads: int = 1) -> dict:
        """Wait for a stage's games, then fit its decisions (on ``threads`` torch threads)."""
        from training.imitation import pretrain
        stage, games, teacher, t1 = (started[k] for k in ("stage", "games", "teacher", "t1"))
        data = started["job"].result()
        played = time.time() - t1
        torch.set_num_threads(threads)
        info = pretrain(model.policy, data, epochs=epochs, seed=args.seed, stage=stage,
                        temperature=temperature, log=None if args.quiet else (lambda m: _say(args, m)))
        torch.set_num_threads(1)
        info.update(games=games, teacher=teacher, opponents=bots, games_wall_time_s=round(played, 3),
                    wall_time_s=round(time.time() - t1, 3))
        # the run's clock beside the stage's own, which starts with the stage's games
        _say(args, f"{stage} done in {info['wall_time_s']:.0f}s (at {time.time() - t0:.0f}s): {info['samples']:,} "
                   f"decisions, held-out accuracy {100 * (info['holdout_accuracy'] or 0):.1f}%")
        return info

    bc_info = distill_info = None
    bc = distill = None
    if args.bc_games and not args.resume:
        bc = start_imitation("behaviour cloning", args.bc_games, args.bc_teacher,
                             seed=args.seed * 7_654_321 + 99)
        # Its games first (they are quick), so that the search games' workers below are forked
        # from a process with no other threads running.
        bc["job"].result()
    if args.distill_games and not args.resume:
        # Expert iteration: the search bot's choices improve on the heuristic's (it beats it ~62%),
        # and imitating them teaches the network more per game than PPO's one outcome per game.
        # Its games do not depend on the network, so they are played while the warm start is fitted.
        distill = start_imitation("distillation", args.distill_games, args.distill_teacher,
                                  seed=args.seed * 7_654_321 + 500_000_000)
    if bc is not None:
        # one thread while the search games share the cores, up to 4 otherwise
        bc_info = finish_imitation(bc, args.bc_epochs, threads=1 if distill else min(cpus, 4))
    if distill is not None:
        distill_info = finish_imitation(distill, args.distill_epochs, temperature=args.distill_temperature,
                                        threads=min(cpus, 4))
    meta = {"env_version": ENV_VERSION, "dragon": dragon.name, "affinity": dragon.affinity,
            "players": players, "observation_size": obs_size, "action_size": n_actions}

    curve = list(prev.get("curve", []))
    state = {"best": -float("inf"), "best_at": None, "snapshots": []}
    if args.resume and prev.get("best_at_timesteps") is not None:  # keep the earlier best unless beaten
        scores = [selection_score(pt["results"]) for pt in curve
                  if pt["timesteps"] == prev["best_at_timesteps"]]
        if scores:
            state["best"], state["best_at"] = scores[-1], prev["best_at_timesteps"]

    def save(model_, base, optimizer=False):
        sb3_model.save(model_, base, sb3_model.record(model_, meta, hyperparameters=hyper), optimizer=optimizer)

    def save_best(model_):
        save(model_, out)

    class TrainCallback(BaseCallback):
        def __init__(self):
            super().__init__()
            self.next_eval = args.eval_every
            ck = args.checkpoint_every if args.checkpoint_every is not None else args.eval_every
            self.ck_every = ck
            self.next_ck = ck
            self.snap_every = args.snapshot_every or max(1, args.timesteps // 10)
            self.next_snap = self.snap_every
            self.start = model.num_timesteps

        def _on_step(self) -> bool:
            return True

        def _on_rollout_start(self) -> None:
            # Between updates, not inside a rollout: the policy changes only in an update, so a
            # snapshot, checkpoint or evaluation made while a rollout is being collected would be
            # the model before that rollout's update, labelled with steps it was not trained on.
            done = self.model.num_timesteps - self.start
            if args.self_play and done >= self.next_snap:
                self.next_snap = self.after(self.next_snap, self.snap_every, done)
                os.makedirs(ckpt_dir, exist_ok=True)
                p = os.path.join(ckpt_dir, f"snapshot_{self.model.num_timesteps}")
                save(self.model, p)
                state["snapshots"] = (state["snapshots"] + [p])[-args.pool_size:] if args.pool_size else []
                self.training_env.env_method("set_opponents", opponent_factory(state["snapshots"]))
            self.checkpoint(done)
            if args.eval_every and args.eval_games and done >= self.next_eval:
                self.next_eval = self.after(self.next_eval, args.eval_every, done)
                self.run_eval()

        @staticmethod
        def after(due: int, every: int, done: int) -> int:
            """The next multiple of ``every`` past ``done`` (one act per update, however small
            ``every`` is)."""
            while due <= done:
                due += every
            return due

        def checkpoint(self, done: int) -> None:
            if self.ck_every and done >= self.next_ck:
                self.next_ck = self.after(self.next_ck, self.ck_every, done)
                os.makedirs(ckpt_dir, exist_ok=True)
                save(self.model, os.path.join(ckpt_dir, f"step_{self.model.num_timesteps}"))

        def run_eval(self, log=True):
            learner = PolicyAgent(sb3_model.tensors(self.model.policy), sb3_model.record(self.model, meta))
            results = [evaluate(learner, spec, dragon.affinity, players, args.eval_games,
                                seed=1_000_000_000 + 7919 * args.seed, workers=cpus)
                       for spec in cfg["eval_opponents"]]
            ts = self.model.num_timesteps
            curve.append({"timesteps": ts, "wall_s": round(time.time() - t0, 1), "results": results})
            if log:
                for r in results:
                    key = r["opponent"].replace("/", "_")
                    self.logger.record(f"eval/win_rate_vs_{key}", r["win_rate"])
                    self.logger.record(f"eval/ci95_low_vs_{key}", r["ci95"][0])
                    self.logger.record(f"eval/ci95_high_vs_{key}", r["ci95"][1])
                    if r["corrected_score"] is not None:
                        self.logger.record(f"eval/corrected_score_vs_{key}", r["corrected_score"])
                self.logger.dump(ts)
            score = selection_score(results)
            mark = ""
            if score > state["best"]:
                state["best"], state["best_at"] = score, ts
                save_best(self.model)
                mark = "  * best, saved"
            _say(args, f"[{ts:>9,} steps, {time.time() - t0:6.0f}s] " + "; ".join(fmt_eval(r) for r in results) + mark)

    cb = TrainCallback()
    if (bc_info or distill_info) and cb.ck_every:
        # the imitation stages' network, PPO's starting point, among the checkpoints
        os.makedirs(ckpt_dir, exist_ok=True)
        save(model, os.path.join(ckpt_dir, f"step_{model.num_timesteps}"))
    if (bc_info or distill_info) and args.eval_every and args.eval_games:
        cb.model = model
        cb.run_eval(log=False)  # the warm start's strength: the curve's first point (0 PPO steps)
    _say(args, f"training {dragon.name} ({dragon.affinity}), {players} players, vs {' '.join(bots)}"
               f"{' + self-play' if args.self_play else ''}: {args.timesteps:,} steps in {n_envs} envs "
               f"-> {out}.safetensors")
    model.learn(total_timesteps=args.timesteps, callback=cb, progress_bar=not (args.no_progress or args.quiet),
                reset_num_timesteps=not args.resume, tb_log_name=f"{dragon.affinity}_{players}p")
    venv.close()
    cb.checkpoint(model.num_timesteps - cb.start)  # the last update's model, if one is due
    train_wall = time.time() - t0
    save(model, out + ".last", optimizer=True)
    if args.eval_every and args.eval_games and (not curve or curve[-1]["timesteps"] != model.num_timesteps):
        cb.run_eval()
    if state["best_at"] is None:  # no evaluation ran: the final model is the result
        save_best(model)
        state["best_at"] = model.num_timesteps

    final = []
    if args.final_eval_games:
        best = PolicyAgent.load(out)
        for spec in cfg["eval_opponents"]:
            final.append(evaluate(best, spec, dragon.affinity, players, args.final_eval_games,
                                  seed=2_000_000_000 + 7919 * args.seed, workers=cpus))
    wall = time.time() - t0
    record = {
        **read_record(out), "format": FORMAT,
        "dragon": dragon.name, "affinity": dragon.affinity, "players": players, "opponents": bots,
        "self_play": bool(args.self_play), "seed": args.seed,
        "timesteps": int(model.num_timesteps), "timesteps_this_run": args.timesteps,
        "resumed": bool(args.resume), "n_envs": n_envs,
        "env_version": ENV_VERSION, "observation_size": obs_size, "action_size": n_actions,
        "hyperparameters": hyper, "versions": versions(), "cpus": cpus,
        "wall_time_s": round(wall + prev.get("wall_time_s", 0.0), 1),
        "wall_time_this_run_s": round(wall, 1), "train_wall_time_s": round(train_wall, 1),
        "model": out + ".safetensors", "best_at_timesteps": state["best_at"],
        "behaviour_cloning": bc_info if bc_info is not None else prev.get("behaviour_cloning"),
        "distillation": distill_info if distill_info is not None else prev.get("distillation"),
        "evaluation_opponents": cfg["eval_opponents"], "curve": curve,
        "final_evaluation": final,
    }
    with open(out + ".json", "w") as f:  # the best model's record, completed: still a model record
        json.dump(record, f, indent=2)
    plot_curve(curve, out + ".curve.png",
               f"{dragon.name} ({dragon.affinity}), {players} players, vs {' '.join(bots)}",
               xlabel="PPO timesteps (learner decisions)" + ("; 0 = after the imitation warm start"
                                                             if record["behaviour_cloning"] or record["distillation"]
                                                             else ""))
    print(f"saved {out}.safetensors (best at {state['best_at']:,} steps) and {out}.json; "
          f"wall time {wall / 60:.1f} min")
    for r in final:
        print("final " + fmt_eval(r))
    return record


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        run(args)
    except (UsageError, CardDataError) as e:
        print(f"train.py: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("train.py: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    handle_interrupts()
    sys.exit(main())
