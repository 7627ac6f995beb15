"""The arena's API through an in-process client: playing, storage, trespass, study design, results."""

from __future__ import annotations

import json
import random

import pytest

from arena_util import ADMIN, ADMIN_HEADERS, client, join, make_arena, play

import evaluate
import evaluation.ledger
from evaluation import luck
from arena import bots as arena_bots
from arena import ledger, payload, results
from arena.study import next_assignment, slot_position
from havok_env.engine import Game
from havok_env.render import choice_label
from havok_env.view import SeatView


@pytest.fixture
def arena(tmp_path):
    a = make_arena(f"sqlite:///{tmp_path}/arena.db")
    yield a
    a.store.close()


@pytest.fixture
def db_arena(db_url):
    """The arena on SQLite and on PostgreSQL (tests/conftest.py)."""
    a = make_arena(db_url)
    yield a
    a.store.close()


def replayed_payload(store, gid: int) -> dict:
    """The payload of the stored game, rebuilt from the database alone."""
    row = store.game(gid)
    g = Game(seed=row["seed"], log=True, **row["options"])
    for a in store.actions(gid):
        g.apply(a)
    n = row["options"]["num_players"]
    labels = ["you" if p == row["human_seat"] else "Opponent A" for p in range(n)]  # blinded
    return payload.seat_payload(SeatView(g, row["human_seat"]), labels)


def test_a_whole_game_every_decision_stored_before_the_next_is_shown(db_arena):
    arena = db_arena
    with client(arena) as c:
        h = join(c, "ann")
        state = c.post("/api/games", headers=h).json()
        rng = random.Random(1)
        shown = 0
        while not state["over"]:
            keys = ("table", "decision", "log", "result")
            # what the page shows is exactly what the database replays to
            assert {k: state[k] for k in keys} == replayed_payload(arena.store, state["game"])
            assert [c["label"] for c in state["decision"]["choices"]] == \
                [choice_label(SeatView(arena.live[state["game"]].game, state["seat"]), c["action"])
                 for c in state["decision"]["choices"]]
            state = play(c, h, state, rng, moves=1)
            shown += 1
        row = arena.store.game(state["game"])
        assert row["status"] == "finished" and row["result"]["winners"] == state["result"]["winners"]
        assert state["result"]["verdict"] in ("You win!", "You lose.", "A draw: you share the lead.")
        assert shown >= 3
        me = c.get("/api/me", headers=h).json()
        assert me["finished"] == 1 and me["history"][0]["game"] == state["game"]


def test_bot_moves_come_as_frames_one_per_change_of_the_log(arena):
    with client(arena) as c:
        h = join(c, "ben")
        state = c.post("/api/games", headers=h).json()
        state = play(c, h, state, random.Random(2), moves=3)
        for f in state["frames"]:
            assert f["log"] and set(f["table"]) == set(state["table"])
        assert sum(len(f["log"]) for f in state["frames"]) == len(state["log"]) - state["news_from"]


def test_trespass_forged_tokens_and_admin_pages(arena):
    with client(arena) as c:
        a, b = join(c, "ann"), join(c, "bob")
        game = c.post("/api/games", headers=a).json()
        gid, step = game["game"], game["step"]
        action = game["decision"]["choices"][0]["action"]
        assert c.get(f"/api/games/{gid}", headers=b).status_code == 404
        r = c.post(f"/api/games/{gid}/act", headers=b, json={"step": step, "action": action})
        assert r.status_code == 404 and "no game" in r.json()["detail"]
        forged = {"Authorization": "Bearer " + "x" * 43}
        assert c.get(f"/api/games/{gid}", headers=forged).status_code == 401
        assert c.get(f"/api/games/{gid}").status_code == 401
        assert c.post("/api/games", headers=forged).status_code == 401
        assert arena.store.actions(gid) == []  # none of that changed the game
        for path in ("/api/admin/results", "/api/admin/export", f"/api/admin/games/{gid}/replay"):
            assert c.get(path).status_code == 403
            assert c.get(path, headers=a).status_code == 403
            assert c.get(path + "?token=wrong").status_code == 403
        assert c.get("/api/admin/results", headers=ADMIN_HEADERS).status_code == 200
        assert c.get(f"/api/admin/results?token={ADMIN}").status_code == 200


