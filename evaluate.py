"""Tournaments between bots, trained agents and people, and the human benchmark ledger.

    python evaluate.py --agents heuristic random [--players N] [--games G] [--seed S]
                       [--workers W] [--json PATH] [--csv PATH] [--plot PATH.png] [--ledger PATH]
                       [--dragons ENTRY ...] [--allow-off-training]
    python evaluate.py --ledger results/human_games.jsonl [--json PATH] [--deeper W [--depth K]]
    python evaluate.py --serve --study study.toml [--host H] [--port P] [--db sqlite:///results/arena.db]
    python evaluate.py --serve --agents heuristic search [--players N] [--host H] [--port P]
                       [--db sqlite:///results/arena.db] [--games-per-person N] [--consent FILE]
    python evaluate.py --ledger sqlite:///results/arena.db [--json PATH] [--deeper W [--depth K]]

``--serve`` starts the arena (the ``arena`` package: people play the bots in a browser) and
``--ledger`` with a database URL summarises its study.

Agent specs: ``random``, ``heuristic``, ``search``, ``search:BUDGET`` or
``search:BUDGET:heuristic-picks``, ``pretrained:NAME`` (a model the package ships:
``pretrained:fire``), the path of a saved model (``models/fire.safetensors`` or its ``.json``),
``rllib:CHECKPOINT`` (the policy of a ``train_rllib.py`` checkpoint), and ``human`` or
``human:NAME`` (a person at this terminal).

Fairness by construction
  * A *deal* is one game seed. Every deal is played once per table (each combination of ``--players``
    agents out of ``--agents``; all of them when there are more agents than seats) and, at each
    table, once per rotation of the agents over the seats. With the dragons fixed per seat for the
    deal, the same seed deals the same shuffles (Havok deck, Hijinks deck, hands, first player) in
    every rotation, so each agent plays every seat, dragon and hand of the deal: duplicate play
    cancels the luck of the deal.
  * Who sits to whose left changes from deal to deal too: the cyclic seating orders of a table
    take turns, so no agent always plays just after the same opponent.
  * The dragons per seat rotate from deal to deal (every dragon in every seat once per 4 deals, and
    every cyclic order of the four dragons once per 24; with D dragons in the card set, once per D
    and D! deals).

Which dragon plays
  * A trained model plays the dragon it was trained for (its ``meta``), and is refused at another
    player count than its own. ``--dragons`` fixes dragons per agent (``models/fire.safetensors=fire
    heuristic=darkness``; ``SPEC=any`` lets an agent rotate) or per seat (one dragon or ``any``
    per seat). Playing a model off its training needs ``--allow-off-training``; the report flags
    each such agent and counts its games off training.
  * A fixed agent keeps its dragon in every seat of the rotation (its dragon moves with it, the
    shuffles stay the same); at its table the other agents rotate over the dragons nobody fixed,
    so that over 24 deals each plays each of them equally often. Without fixed dragons everything
    is as above (dragons by seat within a deal).
  * Two agents fixed to one dragon would meet at some table (every combination plays): refused.
  * The table and the CSV give each agent's dragon and its win rate per dragon.
  * ``--games`` is the total number of games, rounded up to whole deals.
  * Games run in parallel (``--workers``, default 2) and are sorted back into a fixed order (deal,
    table, rotation) before any statistic is computed, so the same seed gives the same output whatever
    the number of workers. A ``human`` forces one worker and in-process play.

Statistics per agent: games, wins (sole winner), draws (tied for the highest hoard), losses, the
win rate with its 95% Wilson interval, the mean final hoard and the mean game length in turns, and
an OpenSkill (Plackett-Luce) rating updated game by game in the fixed order, ranking the game's
winners above everybody else (the game's own reward: second place is worth nothing). The
head-to-head matrix gives, for each pair, the row agent's win rate in the games where the column
agent sat at the table. The interval treats games as independent; duplicate games are positively
paired, which makes it, if anything, conservative for comparisons.

Each agent also gets its score (mean reward: +1 a sole win, 0 a shared win, -1 a loss) and its
luck-corrected score, each with a 95% interval (``score``, ``score_ci95``, ``corrected_score``,
``corrected_ci95``): every game is replayed by the AIVAT estimator of :mod:`evaluation.luck`, which
takes the luck of the cards, the contests and the random bot's choices out of each seat's reward
without changing its expectation (docs/luck.md). Each pair of agents gets its paired difference
over the deals both played (each agent's mean on the deal, one difference per deal), raw and
corrected, with the interval of that paired difference (``paired``). The ledger summaries give
each human's score both ways (a person's own decisions are never corrected); ``--deeper W`` takes
the value in the correction one chance event further on, with weight W (0.7 narrows the intervals
most, docs/luck.md, "One event deeper"; some 0.1 CPU-seconds a game), ``--depth 2`` takes it
two events further on (narrower still; about 1.2 CPU-seconds a game of the search bot) and
``--depth 3`` three (about 18), the games shared out over ``--workers`` processes.

Every game with a human is appended to the ledger (default ``results/human_games.jsonl``) as one
JSON line: the replay (seed, options, actions), the seats, the agents and the result. Without
``--agents``, ``--ledger PATH`` replays and checks each line and summarises each human against each
bot and trained agent. Each line is appended whole in one write and synced, so a crash can only
tear the last line. Reading checks every field of every line against a schema (see
:func:`evaluation.ledger.check_ledger_entry`: seats, humans, turns, result, agents, the replay): a bad line, hostile,
corrupt or torn, is skipped and reported with its number and the reason, and costs nothing else
(exit code 2 once the rest is summarised). No seat counts twice, and ``true`` is no seat number.

Progress goes to standard error: a bar with the time left on a terminal, otherwise a plain line as
the games start, then at every tenth of them and at least once a minute, with the time left
(``--no-progress``: none). An interrupt (Ctrl-C, SIGTERM) ends a tournament with the report of the
games finished so far, marked as interrupted; its ``--json``, ``--csv`` and ``--plot`` files get
``.partial`` before their extension (``r.partial.json``), then ``evaluate.py: interrupted`` and
exit code 130. A second interrupt ends it at once; every output file is written whole or not at
all (:func:`havok_env.files.replaced`), so it can leave no torn file.
"""

