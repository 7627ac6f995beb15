"""How many fewer games the luck-corrected score needs (evaluation/, docs/luck.md).

    python benchmarks/luck_gain.py --pair heuristic random --pair search heuristic --games 1000
    python benchmarks/luck_gain.py --pair pretrained:fire_distilled heuristic --games 1000 --steps
    python benchmarks/luck_gain.py --check --players 2 --games 20000 --out results/check2.jsonl

For each pairing ``--pair A B``, A plays against B (2 players: A and B alternate seats; N players: one
A against N - 1 Bs, A's seat rotating), the dragons cycling through every ordered choice (a
trained model keeps the dragon it was trained for, the others cycle over the rest), game g on
seed ``--seed + g``. For A it reports the score (mean reward: +1 a win, -1 a loss, 0 a shared
win) as played and corrected, each with its 95% interval, the standard deviation of one game's
score both ways and their ratio, and the games a 95% interval of +-3 points needs both ways (points
of the win rate counting a draw as half, (score + 1) / 2, so +-3 points is +-0.06 of score).
``--steps`` also says where the variance left comes from: the corrected score is split into what
is left of each step of the game (evaluation.luck.analyse), and the standard deviation of each
kind of step's total is shown, with the luck each kind of event took out.

The value is taken where the known policies lead (``evaluation.luck.lookahead``, docs/luck.md);
``--where-it-stands`` takes it where each position stands (the estimator without looking ahead),
and ``--both`` reports both ways on the same games.

``--check`` plays heuristic against random (``--players``, default 2) and checks the estimator is
unbiased: the mean correction, the paired difference of the two means, must be within its interval
of zero.

``--reruns K`` also corrects the search bot's decisions (evaluation.luck.analyse: its expectation
estimated by asking it again K times with independent draws; K searches per decision of it).
``--deeper W`` mixes the value with its expectation one chance event further on, with weight W
(evaluation.luck.analyse; several times the time of a correction), and with ``--depth K`` the
mix is taken again at each of that event's outcomes, K events deep (fifteen to twenty times the
time again for each event deeper). ``--replay-search`` looks
through the search bot's decisions with the bot itself, replayed from its seed (evaluation.luck.analyse,
docs/luck.md "Replaying the search bot"; a search at every decision of it the look-ahead plays).
``--records PATH`` keeps each game played (its record, one JSON line) and takes a game from there
rather than playing it again: the same games corrected another way cost only the correction.
``--workers N`` plays and corrects the games in N processes (the same rows, in the same order).
``--value PATH`` measures another value function than the shipped one (the same games: compare
two on the same seeds). ``--out PATH`` appends one JSON line per game (pairing, seed, seat, raw
and corrected score, and the steps), so that a long measurement can be run in pieces and then
summarised with ``--summarise PATH``: ``--skip K --games N`` plays games K to K + N - 1 of the
sequence that starts at ``--seed`` (the seats and dragons rotate with the game's place in it, so
pieces with the same ``--seed`` are the games one run would play, and ``--records`` finds them).
``--compare FIRST SECOND`` pairs two such files' corrections of the same games: each way's ratio,
the variance of the second's corrected score over the first's with its bootstrap 95% interval
(seeded: the same figures every time) and their correlation, as docs/luck.md gives them.
The seeds must stay clear of the value function's fitting seeds (its ``.json``'s ``seeds``); the
script refuses them.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import sys
import time
from collections import defaultdict

# before numpy loads: its BLAS threads spin between small matrix products (train.py)
if __name__ == "__main__":  # a program of its own (importing it leaves the environment alone)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.dirname(os.path.abspath(__file__))):
    if p not in sys.path:
        sys.path.insert(0, p)

from balance import dragon_orders  # noqa: E402

from agents import AgentSpecError, make_agent  # noqa: E402
from agents.runner import play_game  # noqa: E402
from evaluation import luck  # noqa: E402
from agents.value import ModelFileError, ValueModel  # noqa: E402
from havok_env.cards import default_cards  # noqa: E402
from training.parallel import Pool  # noqa: E402
from training.progress import Progress  # noqa: E402
from training.stats import Z95  # noqa: E402

HALF_WIDTH = 0.06  # +-3 points of win rate, in score (reward) units


def dragon_names() -> list[str]:
    return [d.name for d in default_cards().dragons]


def games_needed(sd: float) -> int:
    return math.ceil((Z95 * sd / HALF_WIDTH) ** 2)


def play(a: str, b: str, players: int, seed: int, games: int, steps: bool, out=None, progress=True,
         modes=(True,), model=None, reruns=0, records=None, deeper=0.0, replay_search=False, skip=0,
         depth=1, workers=1):
    """Play and correct ``games`` games; one row per game and mode (``True``: the value looks ahead
    through the known policies, ``False``: taken where each position stands). ``workers``
    processes play and correct them (the rows are the same, in the same order, whatever their
    number); ``model``: a value model, or the path of one."""
    # a trained model plays the dragon it was trained for, the others rotate over the rest
    own = getattr(make_agent(a), "meta", None) or {}
    fixed = own.get("dragon") if isinstance(own.get("dragon"), str) else None
    if fixed:
        orders = [o for o in itertools.permutations([d for d in dragon_names() if d != fixed], players - 1)]
    else:
        orders = dragon_orders(players)
    played = _read_records(records)
    jobs = []
    for g in range(skip, skip + games):
        seat = g % players
        specs = [b] * players
        specs[seat] = a
        dragons = list(orders[(g // players) % len(orders)])
        if fixed:
            dragons.insert(seat, fixed)
        key = json.dumps([specs, seed + g, dragons])
        jobs.append({"a": a, "b": b, "players": players, "seed": seed + g, "seat": seat, "specs": specs,
                     "dragons": dragons, "record": played.get(key), "steps": steps, "modes": modes,
                     "model": model, "reruns": reruns, "deeper": deeper, "replay_search": replay_search,
                     "depth": depth})
    rows = []
    keep = open(records, "a") if records else None
    parallel = workers > 1 and len(jobs) > 1
    # on standard error, with the time left
    with Progress(games, desc=f"{a} vs {b}", show=None if progress else False) as bar, \
            (Pool(min(workers, len(jobs)), context="spawn") if parallel else contextlib.nullcontext()) as pool:
        for job, (rec, got) in zip(jobs, pool.imap(_one_game, jobs) if parallel else map(_one_game, jobs)):
            if keep is not None and job["record"] is None:
                keep.write(json.dumps({"game": json.dumps([job["specs"], job["seed"], job["dragons"]]),
                                       "record": rec}) + "\n")
                keep.flush()
            rows += got
            if out is not None:
                for row in got:
                    out.write(json.dumps(row) + "\n")
                out.flush()
            bar.update()
    if keep is not None:
        keep.close()
    return rows


_AGENTS: dict = {}  # one agent per spec and seat, built once in each process (a trained model loads once)
_MODELS: dict = {}


def _one_game(job: dict) -> tuple[dict, list]:
    """One game of :func:`play`, played (or taken from its record) and corrected: its record and
    its rows."""
    specs, seat = job["specs"], job["seat"]
    rec = job["record"]
    if rec is None:
        for i, s in enumerate(specs):
            if (s, i) not in _AGENTS:
                _AGENTS[(s, i)] = make_agent(s)
        rec = play_game([_AGENTS[(s, i)] for i, s in enumerate(specs)], seed=job["seed"], dragons=job["dragons"])
        rec = {k: rec[k] for k in ("seed", "options", "actions")}
    model = job["model"]
    if isinstance(model, str):
        if model not in _MODELS:
            _MODELS[model] = ValueModel.load(model)
        model = _MODELS[model]
    rows = []
    for ahead in job["modes"]:
        replay = job["replay_search"] and ahead  # the replay plays in the look-ahead
        lk = luck.analyse(rec, specs, model, steps=job["steps"], ahead=ahead, reruns=job["reruns"],
                          deeper=job["deeper"], replay_search=replay, depth=job["depth"])
        row = {"a": job["a"], "b": job["b"], "players": job["players"], "ahead": ahead, "reruns": job["reruns"],
               "deeper": job["deeper"], "depth": job["depth"], "replay_search": replay,
               "replayed": all(v is None for v in lk.replayed.values()),
               "seed": job["seed"], "seat": seat, "raw": float(lk.rewards[seat]),
               "corrected": float(lk.corrected[seat]),
               "luck": {k: float(v[seat]) for k, v in lk.by_kind().items()}}
        if job["steps"]:
            left = defaultdict(float)
            for label, _, v in lk.steps:
                left[label] += float(v[seat])
            row["steps"] = dict(left)
        rows.append(row)
    return rec, rows


def _read_records(path) -> dict:
    """The games a ``--records`` file holds: (agents, seed, dragons) -> record."""
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return {r["game"]: r["record"] for r in map(json.loads, filter(str.strip, f))}


def summary(rows: list) -> dict:
    raw = np.array([r["raw"] for r in rows])
    cor = np.array([r["corrected"] for r in rows])
    n = len(rows)
    sd_raw, sd_cor = raw.std(ddof=1), cor.std(ddof=1)
    diff = raw - cor
    return {"games": n, "score": raw.mean(), "ci": Z95 * sd_raw / math.sqrt(n),
            "corrected": cor.mean(), "corrected_ci": Z95 * sd_cor / math.sqrt(n),
            "sd": sd_raw, "corrected_sd": sd_cor, "ratio": sd_cor / sd_raw if sd_raw else float("nan"),
            "needed": games_needed(sd_raw), "corrected_needed": games_needed(sd_cor),
            "correction": diff.mean(), "correction_ci": Z95 * diff.std(ddof=1) / math.sqrt(n)}


def report(rows: list, steps: bool) -> str:
    groups = defaultdict(list)
    for r in rows:
        groups[(r["a"], r["b"], r["players"], *_way(r))].append(r)
    lines = ["| pairing | players | games | score (raw) | corrected | SD raw | SD corrected | ratio | "
             "games for +-3 points: raw | corrected |", "|---|---|---|---|---|---|---|---|---|---|"]
    details = []
    for (a, b, n, ahead, reruns, deeper, depth, replayed), rs in groups.items():
        s = summary(rs)
        b += _how(ahead, reruns, deeper, depth, replayed)
        lines.append(f"| {a} vs {b} | {n} | {s['games']:,} | {s['score']:+.3f} +- {s['ci']:.3f} | "
                     f"{s['corrected']:+.3f} +- {s['corrected_ci']:.3f} | {s['sd']:.3f} | "
                     f"{s['corrected_sd']:.3f} | **{s['ratio']:.2f}** | {s['needed']:,} | "
                     f"{s['corrected_needed']:,} |")
        details.append(f"{a} vs {b}, {n} players: mean correction {s['correction']:+.4f} +- "
                       f"{s['correction_ci']:.4f} (95%): "
                       + ("consistent with zero" if abs(s['correction']) <= s['correction_ci'] else
                          "NOT within its interval of zero"))
        if replayed:
            details.append(f"  the replayed search bot took every recorded action in "
                           f"{sum(r.get('replayed', False) for r in rs):,} of {len(rs):,} games")
        luck_sd = _sds([r["luck"] for r in rs], len(rs))
        details.append("  luck taken out, SD per game by kind of event: "
                       + ", ".join(f"{k} {v:.3f}" for k, v in luck_sd))
        if steps and all("steps" in r for r in rs):
            left = _sds([r["steps"] for r in rs], len(rs))
            details.append("  left after correction, SD per game by kind of step: "
                           + ", ".join(f"{k} {v:.3f}" for k, v in left if v >= 0.005))
    return "\n".join(lines + [""] + details)


def _way(r: dict) -> tuple:
    """How a row was corrected: (ahead, reruns, deeper, depth, replay_search)."""
    return (r.get("ahead", False), r.get("reruns", 0), r.get("deeper", 0), r.get("depth", 1),
            r.get("replay_search", False))


def _how(ahead, reruns, deeper, depth, replayed) -> str:
    """The words a report adds to a pairing for the way its games were corrected."""
    out = "" if ahead else " (valued where it stands)"
    if reruns:
        out += f" (search decisions corrected, {reruns} reruns)"
    if deeper:
        out += f" ({'one event' if depth == 1 else f'{depth} events'} deeper, weight {deeper:g})"
    if replayed:
        out += " (search replayed)"
    return out


def compare(first: list, second: list, resamples: int = 4000) -> str:
    """Two ``--out`` files' corrections of the same games, paired: per pairing, each way's SD
    ratio, the variance of the second's corrected score over the first's with its bootstrap 95%
    interval (games resampled, the same draws for both; seeded, so the figures repeat) and the two
    corrected scores' correlation. What docs/luck.md and docs/RESULTS.md give as "the variance is
    0.887 [0.847, 0.926] of ...". Raises ValueError where the files do not hold the same games."""
    tables = []
    for rows in (first, second):
        by: dict = defaultdict(dict)
        ways: dict = defaultdict(set)
        for r in rows:
            pairing = (r["a"], r["b"], r["players"])
            by[pairing][(r["seed"], r["seat"])] = r
            ways[pairing].add(_way(r))
        for pairing, w in ways.items():
            if len(w) > 1:
                raise ValueError(f"{pairing[0]} vs {pairing[1]}: a file holds {len(w)} ways of correcting "
                                 "these games; compare files of one way each")
        tables.append((by, ways))
    (one, ways1), (two, ways2) = tables
    lines = ["| pairing | players | games | ratio, first | ratio, second | variance, second / first "
             "(bootstrap 95%) | correlation |", "|---|---|---|---|---|---|---|"]
    rng = np.random.default_rng(0)
    for pairing in sorted(set(one) & set(two)):
        keys = sorted(set(one[pairing]) & set(two[pairing]))
        if len(keys) < 2:
            continue
        raw = np.array([one[pairing][k]["raw"] for k in keys])
        if not np.array_equal(raw, [two[pairing][k]["raw"] for k in keys]):
            raise ValueError(f"{pairing[0]} vs {pairing[1]}: the same seeds and seats have other raw scores "
                             "in the two files: not the same games")
        x = np.array([one[pairing][k]["corrected"] for k in keys])
        y = np.array([two[pairing][k]["corrected"] for k in keys])
        idx = rng.integers(0, len(keys), (resamples, len(keys)))
        boot = y[idx].var(axis=1, ddof=1) / x[idx].var(axis=1, ddof=1)
        sd = raw.std(ddof=1) or float("nan")  # games all won, say: no ratio
        a, b, n = pairing
        first_how, second_how = (_how(*next(iter(w[pairing]))).strip(" ()").replace(") (", ", ") or "plain"
                                 for w in (ways1, ways2))
        lines.append(f"| {a} vs {b}: {first_how}, then {second_how} | {n} | {len(keys):,} | {x.std(ddof=1) / sd:.3f} | "
                     f"{y.std(ddof=1) / sd:.3f} | **{y.var(ddof=1) / x.var(ddof=1):.3f}** "
                     f"[{np.quantile(boot, 0.025):.3f}, {np.quantile(boot, 0.975):.3f}] | "
                     f"{np.corrcoef(x, y)[0, 1]:.3f} |")
    if len(lines) == 2:
        raise ValueError("the two files share no pairing's games")
    return "\n".join(lines)


