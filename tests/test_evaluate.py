"""evaluate.py: the schedule (seats, dragons, duplicate deals), statistics, outputs and errors."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter

import pytest

import evaluate
import evaluation.ledger
import evaluation.report
import evaluation.schedule
import evaluation.tournament
from training.stats import wilson
from havok_env.engine import Game


def _tour(specs=("heuristic", "random"), **kw):
    kw.setdefault("games", 8)
    kw.setdefault("seed", 7)
    kw.setdefault("workers", 1)
    kw.setdefault("progress", False)
    kw.setdefault("ledger", None)
    return evaluation.tournament.run_tournament(list(specs), **kw)


# -- statistics -----------------------------------------------------------------------------------


def test_wilson_interval_known_values():
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)


def test_tournament_statistics_on_a_fixed_seed():
    rep = _tour(games=8, seed=7)
    games = rep["games"]
    assert rep["config"]["games"] == len(games) == 8 and rep["config"]["deals"] == 4
    by = {a["spec"]: a for a in rep["agents"]}
    for i, a in enumerate(rep["agents"]):
        mine = [(g, g["seats"].index(i)) for g in games]
        assert a["games"] == 8  # every game has both agents
        wins = sum(1 for g, s in mine if g["winners"] == [s])
        draws = sum(1 for g, s in mine if s in g["winners"] and len(g["winners"]) > 1)
        assert (a["wins"], a["draws"]) == (wins, draws)
        assert a["wins"] + a["draws"] + a["losses"] == a["games"]
        assert a["win_rate"] == pytest.approx(wins / 8)
        assert a["ci95"] == pytest.approx(list(wilson(wins, 8)))
        assert a["ci95"][0] <= a["win_rate"] <= a["ci95"][1]
        assert a["mean_hoard"] == pytest.approx(sum(g["scores"][s] for g, s in mine) / 8)
        assert a["mean_turns"] == pytest.approx(sum(g["turns"] for g in games) / 8)
        assert sum(v["games"] for v in a["by_dragon"].values()) == 8
        assert [v["games"] for v in a["by_seat"]] == [4, 4]
    # the numbers themselves, pinned on this seed (the bots are deterministic given the seed)
    assert by["heuristic"]["wins"] > by["random"]["wins"]
    assert by["heuristic"]["openskill"]["mu"] > by["random"]["openskill"]["mu"]
    h = rep["head_to_head"]
    assert h["games"] == [[0, 8], [8, 0]]
    assert h["win_rate"][0][1] == pytest.approx(by["heuristic"]["win_rate"])
    assert h["win_rate"][0][0] is None
    # the same seed gives the same report; another seed other deals
    assert _tour(games=8, seed=7) == rep
    assert [g["seed"] for g in _tour(games=8, seed=8)["games"]] != [g["seed"] for g in games]


def test_parallel_workers_give_identical_results():
    one = _tour(games=6, seed=11, workers=1)
    two = _tour(games=6, seed=11, workers=2)
    assert one == two
    assert evaluation.report.format_report(one) == evaluation.report.format_report(two)


def test_games_round_up_to_whole_deals_and_all_tables_play():
    rep = _tour(("heuristic", "random", "random"), num_players=2, games=5, seed=1)
    # 3 tables (every pair) x 2 rotations = 6 games per deal
    assert rep["config"]["games"] == 6 and rep["config"]["deals"] == 1
    tables = Counter(tuple(sorted(g["seats"])) for g in rep["games"])
    assert tables == {(0, 1): 2, (0, 2): 2, (1, 2): 2}
    assert [a["label"] for a in rep["agents"]] == ["heuristic", "random", "random#2"]
    assert all(a["games"] == 4 for a in rep["agents"])
    h = rep["head_to_head"]["games"]
    assert h[0][1] == h[1][2] == h[0][2] == 2


def test_copies_of_a_random_agent_do_not_mirror_each_other():
    rep = _tour(("random", "random"), games=20, seed=1)
    games = rep["games"]
    # with shared per-seat seeds the two rotations of a deal would be mirror images
    mirrored = [games[i]["winners"] == games[i + 1]["winners"] for i in range(0, 20, 2)]
    assert not all(mirrored)


# -- fairness: seats, dragons, duplicate deals -------------------------------------------------------


def test_schedule_rotates_seats_and_dragons_fairly():
    for n_agents, n in ((2, 2), (3, 3), (4, 4), (4, 2), (3, 2)):
        jobs = evaluation.schedule.schedule(n_agents, n, games=24 * math.comb(n_agents, n) * n, seed=3)
        seat_count = Counter((a, s) for j in jobs for s, a in enumerate(j["seats"]))
        assert len(set(seat_count.values())) == 1 and len(seat_count) == n_agents * n
        dragon_count = Counter((a, j["dragons"][s]) for j in jobs for s, a in enumerate(j["seats"]))
        assert len(set(dragon_count.values())) == 1 and len(dragon_count) == n_agents * 4
        for j in jobs:
            assert len(set(j["dragons"])) == n and len(set(j["seats"])) == n
        # within a deal every rotation shares the seed and the dragons by seat
        for d in {j["deal"] for j in jobs}:
            same = [j for j in jobs if j["deal"] == d]
            assert len({j["seed"] for j in same}) == 1
            assert len({tuple(j["dragons"]) for j in same}) == 1
        assert [j["index"] for j in jobs] == list(range(len(jobs)))
    # who sits to whose left varies across deals at a 3+ player table
    jobs = evaluation.schedule.schedule(3, 3, games=6, seed=0)
    lefts = {(j["seats"][0], j["seats"][1]) for j in jobs}
    assert len(lefts) == 6


def test_duplicate_deals_replay_the_same_shuffles(monkeypatch):
    seen = []
    real = evaluation.tournament.play_game

    def spy(agents, seed, dragons=None, log=False, agent_ids=None):
        g = Game(len(agents), dragons, seed=seed)
        snap = g.snapshot()
        seen.append({"seed": seed, "dragons": list(dragons), "agents": [a.name for a in agents],
                     "deal": {k: snap[k] for k in ("havok_deck", "hijinks_deck", "current_player")}
                     | {"players": [{k: p[k] for k in ("dragon", "hand", "hoard")}
                                    for p in snap["players"]]}})
        return real(agents, seed, dragons=dragons, log=log, agent_ids=agent_ids)

    monkeypatch.setattr(evaluation.tournament, "play_game", spy)
    rep = _tour(("heuristic", "random", "random"), num_players=3, games=6, seed=5)
    assert len(seen) == 6
    for d in (0, 1):
        rot = seen[3 * d: 3 * d + 3]
        assert all(r["deal"] == rot[0]["deal"] for r in rot)  # same decks, hands, first player
        assert all(r["dragons"] == rot[0]["dragons"] for r in rot)
        # the agents really moved: each of them sat in each seat once
        firsts = [rep["games"][3 * d + r]["seats"] for r in range(3)]
        for s in range(3):
            assert sorted(f[s] for f in firsts) == [0, 1, 2]
    assert seen[0]["deal"]["havok_deck"] != seen[3]["deal"]["havok_deck"]  # other deal, other shuffle
    # and the engine really does deal by seed alone once the dragons are fixed
    a = Game(2, ["Ruby", "Pearl"], seed=99).snapshot()
    b = Game(2, ["Ruby", "Pearl"], seed=99).snapshot()
    assert a["havok_deck"] == b["havok_deck"] and a["players"] == b["players"]


# -- outputs --------------------------------------------------------------------------------------


def test_cli_writes_table_json_csv_and_plot(tmp_path, capsys):
    j, c, p = tmp_path / "r.json", tmp_path / "r.csv", tmp_path / "h2h.png"
    rc = evaluate.main(["--agents", "heuristic", "random", "--games", "4", "--seed", "2",
                        "--workers", "1", "--no-progress", "--json", str(j), "--csv", str(c),
                        "--plot", str(p)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "95% CI" in out and "heuristic" in out and "Head to head" in out
    data = json.loads(j.read_text())
    assert [a["spec"] for a in data["agents"]] == ["heuristic", "random"]
    for a in data["agents"]:
        for key in ("games", "wins", "draws", "win_rate", "ci95", "mean_hoard", "mean_turns",
                    "openskill"):
            assert key in a
        assert len(a["ci95"]) == 2
    rows = list(csv.DictReader(c.open()))
    assert [r["spec"] for r in rows] == ["heuristic", "random"]
    assert int(rows[0]["games"]) == 4
    assert p.stat().st_size > 1000 and p.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("write, name", [("write_json", "r.partial.json"), ("write_csv", "r.partial.csv"),
                                         ("plot_head_to_head", "h2h.partial.png")])
def test_outputs_are_written_whole_or_not_at_all(tmp_path, monkeypatch, torn_writes, write, name):
    pytest.importorskip("matplotlib")
    import os
    import stat
    path = tmp_path / name
    getattr(evaluation.report, write)(_tour(games=4), str(path))
    whole = path.read_bytes()
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # readable as any file, not private
    later = _tour(games=8)
    torn_writes()
    with pytest.raises(KeyboardInterrupt):
        getattr(evaluation.report, write)(later, str(path))
    # interrupted in the middle of the write: the earlier file is untouched, and nothing is left beside it
    assert path.read_bytes() == whole and os.listdir(tmp_path) == [name]
    monkeypatch.undo()
    getattr(evaluation.report, write)(later, str(path))
    assert path.read_bytes() != whole and os.listdir(tmp_path) == [name]


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, fragment", [
    (["--agents", "nonsense", "random"], "unknown agent 'nonsense'"),
    (["--agents", "random", "heuristic", "--players", "3"], "3 seats need at least 3 agents"),
    (["--agents", "random"], "at least 2 agents"),
    (["--agents", "random", "random", "--players", "5"], "--players must be 2, 3 or 4"),
    ([], "give --agents"),
])
def test_errors_are_one_line_with_exit_code_2(argv, fragment, capsys):
    assert evaluate.main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1


def test_unreadable_model_is_one_line(tmp_path, capsys):
    missing = tmp_path / "missing.zip"
    assert evaluate.main(["--agents", str(missing), "random", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "missing.zip" in err
    bad = tmp_path / "bad.zip"
    bad.write_text("not a model")
    assert evaluate.main(["--agents", str(bad), "random", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad.zip" in err


def test_corrupt_ledger_lines_are_skipped_and_reported(tmp_path, capsys):
    g = Game(2, ["Ruby", "Amber"], seed=4)
    actions = []
    while not g.is_over:
        a = g.legal_actions()[0]
        g.apply(a)
        actions.append(a)
    good = {"version": 1, "seed": 4, "options": g.options, "actions": actions,
            "seats": ["human:ann", "random"], "humans": [0], "agents": ["human:ann", "random"],
            "result": g.result, "turns": g.s.turn}
    lying = dict(good, result={**g.result, "winners": [1 - g.result["winners"][0]]})
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text(json.dumps(good) + "\n{not json\n" + json.dumps(lying) + "\n"
                      + json.dumps(good) + "\n" + '{"version": 1}')
    rc = evaluate.main(["--ledger", str(ledger), "--json", str(tmp_path / "s.json")])
    cap = capsys.readouterr()
    assert rc == 2
    assert "ann" in cap.out and "random" in cap.out and "3 corrupt line(s) skipped" in cap.out
    errs = cap.err.strip().splitlines()
    assert len(errs) == 3 and all("skipped a corrupt ledger line" in e for e in errs)
    assert ":2:" in errs[0] and ":3:" in errs[1] and ":5:" in errs[2]
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["matchups"][0]["games"] == 2 and s["matchups"][0]["opponent"] == "random"
    assert evaluate.main(["--ledger", str(tmp_path / "none.jsonl")]) == 2


def test_ledger_append_survives_a_torn_last_line(tmp_path):
    ledger = tmp_path / "sub" / "l.jsonl"
    ledger.parent.mkdir()
    ledger.write_text('{"version": 1, "seed": 3, "opt')  # a write cut short
    g = Game(2, ["Pearl", "Amber"], seed=3)
    actions = []
    while not g.is_over:
        actions.append(g.legal_actions()[-1])
        g.apply(actions[-1])
    evaluation.ledger.append_ledger(str(ledger), {"version": 1, "seed": 3, "options": g.options,
                                         "actions": actions, "seats": ["random", "human"],
                                         "humans": [1], "result": g.result, "turns": g.s.turn})
    entries, problems = evaluation.ledger.read_ledger(str(ledger))
    assert len(entries) == 1 and len(problems) == 1 and ":1:" in problems[0]


# -- the head-to-head plot ------------------------------------------------------------------------

LONG = ["models/experiments/2024-06-01/fire_ppo_seed0_distill10000.zip", "heuristic",
        "search:160:heuristic-picks", "models/experiments/2024-06-01/fire_ppo_seed1_distill10000.zip"]


def test_plot_labels_are_short_and_still_tell_agents_apart():
    short = evaluation.report.short_labels(LONG)
    assert short[1] == "heuristic"
    assert all(len(s) <= evaluation.report.PLOT_LABEL_WIDTH for s in short)
    assert len(set(short)) == 4 and "seed0" in short[0] and "seed1" in short[3]
    assert evaluation.report.short_labels(["models/fire.zip", "models/fire.zip#2", "random", "random#2"]) \
        == ["fire", "fire#2", "random", "random#2"]
    assert evaluation.report.short_labels(["models/fire.safetensors", "fire.safetensors#2", "pretrained:fire"]) \
        == ["fire", "fire#2", "pretrained:fire"]
    # the same file name in two folders keeps the folder; nothing else to go on: numbered
    assert evaluation.report.short_labels(["a/fire.zip", "b/fire.zip"]) == ["a/fire", "b/fire"]
    same = evaluation.report.short_labels(["x/" + "a" * 60 + ".zip", "y/" + "a" * 60 + ".zip"])
    assert len(set(same)) == 2


@pytest.mark.parametrize("k", [2, 4])
def test_plot_fits_its_title_and_labels_inside_the_figure(k):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    labels = LONG[:k]
    rep = {"config": {"players": 2, "games": 1200, "agents": labels},
           "head_to_head": {"agents": labels,
                            "win_rate": [[None if a == b else 0.5 for b in range(k)] for a in range(k)],
                            "games": [[0 if a == b else 100 for b in range(k)] for a in range(k)]}}
    fig = evaluation.report.head_to_head_figure(rep)
    fig.canvas.draw()
    box = fig.bbox
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    assert any("Head-to-head" in t.get_text() for t in texts)
    for t in texts:
        e = t.get_window_extent()
        assert box.x0 - 1 <= e.x0 and e.x1 <= box.x1 + 1 and box.y0 - 1 <= e.y0 and e.y1 <= box.y1 + 1, \
            t.get_text()
    plt.close(fig)


# -- which dragon plays -----------------------------------------------------------------------------


class _Trained:
    """Stands in for a loaded model: the heuristic's play with the ``meta`` a PolicyAgent carries."""

    def __init__(self, dragon: str, players: int):
        from agents.heuristic import HeuristicAgent
        self.bot = HeuristicAgent()
        self.name = f"trained-{dragon}"
        self.meta = {"dragon": dragon, "affinity": "?", "players": players, "env_version": "x"}

    def reset(self, seat, num_players, seed=None):
        self.bot.reset(seat, num_players, seed=seed)

    def act(self, observation, action_mask, view):
        return self.bot.act(observation, action_mask, view)


