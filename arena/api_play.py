"""The participants' API: entering the study (a recruitment link or a pseudonym), consent, the
questionnaires, the games, and the rules reference."""

from __future__ import annotations

import asyncio
import re
from functools import lru_cache

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from havok_env.cards import default_cards

from . import payload
from .app import _json, pseudonym
from .study import check_answer, opponent_names

router = APIRouter()
EXTERNAL_ID = re.compile(r"^[A-Za-z0-9_.@:-]{1,200}$")


class JoinBody(BaseModel):
    pseudonym: str
    consent: bool = False
    consent_version: str | None = None


class EnterBody(BaseModel):
    params: dict[str, str]


class ConsentBody(BaseModel):
    version: str | None = None


class AnswersBody(BaseModel):
    stage: str
    game: int = 0
    answers: dict[str, str | int | None]


class ActBody(BaseModel):
    step: int
    action: int
    think_ms: int | None = None  # how long the page showed the decision before the click


def _arena(request: Request):
    return request.app.state.arena


def _check_version(study, given: str | None) -> None:
    if given is not None and given != study.consent_version:
        raise HTTPException(409, "the consent text has changed since this page was loaded: "
                                 "reload the page and read it again")


@router.get("/api/study")
async def study_info(request: Request):
    st = _arena(request).study
    return {"title": st.title, "consent": st.consent, "consent_version": st.consent_version,
            "instructions": st.instructions, "players": st.players,
            "games_per_person": st.games_per_person, "practice_games": st.practice_games,
            "tutorial": st.tutorial, "id_params": st.id_params, "require_id": st.require_id}


@router.post("/api/join")
async def join(body: JoinBody, request: Request):
    arena = _arena(request)
    if arena.study.require_id:
        raise HTTPException(403, "this study is entered through the link of the recruitment site "
                                 f"(it carries your {arena.study.id_params[0]})")
    if not body.consent:
        raise HTTPException(422, "please read the consent text and agree before playing")
    _check_version(arena.study, body.consent_version)
    name = pseudonym(body.pseudonym)
    made = await asyncio.wrap_future(arena.store.submit_participant(
        name, True, "join", arena.study.consent_version))
    if made is None:
        raise HTTPException(409, f"the pseudonym {name!r} is taken: choose another")
    return {"token": made[1], "url": f"/p/{made[1]}", "pseudonym": name}


@router.post("/api/enter")
async def enter(body: EnterBody, request: Request):
    """A recruitment link's parameters -> the participant's own link. The first of the study's
    id parameters present is the participant's external id: the same id always reaches the same
    participant (a further link to it), who goes on where they left off."""
    arena = _arena(request)
    st = arena.study
    ext = next((body.params[k].strip() for k in st.id_params if (body.params.get(k) or "").strip()), None)
    if ext is None:
        raise HTTPException(422, f"the link carries no {' or '.join(st.id_params)}: open the study "
                                 "through the recruitment site's link")
    if not EXTERNAL_ID.match(ext):
        raise HTTPException(422, f"{ext[:40]!r} is not a participant id (up to 200 letters, digits "
                                 "and '_', '.', '@', ':', '-')")
    kept = {k: body.params[k][:200] for k in st.keep_params if k in body.params}
    pid, token, new = await asyncio.wrap_future(arena.store.submit_enter(ext, kept))
    return {"token": token, "url": f"/p/{token}", "returning": not new}


@router.get("/api/me")
async def me(request: Request):
    arena = _arena(request)
    who = await arena.participant(request)
    step = await arena.next_step(who)
    mine = await run_in_threadpool(arena.store.games, who["id"])
    names = opponent_names(arena.study, mine)
    history = []
    for g in mine:
        if g["status"] != "finished":
            continue
        r = g["result"]
        sole = len(r["winners"]) == 1
        mine_won = g["human_seat"] in r["winners"]
        history.append({"game": g["id"], "seat": g["human_seat"], "scores": r["scores"],
                        "opponent": names.get(g["bot"]),
                        "outcome": "win" if mine_won and sole else "draw" if mine_won else "loss"})
    current = next((g["id"] for g in mine if g["status"] == "playing"), None)
    out = {"pseudonym": who["pseudonym"], "consented": bool(who["consented"]),
           "games_per_person": arena.study.games_per_person, "finished": len(history),
           "current": current, "history": history, "step": step}
    if step["step"] == "questions":
        out["questions"] = [{k: v for k, v in q.items() if k != "expect"}  # no hint of the check
                            for q in arena.study.stage(step["stage"])]
    return out


