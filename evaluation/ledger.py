"""The human benchmark ledger: one JSON line per game with a person at the table, its one writer
(:func:`ledger_entry`, :func:`append_ledger`), its one checker (:func:`check_ledger_entry`,
:func:`read_ledger`) and its summary per human and opponent.

A line holds the replay (seed, options, actions), the seats, the agents and the result; the
tournaments at the terminal write it, the arena exports its games in it and imports it
(``arena/ledger.py``). Each line is appended whole in one write and synced, so a crash can only
tear the last line. Reading checks every field of every line against the schema and replays the
game: a bad line, hostile, corrupt or torn, is skipped and reported with its number and the
reason, and costs nothing else.
"""

from __future__ import annotations

import json
import os

from agents.human import human_name, is_human
from havok_env.cards import default_cards
from havok_env.constants import MAX_PLAYERS, MIN_PLAYERS
from training.stats import wilson

from . import EvalError
from .report import pct, text_table
from .results import OUTCOME_REWARD, outcome, score_stats, score_text


DEFAULT_LEDGER = os.path.join("results", "human_games.jsonl")


def append_ledger(path: str, entry: dict) -> None:
    """Append one JSON line in a single ``write`` on an ``O_APPEND`` descriptor, then ``fsync`` it.

    A crash can only leave the last line torn (no newline): the next append closes it with a
    newline in the same write, so the torn line stays alone and the reader skips and reports it.
    """
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    data = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:  # a regular file takes it whole; the loop only guards a short write
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


LEDGER_VERSION = 1
MAX_LEDGER_LINE = 1 << 20  # bytes; a game's line takes a few KB
MAX_SPEC = 200  # characters of an agent spec in the ledger
_REQUIRED = ("version", "seed", "options", "actions", "seats", "humans", "result", "turns")


class LedgerLineError(ValueError):
    """A ledger line that does not fit the schema: the message names the field and the problem."""


def ledger_entry(record: dict, seats: list[str], humans: list[int], agents: list[str], time: str | None,
                 **extra) -> dict:
    """The ledger line of a finished game: ``record`` is its record with its result (``seed``,
    ``options``, ``actions``, ``dragons``, ``result``, ``turns``, ``decisions``, as
    :func:`agents.runner.play_game` returns it), ``seats`` the agent spec of each seat (``human``
    or ``human:NAME`` for a person), ``humans`` the seats people played, ``agents`` the specs of
    the tournament or study; ``extra`` (``tournament``, ``arena``) says where it was played."""
    return {"version": LEDGER_VERSION, "time": time, "seed": record["seed"], "options": record["options"],
            "actions": record["actions"], "seats": list(seats), "humans": list(humans),
            "agents": list(agents), "dragons": record["dragons"], "result": record["result"],
            "turns": record["turns"], "decisions": record["decisions"], **extra}


def read_ledger(path: str, verify: bool = True) -> tuple[list[dict], list[str]]:
    """(good entries, one message per skipped line). Every field of an entry is checked against the
    schema of :func:`check_ledger_entry`, and each entry is replayed when ``verify``. A bad line,
    hostile or torn, is skipped and reported with its number; the rest still counts."""
    if not os.path.exists(path):
        raise EvalError(f"ledger {path!r} does not exist")
    entries, problems = [], []
    try:
        f = open(path, "rb")
    except OSError as e:
        raise EvalError(f"cannot read ledger {path!r}: {e.strerror or e}") from None
    with f:
        no = 0
        while True:
            raw = f.readline(MAX_LEDGER_LINE + 1)
            if not raw:
                break
            no += 1
            if len(raw) > MAX_LEDGER_LINE:
                while raw and not raw.endswith(b"\n"):  # skip the rest of it, unread
                    raw = f.readline(1 << 16)
                problems.append(f"{path}:{no}: skipped a corrupt ledger line: "
                                f"longer than {MAX_LEDGER_LINE} bytes")
                continue
            if not raw.strip():
                continue
            try:
                entry = _parse_ledger_line(raw)
                check_ledger_entry(entry, verify)
            except LedgerLineError as e:
                why = str(e)
                if not raw.endswith(b"\n"):
                    why = f"torn last line, a write cut short ({why})"
                problems.append(f"{path}:{no}: skipped a corrupt ledger line: {why[:240]}")
                continue
            entries.append(entry)
    return entries, problems


