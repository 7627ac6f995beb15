"""Throughput: random legal play through ``havok_env.env()`` against PettingZoo's texas_holdem_v4.

Both environments are driven the same way in the same process: ``env()`` with its standard
wrappers, observation and action mask read at every step (as a learner needs them), a uniformly
random legal action. They take turns in short time slices, so a busy machine slows both alike and
the ratio stays fair. Reports steps/s and games/s for each and the ratio, plus the bare engine's
decisions/s (no observations).

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

    def leduc_slice():
        n = 0
        st = leduc.new_initial_state()
        while True:
            if st.is_terminal():
                if n and time.perf_counter() > stop:
                    return n
                st = leduc.new_initial_state()
            legal = st.legal_actions()
            st.apply_action(legal[rng.randrange(len(legal))])
            n += 1

    totals = {"havok (Game.apply + legal_actions)": [0, 0.0],
              "leduc_poker (pyspiel)": [0, 0.0]}
    loops = dict(zip(totals, (havok_slice, leduc_slice)))
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for name, loop in loops.items():
            start = time.perf_counter()
            stop = start + slice_s
            totals[name][0] += loop()
            totals[name][1] += time.perf_counter() - start
    return {name: d / t for name, (d, t) in totals.items()}


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
    rates = decision_loops(args.seconds)
    for name, rate in rates.items():
        print(f"{name:<40}{rate:>12,.0f} decisions/s")
    havok, leduc = rates.values()
    print(f"ratio havok / leduc_poker decisions/s (one Python call per decision): {havok / leduc:.2f}x")


if __name__ == "__main__":
    main()