@router.post("/api/consent")
async def consent(request: Request, body: ConsentBody | None = None):
    arena = _arena(request)
    who = await arena.participant(request)
    _check_version(arena.study, body.version if body else None)
    await asyncio.wrap_future(arena.store.submit_consent(who["id"], arena.study.consent_version))
    return {"ok": True}


@router.post("/api/answers")
async def answers(body: AnswersBody, request: Request):
    arena = _arena(request)
    who = await arena.participant(request)
    step = await arena.next_step(who)
    if step["step"] != "questions" or step["stage"] != body.stage or step["game"] != body.game:
        raise HTTPException(409, "these questions are not the ones this study asks now; reload the page")
    given = {}
    for q in arena.study.stage(body.stage):
        try:
            given[q["id"]] = check_answer(q, body.answers.get(q["id"]))
        except ValueError as e:
            raise HTTPException(422, f"{q['text']}: {e}") from None
    extra = sorted(set(body.answers) - set(given))
    if extra:
        raise HTTPException(422, f"no question {extra[0][:64]!r} in this questionnaire")
    given = {k: v for k, v in given.items() if v != ""}
    if not await asyncio.wrap_future(arena.store.submit_answers(who["id"], body.stage, body.game, given)):
        raise HTTPException(409, "these questions were already answered")
    return {"ok": True}


@router.post("/api/games")
async def start_game(request: Request):
    arena = _arena(request)
    who = await arena.participant(request)
    step = await arena.next_step(who)
    if step["step"] == "consent":
        raise HTTPException(403, "please read the consent text and agree before playing")
    if step["step"] == "questions":
        raise HTTPException(409, "please answer the questions first")
    if step["step"] == "done":
        raise HTTPException(409, f"you have played all {arena.study.games_per_person} games "
                                 "of this study: thank you!")
    gid = await arena.new_game(who, step)
    live = await arena.get_live(gid)
    async with live.lock:
        frames = await arena.advance(live)
        return _json(await arena.state(live, frames))


@router.get("/api/games/{gid}")
async def game_state(gid: int, request: Request):
    arena = _arena(request)
    live = await arena.own_game(request, gid)
    async with live.lock:
        frames = await arena.advance(live)  # bots owed a move after a restart or an error
        return _json(await arena.state(live, frames))


@router.post("/api/games/{gid}/act")
async def act(gid: int, body: ActBody, request: Request):
    arena = _arena(request)
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
        think = body.think_ms if body.think_ms is not None and 0 <= body.think_ms < 10**9 else None
        timing = {"shown": live.shown, "think_ms": think}
        start = len(live.actions)
        before = len(live.view.log)
        seat = live.apply(body.action)
        frames = [arena.frame(live, before)] if len(live.view.log) > before else []
        await arena.commit(live, start, [(seat, body.action)], timing)
        frames += await arena.advance(live)
        return _json(await arena.state(live, frames))


@lru_cache(maxsize=1)
def rules_reference() -> dict:
    """The rules in short and every card's text: the reference a page shows while playing."""
    cs = default_cards()
    kinds = range(cs.n_kinds)
    dragons = [{"name": d.name, "affinity": d.affinity, "play": {"name": d.play.name, "text": d.play.text},
                "crash": {"name": d.crash.name, "text": d.crash.text}, "ready_text": d.ready_text}
               for d in cs.dragons]
    return {"dragons": dragons,
            "treasures": [payload.card(cs, k) for k in kinds if cs.is_treasure(k)],
            "events": [payload.card(cs, k) for k in kinds if cs.is_event(k)],
            "hijinks": [payload.card(cs, k) for k in kinds if cs.is_hijinks(k)]}


@router.get("/api/rules")
async def rules():
    return _json(rules_reference())
