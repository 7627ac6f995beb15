"""A tournament's report: per-agent statistics (by dragon and seat), OpenSkill ratings, the
head-to-head matrix, seat win rates and paired score differences over duplicate deals; and the
report as a text table, CSV, JSON and a head-to-head plot.

Every figure is computed from the games' lines in their fixed order (deal, table, rotation), so
the same games give the same report byte for byte. Rewards, scores and ratings come from
:mod:`evaluation.results`.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
from collections import Counter, defaultdict

from havok_env.files import replaced
from training.stats import mean_ci, wilson

from .results import rating_row, ratings, reward, score_stats, score_text
from .schedule import agent_labels, dragon_names, off_training


def report(specs: list[str], num_players: int, games: list[dict], seed=None,
           games_requested=None, plan: dict | None = None) -> dict:
    """Per-agent statistics (split by dragon and seat), OpenSkill ratings and the head-to-head
    matrix of a list of games. With the tournament's dragon ``plan`` (:func:`dragon_plan`), each
    agent says which dragon it played and why, and counts its games off its training."""
    labels = agent_labels(specs)
    order = dragon_names()  # of the by-dragon splits
    k = len(specs)
    st = [{"games": 0, "wins": 0, "draws": 0, "losses": 0, "hoard": 0, "turns": 0, "decisions": 0,
           "rewards": [], "corrected": [],
           "by_dragon": defaultdict(lambda: [0, 0]), "by_seat": defaultdict(lambda: [0, 0]),
           "off": [0, 0, 0]}  # games off training: any, another dragon, another player count
          for _ in range(k)]
    h2h_w = [[0] * k for _ in range(k)]
    h2h_n = [[0] * k for _ in range(k)]
    seat_stats = [[0, 0, 0] for _ in range(num_players)]  # games, wins, draws
    for g in games:
        winners = set(g["winners"])
        sole = len(winners) == 1
        for seat, a in enumerate(g["seats"]):
            s = st[a]
            s["games"] += 1
            s["hoard"] += g["scores"][seat]
            s["turns"] += g["turns"]
            s["decisions"] += g["decisions"]
            won = seat in winners and sole
            drew = seat in winners and not sole
            s["wins"] += won
            s["draws"] += drew
            s["losses"] += seat not in winners
            s["by_dragon"][g["dragons"][seat]][0] += 1
            s["by_dragon"][g["dragons"][seat]][1] += won
            s["by_seat"][seat][0] += 1
            s["by_seat"][seat][1] += won
            s["rewards"].append(_reward(g, seat))
            s["corrected"].append(g["corrected"][seat] if g.get("corrected") else None)
            other_dragon, other_players = off_training(plan, g, a)
            s["off"][0] += other_dragon or other_players
            s["off"][1] += other_dragon
            s["off"][2] += other_players
            seat_stats[seat][0] += 1
            seat_stats[seat][1] += won
            seat_stats[seat][2] += drew
            for b in g["seats"]:
                if b != a:
                    h2h_n[a][b] += 1
                    h2h_w[a][b] += won
    rated = ratings(([(labels[a], seat in g["winners"]) for seat, a in enumerate(g["seats"])]
                     for g in games), names=labels)
    rows = []
    for i in range(k):
        s = st[i]
        n = s["games"]
        rows.append({
            "spec": specs[i], "label": labels[i], "games": n, "wins": s["wins"], "draws": s["draws"],
            "losses": s["losses"], "win_rate": s["wins"] / n if n else 0.0,
            "ci95": list(wilson(s["wins"], n)),
            **score_stats(s["rewards"], s["corrected"]),
            "mean_hoard": s["hoard"] / n if n else 0.0, "mean_turns": s["turns"] / n if n else 0.0,
            "openskill": rating_row(rated[labels[i]]),
            "by_dragon": {d: {"games": v[0], "wins": v[1], "win_rate": v[1] / v[0],
                              "ci95": list(wilson(v[1], v[0]))}
                          for d, v in sorted(s["by_dragon"].items(), key=lambda x: order.index(x[0]))},
            "by_seat": [{"seat": p, "games": v[0], "wins": v[1]} for p, v in sorted(s["by_seat"].items())],
        })
        if plan:
            a = plan["agents"][i]
            rows[-1].update(dragon=a["dragon"], dragon_source=a["source"], trained=a["trained"],
                            off_training={"games": s["off"][0], "other_dragon": s["off"][1],
                                          "other_players": s["off"][2]} if a["trained"] else None)
    return {
        "config": {"agents": list(specs), "players": num_players, "seed": seed,
                   "games_requested": games_requested, "games": len(games),
                   "deals": len({g["deal"] for g in games}) if games else 0,
                   "dragons": None if plan is None else
                   {"mode": plan["mode"], "seats": plan["seats"],
                    "agents": None if plan["mode"] == "seats" else [a["dragon"] for a in plan["agents"]]}},
        "agents": rows,
        "head_to_head": {"agents": labels,
                         "win_rate": [[(h2h_w[a][b] / h2h_n[a][b]) if h2h_n[a][b] else None
                                       for b in range(k)] for a in range(k)],
                         "wins": h2h_w, "games": h2h_n},
        "seats": [{"seat": p, "games": v[0], "wins": v[1], "draws": v[2],
                   "win_rate": v[1] / v[0] if v[0] else 0.0, "ci95": list(wilson(v[1], v[0]))}
                  for p, v in enumerate(seat_stats)],
        "paired": paired(labels, games),
        "luck": _luck_note(games),
        "games": games,
    }


def _reward(g: dict, seat: int) -> float:
    """A seat's reward from its game line: the game's own (``rewards``, from ``Game.rewards()``)."""
    if "rewards" in g:
        return float(g["rewards"][seat])
    return reward(g["winners"], seat)


def paired(labels: list[str], games: list[dict]) -> list[dict]:
    """For each pair of agents, the mean difference of their scores on the deals both played
    (each agent's mean over its games of the deal; duplicate deals are the pairing), raw and luck
    corrected, with the 95% interval of that paired difference over the deals."""
    by_deal: dict = defaultdict(lambda: defaultdict(lambda: [[], []]))
    for g in games:
        for seat, a in enumerate(g["seats"]):
            cell = by_deal[g["deal"]][a]
            cell[0].append(_reward(g, seat))
            cell[1].append(g["corrected"][seat] if g.get("corrected") else None)
    out = []
    for a, b in itertools.combinations(range(len(labels)), 2):
        raw, cor = [], []
        for deal in by_deal.values():
            if a in deal and b in deal:
                raw.append(_mean(deal[a][0]) - _mean(deal[b][0]))
                both = deal[a][1] + deal[b][1]
                cor.append(None if None in both else _mean(deal[a][1]) - _mean(deal[b][1]))
        if not raw:
            continue
        d, ci = mean_ci(raw)
        row = {"a": labels[a], "b": labels[b], "deals": len(raw), "difference": d, "difference_ci95": ci,
               "corrected_difference": None, "corrected_difference_ci95": None}
        if None not in cor:
            row["corrected_difference"], row["corrected_difference_ci95"] = mean_ci(cor)
        out.append(row)
    return out


def _mean(xs: list) -> float:
    return sum(xs) / len(xs)


def _luck_note(games: list[dict]) -> str | None:
    """Why the corrected scores are missing, if they are."""
    if any(not g.get("corrected") for g in games):
        from evaluation.luck import unavailable
        return unavailable() or "some games were reported without their luck correction"
    return None


def pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def text_table(headers: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]
    fmt = lambda row: "  ".join(  # noqa: E731 - a small local helper
        str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
    return "\n".join([fmt(headers), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows])


def format_report(rep: dict) -> str:
    c = rep["config"]
    n_tables = math.comb(len(c["agents"]), c["players"])
    shape = f" ({c['deals']} deal(s) x {n_tables} table(s) x {c['players']} seat rotations)"
    lines = [f"Tournament: {len(c['agents'])} agents, {c['players']} players, {c['games']} games"
             f"{'' if rep.get('interrupted') else shape}, seed {c['seed']}"]  # a partial one's last deal is cut
    if c.get("games_requested") and c["games_requested"] != c["games"] and not rep.get("interrupted"):
        lines[0] += f" (--games {c['games_requested']} rounded up to whole deals)"
    if rep.get("interrupted"):
        of = (rep.get("partial") or {}).get("of")
        lines.append(f"Tournament {rep['interrupted']}: partial results, the statistics cover the {c['games']} "
                     f"game(s) finished" + (f" of {of}" if of else "") + ".")
    plan = c.get("dragons")
    if plan:
        lines.append(_describe_dragons(rep))
    headers = ["agent", "dragon", "games", "wins", "draws", "win rate", "95% CI", "score", "corrected",
               "mean hoard", "mean turns", "mu", "sigma", "ordinal"]
    ranked = sorted(rep["agents"], key=lambda a: -a["openskill"]["ordinal"])
    rows = []
    for a in ranked:
        lo, hi = a["ci95"]
        o = a["openskill"]
        off = (a.get("off_training") or {}).get("games")
        rows.append([a["label"] + (" *" if off else ""), _agent_dragon(a, plan), a["games"], a["wins"],
                     a["draws"], pct(a["win_rate"]), f"[{pct(lo)}, {pct(hi)}]",
                     score_text(a["score"], a["score_ci95"]), score_text(a["corrected_score"], a["corrected_ci95"]),
                     f"{a['mean_hoard']:.2f}", f"{a['mean_turns']:.1f}", f"{o['mu']:.2f}",
                     f"{o['sigma']:.2f}", f"{o['ordinal']:.2f}"])
    lines.append(text_table(headers, rows, right={2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13}))
    if c["games"]:
        lines.append("score: mean reward (+1 a sole win, 0 a shared win, -1 a loss) +- its 95% interval; "
                     "corrected: the same with the luck of the cards, contests and random bots taken "
                     "out (docs/luck.md)"
                     + (f"; not available: {rep['luck']}" if rep.get("luck") else ""))
    for a in ranked:
        off = a.get("off_training") or {}
        if off.get("games"):
            t = a["trained"]
            what = [f"{off['other_dragon']} as another dragon than {t['dragon']}" if off["other_dragon"] else "",
                    f"{off['other_players']} with {c['players']} players, not {t['players']}"
                    if off["other_players"] else ""]
            lines.append(f"* OFF TRAINING (--allow-off-training): {a['label']} played {off['games']} of "
                         f"its {a['games']} games off what it was trained for: "
                         + " and ".join(w for w in what if w) + ".")
    if c["games"]:
        lines.append("")
        lines.append("Win rate by dragon (games)")
        dragons = dragon_names()
        drows = [[a["label"]] + [f"{pct(a['by_dragon'][d]['wins'] / a['by_dragon'][d]['games'])} "
                                 f"({a['by_dragon'][d]['games']})" if d in a["by_dragon"] else "-"
                                 for d in dragons] for a in ranked]
        lines.append(text_table(["agent", *dragons], drows, right=set(range(1, len(dragons) + 1))))
    h = rep["head_to_head"]
    if len(h["agents"]) > 1:
        lines.append("")
        lines.append("Head to head: the row agent's win rate in games with the column agent")
        hrows = [[lab] + ["-" if wr is None else pct(wr) for wr in row]
                 for lab, row in zip(h["agents"], h["win_rate"])]
        lines.append(text_table([""] + h["agents"], hrows, right=set(range(1, len(h["agents"]) + 1))))
    pairs = rep.get("paired") or []
    if pairs and any(p["deals"] > 1 for p in pairs):
        lines.append("")
        lines.append("Paired score differences on the same deals (first minus second, 95% interval "
                     "of the paired difference)")
        prow = [[f"{p['a']} - {p['b']}", p["deals"], score_text(p["difference"], p["difference_ci95"]),
                 score_text(p["corrected_difference"], p["corrected_difference_ci95"])] for p in pairs]
        lines.append(text_table(["pair", "deals", "raw", "corrected"], prow, right={1, 2, 3}))
    seats = rep.get("seats") or []
    if seats and c["games"]:
        lines.append("")
        lines.append("Seat win rates (all agents): " + ", ".join(
            f"player_{s['seat']} {pct(s['win_rate']).strip()}" for s in seats))
    return "\n".join(lines)


def _agent_dragon(a: dict, plan: dict | None) -> str:
    if not plan:
        return "-"
    if plan["mode"] == "seats":
        return "by seat"
    return a.get("dragon") or "rotates"


def _describe_dragons(rep: dict) -> str:
    plan = rep["config"]["dragons"]
    if plan["mode"] == "seats":
        return ("Dragons by seat (--dragons): " + ", ".join(
            f"player_{p} {d or 'rotates'}" for p, d in enumerate(plan["seats"]))
            + "; the agents rotate over the seats.")
    fixed = [(a["label"], a["dragon"], a.get("dragon_source")) for a in rep["agents"] if a.get("dragon")]
    if not fixed:
        return ("Dragons: every agent rotates over them (the same by seat in every game of a deal, "
                "another order each deal).")
    return ("Dragons: " + "; ".join(
        f"{lab} plays {d} ({'as trained' if src == 'training' else '--dragons'})" for lab, d, src in fixed)
        + "; the others rotate over the rest, deal by deal.")


def write_csv(rep: dict, path: str) -> None:
    dragons = dragon_names()
    with replaced(path, newline="") as f:
        w = csv.writer(f)
        w.writerow(["spec", "label", "games", "wins", "draws", "losses", "win_rate", "ci95_low",
                    "ci95_high", "score", "score_ci95_low", "score_ci95_high", "corrected_score",
                    "corrected_ci95_low", "corrected_ci95_high", "mean_hoard", "mean_turns", "openskill_mu",
                    "openskill_sigma",
                    "openskill_ordinal", "dragon", "off_training_games"]
                   + [f"{d.lower()}_{x}" for d in dragons for x in ("games", "wins", "win_rate")])
        plan = rep["config"].get("dragons")
        for a in rep["agents"]:
            o = a["openskill"]
            by = [[str(a["by_dragon"][d]["games"]), str(a["by_dragon"][d]["wins"]),
                   f"{a['by_dragon'][d]['win_rate']:.6f}"] if d in a["by_dragon"] else ["0", "0", ""]
                  for d in dragons]
            w.writerow([a["spec"], a["label"], a["games"], a["wins"], a["draws"], a["losses"],
                        f"{a['win_rate']:.6f}", f"{a['ci95'][0]:.6f}", f"{a['ci95'][1]:.6f}",
                        *_csv_score(a["score"], a["score_ci95"]),
                        *_csv_score(a["corrected_score"], a["corrected_ci95"]),
                        f"{a['mean_hoard']:.4f}", f"{a['mean_turns']:.4f}", f"{o['mu']:.4f}",
                        f"{o['sigma']:.4f}", f"{o['ordinal']:.4f}", _agent_dragon(a, plan),
                        (a.get("off_training") or {}).get("games", 0)]
                       + [x for row in by for x in row])


def _csv_score(mean, ci) -> list[str]:
    return ["", "", ""] if mean is None else [f"{mean:.6f}", f"{ci[0]:.6f}", f"{ci[1]:.6f}"]


def write_json(obj: dict, path: str) -> None:
    with replaced(path) as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


PLOT_LABEL_WIDTH = 24


def short_labels(labels: list[str], width: int = PLOT_LABEL_WIDTH) -> list[str]:
    """Labels that fit a plot's axes: a model path becomes its file name without the extension, and
    a name longer than ``width`` loses its middle to an ellipsis. Names that would then coincide
    show the stretch where they differ (``…seed1_dis…``); identical file names keep their folder."""
    def name(label: str, folders: int = 0) -> str:
        base, sep, copy = label.rpartition("#")
        if not (sep and copy.isdigit()):
            base, sep, copy = label, "", ""
        parts = [p for p in base.replace("\\", "/").split("/") if p]
        if parts and (len(parts) > 1 or base.endswith((".safetensors", ".zip", ".json"))):
            last = parts[-1]
            if last.endswith((".safetensors", ".zip", ".json")):
                last = last.rsplit(".", 1)[0]
            base = "/".join(parts[-1 - folders:-1] + [last]) if folders else last
        return base + sep + copy

    def middle(text: str) -> str:
        if len(text) <= width:
            return text
        head = (width - 1) // 2
        return text[:head] + "\u2026" + text[len(text) - (width - 1 - head):]

    def window(text: str, at: int) -> str:  # ``width`` characters around position ``at``
        if len(text) <= width:
            return text
        start = min(max(0, at - width // 3), len(text) - width)
        piece = text[start:start + width]
        if start > 0:
            piece = "\u2026" + piece[1:]
        if start + width < len(text):
            piece = piece[:-1] + "\u2026"
        return piece

    full = [name(lab) for lab in labels]
    if len(set(full)) < len(full):  # the same file name in two folders
        full = [name(lab, 1) if full.count(f) > 1 else f for lab, f in zip(labels, full)]
    out = [middle(f) for f in full]
    for lab in set(out):
        group = [i for i, o in enumerate(out) if o == lab]
        if len(group) > 1:
            at = len(os.path.commonprefix([full[i] for i in group]))
            for i in group:
                out[i] = window(full[i], at)
    counts, seen = Counter(out), Counter()
    for i, lab in enumerate(out):
        if counts[lab] > 1:  # nothing short tells them apart: number them
            seen[lab] += 1
            out[i] = f"{lab} [{seen[lab]}]"
    return out


def plot_head_to_head(rep: dict, path: str) -> None:
    import matplotlib.pyplot as plt

    fig = head_to_head_figure(rep)
    fmt = os.path.splitext(path)[1][1:]
    if not fmt:  # as matplotlib names a file without an extension
        fmt = plt.rcParams["savefig.format"]
        path = f"{path}.{fmt}"
    try:
        with replaced(path, "wb") as f:
            fig.savefig(f, format=fmt, dpi=120)
    finally:
        plt.close(fig)


def head_to_head_figure(rep: dict):
    """The head-to-head matrix as a matplotlib figure, laid out to hold its labels and title."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = rep["head_to_head"]
    labels = short_labels(h["agents"])
    k = len(labels)
    data = [[float("nan") if v is None else v for v in row] for row in h["win_rate"]]
    # room for the longest label beside the rows and, rotated, below the columns (about 0.075
    # inch per character at the tick font size)
    margin = 0.075 * max(len(lab) for lab in labels)
    side = 0.9 * k + 0.6
    fig, ax = plt.subplots(figsize=(max(5.0, side + margin + 1.4), side + 0.75 * margin + 1.3),
                           layout="constrained")
    im = ax.imshow(data, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(k), labels=labels, rotation=35, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(k), labels=labels)
    ax.set_xlabel("opponent at the table")
    ax.set_ylabel("agent")
    for a in range(k):
        for b in range(k):
            v = h["win_rate"][a][b]
            if v is not None:
                ax.text(b, a, f"{100 * v:.0f}%\nn={h['games'][a][b]}", ha="center", va="center",
                        fontsize=8)
    c = rep["config"]
    fig.suptitle(f"Head-to-head win rate\n({c['players']} players, {c['games']} games)", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return fig
