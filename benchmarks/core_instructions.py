"""Instructions per decision of the native core, counted by valgrind's callgrind.

    python benchmarks/core_instructions.py                       # 2,000 games at 2 and 4 players
    python benchmarks/core_instructions.py --games 500 --players 2 --python

Timings on a shared machine swing by a fifth from one run to the next; an instruction count does
not, so a change to the core can be judged by it. The figure for whole games is the one the
docs/RESULTS.md's throughput section quotes: games of uniformly random legal actions played inside the
core (``_core.random_playouts``, the benchmark's "whole games"), the deals included. With
``--python`` the benchmark's one-Python-call-per-decision loop (``Game()``, then
``apply`` and ``legal_actions`` at every decision) is counted too, and OpenSpiel's
``leduc_poker`` (2 players) driven the same way if ``pyspiel`` is installed.

Each figure is the difference between a run that plays the games and one that plays none,
divided by the decisions played, so that Python's start-up cancels out (``PYTHONHASHSEED=0`` keeps
the two start-ups alike, and one BLAS thread keeps numpy's idle threads out of the count). Needs
valgrind (``apt-get install -y valgrind``); 2,000 games at 2 and 4 players, with ``--python``, take
about three minutes.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

# the games each child plays: it prints the decisions taken
CHILD = {
    "core": """
import sys
from havok_env import _core
from havok_env.engine import Game, tables
n, games = int(sys.argv[1]), int(sys.argv[2])
core_tables = tables(Game(n, seed=0).cards).core  # built in both runs: only the games differ
print(_core.random_playouts(core_tables, n, games, 12345))
""",
    "python": """
import random, sys
from havok_env.engine import Game
n, games = int(sys.argv[1]), int(sys.argv[2])
Game(n, seed=0).legal_actions()  # the card set loaded and its tables built in both runs
rng, d = random.Random(0), 0
for _ in range(games):
    g = Game(n, seed=rng.getrandbits(31))
    legal = g.legal_actions()
    while legal:
        g.apply(legal[rng.randrange(len(legal))])
        legal = g.legal_actions()
        d += 1
print(d)
""",
    "leduc": """
import random, sys
import pyspiel
n, games = int(sys.argv[1]), int(sys.argv[2])
game = pyspiel.load_game("leduc_poker")  # 2 players, as benchmarks/throughput.py plays it
game.new_initial_state().legal_actions()
rng, d = random.Random(0), 0
for _ in range(games):
    st = game.new_initial_state()
    while not st.is_terminal():
        legal = st.legal_actions()
        st.apply_action(legal[rng.randrange(len(legal))])
        d += 1
print(d)
""",
}


def count(kind: str, players: int, games: int) -> tuple[int, int]:
    """(instructions, decisions) of one child run under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        # numpy's BLAS threads spin while the games run, and callgrind would count their spinning
        env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            sys.executable, "-c", CHILD[kind], str(players), str(games)],
                           capture_output=True, text=True, env=env)
        if p.returncode:
            raise SystemExit(f"core_instructions: the {kind} run failed:\n{p.stderr[-2000:]}")
        with open(out) as f:
            totals = [line for line in f if line.startswith("summary:")]
        return int(totals[0].split()[1]), int(p.stdout.split()[-1])


def per_decision(kind: str, players: int, games: int) -> tuple[float, int]:
    """Instructions per decision of ``games`` games, and the decisions they took."""
    base, _ = count(kind, players, 0)
    total, decisions = count(kind, players, games)
    return (total - base) / decisions, decisions


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--players", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--python", action="store_true",
                    help="also the one-Python-call-per-decision loop, and leduc_poker's")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error("--games must be at least 1")
    if shutil.which("valgrind") is None:
        raise SystemExit("core_instructions: needs valgrind (apt-get install -y valgrind)")
    kinds = ["core"]
    if args.python:
        kinds.append("python")
        try:
            import pyspiel  # noqa: F401
            kinds.append("leduc")
        except ImportError:
            print("(pyspiel not installed: pip install open_spiel for the leduc_poker loop)")
    names = {"core": "havok whole games in the core", "python": "havok Game.apply + legal_actions",
             "leduc": "leduc_poker apply_action + legal_actions"}
    print(f"{'loop':42} players  decisions  instructions/decision")
    for n in args.players:
        for kind in kinds:
            ir, decisions = per_decision(kind, n, args.games)
            print(f"{names[kind]:42} {n:7} {decisions:10,} {ir:22,.0f}")


if __name__ == "__main__":
    main()
