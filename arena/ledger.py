"""Export the arena's games to the project's JSONL human ledger, and import ledgers into the arena.

The format is the one ``evaluate.py`` writes for games played at the terminal (``human:NAME``
seats, the replay, the result), so ``evaluate.py --ledger FILE`` summarises an export, and games
played at a terminal can join a study's results. An imported line is replayed and must reproduce
its recorded result; the arena keeps games with one human seat (the others are skipped and
reported), and a line already imported is not imported twice.
"""

from __future__ import annotations

import json

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
        deal = Game(seed=g["seed"], **g["options"])
        out.append({
            "version": 1, "time": g["finished"], "seed": g["seed"], "options": g["options"],
            "actions": acts.get(g["id"], []), "seats": seats, "humans": [g["human_seat"]],
            "agents": [human, g["bot"]], "dragons": [deal.dragon(p).name for p in range(n)],
            "result": g["result"], "turns": g["turns"], "decisions": g["n_actions"],
            "arena": {"game": g["id"], "bot": g["bot"], "slot": g["slot"], "deal": g["deal"],
                      "study_seed": study.get("seed"), "source": g["source"]},
        })
    return out


def export_text(store) -> str:
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in export_entries(store))


def _human_name(spec: str) -> str:
    return str(spec).strip().partition(":")[2].strip() or "human"


def _check(e) -> tuple[int, str, list[tuple[int, int]], int]:
    """(human seat, bot label, (seat, action) moves, turns) of a valid line; else ValueError."""
    if not isinstance(e, dict):
        raise ValueError("not a JSON object")
    for key in ("seed", "options", "actions", "seats", "humans", "result"):
        if key not in e:
            raise ValueError(f"missing {key!r}")
    humans = e["humans"]
    if not isinstance(humans, list) or len(humans) != 1:
        raise ValueError(f"{len(humans) if isinstance(humans, list) else 'no'} human seats; "
                         "the arena keeps games with one")
    human = humans[0]
    n = e["options"]["num_players"]
    if len(e["seats"]) != n or not isinstance(human, int) or not 0 <= human < n:
        raise ValueError("seats and humans do not fit the table")
    g = Game(seed=e["seed"], **e["options"])
    moves = []
    for a in e["actions"]:
        moves.append((g.to_act, a))
        g.apply(a)
    if g.result is None:
        raise ValueError("the replay does not finish the game")
    if sorted(g.result["winners"]) != sorted(e["result"]["winners"]) \
            or list(g.result["scores"]) != list(e["result"]["scores"]):
        raise ValueError("the replay does not reproduce the recorded result")
    bots = sorted({str(s) for p, s in enumerate(e["seats"]) if p != human})
    return human, " + ".join(bots), moves, g.snapshot()["turn"]


def import_text(store, text: str, source: str = "ledger") -> dict:
    """Import every valid line of a JSONL ledger; returns counts and one message per skipped line."""
    acts = store.all_actions()
    done = {(g["participant_id"], g["seed"], tuple(acts.get(g["id"], []))) for g in store.games()}
    imported, skipped, repeated = 0, [], 0
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
            human, bot, moves, turns = _check(e)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
            why = (str(err).splitlines() or [type(err).__name__])[0][:160]
            skipped.append(f"{source}:{no}: skipped ({why})")
            continue
        name = " ".join(_human_name(e["seats"][human]).split())[:32] or "human"
        who = store.participant_by_name(name)
        if who is None:
            made = store.add_participant(name, False, "import")
            who = store.participant_by_name(name) if made is None else {"id": made[0]}
        key = (who["id"], e["seed"], tuple(e["actions"]))
        if key in done:
            repeated += 1
            continue
        store.import_game(who["id"], bot, e["seed"], e["options"], human, moves, e["result"],
                          turns, str(e.get("time") or ""))
        done.add(key)
        imported += 1
    return {"imported": imported, "already_there": repeated, "skipped": skipped}