from __future__ import annotations

import os

# before numpy loads: its BLAS threads spin between small matrix products (train.py)
if __name__ == "__main__":  # a program of its own (importing it leaves the environment alone)
    # first of all: an interrupt from here on ends the run in one line (training/parallel.py)
    from training.parallel import handle_interrupts
    handle_interrupts("evaluate.py", starting=True)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import secrets
import sys

from agents.human import is_human
from evaluation import EvalError
from evaluation.luck import MAX_DEPTH, correcting, deeper_problem
from evaluation.ledger import DEFAULT_LEDGER, format_ledger, read_ledger, summarise_ledger
from evaluation.report import format_report, plot_head_to_head, write_csv, write_json
from evaluation.tournament import DEFAULT_GAMES, run_tournament
from havok_env.cards import CardDataError
from havok_env.constants import MAX_PLAYERS, MIN_PLAYERS
from training.parallel import handle_interrupts


def require_extras(args) -> None:
    """Name the missing packages of the eval extra before any game is played."""
    from agents.extras import missing
    from agents.policy import is_model_spec
    needs = {}
    if args.agents:
        needs["openskill"] = "the report's ratings"
        if any(is_model_spec(s) for s in args.agents):
            needs["safetensors"] = "loading models"
    if args.plot:
        needs["matplotlib"] = "--plot"
    msg = missing(needs, "eval")
    if msg:
        raise EvalError(msg)


def _partial(path: str | None, rep: dict) -> str | None:
    """Where an output goes: a tournament that did not finish writes ``r.partial.json`` for
    ``--json r.json``, so that its results are never taken for, nor written over, a whole one's."""
    if not path or not rep.get("interrupted"):
        return path
    root, ext = os.path.splitext(path)
    return f"{root}.partial{ext}"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="evaluate.py",
        description="Tournaments between bots, trained agents and humans; the human benchmark ledger.",
        epilog="Agent specs: random, heuristic, search, search:BUDGET[:heuristic-picks], "
               "search:[BUDGET]:guide=MODEL, pretrained:NAME, "
               "a saved model path (.safetensors or .json), rllib:CHECKPOINT, "
               "human or human:NAME. Without --agents, "
               "--ledger PATH summarises the "
               "human games. Dragons: an agent with a fixed dragon keeps it in every seat of the "
               "seat rotation (same shuffles every rotation: duplicate deals stay); at its table "
               "the other agents rotate over the dragons nobody fixed, each playing each of them "
               "equally often over 24 deals (with the four dragons); with nothing fixed the dragons "
               "stay by seat within a "
               "deal and rotate between deals.")
    p.add_argument("--agents", nargs="+", metavar="SPEC", help="the agents of the tournament")
    p.add_argument("--players", type=int,
                   help=f"seats per game ({MIN_PLAYERS}-{MAX_PLAYERS}; default: the number of agents)")
    p.add_argument("--games", type=int,
                   help=f"total games, rounded up to whole deals (default {DEFAULT_GAMES}; "
                        "with a human: one deal)")
    p.add_argument("--seed", type=int, help="tournament seed (default: random, printed)")
    p.add_argument("--workers", type=int, default=2,
                   help="parallel processes (default 2): the games of a tournament, or a ledger's luck "
                        "corrections with --deeper")
    p.add_argument("--json", metavar="PATH", help="write the report as JSON")
    p.add_argument("--csv", metavar="PATH", help="write the per-agent table as CSV")
    p.add_argument("--plot", metavar="PATH.png", help="draw the head-to-head win-rate matrix")
    p.add_argument("--ledger", metavar="PATH",
                   help=f"human games ledger (default {DEFAULT_LEDGER}); alone: summarise it")
    p.add_argument("--deeper", type=float, default=0.0, metavar="W",
                   help="summarising a ledger: the luck correction's weight (0 to 1) of the value one chance "
                        "event further on (docs/luck.md; several times the time of a correction)")
    p.add_argument("--depth", type=int, default=1, metavar="K",
                   help=f"with --deeper: that many chance events further on (1 to {MAX_DEPTH}; about twenty "
                        "times the time for each)")
    p.add_argument("--dragons", nargs="+", metavar="ENTRY",
                   help="fix dragons per agent (SPEC=DRAGON, e.g. pretrained:fire=fire heuristic=darkness; "
                        "SPEC=any lets it rotate) or per seat (one DRAGON or any per seat, e.g. fire "
                        "darkness). By default a trained model plays the dragon it was trained for and "
                        "the other agents rotate over the remaining dragons")
    p.add_argument("--allow-off-training", action="store_true",
                   help="let a trained model play a dragon or a player count other than the ones it "
                        "was trained for (refused otherwise); its games off training are flagged in "
                        "the report")
    p.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines")
    arena = p.add_argument_group("arena (people play the --agents bots in a browser; pip install -e '.[arena]')")
    arena.add_argument("--serve", action="store_true", help="start the arena server")
    arena.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    arena.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    arena.add_argument("--db", metavar="URL", help="database (default sqlite:///results/arena.db; "
                                                   "or postgresql://...)")
    arena.add_argument("--games-per-person", type=int, metavar="N",
                       help="games each participant plays (default: one per bot)")
    arena.add_argument("--consent", metavar="FILE", help="the study's consent text (default: a generic one)")
    arena.add_argument("--study", metavar="FILE.toml", help="the study file (docs/studies.md); the other "
                                                             "arena options override its fields")
    return p