def _factory(spec, **kwargs):
    """``trained:DRAGON:PLAYERS`` is a model trained as DRAGON for PLAYERS; the rest as usual."""
    if spec.startswith("trained:"):
        _, dragon, players = spec.split(":")
        return _Trained(dragon, int(players))
    from agents import make_agent
    return make_agent(spec, **kwargs)


def _played(rep, agent):
    return Counter(g["dragons"][g["seats"].index(agent)] for g in rep["games"] if agent in g["seats"])


def test_a_trained_model_plays_its_dragon_and_the_others_rotate_over_the_rest():
    rep = _tour(("trained:Ruby:2", "heuristic"), games=48, factory=_factory)
    assert _played(rep, 0) == {"Ruby": 48}
    assert _played(rep, 1) == {"Obsidian": 16, "Amber": 16, "Pearl": 16}  # evenly, over 24 deals
    model = rep["agents"][0]
    assert (model["dragon"], model["dragon_source"]) == ("Ruby", "training")
    assert model["trained"] == {"dragon": "Ruby", "players": 2}
    assert model["off_training"] == {"games": 0, "other_dragon": 0, "other_players": 0}
    assert rep["agents"][1]["dragon"] is None and rep["agents"][1]["off_training"] is None
    assert rep["config"]["dragons"] == {"mode": "agents", "seats": None, "agents": ["Ruby", None]}
    # still duplicate: both rotations of a deal share the seed and give each agent its dragon
    for d in range(24):
        pair = rep["games"][2 * d: 2 * d + 2]
        assert pair[0]["seed"] == pair[1]["seed"] and pair[0]["seats"] == pair[1]["seats"][::-1]
        assert pair[0]["dragons"] == pair[1]["dragons"][::-1]
    text = evaluation.report.format_report(rep)
    assert "trained:Ruby:2 plays Ruby (as trained); the others rotate" in text
    assert "Win rate by dragon" in text and "OFF TRAINING" not in text
    row = next(line for line in text.splitlines() if line.startswith("heuristic") and "(16)" in line)
    assert row.count("(16)") == 3  # its split over the three dragons, in the printed table


