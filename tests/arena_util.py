"""Helpers for the arena tests: an in-process arena and a participant that plays through the API."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the arena tests need the arena extra: pip install -e '.[arena]'")
pytest.importorskip("sqlalchemy", reason="the arena tests need the arena extra: pip install -e '.[arena]'")

import httpx  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from arena import make_study  # noqa: E402
from arena.app import Arena, create_app  # noqa: E402
from arena.bots import BotPool  # noqa: E402
from arena.store import Store  # noqa: E402

ADMIN = "admin-token-for-tests"
ROOT = Path(__file__).resolve().parent.parent


def make_arena(url: str, agents=("heuristic", "random"), players=2, seed=5, games=3) -> Arena:
    store = Store(url)
    study = make_study(store, list(agents), players, seed, games, None)
    return Arena(study, store, BotPool(study.agents, inline=True), admin_token=ADMIN)


def client(arena: Arena) -> TestClient:
    return TestClient(create_app(arena))


def join(c: TestClient, name: str) -> dict:
    r = c.post("/api/join", json={"pseudonym": name, "consent": True})
    assert r.status_code == 200, r.text
    return {"Authorization": "Bearer " + r.json()["token"]}


def play(c: TestClient, headers: dict, state: dict, rng: random.Random, moves: int | None = None) -> dict:
    """Answer decisions at random until the game ends (or ``moves`` decisions)."""
    done = 0
    while not state["over"] and (moves is None or done < moves):
        choice = rng.choice(state["decision"]["choices"])
        r = c.post(f"/api/games/{state['game']}/act", headers=headers,
                   json={"step": state["step"], "action": choice["action"]})
        assert r.status_code == 200, r.text
        state = r.json()
        done += 1
    return state


ADMIN_HEADERS = {"Authorization": "Bearer " + ADMIN}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python evaluate.py --serve`` in its own process group (its bot workers are in it too)."""

    def __init__(self, db: str, port: int, options: list[str]):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.port = port
        self.proc = subprocess.Popen(
            [sys.executable, "evaluate.py", "--serve", "--db", db, "--port", str(port), *options],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        self.lines = []
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError("the server stopped: " + "".join(self.lines))
            self.lines.append(line)
            if "admin:" in line:
                self.admin = line.split("token=", 1)[1].strip()
                break
        self.url = f"http://127.0.0.1:{port}"
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError("the server did not answer")

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self.proc.stdout.close()
