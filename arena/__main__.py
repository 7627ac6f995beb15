"""``python -m arena export|import``: the arena's games to and from the JSONL human ledger.

    python -m arena export --db sqlite:///results/arena.db [--out PATH]   (default: stdout)
    python -m arena export --db sqlite:///results/arena.db --tables DIR [--deeper W [--depth K] [--workers N]]
    python -m arena import --db sqlite:///results/arena.db LEDGER.jsonl

``--tables DIR`` writes the study's data for analysis instead (``arena/export.py``):
participants.csv, games.csv, decisions.csv, answers.csv and study.json. ``--deeper W`` takes the
luck correction's value one chance event further on (docs/luck.md, "One event deeper": narrower
per-participant intervals for some 0.1 CPU-seconds a game), and ``--depth 2`` two events deeper
(narrower still, for about 1.2 CPU-seconds a game of the search bot), the games corrected in
``--workers`` processes (default 2).

(``python evaluate.py --serve ...`` starts the server; see the package docstring.)
"""

from __future__ import annotations

import argparse
import sys

from havok_env.files import replaced

from evaluation.luck import MAX_DEPTH, deeper_problem

from . import DEFAULT_DB, SERVER_NEEDS, _have_extras


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m arena", description="Export or import the arena's JSONL ledger.")
    sub = p.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="write every finished game as a ledger line")
    ex.add_argument("--db", default=DEFAULT_DB)
    ex.add_argument("--out", metavar="PATH", help="file to write (default: standard output)")
    ex.add_argument("--tables", metavar="DIR", help="write the CSV tables and study.json to DIR instead")
    ex.add_argument("--deeper", type=float, default=0.0, metavar="W",
                    help="with --tables: the luck correction's weight (0 to 1) of the value one chance event "
                         "further on")
    ex.add_argument("--depth", type=int, default=1, metavar="K",
                    help=f"with --deeper: that many chance events further on (1 to {MAX_DEPTH}; about twenty "
                         "times the time for each)")
    ex.add_argument("--workers", type=int, default=2, metavar="N",
                    help="with --deeper: processes correcting the games (default 2)")
    ex.add_argument("--no-progress", action="store_true", help="with --deeper: no progress bar or lines")
    im = sub.add_parser("import", help="add a ledger's games (each line is replayed and checked)")
    im.add_argument("--db", default=DEFAULT_DB)
    im.add_argument("ledger", metavar="LEDGER.jsonl")
    args = p.parse_args(argv)
    if args.cmd == "export":
        problem = deeper_problem(args.deeper, args.depth)
        if problem:
            p.error("--" + problem)
        if args.deeper and not args.tables:
            p.error("--deeper applies to --tables (a ledger line keeps the replay, not a correction)")
        if args.workers < 1:
            p.error(f"--workers must be at least 1, not {args.workers}")
    if not _have_extras({k: v for k, v in SERVER_NEEDS.items() if k == "sqlalchemy"}):
        return 2
    from .ledger import export_text, import_text
    from .store import Store, StoreError

    try:
        store = Store(args.db)
    except StoreError as e:
        print(f"python -m arena: error: {e}", file=sys.stderr)
        return 2
    try:
        if args.cmd == "export" and args.tables:
            return _tables(store, args.tables, args.deeper, args.depth, args.workers, not args.no_progress)
        if args.cmd == "export":
            text = export_text(store)
            if args.out:
                with replaced(args.out, "w", encoding="utf-8") as f:  # whole or not at all
                    f.write(text)
            else:
                sys.stdout.write(text)
            return 0
        try:
            with open(args.ledger, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            print(f"python -m arena: error: cannot read {args.ledger!r}: {e.strerror or e}", file=sys.stderr)
            return 2
        r = import_text(store, text, args.ledger)
        print(f"{r['imported']} game(s) imported, {r['already_there']} already there, "
              f"{len(r['skipped'])} line(s) skipped")
        for msg in r["skipped"]:
            print(f"python -m arena: {msg}", file=sys.stderr)
        return 2 if r["skipped"] else 0
    finally:
        store.close()


def _tables(store, folder: str, deeper: float = 0.0, depth: int = 1, workers: int = 1,
            progress: bool = True) -> int:
    import json
    import os

    from . import export
    from .results import correct_finished
    from .study import Study

    stored = store.study()
    if stored is None:
        print(f"python -m arena: error: {store.url} holds no study", file=sys.stderr)
        return 2
    study = Study.from_dict(stored)
    correct_finished(store, deeper, depth, workers, progress)
    data = export.everything(store, study, deeper, depth)
    try:
        os.makedirs(folder, exist_ok=True)
        for name, (_, columns) in export.TABLES.items():
            with open(os.path.join(folder, f"{name}.csv"), "w", encoding="utf-8", newline="") as f:
                f.write(export.to_csv(data[name], columns))
        with open(os.path.join(folder, "study.json"), "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    except OSError as e:
        print(f"python -m arena: error: cannot write to {folder!r}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"{len(data['participants'])} participant(s), {len(data['games'])} game(s), "
          f"{len(data['decisions'])} decision(s), {len(data['answers'])} answer(s) written to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
