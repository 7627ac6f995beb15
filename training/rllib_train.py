"""What ``train_rllib.py`` runs: its command line and defaults, the resumed run's settings, its
PPO config, the self-play snapshots, the policy's export as a model of :mod:`agents.policy`, and
where the env runners are. Ray and torch are imported when called, not on import.

Nothing an env runner or learner runs needs a file beside the installed package: the opponents'
models are loaded in the driver and read from Ray's object store (:func:`build_config`), the snapshots
travel as module state through the object store too (:func:`refresh_snapshot`), and the
functions the runners call live in this package.
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial
from pathlib import Path

ENVS_PER_RUNNER = 64  # the most sampling per runner on the 2-core machine (docs/integrations.md)
# settings a resumed run takes from its checkpoint's record: the network and what it trains against
RECORD_SETTINGS = {"lr": (int, float), "train_batch_size": int, "minibatch_size": int, "num_epochs": int,
                   "snapshots": int, "snapshot_every": int}


def parse_args(argv=None, description=None):
    """train_rllib.py's command line, its defaults the settings measured best here."""
    p = argparse.ArgumentParser(prog="train_rllib.py", description=description)
    p.add_argument("--dragon", default="fire", help="the learner's dragon, or 'any' (one policy for all)")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--opponents", nargs="+", default=["heuristic", "random", "self"], metavar="SPEC",
                   help="agent specs for the other seats, and 'self' for frozen copies of the learner")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--num-env-runners", type=int, default=None,
                   help="sampling processes (0: in the driver; default: one per --torch-threads CPUs "
                        "that Ray has, after the learners')")
    p.add_argument("--envs-per-runner", type=int, default=ENVS_PER_RUNNER,
                   help="envs each runner steps together, one batched forward pass for all "
                        "(docs/integrations.md measures 1-128)")
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch threads (and CPUs reserved) per env runner and per CPU learner")
    p.add_argument("--num-learners", type=int, default=0,
                   help="learner processes (0: the learner runs in the driver)")
    p.add_argument("--learner-gpus", type=float, default=0,
                   help="GPUs per learner (with --num-learners 0, the driver's learner)")
    p.add_argument("--address", default=None, help="a Ray cluster's address ('auto' finds a running one)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance (default all)")
    p.add_argument("--out", default="models/rllib", help="checkpoint directory")
    p.add_argument("--resume", default=None, metavar="CHECKPOINT", help="continue from a checkpoint")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--snapshots", type=int, default=2, help="frozen copies of the learner")
    p.add_argument("--snapshot-every", type=int, default=5)
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--train-batch-size", type=int, default=4000)
    p.add_argument("--minibatch-size", type=int, default=500)
    p.add_argument("--num-epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256], metavar="N")
    p.add_argument("--measure-sampling", type=int, default=0, metavar="STEPS",
                   help="only time sampling STEPS env steps per runner, then exit")
    args = p.parse_args(argv)
    for name in ("iterations", "num_env_runners", "envs_per_runner", "torch_threads", "num_learners",
                 "snapshot_every", "checkpoint_every", "train_batch_size", "minibatch_size", "num_epochs"):
        lowest = 0 if name in ("num_env_runners", "num_learners") else 1
        if getattr(args, name) is not None and getattr(args, name) < lowest:
            p.error(f"--{name.replace('_', '-')} must be at least {lowest}")
    if not args.learner_gpus >= 0:
        p.error("--learner-gpus must be at least 0")
    if args.snapshots < 1:
        p.error("--snapshots must be at least 1")
    return args


def resume_settings(args, path: str) -> int:
    """Sets the run's settings from the record of the checkpoint at ``path`` (read as JSON, nothing
    unpickled); the iterations done. Raises AgentSpecError or ValueError for a record that is not
    one of this script's checkpoints."""
    from agents.policy import read_record

    if not os.path.isfile(os.path.join(path, "rllib_checkpoint.json")):
        raise ValueError(f"{path} is no checkpoint of train_rllib.py (it has no rllib_checkpoint.json)")
    rec = read_record(os.path.join(path, "policy.json"))
    opponents, hyper, done = rec.get("opponents"), rec.get("hyperparameters"), rec.get("iterations")
    if not (isinstance(opponents, list) and opponents and all(isinstance(o, str) for o in opponents)):
        raise ValueError(f"{path}/policy.json: opponents must be a list of agent specs")
    if not (isinstance(done, int) and not isinstance(done, bool) and done >= 0):
        raise ValueError(f"{path}/policy.json: iterations must be a whole number")
    if not isinstance(hyper, dict):
        raise ValueError(f"{path}/policy.json: hyperparameters must be an object")
    for key, kind in RECORD_SETTINGS.items():
        value = hyper.get(key)
        if not isinstance(value, kind) or isinstance(value, bool) or not value > 0:
            raise ValueError(f"{path}/policy.json: hyperparameters.{key} must be a positive number")
        setattr(args, key, value)
    args.dragon = "any" if rec.get("any_dragon") else rec["dragon"]
    args.players, args.hidden, args.opponents = rec["players"], rec["network"]["pi"], opponents
    return done


def use_torch_threads(threads: int, **_callback_args) -> None:
    """Caps torch's threads in this process: RLlib's ``on_environment_created`` callback in every
    env runner (a runner that Ray starts again gets it too), and the learners."""
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def module_spec(hidden):
    """One policy's RLlib module: actor and critic MLPs of ``hidden`` (tanh), illegal actions masked."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    return RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": list(hidden), "fcnet_activation": "tanh",
                                      "head_fcnet_hiddens": []})


def build_config(args, agents: dict):
    """RLlib's PPO config for the parsed command line (Ray running); ``agents``: the opponents
    loaded in the driver (:func:`training.rllib_env.load_opponents`). They go into Ray's object
    store once, and the config holds the reference, which keeps them there for the runners that Ray
    starts again (as an env runner's own argument, a large object is freed once it has started)."""
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from training.rllib_env import LEARNER, HavokMultiAgentEnv, frozen_modules, map_agent

    frozen = frozen_modules(args.snapshots)
    module = module_spec(args.hidden)
    threads = args.torch_threads
    default_runners(args, ray.cluster_resources())
    return (
        PPOConfig()
        # RLlib's env check steps random actions, ignoring the mask, which the env refuses
        .environment(HavokMultiAgentEnv, env_config={"players": args.players, "opponents": args.opponents,
                                                     "dragon": None if args.dragon == "any" else args.dragon,
                                                     "agents": ray.put(agents)},
                     disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.envs_per_runner,
                     num_cpus_per_env_runner=threads)
        .learners(num_learners=args.num_learners, num_gpus_per_learner=args.learner_gpus,
                  num_cpus_per_learner=threads if args.learner_gpus == 0 else "auto")
        .callbacks(on_environment_created=partial(use_torch_threads, threads))
        .multi_agent(policies={LEARNER, *frozen}, policy_mapping_fn=partial(map_agent, frozen=frozen),
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={m: module for m in (LEARNER, *frozen)}))
        .training(train_batch_size_per_learner=args.train_batch_size, minibatch_size=args.minibatch_size,
                  num_epochs=args.num_epochs, lr=args.lr, gamma=0.99, lambda_=0.95, entropy_coeff=0.01)
        .debugging(seed=args.seed)
    )


def default_runners(args, resources: dict) -> None:
    """Sets ``--num-env-runners``, if not given, to one runner per ``--torch-threads`` CPUs of
    ``resources`` (Ray's ``cluster_resources()``, or this machine's before Ray starts) left after
    the CPU learners', at least one. PPO samples, then learns, in turn: the driver's own learner
    (``--num-learners 0``) works while the runners wait, so it is given no CPU of its own. On the
    2-core machine that is two runners, which sample 4.1x the steps per second of the first
    default (one runner of 8 envs) and 1.9x one runner of 64 (docs/integrations.md)."""
    if args.num_env_runners is None:
        learners = args.num_learners if args.learner_gpus == 0 else 0
        cpus = int(resources.get("CPU", 1)) - learners * args.torch_threads
        args.num_env_runners = max(1, cpus // args.torch_threads)


def shortfall(args, resources: dict) -> list[str]:
    """What the run reserves beyond ``resources`` (Ray's ``cluster_resources()``), one line each:
    ``--torch-threads`` CPUs per env runner and per CPU learner, ``--learner-gpus`` per learner
    (the driver's learner, with ``--num-learners 0``, reserves nothing). Runners not given are
    counted as :func:`default_runners` sets them for ``resources``."""
    default_runners(args, resources)
    cpus = args.torch_threads * (args.num_env_runners + (args.num_learners if args.learner_gpus == 0 else 0))
    gpus = args.learner_gpus * args.num_learners
    short = []
    for need, kind, what in ((cpus, "CPU", "--num-env-runners, --num-learners x --torch-threads"),
                             (gpus, "GPU", "--num-learners x --learner-gpus")):
        have = resources.get(kind, 0)
        if need > have:
            short.append(f"the run reserves {need:g} {kind}s ({what}) and Ray has {have:g}")
    return short


def build(args, config):
    """The algorithm of ``config``, with torch's threads capped at ``args.torch_threads`` in the
    driver (the local learner, when ``--num-learners`` is 0) and in every learner."""
    threads = args.torch_threads
    use_torch_threads(threads)
    algo = config.build_algo()
    if algo.learner_group.is_remote:
        algo.learner_group.foreach_learner(lambda learner: use_torch_threads(threads))
    return algo


def learner_state(algo) -> dict:
    """The trained module's whole state (actor and critic), as the learners hold it."""
    from training.rllib_env import LEARNER

    return algo.learner_group.get_weights([LEARNER])[LEARNER]


def refresh_snapshot(algo, slot: str) -> None:
    """Copies the learner's weights into the frozen module ``slot``: in the learners, then in every
    env runner through RLlib's own weight sync (one copy in Ray's object store for all)."""
    algo.learner_group.set_weights({slot: learner_state(algo)})
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, policies=[slot],
                                       inference_only=True)


def runner_nodes(algo) -> dict:
    """``{(node IP, node id): env runners}`` of the remote env runners."""
    import ray

    def where(runner):
        return ray.util.get_node_ip_address(), ray.get_runtime_context().get_node_id()

    nodes = {}
    for place in algo.env_runner_group.foreach_env_runner(where, local_env_runner=False):
        nodes[place] = nodes.get(place, 0) + 1
    return nodes


def export_policy(algo, out: Path, args, iterations: int) -> None:
    """Writes the learner's network as ``out/policy.safetensors`` + ``policy.json``, a model of
    ``agents/policy.py``: RLlib's actor encoder, pi head, critic encoder and vf head are the same
    layers as stable-baselines3's MlpPolicy, renamed."""
    import numpy as np
    import ray

    from agents.policy import FORMAT, save_model
    from havok_env.cards import default_cards
    from havok_env.version import ENV_VERSION

    state = learner_state(algo)
    rename = {"pi.net.mlp.0": "action_net", "vf.net.mlp.0": "value_net"}
    for i in range(len(args.hidden)):
        rename[f"encoder.actor_encoder.net.mlp.{2 * i}"] = f"mlp_extractor.policy_net.{2 * i}"
        rename[f"encoder.critic_encoder.net.mlp.{2 * i}"] = f"mlp_extractor.value_net.{2 * i}"
    tensors = {}
    for old, new in rename.items():
        for part in ("weight", "bias"):
            t = state[f"{old}.{part}"]
            tensors[f"{new}.{part}"] = np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t,
                                                  dtype=np.float32)
    cards = default_cards()
    dragon = cards.dragons[cards.dragon_index("fire" if args.dragon == "any" else args.dragon)]
    obs_size, n_actions = tensors["mlp_extractor.policy_net.0.weight"].shape[1], tensors["action_net.bias"].shape[0]
    record = {
        "format": FORMAT, "env_version": ENV_VERSION, "dragon": dragon.name, "affinity": dragon.affinity,
        "any_dragon": args.dragon == "any", "players": args.players,
        "observation_size": int(obs_size), "action_size": int(n_actions),
        "network": {"pi": list(args.hidden), "vf": list(args.hidden), "activation": "tanh"},
        "trainer": "train_rllib.py (Ray RLlib PPO)", "ray": ray.__version__, "iterations": iterations,
        "opponents": list(args.opponents), "seed": args.seed,
        "hyperparameters": {"lr": args.lr, "train_batch_size": args.train_batch_size,
                            "minibatch_size": args.minibatch_size, "num_epochs": args.num_epochs,
                            "snapshots": args.snapshots, "snapshot_every": args.snapshot_every},
    }
    save_model(str(out / "policy"), tensors, record)


