"""Storage of a study: SQLAlchemy Core over SQLite by default, PostgreSQL by URL.

The tables: the study's settings (one row), participants (only a hash of each token is kept; the
external id a recruitment link carried, the consent version agreed to, the link's parameters),
further tokens of a participant (``tokens``: a participant who comes back through the recruitment
link, or whose link the admin renewed), games (seed, options, the human's seat, the bot, the study
slot, the kind: a scored ``game``, a ``practice`` game or the ``tutorial``; the result), actions
(one row per decision, keyed by game and position; a person's own decisions also keep when they
were shown and how long the page showed them), questionnaire answers, and withdrawals (the record
that a participant's data was deleted, with nothing of the data). A game is its seed, options and
actions: every position is replayed from them, so a decision is safe as soon as its row is
committed, and a duplicate or stale write fails on the key instead of corrupting a game.

SQLite runs in WAL mode with ``synchronous=FULL``: a commit has reached the disk when it returns,
which is what "written before the next decision is shown" needs, and readers never wait for writers.
Every write goes through one writer thread, and the writes that queue up while it commits go
into the next transaction together (group commit): one disk sync serves every participant who
answered meanwhile, so a slow disk costs latency, not throughput.
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as _dt
import hashlib
import os
import queue
import secrets
import threading

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

meta = sa.MetaData()

study_table = sa.Table(
    "study", meta,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("config", sa.JSON, nullable=False),
    sa.Column("created", sa.String(32), nullable=False),
)

participants = sa.Table(
    "participants", meta,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("pseudonym", sa.String(40), nullable=False, unique=True),
    sa.Column("consented", sa.String(32)),  # when consent was given; NULL until then
    sa.Column("created", sa.String(32), nullable=False),
    sa.Column("source", sa.String(16), nullable=False),  # "join", "invite", "link" or "import"
    sa.Column("external_id", sa.String(200)),  # the recruitment site's participant id, if any
    sa.Column("consent_version", sa.String(64)),
    sa.Column("params", sa.JSON),  # the recruitment link's other parameters (STUDY_ID, SESSION_ID...)
    sa.Column("completed", sa.String(32)),  # when the study was completed
)
# one external id is one participant
sa.Index("participants_external_id", participants.c.external_id, unique=True)

tokens = sa.Table(
    "tokens", meta,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    sa.Column("participant_id", sa.Integer, sa.ForeignKey("participants.id"), nullable=False),
    sa.Column("created", sa.String(32), nullable=False),
)

games = sa.Table(
    "games", meta,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("participant_id", sa.Integer, sa.ForeignKey("participants.id"), nullable=False),
    sa.Column("bot", sa.String(200), nullable=False),
    sa.Column("slot", sa.Integer),  # the bot's study slot (NULL for imported games)
    sa.Column("deal", sa.Integer),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    sa.Column("human_seat", sa.Integer, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),  # "playing" or "finished"
    sa.Column("result", sa.JSON),
    sa.Column("turns", sa.Integer),
    sa.Column("n_actions", sa.Integer, nullable=False, default=0),
    sa.Column("created", sa.String(32), nullable=False),
    sa.Column("finished", sa.String(32)),
    sa.Column("source", sa.String(16), nullable=False),  # "arena" or "import"
    sa.Column("kind", sa.String(16), nullable=False, server_default="game"),  # or "practice", "tutorial"
    sa.UniqueConstraint("bot", "slot", name="one_game_per_slot"),
)

actions = sa.Table(
    "actions", meta,
    sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id"), primary_key=True),
    sa.Column("idx", sa.Integer, primary_key=True),
    sa.Column("seat", sa.Integer, nullable=False),
    sa.Column("action", sa.Integer, nullable=False),
    sa.Column("at", sa.String(32), nullable=False),
    # a person's decisions only: when the server sent the decision, and how long the page showed
    # it before the answer (measured by the page, from drawing the buttons to the click)
    sa.Column("shown", sa.String(32)),
    sa.Column("think_ms", sa.Integer),
)

answers = sa.Table(
    "answers", meta,
    sa.Column("participant_id", sa.Integer, sa.ForeignKey("participants.id"), primary_key=True),
    sa.Column("stage", sa.String(16), primary_key=True),  # "before", "after_game" or "end"
    sa.Column("game_id", sa.Integer, primary_key=True),  # 0 outside "after_game"
    sa.Column("question", sa.String(64), primary_key=True),
    sa.Column("answer", sa.String(2000), nullable=False),
    sa.Column("at", sa.String(32), nullable=False),
)

withdrawals = sa.Table(
    "withdrawals", meta,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.String(32), nullable=False),
    sa.Column("participant_id", sa.Integer, nullable=False),
    sa.Column("games", sa.Integer, nullable=False),  # how many games were deleted
    sa.Column("answers", sa.Integer, nullable=False),
)


class StoreError(Exception):
    """A database that cannot be opened, or a write that conflicts with what is stored."""


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """An unguessable participant token (32 random bytes, URL-safe)."""
    return secrets.token_urlsafe(32)


def _sqlite_pragmas(dbapi_conn, _record):
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=" + os.environ.get("ARENA_SQLITE_SYNC", "FULL"))
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=15000")
    cur.close()


def open_engine(url: str) -> sa.Engine:
    """An engine for ``url`` (``sqlite:///path`` or ``postgresql://...``), tables created."""
    try:
        parsed = sa.engine.make_url(url)
    except (ValueError, sa.exc.ArgumentError):  # a bad port is a ValueError
        raise StoreError(f"--db {url!r} is not a database URL (sqlite:///PATH or postgresql://...)") from None
    kwargs = {}
    if parsed.get_backend_name() == "sqlite":
        path = parsed.database
        if path and path != ":memory:":
            folder = os.path.dirname(os.path.abspath(path))
            os.makedirs(folder, exist_ok=True)
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 15}
    elif parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3, not the old psycopg2
    try:
        engine = sa.create_engine(parsed, **kwargs)
        if parsed.get_backend_name() == "sqlite":
            sa.event.listen(engine, "connect", _sqlite_pragmas)
        meta.create_all(engine)
        _add_new_columns(engine)
    except ModuleNotFoundError as e:
        raise StoreError(f"cannot open {url!r}: the driver {e.name!r} is not installed "
                         "(for PostgreSQL: pip install 'psycopg[binary]')") from None
    except sa.exc.SQLAlchemyError as e:
        why = str(getattr(e, "orig", e)).splitlines()[0]
        raise StoreError(f"cannot open database {url!r}: {why}") from None
    return engine


