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
(``--distill-temperature``). ``--guided-games`` adds a second round: the distilled network guides
the same search (``search:N:guide=NETWORK``), whose games are imitated in turn. PPO then
fine-tunes the network against the opponents.
``--from-scratch`` trains with no imitation at all: PPO against a self-play league of the
bots and frozen snapshots of the learner (``training/league.py``), for ``--minutes`` of wall time.

PPO collects its experience in the batched environment (``training/vec_env.py``): all the games
in this process, stepped in the core, the bots playing inside it and frozen policies in one
forward pass per step (``--vec-env subproc`` plays them in worker processes instead, as it must
for opponents that cannot play in a batch, such as the search bot). ``--critic state`` trains a
centralised critic: the value network reads every seat's observation, the policy only its own.

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
    # first of all: an interrupt from here on ends the run in one line (training/parallel.py)
    from training.parallel import handle_interrupts
    handle_interrupts("train.py", starting=True)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import platform
import sys
import time
from functools import partial

from havok_env.cards import CardDataError, default_cards
from havok_env.constants import PLAYER_COUNTS, is_player_count
from havok_env.version import ENV_VERSION
from training.parallel import handle_interrupts
from training.winrate import evaluate, fmt_eval, selection_score

# Defaults of the documented run (docs/TRAINING.md).
DEFAULTS = dict(
    timesteps=100_000,     # after the distillation PPO adds nothing (docs/TRAINING.md)
    learning_rate=3e-4,
    n_steps=512,           # per env and rollout (8 envs on 2 cores: 4096 per rollout, ~300 games)
    envs_per_core=4,       # subprocess envs (--vec-env subproc)
    batched_envs=64,       # games in the batched env; with batched_n_steps, the same 4,096 per rollout
    batched_n_steps=64,
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
    # a second round of expert iteration: the same search, now departing from the distilled
    # network's choices instead of the heuristic's (search:80:heuristic-picks:guide=NETWORK)
    guided_games=0,
    ent_coef=0.001,        # small: a larger bonus pulls the warm-started policy away from its teacher
    vf_coef=0.5,
    net_arch=[256, 256],
    shaping=0.0,
    eval_every=25_000,
    eval_games=3000,       # picks the best model: 1,000 games let one lucky checkpoint win
    batched_eval_games=20_000,  # periodic evaluations played in a batch (raw score): seconds each
    final_eval_games=6000,  # a 95% interval of about ±1.2 points; policy games are cheap
)


# --from-scratch: no imitation, self-play, and the settings measured for it (docs/TRAINING.md)
FROM_SCRATCH = dict(
    timesteps=200_000_000,  # an upper bound: --minutes ends the run
    minutes=55.0,           # PPO's wall time; the final evaluation comes after
    n_envs=128,
    n_steps=64,             # 8,192 steps per update
    batch_size=2048,
    ent_coef=0.01,          # exploration: the policy starts from nothing
    eval_every=1_000_000,
    snapshot_every=1_000_000,
    pool_size=8,
)


