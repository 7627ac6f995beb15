"""Throughput of the environment and of the native core, every figure a ratio to a reference
measured in the same run.

Each pair is driven the same way in the same process and takes turns in short time slices, so a
busy machine slows both alike and the ratio stays fair:

* ``env()`` with its standard wrappers (observation and action mask read at every step, as a
  learner needs them, a uniformly random legal action) against PettingZoo's ``texas_holdem_v4``,
  at each player count (the issue's bar: 4x);
* one Python call per decision, ``Game.apply`` plus ``legal_actions``, against OpenSpiel's C++
  ``leduc_poker`` through ``pyspiel`` (``apply_action`` plus ``legal_actions``; bar 1x);
* whole games played inside the core with random legal actions (``_core.random_playouts``)
  against that ``leduc_poker`` loop (bar 10x);
* batched stepping (``havok_env.vector.VectorGames``, 256 games, observations and masks written
  at every step, uniformly random legal actions drawn in NumPy by
  ``havok_env.vector.random_legal_actions``, one uniform number per game) against
  ``leduc_poker`` with its observation tensor read at every decision (bar 1.5x).

The ``pyspiel`` figures need ``pip install open_spiel``.

    python benchmarks/throughput.py [--seconds 20] [--players 2 4]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np


def play_one(env, rng: random.Random) -> int:
    """One game of random legal play; returns the number of steps."""
    env.reset(seed=rng.getrandbits(31))
    steps = 0
    for _agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
        env.step(action)
        steps += 1
    return steps


def interleaved(makers: dict, seconds: float, slice_s: float = 0.2) -> dict:
    """{name: (steps/s, games/s)}, each env run in alternating slices for ``seconds`` in all."""
    runs = {name: {"env": make(), "rng": random.Random(0), "steps": 0, "games": 0, "time": 0.0}
            for name, make in makers.items()}
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for run in runs.values():
            start = time.perf_counter()
            while time.perf_counter() - start < slice_s:
                run["steps"] += play_one(run["env"], run["rng"])
                run["games"] += 1
            run["time"] += time.perf_counter() - start
    return {name: (r["steps"] / r["time"], r["games"] / r["time"]) for name, r in runs.items()}


def engine_rate(num_players: int, seconds: float) -> float:
    from havok_env.engine import Game

    rng = random.Random(0)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        g = Game(num_players, seed=rng.getrandbits(31))
        while not g.is_over:
            choices = g.s.pending["choices"]
            g.apply(choices[rng.randrange(len(choices))])
            decisions += 1
    return decisions / (time.perf_counter() - start)


def decision_loops(seconds: float, num_players: int = 2, slice_s: float = 0.2) -> dict:
    """Decisions/s of one Python call per decision, ``apply`` plus ``legal_actions``: the havok
    engine against OpenSpiel's C++ ``leduc_poker`` through ``pyspiel``, in alternating slices."""
    import pyspiel

    from havok_env.engine import Game

    leduc = pyspiel.load_game("leduc_poker")
    rng = random.Random(0)

    def havok_slice():
        n = 0
        g = Game(num_players, seed=rng.getrandbits(31))
        legal = g.legal_actions()
        while True:
            if not legal:
                if n and time.perf_counter() > stop:
                    return n
                g = Game(num_players, seed=rng.getrandbits(31))
                legal = g.legal_actions()
            g.apply(legal[rng.randrange(len(legal))])
            legal = g.legal_actions()
            n += 1

    def leduc_slice(observe: bool = False):
        n = 0
        st = leduc.new_initial_state()
        while True:
            if st.is_terminal():
                if n and time.perf_counter() > stop:
                    return n
                st = leduc.new_initial_state()
            if observe and not st.is_chance_node():
                st.observation_tensor()
            legal = st.legal_actions()
            st.apply_action(legal[rng.randrange(len(legal))])
            n += 1

    from havok_env import _core
    from havok_env.engine import tables
    from havok_env.vector import VectorGames, random_legal_actions

    core_tables = tables(Game(num_players, seed=0).cards).core

    def core_slice():
        n = 0
        while not n or time.perf_counter() < stop:
            n += _core.random_playouts(core_tables, num_players, 20, rng.getrandbits(64))
        return n

    batch = VectorGames(256, num_players=num_players, seed=0)
    np_rng = np.random.default_rng(0)
    state = {"mask": batch.reset()[1]}

    def batch_slice():
        n = 0
        mask = state["mask"]
        while not n or time.perf_counter() < stop:
            # a uniformly random legal action per game, drawn in NumPy as a learner samples its
            # masked policy (one uniform number per game)
            _, mask, _, _, _ = batch.step(random_legal_actions(mask, np_rng))
            n += batch.num_envs
        state["mask"] = mask
        return n

    loops = {"havok (Game.apply + legal_actions)": havok_slice,
             "leduc_poker (pyspiel)": leduc_slice,
             "havok whole games in the core": core_slice,
             "havok batched steps, obs + masks": batch_slice,
             "leduc_poker + observation_tensor": lambda: leduc_slice(observe=True)}
    totals = {name: [0, 0.0] for name in loops}
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for name, loop in loops.items():
            start = time.perf_counter()
            stop = start + slice_s
            totals[name][0] += loop()
            totals[name][1] += time.perf_counter() - start
    return {name: d / t for name, (d, t) in totals.items()}


