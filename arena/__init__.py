"""The arena: a web server where people play the bots, for human benchmark studies.

    python evaluate.py --serve --agents heuristic search models/fire.zip [--players 2]
        [--host 127.0.0.1] [--port 8000] [--db sqlite:///results/arena.db]
        [--games-per-person N] [--consent FILE] [--seed S]

prints the participant URL and an admin URL carrying a fresh admin token. Modules: ``study`` (which
bot, deal and seat each game gets), ``store`` (SQLAlchemy: SQLite by default, PostgreSQL by URL),
``bots`` (bot worker processes), ``payload`` (what a seat's page may receive), ``app`` (the ASGI
application), ``results`` and ``ledger`` (JSONL export and import); ``static/`` holds the pages.
The web stack is imported only here, never by ``havok_env`` or ``agents``.
"""

from __future__ import annotations

import os
import secrets
import sys

from havok_env.constants import PLAYER_COUNTS, is_player_count

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


def make_study(store, agents: list[str], players: int | None, seed: int | None,
               games_per_person: int | None, consent_path: str | None):
    """The study this database holds, checked against the options (a new one if it holds none)."""
    from .study import DEFAULT_CONSENT, Study

    agents = [str(a).strip() for a in agents or []]
    if not agents:
        raise ArenaError("--serve needs the bots of the study: --agents SPEC [SPEC ...]")
    if any(a.split(":", 1)[0] == "human" for a in agents):
        raise ArenaError("--agents lists the bots; the humans come through the browser")
    if len(set(agents)) != len(agents):
        raise ArenaError(f"--agents names a bot twice: {' '.join(agents)}")
    if players is not None and not is_player_count(players):
        raise ArenaError(f"--players must be {PLAYER_COUNTS}, not {players}")
    if games_per_person is not None and games_per_person < 1:
        raise ArenaError(f"--games-per-person must be at least 1, not {games_per_person}")
    consent = None
    if consent_path:
        try:
            with open(consent_path, encoding="utf-8") as f:
                consent = f.read().strip()
        except OSError as e:
            raise ArenaError(f"cannot read the consent text {consent_path!r}: {e.strerror or e}") from None
    stored = store.study()
    if stored is None:
        study = Study(agents=agents, players=players or 2,
                      seed=seed if seed is not None else secrets.randbits(31),
                      games_per_person=games_per_person or 0, consent=consent or DEFAULT_CONSENT)
    else:
        study = Study.from_dict(stored)
        if agents != study.agents or (players is not None and players != study.players):
            raise ArenaError(f"{store.url} holds a study of {' '.join(study.agents)} with "
                             f"{study.players} players; start it with those, or give another --db")
        if seed is not None and seed != study.seed:
            raise ArenaError(f"{store.url} holds a study with seed {study.seed}, not {seed}")
        if games_per_person:
            study.games_per_person = games_per_person
        if consent:
            study.consent = consent
    store.save_study(study.to_dict())
    return study


def serve(agents: list[str], players: int | None = None, host: str = "127.0.0.1", port: int = 8000,
          db: str | None = None, games_per_person: int | None = None, consent: str | None = None,
          seed: int | None = None, bot_workers: int = 1, out=None) -> int:
    """Start the arena and serve until interrupted; returns the exit code."""
    out = out or sys.stdout
    if not _have_extras(SERVER_NEEDS):
        return 2
    import uvicorn

    from .app import Arena, create_app
    from .bots import BotError, BotPool
    from .store import Store, StoreError
    url = db or DEFAULT_DB
    store = bots = None
    try:
        store = Store(url)
        study = make_study(store, agents, players, seed, games_per_person, consent)
        bots = BotPool(study.agents, workers=bot_workers)
        bots.start()
    except (ArenaError, StoreError, BotError) as e:
        print(f"evaluate.py: error: {e}", file=sys.stderr)
        for thing in (bots, store):
            if thing is not None:
                thing.close()
        return 2
    arena = Arena(study, store, bots)
    app = create_app(arena)
    unfinished = len(store.games(status="playing"))
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    out.write(f"Arena: {', '.join(study.agents)}; {study.players} players; {study.games_per_person} "
              f"game(s) per person; study seed {study.seed}; database {shown_url(url)}\n"
              + (f"  resuming {unfinished} unfinished game(s) where they stopped\n" if unfinished else "")
              + f"  participants: {base}/\n"
              f"  admin:        {base}/admin?token={arena.admin_token}\n")
    out.flush()
    try:
        # keep-alive outlasts a person's thinking, so a page's connection is not closed under it;
        # a bot still thinking when the server is stopped does not hold the shutdown up
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False,
                    timeout_keep_alive=120, timeout_graceful_shutdown=2)
    except KeyboardInterrupt:
        pass
    finally:
        bots.close()
        left = len(store.games(status="playing"))
        store.close()
    out.write("Arena stopped" + (f"; {left} unfinished game(s) resume at the next start" if left else "")
              + ".\n")
    out.flush()
    return 0


def ledger_summary(url: str, json_path: str | None = None, out=None) -> int:
    """``evaluate.py --ledger sqlite:///...``: the study's results as text (and JSON)."""
    out = out or sys.stdout
    if not _have_extras({"sqlalchemy": "the arena's database", "openskill": "the ratings"}):
        return 2
    from .results import format_summary, summary
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
    s = summary(store, Study.from_dict(stored) if stored else None)
    store.close()
    out.write(format_summary(s, shown_url(url)) + "\n")
    if json_path:
        import json
        os.makedirs(os.path.dirname(json_path) or ".", exist_ok=True)
        with open(json_path, "w") as f:
            json.dump(s, f, indent=1)
            f.write("\n")
    return 0
