"""A train.py run's settings: the documented defaults (``DEFAULTS``, and ``FROM_SCRATCH`` for
``--from-scratch``), what ``--resume`` may change, and the checks of a run's arguments
(:func:`validate`), which fill in the options left unset and derive the run's settings.

A bad argument raises :class:`UsageError` with one line, which train.py prints with exit code 2.
Importing this module loads neither torch nor stable-baselines3; :func:`validate` first names the
train extra's missing packages (:func:`require_extras`), then checks what needs them.
"""

from __future__ import annotations

import os

from havok_env.cards import default_cards
from havok_env.constants import PLAYER_COUNTS, is_player_count

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
    # a value function for the agent's search, fitted at the end of the run on games of the
    # heuristic (its rollouts' player): about 25 seconds; the network played with search and this
    # value function beats the search bot (docs/TRAINING.md)
    value_games=20_000,
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
    value_games=0,          # nothing fitted on bot games unless asked
)


# the options --resume may change (a lower learning rate and entropy bonus for a run's later hours),
# by their names among the PPO hyperparameters; the network and the rollout's size stay the run's
RESUME_CHANGES = {"lr": "learning_rate", "ent_coef": "ent_coef", "clip_range": "clip_range",
                  "n_epochs": "n_epochs", "batch_size": "batch_size"}


class UsageError(Exception):
    """A bad command line: reported on one line, exit code 2."""


def say(args, msg: str) -> None:
    """A line of the run's log (none with ``--quiet``), written above a progress bar, not through it."""
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
            "value_games": DEFAULTS["value_games"],
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
                 "guided_games", "value_games", "distill_temperature"):
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
    eval_opps = _check_agents(args)
    resume_from = _check_resume(args, out, d) if args.resume else None
    batched, n_envs = _where_played(args)
    return {"dragon": d, "n_envs": n_envs, "out": out, "eval_opponents": eval_opps, "resume_from": resume_from,
            "batched": batched}


def _check_agents(args) -> list[str]:
    """The opponents, the evaluation's opponents (returned) and the teachers, each made once."""
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
    return eval_opps


def _check_resume(args, out: str, d) -> str:
    """--resume: the model it continues from (``out.last``, or ``out``), checked against the
    command line; the critic is the model's own."""
    from agents import AgentSpecError
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
    return resume_from


def _where_played(args) -> tuple[bool, int]:
    """Whether PPO's games are batched, and how many envs: the sizes left unset are filled in by
    where the games are played."""
    from training.vec_env import batchable
    batched = args.vec_env == "batched"
    if batched and not all(batchable(o) for o in args.opponents):
        if args.critic == "state":
            raise UsageError("--critic state needs the batched env, where an opponent such as search cannot play")
        say(args, "note: an opponent cannot play in the batched env; its games run in subprocess envs")
        batched = False
    if batched and args.shaping:
        raise UsageError("--shaping needs --vec-env subproc")
    if args.critic == "state" and not batched:
        raise UsageError("--critic state needs --vec-env batched")
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
    return batched, n_envs