def test_dragons_fixed_per_agent_and_per_seat():
    rep = _tour(("heuristic", "random", "random"), num_players=2, games=24, dragons=["random#2=darkness"])
    assert _played(rep, 2) == {"Obsidian": 16}
    assert "Obsidian" in _played(rep, 0) and "Obsidian" in _played(rep, 1)  # at the table without it
    for g in rep["games"]:
        assert len(set(g["dragons"])) == 2
    # a model told to rotate (SPEC=any) plays the other dragons too, once allowed
    rep = _tour(("trained:Ruby:2", "random"), games=8, factory=_factory, dragons=["trained:Ruby:2=any"],
                allow_off_training=True)
    assert len(_played(rep, 0)) > 1
    # per seat: the seat keeps its dragon and every agent plays it
    rep = _tour(("heuristic", "random"), games=8, dragons=["moonlight", "any"])
    assert all(g["dragons"][0] == "Pearl" and g["dragons"][1] != "Pearl" for g in rep["games"])
    assert _played(rep, 0)["Pearl"] == _played(rep, 1)["Pearl"] == 4
    assert rep["config"]["dragons"]["seats"] == ["Pearl", None]
    assert "Dragons by seat (--dragons): player_0 Pearl, player_1 rotates" in evaluation.report.format_report(rep)


