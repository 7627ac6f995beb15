"""A training run's learning curve against wall time and steps, and its checkpoints against the
search bot.

Reads the run record train.py writes (``PATH.json``: the periodic evaluations, each with its
steps and the run's wall time), plays the checkpoints it saved (``PATH_checkpoints/step_N``)
against ``--opponent`` (default ``search``, at its default budget; seats rotated, game ``g`` on
seed ``--seed + g``, the same games for every checkpoint) at ``--points`` of them spread over the
run (or, with ``--at-minutes``, the last checkpoint saved within each of those minutes of the
run's wall time), and draws both: win rate against each periodic-evaluation opponent and against the
opponent, by minutes of training and by steps, with 95% intervals. The figures it played are
written beside the plot as JSON.

    python benchmarks/learning_curve.py models/scratch/fire --games 400 --points 6 \\
        --plot docs/learning_curve_scratch.png
    python benchmarks/learning_curve.py models/scratch/fire --games 1000 --at-minutes 15 60 120
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from havok_env.files import replaced  # noqa: E402


def spread(items: list, k: int) -> list:
    """``k`` items spread evenly over ``items``, the first and last included."""
    if len(items) <= k:
        return items
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


def at_minutes(items: list, wall: dict, minutes: list) -> list:
    """For each of ``minutes``, the last of ``items`` (steps, path) whose evaluation came within
    that many minutes of the run's wall time (none for a mark before the first)."""
    picked = []
    for m in minutes:
        within = [it for it in items if wall.get(it[0]) is not None and wall[it[0]] <= 60.0 * m]
        if within and within[-1] not in picked:
            picked.append(within[-1])
    return picked


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run", help="the run's path without extension (train.py's --out)")
    p.add_argument("--opponent", default="search")
    p.add_argument("--games", type=int, default=400, help="games per checkpoint against --opponent")
    p.add_argument("--points", type=int, default=6, help="checkpoints to play (0: none)")
    p.add_argument("--at-minutes", type=float, nargs="+", default=None, metavar="M",
                   help="play the last checkpoint within each of these minutes of wall time instead")
    p.add_argument("--seed", type=int, default=3_500_000_000)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--plot", default=None, help="the PNG to draw (default RUN.learning.png)")
    args = p.parse_args(argv)

    from training.checkpoints import saved_models
    from training.progress import Progress
    from training.winrate import evaluate
    with open(args.run + ".json") as f:
        rec = json.load(f)
    curve = rec["curve"]
    wall = {pt["timesteps"]: pt["wall_s"] for pt in curve}
    played = []
    saved = [(steps, path + ".safetensors") for steps, path in saved_models(args.run + "_checkpoints", "step")]
    if args.at_minutes:
        chosen = at_minutes(saved, wall, args.at_minutes)
    else:
        chosen = spread(saved, args.points) if args.points else []
    for k, (steps, path) in enumerate(chosen):
        # on standard error with the time left, ended before the checkpoint's line
        with Progress(args.games, desc=f"checkpoint {k + 1} of {len(chosen)} ({steps:,} steps)") as bar:
            r = evaluate(path, args.opponent, rec["affinity"], rec["players"], args.games, seed=args.seed,
                         workers=args.workers, progress=bar)
        r.update(timesteps=steps, wall_s=wall.get(steps))
        played.append(r)
        print(f"{steps:>11,} steps: vs {args.opponent} {100 * r['win_rate']:.1f}% "
              f"[{100 * r['ci95'][0]:.1f}, {100 * r['ci95'][1]:.1f}] of {args.games}", flush=True)
    plot = args.plot or args.run + ".learning.png"
    with open(os.path.splitext(plot)[0] + ".json", "w") as f:
        json.dump({"run": args.run, "opponent": args.opponent, "games": args.games, "seed": args.seed,
                   "checkpoints": played}, f, indent=1)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    series = {}
    for pt in curve:
        for r in pt["results"]:
            series.setdefault(r["opponent"], []).append((pt["timesteps"], pt["wall_s"], r))
    series.setdefault(f"{args.opponent} (checkpoints, {args.games} games)", []).extend(
        (r["timesteps"], r["wall_s"], r) for r in played if r["wall_s"] is not None)
    for ax, key, label in ((axes[0], 1, "minutes of training (the run's wall time)"),
                           (axes[1], 0, "steps (learner decisions)")):
        for name, pts in series.items():
            if not pts:
                continue
            xs = [p[key] / (60.0 if key == 1 else 1.0) for p in pts]
            ys = [100 * p[2]["win_rate"] for p in pts]
            line, = ax.plot(xs, ys, marker="o", ms=3, label=f"vs {name}")
            ax.fill_between(xs, [100 * p[2]["ci95"][0] for p in pts], [100 * p[2]["ci95"][1] for p in pts],
                            alpha=0.2, color=line.get_color())
        ax.axhline(60, color="grey", lw=0.8, ls="--")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("win rate, % (95% interval)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"{rec['dragon']} ({rec['affinity']}), {rec['players']} players"
                 + (", from scratch" if rec.get("from_scratch") else ""))
    fig.tight_layout()
    with replaced(plot, "wb") as f:
        fig.savefig(f, format=os.path.splitext(plot)[1][1:] or "png", dpi=110)
    plt.close(fig)
    print(f"wrote {plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