def test_stale_and_illegal_actions_are_refused_and_change_nothing(db_arena):
    arena = db_arena
    with client(arena) as c:
        h = join(c, "cat")
        state = c.post("/api/games", headers=h).json()
        gid = state["game"]
        legal = {ch["action"] for ch in state["decision"]["choices"]}
        illegal = next(a for a in range(76) if a not in legal)
        r = c.post(f"/api/games/{gid}/act", headers=h, json={"step": state["step"], "action": illegal})
        assert r.status_code == 422 and "not one of this decision's choices" in r.json()["detail"]
        r = c.post(f"/api/games/{gid}/act", headers=h, json={"step": "two", "action": 0})
        assert r.status_code == 422 and r.json()["detail"].startswith("bad request: step")
        assert c.get(f"/api/games/{gid}", headers=h).json() == state
        after = play(c, h, state, random.Random(3), moves=1)
        stored = arena.store.actions(gid)
        # answering the old decision again (a double click, a second tab) is stale
        again = state["decision"]["choices"][0]["action"]
        r = c.post(f"/api/games/{gid}/act", headers=h, json={"step": state["step"], "action": again})
        if not after["over"]:
            assert r.status_code == 409 and "stale action" in r.json()["detail"]
        assert arena.store.actions(gid) == stored


def test_tokens_are_unguessable_and_only_their_hash_is_stored(arena, tmp_path):
    with client(arena) as c:
        tokens = {join(c, f"p{i}")["Authorization"][7:] for i in range(5)}
    assert len(tokens) == 5 and all(len(t) >= 43 for t in tokens)
    raw = (tmp_path / "arena.db").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("arena.db-*"))
    assert not any(t.encode() in raw for t in tokens)


def test_join_needs_consent_and_a_fair_pseudonym(arena):
    with client(arena) as c:
        assert c.post("/api/join", json={"pseudonym": "dee"}).status_code == 422
        assert c.post("/api/join", json={"pseudonym": "<script>", "consent": True}).status_code == 422
        join(c, "dee")
        r = c.post("/api/join", json={"pseudonym": "dee", "consent": True})
        assert r.status_code == 409 and "taken" in r.json()["detail"]
        # an invitation link: consent is asked on the page before the first game
        inv = c.post("/api/admin/invite", headers=ADMIN_HEADERS, json={"pseudonym": "eve"}).json()
        h = {"Authorization": "Bearer " + inv["token"]}
        assert c.get("/api/me", headers=h).json()["consented"] is False
        assert c.post("/api/games", headers=h).status_code == 403
        assert c.post("/api/consent", headers=h).status_code == 200
        assert c.post("/api/games", headers=h).status_code == 200


def test_games_per_person_and_results_ranking(tmp_path):
    arena = make_arena(f"sqlite:///{tmp_path}/arena.db", games=2)
    with client(arena) as c:
        rng = random.Random(4)
        for who in ("ann", "bob"):
            h = join(c, who)
            for _ in range(2):
                play(c, h, c.post("/api/games", headers=h).json(), rng)
            r = c.post("/api/games", headers=h)
            assert r.status_code == 409 and "all 2 games" in r.json()["detail"]
        res = c.get("/api/admin/results", headers=ADMIN_HEADERS).json()
    arena.store.close()
    bots = {r["bot"]: r for r in res["bots"]}
    assert bots["heuristic"]["human_games"] == bots["random"]["human_games"] == 2
    assert [r["rank"] for r in res["bots"]] == [1, 2]
    assert res["bots"][0]["human_win_rate"] <= res["bots"][1]["human_win_rate"]
    for r in bots.values():
        lo, hi = r["ci95"]
        assert 0 <= lo <= r["human_win_rate"] <= hi <= 1
    assert {p["participant"] for p in res["participants"]} == {"ann", "bob"}
    assert all(len(p["history"]) == 2 for p in res["participants"])
    assert {r["name"] for r in res["ratings"]} == {"human:ann", "human:bob", "heuristic", "random"}


