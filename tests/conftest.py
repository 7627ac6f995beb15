"""Shared fixtures: ``torn_json`` and ``torn_writes``, writes stopped halfway; ``db_url``, the
arena's database, once on SQLite and once on PostgreSQL.

PostgreSQL is the server ``ARENA_POSTGRES_URL`` names (each test gets a database of its own on
it), or else a throwaway server this session starts from the PostgreSQL binaries it finds
(Debian's ``postgresql`` package: ``initdb`` and ``pg_ctl``, run as the ``postgres`` user when the
tests run as root), stopped at the end. Where there is neither, or no psycopg, the PostgreSQL
half is skipped, saying why; with ``ARENA_REQUIRE_POSTGRES=1`` (``.ci/run``) it fails instead.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile

import pytest

_names = itertools.count()


@pytest.fixture
def torn_json(monkeypatch):
    """Call it, and json.dump writes half its text, then stops as a second Ctrl-C would: for the
    tests that a file is written whole or not at all (``monkeypatch.undo()`` ends it)."""
    import json
    real = json.dumps

    def torn(obj, f, **kw):
        text = real(obj, **kw)
        f.write(text[:len(text) // 2])
        raise KeyboardInterrupt

    return lambda: monkeypatch.setattr(json, "dump", torn)


class _Torn:
    """A file whose first write stops halfway, as a second Ctrl-C in the middle of writing would."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        self._f.write(data[:len(data) // 2])
        self._f.flush()
        raise KeyboardInterrupt

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


@pytest.fixture
def torn_writes(monkeypatch):
    """Call it, and every file opened for writing (``open``, ``io.open``, so ``Path.write_bytes``)
    stops halfway through its first write (``monkeypatch.undo()`` ends it)."""
    import builtins
    import io
    real = io.open

    def torn_open(file, mode="r", *a, **k):
        f = real(file, mode, *a, **k)
        return _Torn(f) if any(c in mode for c in "wax+") else f

    def start():
        monkeypatch.setattr(builtins, "open", torn_open)
        monkeypatch.setattr(io, "open", torn_open)
    return start


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _binary(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _start_server(base) -> tuple[str, list[str], str]:
    """(url of its ``postgres`` database, the command prefix to run as its owner, its folder)."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not initdb or not pg_ctl:
        raise RuntimeError("no PostgreSQL binaries (initdb, pg_ctl): apt-get install -y postgresql")
    as_owner: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        as_owner = ["runuser", "-u", "postgres", "--"]
        shutil.chown(base, "postgres")
    data = os.path.join(base, "data")
    run = lambda cmd: subprocess.run(as_owner + cmd, check=True, capture_output=True, text=True, timeout=120)  # noqa: E731
    try:
        run([initdb, "-D", data, "-A", "trust", "-U", "arena", "--no-sync"])
        port = _free_port()
        # fsync off: the tests kill the server process, never the machine
        run([pg_ctl, "-D", data, "-l", os.path.join(base, "log"), "-w", "-t", "60", "start",
             "-o", f"-p {port} -h 127.0.0.1 -k {base} -F"])
    except subprocess.CalledProcessError as e:
        raise RuntimeError(f"cannot start PostgreSQL: {(e.stderr or e.stdout).strip()[-300:]}") from None
    return f"postgresql://arena@127.0.0.1:{port}/postgres", as_owner + [pg_ctl, "-D", data], base


@pytest.fixture(scope="session")
def postgres_server():
    """The URL of a PostgreSQL database to make test databases in; skips (or fails) without one."""
    required = os.environ.get("ARENA_REQUIRE_POSTGRES") == "1"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        if required:
            raise
        pytest.skip("PostgreSQL needs the postgres extra: pip install -e '.[arena,postgres]'")
    url = os.environ.get("ARENA_POSTGRES_URL")
    if url:
        yield url
        return
    # not under pytest's own temporary folder, which only root may enter
    base = tempfile.mkdtemp(prefix="arena-postgres-")
    try:
        url, ctl, base = _start_server(base)
    except RuntimeError as e:
        shutil.rmtree(base, ignore_errors=True)
        if required:
            raise
        pytest.skip(f"{e}; or set ARENA_POSTGRES_URL=postgresql://...")
    try:
        yield url
    finally:
        subprocess.run(ctl + ["-m", "immediate", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A new, empty arena database: SQLite in the test's folder, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/arena.db"
    import psycopg
    import sqlalchemy as sa

    server = request.getfixturevalue("postgres_server")
    name = f"arena_test_{os.getpid()}_{next(_names)}"
    parsed = sa.engine.make_url(server)
    plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    return parsed.set(database=name).render_as_string(hide_password=False)