def leduc_chance_share(games: int = 20_000) -> float:
    """The share of the ``leduc_poker`` loop's steps that are chance steps (dealing its cards),
    counted outside the timed loops (asking ``is_chance_node`` would slow them): the loop times
    every step as a decision, as the bar is set; this tells what that means per player decision."""
    import pyspiel

    game, rng, chance, steps = pyspiel.load_game("leduc_poker"), random.Random(1), 0, 0
    for _ in range(games):
        st = game.new_initial_state()
        while not st.is_terminal():
            chance += st.is_chance_node()
            steps += 1
            legal = st.legal_actions()
            st.apply_action(legal[rng.randrange(len(legal))])
    return chance / steps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="wall time per player count")
    ap.add_argument("--players", type=int, nargs="+", default=[2, 4])
    args = ap.parse_args(argv)

    import havok_env
    from havok_env.version import ENV_VERSION
    from pettingzoo.classic import texas_holdem_v4

    print(f"{'env':<26}{'players':>8}{'steps/s':>12}{'games/s':>10}")
    ratios = {}
    for n in args.players:
        res = interleaved({ENV_VERSION: lambda n=n: havok_env.env(num_players=n),
                           "texas_holdem_v4": lambda n=n: texas_holdem_v4.env(num_players=n)},
                          args.seconds)
        for name, (steps, games) in res.items():
            print(f"{name:<26}{n:>8}{steps:>12,.0f}{games:>10,.1f}")
        ratios[n] = res[ENV_VERSION][0] / res["texas_holdem_v4"][0]
    for n in args.players:
        print(f"{'havok engine (no obs)':<26}{n:>8}{engine_rate(n, args.seconds / 4):>12,.0f} "
              "decisions/s")
    for n, r in ratios.items():
        print(f"ratio {ENV_VERSION} / texas_holdem_v4 steps/s, {n} players: {r:.2f}x")
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        print("(pyspiel not installed: pip install open_spiel for the leduc_poker comparison)")
        return
    share = leduc_chance_share()
    for n in args.players:
        rates = decision_loops(args.seconds, num_players=n)
        for name, rate in rates.items():
            print(f"{name:<40}{n:>8}{rate:>12,.0f} decisions/s")
        calls, leduc, core, batch, leduc_obs = rates.values()
        print(f"ratio havok / leduc_poker, one Python call per decision, {n} players: "
              f"{calls / leduc:.2f}x (bar 1x)")
        print(f"ratio havok whole games in the core / leduc_poker, {n} players: "
              f"{core / leduc:.2f}x (bar 10x)")
        print(f"  (leduc_poker's steps include its chance steps, {share:.1%} of them: against its "
              f"player decisions alone, {core / (leduc * (1 - share)):.2f}x)")
        print(f"ratio havok batched steps with obs + masks / leduc_poker with observation_tensor, "
              f"{n} players: {batch / leduc_obs:.2f}x (bar 1.5x)")


if __name__ == "__main__":
    main()