def _add_new_columns(engine: sa.Engine) -> None:
    """A database made by an earlier version gets the columns added since (nullable, or with a
    default), so that its study goes on."""
    have = sa.inspect(engine)
    with engine.begin() as c:
        for table in meta.sorted_tables:
            cols = {col["name"] for col in have.get_columns(table.name)}
            for col in table.columns:
                if col.name not in cols:
                    ddl = sa.schema.CreateColumn(col).compile(dialect=engine.dialect)
                    c.execute(sa.text(f"ALTER TABLE {table.name} ADD COLUMN {ddl}"))
        for index in participants.indexes:
            index.create(c, checkfirst=True)


class _Writer:
    """One thread runs every write; those queued while it commits are committed together."""

    BATCH = 256

    def __init__(self, engine: sa.Engine):
        self.engine = engine
        self.q: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name="arena-writer", daemon=True)
        self.thread.start()

    def submit(self, op, *args) -> cf.Future:
        fut: cf.Future = cf.Future()
        self.q.put((fut, op, args))
        return fut

    def close(self) -> None:
        self.q.put(None)
        self.thread.join(10)

    def _run(self) -> None:
        while True:
            item = self.q.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < self.BATCH:
                try:
                    nxt = self.q.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self.q.put(None)
                    break
                batch.append(nxt)
            try:
                with self.engine.begin() as c:
                    results = [op(c, *args) for _, op, args in batch]
            except Exception:  # noqa: BLE001 - nothing is lost: each write is retried alone below
                # one write failed and the transaction with it: each goes again on its own, so
                # that only the failing one fails
                for fut, op, args in batch:
                    try:
                        with self.engine.begin() as c:
                            r = op(c, *args)
                    except Exception as e:  # noqa: BLE001 - handed to the caller's future
                        fut.set_exception(e)
                    else:
                        fut.set_result(r)
                continue
            for (fut, _, _), r in zip(batch, results):
                fut.set_result(r)


# -- the writes, each run inside the writer's transaction -------------------------------------


def _save_study(c, config: dict) -> None:
    c.execute(study_table.delete())
    c.execute(study_table.insert().values(id=1, config=config, created=now()))