def _parse_ledger_line(raw: bytes):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LedgerLineError(f"not UTF-8 text (byte {e.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise LedgerLineError("JSON nested too deeply") from None
    except ValueError as e:
        raise LedgerLineError(f"not JSON ({str(e).splitlines()[0][:80]})") from None


def _json_kind(v) -> str:
    if isinstance(v, bool):
        return "true/false"
    if v is None:
        return "null"
    for t, name in ((str, "a string"), (list, "a list"), (dict, "an object"), ((int, float), "a number")):
        if isinstance(v, t):
            return name
    return type(v).__name__


def _int(v, what: str, lo: int = 0, hi: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise LedgerLineError(f"{what} must be an integer, not {_json_kind(v)}")
    if v < lo or (hi is not None and v > hi):
        span = f"from {lo} to {hi}" if hi is not None else f"from {lo}"
        raise LedgerLineError(f"{what} must be an integer {span}, not {v}")
    return v


def _typed(v, t: type, what: str):
    if not isinstance(v, t):
        raise LedgerLineError(f"{what} must be {_json_kind(t())}, not {_json_kind(v)}")
    return v


def _text(v, what: str) -> str:
    _typed(v, str, what)
    if len(v) > MAX_SPEC:
        raise LedgerLineError(f"{what} is longer than {MAX_SPEC} characters")
    if not v.isprintable():
        raise LedgerLineError(f"{what} holds control characters")
    return v


def _seat_set(v, what: str, n: int) -> list[int]:
    """A list of distinct seats of an ``n``-player table (never a boolean for seat 1)."""
    seats = _typed(v, list, what)
    for i, p in enumerate(seats):
        if _int(p, f"{what}[{i}]") >= n:
            raise LedgerLineError(f"{what}[{i}] must be a seat from 0 to {n - 1}, not {p}")
        if p in seats[:i]:
            raise LedgerLineError(f"{what} lists seat {p} twice")
    return seats


def check_ledger_entry(e, verify: bool = True) -> None:
    """Raise :class:`LedgerLineError` unless ``e`` is a ledger entry as this project writes it.

    Required: ``version`` (1), ``seed``, ``options`` (``num_players``, ``dragons``), ``actions``,
    ``seats`` (one agent spec per seat), ``humans`` (the distinct seats played by a ``human``
    spec, all of them), ``result`` (``winners``: the seats with the best of ``scores``,
    ``reason``) and ``turns``. Optional but checked when present: ``agents`` (the tournament's
    specs, every seat's among them), ``dragons``, ``decisions``, ``time``, ``tournament``. With
    ``verify`` the game is replayed and must finish with the recorded result, turns and dragons.
    """
    if not isinstance(e, dict):
        raise LedgerLineError(f"not a JSON object but {_json_kind(e)}")
    missing = [k for k in _REQUIRED if k not in e]
    if missing:
        raise LedgerLineError("missing " + ", ".join(repr(k) for k in missing))
    if e["version"] != LEDGER_VERSION or isinstance(e["version"], bool):
        raise LedgerLineError(f"version must be {LEDGER_VERSION}, not {json.dumps(e['version'])[:20]}")
    _int(e["seed"], "seed", 0, (1 << 64) - 1)
    options = _typed(e["options"], dict, "options")
    for key in options:
        if key not in ("num_players", "dragons"):
            raise LedgerLineError(f"options has unknown key {str(key)[:40]!r}")
    if "num_players" not in options:
        raise LedgerLineError("options misses 'num_players'")
    n = _int(options["num_players"], "options.num_players", MIN_PLAYERS, MAX_PLAYERS)
    if options.get("dragons") is not None:
        names = _typed(options["dragons"], list, "options.dragons")
        if len(names) != n:
            raise LedgerLineError(f"options.dragons must name {n} dragons, not {len(names)}")
        for i, d in enumerate(names):
            if d is not None:
                try:
                    default_cards().dragon_index(_text(d, f"options.dragons[{i}]"))
                except ValueError:
                    raise LedgerLineError(f"options.dragons[{i}]: unknown dragon {d!r}") from None
    actions = _typed(e["actions"], list, "actions")
    for i, a in enumerate(actions):
        _int(a, f"actions[{i}]")
    seats = _typed(e["seats"], list, "seats")
    if len(seats) != n:
        raise LedgerLineError(f"seats must list {n} seats (options.num_players), not {len(seats)}")
    for i, spec in enumerate(seats):
        _text(spec, f"seats[{i}]")
    humans = _seat_set(e["humans"], "humans", n)
    if not humans:
        raise LedgerLineError("humans must not be empty: a ledger line is a game with a human")
    for p, spec in enumerate(seats):
        if (p in humans) != is_human(spec):
            raise LedgerLineError(f"seat {p} ({spec}) is a human but not in humans" if is_human(spec)
                                  else f"seat {p} ({spec}) is not a human but is in humans")
    if "agents" in e:
        agents = _typed(e["agents"], list, "agents")
        for i, spec in enumerate(agents):
            _text(spec, f"agents[{i}]")
        for p, spec in enumerate(seats):
            if spec not in agents:
                raise LedgerLineError(f"seat {p} ({spec}) is not among the agents")
    result = _typed(e["result"], dict, "result")
    for key in ("winners", "scores", "reason"):
        if key not in result:
            raise LedgerLineError(f"result misses {key!r}")
    winners = _seat_set(result["winners"], "result.winners", n)
    scores = _typed(result["scores"], list, "result.scores")
    if len(scores) != n:
        raise LedgerLineError(f"result.scores must list {n} scores, not {len(scores)}")
    for i, v in enumerate(scores):
        _int(v, f"result.scores[{i}]", 0, 10_000)
    if sorted(winners) != [p for p in range(n) if scores[p] == max(scores)]:
        raise LedgerLineError("result.winners must be the seats with the best score")
    _text(result["reason"], "result.reason")
    _int(e["turns"], "turns", 0, 1_000_000)
    if "decisions" in e and _int(e["decisions"], "decisions") != len(actions):
        raise LedgerLineError(f"decisions is {e['decisions']} but there are {len(actions)} actions")
    if "dragons" in e:
        for i, d in enumerate(_typed(e["dragons"], list, "dragons")):
            _text(d, f"dragons[{i}]")
    if "time" in e:
        _text(e["time"], "time")
    if "tournament" in e:
        _typed(e["tournament"], dict, "tournament")
    if verify:
        _check_replay(e, n)


def _check_replay(e: dict, n: int) -> None:
    from havok_env.engine import Game

    steps = Game.positions(e)
    try:
        g, a = next(steps)
    except ValueError as err:  # ConfigError
        raise LedgerLineError(f"options: {err}") from None
    i = 0
    try:
        while a is not None:  # applying actions[i]
            g, a = next(steps)
            i += 1
    except ValueError as err:  # IllegalActionError
        raise LedgerLineError(f"the replay fails at actions[{i}]: {str(err)[:100]}") from None
    if g.result is None:
        raise LedgerLineError("the replay does not finish the game")
    r = e["result"]
    if sorted(g.result["winners"]) != sorted(r["winners"]) or list(g.result["scores"]) != r["scores"] \
            or g.result["reason"] != r["reason"]:
        raise LedgerLineError("the replay does not reproduce the recorded result")
    if g.s.turn != e["turns"]:
        raise LedgerLineError(f"turns is {e['turns']} but the replay takes {g.s.turn}")
    if "dragons" in e and e["dragons"] != [g.dragon(p).name for p in range(n)]:
        raise LedgerLineError("dragons do not match the replay")


def summarise_ledger(entries: list[dict], deeper: float = 0.0, depth: int = 1, workers: int = 1,
                     progress=None) -> dict:
    """Each human against each opponent spec (bots and trained agents; other humans too);
    ``deeper`` and ``depth``: the luck correction's (:func:`evaluation.luck.analyse`), made in
    ``workers`` processes with ``progress`` (:func:`evaluation.luck.corrected_all`)."""
    groups: dict[tuple, dict] = {}
    overall: dict[str, dict] = {}

    def add(d: dict, kind: str, hoard: int, opp_hoard: float, turns: int, corrected):
        d["games"] += 1
        d["rewards"].append(OUTCOME_REWARD[kind])
        d["corrected"].append(corrected)
        d["wins"] += kind == "win"
        d["draws"] += kind == "draw"
        d["losses"] += kind == "loss"
        d["hoard"] += hoard
        d["opp_hoard"] += opp_hoard
        d["turns"] += turns

    blank = lambda: {"games": 0, "wins": 0, "draws": 0, "losses": 0, "hoard": 0, "opp_hoard": 0.0,  # noqa: E731 - a small local helper
                     "turns": 0, "rewards": [], "corrected": []}
    from evaluation.luck import corrected_all
    # people's decisions are never corrected
    every = corrected_all([(e, e["seats"]) for e in entries], deeper, depth, workers, progress)
    for e, corrected in zip(entries, every):
        winners = set(e["result"]["winners"])
        scores = e["result"]["scores"]
        n = len(e["seats"])
        for h in e["humans"]:
            name = human_name(e["seats"][h])
            kind = outcome(winners, h)
            others = [p for p in range(n) if p != h]
            opp = sum(scores[p] for p in others) / len(others)
            mine = None if corrected is None else corrected[h]
            add(overall.setdefault(name, blank()), kind, scores[h], opp, e["turns"], mine)
            for spec in sorted({e["seats"][p] for p in others}):
                key = (name, spec, n)
                add(groups.setdefault(key, blank()), kind, scores[h],
                    sum(scores[p] for p in others if e["seats"][p] == spec)
                    / sum(1 for p in others if e["seats"][p] == spec), e["turns"], mine)

    def row(d: dict) -> dict:
        g = d["games"]
        return {"games": g, "wins": d["wins"], "draws": d["draws"], "losses": d["losses"],
                "win_rate": d["wins"] / g if g else 0.0, "ci95": list(wilson(d["wins"], g)),
                **score_stats(d["rewards"], d["corrected"]),
                "mean_hoard": d["hoard"] / g if g else 0.0,
                "mean_opponent_hoard": d["opp_hoard"] / g if g else 0.0,
                "mean_turns": d["turns"] / g if g else 0.0}

    return {
        "humans": [{"human": name, **row(d)} for name, d in sorted(overall.items())],
        "matchups": [{"human": name, "opponent": spec, "players": n, **row(d)}
                     for (name, spec, n), d in sorted(groups.items())],
    }


def format_ledger(summary: dict, path: str, skipped: int) -> str:
    total = sum(h["games"] for h in summary["humans"])
    lines = [f"Human benchmark ledger {path}: {total} human seat-game(s)"
             + (f", {skipped} corrupt line(s) skipped" if skipped else "")]
    if not summary["matchups"]:
        lines.append("(no games yet)")
        return "\n".join(lines)
    headers = ["human", "opponent", "players", "games", "wins", "draws", "losses", "win rate",
               "95% CI", "score", "corrected", "mean hoard", "opp. hoard"]
    rows = []
    for m in summary["matchups"]:
        lo, hi = m["ci95"]
        rows.append([m["human"], m["opponent"], m["players"], m["games"], m["wins"], m["draws"],
                     m["losses"], pct(m["win_rate"]), f"[{pct(lo)}, {pct(hi)}]",
                     score_text(m["score"], m["score_ci95"], m["games"]),
                     score_text(m["corrected_score"], m["corrected_ci95"], m["games"]),
                     f"{m['mean_hoard']:.2f}", f"{m['mean_opponent_hoard']:.2f}"])
    lines.append(text_table(headers, rows, right={2, 3, 4, 5, 6, 7, 9, 10, 11, 12}))
    lines.append("score: the human's mean reward (+1 a sole win, 0 a shared win, -1 a loss) +- its 95% "
                 "interval; corrected: the same with the luck taken out (docs/luck.md)")
    lines.append("")
    lines.append("Overall: " + "; ".join(
        f"{h['human']} won {h['wins']}/{h['games']} ({pct(h['win_rate']).strip()}, 95% CI "
        f"{pct(h['ci95'][0]).strip()}-{pct(h['ci95'][1]).strip()}; "
        f"score {score_text(h['score'], h['score_ci95'], h['games'])}, "
        f"corrected {score_text(h['corrected_score'], h['corrected_ci95'], h['games'])})"
        for h in summary["humans"]))
    return "\n".join(lines)
