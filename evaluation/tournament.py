"""Playing a tournament: :func:`run_tournament` builds the agents, plays the schedule
(:mod:`evaluation.schedule`) in worker processes or, with a person at the table, here, and returns
the report (:mod:`evaluation.report`); games with a human go to the ledger
(:mod:`evaluation.ledger`).

Each game is played by :func:`agents.runner.play_game` with the agents' tournament indices mixed
into their seeds, so that two copies of a random agent keep their own randomness in duplicate play.
Games are sorted back into the schedule's order before any statistic, so the same seed gives the
same report whatever the number of workers.
"""

from __future__ import annotations

import datetime as _dt
import math

from agents import AgentSpecError, make_agent
from agents.human import human_name, is_human
from agents.runner import play_game
from havok_env.constants import PLAYER_COUNTS, is_player_count
from training.parallel import Pool, interrupt_handled
from training.progress import Progress

from . import EvalError
from .ledger import DEFAULT_LEDGER, append_ledger, ledger_entry
from .report import report
from .schedule import agent_labels, check_training_fit, dragon_plan, schedule, trained_for


DEFAULT_GAMES = 100
_WORKER: dict = {}


def _build_agents(specs: list[str], factory, human_kwargs: dict | None = None) -> list:
    agents = []
    for spec in specs:
        try:
            if is_human(spec):
                agents.append(factory(spec, name=human_name(spec), **(human_kwargs or {})))
            else:
                agents.append(factory(spec))
        except AgentSpecError as e:
            raise EvalError(str(e)) from None
        except Exception as e:  # noqa: BLE001 - an unreadable model, a missing dependency: one line
            raise EvalError(f"cannot load agent {spec!r}: {type(e).__name__}: {e}") from None
    return agents


def _init_worker(specs, factory):
    _WORKER["agents"] = _build_agents(specs, factory)
    _WORKER["specs"] = list(specs)


def _summarise(job: dict, record: dict, specs: list[str] | None = None) -> dict:
    """One game's line of the report; with the tournament's ``specs``, each seat's reward luck
    corrected from the replay (None where the correction is unavailable)."""
    corrected = None
    if specs is not None:
        from evaluation.luck import corrected_or_none
        corrected = corrected_or_none(record, [specs[i] for i in job["seats"]])
    return {"index": job["index"], "deal": job["deal"], "table": job["table"],
            "rotation": job["rotation"], "seed": record["seed"], "seats": job["seats"],
            "dragons": record["dragons"], "winners": record["result"]["winners"],
            "reason": record["result"]["reason"], "scores": record["result"]["scores"],
            "rewards": record["rewards"], "corrected": corrected,
            "turns": record["turns"], "decisions": record["decisions"]}


def _play_job(job: dict, agents: list | None = None, log: bool = False,
              specs: list[str] | None = None) -> tuple[dict, dict]:
    if agents is None:
        agents, specs = _WORKER["agents"], _WORKER["specs"]
    record = play_game([agents[i] for i in job["seats"]], job["seed"], dragons=job["dragons"], log=log,
                       agent_ids=job["seats"])
    return _summarise(job, record, specs), record


def _play_job_summary(job: dict) -> dict:
    return _play_job(job)[0]