def _sds(dicts: list, n: int) -> list:
    keys = sorted({k for d in dicts for k in d})
    out = [(k, float(np.std([d.get(k, 0.0) for d in dicts], ddof=1))) for k in keys]
    return sorted(out, key=lambda kv: -kv[1])


def _rows(ap, path: str) -> list:
    """The rows of an ``--out`` file, or the parser's error saying why not."""
    try:
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        for r in rows:
            missing = [k for k in ("a", "b", "players", "seed", "seat", "raw", "corrected") if k not in r]
            if missing:
                raise KeyError(missing[0])
    except OSError as e:
        ap.error(f"cannot read {path!r}: {e.strerror or e}")
    except (ValueError, TypeError, KeyError) as e:
        ap.error(f"{path!r} is not a file of luck_gain.py --out rows ({type(e).__name__}: {e})")
    return rows


def check_seeds(seed: int, games: int, model=None) -> None:
    meta = (model or luck.default_model()).meta
    lo, hi = meta.get("seeds", (0, 0))
    if seed < hi and lo < seed + games:
        raise SystemExit(f"luck_gain.py: seeds {seed}..{seed + games - 1} overlap the value function's "
                         f"fitting seeds {lo}..{hi - 1}; choose another --seed")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pair", nargs=2, action="append", metavar=("A", "B"), help="agent specs")
    ap.add_argument("--check", action="store_true", help="heuristic vs random, unbiasedness check")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--skip", type=int, default=0, metavar="K",
                    help="start at game K of the sequence from --seed (a piece of a longer measurement)")
    ap.add_argument("--seed", type=int, default=1_000_000)
    ap.add_argument("--steps", action="store_true", help="where the variance left comes from")
    ap.add_argument("--where-it-stands", action="store_true",
                    help="value each position where it stands, not where the known policies lead "
                         "(the estimator without evaluation.luck.lookahead)")
    ap.add_argument("--both", action="store_true", help="report both ways, on the same games")
    ap.add_argument("--value", metavar="PATH", help="the value function (a .safetensors with its .json; "
                                                    "default: the shipped one)")
    ap.add_argument("--reruns", type=int, default=0, metavar="K",
                    help="correct the search bot's decisions too, its expectation estimated by asking "
                         "it again K times with independent draws (K searches per decision)")
    ap.add_argument("--replay-search", action="store_true",
                    help="look through the search bot's decisions with the bot itself, replayed from its seed")
    ap.add_argument("--deeper", type=float, default=0.0, metavar="W",
                    help="weight (0 to 1) of the value's expectation one chance event further on "
                         "(several times the time)")
    ap.add_argument("--depth", type=int, default=1, metavar="K",
                    help="with --deeper: take the mix again at each outcome of the next event, K events "
                         f"deep (1 to {luck.MAX_DEPTH}; fifteen to twenty times the time again for each)")
    ap.add_argument("--records", metavar="PATH", help="keep the games played here (JSON lines) and replay "
                                                      "the ones it holds instead of playing them again")
    ap.add_argument("--workers", type=int, default=1, metavar="N",
                    help="processes playing and correcting the games (default 1; the rows are the same)")
    ap.add_argument("--out", help="append one JSON line per game here")
    ap.add_argument("--summarise", metavar="PATH", help="report the games of a --out file")
    ap.add_argument("--compare", nargs=2, metavar=("FIRST", "SECOND"),
                    help="two --out files' corrections of the same games, paired (variance of the second's "
                         "over the first's, bootstrap 95%%)")
    args = ap.parse_args(argv)
    if args.summarise:
        print(report(_rows(ap, args.summarise), steps=True))
        return 0
    if args.compare:
        try:
            print(compare(*(_rows(ap, path) for path in args.compare)))
        except ValueError as e:
            ap.error(str(e))
        return 0
    pairs = [tuple(p) for p in args.pair or []]
    if args.check:
        pairs.append(("heuristic", "random"))
    if not pairs:
        ap.error("give --pair A B (repeatable), --check or --summarise PATH")
    if args.games < 2:
        ap.error("--games must be at least 2")
    if args.skip < 0:
        ap.error("--skip must be 0 or more")
    if args.reruns < 0:
        ap.error("--reruns must be 0 or more")
    if args.workers < 1:
        ap.error("--workers must be at least 1")
    problem = luck.deeper_problem(args.deeper, args.depth)
    if problem:
        ap.error("--" + problem)
    try:
        model = ValueModel.load(args.value) if args.value else None
    except ModelFileError as e:
        ap.error(str(e))
    check_seeds(args.seed + args.skip, args.games, model)
    out = open(args.out, "a") if args.out else None
    rows = []
    try:
        for a, b in pairs:
            try:
                make_agent(a), make_agent(b)
            except AgentSpecError as e:
                print(f"{a} vs {b}: skipped ({e})")
                continue
            t = time.time()
            modes = (True, False) if args.both else (not args.where_it_stands,)
            rows += play(a, b, args.players, args.seed, args.games, args.steps, out, modes=modes, model=args.value,
                         reruns=args.reruns, records=args.records, deeper=args.deeper,
                         replay_search=args.replay_search, skip=args.skip, depth=args.depth,
                         workers=args.workers)
            print(f"{a} vs {b}: {args.games} games in {time.time() - t:.0f} s", file=sys.stderr)
    finally:
        if out is not None:
            out.close()
    if rows:
        print(report(rows, args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
