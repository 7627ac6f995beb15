"""The arena's ASGI application (FastAPI): the study's state (:class:`Arena`), the participant's
way through the study (:meth:`Arena.next_step`), and the app itself: pages, limits and headers.
The routes are in ``arena/api_play.py`` (participants) and ``arena/api_admin.py`` (the admin).

Participants authenticate with their token (``Authorization: Bearer TOKEN``; the page takes it
from its link ``/p/TOKEN``), the admin with the admin token. A participant can read and act only
in its own games; anything else is a 404, as if the game did not exist.

A participant goes through the study in one order, which the server holds, not the page:
consent, the questions before the games, the tutorial, the practice games, the scored games (each
followed by its questions), the questions at the end, and the completion code. Reloading, or
opening the link on another device, lands on the same step.

Playing a decision (``POST /api/games/{id}/act`` with the ``step`` the page was showing and the
chosen ``action``): the action is checked against the pending decision, committed to the database,
applied, and then the bots play (in their worker processes) up to the participant's next decision;
their actions are committed too before the answer goes back. A stale step (the decision was
already answered, in another tab or by a double click) or an illegal action is refused with a 409
or 422 and changes nothing. The answer carries the frames of what happened since (one per change
of the public log, so that the page can show the bots' moves one by one) and the new state.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import sys
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from havok_env.engine import Game
from havok_env.view import SeatView

from . import payload, tutorial
from .bots import BotError, BotPool
from .store import Store, StoreError, now
from .study import TUTORIAL, Study, deal_seed, next_assignment, opponent_names, practice_seed

STATIC = Path(__file__).parent / "static"
PSEUDONYM_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.")
#: the largest request body: a participant's answer is well under 1 KiB; a ledger import is bigger
MAX_BODY = 64 * 1024
MAX_IMPORT = 32 * 1024 * 1024
IMPORT_PATH = "/api/admin/import"


class Live:
    """A game being played, as the server holds it: the whole game, replayed from the database."""

    def __init__(self, row: dict, actions: list[int], labels: list[str] | None = None):
        self.gid, self.pid, self.bot = row["id"], row["participant_id"], row["bot"]
        self.seed, self.options, self.human = row["seed"], row["options"], row["human_seat"]
        self.kind = row.get("kind") or "game"
        self.actions: list[int] = list(actions)
        self.chosen: list[str] = []  # the labels of the participant's own choices (the tutorial's goals)
        self.steps = 0  # the participant's decisions so far: what a page's "step" refers to
        self.news_from = 0  # log position when the participant last decided
        self.shown = now()  # when the pending decision was sent (a person's decision times)
        self.lock = asyncio.Lock()
        record = {"seed": self.seed, "options": self.options, "actions": self.actions}
        self.view = None
        for self.game, action in Game.positions(record, log=True):  # the stored moves, the person's noted
            self.view = self.view or SeatView(self.game, self.human)  # (one game, moved on)
            if action is not None and self.game.to_act == self.human:
                self._noted(action)
        self.labels = labels or ["you" if p == self.human else "bot" for p in range(self.game.num_players)]

    def _noted(self, action: int) -> None:
        """Note the participant's decision, before it is applied."""
        self.steps += 1
        self.news_from = len(self.view.log)
        self.chosen.append(self.view.action_label(action))

    def apply(self, action: int) -> int:
        seat = self.game.to_act
        if seat == self.human:
            self._noted(action)
        self.game.apply(action)
        self.actions.append(action)
        return seat

    @property
    def bots_to_move(self) -> bool:
        return not self.game.is_over and self.game.to_act != self.human

    def goals(self) -> dict[str, bool]:
        return tutorial.goals_done(self.view, self.chosen)

    @property
    def tutorial_done(self) -> bool:
        return self.game.is_over or all(self.goals().values())


def _json(obj) -> Response:
    """A JSON answer without FastAPI's encoder, which walks a game state ten times slower."""
    return Response(json.dumps(obj, separators=(",", ":")), media_type="application/json")


def _one_line(e: Exception) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0][:300]


