"""The study's results: per bot, per participant, and OpenSkill ratings with the humans in them.

Humans are the measuring stick: a bot is ranked by how the humans fared against it (the lower the
humans' win rate, the stronger the bot), with a 95% Wilson interval, and beside it the humans' score
(mean reward) raw and luck corrected (evaluation/, docs/luck.md), each with its 95% interval: the
corrected one needs fewer games for the same certainty. Every finished game counts, the
arena's own and games imported from a JSONL ledger.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict

from evaluation.results import OUTCOME_REWARD, rating_row, score_text
from evaluation.results import outcome as _outcome
from evaluation.results import ratings as _ratings
from havok_env.engine import Game
from training.stats import mean_ci, wilson


def pseudonyms(store) -> dict[int, str]:
    return {p["id"]: p["pseudonym"] for p in store.all_participants()}


def outcome(result: dict, seat: int) -> str:
    """``"win"``, ``"draw"`` or ``"loss"`` for ``seat`` in a game's ``result``."""
    return _outcome(result["winners"], seat)


# Each seat's luck-corrected reward per finished game and way of correcting it: a finished game
# never changes, and the results page is asked for often. Oldest first out past _CACHE_MAX.
_CACHE: dict[tuple, tuple | None] = {}
_CACHE_MAX = 100_000
_CACHE_LOCK = threading.Lock()


def _key(g: dict, actions, deeper: float, depth: int) -> tuple:
    """What fixes a game's correction: the game, its seats' policies (the bots' named by the
    game's bot spec, so a random bot's decisions are corrected; the person's never are) and the
    way of correcting."""
    n = g["options"]["num_players"]
    policies = tuple("human" if p == g["human_seat"] else g["bot"] for p in range(n))
    return (g["seed"], json.dumps(g["options"], sort_keys=True), tuple(actions), policies, deeper, depth)


def _remember(key: tuple, got) -> None:
    with _CACHE_LOCK:
        while len(_CACHE) >= _CACHE_MAX:
            del _CACHE[next(iter(_CACHE))]
        _CACHE[key] = None if got is None else tuple(got)


def _record(key: tuple) -> dict:
    return {"seed": key[0], "options": json.loads(key[1]), "actions": list(key[2])}


def human_luck(g: dict, actions: list[int], deeper: float = 0.0, depth: int = 1) -> float | None:
    """The human's corrected reward in finished game ``g``; ``deeper`` and ``depth``: see
    :func:`evaluation.luck.analyse`."""
    key = _key(g, actions, deeper, depth)
    got = _CACHE.get(key, _CACHE)  # the cache itself: not there
    if got is _CACHE:
        from evaluation.luck import corrected_or_none
        got = corrected_or_none(_record(key), list(key[3]), deeper=deeper, depth=depth)
        _remember(key, got)
    return None if got is None else got[g["human_seat"]]


def correct_finished(store, deeper: float = 0.0, depth: int = 1, workers: int = 1, progress: bool = True) -> None:
    """Correct every finished game not yet corrected this way, in ``workers`` processes where
    ``deeper`` makes it worth it (:func:`evaluation.luck.corrected_all`), before a summary or an
    export reads them one by one: two events deeper a game takes some 1.2 s of CPU, three deeper some 18 s."""
    from evaluation.luck import corrected_all, correcting

    acts = store.all_actions()
    keys = [k for k in dict.fromkeys(_key(g, acts.get(g["id"], []), deeper, depth)
                                     for g in store.games(status="finished")) if k not in _CACHE]
    with correcting(len(keys), deeper, progress) as bar:
        got = corrected_all([(_record(k), k[3]) for k in keys], deeper, depth, workers, bar)
    for k, v in zip(keys, got):
        _remember(k, v)