def save_checkpoint(algo, out: Path, args, iterations: int) -> None:
    """Writes RLlib's checkpoint and the exported policy to ``out``: whole, into ``OUT.saving``,
    then swapped in, so that a run stopped while saving leaves its last checkpoint (in ``out``, or
    in ``OUT.previous`` between the two renames)."""
    import shutil

    new, old = out.with_name(out.name + ".saving"), out.with_name(out.name + ".previous")
    shutil.rmtree(new, ignore_errors=True)
    algo.save_to_path(str(new))
    export_policy(algo, new, args, iterations)
    if out.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(out, old)
    os.replace(new, out)
    shutil.rmtree(old, ignore_errors=True)


def measure_sampling(algo, steps: int) -> float:
    """Env steps per second over every env runner sampling ``steps`` steps at once."""
    group = algo.env_runner_group
    remote = group.num_remote_env_runners() > 0
    group.foreach_env_runner(lambda r: r.sample(num_timesteps=200, random_actions=False),
                             local_env_runner=not remote)  # warm up
    start = time.perf_counter()
    counts = group.foreach_env_runner(
        lambda r: sum(len(e) for e in r.sample(num_timesteps=steps, random_actions=False)),
        local_env_runner=not remote)
    return sum(counts) / (time.perf_counter() - start)