def _add_participant(c, token: str, pseudonym: str, consented: bool, source: str, version=None):
    taken = c.execute(sa.select(participants.c.id).where(participants.c.pseudonym == pseudonym)).first()
    if taken is not None:
        return None
    stamp = now()
    res = c.execute(participants.insert().values(
        token_hash=token_hash(token), pseudonym=pseudonym, consented=stamp if consented else None,
        consent_version=version if consented else None, created=stamp, source=source))
    return int(res.inserted_primary_key[0]), token


def _enter(c, token: str, external_id: str, params: dict):
    """(id, token, new) of the participant with ``external_id``, made on the first visit; a
    returning participant gets a further token, so that every device they used keeps working."""
    row = c.execute(sa.select(participants.c.id).where(participants.c.external_id == external_id)).first()
    stamp = now()
    if row is not None:
        c.execute(tokens.insert().values(token_hash=token_hash(token), participant_id=row[0], created=stamp))
        return int(row[0]), token, False
    while True:  # a pseudonym nobody has, which says nothing of the person
        name = "P-" + secrets.token_hex(4)
        if c.execute(sa.select(participants.c.id).where(participants.c.pseudonym == name)).first() is None:
            break
    res = c.execute(participants.insert().values(
        token_hash=token_hash(token), pseudonym=name, consented=None, created=stamp, source="link",
        external_id=external_id, params=params))
    return int(res.inserted_primary_key[0]), token, True


def _add_token(c, token: str, pid: int):
    if c.execute(sa.select(participants.c.id).where(participants.c.id == pid)).first() is None:
        return None
    c.execute(tokens.insert().values(token_hash=token_hash(token), participant_id=pid, created=now()))
    return token


def _give_consent(c, pid: int, version: str | None) -> None:
    c.execute(participants.update().where(participants.c.id == pid, participants.c.consented.is_(None))
              .values(consented=now(), consent_version=version))


def _complete(c, pid: int) -> None:
    c.execute(participants.update().where(participants.c.id == pid, participants.c.completed.is_(None))
              .values(completed=now()))


def _save_answers(c, pid: int, stage: str, game_id: int, given: dict) -> bool:
    """False (and nothing written) when this stage was already answered."""
    where = (answers.c.participant_id == pid, answers.c.stage == stage, answers.c.game_id == game_id)
    if c.execute(sa.select(answers.c.question).where(*where)).first() is not None:
        return False
    stamp = now()
    if given:
        c.execute(answers.insert(), [{"participant_id": pid, "stage": stage, "game_id": game_id,
                                      "question": q, "answer": a, "at": stamp} for q, a in given.items()])
    return True


def _withdraw(c, pid: int):
    """Delete everything of participant ``pid`` and record that it was done; None if unknown."""
    if c.execute(sa.select(participants.c.id).where(participants.c.id == pid)).first() is None:
        return None
    gids = [r[0] for r in c.execute(sa.select(games.c.id).where(games.c.participant_id == pid))]
    n_answers = c.execute(answers.delete().where(answers.c.participant_id == pid)).rowcount
    if gids:
        c.execute(actions.delete().where(actions.c.game_id.in_(gids)))
        c.execute(games.delete().where(games.c.id.in_(gids)))
    c.execute(tokens.delete().where(tokens.c.participant_id == pid))
    c.execute(participants.delete().where(participants.c.id == pid))
    record = {"at": now(), "participant_id": pid, "games": len(gids), "answers": n_answers}
    c.execute(withdrawals.insert().values(**record))
    return record


def _create_game(c, pid, bot, slot, deal, seed, options, human_seat, source, kind="game"):
    if slot is not None and c.execute(sa.select(games.c.id).where(
            games.c.bot == bot, games.c.slot == slot)).first() is not None:
        return None
    res = c.execute(games.insert().values(
        participant_id=pid, bot=bot, slot=slot, deal=deal, seed=seed, options=options,
        human_seat=human_seat, status="playing", n_actions=0, created=now(), source=source, kind=kind))
    return int(res.inserted_primary_key[0])


