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
fine-tunes the network against the opponents. Last, ``--value-games`` heuristic games fit a
value function (``training/value_fit.py``) for the agent's search: the network played with search
(``search::value=PATH_value.safetensors:guide=PATH.safetensors``) is the run's strongest player.
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
``PATH_value.safetensors`` with ``PATH_value.json`` (the value function and its record), checkpoints
under ``PATH_checkpoints/`` and TensorBoard logs under ``runs/``.
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
import sys

from havok_env.cards import CardDataError, default_cards
from havok_env.constants import PLAYER_COUNTS
from training.parallel import handle_interrupts
from training.run import run
from training.settings import DEFAULTS, FROM_SCRATCH, UsageError


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
    p.add_argument("--value-games", type=int, default=None,
                   help="after training: games of heuristic bots on which a value function is fitted for the "
                        "agent's search (PATH_value.safetensors; default "
                        f"{DEFAULTS['value_games']:,}, {FROM_SCRATCH['value_games']} with --from-scratch; 0: none)")
    p.add_argument("--distill-temperature", type=float, default=DEFAULTS["distill_temperature"],
                   help="temperature of the soft targets built from the teacher's value estimates "
                        f"(default {DEFAULTS['distill_temperature']}; 0: imitate its choices only)")
    p.add_argument("--clip-range", type=float, default=None,
                   help=f"PPO's clip range (default {DEFAULTS['clip_range']}; with --resume, the run's own)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--quiet", action="store_true", help="print only the final summary")
    return p


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