# the options --resume may change (a lower learning rate and entropy bonus for a run's later hours),
# by their names among the PPO hyperparameters; the network and the rollout's size stay the run's
RESUME_CHANGES = {"lr": "learning_rate", "ent_coef": "ent_coef", "clip_range": "clip_range",
                  "n_epochs": "n_epochs", "batch_size": "batch_size"}


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
    p.add_argument("--timesteps", type=int, default=None,
                   help=f"learner decisions to train on (default {DEFAULTS['timesteps']:,}; "
                        f"{FROM_SCRATCH['timesteps']:,} with --from-scratch, where --minutes ends it)")
    p.add_argument("--minutes", type=float, default=None,
                   help="stop PPO after this many minutes of the run's wall time (default: none; "
                        f"{FROM_SCRATCH['minutes']:g} with --from-scratch)")
    p.add_argument("--from-scratch", action="store_true",
                   help="no imitation of any bot: PPO against a self-play league of the --opponents bots "
                        "and frozen snapshots of the learner, with the settings of FROM_SCRATCH")
    p.add_argument("--vec-env", choices=["batched", "subproc"], default="batched",
                   help="where PPO's games are played: batched in this process (default), or one "
                        "process per env (needed for opponents such as search)")
    p.add_argument("--critic", choices=["observation", "state"], default="observation",
                   help="what the value network reads: the seat's observation (default) or the state, "
                        "every seat's observation (a centralised critic; the policy still reads only "
                        "its own; --vec-env batched)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch threads for PPO (default: 1 with subprocess envs, up to 2 batched)")
    p.add_argument("--n-envs", type=int, default=None,
                   help=f"parallel envs (default: {DEFAULTS['batched_envs']} games in the batched env, "
                        f"{FROM_SCRATCH['n_envs']} with --from-scratch; {DEFAULTS['envs_per_core']} "
                        "processes per CPU core with --vec-env subproc)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="output path without extension (default models/DRAGON)")
    p.add_argument("--resume", action="store_true",
                   help="continue training from PATH.last (or PATH) with the hyperparameters of its record")
    p.add_argument("--self-play", action="store_true",
                   help="opponents drawn from frozen earlier snapshots mixed with the bots")
    p.add_argument("--snapshot-every", type=int, default=None,
                   help="self-play snapshot interval in timesteps (default timesteps/10; "
                        f"{FROM_SCRATCH['snapshot_every']:,} with --from-scratch)")
    p.add_argument("--pool-size", type=int, default=None,
                   help=f"self-play snapshots kept in the pool (default 5; {FROM_SCRATCH['pool_size']} "
                        "with --from-scratch)")
    p.add_argument("--eval-every", type=int, default=None,
                   help=f"timesteps between evaluations (0: none; default {DEFAULTS['eval_every']:,}, "
                        f"{FROM_SCRATCH['eval_every']:,} with --from-scratch)")
    p.add_argument("--eval-games", type=int, default=None,
                   help=f"games per opponent kind in each periodic evaluation (default: "
                        f"{DEFAULTS['batched_eval_games']:,} played in a batch where the opponent can be, "
                        f"else {DEFAULTS['eval_games']:,}, luck corrected)")
    p.add_argument("--final-eval-games", type=int, default=DEFAULTS["final_eval_games"],
                   help="games per opponent kind in the final evaluation")
    p.add_argument("--eval-opponents", nargs="+", default=None, metavar="SPEC",
                   help="opponent kinds to evaluate against (default: the opponents, and random)")
    p.add_argument("--checkpoint-every", type=int, default=None,
                   help="timesteps between checkpoints (default: every evaluation)")
    p.add_argument("--logdir", default="runs", help="TensorBoard log directory ('' for none)")
    p.add_argument("--lr", type=float, default=None,
                   help=f"learning rate (default {DEFAULTS['learning_rate']}; with --resume, the run's own)")
    p.add_argument("--n-steps", type=int, default=None,
                   help=f"rollout length per env (default {DEFAULTS['batched_n_steps']} batched, "
                        f"{DEFAULTS['n_steps']} with --vec-env subproc)")
    p.add_argument("--batch-size", type=int, default=None,
                   help=f"minibatch (default {DEFAULTS['batch_size']}; {FROM_SCRATCH['batch_size']} "
                        "with --from-scratch)")
    p.add_argument("--n-epochs", type=int, default=None,
                   help=f"epochs per update (default {DEFAULTS['n_epochs']}; with --resume, the run's own)")
    p.add_argument("--ent-coef", type=float, default=None,
                   help=f"entropy bonus (default {DEFAULTS['ent_coef']}; {FROM_SCRATCH['ent_coef']} "
                        "with --from-scratch)")
    p.add_argument("--gamma", type=float, default=DEFAULTS["gamma"])
    p.add_argument("--shaping", type=float, default=DEFAULTS["shaping"],
                   help="weight of the dense reward for changes of the learner's lead (0: terminal reward only)")
    p.add_argument("--net-arch", type=int, nargs="+", default=DEFAULTS["net_arch"], metavar="N",
                   help="hidden layer sizes of the policy and value networks")
    p.add_argument("--bc-games", type=int, default=None,
                   help="behaviour-cloning warm start: games of the --bc-teacher in the learner's seat "
                        f"against the opponents, imitated before PPO (default {DEFAULTS['bc_games']:,}; 0: none)")
    p.add_argument("--bc-epochs", type=int, default=DEFAULTS["bc_epochs"],
                   help=f"epochs of behaviour cloning (default {DEFAULTS['bc_epochs']})")
    p.add_argument("--bc-teacher", default="heuristic", metavar="SPEC",
                   help="the bot imitated by the warm start (default heuristic)")
    p.add_argument("--distill-games", type=int, default=None,
                   help="distillation after the warm start: games of the --distill-teacher in the learner's "
                        f"seat, imitated before PPO (default {DEFAULTS['distill_games']:,}; 0: none)")
    p.add_argument("--distill-epochs", type=int, default=DEFAULTS["distill_epochs"],
                   help=f"epochs of distillation (default {DEFAULTS['distill_epochs']})")
    p.add_argument("--distill-teacher", default=DEFAULTS["distill_teacher"], metavar="SPEC",
                   help=f"the bot imitated by the distillation (default {DEFAULTS['distill_teacher']})")
    p.add_argument("--guided-games", type=int, default=None,
                   help="a second round after the distillation: games of the --distill-teacher guided by the "
                        "distilled network (search:N:guide=NETWORK) in the learner's seat, imitated at the same "
                        f"epochs and temperature (default {DEFAULTS['guided_games']:,}; 0: none)")
    p.add_argument("--distill-temperature", type=float, default=DEFAULTS["distill_temperature"],
                   help="temperature of the soft targets built from the teacher's value estimates "
                        f"(default {DEFAULTS['distill_temperature']}; 0: imitate its choices only)")
    p.add_argument("--clip-range", type=float, default=None,
                   help=f"PPO's clip range (default {DEFAULTS['clip_range']}; with --resume, the run's own)")
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


def prev_record(out: str) -> dict:
    """The record of the run at ``out`` that a resumed run extends ({} when there is none)."""
    from agents.policy import read_record
    return read_record(out) if os.path.exists(out + ".json") else {}


def resolve_defaults(args) -> None:
    """Fill in the options left unset: FROM_SCRATCH's values with --from-scratch, else DEFAULTS'."""
    if args.from_scratch:
        for opt in ("bc_games", "distill_games", "guided_games"):
            if getattr(args, opt):
                raise UsageError(f"--from-scratch uses no imitation: drop --{opt.replace('_', '-')}")
        args.bc_games = args.distill_games = args.guided_games = 0
        args.self_play = True
        mode = FROM_SCRATCH
    else:
        mode = {}
    # what a resumed run changes: the options given, by their PPO names (the rest are the run's own)
    args.changes = {ppo: getattr(args, opt) for opt, ppo in RESUME_CHANGES.items() if getattr(args, opt) is not None}
    fill = {"timesteps": DEFAULTS["timesteps"], "minutes": None, "bc_games": DEFAULTS["bc_games"],
            "lr": DEFAULTS["learning_rate"], "n_epochs": DEFAULTS["n_epochs"], "clip_range": DEFAULTS["clip_range"],
            "distill_games": DEFAULTS["distill_games"], "guided_games": DEFAULTS["guided_games"],
            "batch_size": DEFAULTS["batch_size"], "ent_coef": DEFAULTS["ent_coef"],
            "eval_every": DEFAULTS["eval_every"], "pool_size": 5, "snapshot_every": None}
    for key, default in fill.items():
        if getattr(args, key) is None:
            setattr(args, key, mode.get(key, default))


def validate(args) -> dict:
    """Check the command line; returns derived settings. Raises UsageError with one line."""
    require_extras(args)
    resolve_defaults(args)
    cs = default_cards()
    try:
        d = cs.dragons[cs.dragon_index(args.dragon)]
    except ValueError as e:
        raise UsageError(str(e)) from None
    if not is_player_count(args.players):
        raise UsageError(f"--players must be {PLAYER_COUNTS}, not {args.players}")
    if args.timesteps < 1:
        raise UsageError(f"--timesteps must be positive, not {args.timesteps}")
    for name in ("eval_games", "final_eval_games", "eval_every", "pool_size", "bc_games", "distill_games",
                 "guided_games", "distill_temperature"):
        if (getattr(args, name) or 0) < 0:
            raise UsageError(f"--{name.replace('_', '-')} must not be negative")
    if args.minutes is not None and not args.minutes > 0:
        raise UsageError(f"--minutes must be positive, not {args.minutes}")
    if args.threads is not None and args.threads < 1:
        raise UsageError(f"--threads must be at least 1, not {args.threads}")
    if (args.n_steps is not None and args.n_steps < 2) or args.batch_size < 2 or args.n_epochs < 1:
        raise UsageError("--n-steps and --batch-size must be at least 2, --n-epochs at least 1")
    out = args.out or os.path.join("models", d.affinity)
    if out.endswith((".zip", ".json", ".safetensors")):
        out = os.path.splitext(out)[0]
    from agents import AgentSpecError, make_agent
    if args.guided_games and not args.resume:
        from agents.search import guided_spec
        if guided_spec(args.distill_teacher, "MODEL") is None or not args.distill_games:
            raise UsageError("--guided-games needs the distillation (--distill-games) of a search teacher "
                             "without a guide: the second round guides that search by the distilled network")
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
        if args.n_steps is not None and args.n_steps != rec["hyperparameters"].get("n_steps"):
            raise UsageError("--resume keeps the run's --n-steps (its rollout buffer); "
                             f"it may change {', '.join('--' + o.replace('_', '-') for o in RESUME_CHANGES)}")
        args.critic = rec["network"].get("critic", "observation")  # the env must give what it reads
        was = bool(rec.get("from_scratch")) or bool(prev_record(out).get("from_scratch"))
        if was != bool(args.from_scratch):
            raise UsageError(f"--resume: {out} was trained " + ("from scratch: add --from-scratch" if was else
                             "with imitation: a run from scratch starts afresh (drop --from-scratch or "
                             "choose another --out)"))
        if (rec["affinity"], rec["players"]) != (d.affinity, args.players):
            raise UsageError(f"--resume: {resume_from}.json was trained as {rec['dragon']} ({rec['affinity']}) "
                             f"for {rec['players']} players, not {d.name} ({d.affinity}) for {args.players}")
    from training.vec_env import batchable
    batched = args.vec_env == "batched"
    if batched and not all(batchable(o) for o in args.opponents):
        if args.critic == "state":
            raise UsageError("--critic state needs the batched env, where an opponent such as search cannot play")
        _say(args, "note: an opponent cannot play in the batched env; its games run in subprocess envs")
        batched = False
    if batched and args.shaping:
        raise UsageError("--shaping needs --vec-env subproc")
    if args.critic == "state" and not batched:
        raise UsageError("--critic state needs --vec-env batched")
    # the sizes left unset, by where the games are played
    scratch = FROM_SCRATCH if args.from_scratch else {}
    if args.n_steps is None:
        args.n_steps = scratch.get("n_steps", DEFAULTS["batched_n_steps"]) if batched else DEFAULTS["n_steps"]
    n_envs = args.n_envs
    if n_envs is None:
        n_envs = scratch.get("n_envs", DEFAULTS["batched_envs"]) if batched else \
            DEFAULTS["envs_per_core"] * (os.cpu_count() or 1)
    if n_envs < 1:
        raise UsageError(f"--n-envs must be at least 1, not {n_envs}")
    if args.n_steps < 2:
        raise UsageError("--n-steps must be at least 2")
    return {"dragon": d, "n_envs": n_envs, "out": out, "eval_opponents": eval_opps, "resume_from": resume_from,
            "batched": batched}


# -- training -----------------------------------------------------------------------------------------

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
        self.stages = {"behaviour_cloning": None, "distillation": None, "guided_distillation": None}
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
            _say(args, f"resuming {self.cfg['resume_from']} at {model.num_timesteps:,} steps"
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
                      "guided_games": 0 if args.resume else args.guided_games}
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

    # -- the imitation stages ------------------------------------------------------------------

    def start_imitation(self, stage: str, games: int, teacher: str, seed: int) -> dict:
        """Start playing a warm-start stage's games: ``teacher`` in the learner's seat."""
        from training.imitation import Collection
        from training.progress import Progress
        t1 = time.time()
        _say(self.args, f"{stage}: {games:,} games of {teacher} as {self.dragon.name} ...")
        progress = Progress(games, desc=stage, say=lambda m: _say(self.args, m))  # with the time left
        job = Collection(self.dragon.affinity, self.players, games, opponents=self.bots, teacher=teacher,
                         seed=seed, workers=self.cpus, gamma=self.args.gamma, progress=progress)
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
                        temperature=temperature, log=None if args.quiet else (lambda m: _say(args, m)))
        torch.set_num_threads(self.ppo_threads)
        info.update(games=games, teacher=teacher, opponents=self.bots, games_wall_time_s=round(played, 3),
                    wall_time_s=round(time.time() - t1, 3))
        # the run's clock beside the stage's own, which starts with the stage's games
        _say(args, f"{stage} done in {info['wall_time_s']:.0f}s (at {time.time() - self.t0:.0f}s): "
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
        return evaluate(learner, spec, affinity, self.players, args.eval_games or DEFAULTS["eval_games"],
                        seed=self.eval_seed, workers=self.cpus)

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
        _say(self.args, f"[{ts:>9,} steps, {time.time() - self.t0:6.0f}s] "
                        + "; ".join(fmt_eval(r) for r in results) + mark)
        if self.league is not None:
            members = self.curve[-1]["league"] = self.league.summary()
            _say(self.args, "  league: " + ", ".join(f"{m['name']} {100 * m['share']:.0f}% (learner scores "
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
        tmp = self.out + ".json.tmp"
        with open(tmp, "w") as f:
            json.dump(record, f, indent=2)
        os.replace(tmp, self.out + ".json")
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
        _say(args, f"training {dragon.name} ({dragon.affinity}), {self.players} players, vs {' '.join(self.bots)}"
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
                                      seed=2_000_000_000 + 7919 * args.seed, workers=self.cpus))
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
        return record


def run(args) -> dict:
    return Run(args).train()


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
