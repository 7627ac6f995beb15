"""Running a study: the study file and its errors, the recruitment hand-off, consent versions,
questionnaires and attention checks, the tutorial, practice games, blinding, the exports with
decision times, withdrawals, the request size limit and the admin token."""

from __future__ import annotations

import csv
import io
import json
import random
import re
import socket
from pathlib import Path

import pytest

from arena_util import ADMIN, ADMIN_HEADERS, ROOT, client, join, make_arena, play

import arena as arena_pkg
import evaluate
from arena import export, ledger
from arena.app import Arena
from arena.bots import BotPool
from arena.store import Store, meta
from arena.study import STAGES, TUTORIAL, Study, StudyFileError, load_study_file
from arena.tutorial import GOALS, simulate
from evaluation import luck

EXAMPLE = ROOT / "examples" / "study.toml"

STUDY = """
title = "A test study"
bots = ["heuristic", "random"]
players = 2
seed = 5
games_per_person = 1
[consent]
version = "v7"
text = "Consent text."
[instructions]
text = "How to play."
tutorial = true
practice_games = 1
practice_bot = "random"
[recruitment]
require_id = true
completion_code = "CODE42"
redirect_url = "https://app.prolific.com/submissions/complete?cc={code}"
[blinding]
reveal_at_end = true
[[questions.before]]
id = "age"
text = "How old are you?"
type = "number"
min = 18
max = 99
[[questions.after_game]]
id = "skill"
text = "How skilled was {opponent}?"
type = "likert"
scale = 7
[[questions.end]]
id = "attention"
text = "Choose 'Often'."
type = "choice"
options = ["Never", "Often"]
expect = "Often"
"""


def write(tmp_path, text: str) -> str:
    path = tmp_path / "study.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("text, fragment", [
    ("bots = ['heuristic']\nplayer = 2", "player: unknown field (the fields here: blinding, bots,"),
    ("bots = 'heuristic'", "bots: must be a list"),
    ("bots = ['heuristic', 'heuristic']", "bots: names an entry twice"),
    ("players = 5", "players: must be"),
    ("games_per_person = 0", "games_per_person: must be at least 1"),
    ("[consent]\nversion = ''", "consent.version: must be 1 to 64 characters"),
    ("[consent]\ntext = 3", "consent.text: must be a string, not 3"),
    ("[instructions]\npractice_games = 11", "instructions.practice_games: must be 0 to 10"),
    ("[instructions]\ntutorial = 'yes'", "instructions.tutorial: must be true or false"),
    ("[recruitment]\nid_parameter = 'PROLIFIC PID'", "is not a URL parameter name"),
    ("[recruitment]\nredirect_url = 'app.prolific.com/x'", "recruitment.redirect_url: must be an http"),
    ("[recruitment]\nredirect_url = 'https://x.org/?cc={code}'", "uses {code} but no completion_code"),
    ("[recruitment]\ncompletion_code = 'a b'", "recruitment.completion_code: up to 64"),
    ("[blinding]\nblind = true", "blinding.blind: unknown field"),
    ("[[questions.middle]]\nid = 'x'", "questions.middle: unknown field"),
    ("[[questions.before]]\nid = 'Age'\ntext = '?'\ntype = 'text'", "questions.before[0].id: each question"),
    ("[[questions.before]]\nid = 'age'\ntext = '?'\ntype = 'slider'", "questions.before[0] (age).type: must be one of"),
    ("[[questions.before]]\nid = 'a'\ntext = '?'\ntype = 'likert'\nscale = 12", "a Likert scale has 2 to 11 points"),
    ("[[questions.before]]\nid = 'a'\ntext = '?'\ntype = 'text'\noptions = ['x']",
     "(a).options: not a field of a text question"),
    ("[[questions.end]]\nid = 'a'\ntext = '?'\ntype = 'choice'\noptions = ['x', 'y']\nexpect = 'z'",
     "(a).expect: 'z' is not an answer to the question (choose one of: x, y)"),
    ("[[questions.end]]\nid = 'a'\ntext = '?'\ntype = 'text'\n[[questions.end]]\nid = 'a'\ntext = '!'\ntype = 'text'",
     "questions.end: the id 'a' is used twice"),
    ("title = 'x'\ntitle = 'y'", "not valid TOML"),
])
def test_a_study_file_error_names_the_field_and_the_problem(tmp_path, text, fragment):
    path = write(tmp_path, text)
    with pytest.raises(StudyFileError) as e:
        load_study_file(path)
    assert str(e.value).startswith(path + ": ") and fragment in str(e.value), str(e.value)