def _add_actions(c, gid, start, moves, result, turns, timing=None) -> None:
    stamp = now()
    values = {"n_actions": start + len(moves)}
    if result is not None:
        values.update(status="finished", result=result, turns=turns, finished=stamp)
    # the game must be where the caller saw it: a stale or repeated write changes nothing
    res = c.execute(games.update().where(games.c.id == gid, games.c.n_actions == start,
                                         games.c.status == "playing").values(**values))
    if res.rowcount != 1:
        raise StoreError(f"game {gid} is not at decision {start}")
    if moves:
        rows = [{"game_id": gid, "idx": start + i, "seat": s, "action": a, "at": stamp,
                 "shown": None, "think_ms": None} for i, (s, a) in enumerate(moves)]
        if timing:  # the person's own decision, always the first of its write
            rows[0].update(shown=timing.get("shown"), think_ms=timing.get("think_ms"))
        c.execute(actions.insert(), rows)


def _import_game(c, pid, bot, seed, options, human_seat, moves, result, turns, finished) -> int:
    gid = int(c.execute(games.insert().values(
        participant_id=pid, bot=bot, slot=None, deal=None, seed=seed, options=options,
        human_seat=human_seat, status="finished", result=result, turns=turns,
        n_actions=len(moves), created=finished, finished=finished, source="import")).inserted_primary_key[0])
    if moves:
        c.execute(actions.insert(), [{"game_id": gid, "idx": i, "seat": s, "action": a, "at": finished}
                                     for i, (s, a) in enumerate(moves)])
    return gid


