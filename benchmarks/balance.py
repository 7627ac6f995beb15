"""Balance report: many games between identical bots, the figures cards.md ("Balance targets") asks for.

    python benchmarks/balance.py                         # heuristic bots, 2, 3 and 4 players
    python benchmarks/balance.py --agent random --games 2000 --players 2 4 --jobs 2

For each player count it prints: the rate of games ended by an empty Havok deck, each dragon's win
rate (seats and dragons rotated: the games cycle through every ordered choice of dragons, and the
engine draws the first player at random), the first player's win rate (its advantage over fair),
the draw rate, and the median game length in turns and in decisions. A draw counts as a shared
win (1/k to each of the k tied leaders), so the dragons' rates sum to 100%. Intervals are 95% Wilson.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from agents import make_agent  # noqa: E402
from agents.runner import play_game  # noqa: E402
from havok_env.cards import default_cards  # noqa: E402
from havok_env.constants import MAX_PLAYERS, MIN_PLAYERS  # noqa: E402
from training.parallel import Pool, run_script  # noqa: E402
from training.progress import Progress  # noqa: E402
from training.stats import wilson  # noqa: E402

TARGETS = {2: 0.03, 3: None, 4: 0.10}  # max empty-deck rate per player count (cards.md)


def dragon_orders(n: int) -> list[tuple[str, ...]]:
    names = [d.name for d in default_cards().dragons]
    return list(itertools.permutations(names, n))


def play(agents: list, seed: int, dragons) -> dict:
    """One game (:func:`agents.runner.play_game`), as the report needs it."""
    rec = play_game(agents, seed, dragons=dragons)
    r = rec["result"]
    return {"winners": r["winners"], "reason": r["reason"], "scores": r["scores"],
            "first": rec["first_player"], "turns": rec["turns"], "decisions": rec["decisions"],
            "dragons": rec["dragons"]}


def _job(args):
    specs, seed, dragons = args
    agents = [make_agent(s) for s in specs]
    rec = play(agents, seed, dragons)
    rec["specs"] = list(specs)
    return rec


def run_games(jobs: list, workers: int, progress=None) -> list[dict]:
    """The games of ``jobs``, in their order; ``progress(done, total)`` as they finish."""
    def gather(results):
        recs = []
        for rec in results:
            recs.append(rec)
            if progress:
                progress(len(recs), len(jobs))
        return recs

    if workers <= 1:
        return gather(map(_job, jobs))
    with Pool(workers) as pool:
        return gather(pool.imap(_job, jobs, chunksize=max(1, len(jobs) // (workers * 8))))


def balance(agent: str, n: int, games: int, seed: int, workers: int, progress=None) -> dict:
    orders = dragon_orders(n)
    jobs = [([agent] * n, seed + g, list(orders[g % len(orders)])) for g in range(games)]
    t = time.time()
    recs = run_games(jobs, workers, progress)
    names = [d.name for d in default_cards().dragons]
    played = {d: 0 for d in names}
    won = {d: 0.0 for d in names}
    first_won = 0.0
    empty = draws = 0
    for r in recs:
        share = 1.0 / len(r["winners"])
        for i, d in enumerate(r["dragons"]):
            played[d] += 1
            if i in r["winners"]:
                won[d] += share
        if r["first"] in r["winners"]:
            first_won += share
        empty += r["reason"] == "havok_empty"
        draws += len(r["winners"]) > 1
    return {
        "agent": agent, "players": n, "games": games, "seconds": time.time() - t,
        "empty": empty, "draws": draws, "first_won": first_won,
        "dragons": {d: (won[d], played[d]) for d in names if played[d]},
        "turns": statistics.median(r["turns"] for r in recs),
        "decisions": statistics.median(r["decisions"] for r in recs),
        "mean_turns": statistics.mean(r["turns"] for r in recs),
    }


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def report(res: dict) -> str:
    n, g = res["players"], res["games"]
    fair = 1.0 / n
    lines = [f"## {n} players: {g} games of {res['agent']} bots ({res['seconds']:.0f} s)", ""]
    lo, hi = wilson(res["empty"], g)
    tgt = TARGETS.get(n)
    verdict = "" if tgt is None else (" — target < " + pct(tgt) + (": met" if res["empty"] / g < tgt
                                                                   else ": NOT met"))
    lines.append(f"- ended by an empty Havok deck: {pct(res['empty'] / g)} "
                 f"[{pct(lo)}, {pct(hi)}]{verdict}")
    lo, hi = wilson(res["first_won"], g)
    lines.append(f"- first player's win rate: {pct(res['first_won'] / g)} [{pct(lo)}, {pct(hi)}] "
                 f"(fair {pct(fair)}; advantage {100 * (res['first_won'] / g - fair):+.1f} points)")
    lines.append(f"- draws: {pct(res['draws'] / g)}")
    lines.append(f"- median game length: {res['turns']:g} turns (mean {res['mean_turns']:.1f}), "
                 f"{res['decisions']:g} decisions")
    lines.append("")
    lines.append(f"| dragon | games | win rate | 95% CI | vs fair ({pct(fair)}) |")
    lines.append("|---|---|---|---|---|")
    ok = True
    for d, (w, p) in res["dragons"].items():
        lo, hi = wilson(w, p)
        dev = 100 * (w / p - fair)
        ok &= abs(dev) <= 5
        lines.append(f"| {d} | {p} | {pct(w / p)} | [{pct(lo)}, {pct(hi)}] | {dev:+.1f} |")
    lines.append("")
    lines.append(f"- every dragon within ±5 points of fair: {'yes' if ok else 'NO'}")
    lines.append("")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", default="heuristic", help="bot for every seat: random or heuristic "
                    "(any make_agent spec works)")
    ap.add_argument("--games", type=int, default=4000, help="games per player count (default 4000)")
    ap.add_argument("--players", type=int, nargs="+", default=list(range(MIN_PLAYERS, MAX_PLAYERS + 1)))
    ap.add_argument("--seed", type=int, default=1, help="first game seed (game g uses seed + g)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    args = ap.parse_args(argv)
    print(f"# Balance report\n\ncommand: python benchmarks/balance.py --agent {args.agent} "
          f"--games {args.games} --players {' '.join(map(str, args.players))} --seed {args.seed}\n")
    for n in args.players:
        with Progress(args.games, desc=f"{n} players") as bar:  # on standard error, with the time left
            res = balance(args.agent, n, args.games, args.seed, args.jobs, bar)
        print(report(res), flush=True)


if __name__ == "__main__":
    run_script(main, "balance.py")