def run_tournament(specs: list[str], num_players: int | None = None, games: int | None = None,
                   seed: int = 0, workers: int = 2, factory=make_agent, progress: bool | None = None,
                   ledger: str | None = DEFAULT_LEDGER, human_io: dict | None = None,
                   dragons: list[str] | None = None, allow_off_training: bool = False) -> dict:
    """Play the tournament and return its report (see :func:`report`).

    ``factory(spec, **kwargs)`` builds an agent (default :func:`agents.make_agent`; it must be a
    module-level function when ``workers > 1``). ``human_io`` (``{"input": ..., "output": ...}``)
    is passed to human agents. Games with a human are appended to ``ledger``. ``dragons`` are the
    ``--dragons`` entries (:func:`dragon_plan`); a trained model is seated off the dragon or player
    count it was trained for only with ``allow_off_training``.
    """
    specs = [str(s).strip() for s in specs]
    if len(specs) < 2:
        raise EvalError(f"a tournament needs at least 2 agents, got {len(specs)}")
    n = len(specs) if num_players is None else num_players
    if not is_player_count(n):
        raise EvalError(f"--players must be {PLAYER_COUNTS}, not {n}")
    if len(specs) < n:
        raise EvalError(f"{n} seats need at least {n} agents, got {len(specs)} ({' '.join(specs)})")
    humans = [i for i, s in enumerate(specs) if is_human(s)]
    block = math.comb(len(specs), n) * n
    if games is None:
        games = block if humans else DEFAULT_GAMES
    if games < 1:
        raise EvalError(f"--games must be at least 1, not {games}")
    dragon_plan(specs, n, dragons, [None] * len(specs))  # the entries' own errors before any loading
    agents = _build_agents(specs, factory, human_io)  # validates every spec in this process
    plan = dragon_plan(specs, n, dragons, [trained_for(a) for a in agents])
    jobs = schedule(len(specs), n, games, seed,
                    fixed=[a["dragon"] for a in plan["agents"]] if plan["mode"] == "agents" else None,
                    seat_dragons=plan["seats"])
    if not allow_off_training:
        try:
            check_training_fit(plan, jobs, agent_labels(specs))
        except EvalError:
            _close(agents)
            raise
    results: list[tuple[dict, dict]] = []
    interrupted = None
    bar = Progress(len(jobs), show=False if humans else progress)
    if humans or workers <= 1 or len(jobs) == 1:
        labels = agent_labels(specs)
        for i in humans:  # before the first game: how many games, and why that many
            if hasattr(agents[i], "announce"):
                mine = sum(i in job["seats"] for job in jobs)
                agents[i].announce(_human_plan(mine, games, len(jobs), n), games=mine)
        try:
            for job in jobs:
                for i in humans:
                    if hasattr(agents[i], "set_table"):
                        agents[i].set_table([labels[a] for a in job["seats"]])
                summary, record = _play_job(job, agents, log=bool(humans), specs=specs)
                results.append((summary, record))
                if any(i in job["seats"] for i in humans):
                    _after_human_game(job, record, specs, agents, humans, ledger, seed)
                bar.update()
        except KeyboardInterrupt:
            interrupt_handled()
            interrupted = "interrupted"
        except Exception as e:
            from agents.human import HumanQuit
            if not isinstance(e, HumanQuit):
                raise
            interrupted = f"stopped: {e}"
        finally:
            bar.close()
    else:
        try:
            with Pool(min(workers, len(jobs)), _init_worker, (specs, factory), context="spawn") as pool:
                for summary in pool.imap_unordered(_play_job_summary, jobs):
                    results.append((summary, None))
                    bar.update()
        except KeyboardInterrupt:  # the workers are killed; the finished games make the report
            interrupt_handled()
            interrupted = "interrupted"
        finally:  # an interrupt's one line goes below the bar, not onto it
            bar.close()
    _close(agents)
    summaries = sorted((s for s, _ in results), key=lambda s: s["index"])
    rep = report(specs, n, summaries, seed=seed, games_requested=games, plan=plan)
    if interrupted:  # the report of the games finished, marked as partial
        rep["interrupted"] = interrupted
        rep["partial"] = {"games": len(summaries), "of": len(jobs)}
    return rep


def _close(agents: list) -> None:
    for a in agents:
        close = getattr(a, "close", None)
        if close:
            close()


def _human_plan(mine: int, asked: int, total: int, players: int) -> str:
    why = (f"each deal (the same shuffled cards) is played {players} times at each table, with "
           "every agent once in every seat, so that the luck of the deal cancels out")
    games = f"{mine} game(s)" if mine == total else f"{mine} of the {total} game(s)"
    if total > asked:
        return (f"You will play {games}, as --games {asked} is rounded up to whole deals: {why}.")
    return f"You will play {games}: {why}."


def _after_human_game(job, record, specs, agents, humans, ledger, seed):
    from havok_env.engine import Game
    from havok_env.view import SeatView

    try:  # the finished game with its log, for the closing screen
        game = Game.replay(record, log=True)
    except ValueError:  # pragma: no cover - replays are exact; the screen is a courtesy
        game = None
    seated = [i for i in job["seats"]]
    for i in humans:
        if i in seated and hasattr(agents[i], "game_over"):
            seat = agents[i].seat = seated.index(i)
            agents[i].game_over(record, None if game is None else SeatView(game, seat))
    if ledger:
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        append_ledger(ledger, ledger_entry(
            record, seats=[specs[i] for i in job["seats"]],
            humans=[s for s, i in enumerate(job["seats"]) if i in humans], agents=specs, time=now,
            tournament={"seed": seed, "deal": job["deal"], "table": job["table"],
                        "rotation": job["rotation"]}))
        for i in humans:
            if i in seated and hasattr(agents[i], "announce"):
                agents[i].announce(f"This game is recorded in the ledger {ledger} "
                                   f"(python evaluate.py --ledger {ledger} summarises it).")
