"""Helpers for the arena tests: an in-process arena and a participant that plays through the API."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("fastapi", reason="the arena tests need the arena extra: pip install -e '.[arena]'")
pytest.importorskip("sqlalchemy", reason="the arena tests need the arena extra: pip install -e '.[arena]'")

from fastapi.testclient import TestClient  # noqa: E402

from arena import make_study  # noqa: E402
from arena.app import Arena, create_app  # noqa: E402
from arena.bots import BotPool  # noqa: E402
from arena.store import Store  # noqa: E402

ADMIN = "admin-token-for-tests"


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