class Arena:
    """The study's state in this process: the store, the bots and the games in play."""

    def __init__(self, study: Study, store: Store, bots: BotPool, admin_token: str | None = None):
        self.study, self.store, self.bots = study, store, bots
        self.admin_token = admin_token or secrets.token_urlsafe(24)
        self.live: dict[int, Live] = {}
        self.assign_lock = asyncio.Lock()
        self.load_lock = asyncio.Lock()
        self._tokens: dict[str, dict] = {}
        self._finished: dict[int, int] = {}  # participant -> finished games, once counted
        self.resumed = 0

    # -- games ------------------------------------------------------------------------------------

    async def resume_all(self) -> int:
        """Replay every unfinished game and let the bots finish any move they owed."""
        rows = await run_in_threadpool(self.store.games, None, "playing", None)
        rows = [r for r in rows if r["kind"] != "tutorial"]  # a tutorial is left once its goals are met
        for row in rows:
            live = await self.get_live(row["id"], row)
            if live.bots_to_move:
                async with live.lock:
                    with contextlib.suppress(Exception):
                        await self.advance(live)
        self.resumed = len(rows)
        return len(rows)

    async def labels(self, row: dict) -> list[str]:
        """Who sits in each seat of game ``row``, as its participant may be told."""
        n = row["options"]["num_players"]
        kind = row.get("kind") or "game"
        if kind == "game":
            mine = await run_in_threadpool(self.store.games, row["participant_id"])
            name = opponent_names(self.study, mine).get(row["bot"], "Opponent")
        else:
            name = f"{kind} opponent"
        return ["you" if p == row["human_seat"] else name for p in range(n)]

    async def get_live(self, gid: int, row: dict | None = None) -> Live:
        live = self.live.get(gid)
        if live is not None:
            return live
        async with self.load_lock:
            live = self.live.get(gid)
            if live is None:
                row = row or await run_in_threadpool(self.store.game, gid)
                acts = await run_in_threadpool(self.store.actions, gid)
                live = Live(row, acts, await self.labels(row))
                if row["status"] == "playing":  # finished games are not kept in memory
                    self.live[gid] = live
        return live

    def evict(self, live: Live) -> None:
        self.live.pop(live.gid, None)

    async def commit(self, live: Live, start: int, moves: list[tuple[int, int]],
                     timing: dict | None = None) -> None:
        r = live.game.result
        try:
            await asyncio.wrap_future(self.store.submit_actions(
                live.gid, start, moves, None if r is None else dict(r),
                live.view.turn if r is not None else None, timing))
        except StoreError as e:
            self.evict(live)  # the database is the truth: replay from it next time
            raise HTTPException(409, f"could not store the decision: {e}; reload the page") from None
        if r is not None:
            self.live.pop(live.gid, None)
            if live.pid in self._finished and live.kind == "game":
                self._finished[live.pid] += 1

    async def advance(self, live: Live) -> list[dict]:
        """Let the bots play up to the participant's next decision; every move is stored."""
        frames: list[dict] = []
        while live.bots_to_move:
            try:
                moves = await self.bots.moves(live.gid, live.bot, live.seed, live.options,
                                              live.human, live.actions)
            except BotError as e:
                raise HTTPException(503, self.bot_failure(live, str(e))) from None
            start = len(live.actions)
            seats = []
            try:
                for a in moves:
                    before = len(live.view.log)
                    seats.append(live.apply(a))
                    if len(live.view.log) > before:
                        frames.append(self.frame(live, before))
            except Exception as e:  # noqa: BLE001 - whatever the bot did, the page gets one line
                self.evict(live)
                raise HTTPException(503, self.bot_failure(
                    live, f"the {live.bot} bot made an illegal move: {_one_line(e)}")) from None
            await self.commit(live, start, list(zip(seats, moves)))
            live.shown = now()
        return frames

    def bot_failure(self, live: Live, what: str) -> str:
        """The page's message when a bot fails: with blinding it names no bot (the console has
        the whole message)."""
        if not self.study.blind:
            return f"{what}; reload the page to try again"
        print(f"arena: game {live.gid}: {what}", file=sys.stderr, flush=True)
        return "an opponent could not make its move; reload the page to try again"

    def frame(self, live: Live, log_from: int) -> dict:
        return {"table": payload.table(live.view, live.labels),
                "log": payload.you(live.view, live.view.log[log_from:])}

    async def state(self, live: Live, frames: list[dict] | None = None) -> dict:
        p = payload.seat_payload(live.view, live.labels)
        done = await self.finished_count(live.pid)
        out = {"game": live.gid, "kind": live.kind, "step": live.steps, "seat": live.human,
               "over": live.game.is_over, "news_from": live.news_from, "frames": frames or [],
               "finished_games": done, "games_per_person": self.study.games_per_person, **p}
        if live.kind == "practice":
            practice = await run_in_threadpool(self.store.games, live.pid, None, "practice")
            out["practice"] = {"number": 1 + [g["id"] for g in practice].index(live.gid),
                               "of": self.study.practice_games}
        if live.kind == "tutorial":
            goals = live.goals()
            out["tutorial"] = {"goals": [{"goal": g, "text": tutorial.GOALS[g], "done": goals[g]}
                                         for g in tutorial.GOALS],
                               "done": live.tutorial_done,
                               **tutorial.coach(live.view, goals)}
        return out

    # -- participants -----------------------------------------------------------------------------

    async def participant(self, request: Request) -> dict:
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        if not token:
            raise HTTPException(401, "no participant token: open the link you were given")
        who = self._tokens.get(token)
        if who is None:
            who = await run_in_threadpool(self.store.participant_by_token, token)
            if who is None:
                raise HTTPException(401, "unknown participant token: check the link you were given")
            if who.get("consented"):
                self._tokens[token] = who
        return who

    def forget(self, pid: int) -> None:
        """Drop what this process holds of participant ``pid`` (after a withdrawal)."""
        for t in [t for t, w in self._tokens.items() if w["id"] == pid]:
            del self._tokens[t]
        self._finished.pop(pid, None)
        for gid in [g for g, live in self.live.items() if live.pid == pid]:
            del self.live[gid]

    def admin(self, request: Request) -> None:
        auth = request.headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else request.query_params.get("token", "")
        if not token or not secrets.compare_digest(token, self.admin_token):
            raise HTTPException(403, "the admin pages need the admin token printed when the arena started")

    async def own_game(self, request: Request, gid: int) -> Live:
        who = await self.participant(request)
        live = self.live.get(gid)  # a game in play is in memory: no trip to the database
        if live is not None and live.pid == who["id"]:
            return live
        row = None if live is not None else await run_in_threadpool(self.store.game, gid)
        if row is None or row["participant_id"] != who["id"]:
            raise HTTPException(404, f"no game {gid} for this participant")
        return await self.get_live(gid, row)

    async def finished_count(self, pid: int) -> int:
        n = self._finished.get(pid)
        if n is None:
            n = self._finished[pid] = len(await run_in_threadpool(self.store.games, pid, "finished"))
        return n

    async def next_step(self, who: dict) -> dict:
        """Where participant ``who`` is in the study: ``{"step": ...}`` with what that step needs.

        Steps, in order: ``consent``, ``questions`` (stage ``before``), ``tutorial``,
        ``practice``, ``game`` (each scored game is followed by ``questions`` of stage
        ``after_game`` for it), ``questions`` (stage ``end``), and ``done`` with the completion.
        ``game`` in a step is the game in play, or None when one is to be started."""
        st = self.study
        if not who["consented"]:
            return {"step": "consent"}
        mine = await run_in_threadpool(self.store.games, who["id"], None, None)
        given = await run_in_threadpool(self.store.answers, who["id"])
        answered = {(a["stage"], a["game_id"]) for a in given}
        if st.stage("before") and ("before", 0) not in answered:
            return {"step": "questions", "stage": "before", "game": 0}
        if st.tutorial:
            tut = next((g for g in mine if g["kind"] == "tutorial"), None)
            if tut is None:
                return {"step": "tutorial", "game": None}
            if tut["status"] == "playing":
                live = await self.get_live(tut["id"], tut)
                if not live.tutorial_done:
                    return {"step": "tutorial", "game": tut["id"]}
                self.evict(live)  # left where its goals were met
        practice = [g for g in mine if g["kind"] == "practice"]
        playing = next((g["id"] for g in practice if g["status"] == "playing"), None)
        if playing or sum(g["status"] == "finished" for g in practice) < st.practice_games:
            return {"step": "practice", "game": playing, "number": len(practice) + (playing is None),
                    "of": st.practice_games}
        scored = [g for g in mine if g["kind"] == "game"]
        names = opponent_names(st, scored)
        if st.stage("after_game"):
            for g in scored:
                if g["status"] == "finished" and ("after_game", g["id"]) not in answered:
                    return {"step": "questions", "stage": "after_game", "game": g["id"],
                            "opponent": names.get(g["bot"], "your opponent")}
        playing = next((g["id"] for g in scored if g["status"] == "playing"), None)
        finished = sum(g["status"] == "finished" for g in scored)
        if playing or finished < st.games_per_person:
            return {"step": "game", "game": playing, "number": finished + 1, "of": st.games_per_person}
        if st.stage("end") and ("end", 0) not in answered:
            return {"step": "questions", "stage": "end", "game": 0}
        if not who.get("completed"):
            await asyncio.wrap_future(self.store.submit_completed(who["id"]))
            self._tokens = {t: w for t, w in self._tokens.items() if w["id"] != who["id"]}
        done = {"step": "done", "code": st.completion_code or None, "redirect": st.redirect() or None}
        if st.reveal and st.blind:
            done["reveal"] = {label: bot for bot, label in names.items()}
        return done

    async def new_game(self, who: dict, step: dict) -> int:
        """The game of ``step`` (tutorial, practice or scored): the one in play, or a new one."""
        if step.get("game"):
            return step["game"]
        st = self.study
        if step["step"] == "tutorial":
            seat, options = TUTORIAL["seat"], {"num_players": TUTORIAL["players"], "dragons": None}
            gid = await asyncio.wrap_future(self.store.submit_game(
                who["id"], TUTORIAL["bot"], None, None, TUTORIAL["seed"], options, seat, kind="tutorial"))
            return gid
        options = {"num_players": st.players, "dragons": None}
        if step["step"] == "practice":
            n = step["number"] - 1
            return await asyncio.wrap_future(self.store.submit_game(
                who["id"], st.practice_bot, None, None, practice_seed(st.seed, n), options,
                n % st.players, kind="practice"))
        async with self.assign_lock:
            taken = await run_in_threadpool(self.store.slots)
            bot, slot, deal, seat = next_assignment(st.agents, st.players, taken, who["id"])
            gid = await asyncio.wrap_future(self.store.submit_game(
                who["id"], bot, slot, deal, deal_seed(st.seed, deal), options, seat))
        if gid is None:
            raise HTTPException(409, "that game was just given to someone else; try again")
        return gid


