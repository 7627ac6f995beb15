"""Export the arena's games to the project's JSONL human ledger, and import ledgers into the arena.

The format is the ledger's (:mod:`evaluation.ledger`, its one writer and one checker), the one
written for games played at the terminal (``human:NAME`` seats, the replay, the result), so
``evaluate.py --ledger FILE`` summarises an export, and games played at a terminal can join a
study's results. An imported line is checked as ``evaluate.py --ledger`` checks it (its schema,
and its replay must reproduce its recorded result); the arena keeps games with one human seat (the
others are skipped and reported), a game against a bot the study does not have is refused, and a
game already held (the same seed and actions, under any player's name) is not imported twice.
"""

from __future__ import annotations

import json

from agents.human import human_name
from evaluation.ledger import check_ledger_entry, ledger_entry
from havok_env.engine import Game

from .results import pseudonyms


def export_entries(store) -> list[dict]:
    names = pseudonyms(store)
    acts = store.all_actions()
    study = store.study() or {}
    out = []
    for g in store.games(status="finished"):
        n = g["options"]["num_players"]
        human = f"human:{names.get(g['participant_id'], '?')}"
        seats = [human if p == g["human_seat"] else g["bot"] for p in range(n)]
        deal = Game(seed=g["seed"], **g["options"])  # the deal alone fixes the dragons
        record = {"seed": g["seed"], "options": g["options"], "actions": acts.get(g["id"], []),
                  "dragons": [deal.dragon(p).name for p in range(n)], "result": g["result"],
                  "turns": g["turns"], "decisions": g["n_actions"]}
        out.append(ledger_entry(
            record, seats=seats, humans=[g["human_seat"]], agents=[human, g["bot"]], time=g["finished"],
            arena={"game": g["id"], "bot": g["bot"], "slot": g["slot"], "deal": g["deal"],
                   "study_seed": study.get("seed"), "source": g["source"]}))
    return out


def export_text(store) -> str:
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in export_entries(store))


def _check(e) -> tuple[int, str, list[tuple[int, int]], int]:
    """(human seat, bot label, (seat, action) moves, turns) of a valid line; else ValueError
    (:class:`evaluation.ledger.LedgerLineError` for a line that is not a ledger entry)."""
    check_ledger_entry(e)
    humans = e["humans"]
    if len(humans) != 1:
        raise ValueError(f"{len(humans)} human seats; the arena keeps games with one")
    human = humans[0]
    moves = [(g.to_act, a) for g, a in Game.positions(e) if a is not None]
    bots = sorted({str(s) for p, s in enumerate(e["seats"]) if p != human})
    return human, " + ".join(bots), moves, e["turns"]


def import_text(store, text: str, source: str = "ledger") -> dict:
    """Import every valid line of a JSONL ledger; returns counts and one message per skipped line.

    A game's bot must be one of the study's bots (the results rank only those), and a game the
    database already holds (the same seed and actions, whoever is named as its player) is not
    imported again."""
    acts = store.all_actions()
    done = {(g["seed"], tuple(acts.get(g["id"], []))) for g in store.games(kind=None)}
    study = store.study() or {}
    bots = list(study.get("agents") or [])
    imported, skipped, repeated = 0, [], 0
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
            human, bot, moves, turns = _check(e)
            if bots and bot not in bots:
                raise ValueError(f"bot {bot!r} is not one of this study's ({', '.join(bots)})")
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
            why = (str(err).splitlines() or [type(err).__name__])[0][:160]
            skipped.append(f"{source}:{no}: skipped ({why})")
            continue
        key = (e["seed"], tuple(e["actions"]))
        if key in done:
            repeated += 1
            continue
        name = " ".join(human_name(e["seats"][human]).split())[:32] or "human"
        who = store.participant_by_name(name)
        if who is None:
            made = store.add_participant(name, False, "import")
            who = store.participant_by_name(name) if made is None else {"id": made[0]}
        store.import_game(who["id"], bot, e["seed"], e["options"], human, moves, e["result"],
                          turns, str(e.get("time") or ""))
        done.add(key)
        imported += 1
    return {"imported": imported, "already_there": repeated, "skipped": skipped}