def main(argv: list[str] | None = None, stdin=None, stdout=None) -> int:
    out = stdout or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    problem = deeper_problem(args.deeper, args.depth)
    if problem:
        parser.error("--" + problem)
    if args.deeper and (args.agents or not args.ledger):
        parser.error("--deeper applies to a ledger's summary (--ledger PATH alone)")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, not {args.workers}")
    try:
        if args.serve:
            import arena
            return arena.serve(args.agents, players=args.players, host=args.host, port=args.port,
                               db=args.db, games_per_person=args.games_per_person,
                               consent=args.consent, seed=args.seed, out=out, study=args.study)
        if not args.agents and args.ledger and "://" in args.ledger:
            import arena
            return arena.ledger_summary(args.ledger, json_path=args.json, out=out, deeper=args.deeper,
                                        depth=args.depth, workers=args.workers,
                                        progress=not args.no_progress)
        require_extras(args)
        if not args.agents:
            if not args.ledger:
                raise EvalError("give --agents SPEC SPEC ... for a tournament, "
                                "or --ledger PATH to summarise human games")
            entries, problems = read_ledger(args.ledger)
            with correcting(len(entries), args.deeper, not args.no_progress) as bar:
                summary = summarise_ledger(entries, args.deeper, args.depth, args.workers, bar)
            out.write(format_ledger(summary, args.ledger, len(problems)) + "\n")
            if args.json:
                write_json({"ledger": args.ledger, **summary, "skipped": problems}, args.json)
            for msg in problems:
                print(f"evaluate.py: {msg}", file=sys.stderr)
            return 2 if problems else 0
        seed = args.seed if args.seed is not None else secrets.randbits(31)
        human_io = {}
        if stdin is not None:
            human_io["input"] = stdin
        if stdout is not None:
            human_io["output"] = stdout
        rep = run_tournament(args.agents, num_players=args.players, games=args.games, seed=seed,
                             workers=args.workers, progress=False if args.no_progress else None,
                             ledger=args.ledger or DEFAULT_LEDGER, human_io=human_io,
                             dragons=args.dragons, allow_off_training=args.allow_off_training)
        out.write(format_report(rep) + "\n")
        if any(is_human(a) for a in args.agents) and rep["config"]["games"]:
            out.write(f"Games with a human are recorded in the ledger {args.ledger or DEFAULT_LEDGER}.\n")
        if args.seed is None:
            out.write(f"(pass --seed {seed} to reproduce)\n")
        written = [_partial(path, rep) for path in (args.json, args.csv, args.plot)]
        for path, write in zip(written, (write_json, write_csv, plot_head_to_head)):
            if path:
                write(rep, path)
        if rep.get("interrupted") and any(written):
            out.write(f"The finished games' results: {', '.join(p for p in written if p)}.\n")
        if rep.get("interrupted") == "interrupted":
            out.flush()
            print("evaluate.py: interrupted", file=sys.stderr)
            return 130
        return 0
    except (EvalError, CardDataError) as e:
        print(f"evaluate.py: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evaluate.py: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    handle_interrupts()
    sys.exit(main())