def test_the_command_line_reports_a_bad_study_file_in_one_line(tmp_path, capsys):
    path = write(tmp_path, "[recruitment]\nredirect_url = 7")
    rc = evaluate.main(["--serve", "--study", path, "--db", f"sqlite:///{tmp_path}/a.db",
                        "--port", "0"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert "recruitment.redirect_url: must be a string, not 7" in err
    rc = evaluate.main(["--serve", "--study", str(tmp_path / "no.toml"), "--port", "0"])
    assert rc == 2 and "cannot read the study file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [tmp_path / "study.toml"]  # nothing made: no token file, no database


def test_the_example_study_file_runs_and_every_field_is_documented():
    fields = load_study_file(str(EXAMPLE))
    study = Study(**fields, seed=1)
    assert study.redirect() == "https://app.prolific.com/submissions/complete?cc=C1A2B3C4"
    assert study.require_id and study.tutorial and study.practice_games == 1 and study.blind
    assert [q["id"] for q in study.stage("after_game")] == ["skill", "humanlike", "enjoyment"]
    doc = (ROOT / "docs" / "studies.md").read_text(encoding="utf-8")
    from arena.study import _QUESTION_KEYS, _SECTIONS, _TOP
    keys = set(_TOP) - set(_SECTIONS) - {"questions"}
    keys |= {f"{s}.{k}" for s, ks in _SECTIONS.items() for k in ks} | set(_QUESTION_KEYS)
    missing = [k for k in sorted(keys) if f"`{k}`" not in doc]
    missing += [f"[{s}]" for s in _SECTIONS if f"### `[{s}]`" not in doc]
    missing += [f"[[questions.{s}]]" for s in STAGES if f"`[[questions.{s}]]`" not in doc]
    assert not missing, f"docs/studies.md does not document {missing}"


def test_the_tutorial_deal_reaches_every_goal_by_following_the_coach():
    n = simulate(TUTORIAL["seed"], TUTORIAL["bot"], TUTORIAL["seat"], TUTORIAL["players"])
    assert n is not None and n <= 6


@pytest.fixture
def study_arena(tmp_path, db_url):
    store = Store(db_url)  # SQLite and PostgreSQL (tests/conftest.py)
    study = arena_pkg.make_study(store, None, None, None, None, None,
                                 arena_pkg.study_file(write(tmp_path, STUDY)))
    a = Arena(study, store, BotPool(study.bot_specs(), inline=True), admin_token=ADMIN)
    yield a
    store.close()


def finish(c, h, state, rng, seen: list) -> dict:
    """Play to the end of a game, the coach's suggestion first where there is one."""
    while not state["over"]:
        tut = state.get("tutorial")
        if tut and tut["done"]:
            return state
        suggest = tut["suggest"] if tut else None
        action = suggest if suggest is not None else rng.choice(state["decision"]["choices"])["action"]
        r = c.post(f"/api/games/{state['game']}/act", headers=h,
                   json={"step": state["step"], "action": action, "think_ms": 1234})
        assert r.status_code == 200, r.text
        state = r.json()
        seen.append(r.text)
    return state


def test_a_whole_study_from_a_recruitment_link_to_the_completion_code(study_arena):
    rng = random.Random(0)
    seen: list[str] = []  # every answer a participant's page got
    with client(study_arena) as c:
        assert c.post("/api/join", json={"pseudonym": "x", "consent": True}).status_code == 403
        r = c.post("/api/enter", json={"params": {"STUDY_ID": "s1"}})
        assert r.status_code == 422 and "PROLIFIC_PID" in r.json()["detail"]
        params = {"PROLIFIC_PID": "5f00aa11bb22", "STUDY_ID": "s1", "SESSION_ID": "x9", "other": "no"}
        entered = c.post("/api/enter", json={"params": params}).json()
        h = {"Authorization": "Bearer " + entered["token"]}
        assert entered["returning"] is False
        me = lambda: c.get("/api/me", headers=h).json()  # noqa: E731
        assert me()["step"] == {"step": "consent"}
        assert c.post("/api/games", headers=h).status_code == 403
        r = c.post("/api/consent", headers=h, json={"version": "v6"})
        assert r.status_code == 409 and "consent text has changed" in r.json()["detail"]
        assert c.post("/api/consent", headers=h, json={"version": "v7"}).status_code == 200
        step = me()
        assert step["step"] == {"step": "questions", "stage": "before", "game": 0}
        assert [q["id"] for q in step["questions"]] == ["age"]
        assert c.post("/api/games", headers=h).status_code == 409
        for bad, why in (({"age": "17"}, "must be from 18 to 99"), ({"age": "old"}, "a whole number"),
                         ({}, "an answer is needed"), ({"age": "30", "x": "1"}, "no question 'x'")):
            r = c.post("/api/answers", headers=h, json={"stage": "before", "answers": bad})
            assert r.status_code == 422 and why in r.json()["detail"], r.text
        assert c.post("/api/answers", headers=h, json={"stage": "before", "answers": {"age": 30}}).status_code == 200
        assert c.post("/api/answers", headers=h, json={"stage": "before", "answers": {"age": 30}}).status_code == 409
        # the tutorial: the coach leads to every goal
        assert me()["step"] == {"step": "tutorial", "game": None}
        state = c.post("/api/games", headers=h).json()
        assert state["kind"] == "tutorial" and [g["goal"] for g in state["tutorial"]["goals"]] == list(GOALS)
        state = finish(c, h, state, rng, seen)
        assert state["tutorial"]["done"] and all(g["done"] for g in state["tutorial"]["goals"])
        # a device that comes back through the recruitment link lands on the same step
        again = c.post("/api/enter", json={"params": {"PROLIFIC_PID": "5f00aa11bb22"}}).json()
        h2 = {"Authorization": "Bearer " + again["token"]}
        assert again["returning"] and again["token"] != entered["token"]
        assert c.get("/api/me", headers=h2).json()["step"]["step"] == "practice"
        practice = c.post("/api/games", headers=h2).json()
        assert practice["kind"] == "practice" and practice["practice"] == {"number": 1, "of": 1}
        assert all(p["who"] in ("you", "practice opponent") for p in practice["table"]["players"])
        finish(c, h, practice, rng, seen)  # the first device plays it on
        assert me()["step"] == {"step": "game", "game": None, "number": 1, "of": 1}
        game = c.post("/api/games", headers=h).json()
        assert game["kind"] == "game"
        assert {p["who"] for p in game["table"]["players"]} == {"you", "Opponent A"}
        seen.append(json.dumps(game))
        game = finish(c, h, game, rng, seen)
        step = me()
        assert step["step"] == {"step": "questions", "stage": "after_game", "game": game["game"],
                                "opponent": "Opponent A"}
        assert c.post("/api/games", headers=h).status_code == 409
        r = c.post("/api/answers", headers=h, json={"stage": "after_game", "game": game["game"],
                                                    "answers": {"skill": "8"}})
        assert r.status_code == 422 and "from 1 to 7" in r.json()["detail"]
        assert c.post("/api/answers", headers=h, json={"stage": "after_game", "game": game["game"],
                                                       "answers": {"skill": "6"}}).status_code == 200
        step = me()
        assert step["step"]["stage"] == "end" and "expect" not in step["questions"][0]
        r = c.post("/api/answers", headers=h, json={"stage": "end", "answers": {"attention": "Never"}})
        assert r.status_code == 200
        done = me()
        seen.append(json.dumps(done))
        bot = study_arena.store.game(game["game"])["bot"]
        assert done["step"] == {"step": "done", "code": "CODE42",
                                "redirect": "https://app.prolific.com/submissions/complete?cc=CODE42",
                                "reveal": {"Opponent A": bot}}
        assert c.post("/api/games", headers=h).status_code == 409
        # blinding: before the end, nothing a page got names a bot
        assert not any("heuristic" in text for text in seen[:-1])
        # one external id is one participant; another id is another one
        other = c.post("/api/enter", json={"params": {"PROLIFIC_PID": "someone-else"}}).json()
        assert other["returning"] is False
        people = study_arena.store.all_participants()
        assert len(people) == 2
        p = people[0]
        assert p["external_id"] == "5f00aa11bb22" and p["consent_version"] == "v7" and p["completed"]
        assert p["params"] == {"STUDY_ID": "s1", "SESSION_ID": "x9"}  # only the parameters the study keeps

        # the exports: every table as CSV, with the decisions' times
        rows = {}
        for name, (_, columns) in export.TABLES.items():
            r = c.get(f"/api/admin/export/{name}.csv", headers=ADMIN_HEADERS)
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
            table = list(csv.DictReader(io.StringIO(r.text)))
            assert list(table[0]) == columns
            rows[name] = table
        kinds = [g["kind"] for g in rows["games"]]
        assert kinds == ["tutorial", "practice", "game"]
        scored = rows["games"][2]
        assert scored["opponent"] == "Opponent A" and scored["bot"] == bot and scored["corrected"] != ""
        mine = [d for d in rows["decisions"] if d["who"] == "human"]
        assert len(mine) == sum(int(g["human_decisions"]) for g in rows["games"]) > 5
        for d in mine:
            assert d["think_ms"] == "1234" and d["shown"] <= d["answered"] and int(d["response_ms"]) >= 0
            assert d["label"] and d["purpose"] and int(d["choices"]) >= 1
        assert all(d["think_ms"] == "" for d in rows["decisions"] if d["who"] == "bot")
        answers = {(a["stage"], a["question"]): a for a in rows["answers"]}
        assert answers[("before", "age")]["answer"] == "30"
        assert answers[("after_game", "skill")]["opponent"] == "Opponent A"
        assert answers[("end", "attention")]["passed"] == "False"
        person = rows["participants"][0]
        assert person["completion_code"] == "CODE42" and person["attention_passed"] == "0"
        # one game: a score, and no interval
        assert person["games"] == "1" and person["score"] != "" and person["score_ci_low"] == ""
        everything = c.get("/api/admin/export/study.json", headers=ADMIN_HEADERS).json()
        assert len(everything["decisions"]) == len(rows["decisions"])
        res = c.get("/api/admin/results", headers=ADMIN_HEADERS).json()
        assert res["games_finished"] == 1 and len(res["answers"]) == 3  # practice and tutorial are not results

        # withdrawal: everything of the person goes, a record stays
        r = c.post(f"/api/admin/participants/{p['id']}/withdraw", headers=ADMIN_HEADERS)
        assert r.status_code == 200 and r.json()["games"] == 3 and r.json()["answers"] == 3
        assert c.get("/api/me", headers=h).status_code == 401
        assert c.get("/api/me", headers=h2).status_code == 401
        assert study_arena.store.games(kind=None) == [] and study_arena.store.answers() == []
        assert [w["participant_id"] for w in study_arena.store.withdrawals()] == [p["id"]]
        assert c.post(f"/api/admin/participants/{p['id']}/withdraw", headers=ADMIN_HEADERS).status_code == 404


def test_a_lost_link_is_renewed_by_the_admin(tmp_path):
    a = make_arena(f"sqlite:///{tmp_path}/arena.db")
    with client(a) as c:
        r = c.post("/api/join", json={"pseudonym": "ann", "consent": True}).json()
        pid = a.store.participant_by_name("ann")["id"]
        assert c.post(f"/api/admin/participants/{pid}/link").status_code == 403
        new = c.post(f"/api/admin/participants/{pid}/link", headers=ADMIN_HEADERS).json()
        for token in (r["token"], new["token"]):
            assert c.get("/api/me", headers={"Authorization": "Bearer " + token}).json()["pseudonym"] == "ann"
        assert c.post("/api/admin/participants/999/link", headers=ADMIN_HEADERS).status_code == 404
    a.store.close()


def test_request_bodies_have_a_size_limit(tmp_path):
    a = make_arena(f"sqlite:///{tmp_path}/arena.db")
    with client(a) as c:
        big = b'{"pseudonym": "' + b"x" * 200_000 + b'", "consent": true}'
        r = c.post("/api/join", content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and "too large" in r.json()["detail"]

        def chunks():  # no Content-Length: counted as it arrives
            for _ in range(100):
                yield b"x" * 10_000
        r = c.post("/api/join", content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413
        assert a.store.all_participants() == []
        # a ledger import may be larger, and needs the admin token
        text = "\n" * 200_000
        assert c.post("/api/admin/import", content=text, headers=ADMIN_HEADERS).json()["imported"] == 0
    a.store.close()


def test_the_admin_token_stays_across_restarts(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_ADMIN_TOKEN", raising=False)
    monkeypatch.delenv("ARENA_ADMIN_TOKEN_FILE", raising=False)
    url = f"sqlite:///{tmp_path}/arena.db"
    first = arena_pkg.admin_token(url)
    assert arena_pkg.admin_token(url) == first and len(first) >= 32
    path = Path(f"{tmp_path}/arena.db.admin-token")
    assert path.read_text().strip() == first and path.stat().st_mode & 0o077 == 0
    monkeypatch.setenv("ARENA_ADMIN_TOKEN_FILE", str(tmp_path / "token"))
    (tmp_path / "token").write_text("a-token-from-a-file-0123\n")
    assert arena_pkg.admin_token(url) == "a-token-from-a-file-0123"
    monkeypatch.setenv("ARENA_ADMIN_TOKEN", "short")
    with pytest.raises(arena_pkg.ArenaError, match="too short"):
        arena_pkg.admin_token(url)
    monkeypatch.setenv("ARENA_ADMIN_TOKEN", "an-admin-token-from-the-environment")
    assert arena_pkg.admin_token(url) == "an-admin-token-from-the-environment"


def test_a_port_in_use_stops_the_start_before_anything_else(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        rc = evaluate.main(["--serve", "--agents", "random", "--db", f"sqlite:///{tmp_path}/a.db",
                            "--port", str(port)])
    out = capsys.readouterr()
    assert rc == 2 and f"cannot listen on 127.0.0.1:{port}" in out.err
    assert "admin" not in out.out and not (tmp_path / "a.db").exists()  # no database opened


def test_a_database_of_the_previous_version_gains_the_new_columns(tmp_path):
    import sqlalchemy as sa
    url = f"sqlite:///{tmp_path}/old.db"
    old = sa.MetaData()
    for t in meta.sorted_tables:
        if t.name in ("study", "participants", "games", "actions"):
            keep = {"external_id", "consent_version", "params", "completed", "kind", "shown", "think_ms"}
            sa.Table(t.name, old, *[sa.Column(c.name, c.type, primary_key=c.primary_key)
                                    for c in t.columns if c.name not in keep])
    engine = sa.create_engine(url)
    old.create_all(engine)
    with engine.begin() as c:
        c.execute(sa.text("INSERT INTO participants (id, token_hash, pseudonym, created, source) "
                          "VALUES (1, 'h', 'ann', 'now', 'join')"))
    engine.dispose()
    store = Store(url)
    assert store.participant_by_name("ann")["external_id"] is None
    assert store.games(kind=None) == []
    store.close()


def test_the_decisions_export_has_a_trained_bots_probabilities(tmp_path):
    a = make_arena(f"sqlite:///{tmp_path}/arena.db", agents=("pretrained:fire", "heuristic"), games=2)
    with client(a) as c:
        h = join(c, "ann")
        for _ in range(2):
            play(c, h, c.post("/api/games", headers=h).json(), random.Random(2))
        text = c.get("/api/admin/export/decisions.csv", headers=ADMIN_HEADERS).text
    rows = list(csv.DictReader(io.StringIO(text)))
    a.store.close()
    bots = {r["bot"]: [d for d in rows if d["bot"] == r["bot"] and d["who"] == "bot"] for r in rows}
    assert bots["pretrained:fire"] and bots["heuristic"]
    for d in bots["pretrained:fire"]:
        probs = {int(k): v for k, v in json.loads(d["bot_policy"]).items()}
        assert len(probs) == int(d["choices"]) and abs(sum(probs.values()) - 1) < 1e-4
        # the shipped policy plays deterministically: the action it took is its most probable one
        assert float(d["bot_probability"]) == probs[int(d["action"])] == max(probs.values())
    assert all(d["bot_policy"] == "" and d["bot_probability"] == "" for d in bots["heuristic"])


def test_the_importer_checks_bot_labels_and_refuses_a_game_it_holds(tmp_path):
    a = make_arena(f"sqlite:///{tmp_path}/arena.db")
    with client(a) as c:
        h = join(c, "ann")
        play(c, h, c.post("/api/games", headers=h).json(), random.Random(1))
    text = ledger.export_text(a.store)
    study = a.study.to_dict()
    # the same game under another name is the same game
    renamed = json.loads(text)
    renamed["seats"] = ["human:bob" if s.startswith("human:") else s for s in renamed["seats"]]
    renamed["agents"] = ["human:bob", renamed["arena"]["bot"]]
    r = ledger.import_text(a.store, json.dumps(renamed) + "\n", "x")
    assert r["imported"] == 0 and r["already_there"] == 1
    # a bot the study does not have is refused
    other = json.loads(text)
    other["seats"] = ["human:bob" if s.startswith("human:") else "search" for s in other["seats"]]
    other["agents"] = ["human:bob", "search"]
    r = ledger.import_text(a.store, json.dumps(other) + "\n", "x")
    assert r["imported"] == 0 and re.search(r"bot 'search' is not one of this study's", r["skipped"][0])
    assert study["agents"] == ["heuristic", "random"]
    a.store.close()


def test_a_studys_search_bot_replays_from_its_seed(tmp_path):
    """The arena seeds its bots as games between bots are seeded (agents.runner.agent_seed), so
    the luck correction can replay a study's search bot (``analyse(..., replay_search=True)``): it
    takes every recorded action."""
    a = make_arena(f"sqlite:///{tmp_path}/arena.db", agents=("search:8",), games=1)
    with client(a) as c:
        h = join(c, "ann")
        play(c, h, c.post("/api/games", headers=h).json(), random.Random(3))
    g, = a.store.games(status="finished")
    rec = {"seed": g["seed"], "options": g["options"], "actions": a.store.all_actions()[g["id"]]}
    a.store.close()
    policies = ["human" if p == g["human_seat"] else g["bot"] for p in range(g["options"]["num_players"])]
    bot = 1 - g["human_seat"]
    assert luck.lookahead(policies, 2, rec).replays[bot].indices  # it had decisions to replay
    assert luck.analyse(rec, policies, replay_search=True).replayed == {bot: None}


def test_the_command_line_writes_the_tables(tmp_path, capsys, monkeypatch):
    from arena.__main__ import main
    url = f"sqlite:///{tmp_path}/arena.db"
    a = make_arena(url)
    with client(a) as c:
        h = join(c, "ann")
        play(c, h, c.post("/api/games", headers=h).json(), random.Random(3))
    a.store.close()
    assert main(["export", "--db", url, "--tables", str(tmp_path / "out")]) == 0
    assert "1 participant(s), 1 game(s)" in capsys.readouterr().out
    for name, (_, columns) in export.TABLES.items():
        with open(tmp_path / "out" / f"{name}.csv", encoding="utf-8") as f:
            assert next(csv.reader(f)) == columns
    data = json.loads((tmp_path / "out" / "study.json").read_text())
    assert data["study"]["agents"] == ["heuristic", "random"] and len(data["games"]) == 1
    assert data["luck_deeper"] == 0.0
    # the luck correction one event deeper: the game's corrected reward is analyse's with it
    assert main(["export", "--db", url, "--tables", str(tmp_path / "deep"), "--deeper", "0.7"]) == 0
    deep = json.loads((tmp_path / "deep" / "study.json").read_text())
    g, = deep["games"]
    store = Store(url)
    acts = store.all_actions()[g["game"]]
    options = next(x["options"] for x in store.games(kind=None) if x["id"] == g["game"])
    store.close()
    policies = ["human" if p == g["seat"] else g["bot"] for p in range(g["players"])]
    rec = {"seed": g["seed"], "options": options, "actions": acts}
    want = luck.analyse(rec, policies, deeper=0.7).corrected[g["seat"]]
    assert deep["luck_deeper"] == 0.7 and g["corrected"] == pytest.approx(want)
    assert g["corrected"] != pytest.approx(data["games"][0]["corrected"])
    assert deep["participants"][0]["corrected_score"] == pytest.approx(want)
    # two events deeper (a second or so a game: the correction is asked for, not made)
    real, asked = luck.analyse, []
    monkeypatch.setattr(luck, "analyse", lambda *a, **k: asked.append(k) or real(*a, **dict(k, depth=1)))
    assert main(["export", "--db", url, "--tables", str(tmp_path / "deep2"), "--deeper", "0.7", "--depth", "2"]) == 0
    deep2 = json.loads((tmp_path / "deep2" / "study.json").read_text())
    assert [(k["deeper"], k["depth"]) for k in asked] == [(0.7, 2)]
    assert deep2["luck_depth"] == 2 and deep["luck_depth"] == 1
    for argv, msg in ((["--tables", str(tmp_path / "x"), "--deeper", "1.5"], "--deeper must be from 0 to 1"),
                      (["--deeper", "0.5"], "--deeper applies to --tables"),
                      (["--tables", str(tmp_path / "x"), "--deeper", "0.5", "--depth", "4"],
                       "--depth must be a whole number from 1 to 3"),
                      (["--tables", str(tmp_path / "x"), "--depth", "2"], "--depth applies with deeper above 0"),
                      (["--tables", str(tmp_path / "x"), "--deeper", "0.5", "--workers", "0"],
                       "--workers must be at least 1")):
        with pytest.raises(SystemExit):
            main(["export", "--db", url] + argv)
        assert msg in capsys.readouterr().err


def test_a_failing_bot_is_not_named_to_a_blinded_participant(tmp_path, capsys):
    from arena.bots import BotError
    a = make_arena(f"sqlite:///{tmp_path}/arena.db", agents=("heuristic",))

    async def broken(*args):
        raise BotError("the heuristic bot failed: RuntimeError: out of ideas")
    with client(a) as c:
        h = join(c, "ann")
        state = c.post("/api/games", headers=h).json()
        a.bots.moves = broken
        for _ in range(50):  # the person's decisions until the bot is asked to move
            r = c.post(f"/api/games/{state['game']}/act", headers=h,
                       json={"step": state["step"], "action": state["decision"]["choices"][0]["action"]})
            if r.status_code != 200:
                break
            state = r.json()
        assert r.status_code == 503 and "heuristic" not in r.text
        assert "an opponent could not make its move" in r.json()["detail"]
        assert "the heuristic bot failed" in capsys.readouterr().err  # the console says which
    a.store.close()