def test_study_design_rotates_bots_pairs_deals_rotates_seats_and_never_repeats_a_deal():
    bots, players = ["a", "b", "c"], 2
    taken = []
    rng = random.Random(0)
    people = list(range(12))
    for _round in range(4):  # 12 participants, 4 games each, arriving in a shuffled order
        rng.shuffle(people)
        for pid in people:
            bot, slot, deal, seat = next_assignment(bots, players, taken, pid)
            assert (deal, seat) == slot_position(slot, players)
            taken.append((bot, slot, deal, pid))
            counts = [sum(t[0] == b for t in taken) for b in bots]
            assert max(counts) - min(counts) <= 1
    for pid in people:
        deals = [t[2] for t in taken if t[3] == pid]
        assert len(deals) == len(set(deals)) == 4
        assert len({t[0] for t in taken if t[3] == pid}) >= 2
    per_bot = {b: {(t[2], t[1] % players) for t in taken if t[0] == b} for b in bots}
    assert per_bot["a"] == per_bot["b"] == per_bot["c"]  # the same deals, from the same seats
    full = {d for d, _ in per_bot["a"] if all((d, s) in per_bot["a"] for s in range(players))}
    assert len(full) >= 6


def test_a_restarted_server_resumes_games_and_finishes_owed_bot_moves(db_url):
    url = db_url
    first = make_arena(url)
    with client(first) as c:
        h = join(c, "ann")
        state = play(c, h, c.post("/api/games", headers=h).json(), random.Random(5), moves=2)
    gid = state["game"]
    # the human's decision reached the database, the bots' answer did not (killed in between)
    row = first.store.game(gid)
    g = Game(seed=row["seed"], **row["options"])
    for a in first.store.actions(gid):
        g.apply(a)
    first.store.add_actions(gid, len(first.store.actions(gid)), [(g.to_act, g.legal_actions()[0])])
    first.store.close()
    second = make_arena(url)
    with client(second) as c:
        resumed = c.get(f"/api/games/{gid}", headers=h).json()
        assert second.resumed == 1
        assert {k: resumed[k] for k in ("table", "decision", "log")} == \
            {k: v for k, v in replayed_payload(second.store, gid).items() if k != "result"}
        assert resumed["step"] == state["step"] + 1
        play(c, h, resumed, random.Random(6))
    assert second.store.game(gid)["status"] == "finished"


@pytest.mark.parametrize("seed, players", [(12, 3), (48, 2), (56, 2)])
def test_a_bot_rebuilt_from_the_record_plays_on_as_if_it_had_never_stopped(seed, players):
    """The heuristic remembers the stake of its last play; a worker that lost the game (a restart)
    must restore that by asking it again at its past decisions. On these deals a bot rebuilt
    without its memory plays differently."""
    options = {"num_players": players, "dragons": None}

    def run(drop_every: int | None):
        arena_bots._SESSIONS.clear()
        g = Game(seed=seed, **options)
        acts, key, r = [], ("heuristic", "g"), random.Random(seed)
        while not g.is_over:
            if g.to_act == 0:
                a = r.choice(g.legal_actions())
                g.apply(a)
                acts.append(a)
                continue
            if drop_every and len(acts) % drop_every == 0:
                arena_bots._SESSIONS.clear()  # a restarted worker knows nothing
            for a in arena_bots.bot_moves(key, "heuristic", seed, options, 0, acts):
                g.apply(a)
                acts.append(a)
        return acts

    assert run(None) == run(1) == run(3)


