"""Behaviour fingerprint: digests of seeded games, bot decisions and evaluation figures.

A refactor that must not change behaviour (the agents, the game loops, the evaluations) is checked
by writing the fingerprint before and comparing after::

    python benchmarks/fingerprint.py --write before.json   # before
    python benchmarks/fingerprint.py --check before.json   # after

Each entry is the SHA-256 of one part's results, made only from what a user can see: the actions
and results of seeded bot games (``agents.runner.play_game``), the search bot's value estimates,
the tournament figures of ``evaluate.py``, the balance and luck-cap benchmarks' outputs,
train.py's evaluation and the imitation-learning data. ``--quick`` plays fewer games (the test
suite's check, tests/test_fingerprint.py, stored in tests/data/fingerprint.json); the full run
takes a few minutes. A file keeps one fingerprint of each kind.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from agents import make_agent  # noqa: E402
from agents.runner import play_game  # noqa: E402
from havok_env import Game  # noqa: E402
from havok_env.files import replaced  # noqa: E402


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=_plain).encode()).hexdigest()


def _plain(x):
    if isinstance(x, np.ndarray):
        return hashlib.sha256(np.ascontiguousarray(x).tobytes() + str(x.dtype).encode()
                              + str(x.shape).encode()).hexdigest()
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"cannot fingerprint {type(x).__name__}")


PAIRINGS = [("random", "random"), ("heuristic", "random"), ("heuristic", "heuristic"),
            ("search:2", "heuristic")]


def bot_games(games: int) -> dict:
    out = {}
    for specs in PAIRINGS:
        for n in (2, 3, 4):
            recs = []
            for g in range(games):
                table = [make_agent(specs[(g + i) % 2]) for i in range(n)]
                rec = play_game(table, seed=17_000 + g)
                recs.append([rec["actions"], rec["result"], rec["rewards"], rec["dragons"]])
            out[f"games {'/'.join(specs)} {n}p"] = _digest(recs)
    return out


def search_values(games: int) -> dict:
    from havok_env.observe import Observer
    from havok_env.view import SeatView
    values = []
    # its own loop, with seeds of its own, rather than agents.runner.play_game: the fingerprint
    # checks the runner instead of resting on it
    for g in range(games):
        game = Game(2, seed=23_000 + g)
        obs = Observer(game.cards)
        agents = [make_agent("search:3"), make_agent("heuristic")]
        for i, a in enumerate(agents):
            a.reset(i, 2, seed=g * 7 + i)
        while not game.is_over:
            p = game.to_act
            o, m = obs.observe(game, p)
            a = agents[p].act(o, m, SeatView(game, p))
            if p == 0:
                values.append(sorted(agents[0].action_values().items()))
            game.apply(a)
    return {"search action values": _digest(values)}


def tournament(games: int) -> dict:
    from evaluation.tournament import run_tournament
    rep = run_tournament(["heuristic", "random", "search:2"], num_players=2, games=games, seed=5,
                         workers=1, progress=False, ledger=None)
    rows = [[r["spec"], r["games"], r["wins"], r["draws"], r["losses"], r["mean_hoard"],
             r["mean_turns"], r["openskill"]] for r in rep["agents"]]
    return {"evaluate.py tournament": _digest([rows, rep["head_to_head"], rep["seats"]])}


def _stdout_of(fn, argv) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):  # not its progress
        fn(argv)
    text = re.sub(r" in \d+s|\(\d+ s\)", "", buf.getvalue())  # wall times vary
    # the luck-corrected score added to train.py's lines is checked by tests/test_luck.py and
    # test_train.py; what was fingerprinted before it stays as it was
    return re.sub(r"corrected score [-+]\d\.\d+ \+- \d\.\d+ ", "", text)


def benchmarks(games: int) -> dict:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import balance
    import luck_cap
    return {
        "balance.py": _digest(_stdout_of(balance.main, ["--games", str(4 * games), "--players", "2",
                                                        "3", "4", "--jobs", "1"])),
        "luck_cap.py": _digest(_stdout_of(luck_cap.main, ["--games", str(games), "--budget", "3",
                                                          "--workers", "1"])),
    }


def training(games: int) -> dict:
    from training.imitation import collect
    from training.winrate import evaluate
    data = collect("fire", 2, games, opponents=("heuristic", "random"), teacher="search:2",
                   seed=11, workers=1)
    out = {"imitation data": _digest({k: data[k] for k in sorted(data)})}
    r = evaluate(make_agent("heuristic"), "random", "fire", 2, 2 * games, seed=31)
    luck = ("score", "score_ci95", "corrected_score", "corrected_ci95")  # see _stdout_of
    out["train.py evaluation"] = _digest({k: v for k, v in r.items() if k not in luck})
    return out


def fingerprint(quick: bool) -> dict:
    g = 4 if quick else 40
    fp = {}
    for part in (bot_games, search_values, tournament, benchmarks, training):
        fp.update(part(g))
    return fp


def _fail(msg: str) -> int:
    print(f"fingerprint.py: {msg}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", metavar="PATH", help="write the fingerprint to PATH")
    what.add_argument("--check", metavar="PATH", help="compare with the fingerprint in PATH")
    p.add_argument("--quick", action="store_true", help="fewer games (the test suite's check)")
    a = p.parse_args(argv)
    key = "quick" if a.quick else "full"
    want = None
    if a.check:  # before minutes of games: a file to compare with that has this kind of fingerprint
        try:
            with open(a.check) as f:
                want = json.load(f)[key]
            if not isinstance(want, dict):
                raise TypeError
        except OSError as e:
            return _fail(f"cannot read {a.check}: {e.strerror or e}")
        except (ValueError, TypeError):
            return _fail(f"{a.check} is not a fingerprint file (JSON written by --write)")
        except KeyError:
            other = "--quick " if key == "full" else "without --quick "
            return _fail(f"{a.check} has no {key} fingerprint: check {other}or write one with --write")
    fp = fingerprint(a.quick)
    if a.write:
        stored = {}
        if os.path.exists(a.write):
            with open(a.write) as f:
                stored = json.load(f)
        stored[key] = fp
        with replaced(a.write) as f:  # the other fingerprints in it survive an interrupt
            json.dump(stored, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote the {key} fingerprint ({len(fp)} parts) to {a.write}")
        return 0
    bad = sorted(k for k in set(want) | set(fp) if want.get(k) != fp.get(k))
    for k in bad:
        print(f"differs: {k}")
    print(f"{len(fp) - len(bad)} of {len(fp)} parts match the {key} fingerprint")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
