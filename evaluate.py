"""Tournaments between bots, trained agents and people, and the human benchmark ledger.

    python evaluate.py --agents heuristic random [--players N] [--games G] [--seed S]
                       [--workers W] [--json PATH] [--csv PATH] [--plot PATH.png] [--ledger PATH]
                       [--dragons ENTRY ...] [--allow-off-training]
    python evaluate.py --ledger results/human_games.jsonl [--json PATH]
    python evaluate.py --serve --agents heuristic search [--players N] [--host H] [--port P]
                       [--db sqlite:///results/arena.db] [--games-per-person N] [--consent FILE]
    python evaluate.py --ledger sqlite:///results/arena.db [--json PATH]

``--serve`` starts the arena (the ``arena`` package: people play the bots in a browser) and
``--ledger`` with a database URL summarises its study.

Agent specs: ``random``, ``heuristic``, ``search``, ``search:BUDGET`` or
``search:BUDGET:heuristic-picks``, ``pretrained:NAME`` (a model the package ships:
``pretrained:fire``), the path of a saved model (``models/fire.safetensors`` or its ``.json``),
``rllib:CHECKPOINT`` (the policy of a ``train_rllib.py`` checkpoint), and ``human`` or
``human:NAME`` (a person at this terminal).

Fairness by construction
  * A *deal* is one game seed. Every deal is played once per table (each combination of ``--players``
    agents out of ``--agents``; all of them when there are more agents than seats) and, at each
    table, once per rotation of the agents over the seats. With the dragons fixed per seat for the
    deal, the same seed deals the same shuffles (Havok deck, Hijinks deck, hands, first player) in
    every rotation, so each agent plays every seat, dragon and hand of the deal: duplicate play
    cancels the luck of the deal.
  * Who sits to whose left changes from deal to deal too: the cyclic seating orders of a table
    take turns, so no agent always plays just after the same opponent.
  * The dragons per seat rotate from deal to deal (every dragon in every seat once per 4 deals, and
    every cyclic order of the four dragons once per 24; with D dragons in the card set, once per D
    and D! deals).

Which dragon plays
  * A trained model plays the dragon it was trained for (its ``meta``), and is refused at another
    player count than its own. ``--dragons`` fixes dragons per agent (``models/fire.safetensors=fire
    heuristic=darkness``; ``SPEC=any`` lets an agent rotate) or per seat (one dragon or ``any``
    per seat). Playing a model off its training needs ``--allow-off-training``; the report flags
    each such agent and counts its games off training.
  * A fixed agent keeps its dragon in every seat of the rotation (its dragon moves with it, the
    shuffles stay the same); at its table the other agents rotate over the dragons nobody fixed,
    so that over 24 deals each plays each of them equally often. Without fixed dragons everything
    is as above (dragons by seat within a deal).
  * Two agents fixed to one dragon would meet at some table (every combination plays): refused.
  * The table and the CSV give each agent's dragon and its win rate per dragon.
  * ``--games`` is the total number of games, rounded up to whole deals.
  * Games run in parallel (``--workers``, default 2) and are sorted back into a fixed order (deal,
    table, rotation) before any statistic is computed, so the same seed gives the same output whatever
    the number of workers. A ``human`` forces one worker and in-process play.

Statistics per agent: games, wins (sole winner), draws (tied for the highest hoard), losses, the
win rate with its 95% Wilson interval, the mean final hoard and the mean game length in turns, and
an OpenSkill (Plackett-Luce) rating updated game by game in the fixed order, ranking the game's
winners above everybody else (the game's own reward: second place is worth nothing). The
head-to-head matrix gives, for each pair, the row agent's win rate in the games where the column
agent sat at the table. The interval treats games as independent; duplicate games are positively
paired, which makes it, if anything, conservative for comparisons.

Each agent also gets its score (mean reward: +1 a sole win, 0 a shared win, -1 a loss) and its
luck-corrected score, each with a 95% interval (``score``, ``score_ci95``, ``corrected_score``,
``corrected_ci95``): every game is replayed by the AIVAT estimator of :mod:`evaluation.luck`, which
takes the luck of the cards, the contests and the random bot's choices out of each seat's reward
without changing its expectation (docs/luck.md). Each pair of agents gets its paired difference
over the deals both played (each agent's mean on the deal, one difference per deal), raw and
corrected, with the interval of that paired difference (``paired``). The ledger summaries give
each human's score both ways (a person's own decisions are never corrected).

Every game with a human is appended to the ledger (default ``results/human_games.jsonl``) as one
JSON line: the replay (seed, options, actions), the seats, the agents and the result. Without
``--agents``, ``--ledger PATH`` replays and checks each line and summarises each human against each
bot and trained agent. Each line is appended whole in one write and synced, so a crash can only
tear the last line. Reading checks every field of every line against a schema (see
:func:`check_ledger_entry`: seats, humans, turns, result, agents, the replay): a bad line, hostile,
corrupt or torn, is skipped and reported with its number and the reason, and costs nothing else
(exit code 2 once the rest is summarised). No seat counts twice, and ``true`` is no seat number.
"""

from __future__ import annotations

import os

# before numpy loads: its BLAS threads spin between small matrix products (train.py)
if __name__ == "__main__":  # a program of its own (importing it leaves the environment alone)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import csv
import datetime as _dt
import itertools
import json
import math
import random
import secrets
import sys
from collections import Counter, defaultdict

from agents import AgentSpecError, make_agent
from agents.runner import play_game
from havok_env.cards import CardDataError, default_cards
from havok_env.constants import MAX_PLAYERS, MIN_PLAYERS, PLAYER_COUNTS, is_player_count
from training.parallel import Pool, handle_interrupts
from training.stats import mean_ci, wilson

DEFAULT_LEDGER = os.path.join("results", "human_games.jsonl")
DEFAULT_GAMES = 100


class EvalError(Exception):
    """A problem with the command line or its inputs: reported in one line, exit code 2."""


def require_extras(args) -> None:
    """Name the missing packages of the eval extra before any game is played."""
    from agents.extras import missing
    from agents.policy import is_model_spec
    needs = {}
    if args.agents:
        needs["openskill"] = "the report's ratings"
        if any(is_model_spec(s) for s in args.agents):
            needs["safetensors"] = "loading models"
    if args.plot:
        needs["matplotlib"] = "--plot"
    msg = missing(needs, "eval")
    if msg:
        raise EvalError(msg)


def is_human(spec: str) -> bool:
    return str(spec).strip().split(":", 1)[0] == "human"


def human_name(spec: str) -> str:
    name = str(spec).strip().partition(":")[2].strip()
    return name or "human"