def test_ledger_export_reads_in_evaluate_and_imports_back(db_arena, tmp_path, capsys):
    arena = db_arena
    with client(arena) as c:
        rng = random.Random(8)
        for who in ("ann", "bob"):
            h = join(c, who)
            play(c, h, c.post("/api/games", headers=h).json(), rng)
        text = c.get("/api/admin/export", headers=ADMIN_HEADERS).text
    path = tmp_path / "export.jsonl"
    path.write_text(text)
    entries, problems = evaluation.ledger.read_ledger(str(path))  # the terminal's ledger reader replays them
    assert len(entries) == 2 and problems == []
    assert {e["seats"][e["humans"][0]] for e in entries} == {"human:ann", "human:bob"}
    summary = evaluation.ledger.summarise_ledger(entries)
    assert sum(h["games"] for h in summary["humans"]) == 2

    other = make_arena(f"sqlite:///{tmp_path}/other.db")
    corrupt = json.loads(text.splitlines()[0])
    corrupt["result"].update(scores=[99, 0], winners=[0])  # fits the schema; only the replay tells
    body = text + "{not json\n" + json.dumps(corrupt) + "\n"
    with client(other) as c:
        r = c.post("/api/admin/import", headers=ADMIN_HEADERS, content=body.encode()).json()
        assert r["imported"] == 2 and len(r["skipped"]) == 2
        assert "does not reproduce" in r["skipped"][1]
        again = c.post("/api/admin/import", headers=ADMIN_HEADERS, content=text.encode()).json()
        assert again == {"imported": 0, "already_there": 2, "skipped": []}
        res = c.get("/api/admin/results", headers=ADMIN_HEADERS).json()
    assert res["games_finished"] == 2
    ours = {(e["seed"], tuple(e["actions"])) for e in entries}
    theirs = {(e["seed"], tuple(e["actions"])) for e in ledger.export_entries(other.store)}
    assert ours == theirs
    other.store.close()


def test_a_terminal_ledger_imports(tmp_path):
    """Games a person played at the terminal (evaluate.py's ledger) join the study's results."""
    from agents import make_agent
    from agents.runner import play_game

    lines = []
    for seed in range(3):
        rec = play_game([make_agent("random"), make_agent("heuristic")], seed)
        lines.append(json.dumps({"version": 1, "seed": rec["seed"], "options": rec["options"],
                                 "actions": rec["actions"], "seats": ["human:zoe", "heuristic"],
                                 "humans": [0], "agents": ["human:zoe", "heuristic"],
                                 "result": rec["result"], "turns": rec["turns"]}))
    a = make_arena(f"sqlite:///{tmp_path}/a.db")
    out = ledger.import_text(a.store, "\n".join(lines))
    assert out["imported"] == 3
    s = results.summary(a.store, a.study)
    rows = {r["bot"]: r for r in s["bots"]}
    assert rows["heuristic"]["human_games"] == 3
    # the humans' score against the bot, raw and luck corrected from each game's replay (the
    # person's decisions uncorrected), each with its interval, on the page and in the text summary
    from training.stats import mean_ci
    from evaluation.luck import corrected_rewards
    recs = [json.loads(line) for line in lines]
    want = mean_ci([corrected_rewards(r, ["human", "heuristic"])[0] for r in recs])
    got = rows["heuristic"]
    assert [got["corrected_human_score"], *got["corrected_human_ci95"]] == pytest.approx([want[0], *want[1]])
    assert got["human_score"] == pytest.approx(sum(Game.replay(r).rewards()[0] for r in recs) / 3)
    assert "corrected" in results.format_summary(s, "sqlite://")
    a.store.close()


def test_replays_step_through_every_decision_with_every_card(arena):
    with client(arena) as c:
        h = join(c, "ann")
        state = play(c, h, c.post("/api/games", headers=h).json(), random.Random(9))
        gid = state["game"]
        rep = c.get(f"/api/admin/games/{gid}/replay", headers=ADMIN_HEADERS).json()
    acts = arena.store.actions(gid)
    assert len(rep["steps"]) == len(acts) + 1
    assert [s["decision"]["chosen"] for s in rep["steps"][:-1]] == acts
    first = rep["steps"][0]["table"]
    assert all(len(p["hand"]) == 3 for p in first["players"])
    cards = sum(len(p["hand"]) + len(p["hoard"]) for p in first["players"]) \
        + len(first["havok_order"]) + len(first["hijinks_order"])
    assert cards == 80
    assert rep["result"]["winners"] == state["result"]["winners"]
    assert rep["labels"][state["seat"]] == "human:ann"


