"""The arena: a web server where people play the bots, for human benchmark studies.

    python evaluate.py --serve --study study.toml [--host 127.0.0.1] [--port 8000]
        [--db sqlite:///results/arena.db]
    python evaluate.py --serve --agents heuristic search models/fire.zip [--players 2]
        [--games-per-person N] [--consent FILE] [--seed S] ...

prints the participant URL and the admin URL. The study file (``docs/studies.md``;
``examples/study.toml``) describes the whole study; the other flags are shortcuts that override
its fields. The admin token is ``ARENA_ADMIN_TOKEN``, or the file ``ARENA_ADMIN_TOKEN_FILE``
names, or a file beside the database made at the first start: it stays the same across restarts.
Modules: ``study`` (the study's settings and file, and which bot, deal and seat each game gets),
``store`` (SQLAlchemy: SQLite by default, PostgreSQL by URL), ``bots`` (bot worker processes),
``payload`` (what a seat's page may receive), ``tutorial`` (the tutorial's coach), ``app`` (the
ASGI application and a participant's way through the study), ``api_play`` and ``api_admin`` (the
routes), ``results``, ``export`` (CSV and JSON for a paper) and ``ledger`` (JSONL export and
import); ``static/`` holds the pages.
The web stack is imported only here, never by ``havok_env`` or ``agents``.
"""

from __future__ import annotations

import os
import secrets
import sys

from havok_env.constants import PLAYER_COUNTS, is_player_count
from havok_env.files import replaced

DEFAULT_DB = "sqlite:///results/arena.db"
SERVER_NEEDS = {"fastapi": "the arena server", "uvicorn": "the arena server",
                "sqlalchemy": "the arena's database", "openskill": "the ratings"}


def shown_url(url: str) -> str:
    """The database URL with its password hidden, for the console."""
    try:
        import sqlalchemy as sa
    except ImportError:
        return url
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except (ValueError, sa.exc.ArgumentError):  # not a URL (a bad port is a ValueError): as given
        return url


def _have_extras(needs: dict[str, str]) -> bool:
    from agents.extras import missing

    msg = missing(needs, "arena")
    if msg:
        print(f"evaluate.py: error: {msg}", file=sys.stderr)
    return msg is None


class ArenaError(Exception):
    """A problem with the options or the database: reported in one line."""


def study_file(path: str | None) -> dict:
    """The fields of the study file at ``path`` (none without one); ArenaError if it is bad."""
    from .study import StudyFileError, load_study_file

    try:
        return load_study_file(path) if path else {}
    except StudyFileError as e:
        raise ArenaError(str(e)) from None


def make_study(store, agents: list[str] | None, players: int | None, seed: int | None,
               games_per_person: int | None, consent_path: str | None, fields: dict | None = None):
    """The study this database holds, checked against the study file's ``fields`` and the
    options (a new one if it holds none). The options override the file's fields."""
    from .study import DEFAULT_CONSENT, Study

    fields = dict(fields or {})
    if agents:
        fields["agents"] = [str(a).strip() for a in agents]
    agents = fields.get("agents") or []
    if not agents:
        raise ArenaError("--serve needs the bots of the study: --agents SPEC [SPEC ...], or bots = [...] "
                         "in the --study file")
    if any(a.split(":", 1)[0] == "human" for a in agents + [fields.get("practice_bot", "random")]):
        raise ArenaError("the bots are listed; the humans come through the browser")
    if len(set(agents)) != len(agents):
        raise ArenaError(f"the study names a bot twice: {' '.join(agents)}")
    if players is not None and not is_player_count(players):
        raise ArenaError(f"--players must be {PLAYER_COUNTS}, not {players}")
    if games_per_person is not None and games_per_person < 1:
        raise ArenaError(f"--games-per-person must be at least 1, not {games_per_person}")
    for key, value in (("players", players), ("seed", seed), ("games_per_person", games_per_person)):
        if value is not None:
            fields[key] = value
    if consent_path:
        try:
            with open(consent_path, encoding="utf-8") as f:
                fields["consent"] = f.read().strip()
        except OSError as e:
            raise ArenaError(f"cannot read the consent text {consent_path!r}: {e.strerror or e}") from None
    stored = store.study()
    if stored is None:
        fields.setdefault("seed", secrets.randbits(31))
        fields.setdefault("consent", DEFAULT_CONSENT)
        study = Study(**fields)
    else:
        study = Study.from_dict(stored)
        if fields["agents"] != study.agents or fields.get("players", study.players) != study.players:
            raise ArenaError(f"{store.url} holds a study of {' '.join(study.agents)} with "
                             f"{study.players} players; start it with those, or give another --db")
        if fields.get("seed", study.seed) != study.seed:
            raise ArenaError(f"{store.url} holds a study with seed {study.seed}, not {fields['seed']}")
        study = Study.from_dict({**study.to_dict(), **fields})
    store.save_study(study.to_dict())
    return study