def finished_games(store, deeper: float = 0.0, depth: int = 1) -> list[dict]:
    """Finished games in the order they ended, each with its participant's pseudonym, dragons,
    the human's reward and its luck-corrected value."""
    names = pseudonyms(store)
    rows = sorted(store.games(status="finished"), key=lambda g: (g["finished"] or "", g["id"]))
    acts = store.all_actions()
    out = []
    for g in rows:
        dragons = Game(seed=g["seed"], **g["options"])  # the deal alone fixes the dragons
        n = g["options"]["num_players"]
        out.append({
            "game": g["id"], "participant": names.get(g["participant_id"], "?"), "bot": g["bot"],
            "players": n, "seat": g["human_seat"], "deal": g["deal"], "seed": g["seed"],
            "dragon": dragons.dragon(g["human_seat"]).name,
            "dragons": [dragons.dragon(p).name for p in range(n)],
            "scores": list(g["result"]["scores"]), "winners": list(g["result"]["winners"]),
            "outcome": outcome(g["result"], g["human_seat"]),
            "reward": OUTCOME_REWARD[outcome(g["result"], g["human_seat"])],
            "corrected": human_luck(g, acts.get(g["id"], []), deeper, depth), "turns": g["turns"],
            "decisions": g["n_actions"], "finished": g["finished"], "source": g["source"],
        })
    return out


def _counts(games: list[dict]) -> dict:
    n = len(games)
    wins = sum(g["outcome"] == "win" for g in games)
    draws = sum(g["outcome"] == "draw" for g in games)
    lo, hi = wilson(wins, n)
    return {"games": n, "wins": wins, "draws": draws, "losses": n - wins - draws,
            "win_rate": wins / n if n else 0.0, "ci95": [lo, hi]}


def bot_rows(games: list[dict], bots: list[str]) -> list[dict]:
    """One row per bot: the humans' games against it, their wins, draws and losses, the humans'
    win rate with its 95% interval, their score (mean reward) and its luck-corrected estimate,
    each with its 95% interval (None without games, or where a game has no correction), and the
    bots' rank (1 = the bot humans fared worst against). This is the one place per-bot figures
    are computed.
    """
    by_bot: dict[str, list[dict]] = defaultdict(list)
    for g in games:
        by_bot[g["bot"]].append(g)
    names = list(bots) + sorted(b for b in by_bot if b not in bots)
    rows = []
    for b in names:
        gs = by_bot.get(b, [])
        c = _counts(gs)
        rows.append({"bot": b, "human_games": c["games"], "human_wins": c["wins"],
                     "draws": c["draws"], "human_losses": c["losses"],
                     "human_win_rate": c["win_rate"], "ci95": c["ci95"], **_scores(gs),
                     "participants": len({g["participant"] for g in gs}),
                     "fair_share": 1 / gs[0]["players"] if gs else None})
    ranked = sorted((r for r in rows if r["human_games"]), key=lambda r: (r["human_win_rate"], -r["human_games"]))
    for i, r in enumerate(ranked, 1):
        r["rank"] = i
    return ranked + [dict(r, rank=None) for r in rows if not r["human_games"]]


def _scores(games: list[dict]) -> dict:
    out = {"human_score": None, "human_score_ci95": None, "corrected_human_score": None,
           "corrected_human_ci95": None}
    if games:
        out["human_score"], out["human_score_ci95"] = mean_ci([g["reward"] for g in games])
        if all(g.get("corrected") is not None for g in games):
            out["corrected_human_score"], out["corrected_human_ci95"] = mean_ci([g["corrected"] for g in games])
    return out


def participant_rows(games: list[dict]) -> list[dict]:
    by_who: dict[str, list[dict]] = defaultdict(list)
    for g in games:
        by_who[g["participant"]].append(g)
    return [{"participant": who, **_counts(gs),
             "history": [{k: g[k] for k in ("game", "bot", "seat", "dragon", "scores", "outcome",
                                              "turns", "finished")} for g in gs]}
            for who, gs in sorted(by_who.items())]


