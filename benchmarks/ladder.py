"""Strength ladder: head-to-head win rates between the scripted bots, with 95% Wilson intervals.

    python benchmarks/ladder.py                          # the default ladder (see --pairs)
    python benchmarks/ladder.py --pairs heuristic:random --games 2000 --players 2 4
    python benchmarks/ladder.py --pairs search:heuristic --games 600 --players 2
    python benchmarks/ladder.py --pairs search@24:heuristic search@96:heuristic --games 400   # budget sweep
    python benchmarks/ladder.py --pairs search:heuristic --games 0 --time-games 24 --players 2 3 4  # speed only

A pairing ``A:B`` plays A against B. In 2-player games A and B alternate seats and the games cycle
through every ordered pair of dragons, so seats and dragons are balanced. In 4-player games one A
plays against three Bs, A's seat and the dragons rotating the same way; fair is 25%. Agents are
make_agent specs, and ``search@N`` means a search bot with budget N (``search:N``). A draw
counts as a shared win (1/k to each of the k tied leaders). Game g uses seed ``--seed + g``; the
games run in ``--jobs`` processes (``--jobs 1``: in this process, no pool).

``--time-games N`` also times A (when it is a search bot): N more games in this process, one core,
A against B as above (seeds ``--seed + g``), timing every decision A is asked for with more than
one legal action; it prints the median and 90th percentile wall-clock and CPU time per decision
and the rollouts per CPU second. Run it on a quiet machine: timings scale with the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.dirname(os.path.abspath(__file__))):
    if p not in sys.path:
        sys.path.insert(0, p)

from balance import dragon_orders, pct, play, run_games, wilson  # noqa: E402 - after sys.path

from agents import make_agent  # noqa: E402
from training.parallel import run_script  # noqa: E402
from training.progress import Progress  # noqa: E402

DEFAULT_PAIRS = ["heuristic:random", "search:heuristic", "search:random"]


def spec(s: str) -> str:
    return s.replace("@", ":")


def pairing(a: str, b: str, n: int, games: int, seed: int, workers: int) -> dict:
    orders = dragon_orders(n)
    jobs, seats = [], []
    for g in range(games):
        seat = g % n
        specs = [spec(b)] * n
        specs[seat] = spec(a)
        dr = list(orders[(g // n) % len(orders)])
        jobs.append((specs, seed + g, dr))
        seats.append(seat)
    t = time.time()
    with Progress(games, desc=f"{a} vs {b}, {n} players") as bar:  # on standard error
        recs = run_games(jobs, workers, bar)
    won = 0.0
    draws = 0
    by_seat = [[0.0, 0] for _ in range(n)]
    for r, seat in zip(recs, seats):
        w = r["winners"]
        share = 1.0 / len(w) if seat in w else 0.0
        won += share
        draws += len(w) > 1
        by_seat[seat][0] += share
        by_seat[seat][1] += 1
    return {"a": a, "b": b, "players": n, "games": games, "won": won, "draws": draws,
            "seconds": time.time() - t, "by_seat": by_seat}


class _Timed:
    """Wraps an agent and records the wall-clock and CPU seconds of each decision with a choice."""

    def __init__(self, agent):
        self.agent, self.wall, self.cpu = agent, [], []

    def reset(self, seat, num_players, seed=None):
        self.agent.reset(seat, num_players, seed)

    def act(self, obs, mask, view):
        if len(view.legal_actions()) < 2:
            return self.agent.act(obs, mask, view)
        t, c = time.perf_counter(), time.process_time()
        a = self.agent.act(obs, mask, view)
        self.wall.append(time.perf_counter() - t)
        self.cpu.append(time.process_time() - c)
        return a


def timing(a: str, b: str, n: int, games: int, seed: int) -> str:
    orders = dragon_orders(n)
    wall, cpu, rollouts = [], [], 0
    with Progress(games, desc=f"timing {a}, {n} players") as bar:
        for g in range(games):
            seat = g % n
            agents = [make_agent(spec(b)) for _ in range(n)]
            timed = agents[seat] = _Timed(make_agent(spec(a)))
            play(agents, seed + g, list(orders[(g // n) % len(orders)]))
            wall += timed.wall
            cpu += timed.cpu
            rollouts += getattr(timed.agent, "stats", {}).get("rollouts", 0)
            bar.update()

    def ms(xs, q):
        return 1000 * sorted(xs)[min(len(xs) - 1, int(q * len(xs)))]

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rate = f"{rollouts / sum(cpu):.0f}" if rollouts and sum(cpu) else "-"
    return (f"| {a} | {n} | {games} | {len(wall)} | {1000 * statistics.median(wall):.0f} | {ms(wall, 0.9):.0f} | "
            f"{1000 * statistics.median(cpu):.0f} | {rate} | {load:.1f} |")


def row(res: dict) -> str:
    n, g = res["players"], res["games"]
    lo, hi = wilson(res["won"], g)
    opp = res["b"] if n == 2 else f"3 × {res['b']}"
    return (f"| {res['a']} vs {opp} | {n} | {g} | {pct(res['won'] / g)} | [{pct(lo)}, {pct(hi)}] | "
            f"{pct(1 / n)} | {res['draws']} | {res['seconds']:.0f} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", nargs="+", default=DEFAULT_PAIRS, help="A:B pairings (A's win rate is reported)")
    ap.add_argument("--games", type=int, default=1000, help="games per pairing and player count")
    ap.add_argument("--search-games", type=int, default=None,
                    help="games for pairings that involve a search bot (default: --games)")
    ap.add_argument("--players", type=int, nargs="+", default=[2])
    ap.add_argument("--seed", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="worker processes for the games (1: play them in this process)")
    ap.add_argument("--time-games", type=int, default=0,
                    help="also time A's decisions over this many games in this process (search bots)")
    args = ap.parse_args(argv)
    cmd = "python benchmarks/ladder.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"command: {cmd}\n")
    if args.games > 0:
        print("| pairing | players | games | A's win rate | 95% CI | fair | draws | seconds |")
        print("|---|---|---|---|---|---|---|---|")
        for n in args.players:
            for p in args.pairs:
                a, b = p.split(":", 1)
                games = args.games
                if args.search_games and ("search" in a or "search" in b):
                    games = args.search_games
                print(row(pairing(a, b, n, games, args.seed, args.jobs)), flush=True)
    if args.time_games > 0:
        print("\n| A | players | games | decisions timed | median ms | p90 ms | median CPU ms | "
              "rollouts / CPU s | load (1 min) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in args.players:
            for p in args.pairs:
                a, b = p.split(":", 1)
                if "search" in a:
                    print(timing(a, b, n, args.time_games, args.seed), flush=True)


if __name__ == "__main__":
    run_script(main, "ladder.py")
