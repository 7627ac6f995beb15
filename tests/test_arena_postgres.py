"""The arena on PostgreSQL: the same code as on SQLite, run when a server is given.

    ARENA_POSTGRES_URL=postgresql://user:password@127.0.0.1/arena_test python -m pytest tests/test_arena_postgres.py

The database's arena tables are dropped first: give it a database of its own.
"""

from __future__ import annotations

import os
import random

import pytest

URL = os.environ.get("ARENA_POSTGRES_URL")
if not URL:
    pytest.skip("no PostgreSQL server given: set ARENA_POSTGRES_URL=postgresql://... to run these",
                allow_module_level=True)
pytest.importorskip("psycopg", reason="PostgreSQL needs the postgres extra: pip install -e '.[arena,postgres]'")

from arena_util import ADMIN_HEADERS, client, join, make_arena, play  # noqa: E402

from arena import ledger  # noqa: E402
from arena.store import meta, open_engine  # noqa: E402


def test_a_study_on_postgresql():
    engine = open_engine(URL)
    meta.drop_all(engine)
    engine.dispose()
    arena = make_arena(URL)
    with client(arena) as c:
        a, b = join(c, "ann"), join(c, "bob")
        state = play(c, a, c.post("/api/games", headers=a).json(), random.Random(1))
        assert state["over"]
        other = c.post("/api/games", headers=b).json()
        assert c.get(f"/api/games/{other['game']}", headers=a).status_code == 404
        ch = other["decision"]["choices"][0]["action"]
        after = c.post(f"/api/games/{other['game']}/act", headers=b, json={"step": other["step"], "action": ch})
        assert after.status_code == 200
        if not after.json()["over"]:
            r = c.post(f"/api/games/{other['game']}/act", headers=b, json={"step": other["step"], "action": ch})
            assert r.status_code == 409
        res = c.get("/api/admin/results", headers=ADMIN_HEADERS).json()
        assert res["games_finished"] == 1 and res["games_playing"] == 1
        assert len(c.get(f"/api/admin/games/{state['game']}/replay", headers=ADMIN_HEADERS).json()["steps"]) > 3
    text = ledger.export_text(arena.store)
    assert ledger.import_text(arena.store, text)["already_there"] == 1
    arena.store.close()
    again = make_arena(URL)  # a restart: the unfinished game comes back where it was
    with client(again) as c:
        resumed = c.get(f"/api/games/{other['game']}", headers=b).json()
        assert resumed["step"] == after.json()["step"] and again.resumed == 1
    again.store.close()
