"""Strength ladder: head-to-head win rates between the scripted bots, with 95% Wilson intervals.

    python benchmarks/ladder.py                          # the default ladder (see --pairs)
    python benchmarks/ladder.py --pairs heuristic:random --games 2000 --players 2 4
    python benchmarks/ladder.py --pairs search:heuristic --games 600 --players 2
    python benchmarks/ladder.py --pairs search@24:heuristic search@96:heuristic --games 400   # budget sweep

A pairing ``A:B`` plays A against B. In 2-player games A and B alternate seats and the games cycle
through every ordered pair of dragons, so seats and dragons are balanced. In 4-player games one A
plays against three Bs, A's seat and the dragons rotating the same way; fair is 25%. Agents are
make_agent specs, and ``search@N`` means a search bot with N simulations per decision. A draw
counts as a shared win (1/k to each of the k tied leaders). Game g uses seed ``--seed + g``; the
games run in ``--jobs`` processes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.dirname(os.path.abspath(__file__))):
    if p not in sys.path:
        sys.path.insert(0, p)

from balance import dragon_orders, pct, run_games, wilson  # noqa: E402

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
    recs = run_games(jobs, workers)
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
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args(argv)
    cmd = "python benchmarks/ladder.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"command: {cmd}\n")
    print("| pairing | players | games | A's win rate | 95% CI | fair | draws | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.players:
        for p in args.pairs:
            a, b = p.split(":", 1)
            games = args.games
            if args.search_games and ("search" in a or "search" in b):
                games = args.search_games
            print(row(pairing(a, b, n, games, args.seed, args.jobs)), flush=True)


if __name__ == "__main__":
    main()
