"""The admin's API (the admin token in ``Authorization: Bearer`` or ``?token=``): results,
replays, invitations, renewed links, withdrawals, the exports and the ledger import."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from . import export, ledger, payload, results
from .app import _json, pseudonym

router = APIRouter()


class InviteBody(BaseModel):
    pseudonym: str


def _admin(request: Request):
    arena = request.app.state.arena
    arena.admin(request)
    return arena


def _overview(store, study) -> dict:
    s = results.summary(store, study)
    games = export.game_rows(store, study)
    answers = export.answer_rows(store, study)
    s["people"] = export.participant_rows(store, study, games, answers)
    s["answers"] = answers
    s["withdrawals"] = store.withdrawals()
    return s


@router.get("/api/admin/results")
async def admin_results(request: Request):
    arena = _admin(request)
    return _json(await run_in_threadpool(_overview, arena.store, arena.study))


@router.get("/api/admin/games/{gid}/replay")
async def admin_replay(gid: int, request: Request):
    arena = _admin(request)
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


@router.post("/api/admin/invite")
async def invite(body: InviteBody, request: Request):
    arena = _admin(request)
    name = pseudonym(body.pseudonym)
    made = await asyncio.wrap_future(arena.store.submit_participant(name, False, "invite"))
    if made is None:
        raise HTTPException(409, f"the pseudonym {name!r} is taken: choose another")
    return {"pseudonym": name, "token": made[1], "url": f"/p/{made[1]}"}


@router.post("/api/admin/participants/{pid}/link")
async def new_link(pid: int, request: Request):
    """A further link for a participant who lost theirs (the old one keeps working)."""
    arena = _admin(request)
    token = await run_in_threadpool(arena.store.new_link, pid)
    if token is None:
        raise HTTPException(404, f"no participant {pid}")
    return {"participant_id": pid, "token": token, "url": f"/p/{token}"}


@router.post("/api/admin/participants/{pid}/withdraw")
async def withdraw(pid: int, request: Request):
    """Delete a participant's data (games, decisions, answers, links); a record says it was done."""
    arena = _admin(request)
    for live in [lv for lv in arena.live.values() if lv.pid == pid]:
        async with live.lock:  # no decision of theirs is half-way through
            arena.evict(live)
    record = await run_in_threadpool(arena.store.withdraw, pid)
    if record is None:
        raise HTTPException(404, f"no participant {pid}")
    arena.forget(pid)
    return record


@router.get("/api/admin/export")
async def export_ledger(request: Request):
    arena = _admin(request)
    text = await run_in_threadpool(ledger.export_text, arena.store)
    return PlainTextResponse(text, media_type="application/x-ndjson", headers={
        "Content-Disposition": 'attachment; filename="arena_ledger.jsonl"'})


@router.get("/api/admin/export/{name}.csv")
async def export_csv(name: str, request: Request):
    arena = _admin(request)
    if name not in export.TABLES:
        raise HTTPException(404, f"no table {name!r}: {', '.join(export.TABLES)}")
    text = await run_in_threadpool(export.table_csv, arena.store, arena.study, name)
    return PlainTextResponse(text, media_type="text/csv", headers={
        "Content-Disposition": f'attachment; filename="arena_{name}.csv"'})


@router.get("/api/admin/export/study.json")
async def export_json(request: Request):
    arena = _admin(request)
    data = await run_in_threadpool(export.everything, arena.store, arena.study)
    response = _json(data)
    response.headers["Content-Disposition"] = 'attachment; filename="arena_study.json"'
    return response


@router.post("/api/admin/import")
async def import_ledger(request: Request):
    arena = _admin(request)
    body = (await request.body()).decode("utf-8", errors="replace")
    return await run_in_threadpool(ledger.import_text, arena.store, body, "upload")
