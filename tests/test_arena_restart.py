"""The arena killed with SIGKILL in the middle of games, and started again on the same database:
every unfinished game resumes at the same position, replayed from its seed and stored actions."""

from __future__ import annotations

import random
import threading
import time

import pytest

pytest.importorskip("uvicorn", reason="the arena tests need the arena extra: pip install -e '.[arena]'")
httpx = pytest.importorskip("httpx", reason="the arena tests need the arena extra: pip install -e '.[arena]'")

from arena_util import Server, free_port  # noqa: E402

from arena import payload  # noqa: E402
from arena.store import Store  # noqa: E402
from havok_env.engine import Game  # noqa: E402
from havok_env.view import SeatView  # noqa: E402

AGENTS = ["--agents", "heuristic", "--seed", "3", "--games-per-person", "4"]
SHOWN = ("table", "decision", "log", "result", "step")


def shown(state: dict) -> dict:
    return {k: state[k] for k in SHOWN}


def from_database(db_url: str, gid: int) -> dict:
    store = Store(db_url)
    row, acts = store.game(gid), store.actions(gid)
    store.close()
    g = Game(seed=row["seed"], log=True, **row["options"])
    steps = 0
    for a in acts:
        steps += g.to_act == row["human_seat"]
        g.apply(a)
    n = row["options"]["num_players"]
    labels = ["you" if p == row["human_seat"] else "Opponent A" for p in range(n)]  # blinded
    return {"step": steps, "bots_owe": not g.is_over and g.to_act != row["human_seat"],
            **payload.seat_payload(SeatView(g, row["human_seat"]), labels)}


def test_sigkill_in_the_middle_of_games_and_restart(db_url):
    db = db_url  # SQLite and PostgreSQL (tests/conftest.py)
    server = Server(db, free_port(), AGENTS)
    rng = random.Random(0)
    people, states = [], []
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            for name in ("ann", "bob", "cy"):
                r = c.post("/api/join", json={"pseudonym": name, "consent": True})
                h = {"Authorization": "Bearer " + r.json()["token"]}
                s = c.post("/api/games", headers=h).json()
                for _ in range(2 + len(people)):
                    if s["over"]:
                        s = c.post("/api/games", headers=h).json()
                    ch = rng.choice(s["decision"]["choices"])
                    s = c.post(f"/api/games/{s['game']}/act", headers=h,
                               json={"step": s["step"], "action": ch["action"]}).json()
                if s["over"]:
                    s = c.post("/api/games", headers=h).json()
                people.append(h)
                states.append(s)
        # one more decision is in flight when the server dies
        h, s = people[2], states[2]
        ch = s["decision"]["choices"][0]
        flight = threading.Thread(target=lambda: _quiet_post(
            server.url + f"/api/games/{s['game']}/act", h, {"step": s["step"], "action": ch["action"]}))
        flight.start()
        time.sleep(0.05)
    finally:
        server.kill()
    flight.join(10)

    server = Server(db, free_port(), AGENTS)
    try:
        assert any("resuming 3 unfinished game(s)" in line for line in server.lines), server.lines
        with httpx.Client(base_url=server.url, timeout=30) as c:
            for i, (h, before) in enumerate(zip(people, states)):
                after = c.get(f"/api/games/{before['game']}", headers=h).json()
                stored = from_database(db, before["game"])
                assert not stored["bots_owe"]
                assert shown(after) == {k: stored[k] for k in SHOWN}
                if i < 2:  # untouched games come back exactly where they were
                    assert shown(after) == shown(before)
                else:  # the decision in flight was either stored with its answer, or not at all
                    assert after["step"] in (before["step"], before["step"] + 1)
                # and the game plays on to its end
                while not after["over"]:
                    ch = rng.choice(after["decision"]["choices"])
                    r = c.post(f"/api/games/{after['game']}/act", headers=h,
                               json={"step": after["step"], "action": ch["action"]})
                    assert r.status_code == 200, r.text
                    after = r.json()
                assert from_database(db, before["game"])["result"]["winners"] == after["result"]["winners"]
            res = c.get("/api/admin/results", headers={"Authorization": "Bearer " + server.admin}).json()
            assert res["games_finished"] >= 3
    finally:
        server.kill()


def _quiet_post(url, headers, body):
    try:
        httpx.post(url, headers=headers, json=body, timeout=5)
    except httpx.HTTPError:
        pass


def _live_processes(group: int) -> list[str]:
    """The processes of a process group still running (an exited one the container's init has
    not reaped yet is not running)."""
    import subprocess
    ps = subprocess.run(["ps", "-o", "pid=,stat=", "-g", str(group)], capture_output=True, text=True)
    return [line for line in ps.stdout.splitlines() if not line.split()[1].startswith("Z")]


@pytest.mark.parametrize("how", ["ctrl-c to the group", "sigterm to the server"])
def test_stopping_the_server_while_a_search_bot_thinks(tmp_path, how):
    """Ctrl-C (SIGINT to the whole process group) or SIGTERM to the server alone stops it within
    seconds, with no traceback and no worker left behind, and the game resumes at the next start."""
    import os
    import signal
    db = f"sqlite:///{tmp_path}/arena.db"
    options = ["--agents", "search", "--seed", "1"]
    server = Server(db, free_port(), options)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            r = c.post("/api/join", json={"pseudonym": "ann", "consent": True})
            h = {"Authorization": "Bearer " + r.json()["token"]}
            s = c.post("/api/games", headers=h).json()
        ch = s["decision"]["choices"][0]
        flight = threading.Thread(target=lambda: _quiet_post(
            server.url + f"/api/games/{s['game']}/act", h, {"step": s["step"], "action": ch["action"]}))
        flight.start()
        time.sleep(0.2)
        assert len(_live_processes(server.proc.pid)) >= 2  # the server and its bot worker
        if how == "ctrl-c to the group":
            os.killpg(server.proc.pid, signal.SIGINT)
        else:
            os.kill(server.proc.pid, signal.SIGTERM)
        limit = 15.0 * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
        assert server.proc.wait(limit) == 0
        rest = server.proc.stdout.read()
        time.sleep(1.0)  # a worker would see its parent gone within half a second
        assert _live_processes(server.proc.pid) == []
        assert "Traceback" not in rest and "KeyboardInterrupt" not in rest, rest
        assert "Arena stopped; 1 unfinished game(s) resume at the next start." in rest, rest
    finally:
        if server.proc.poll() is None or _live_processes(server.proc.pid):
            server.kill()
    flight.join(10)
    server = Server(db, free_port(), options)
    try:
        assert any("resuming 1 unfinished game(s)" in line for line in server.lines), server.lines
    finally:
        server.kill()