def agent_labels(specs: list[str]) -> list[str]:
    """Unique labels: a spec given twice becomes ``spec``, ``spec#2``."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for s in specs:
        seen[s] += 1
        out.append(s if seen[s] == 1 else f"{s}#{seen[s]}")
    return out


# -- the schedule ---------------------------------------------------------------------------------


def dragon_names() -> tuple[str, ...]:
    """The dragons of the card set (``dragons.toml``, or ``HAVOK_CARDS``'s), in its order."""
    return tuple(d.name for d in default_cards().dragons)


def _cyclic_orders(dragons: tuple[str, ...]) -> list[tuple[str, ...]]:
    first, rest = dragons[0], dragons[1:]
    return [(first, *p) for p in itertools.permutations(rest)]


def deal_dragons(deal: int, num_players: int) -> list[str]:
    """The dragons by seat for deal number ``deal``."""
    dragons = dragon_names()
    orders = _cyclic_orders(dragons)
    base = orders[(deal // len(dragons)) % len(orders)]
    shift = deal % len(dragons)
    return [base[(s + shift) % len(dragons)] for s in range(num_players)]


def deal_seeds(seed: int, deals: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.getrandbits(63) for _ in range(deals)]


def seating_order(table: tuple[int, ...], deal: int) -> list[int]:
    """The table's agents in clockwise order for ``deal``: the cyclic orders take turns from deal to
    deal, so that over (players - 1)! deals everybody sits to the left of everybody equally often."""
    first, rest = table[0], table[1:]
    orders = list(itertools.permutations(rest))
    return [first, *orders[deal % len(orders)]]


def schedule(num_agents: int, num_players: int, games: int, seed: int, fixed: list | None = None,
             seat_dragons: list | None = None) -> list[dict]:
    """The games of a tournament in their fixed order: deal, then table, then rotation.

    Each job: ``index``, ``deal``, ``seed``, ``dragons`` (by seat), ``table`` (index of the agent
    combination), ``rotation`` and ``seats`` (agent index by seat). ``fixed`` gives each agent's
    dragon (``None``: it rotates); ``seat_dragons`` gives each seat's instead. With neither, the
    deal's dragons stay by seat and the agents rotate over them (see :func:`game_dragons`).
    """
    tables = list(itertools.combinations(range(num_agents), num_players))
    block = len(tables) * num_players
    deals = max(1, math.ceil(games / block))
    jobs = []
    for d, s in enumerate(deal_seeds(seed, deals)):
        for t, table in enumerate(tables):
            order = seating_order(table, d)
            for r in range(num_players):
                seats = [order[(i - r) % num_players] for i in range(num_players)]
                dragons = game_dragons(d, order, r, fixed, seat_dragons)
                jobs.append({"index": len(jobs), "deal": d, "seed": s, "dragons": dragons,
                             "table": t, "rotation": r, "seats": seats})
    return jobs


def game_dragons(deal: int, order: list[int], rotation: int, fixed: list | None = None,
                 seat_dragons: list | None = None) -> list[str]:
    """The dragons by seat of one game: ``order`` is the table's agents clockwise, ``rotation`` how
    far they moved (agent ``order[j]`` sits in seat ``(j + rotation) % n``).

    The dragons nobody fixed are dealt in the deal's order of all of them (:func:`deal_dragons`,
    which meets every order once per 24 deals), skipping the fixed ones. The free seats take them
    in seat order, the same in every rotation (by seat, ``seat_dragons``; or by agent, ``fixed``,
    at a table where nobody is fixed: a tournament of bots is the same as before dragons could be
    fixed). At a table with a fixed agent, that agent keeps its dragon in every seat and the free
    agents pass the free dragons round from rotation to rotation, so over 24 deals each of them
    plays each free dragon equally often.
    """
    n = len(order)
    seat_of = {a: (j + rotation) % n for j, a in enumerate(order)}
    pinned = list(seat_dragons or [None] * n)
    if fixed is not None:
        for a in order:
            pinned[seat_of[a]] = fixed[a]
    free = [x for x in deal_dragons(deal, len(dragon_names())) if x not in pinned]
    out = list(pinned)
    if fixed is None or not any(pinned):
        for seat in range(n):
            if out[seat] is None:
                out[seat] = free.pop(0)
        return out
    # in agent order, not seating order: the seating order cycles with the deal and would tie who
    # gets the extra turn with a dragon (4 rotations over 3 movers) to the deal's dragon order
    movers = sorted(a for a in order if fixed[a] is None)
    for i, a in enumerate(movers):
        out[seat_of[a]] = free[(i + rotation) % len(movers)]
    return out


# -- which dragon plays -----------------------------------------------------------------------------

ANY_DRAGON = "any"


def dragon_name(text: str, where: str) -> str | None:
    """A dragon's name from its name or affinity (any case); ``None`` for ``any``."""
    if str(text).strip().lower() == ANY_DRAGON:
        return None
    cards = default_cards()
    try:
        return cards.dragons[cards.dragon_index(text)].name
    except ValueError as e:
        raise EvalError(f"{where}: {e}, or {ANY_DRAGON}") from None


def trained_for(agent) -> dict | None:
    """``{"dragon", "players"}`` a trained model was trained for (from its ``meta``), else None."""
    meta = getattr(agent, "meta", None)
    if not isinstance(meta, dict):
        return None
    dragon = None
    for key in ("dragon", "affinity"):
        if isinstance(meta.get(key), str):
            try:
                dragon = dragon_name(meta[key], "model")
            except EvalError:
                continue
            if dragon:
                break
    players = meta.get("players")
    if isinstance(players, bool) or not isinstance(players, int):
        players = None
    return {"dragon": dragon, "players": players} if dragon or players else None


def dragon_plan(specs: list[str], num_players: int, entries: list[str] | None,
                trained: list[dict | None]) -> dict:
    """Who plays which dragon: ``mode`` ``"agents"`` (``agents``: each agent's dragon or None, and
    why: ``source`` ``"training"`` or ``"--dragons"``) or ``"seats"`` (``seats``: each seat's).

    By default a trained model plays the dragon it was trained for and everything else rotates.
    ``entries`` are ``--dragons``: all ``SPEC=DRAGON`` (an agent's label, ``spec#2`` for a spec's
    second copy; ``any`` lets it rotate) or all ``DRAGON`` (one per seat, ``any`` for a rotating
    seat).
    """
    labels = agent_labels(specs)
    entries = [str(x).strip() for x in entries or []]
    by_agent = [x for x in entries if "=" in x]
    if by_agent and len(by_agent) < len(entries):
        raise EvalError("--dragons mixes SPEC=DRAGON entries (per agent) with DRAGON entries (per "
                        "seat); use one form")
    if entries and not by_agent:
        if len(entries) != num_players:
            raise EvalError(f"--dragons gives {len(entries)} dragon(s) for {num_players} seats; give one "
                            f"per seat (a dragon or {ANY_DRAGON}), or SPEC=DRAGON per agent")
        seats = [dragon_name(x, "--dragons") for x in entries]
        named = [x for x in seats if x]
        if len(set(named)) < len(named):
            dup = next(x for x in named if named.count(x) > 1)
            raise EvalError(f"--dragons gives {dup} to two seats; each seat needs its own dragon")
        return {"mode": "seats", "seats": seats, "agents": [
            {"dragon": None, "source": None, "trained": t} for t in trained]}
    agents = [{"dragon": t["dragon"] if t else None, "source": "training" if t and t["dragon"] else None,
               "trained": t} for t in trained]
    given: set[int] = set()
    for x in by_agent:
        spec, _, name = x.rpartition("=")
        spec = spec.strip()
        if spec not in labels:
            raise EvalError(f"--dragons {x}: {spec!r} is not one of the agents ({' '.join(labels)})")
        i = labels.index(spec)
        if i in given:
            raise EvalError(f"--dragons sets the dragon of {spec} twice")
        given.add(i)
        agents[i] = {**agents[i], "dragon": dragon_name(name, f"--dragons {x}"), "source": "--dragons"}
    for d in dragon_names():  # every pair of agents meets at some table
        holders = [i for i, a in enumerate(agents) if a["dragon"] == d]
        if len(holders) > 1:
            who = " and ".join(labels[i] + (" (trained as it)" if agents[i]["source"] == "training" else "")
                               for i in holders[:2])
            raise EvalError(f"{who} are both to play {d} and would meet at a table; give one of them "
                            f"another dragon with --dragons SPEC=DRAGON, or SPEC={ANY_DRAGON} to rotate")
    return {"mode": "agents", "agents": agents, "seats": None}


def off_training(plan: dict, game: dict, agent: int) -> tuple[bool, bool]:
    """(another dragon, another player count) than the agent was trained for, in one game."""
    t = plan["agents"][agent]["trained"] if plan else None
    if not t:
        return False, False
    seat = game["seats"].index(agent)
    return (bool(t["dragon"]) and game["dragons"][seat] != t["dragon"],
            bool(t["players"]) and len(game["seats"]) != t["players"])


def check_training_fit(plan: dict, jobs: list[dict], labels: list[str]) -> None:
    """Refuse a tournament that seats a trained model off its training (``--allow-off-training``
    skips this; the report flags such games either way)."""
    for i, a in enumerate(plan["agents"]):
        t = a["trained"]
        if not t:
            continue
        mine = [j for j in jobs if i in j["seats"]]
        other = sorted({j["dragons"][j["seats"].index(i)] for j in mine if off_training(plan, j, i)[0]})
        if mine and off_training(plan, mine[0], i)[1]:
            raise EvalError(f"{labels[i]} was trained for {t['players']} players, not "
                            f"{len(mine[0]['seats'])}; add --allow-off-training to seat it anyway "
                            "(flagged in the report)")
        if other:
            raise EvalError(f"{labels[i]} was trained as {t['dragon']} but --dragons would have it play "
                            f"{', '.join(other)}; add --allow-off-training to play it so (flagged in "
                            "the report)")


# -- playing --------------------------------------------------------------------------------------

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


class _Salted:
    """Passes through to an agent, mixing the agent's index into the seed of each game.

    The runner seeds an agent from the game seed and its seat; in duplicate play two copies of a
    random agent would then replay each other's choices in the rotated games. The salt keeps each
    agent's randomness its own (and still fixed by the tournament seed).
    """

    def __init__(self, agent, index: int):
        self.agent = agent
        self.salt = ((index + 1) * 0x9E3779B97F4A7C15) & ((1 << 63) - 1)
        self.name = getattr(agent, "name", "agent")

    def reset(self, seat, num_players, seed=None):
        self.agent.reset(seat, num_players, seed=None if seed is None else seed ^ self.salt)

    def act(self, observation, action_mask, view):
        return self.agent.act(observation, action_mask, view)


def _play_job(job: dict, agents: list | None = None, log: bool = False,
              specs: list[str] | None = None) -> tuple[dict, dict]:
    if agents is None:
        agents, specs = _WORKER["agents"], _WORKER["specs"]
    seated = [_Salted(agents[i], i) for i in job["seats"]]
    record = play_game(seated, job["seed"], dragons=job["dragons"], log=log)
    return _summarise(job, record, specs), record


def _play_job_summary(job: dict) -> dict:
    return _play_job(job)[0]


def _progress(total: int, show: bool | None):
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the eval extra
        return None
    return tqdm(total=total, unit="game", desc="games", disable=(None if show is None else not show),
                file=sys.stderr)


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
    if humans or workers <= 1 or len(jobs) == 1:
        bar = None if humans else _progress(len(jobs), progress)
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
                if bar is not None:
                    bar.update(1)
        except KeyboardInterrupt:
            interrupted = "interrupted"
        except Exception as e:
            from agents.human import HumanQuit
            if not isinstance(e, HumanQuit):
                raise
            interrupted = f"stopped: {e}"
        finally:
            if bar is not None:
                bar.close()
    else:
        bar = _progress(len(jobs), progress)
        try:
            with Pool(min(workers, len(jobs)), _init_worker, (specs, factory), context="spawn") as pool:
                for summary in pool.imap_unordered(_play_job_summary, jobs):
                    results.append((summary, None))
                    if bar is not None:
                        bar.update(1)
        finally:  # an interrupt's one line goes below the bar, not onto it
            if bar is not None:
                bar.close()
    _close(agents)
    summaries = sorted((s for s, _ in results), key=lambda s: s["index"])
    rep = report(specs, n, summaries, seed=seed, games_requested=games, plan=plan)
    if interrupted:
        rep["interrupted"] = interrupted
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

    game = None
    try:  # the finished game with its log, for the closing screen
        game = Game(seed=record["seed"], log=True, **record["options"])
        for a in record["actions"]:
            game.apply(a)
    except ValueError:  # pragma: no cover - replays are exact; the screen is a courtesy
        game = None
    seated = [i for i in job["seats"]]
    for i in humans:
        if i in seated and hasattr(agents[i], "game_over"):
            seat = agents[i].seat = seated.index(i)
            agents[i].game_over(record, None if game is None else SeatView(game, seat))
    if ledger:
        entry = {
            "version": 1,
            "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "seed": record["seed"], "options": record["options"], "actions": record["actions"],
            "seats": [specs[i] for i in job["seats"]],
            "humans": [s for s, i in enumerate(job["seats"]) if i in humans],
            "agents": list(specs),
            "dragons": record["dragons"],
            "result": record["result"], "turns": record["turns"], "decisions": record["decisions"],
            "tournament": {"seed": seed, "deal": job["deal"], "table": job["table"],
                           "rotation": job["rotation"]},
        }
        append_ledger(ledger, entry)
        for i in humans:
            if i in seated and hasattr(agents[i], "announce"):
                agents[i].announce(f"This game is recorded in the ledger {ledger} "
                                   f"(python evaluate.py --ledger {ledger} summarises it).")


def append_ledger(path: str, entry: dict) -> None:
    """Append one JSON line in a single ``write`` on an ``O_APPEND`` descriptor, then ``fsync`` it.

    A crash can only leave the last line torn (no newline): the next append closes it with a
    newline in the same write, so the torn line stays alone and the reader skips and reports it.
    """
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    data = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:  # a regular file takes it whole; the loop only guards a short write
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


# -- the report -----------------------------------------------------------------------------------


def report(specs: list[str], num_players: int, games: list[dict], seed=None,
           games_requested=None, plan: dict | None = None) -> dict:
    """Per-agent statistics (split by dragon and seat), OpenSkill ratings and the head-to-head
    matrix of a list of games. With the tournament's dragon ``plan`` (:func:`dragon_plan`), each
    agent says which dragon it played and why, and counts its games off its training."""
    from openskill.models import PlackettLuce

    labels = agent_labels(specs)
    order = dragon_names()  # of the by-dragon splits
    k = len(specs)
    st = [{"games": 0, "wins": 0, "draws": 0, "losses": 0, "hoard": 0, "turns": 0, "decisions": 0,
           "rewards": [], "corrected": [],
           "by_dragon": defaultdict(lambda: [0, 0]), "by_seat": defaultdict(lambda: [0, 0]),
           "off": [0, 0, 0]}  # games off training: any, another dragon, another player count
          for _ in range(k)]
    h2h_w = [[0] * k for _ in range(k)]
    h2h_n = [[0] * k for _ in range(k)]
    seat_stats = [[0, 0, 0] for _ in range(num_players)]  # games, wins, draws
    model = PlackettLuce()
    ratings = [model.rating(name=lab) for lab in labels]
    for g in games:
        winners = set(g["winners"])
        sole = len(winners) == 1
        for seat, a in enumerate(g["seats"]):
            s = st[a]
            s["games"] += 1
            s["hoard"] += g["scores"][seat]
            s["turns"] += g["turns"]
            s["decisions"] += g["decisions"]
            won = seat in winners and sole
            drew = seat in winners and not sole
            s["wins"] += won
            s["draws"] += drew
            s["losses"] += seat not in winners
            s["by_dragon"][g["dragons"][seat]][0] += 1
            s["by_dragon"][g["dragons"][seat]][1] += won
            s["by_seat"][seat][0] += 1
            s["by_seat"][seat][1] += won
            s["rewards"].append(_reward(g, seat))
            s["corrected"].append(g["corrected"][seat] if g.get("corrected") else None)
            other_dragon, other_players = off_training(plan, g, a)
            s["off"][0] += other_dragon or other_players
            s["off"][1] += other_dragon
            s["off"][2] += other_players
            seat_stats[seat][0] += 1
            seat_stats[seat][1] += won
            seat_stats[seat][2] += drew
            for b in g["seats"]:
                if b != a:
                    h2h_n[a][b] += 1
                    h2h_w[a][b] += won
        teams = [[ratings[a]] for a in g["seats"]]
        ranks = [1 if seat in winners else 2 for seat in range(len(g["seats"]))]
        new = model.rate(teams, ranks=ranks)
        for seat, a in enumerate(g["seats"]):
            ratings[a] = new[seat][0]
    rows = []
    for i in range(k):
        s = st[i]
        n = s["games"]
        r = ratings[i]
        rows.append({
            "spec": specs[i], "label": labels[i], "games": n, "wins": s["wins"], "draws": s["draws"],
            "losses": s["losses"], "win_rate": s["wins"] / n if n else 0.0,
            "ci95": list(wilson(s["wins"], n)),
            **score_stats(s["rewards"], s["corrected"]),
            "mean_hoard": s["hoard"] / n if n else 0.0, "mean_turns": s["turns"] / n if n else 0.0,
            "openskill": {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()},
            "by_dragon": {d: {"games": v[0], "wins": v[1], "win_rate": v[1] / v[0],
                              "ci95": list(wilson(v[1], v[0]))}
                          for d, v in sorted(s["by_dragon"].items(), key=lambda x: order.index(x[0]))},
            "by_seat": [{"seat": p, "games": v[0], "wins": v[1]} for p, v in sorted(s["by_seat"].items())],
        })
        if plan:
            a = plan["agents"][i]
            rows[-1].update(dragon=a["dragon"], dragon_source=a["source"], trained=a["trained"],
                            off_training={"games": s["off"][0], "other_dragon": s["off"][1],
                                          "other_players": s["off"][2]} if a["trained"] else None)
    return {
        "config": {"agents": list(specs), "players": num_players, "seed": seed,
                   "games_requested": games_requested, "games": len(games),
                   "deals": len({g["deal"] for g in games}) if games else 0,
                   "dragons": None if plan is None else
                   {"mode": plan["mode"], "seats": plan["seats"],
                    "agents": None if plan["mode"] == "seats" else [a["dragon"] for a in plan["agents"]]}},
        "agents": rows,
        "head_to_head": {"agents": labels,
                         "win_rate": [[(h2h_w[a][b] / h2h_n[a][b]) if h2h_n[a][b] else None
                                       for b in range(k)] for a in range(k)],
                         "wins": h2h_w, "games": h2h_n},
        "seats": [{"seat": p, "games": v[0], "wins": v[1], "draws": v[2],
                   "win_rate": v[1] / v[0] if v[0] else 0.0, "ci95": list(wilson(v[1], v[0]))}
                  for p, v in enumerate(seat_stats)],
        "paired": paired(labels, games),
        "luck": _luck_note(games),
        "games": games,
    }


def _reward(g: dict, seat: int) -> float:
    """A seat's reward (+1 sole winner, 0 tied leader, -1 otherwise), from its game line."""
    if "rewards" in g:
        return float(g["rewards"][seat])
    winners = g["winners"]
    return (1.0 if len(winners) == 1 else 0.0) if seat in winners else -1.0


def score_stats(rewards: list, corrected: list) -> dict:
    """The raw score (mean reward: +1 a sole win, 0 a shared win, -1 a loss) and the luck-corrected
    score (evaluation/, docs/luck.md), each with its 95% interval; the corrected ones are None
    when any game lacks its correction."""
    s, ci = mean_ci(rewards)
    out = {"score": s, "score_ci95": ci, "corrected_score": None, "corrected_ci95": None}
    if rewards and all(c is not None for c in corrected):
        out["corrected_score"], out["corrected_ci95"] = mean_ci(corrected)
    return out


def paired(labels: list[str], games: list[dict]) -> list[dict]:
    """For each pair of agents, the mean difference of their scores on the deals both played
    (each agent's mean over its games of the deal; duplicate deals are the pairing), raw and luck
    corrected, with the 95% interval of that paired difference over the deals."""
    by_deal: dict = defaultdict(lambda: defaultdict(lambda: [[], []]))
    for g in games:
        for seat, a in enumerate(g["seats"]):
            cell = by_deal[g["deal"]][a]
            cell[0].append(_reward(g, seat))
            cell[1].append(g["corrected"][seat] if g.get("corrected") else None)
    out = []
    for a, b in itertools.combinations(range(len(labels)), 2):
        raw, cor = [], []
        for deal in by_deal.values():
            if a in deal and b in deal:
                raw.append(_mean(deal[a][0]) - _mean(deal[b][0]))
                both = deal[a][1] + deal[b][1]
                cor.append(None if None in both else _mean(deal[a][1]) - _mean(deal[b][1]))
        if not raw:
            continue
        d, ci = mean_ci(raw)
        row = {"a": labels[a], "b": labels[b], "deals": len(raw), "difference": d, "difference_ci95": ci,
               "corrected_difference": None, "corrected_difference_ci95": None}
        if None not in cor:
            row["corrected_difference"], row["corrected_difference_ci95"] = mean_ci(cor)
        out.append(row)
    return out


def _mean(xs: list) -> float:
    return sum(xs) / len(xs)


def _luck_note(games: list[dict]) -> str | None:
    """Why the corrected scores are missing, if they are."""
    if any(not g.get("corrected") for g in games):
        from evaluation.luck import unavailable
        return unavailable() or "some games were reported without their luck correction"
    return None


def _pct(x: float) -> str:
    return f"{100 * x:5.1f}%"


def _table(headers: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]
    fmt = lambda row: "  ".join(  # noqa: E731 - a small local helper
        str(c).rjust(w) if i in right else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
    return "\n".join([fmt(headers), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows])


def format_report(rep: dict) -> str:
    c = rep["config"]
    n_tables = math.comb(len(c["agents"]), c["players"])
    lines = [f"Tournament: {len(c['agents'])} agents, {c['players']} players, {c['games']} games "
             f"({c['deals']} deal(s) x {n_tables} table(s) x {c['players']} seat rotations), seed {c['seed']}"]
    if c.get("games_requested") and c["games_requested"] != c["games"] and not rep.get("interrupted"):
        lines[0] += f" (--games {c['games_requested']} rounded up to whole deals)"
    if rep.get("interrupted"):
        lines.append(f"Tournament {rep['interrupted']}; statistics cover the {c['games']} finished game(s).")
    plan = c.get("dragons")
    if plan:
        lines.append(_describe_dragons(rep))
    headers = ["agent", "dragon", "games", "wins", "draws", "win rate", "95% CI", "score", "corrected",
               "mean hoard", "mean turns", "mu", "sigma", "ordinal"]
    ranked = sorted(rep["agents"], key=lambda a: -a["openskill"]["ordinal"])
    rows = []
    for a in ranked:
        lo, hi = a["ci95"]
        o = a["openskill"]
        off = (a.get("off_training") or {}).get("games")
        rows.append([a["label"] + (" *" if off else ""), _agent_dragon(a, plan), a["games"], a["wins"],
                     a["draws"], _pct(a["win_rate"]), f"[{_pct(lo)}, {_pct(hi)}]",
                     _score(a["score"], a["score_ci95"]), _score(a["corrected_score"], a["corrected_ci95"]),
                     f"{a['mean_hoard']:.2f}", f"{a['mean_turns']:.1f}", f"{o['mu']:.2f}",
                     f"{o['sigma']:.2f}", f"{o['ordinal']:.2f}"])
    lines.append(_table(headers, rows, right={2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13}))
    if c["games"]:
        lines.append("score: mean reward (+1 a sole win, 0 a shared win, -1 a loss) +- its 95% interval; "
                     "corrected: the same with the luck of the cards, contests and random bots taken "
                     "out (docs/luck.md)"
                     + (f"; not available: {rep['luck']}" if rep.get("luck") else ""))
    for a in ranked:
        off = a.get("off_training") or {}
        if off.get("games"):
            t = a["trained"]
            what = [f"{off['other_dragon']} as another dragon than {t['dragon']}" if off["other_dragon"] else "",
                    f"{off['other_players']} with {c['players']} players, not {t['players']}"
                    if off["other_players"] else ""]
            lines.append(f"* OFF TRAINING (--allow-off-training): {a['label']} played {off['games']} of "
                         f"its {a['games']} games off what it was trained for: "
                         + " and ".join(w for w in what if w) + ".")
    if c["games"]:
        lines.append("")
        lines.append("Win rate by dragon (games)")
        dragons = dragon_names()
        drows = [[a["label"]] + [f"{_pct(a['by_dragon'][d]['wins'] / a['by_dragon'][d]['games'])} "
                                 f"({a['by_dragon'][d]['games']})" if d in a["by_dragon"] else "-"
                                 for d in dragons] for a in ranked]
        lines.append(_table(["agent", *dragons], drows, right=set(range(1, len(dragons) + 1))))
    h = rep["head_to_head"]
    if len(h["agents"]) > 1:
        lines.append("")
        lines.append("Head to head: the row agent's win rate in games with the column agent")
        hrows = [[lab] + ["-" if wr is None else _pct(wr) for wr in row]
                 for lab, row in zip(h["agents"], h["win_rate"])]
        lines.append(_table([""] + h["agents"], hrows, right=set(range(1, len(h["agents"]) + 1))))
    pairs = rep.get("paired") or []
    if pairs and any(p["deals"] > 1 for p in pairs):
        lines.append("")
        lines.append("Paired score differences on the same deals (first minus second, 95% interval "
                     "of the paired difference)")
        prow = [[f"{p['a']} - {p['b']}", p["deals"], _score(p["difference"], p["difference_ci95"]),
                 _score(p["corrected_difference"], p["corrected_difference_ci95"])] for p in pairs]
        lines.append(_table(["pair", "deals", "raw", "corrected"], prow, right={1, 2, 3}))
    seats = rep.get("seats") or []
    if seats and c["games"]:
        lines.append("")
        lines.append("Seat win rates (all agents): " + ", ".join(
            f"player_{s['seat']} {_pct(s['win_rate']).strip()}" for s in seats))
    return "\n".join(lines)


def _score(mean, ci) -> str:
    """``+0.123 +- 0.045``, or ``-`` when there is no such score."""
    if mean is None:
        return "-"
    return f"{mean:+.3f} +- {(ci[1] - ci[0]) / 2:.3f}"


def _agent_dragon(a: dict, plan: dict | None) -> str:
    if not plan:
        return "-"
    if plan["mode"] == "seats":
        return "by seat"
    return a.get("dragon") or "rotates"


def _describe_dragons(rep: dict) -> str:
    plan = rep["config"]["dragons"]
    if plan["mode"] == "seats":
        return ("Dragons by seat (--dragons): " + ", ".join(
            f"player_{p} {d or 'rotates'}" for p, d in enumerate(plan["seats"]))
            + "; the agents rotate over the seats.")
    fixed = [(a["label"], a["dragon"], a.get("dragon_source")) for a in rep["agents"] if a.get("dragon")]
    if not fixed:
        return ("Dragons: every agent rotates over them (the same by seat in every game of a deal, "
                "another order each deal).")
    return ("Dragons: " + "; ".join(
        f"{lab} plays {d} ({'as trained' if src == 'training' else '--dragons'})" for lab, d, src in fixed)
        + "; the others rotate over the rest, deal by deal.")


def write_csv(rep: dict, path: str) -> None:
    _ensure_dir(path)
    dragons = dragon_names()
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["spec", "label", "games", "wins", "draws", "losses", "win_rate", "ci95_low",
                    "ci95_high", "score", "score_ci95_low", "score_ci95_high", "corrected_score",
                    "corrected_ci95_low", "corrected_ci95_high", "mean_hoard", "mean_turns", "openskill_mu",
                    "openskill_sigma",
                    "openskill_ordinal", "dragon", "off_training_games"]
                   + [f"{d.lower()}_{x}" for d in dragons for x in ("games", "wins", "win_rate")])
        plan = rep["config"].get("dragons")
        for a in rep["agents"]:
            o = a["openskill"]
            by = [[str(a["by_dragon"][d]["games"]), str(a["by_dragon"][d]["wins"]),
                   f"{a['by_dragon'][d]['win_rate']:.6f}"] if d in a["by_dragon"] else ["0", "0", ""]
                  for d in dragons]
            w.writerow([a["spec"], a["label"], a["games"], a["wins"], a["draws"], a["losses"],
                        f"{a['win_rate']:.6f}", f"{a['ci95'][0]:.6f}", f"{a['ci95'][1]:.6f}",
                        *_csv_score(a["score"], a["score_ci95"]),
                        *_csv_score(a["corrected_score"], a["corrected_ci95"]),
                        f"{a['mean_hoard']:.4f}", f"{a['mean_turns']:.4f}", f"{o['mu']:.4f}",
                        f"{o['sigma']:.4f}", f"{o['ordinal']:.4f}", _agent_dragon(a, plan),
                        (a.get("off_training") or {}).get("games", 0)]
                       + [x for row in by for x in row])


def _csv_score(mean, ci) -> list[str]:
    return ["", "", ""] if mean is None else [f"{mean:.6f}", f"{ci[0]:.6f}", f"{ci[1]:.6f}"]


def write_json(obj: dict, path: str) -> None:
    _ensure_dir(path)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


PLOT_LABEL_WIDTH = 24


def short_labels(labels: list[str], width: int = PLOT_LABEL_WIDTH) -> list[str]:
    """Labels that fit a plot's axes: a model path becomes its file name without the extension, and
    a name longer than ``width`` loses its middle to an ellipsis. Names that would then coincide
    show the stretch where they differ (``…seed1_dis…``); identical file names keep their folder."""
    def name(label: str, folders: int = 0) -> str:
        base, sep, copy = label.rpartition("#")
        if not (sep and copy.isdigit()):
            base, sep, copy = label, "", ""
        parts = [p for p in base.replace("\\", "/").split("/") if p]
        if parts and (len(parts) > 1 or base.endswith((".safetensors", ".zip", ".json"))):
            last = parts[-1]
            if last.endswith((".safetensors", ".zip", ".json")):
                last = last.rsplit(".", 1)[0]
            base = "/".join(parts[-1 - folders:-1] + [last]) if folders else last
        return base + sep + copy

    def middle(text: str) -> str:
        if len(text) <= width:
            return text
        head = (width - 1) // 2
        return text[:head] + "\u2026" + text[len(text) - (width - 1 - head):]

    def window(text: str, at: int) -> str:  # ``width`` characters around position ``at``
        if len(text) <= width:
            return text
        start = min(max(0, at - width // 3), len(text) - width)
        piece = text[start:start + width]
        if start > 0:
            piece = "\u2026" + piece[1:]
        if start + width < len(text):
            piece = piece[:-1] + "\u2026"
        return piece

    full = [name(lab) for lab in labels]
    if len(set(full)) < len(full):  # the same file name in two folders
        full = [name(lab, 1) if full.count(f) > 1 else f for lab, f in zip(labels, full)]
    out = [middle(f) for f in full]
    for lab in set(out):
        group = [i for i, o in enumerate(out) if o == lab]
        if len(group) > 1:
            at = len(os.path.commonprefix([full[i] for i in group]))
            for i in group:
                out[i] = window(full[i], at)
    counts, seen = Counter(out), Counter()
    for i, lab in enumerate(out):
        if counts[lab] > 1:  # nothing short tells them apart: number them
            seen[lab] += 1
            out[i] = f"{lab} [{seen[lab]}]"
    return out


def plot_head_to_head(rep: dict, path: str) -> None:
    import matplotlib.pyplot as plt

    fig = head_to_head_figure(rep)
    _ensure_dir(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def head_to_head_figure(rep: dict):
    """The head-to-head matrix as a matplotlib figure, laid out to hold its labels and title."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h = rep["head_to_head"]
    labels = short_labels(h["agents"])
    k = len(labels)
    data = [[float("nan") if v is None else v for v in row] for row in h["win_rate"]]
    # room for the longest label beside the rows and, rotated, below the columns (about 0.075
    # inch per character at the tick font size)
    margin = 0.075 * max(len(lab) for lab in labels)
    side = 0.9 * k + 0.6
    fig, ax = plt.subplots(figsize=(max(5.0, side + margin + 1.4), side + 0.75 * margin + 1.3),
                           layout="constrained")
    im = ax.imshow(data, cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(k), labels=labels, rotation=35, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(k), labels=labels)
    ax.set_xlabel("opponent at the table")
    ax.set_ylabel("agent")
    for a in range(k):
        for b in range(k):
            v = h["win_rate"][a][b]
            if v is not None:
                ax.text(b, a, f"{100 * v:.0f}%\nn={h['games'][a][b]}", ha="center", va="center",
                        fontsize=8)
    c = rep["config"]
    fig.suptitle(f"Head-to-head win rate\n({c['players']} players, {c['games']} games)", fontsize=10)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return fig


def _ensure_dir(path: str) -> None:
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)


# -- the human ledger -----------------------------------------------------------------------------


LEDGER_VERSION = 1
MAX_LEDGER_LINE = 1 << 20  # bytes; a game's line takes a few KB
MAX_SPEC = 200  # characters of an agent spec in the ledger
_REQUIRED = ("version", "seed", "options", "actions", "seats", "humans", "result", "turns")


class LedgerLineError(ValueError):
    """A ledger line that does not fit the schema: the message names the field and the problem."""


def read_ledger(path: str, verify: bool = True) -> tuple[list[dict], list[str]]:
    """(good entries, one message per skipped line). Every field of an entry is checked against the
    schema of :func:`check_ledger_entry`, and each entry is replayed when ``verify``. A bad line,
    hostile or torn, is skipped and reported with its number; the rest still counts."""
    if not os.path.exists(path):
        raise EvalError(f"ledger {path!r} does not exist")
    entries, problems = [], []
    try:
        f = open(path, "rb")
    except OSError as e:
        raise EvalError(f"cannot read ledger {path!r}: {e.strerror or e}") from None
    with f:
        no = 0
        while True:
            raw = f.readline(MAX_LEDGER_LINE + 1)
            if not raw:
                break
            no += 1
            if len(raw) > MAX_LEDGER_LINE:
                while raw and not raw.endswith(b"\n"):  # skip the rest of it, unread
                    raw = f.readline(1 << 16)
                problems.append(f"{path}:{no}: skipped a corrupt ledger line: "
                                f"longer than {MAX_LEDGER_LINE} bytes")
                continue
            if not raw.strip():
                continue
            try:
                entry = _parse_ledger_line(raw)
                check_ledger_entry(entry, verify)
            except LedgerLineError as e:
                why = str(e)
                if not raw.endswith(b"\n"):
                    why = f"torn last line, a write cut short ({why})"
                problems.append(f"{path}:{no}: skipped a corrupt ledger line: {why[:240]}")
                continue
            entries.append(entry)
    return entries, problems


def _parse_ledger_line(raw: bytes):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LedgerLineError(f"not UTF-8 text (byte {e.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise LedgerLineError("JSON nested too deeply") from None
    except ValueError as e:
        raise LedgerLineError(f"not JSON ({str(e).splitlines()[0][:80]})") from None


def _json_kind(v) -> str:
    if isinstance(v, bool):
        return "true/false"
    if v is None:
        return "null"
    for t, name in ((str, "a string"), (list, "a list"), (dict, "an object"), ((int, float), "a number")):
        if isinstance(v, t):
            return name
    return type(v).__name__


def _int(v, what: str, lo: int = 0, hi: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise LedgerLineError(f"{what} must be an integer, not {_json_kind(v)}")
    if v < lo or (hi is not None and v > hi):
        span = f"from {lo} to {hi}" if hi is not None else f"from {lo}"
        raise LedgerLineError(f"{what} must be an integer {span}, not {v}")
    return v


def _typed(v, t: type, what: str):
    if not isinstance(v, t):
        raise LedgerLineError(f"{what} must be {_json_kind(t())}, not {_json_kind(v)}")
    return v


def _text(v, what: str) -> str:
    _typed(v, str, what)
    if len(v) > MAX_SPEC:
        raise LedgerLineError(f"{what} is longer than {MAX_SPEC} characters")
    if not v.isprintable():
        raise LedgerLineError(f"{what} holds control characters")
    return v


def _seat_set(v, what: str, n: int) -> list[int]:
    """A list of distinct seats of an ``n``-player table (never a boolean for seat 1)."""
    seats = _typed(v, list, what)
    for i, p in enumerate(seats):
        if _int(p, f"{what}[{i}]") >= n:
            raise LedgerLineError(f"{what}[{i}] must be a seat from 0 to {n - 1}, not {p}")
        if p in seats[:i]:
            raise LedgerLineError(f"{what} lists seat {p} twice")
    return seats


def check_ledger_entry(e, verify: bool = True) -> None:
    """Raise :class:`LedgerLineError` unless ``e`` is a ledger entry as this project writes it.

    Required: ``version`` (1), ``seed``, ``options`` (``num_players``, ``dragons``), ``actions``,
    ``seats`` (one agent spec per seat), ``humans`` (the distinct seats played by a ``human``
    spec, all of them), ``result`` (``winners``: the seats with the best of ``scores``,
    ``reason``) and ``turns``. Optional but checked when present: ``agents`` (the tournament's
    specs, every seat's among them), ``dragons``, ``decisions``, ``time``, ``tournament``. With
    ``verify`` the game is replayed and must finish with the recorded result, turns and dragons.
    """
    if not isinstance(e, dict):
        raise LedgerLineError(f"not a JSON object but {_json_kind(e)}")
    missing = [k for k in _REQUIRED if k not in e]
    if missing:
        raise LedgerLineError("missing " + ", ".join(repr(k) for k in missing))
    if e["version"] != LEDGER_VERSION or isinstance(e["version"], bool):
        raise LedgerLineError(f"version must be {LEDGER_VERSION}, not {json.dumps(e['version'])[:20]}")
    _int(e["seed"], "seed", 0, (1 << 64) - 1)
    options = _typed(e["options"], dict, "options")
    for key in options:
        if key not in ("num_players", "dragons"):
            raise LedgerLineError(f"options has unknown key {str(key)[:40]!r}")
    if "num_players" not in options:
        raise LedgerLineError("options misses 'num_players'")
    n = _int(options["num_players"], "options.num_players", MIN_PLAYERS, MAX_PLAYERS)
    if options.get("dragons") is not None:
        names = _typed(options["dragons"], list, "options.dragons")
        if len(names) != n:
            raise LedgerLineError(f"options.dragons must name {n} dragons, not {len(names)}")
        for i, d in enumerate(names):
            if d is not None:
                try:
                    default_cards().dragon_index(_text(d, f"options.dragons[{i}]"))
                except ValueError:
                    raise LedgerLineError(f"options.dragons[{i}]: unknown dragon {d!r}") from None
    actions = _typed(e["actions"], list, "actions")
    for i, a in enumerate(actions):
        _int(a, f"actions[{i}]")
    seats = _typed(e["seats"], list, "seats")
    if len(seats) != n:
        raise LedgerLineError(f"seats must list {n} seats (options.num_players), not {len(seats)}")
    for i, spec in enumerate(seats):
        _text(spec, f"seats[{i}]")
    humans = _seat_set(e["humans"], "humans", n)
    if not humans:
        raise LedgerLineError("humans must not be empty: a ledger line is a game with a human")
    for p, spec in enumerate(seats):
        if (p in humans) != is_human(spec):
            raise LedgerLineError(f"seat {p} ({spec}) is a human but not in humans" if is_human(spec)
                                  else f"seat {p} ({spec}) is not a human but is in humans")
    if "agents" in e:
        agents = _typed(e["agents"], list, "agents")
        for i, spec in enumerate(agents):
            _text(spec, f"agents[{i}]")
        for p, spec in enumerate(seats):
            if spec not in agents:
                raise LedgerLineError(f"seat {p} ({spec}) is not among the agents")
    result = _typed(e["result"], dict, "result")
    for key in ("winners", "scores", "reason"):
        if key not in result:
            raise LedgerLineError(f"result misses {key!r}")
    winners = _seat_set(result["winners"], "result.winners", n)
    scores = _typed(result["scores"], list, "result.scores")
    if len(scores) != n:
        raise LedgerLineError(f"result.scores must list {n} scores, not {len(scores)}")
    for i, v in enumerate(scores):
        _int(v, f"result.scores[{i}]", 0, 10_000)
    if sorted(winners) != [p for p in range(n) if scores[p] == max(scores)]:
        raise LedgerLineError("result.winners must be the seats with the best score")
    _text(result["reason"], "result.reason")
    _int(e["turns"], "turns", 0, 1_000_000)
    if "decisions" in e and _int(e["decisions"], "decisions") != len(actions):
        raise LedgerLineError(f"decisions is {e['decisions']} but there are {len(actions)} actions")
    if "dragons" in e:
        for i, d in enumerate(_typed(e["dragons"], list, "dragons")):
            _text(d, f"dragons[{i}]")
    if "time" in e:
        _text(e["time"], "time")
    if "tournament" in e:
        _typed(e["tournament"], dict, "tournament")
    if verify:
        _check_replay(e, n)


def _check_replay(e: dict, n: int) -> None:
    from havok_env.engine import Game

    try:
        g = Game(seed=e["seed"], **e["options"])
    except ValueError as err:  # ConfigError
        raise LedgerLineError(f"options: {err}") from None
    for i, a in enumerate(e["actions"]):
        try:
            g.apply(a)
        except ValueError as err:  # IllegalActionError
            raise LedgerLineError(f"the replay fails at actions[{i}]: {str(err)[:100]}") from None
    if g.result is None:
        raise LedgerLineError("the replay does not finish the game")
    r = e["result"]
    if sorted(g.result["winners"]) != sorted(r["winners"]) or list(g.result["scores"]) != r["scores"] \
            or g.result["reason"] != r["reason"]:
        raise LedgerLineError("the replay does not reproduce the recorded result")
    if g.s.turn != e["turns"]:
        raise LedgerLineError(f"turns is {e['turns']} but the replay takes {g.s.turn}")
    if "dragons" in e and e["dragons"] != [g.dragon(p).name for p in range(n)]:
        raise LedgerLineError("dragons do not match the replay")


def summarise_ledger(entries: list[dict]) -> dict:
    """Each human against each opponent spec (bots and trained agents; other humans too)."""
    groups: dict[tuple, dict] = {}
    overall: dict[str, dict] = {}

    def add(d: dict, won: bool, drew: bool, hoard: int, opp_hoard: float, turns: int, corrected):
        d["games"] += 1
        d["rewards"].append(1.0 if won else 0.0 if drew else -1.0)
        d["corrected"].append(corrected)
        d["wins"] += won
        d["draws"] += drew
        d["losses"] += not (won or drew)
        d["hoard"] += hoard
        d["opp_hoard"] += opp_hoard
        d["turns"] += turns

    blank = lambda: {"games": 0, "wins": 0, "draws": 0, "losses": 0, "hoard": 0, "opp_hoard": 0.0,  # noqa: E731 - a small local helper
                     "turns": 0, "rewards": [], "corrected": []}
    from evaluation.luck import corrected_or_none
    for e in entries:
        corrected = corrected_or_none(e, e["seats"])  # people's decisions are never corrected
        winners = set(e["result"]["winners"])
        scores = e["result"]["scores"]
        n = len(e["seats"])
        for h in e["humans"]:
            name = human_name(e["seats"][h])
            won = h in winners and len(winners) == 1
            drew = h in winners and len(winners) > 1
            others = [p for p in range(n) if p != h]
            opp = sum(scores[p] for p in others) / len(others)
            mine = None if corrected is None else corrected[h]
            add(overall.setdefault(name, blank()), won, drew, scores[h], opp, e["turns"], mine)
            for spec in sorted({e["seats"][p] for p in others}):
                key = (name, spec, n)
                add(groups.setdefault(key, blank()), won, drew, scores[h],
                    sum(scores[p] for p in others if e["seats"][p] == spec)
                    / sum(1 for p in others if e["seats"][p] == spec), e["turns"], mine)

    def row(d: dict) -> dict:
        g = d["games"]
        return {"games": g, "wins": d["wins"], "draws": d["draws"], "losses": d["losses"],
                "win_rate": d["wins"] / g if g else 0.0, "ci95": list(wilson(d["wins"], g)),
                **score_stats(d["rewards"], d["corrected"]),
                "mean_hoard": d["hoard"] / g if g else 0.0,
                "mean_opponent_hoard": d["opp_hoard"] / g if g else 0.0,
                "mean_turns": d["turns"] / g if g else 0.0}

    return {
        "humans": [{"human": name, **row(d)} for name, d in sorted(overall.items())],
        "matchups": [{"human": name, "opponent": spec, "players": n, **row(d)}
                     for (name, spec, n), d in sorted(groups.items())],
    }


def format_ledger(summary: dict, path: str, skipped: int) -> str:
    total = sum(h["games"] for h in summary["humans"])
    lines = [f"Human benchmark ledger {path}: {total} human seat-game(s)"
             + (f", {skipped} corrupt line(s) skipped" if skipped else "")]
    if not summary["matchups"]:
        lines.append("(no games yet)")
        return "\n".join(lines)
    headers = ["human", "opponent", "players", "games", "wins", "draws", "losses", "win rate",
               "95% CI", "score", "corrected", "mean hoard", "opp. hoard"]
    rows = []
    for m in summary["matchups"]:
        lo, hi = m["ci95"]
        rows.append([m["human"], m["opponent"], m["players"], m["games"], m["wins"], m["draws"],
                     m["losses"], _pct(m["win_rate"]), f"[{_pct(lo)}, {_pct(hi)}]",
                     _score(m["score"], m["score_ci95"]), _score(m["corrected_score"], m["corrected_ci95"]),
                     f"{m['mean_hoard']:.2f}", f"{m['mean_opponent_hoard']:.2f}"])
    lines.append(_table(headers, rows, right={2, 3, 4, 5, 6, 7, 9, 10, 11, 12}))
    lines.append("score: the human's mean reward (+1 a sole win, 0 a shared win, -1 a loss) +- its 95% "
                 "interval; corrected: the same with the luck taken out (docs/luck.md)")
    lines.append("")
    lines.append("Overall: " + "; ".join(
        f"{h['human']} won {h['wins']}/{h['games']} ({_pct(h['win_rate']).strip()}, 95% CI "
        f"{_pct(h['ci95'][0]).strip()}-{_pct(h['ci95'][1]).strip()}; score {_score(h['score'], h['score_ci95'])}, "
        f"corrected {_score(h['corrected_score'], h['corrected_ci95'])})" for h in summary["humans"]))
    return "\n".join(lines)


# -- command line ---------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="evaluate.py",
        description="Tournaments between bots, trained agents and humans; the human benchmark ledger.",
        epilog="Agent specs: random, heuristic, search, search:BUDGET[:heuristic-picks], pretrained:NAME, "
               "a saved model path (.safetensors or .json), rllib:CHECKPOINT, "
               "human or human:NAME. Without --agents, "
               "--ledger PATH summarises the "
               "human games. Dragons: an agent with a fixed dragon keeps it in every seat of the "
               "seat rotation (same shuffles every rotation: duplicate deals stay); at its table "
               "the other agents rotate over the dragons nobody fixed, each playing each of them "
               "equally often over 24 deals (with the four dragons); with nothing fixed the dragons "
               "stay by seat within a "
               "deal and rotate between deals.")
    p.add_argument("--agents", nargs="+", metavar="SPEC", help="the agents of the tournament")
    p.add_argument("--players", type=int,
                   help=f"seats per game ({MIN_PLAYERS}-{MAX_PLAYERS}; default: the number of agents)")
    p.add_argument("--games", type=int,
                   help=f"total games, rounded up to whole deals (default {DEFAULT_GAMES}; "
                        "with a human: one deal)")
    p.add_argument("--seed", type=int, help="tournament seed (default: random, printed)")
    p.add_argument("--workers", type=int, default=2, help="parallel processes (default 2)")
    p.add_argument("--json", metavar="PATH", help="write the report as JSON")
    p.add_argument("--csv", metavar="PATH", help="write the per-agent table as CSV")
    p.add_argument("--plot", metavar="PATH.png", help="draw the head-to-head win-rate matrix")
    p.add_argument("--ledger", metavar="PATH",
                   help=f"human games ledger (default {DEFAULT_LEDGER}); alone: summarise it")
    p.add_argument("--dragons", nargs="+", metavar="ENTRY",
                   help="fix dragons per agent (SPEC=DRAGON, e.g. pretrained:fire=fire heuristic=darkness; "
                        "SPEC=any lets it rotate) or per seat (one DRAGON or any per seat, e.g. fire "
                        "darkness). By default a trained model plays the dragon it was trained for and "
                        "the other agents rotate over the remaining dragons")
    p.add_argument("--allow-off-training", action="store_true",
                   help="let a trained model play a dragon or a player count other than the ones it "
                        "was trained for (refused otherwise); its games off training are flagged in "
                        "the report")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    arena = p.add_argument_group("arena (people play the --agents bots in a browser; pip install -e '.[arena]')")
    arena.add_argument("--serve", action="store_true", help="start the arena server")
    arena.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    arena.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    arena.add_argument("--db", metavar="URL", help="database (default sqlite:///results/arena.db; "
                                                   "or postgresql://...)")
    arena.add_argument("--games-per-person", type=int, metavar="N",
                       help="games each participant plays (default: one per bot)")
    arena.add_argument("--consent", metavar="FILE", help="the study's consent text (default: a generic one)")
    return p


def main(argv: list[str] | None = None, stdin=None, stdout=None) -> int:
    out = stdout or sys.stdout
    args = build_parser().parse_args(argv)
    try:
        if args.serve:
            import arena
            return arena.serve(args.agents, players=args.players, host=args.host, port=args.port,
                               db=args.db, games_per_person=args.games_per_person,
                               consent=args.consent, seed=args.seed, out=out)
        if not args.agents and args.ledger and "://" in args.ledger:
            import arena
            return arena.ledger_summary(args.ledger, json_path=args.json, out=out)
        require_extras(args)
        if not args.agents:
            if not args.ledger:
                raise EvalError("give --agents SPEC SPEC ... for a tournament, "
                                "or --ledger PATH to summarise human games")
            entries, problems = read_ledger(args.ledger)
            summary = summarise_ledger(entries)
            out.write(format_ledger(summary, args.ledger, len(problems)) + "\n")
            if args.json:
                write_json({"ledger": args.ledger, **summary, "skipped": problems}, args.json)
            for msg in problems:
                print(f"evaluate.py: {msg}", file=sys.stderr)
            return 2 if problems else 0
        if args.workers < 1:
            raise EvalError(f"--workers must be at least 1, not {args.workers}")
        seed = args.seed if args.seed is not None else secrets.randbits(31)
        human_io = {}
        if stdin is not None:
            human_io["input"] = stdin
        if stdout is not None:
            human_io["output"] = stdout
        rep = run_tournament(args.agents, num_players=args.players, games=args.games, seed=seed,
                             workers=args.workers, progress=False if args.no_progress else None,
                             ledger=args.ledger or DEFAULT_LEDGER, human_io=human_io,
                             dragons=args.dragons, allow_off_training=args.allow_off_training)
        out.write(format_report(rep) + "\n")
        if any(is_human(a) for a in args.agents) and rep["config"]["games"]:
            out.write(f"Games with a human are recorded in the ledger {args.ledger or DEFAULT_LEDGER}.\n")
        if args.seed is None:
            out.write(f"(pass --seed {seed} to reproduce)\n")
        if args.json:
            write_json(rep, args.json)
        if args.csv:
            write_csv(rep, args.csv)
        if args.plot:
            plot_head_to_head(rep, args.plot)
        return 130 if rep.get("interrupted") == "interrupted" else 0
    except (EvalError, CardDataError) as e:
        print(f"evaluate.py: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evaluate.py: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    handle_interrupts()
    sys.exit(main())