def pseudonym(text: str) -> str:
    name = " ".join(str(text).split())
    if not 1 <= len(name) <= 32 or not set(name) <= PSEUDONYM_CHARS:
        raise HTTPException(422, "a pseudonym has 1 to 32 letters, digits, spaces, '_', '-' or '.'")
    return name


class BodyLimit:
    """ASGI middleware: a request body over its limit is refused with a 413 before it is read
    into memory (by its Content-Length, or as it streams in when it has none)."""

    def __init__(self, app, limit: int = MAX_BODY, import_limit: int = MAX_IMPORT):
        self.app, self.limit, self.import_limit = app, limit, import_limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.import_limit if scope["path"] == IMPORT_PATH else self.limit
        for k, v in scope.get("headers", []):
            if k == b"content-length":
                try:
                    too_big = int(v) > limit
                except ValueError:
                    too_big = False
                if too_big:
                    return await self._refuse(send, limit)
        seen = 0
        started = refused = False

        async def counted():
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    # answered here: the app is told the client left, and what it sends is dropped
                    refused = True
                    if not started:
                        await self._refuse(send, limit)
                    return {"type": "http.disconnect"}
            return msg

        async def watched(msg):
            nonlocal started
            if refused:
                return
            started = started or msg["type"] == "http.response.start"
            await send(msg)

        try:
            await self.app(scope, counted, watched)
        except Exception:
            if not refused:
                raise

    @staticmethod
    async def _refuse(send, limit: int):
        body = json.dumps({"detail": f"the request is too large (the limit is {limit // 1024} KiB)"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def create_app(arena: Arena, resume: bool = True) -> FastAPI:
    from . import api_admin, api_play

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if resume:
            await arena.resume_all()
        yield

    app = FastAPI(title="Havok & Hijinks arena", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    app.state.arena = arena

    @app.exception_handler(RequestValidationError)
    async def bad_request(request, exc):
        errs = exc.errors()
        first = errs[0] if errs else {}
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
        return JSONResponse({"detail": f"bad request: {where or 'body'}: {first.get('msg', 'invalid')}"},
                            status_code=422)

    @app.middleware("http")
    async def headers(request, call_next):
        response = await call_next(request)
        response.headers["Referrer-Policy"] = "no-referrer"  # tokens live in page links
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Content-Security-Policy"] = "default-src 'self'; frame-ancestors 'none'"
        if request.url.path.startswith("/api/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    app.add_middleware(BodyLimit)

    def page(name: str):
        async def serve_page():
            return FileResponse(STATIC / name, media_type="text/html")
        return serve_page

    # the pages are static; a page reads its token or game from its own address
    for path, name in (("/", "index.html"), ("/p/{token}", "play.html"), ("/admin", "admin.html"),
                       ("/admin/replay/{gid}", "replay.html"), ("/rules", "rules.html")):
        app.add_api_route(path, page(name), methods=["GET"], include_in_schema=False)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api_play.router)
    app.include_router(api_admin.router)

    @app.get("/healthz")
    async def health():
        return Response("ok", media_type="text/plain")

    return app