def ratings(games: list[dict]) -> list[dict]:
    """OpenSkill (Plackett-Luce) ratings of every participant and bot, updated game by game in the
    order the games ended: the human against the bot, whoever won the game ranked first (a tie for
    the lead is a draw between them), as the tournaments rank a game's winners above the rest
    (:func:`evaluation.results.ratings`)."""
    kind: dict[str, str] = {}
    teams = []
    for g in games:
        human, bot = f"human:{g['participant']}", g["bot"]
        kind[human], kind[bot] = "human", "bot"
        bot_won = any(p in g["winners"] for p in range(g["players"]) if p != g["seat"])
        teams.append([(human, g["seat"] in g["winners"]), (bot, bot_won)])
    rows = [{"name": who, "kind": kind[who], **rating_row(r)} for who, r in _ratings(teams).items()]
    return sorted(rows, key=lambda r: -r["ordinal"])


def summary(store, study, deeper: float = 0.0, depth: int = 1) -> dict:
    games = finished_games(store, deeper, depth)
    playing = store.games(status="playing")
    return {
        "study": study.to_dict() if study else None,
        "participants_joined": len(store.all_participants()),
        "games_finished": len(games), "games_playing": len(playing),
        "bots": bot_rows(games, study.agents if study else []),
        "participants": participant_rows(games),
        "ratings": ratings(games),
        "games": games,
        "playing": [{"game": g["id"], "bot": g["bot"], "seat": g["human_seat"],
                     "decisions": g["n_actions"], "created": g["created"]} for g in playing],
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def format_summary(s: dict, url: str) -> str:
    """The results as text (``evaluate.py --ledger sqlite:///...``)."""
    st = s["study"] or {}
    lines = [f"Arena results {url}: {s['games_finished']} finished game(s), {s['games_playing']} in play, "
             f"{s['participants_joined']} participant(s)"
             + (f"; study: {', '.join(st.get('agents', []))}, {st.get('players')} players, "
                f"seed {st.get('seed')}" if st else "")]
    if not s["games_finished"]:
        lines.append("(no finished games yet)")
        return "\n".join(lines)
    lines += ["", "Bots, ranked by how the humans fared against them (1 = the humans' hardest opponent):"]
    head = ["rank", "bot", "games", "human wins", "draws", "human losses", "human win rate", "95% CI",
            "human score", "corrected", "people"]
    rows = [[r["rank"] or "-", r["bot"], r["human_games"], r["human_wins"], r["draws"],
             r["human_losses"], _pct(r["human_win_rate"]), f"[{_pct(r['ci95'][0])}, {_pct(r['ci95'][1])}]",
             score_text(r["human_score"], r["human_score_ci95"], r["human_games"]),
             score_text(r["corrected_human_score"], r["corrected_human_ci95"], r["human_games"]),
             r["participants"]] for r in s["bots"]]
    lines.append(_table(head, rows))
    lines.append("human score: mean reward (+1 a sole win, 0 a shared win, -1 a loss) +- its 95% interval; "
                 "corrected: the same with the luck of cards, contests and random bots taken out (docs/luck.md)")
    lines += ["", "Participants:"]
    rows = [[p["participant"], p["games"], p["wins"], p["draws"], p["losses"], _pct(p["win_rate"]),
             f"[{_pct(p['ci95'][0])}, {_pct(p['ci95'][1])}]",
             " ".join(f"{h['outcome'][0].upper()}:{h['bot']}" for h in p["history"])]
            for p in s["participants"]]
    lines.append(_table(["participant", "games", "wins", "draws", "losses", "win rate", "95% CI",
                         "history (W/D/L against)"], rows))
    lines += ["", "OpenSkill ratings (Plackett-Luce), humans and bots together:"]
    rows = [[r["name"], r["kind"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}"]
            for r in s["ratings"]]
    lines.append(_table(["name", "kind", "mu", "sigma", "ordinal"], rows))
    return "\n".join(lines)


def _table(head: list[str], rows: list[list]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    fmt = lambda row: "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731 - a small local helper
    return "\n".join([fmt(head), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows])
