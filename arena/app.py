"""The arena's ASGI application (FastAPI): participant pages and API, admin pages and API.

Participants authenticate with their token (``Authorization: Bearer TOKEN``; the page takes it
from its link ``/p/TOKEN``), the admin with the admin token printed at start. A participant can
read and act only in its own games; anything else is a 404, as if the game did not exist.

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
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from havok_env.engine import Game
from havok_env.view import SeatView

from . import ledger, payload, results
from .bots import BotError, BotPool
from .store import Store, StoreError
from .study import Study, deal_seed, next_assignment

STATIC = Path(__file__).parent / "static"
PSEUDONYM_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.")


class JoinBody(BaseModel):
    pseudonym: str
    consent: bool = False


class ActBody(BaseModel):
    step: int
    action: int


class InviteBody(BaseModel):
    pseudonym: str


class Live:
    """A game being played, as the server holds it: the whole game, replayed from the database."""

    def __init__(self, row: dict, actions: list[int]):
        self.gid, self.pid, self.bot = row["id"], row["participant_id"], row["bot"]
        self.seed, self.options, self.human = row["seed"], row["options"], row["human_seat"]
        self.game = Game(seed=self.seed, log=True, **self.options)
        n = self.game.num_players
        self.labels = ["you" if p == self.human else "bot" for p in range(n)]
        self.view = SeatView(self.game, self.human)
        self.actions: list[int] = []
        self.steps = 0  # the participant's decisions so far: what a page's "step" refers to
        self.news_from = 0  # log position when the participant last decided
        self.lock = asyncio.Lock()
        for a in actions:
            self.apply(a)

    def apply(self, action: int) -> int:
        seat = self.game.to_act
        if seat == self.human:
            self.steps += 1
            self.news_from = len(self.view.log)
        self.game.apply(action)
        self.actions.append(action)
        return seat

    @property
    def bots_to_move(self) -> bool:
        return not self.game.is_over and self.game.to_act != self.human


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
        rows = await run_in_threadpool(self.store.games, None, "playing")
        for row in rows:
            live = await self.get_live(row["id"], row)
            if live.bots_to_move:
                async with live.lock:
                    with contextlib.suppress(Exception):
                        await self.advance(live)
        self.resumed = len(rows)
        return len(rows)

    async def get_live(self, gid: int, row: dict | None = None) -> Live:
        live = self.live.get(gid)
        if live is not None:
            return live
        async with self.load_lock:
            live = self.live.get(gid)
            if live is None:
                row = row or await run_in_threadpool(self.store.game, gid)
                acts = await run_in_threadpool(self.store.actions, gid)
                live = Live(row, acts)
                if row["status"] == "playing":  # finished games are not kept in memory
                    self.live[gid] = live
        return live

    def evict(self, live: Live) -> None:
        self.live.pop(live.gid, None)

    async def commit(self, live: Live, start: int, moves: list[tuple[int, int]]) -> None:
        r = live.game.result
        try:
            await asyncio.wrap_future(self.store.submit_actions(
                live.gid, start, moves, None if r is None else dict(r),
                live.view.turn if r is not None else None))
        except StoreError as e:
            self.evict(live)  # the database is the truth: replay from it next time
            raise HTTPException(409, f"could not store the decision: {e}; reload the page") from None
        if r is not None:
            self.live.pop(live.gid, None)
            if live.pid in self._finished:
                self._finished[live.pid] += 1

    async def advance(self, live: Live) -> list[dict]:
        """Let the bots play up to the participant's next decision; every move is stored."""
        frames: list[dict] = []
        while live.bots_to_move:
            try:
                moves = await self.bots.moves(live.gid, live.bot, live.seed, live.options,
                                              live.human, live.actions)
            except BotError as e:
                raise HTTPException(503, f"{e}; reload the page to try again") from None
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
                raise HTTPException(503, f"the {live.bot} bot made an illegal move: {_one_line(e)}") from None
            await self.commit(live, start, list(zip(seats, moves)))
        return frames

    def frame(self, live: Live, log_from: int) -> dict:
        return {"table": payload.table(live.view, live.labels),
                "log": payload.you(live.view, live.view.log[log_from:])}

    async def state(self, live: Live, frames: list[dict] | None = None) -> dict:
        p = payload.seat_payload(live.view, live.labels)
        done = await self.finished_count(live.pid)
        return {"game": live.gid, "step": live.steps, "seat": live.human,
                "over": live.game.is_over, "news_from": live.news_from, "frames": frames or [],
                "finished_games": done, "games_per_person": self.study.games_per_person, **p}

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

    async def new_game(self, who: dict) -> int:
        mine = await run_in_threadpool(self.store.games, who["id"])
        for g in mine:
            if g["status"] == "playing":
                return g["id"]
        if sum(g["status"] == "finished" for g in mine) >= self.study.games_per_person:
            raise HTTPException(409, f"you have played all {self.study.games_per_person} games "
                                     "of this study: thank you!")
        st = self.study
        async with self.assign_lock:
            taken = await run_in_threadpool(self.store.slots)
            bot, slot, deal, seat = next_assignment(st.agents, st.players, taken, who["id"])
            options = {"num_players": st.players, "dragons": None}
            gid = await asyncio.wrap_future(self.store.submit_game(
                who["id"], bot, slot, deal, deal_seed(st.seed, deal), options, seat))
        if gid is None:
            raise HTTPException(409, "that game was just given to someone else; try again")
        return gid


