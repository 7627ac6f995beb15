"""The study's data for a paper: one table per thing, as CSV (``to_csv``) or all together as JSON.

* ``participants``: one row per participant: the recruitment id and the link's other parameters,
  consent (when, which version), completion, attention checks passed, and the person's score over
  the scored games, raw and luck corrected, each with its 95% interval.
* ``games``: one row per game, practice and tutorial included (``kind`` says which; only
  ``game`` rows count in the results).
* ``decisions``: one row per decision of every game, the bots' too: who decided, the decision's
  purpose and number of choices, the action and its label, when the decision was shown (the
  server's time it was sent; a bot's: when the move before it was stored), when it was answered
  (stored), the server's response time between the two and, for a person's decisions, the time
  the page showed the buttons before the click (``think_ms``, measured in the browser). Where the
  bot is a trained policy, its probability of each legal action (``bot_policy``, a softmax of its
  logits over the legal actions, recomputed from the replayed observation) and of the one it took
  (``bot_probability``); search and rule-based bots have none.
* ``answers``: one row per questionnaire answer, with the attention check's expected answer and
  whether it was given.

Times are ISO 8601 in UTC with milliseconds. The JSONL human ledger (``arena/ledger.py``) is the
other export: it replays and imports.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
from itertools import groupby

import numpy as np

from havok_env.engine import Game
from havok_env.observe import Observer
from havok_env.render import choice_label
from havok_env.view import SeatView
from evaluation.results import OUTCOME_REWARD
from training.stats import mean_ci

from .results import human_luck, outcome
from .study import Study, opponent_names

PARTICIPANT_COLUMNS = [
    "participant_id", "pseudonym", "external_id", "params", "source", "created", "consented",
    "consent_version", "completed", "completion_code", "tutorial_games", "practice_games",
    "games", "wins", "draws", "losses", "score", "score_ci_low", "score_ci_high",
    "corrected_score", "corrected_ci_low", "corrected_ci_high", "attention_checks", "attention_passed"]
GAME_COLUMNS = [
    "game", "kind", "participant_id", "pseudonym", "external_id", "bot", "opponent", "players",
    "seat", "deal", "seed", "dragon", "dragons", "status", "outcome", "reward", "corrected", "scores",
    "turns", "decisions", "human_decisions", "created", "finished", "source"]
DECISION_COLUMNS = [
    "game", "kind", "participant_id", "external_id", "bot", "index", "seat", "who", "purpose",
    "choices", "action", "label", "shown", "answered", "response_ms", "think_ms", "bot_probability",
    "bot_policy"]
ANSWER_COLUMNS = [
    "participant_id", "pseudonym", "external_id", "stage", "game", "opponent", "bot", "question",
    "text", "type", "answer", "attention_check", "passed", "at"]


def _ms(a: str | None, b: str | None) -> int | None:
    if not a or not b:
        return None
    t = _dt.datetime.fromisoformat
    return round((t(b) - t(a)).total_seconds() * 1000)


def _by_participant(store) -> dict[int, dict]:
    return {p["id"]: p for p in store.all_participants()}


def _names(store, study: Study) -> dict[int, dict[str, str]]:
    """participant -> bot -> the name the participant knew the bot by."""
    per: dict[int, list[dict]] = {}
    for g in store.games():
        per.setdefault(g["participant_id"], []).append(g)
    return {pid: opponent_names(study, gs) for pid, gs in per.items()}


def game_rows(store, study: Study, deeper: float = 0.0, depth: int = 1) -> list[dict]:
    people, names = _by_participant(store), _names(store, study)
    acts = store.all_actions()
    human_moves: dict[int, int] = {}
    for d in store.decisions():
        if d["shown"] is not None or d["think_ms"] is not None:
            human_moves[d["game_id"]] = human_moves.get(d["game_id"], 0) + 1
    rows = []
    for g in store.games(kind=None):
        p = people.get(g["participant_id"], {})
        n = g["options"]["num_players"]
        deal = Game(seed=g["seed"], **g["options"])  # the deal alone fixes the dragons
        r = g["result"]
        row = {"game": g["id"], "kind": g["kind"], "participant_id": g["participant_id"],
               "pseudonym": p.get("pseudonym"), "external_id": p.get("external_id"), "bot": g["bot"],
               "opponent": names.get(g["participant_id"], {}).get(g["bot"]) if g["kind"] == "game" else None,
               "players": n, "seat": g["human_seat"], "deal": g["deal"], "seed": g["seed"],
               "dragon": deal.dragon(g["human_seat"]).name,
               "dragons": " / ".join(deal.dragon(s).name for s in range(n)), "status": g["status"],
               "outcome": None, "reward": None, "corrected": None, "scores": None, "turns": g["turns"],
               "decisions": g["n_actions"], "human_decisions": human_moves.get(g["id"], 0),
               "created": g["created"], "finished": g["finished"], "source": g["source"]}
        if r is not None:
            o = outcome(r, g["human_seat"])
            row.update(outcome=o, reward=OUTCOME_REWARD[o],
                       scores=" / ".join(str(x) for x in r["scores"]))
            if g["kind"] == "game":
                row["corrected"] = human_luck(g, acts.get(g["id"], []), deeper, depth)
        rows.append(row)
    return rows


class _Policies:
    """The trained-policy bots of the export (built once each), and their action probabilities."""

    def __init__(self):
        self.agents: dict[str, object] = {}
        self.observers: dict[int, Observer] = {}

    def probabilities(self, spec: str, game: Game, seat: int) -> dict[int, float] | None:
        from agents import make_agent
        from agents.policy import is_model_spec

        if not is_model_spec(spec):
            return None
        if spec not in self.agents:
            self.agents[spec] = make_agent(spec)
        agent = self.agents[spec]
        observer = self.observers.setdefault(id(game.cards), Observer(game.cards))
        obs, mask = observer.observe(game, seat)
        legal = np.flatnonzero(mask)
        z = np.asarray(agent.logits(obs), dtype=np.float64)[legal]
        p = np.exp(z - z.max())
        p /= p.sum()
        return {int(a): round(float(x), 6) for a, x in zip(legal, p)}


def decision_rows(store, study: Study) -> list[dict]:
    people = _by_participant(store)
    games = {g["id"]: g for g in store.games(kind=None)}
    policies = _Policies()
    rows: list[dict] = []
    for gid, stored in groupby(store.decisions(), key=lambda d: d["game_id"]):  # in game order
        g = games.get(gid)
        if g is None:
            continue
        stored = list(stored)
        record = {"seed": g["seed"], "options": g["options"], "actions": [d["action"] for d in stored]}
        prev_at = g["created"]
        for (replay, _), d in zip(Game.positions(record), stored):
            seat = replay.to_act
            pending = replay.pending
            label = choice_label(SeatView(replay, seat), d["action"])
            human = seat == g["human_seat"]
            shown = (d["shown"] or prev_at) if human else prev_at
            probs = None if human else policies.probabilities(g["bot"], replay, seat)
            rows.append({"game": g["id"], "kind": g["kind"], "participant_id": g["participant_id"],
                         "external_id": people.get(g["participant_id"], {}).get("external_id"),
                         "bot": g["bot"], "index": d["idx"], "seat": seat, "who": "human" if human else "bot",
                         "purpose": pending["purpose"], "choices": len(pending["choices"]),
                         "action": d["action"], "label": label, "shown": shown, "answered": d["at"],
                         "response_ms": _ms(shown, d["at"]), "think_ms": d["think_ms"] if human else None,
                         "bot_probability": None if probs is None else probs.get(d["action"], 0.0),
                         "bot_policy": None if probs is None else json.dumps(probs, separators=(",", ":"))})
            prev_at = d["at"]
    return rows


def answer_rows(store, study: Study) -> list[dict]:
    people, names = _by_participant(store), _names(store, study)
    games = {g["id"]: g for g in store.games()}
    questions = {(stage, q["id"]): q for stage in study.questions for q in study.stage(stage)}
    rows = []
    for a in store.answers():
        p = people.get(a["participant_id"], {})
        q = questions.get((a["stage"], a["question"]), {})
        bot = games[a["game_id"]]["bot"] if a["game_id"] in games else None
        expect = q.get("expect")
        rows.append({"participant_id": a["participant_id"], "pseudonym": p.get("pseudonym"),
                     "external_id": p.get("external_id"), "stage": a["stage"],
                     "game": a["game_id"] or None,
                     "opponent": names.get(a["participant_id"], {}).get(bot) if bot else None,
                     "bot": bot, "question": a["question"], "text": q.get("text"), "type": q.get("type"),
                     "answer": a["answer"], "attention_check": expect,
                     "passed": None if expect is None else a["answer"] == expect, "at": a["at"]})
    return rows


def participant_rows(store, study: Study, games: list[dict] | None = None,
                     answers: list[dict] | None = None, deeper: float = 0.0, depth: int = 1) -> list[dict]:
    games = game_rows(store, study, deeper, depth) if games is None else games
    answers = answer_rows(store, study) if answers is None else answers
    rows = []
    for p in store.all_participants():
        mine = [g for g in games if g["participant_id"] == p["id"]]
        scored = [g for g in mine if g["kind"] == "game" and g["status"] == "finished"]
        checks = [a for a in answers if a["participant_id"] == p["id"] and a["attention_check"] is not None]
        row = {"participant_id": p["id"], "pseudonym": p["pseudonym"], "external_id": p["external_id"],
               "params": json.dumps(p["params"], sort_keys=True) if p["params"] else None,
               "source": p["source"], "created": p["created"], "consented": p["consented"],
               "consent_version": p["consent_version"], "completed": p["completed"],
               "completion_code": study.completion_code or None if p["completed"] else None,
               "tutorial_games": sum(g["kind"] == "tutorial" for g in mine),
               "practice_games": sum(g["kind"] == "practice" and g["status"] == "finished" for g in mine),
               "games": len(scored), "wins": sum(g["outcome"] == "win" for g in scored),
               "draws": sum(g["outcome"] == "draw" for g in scored),
               "losses": sum(g["outcome"] == "loss" for g in scored),
               "attention_checks": len(checks), "attention_passed": sum(bool(a["passed"]) for a in checks)}
        for key, values in (("score", [g["reward"] for g in scored]),
                            ("corrected", [g["corrected"] for g in scored])):
            name = "score" if key == "score" else "corrected_score"
            ci = "score_ci" if key == "score" else "corrected_ci"
            row[name] = row[f"{ci}_low"] = row[f"{ci}_high"] = None
            if values and all(v is not None for v in values):
                m, (lo, hi) = mean_ci(values)
                row[name] = m
                if len(values) >= 2:  # one game has no interval
                    row[f"{ci}_low"], row[f"{ci}_high"] = lo, hi
        rows.append(row)
    return rows


def everything(store, study: Study, deeper: float = 0.0, depth: int = 1) -> dict:
    """Every table, the study and the withdrawals: ``GET /api/admin/export/study.json``; ``deeper``
    and ``depth``: the luck correction's (:func:`evaluation.luck.analyse`), recorded as
    ``luck_deeper`` and ``luck_depth``."""
    games = game_rows(store, study, deeper, depth)
    answers = answer_rows(store, study)
    return {"study": study.to_dict(), "participants": participant_rows(store, study, games, answers),
            "games": games, "decisions": decision_rows(store, study), "answers": answers,
            "withdrawals": store.withdrawals(), "luck_deeper": deeper,
            "luck_depth": depth}


TABLES = {"participants": (participant_rows, PARTICIPANT_COLUMNS), "games": (game_rows, GAME_COLUMNS),
          "decisions": (decision_rows, DECISION_COLUMNS), "answers": (answer_rows, ANSWER_COLUMNS)}


def to_csv(rows: list[dict], columns: list[str]) -> str:
    out = io.StringIO()
    w = csv.DictWriter(out, columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: "" if r.get(k) is None else r[k] for k in columns})
    return out.getvalue()


def table_csv(store, study: Study, name: str) -> str:
    make, columns = TABLES[name]
    return to_csv(make(store, study), columns)