def test_free_agents_meet_every_free_dragon_equally_often():
    import itertools
    for n_agents, n, fixed in ((4, 4, ["Ruby", None, None, None]), (4, 4, [None, "Pearl", "Ruby", None]),
                               (3, 3, [None, "Amber", None]), (4, 3, ["Ruby", None, None, "Pearl"]),
                               (3, 2, [None, "Ruby", None])):
        tables = list(itertools.combinations(range(n_agents), n))
        jobs = evaluation.schedule.schedule(n_agents, n, 24 * len(tables) * n, seed=3, fixed=fixed)
        for t, table in enumerate(tables):
            mine = [j for j in jobs if j["table"] == t]
            taken = {fixed[a] for a in table} - {None}
            for a in table:
                got = Counter(j["dragons"][j["seats"].index(a)] for j in mine)
                want = {fixed[a]} if fixed[a] else set(evaluation.schedule.dragon_names()) - taken
                assert set(got) == want and len(set(got.values())) == 1, (fixed, table, a, got)
            assert all(len(set(j["dragons"])) == n for j in mine)
    # with nobody fixed the dragons stay by seat within a deal, as they always did
    for j in evaluation.schedule.schedule(3, 3, 72, seed=1, fixed=[None] * 3):
        assert j["dragons"] == evaluation.schedule.deal_dragons(j["deal"], 3)