def _pseudonym(text: str) -> str:
    name = " ".join(str(text).split())
    if not 1 <= len(name) <= 32 or not set(name) <= PSEUDONYM_CHARS:
        raise HTTPException(422, "a pseudonym has 1 to 32 letters, digits, spaces, '_', '-' or '.'")
    return name


def create_app(arena: Arena, resume: bool = True) -> FastAPI:
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

    def page(name: str):
        async def serve_page():
            return FileResponse(STATIC / name, media_type="text/html")
        return serve_page

    # the pages are static; a page reads its token or game from its own address
    for path, name in (("/", "index.html"), ("/p/{token}", "play.html"), ("/admin", "admin.html"),
                       ("/admin/replay/{gid}", "replay.html")):
        app.add_api_route(path, page(name), methods=["GET"], include_in_schema=False)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # -- participant API ------------------------------------------------------------------------

    @app.get("/api/study")
    async def study_info():
        st = arena.study
        return {"title": st.title, "consent": st.consent, "players": st.players,
                "games_per_person": st.games_per_person}

    @app.post("/api/join")
    async def join(body: JoinBody):
        if not body.consent:
            raise HTTPException(422, "please read the consent text and agree before playing")
        name = _pseudonym(body.pseudonym)
        made = await asyncio.wrap_future(arena.store.submit_participant(name, True, "join"))
        if made is None:
            raise HTTPException(409, f"the pseudonym {name!r} is taken: choose another")
        return {"token": made[1], "url": f"/p/{made[1]}", "pseudonym": name}

    @app.get("/api/me")
    async def me(request: Request):
        who = await arena.participant(request)
        mine = await run_in_threadpool(arena.store.games, who["id"])
        history = []
        for g in mine:
            if g["status"] != "finished":
                continue
            r = g["result"]
            sole = len(r["winners"]) == 1
            mine_won = g["human_seat"] in r["winners"]
            history.append({"game": g["id"], "seat": g["human_seat"], "scores": r["scores"],
                            "outcome": "win" if mine_won and sole else "draw" if mine_won else "loss"})
        current = next((g["id"] for g in mine if g["status"] == "playing"), None)
        return {"pseudonym": who["pseudonym"], "consented": bool(who["consented"]),
                "games_per_person": arena.study.games_per_person, "finished": len(history),
                "current": current, "history": history}

    @app.post("/api/consent")
    async def consent(request: Request):
        who = await arena.participant(request)
        await asyncio.wrap_future(arena.store.submit_consent(who["id"]))
        return {"ok": True}

    @app.post("/api/games")
    async def start_game(request: Request):
        who = await arena.participant(request)
        if not who["consented"]:
            raise HTTPException(403, "please read the consent text and agree before playing")
        gid = await arena.new_game(who)
        live = await arena.get_live(gid)
        async with live.lock:
            frames = await arena.advance(live)
            return _json(await arena.state(live, frames))

    @app.get("/api/games/{gid}")
    async def game_state(gid: int, request: Request):
        live = await arena.own_game(request, gid)
        async with live.lock:
            frames = await arena.advance(live)  # bots owed a move after a restart or an error
            return _json(await arena.state(live, frames))

    @app.post("/api/games/{gid}/act")
    async def act(gid: int, body: ActBody, request: Request):
        live = await arena.own_game(request, gid)
        async with live.lock:
            if live.game.is_over:
                raise HTTPException(409, "this game is over")
            if body.step != live.steps:
                raise HTTPException(409, f"stale action: decision {body.step} was already answered "
                                         f"(this game is at decision {live.steps}); reload the page")
            if live.bots_to_move:
                raise HTTPException(409, "the bots are still playing; reload the page")
            legal = live.game.legal_actions()
            if body.action not in legal:
                raise HTTPException(422, f"action {body.action} is not one of this decision's "
                                         f"choices ({', '.join(map(str, legal))})")
            start = len(live.actions)
            before = len(live.view.log)
            seat = live.apply(body.action)
            frames = [arena.frame(live, before)] if len(live.view.log) > before else []
            await arena.commit(live, start, [(seat, body.action)])
            frames += await arena.advance(live)
            return _json(await arena.state(live, frames))

    # -- admin API ------------------------------------------------------------------------------

    @app.get("/api/admin/results")
    async def admin_results(request: Request):
        arena.admin(request)
        return _json(await run_in_threadpool(results.summary, arena.store, arena.study))

    @app.get("/api/admin/games/{gid}/replay")
    async def admin_replay(gid: int, request: Request):
        arena.admin(request)
        row = await run_in_threadpool(arena.store.game, gid)
        if row is None:
            raise HTTPException(404, f"no game {gid}")
        if row["status"] != "finished":
            raise HTTPException(409, f"game {gid} is still being played; replays are for finished games")
        acts = await run_in_threadpool(arena.store.actions, gid)
        who = await run_in_threadpool(results.pseudonyms, arena.store)
        n = row["options"]["num_players"]
        labels = [f"human:{who.get(row['participant_id'], '?')}" if p == row["human_seat"] else row["bot"]
                  for p in range(n)]
        rep = await run_in_threadpool(payload.replay_steps, row["seed"], row["options"], acts, labels)
        return _json({"game": gid, "bot": row["bot"], "human_seat": row["human_seat"], **rep})

    @app.post("/api/admin/invite")
    async def invite(body: InviteBody, request: Request):
        arena.admin(request)
        name = _pseudonym(body.pseudonym)
        made = await asyncio.wrap_future(arena.store.submit_participant(name, False, "invite"))
        if made is None:
            raise HTTPException(409, f"the pseudonym {name!r} is taken: choose another")
        return {"pseudonym": name, "token": made[1], "url": f"/p/{made[1]}"}

    @app.get("/api/admin/export")
    async def export(request: Request):
        arena.admin(request)
        text = await run_in_threadpool(ledger.export_text, arena.store)
        return PlainTextResponse(text, media_type="application/x-ndjson", headers={
            "Content-Disposition": 'attachment; filename="arena_ledger.jsonl"'})

    @app.post("/api/admin/import")
    async def import_ledger(request: Request):
        arena.admin(request)
        body = (await request.body()).decode("utf-8", errors="replace")
        return await run_in_threadpool(ledger.import_text, arena.store, body, "upload")

    @app.get("/healthz")
    async def health():
        return Response("ok", media_type="text/plain")

    return app