class Store:
    """The arena's reads and writes. Writes go through the writer thread: ``submit_*`` return a
    future (for the server's event loop), the plain methods wait for it."""

    def __init__(self, url: str):
        self.url = url
        self.engine = open_engine(url)
        self._writer = _Writer(self.engine)

    def close(self) -> None:
        self._writer.close()
        self.engine.dispose()

    def _wait(self, fut: cf.Future):
        try:
            return fut.result()
        except IntegrityError as e:
            raise StoreError(f"a write conflicts with what is stored: {str(e.orig).splitlines()[0]}") from None

    # -- the study --------------------------------------------------------------------------------

    def study(self) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(study_table.c.config).where(study_table.c.id == 1)).first()
        return None if row is None else dict(row[0])

    def save_study(self, config: dict) -> None:
        self._wait(self._writer.submit(_save_study, config))

    # -- participants -----------------------------------------------------------------------------

    def submit_participant(self, pseudonym: str, consented: bool, source: str,
                           consent_version: str | None = None) -> cf.Future:
        """A future of (id, token) of a new participant, or of None when the pseudonym is taken."""
        return self._writer.submit(_add_participant, new_token(), pseudonym, consented, source,
                                   consent_version)

    def add_participant(self, pseudonym: str, consented: bool, source: str) -> tuple[int, str] | None:
        return self._wait(self.submit_participant(pseudonym, consented, source))

    def participant_by_token(self, token: str) -> dict | None:
        h = token_hash(token)
        with self.engine.connect() as c:
            row = c.execute(sa.select(participants).where(participants.c.token_hash == h)).mappings().first()
            if row is None:
                row = c.execute(sa.select(participants).join(tokens, tokens.c.participant_id == participants.c.id)
                                .where(tokens.c.token_hash == h)).mappings().first()
        return None if row is None else dict(row)

    def submit_enter(self, external_id: str, params: dict) -> cf.Future:
        """A future of (id, token, new) of the participant with this recruitment id."""
        return self._writer.submit(_enter, new_token(), external_id, params)

    def new_link(self, pid: int) -> str | None:
        """A further token for participant ``pid`` (a lost link); None if there is no such one."""
        return self._wait(self._writer.submit(_add_token, new_token(), pid))

    def participant(self, pid: int) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(participants).where(participants.c.id == pid)).mappings().first()
        return None if row is None else dict(row)

    def participant_by_name(self, pseudonym: str) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(participants).where(
                participants.c.pseudonym == pseudonym)).mappings().first()
        return None if row is None else dict(row)

    def submit_consent(self, pid: int, version: str | None = None) -> cf.Future:
        return self._writer.submit(_give_consent, pid, version)

    def give_consent(self, pid: int, version: str | None = None) -> None:
        self._wait(self.submit_consent(pid, version))

    def submit_completed(self, pid: int) -> cf.Future:
        return self._writer.submit(_complete, pid)

    def submit_answers(self, pid: int, stage: str, game_id: int, given: dict[str, str]) -> cf.Future:
        """A future of True, or of False when this stage (of this game) was answered before."""
        return self._writer.submit(_save_answers, pid, stage, game_id, dict(given))

    def answers(self, pid: int | None = None) -> list[dict]:
        q = sa.select(answers).order_by(answers.c.participant_id, answers.c.at, answers.c.stage,
                                        answers.c.game_id, answers.c.question)
        if pid is not None:
            q = q.where(answers.c.participant_id == pid)
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(q).mappings()]

    def withdraw(self, pid: int) -> dict | None:
        """Delete participant ``pid``'s data (games, decisions, answers, links) in one transaction,
        leaving a record that says when and how much; None if there is no such participant."""
        return self._wait(self._writer.submit(_withdraw, pid))

    def withdrawals(self) -> list[dict]:
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(sa.select(withdrawals).order_by(withdrawals.c.id)).mappings()]

    def all_participants(self) -> list[dict]:
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(sa.select(participants).order_by(participants.c.id)).mappings()]

    # -- games ------------------------------------------------------------------------------------

    def submit_game(self, pid: int, bot: str, slot: int | None, deal: int | None, seed: int,
                    options: dict, human_seat: int, source: str = "arena", kind: str = "game") -> cf.Future:
        """A future of the new game's id, or of None when the slot is already taken."""
        return self._writer.submit(_create_game, pid, bot, slot, deal, seed, options, human_seat, source, kind)

    def create_game(self, *args, **kwargs) -> int | None:
        return self._wait(self.submit_game(*args, **kwargs))

    def game(self, gid: int) -> dict | None:
        with self.engine.connect() as c:
            row = c.execute(sa.select(games).where(games.c.id == gid)).mappings().first()
        return None if row is None else dict(row)

    def games(self, pid: int | None = None, status: str | None = None, kind: str | None = "game") -> list[dict]:
        """Games in the order they were made: the scored ones unless ``kind`` says otherwise
        ("practice", "tutorial", or None for all)."""
        q = sa.select(games).order_by(games.c.id)
        if kind is not None:
            q = q.where(games.c.kind == kind)
        if pid is not None:
            q = q.where(games.c.participant_id == pid)
        if status is not None:
            q = q.where(games.c.status == status)
        with self.engine.connect() as c:
            return [dict(r) for r in c.execute(q).mappings()]

    def slots(self) -> list[tuple[str, int, int, int]]:
        """(bot, slot, deal, participant id) of every study game ever assigned."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(games.c.bot, games.c.slot, games.c.deal, games.c.participant_id)
                             .where(games.c.slot.is_not(None)))
            return [tuple(r) for r in rows]

    def actions(self, gid: int) -> list[int]:
        with self.engine.connect() as c:
            rows = c.execute(sa.select(actions.c.action).where(actions.c.game_id == gid)
                             .order_by(actions.c.idx))
            return [int(r[0]) for r in rows]

    def all_actions(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        with self.engine.connect() as c:
            for gid, a in c.execute(sa.select(actions.c.game_id, actions.c.action)
                                    .order_by(actions.c.game_id, actions.c.idx)):
                out.setdefault(int(gid), []).append(int(a))
        return out

    def decisions(self) -> list[dict]:
        """Every stored action with its game, position, seat and times, in game order."""
        with self.engine.connect() as c:
            rows = c.execute(sa.select(actions).order_by(actions.c.game_id, actions.c.idx)).mappings()
            return [dict(r) for r in rows]

    def submit_actions(self, gid: int, start: int, moves: list[tuple[int, int]],
                       result: dict | None = None, turns: int | None = None,
                       timing: dict | None = None) -> cf.Future:
        """Append ``moves`` ((seat, action) pairs) at positions ``start``...; with ``result`` the
        game is marked finished in the same transaction; ``timing`` ({"shown", "think_ms"}) goes
        with the first move, a person's decision. The future raises StoreError if the game is not
        at position ``start`` (a stale or repeated write), and nothing changes."""
        return self._writer.submit(_add_actions, gid, start, list(moves), result, turns, timing)

    def add_actions(self, *args, **kwargs) -> None:
        self._wait(self.submit_actions(*args, **kwargs))

    def import_game(self, pid: int, bot: str, seed: int, options: dict, human_seat: int,
                    moves: list[tuple[int, int]], result: dict, turns: int, finished: str) -> int:
        """A finished game from a ledger, in one transaction."""
        return self._wait(self._writer.submit(_import_game, pid, bot, seed, options, human_seat,
                                              list(moves), result, turns, finished))