def admin_token(db_url: str, out=None) -> str:
    """The admin token: ``ARENA_ADMIN_TOKEN``, else the file ``ARENA_ADMIN_TOKEN_FILE`` names,
    else a file beside the SQLite database (``results/arena.admin-token`` for another database),
    written with a new token at the first start and read at every start after."""
    token = os.environ.get("ARENA_ADMIN_TOKEN", "").strip()
    if token:
        if len(token) < 16:
            raise ArenaError("ARENA_ADMIN_TOKEN is too short to be safe: use 16 characters or more")
        return token
    path = os.environ.get("ARENA_ADMIN_TOKEN_FILE", "").strip()
    if not path:
        base = db_url[len("sqlite:///"):] if db_url.startswith("sqlite:///") else ""
        path = (base if base and base != ":memory:" else os.path.join("results", "arena")) + ".admin-token"
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except FileNotFoundError:
        token = secrets.token_urlsafe(24)
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(token + "\n")
        except OSError as e:
            raise ArenaError(f"cannot write the admin token file {path!r}: {e.strerror or e}") from None
    except OSError as e:
        raise ArenaError(f"cannot read the admin token file {path!r}: {e.strerror or e}") from None
    if len(token) < 16:
        raise ArenaError(f"the admin token in {path!r} is too short to be safe: use 16 characters or more")
    return token


def listen(host: str, port: int):
    """The server's socket, bound before anything else is done: a port in use stops the start
    before a game is resumed or an admin link printed."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as e:
        sock.close()
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ArenaError(f"cannot listen on {host}:{port}: {why}") from None
    return sock


def serve(agents: list[str] | None, players: int | None = None, host: str = "127.0.0.1", port: int = 8000,
          db: str | None = None, games_per_person: int | None = None, consent: str | None = None,
          seed: int | None = None, bot_workers: int = 1, out=None, study: str | None = None) -> int:
    """Start the arena and serve until interrupted; returns the exit code."""
    out = out or sys.stdout
    if not _have_extras(SERVER_NEEDS):
        return 2
    import uvicorn

    from .app import Arena, create_app
    from .bots import BotError, BotPool
    from .store import Store, StoreError
    url = db or DEFAULT_DB
    store = bots = sock = None
    study_path = study
    try:
        sock = listen(host, port)
        fields = study_file(study_path)
        token = admin_token(url)
        store = Store(url)
        study = make_study(store, agents, players, seed, games_per_person, consent, fields)
        bots = BotPool(study.bot_specs(), workers=bot_workers)
        bots.start()
    except (ArenaError, StoreError, BotError) as e:
        print(f"evaluate.py: error: {e}", file=sys.stderr)
        for thing in (bots, store, sock):
            if thing is not None:
                thing.close()
        return 2
    arena = Arena(study, store, bots, admin_token=token)
    app = create_app(arena)
    unfinished = len(store.games(status="playing", kind=None))
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    # Prolific's placeholders: the site fills each in when it sends a participant
    entry = f"{base}/?" + "&".join(f"{k}={{{{%{k}%}}}}" for k in study.id_params[:1] + study.keep_params)
    out.write(f"Arena: {', '.join(study.agents)}; {study.players} players; {study.games_per_person} "
              f"game(s) per person; study seed {study.seed}; database {shown_url(url)}\n"
              + (f"  resuming {unfinished} unfinished game(s) where they stopped\n" if unfinished else "")
              + f"  participants: {base}/\n"
              f"  recruitment link: {entry}\n"
              f"  admin:        {base}/admin?token={arena.admin_token}\n")
    out.flush()
    try:
        # keep-alive outlasts a person's thinking, so a page's connection is not closed under it;
        # a bot still thinking when the server is stopped does not hold the shutdown up
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                                timeout_keep_alive=120, timeout_graceful_shutdown=2)
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        bots.close()
        left = len(store.games(status="playing", kind=None))
        store.close()
    out.write("Arena stopped" + (f"; {left} unfinished game(s) resume at the next start" if left else "")
              + ".\n")
    out.flush()
    return 0


def ledger_summary(url: str, json_path: str | None = None, out=None, deeper: float = 0.0, depth: int = 1,
                   workers: int = 1, progress: bool = True) -> int:
    """``evaluate.py --ledger sqlite:///...``: the study's results as text (and JSON); with
    ``deeper``, the games are corrected in ``workers`` processes first, with ``progress``."""
    out = out or sys.stdout
    if not _have_extras({"sqlalchemy": "the arena's database", "openskill": "the ratings"}):
        return 2
    from .results import correct_finished, format_summary, summary
    from .store import Store, StoreError
    from .study import Study
    try:
        if url.startswith("sqlite:///") and not os.path.exists(url[len("sqlite:///"):]):
            raise StoreError(f"no arena database at {url[len('sqlite:///'):]!r}")
        store = Store(url)
    except StoreError as e:
        print(f"evaluate.py: error: {e}", file=sys.stderr)
        return 2
    stored = store.study()
    correct_finished(store, deeper, depth, workers, progress)
    s = summary(store, Study.from_dict(stored) if stored else None, deeper, depth)
    store.close()
    out.write(format_summary(s, shown_url(url)) + "\n")
    if json_path:
        import json
        with replaced(json_path) as f:
            json.dump(s, f, indent=1)
            f.write("\n")
    return 0