def test_workers_do_not_change_a_tournament_with_fixed_dragons():
    kw = dict(num_players=2, games=12, seed=5, dragons=["random#2=darkness", "heuristic=fire"])
    one = _tour(("heuristic", "random", "random"), workers=1, **kw)
    two = _tour(("heuristic", "random", "random"), workers=2, **kw)
    assert one == two and evaluation.report.format_report(one) == evaluation.report.format_report(two)


@pytest.mark.parametrize("specs, kw, fragment", [
    (("trained:Ruby:2", "trained:fire:2"), {}, "trained:Ruby:2 (trained as it) and trained:fire:2 (trained as it) "
                                              "are both to play Ruby and would meet at a table"),
    (("trained:Ruby:2", "heuristic"), {"dragons": ["heuristic=fire"]}, "are both to play Ruby"),
    (("trained:Ruby:2", "heuristic", "random"), {}, "trained:Ruby:2 was trained for 2 players, not 3; "
                                                    "add --allow-off-training"),
    (("trained:Ruby:2", "heuristic"), {"dragons": ["trained:Ruby:2=pearl"]},
     "trained:Ruby:2 was trained as Ruby but --dragons would have it play Pearl; add --allow-off-training"),
    (("trained:Ruby:2", "heuristic"), {"dragons": ["fire", "darkness"]},
     "trained:Ruby:2 was trained as Ruby but --dragons would have it play Obsidian"),
])
def test_a_model_off_its_training_or_two_on_one_dragon_is_refused(specs, kw, fragment):
    with pytest.raises(evaluation.EvalError) as e:
        _tour(specs, factory=_factory, **kw)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_a_model_off_its_training_when_allowed_is_flagged():
    rep = _tour(("trained:Ruby:2", "heuristic", "random"), games=6, factory=_factory,
                dragons=["trained:Ruby:2=sunlight"], allow_off_training=True)
    assert _played(rep, 0) == {"Amber": 6}
    assert rep["agents"][0]["off_training"] == {"games": 6, "other_dragon": 6, "other_players": 6}
    assert rep["agents"][1]["off_training"] is None
    text = evaluation.report.format_report(rep)
    assert "trained:Ruby:2 *" in text
    assert ("* OFF TRAINING (--allow-off-training): trained:Ruby:2 played 6 of its 6 games off what it "
            "was trained for: 6 as another dragon than Ruby and 6 with 3 players, not 2.") in text