@pytest.mark.parametrize("argv, fragment", [
    (["--serve"], "--serve needs the bots of the study"),
    (["--serve", "--agents", "human", "heuristic"], "the humans come through the browser"),
    (["--serve", "--agents", "heuristic", "heuristic"], "names a bot twice"),
    (["--serve", "--agents", "heuristic", "--players", "5"], "--players must be 2, 3 or 4"),
    (["--serve", "--agents", "nonsense"], "unknown agent 'nonsense'"),
    (["--serve", "--agents", "heuristic", "--db", "nosuch://x"], "cannot open"),
    (["--serve", "--agents", "heuristic", "--consent", "/no/such/file"], "cannot read the consent text"),
    (["--ledger", "sqlite:////no/such/arena.db"], "no arena database"),
])
def test_arena_options_errors_are_one_line(argv, fragment, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default database would go to ./results
    assert evaluate.main(argv + ["--port", "0"]) == 2  # any free port: the port is taken first
    err = capsys.readouterr().err.strip()
    assert fragment in err and "\n" not in err and err.startswith("evaluate.py: error:")


def test_a_database_keeps_its_study(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/a.db"
    make_arena(url, agents=("heuristic", "random"), seed=5).store.close()
    assert evaluate.main(["--serve", "--agents", "random", "--db", url, "--port", "0"]) == 2
    assert "holds a study of heuristic random" in capsys.readouterr().err
    assert evaluate.main(["--serve", "--agents", "heuristic", "random", "--seed", "6", "--db", url,
                          "--port", "0"]) == 2
    assert "seed 5, not 6" in capsys.readouterr().err


def test_evaluate_summarises_an_arena_database(arena, tmp_path, capsys, monkeypatch):
    with client(arena) as c:
        rng = random.Random(10)
        for who in ("ann", "bob"):
            h = join(c, who)
            play(c, h, c.post("/api/games", headers=h).json(), rng)
    url = arena.store.url
    assert evaluate.main(["--ledger", url, "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "2 finished game(s)" in out and "human win rate" in out and "95% CI" in out
    assert "OpenSkill" in out and "human:ann" in out and "heuristic" in out
    data = json.loads((tmp_path / "s.json").read_text())
    assert sum(b["human_games"] for b in data["bots"]) == 2
    # the luck correction one event deeper: each game's corrected reward is analyse's with it
    assert evaluate.main(["--ledger", url, "--deeper", "0.5", "--json", str(tmp_path / "d.json")]) == 0
    deep = json.loads((tmp_path / "d.json").read_text())
    acts = arena.store.all_actions()
    for g, row in zip(sorted(arena.store.games(status="finished"), key=lambda g: (g["finished"] or "", g["id"])),
                      deep["games"]):
        policies = ["human" if p == g["human_seat"] else g["bot"] for p in range(g["options"]["num_players"])]
        rec = {"seed": g["seed"], "options": g["options"], "actions": acts[g["id"]]}
        assert row["corrected"] == pytest.approx(luck.analyse(rec, policies, deeper=0.5).corrected[g["human_seat"]])
    assert [r["corrected"] for r in deep["games"]] != [r["corrected"] for r in data["games"]]
    # corrected in two processes before a summary reads them, which then corrects none again
    from arena import results
    results._CACHE.clear()
    results.correct_finished(arena.store, 0.5, workers=2, progress=False)
    monkeypatch.setattr(luck, "corrected_or_none", None)
    assert [g["corrected"] for g in results.finished_games(arena.store, 0.5)] == [r["corrected"] for r in deep["games"]]


def test_the_summary_json_is_written_whole_or_not_at_all(arena, tmp_path, monkeypatch, torn_json):
    import io

    from arena import ledger_summary
    folder = tmp_path / "out"
    path = folder / "s.json"
    assert ledger_summary(arena.store.url, str(path), out=io.StringIO()) == 0
    whole = path.read_bytes()
    with client(arena) as c:  # a finished game: the next summary differs
        h = join(c, "ann")
        play(c, h, c.post("/api/games", headers=h).json(), random.Random(3))
    torn_json()
    with pytest.raises(KeyboardInterrupt):
        ledger_summary(arena.store.url, str(path), out=io.StringIO())
    assert path.read_bytes() == whole and [p.name for p in folder.iterdir()] == ["s.json"]
    monkeypatch.undo()
    assert ledger_summary(arena.store.url, str(path), out=io.StringIO()) == 0
    assert path.read_bytes() != whole and json.loads(path.read_text())


def test_the_arena_imports_only_what_the_ledger_checker_accepts(tmp_path):
    """One checker: a line evaluate.py --ledger refuses is refused by the arena's import too."""
    from agents import make_agent
    from agents.runner import play_game

    rec = play_game([make_agent("random"), make_agent("heuristic")], 3)
    good = {"version": 1, "seed": rec["seed"], "options": rec["options"], "actions": rec["actions"],
            "seats": ["human:zoe", "heuristic"], "humans": [0], "result": rec["result"], "turns": rec["turns"]}
    bad = [{**good, "humans": [True], "seats": ["heuristic", "human:zoe"]},  # true is no seat
           {k: v for k, v in good.items() if k != "version"},
           {**good, "turns": rec["turns"] + 1}]
    a = make_arena(f"sqlite:///{tmp_path}/a.db")
    out = ledger.import_text(a.store, "\n".join(json.dumps(e) for e in [*bad, good]))
    assert out["imported"] == 1 and len(out["skipped"]) == 3
    for got, e in zip(out["skipped"], bad):
        with pytest.raises(evaluation.ledger.LedgerLineError) as why:
            evaluation.ledger.check_ledger_entry(e)
        assert str(why.value)[:100] in got
    a.store.close()


def test_the_command_line_exports_and_imports(arena, tmp_path, capsys, monkeypatch, torn_writes):
    from arena.__main__ import main

    with client(arena) as c:
        h = join(c, "ann")
        play(c, h, c.post("/api/games", headers=h).json(), random.Random(11))
    out = tmp_path / "l.jsonl"
    out.write_text("an earlier export\n")
    torn_writes()  # an export stopped halfway leaves the earlier file, and nothing beside it
    with pytest.raises(KeyboardInterrupt):
        main(["export", "--db", arena.store.url, "--out", str(out)])
    assert out.read_text() == "an earlier export\n" and [p.name for p in tmp_path.glob("l.jsonl*")] == ["l.jsonl"]
    monkeypatch.undo()
    assert main(["export", "--db", arena.store.url, "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1
    url = f"sqlite:///{tmp_path}/copy.db"
    assert main(["import", "--db", url, str(out)]) == 0
    assert "1 game(s) imported" in capsys.readouterr().out
    assert main(["import", "--db", url, str(tmp_path / "none.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_pages_are_served_by_the_server_with_a_strict_content_policy(arena):
    with client(arena) as c:
        for path, marker in (("/", "index.js"), ("/p/sometoken", "play.js"), ("/admin", "admin.js"),
                             ("/admin/replay/1", "replay.js"), ("/static/style.css", "--accent")):
            r = c.get(path)
            assert r.status_code == 200 and marker in r.text, path
            assert "default-src 'self'" in r.headers["content-security-policy"]
            assert r.headers["referrer-policy"] == "no-referrer"  # tokens live in page links
        assert "<script>" not in c.get("/p/x").text  # no inline script: the policy forbids it


def test_the_console_never_shows_a_database_password():
    from arena import shown_url

    assert shown_url("postgresql://ann:s3cret@db.example/arena") == "postgresql://ann:***@db.example/arena"
    assert shown_url("sqlite:///results/arena.db") == "sqlite:///results/arena.db"