@pytest.mark.parametrize("argv, fragment", [
    (["--dragons", "heuristic=gold"], "--dragons heuristic=gold: unknown dragon 'gold'; choose one of: fire (Ruby)"),
    (["--dragons", "fire"], "--dragons gives 1 dragon(s) for 2 seats"),
    (["--dragons", "fire", "ruby"], "--dragons gives Ruby to two seats"),
    (["--dragons", "fire", "random=pearl"], "--dragons mixes SPEC=DRAGON entries"),
    (["--dragons", "nobody=fire"], "'nobody' is not one of the agents (heuristic random)"),
    (["--dragons", "random=fire", "random=pearl"], "--dragons sets the dragon of random twice"),
    (["--dragons", "random=fire", "heuristic=Ruby"], "heuristic and random are both to play Ruby"),
])
def test_dragon_errors_are_one_line(argv, fragment, capsys):
    assert evaluate.main(["--agents", "heuristic", "random", "--no-progress", "--workers", "1"] + argv) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1


def test_csv_and_json_carry_the_dragon_split(tmp_path, capsys):
    c, j = tmp_path / "r.csv", tmp_path / "r.json"
    assert evaluate.main(["--agents", "heuristic", "random", "--games", "8", "--seed", "3", "--workers", "1",
                          "--no-progress", "--dragons", "heuristic=darkness", "--csv", str(c),
                          "--json", str(j)]) == 0
    rows = {r["label"]: r for r in csv.DictReader(c.open())}
    assert rows["heuristic"]["dragon"] == "Obsidian" and rows["random"]["dragon"] == "rotates"
    assert rows["heuristic"]["obsidian_games"] == "8" and rows["heuristic"]["ruby_games"] == "0"
    assert sum(int(rows["random"][f"{d.lower()}_games"]) for d in evaluation.schedule.dragon_names()) == 8
    assert rows["random"]["obsidian_games"] == "0"
    h = rows["heuristic"]
    assert float(h["obsidian_win_rate"]) == pytest.approx(int(h["obsidian_wins"]) / 8)
    data = json.loads(j.read_text())
    assert data["agents"][0]["by_dragon"]["Obsidian"]["games"] == 8
    assert data["config"]["dragons"]["agents"] == ["Obsidian", None]
    assert "Win rate by dragon" in capsys.readouterr().out


def test_a_saved_model_plays_its_dragon_whatever_the_workers(tmp_path, capsys):
    from model_files import write_model
    model = write_model(tmp_path / "ruby") + ".safetensors"  # trained as Ruby, for 2 players
    argv = ["--agents", model, "random", "--games", "8", "--seed", "4", "--no-progress"]
    reps = []
    for workers in ("1", "2"):
        assert evaluate.main(argv + ["--workers", workers, "--json", str(tmp_path / f"{workers}.json")]) == 0
        reps.append(json.loads((tmp_path / f"{workers}.json").read_text()))
    assert reps[0] == reps[1]
    assert all(g["dragons"][g["seats"].index(0)] == "Ruby" for g in reps[0]["games"])
    assert reps[0]["agents"][0]["dragon_source"] == "training"
    assert f"{model} plays Ruby (as trained)" in capsys.readouterr().out
    # at a table it was not trained for: refused, then allowed and flagged
    argv = ["--agents", model, "random", "heuristic", "--games", "3", "--seed", "4", "--no-progress",
            "--workers", "1"]
    assert evaluate.main(argv) == 2
    assert "was trained for 2 players, not 3; add --allow-off-training" in capsys.readouterr().err
    assert evaluate.main(argv + ["--allow-off-training"]) == 0
    assert "OFF TRAINING" in capsys.readouterr().out


def test_a_recorded_results_reward_is_the_games_own():
    # evaluation.results.reward (for ledger lines and arena games, which keep only the result)
    # gives what Game.rewards() gives, draws included
    import random

    from evaluation.results import outcome, reward

    kinds = set()
    for seed in [*range(100), 5756]:  # 5756: a four-player game two seats share
        g = Game(2 + seed % 3, seed=seed)
        rng = random.Random(seed)
        while not g.is_over:
            g.apply(rng.choice(g.legal_actions()))
        winners = g.result["winners"]
        assert [reward(winners, p) for p in range(g.num_players)] == g.rewards()
        kinds |= {outcome(winners, p) for p in range(g.num_players)}
    assert kinds == {"win", "draw", "loss"}
