"""A tournament's schedule and who plays which dragon.

* :func:`schedule`: the games in their fixed order (deal, table, rotation): every deal is played
  once per table and once per rotation of the table's agents over its seats, with the same
  shuffles, so duplicate play cancels the luck of the deal; the seating order and the dragons
  by seat rotate from deal to deal (evaluate.py's docstring, "Fairness by construction").
* :func:`dragon_plan`: which dragon each agent or seat plays (a trained model the one it was
  trained for, ``--dragons`` entries, the rest rotating), and :func:`check_training_fit`, which
  refuses a trained model seated off its training.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

from agents.runner import deal_seeds
from havok_env.cards import default_cards

from . import EvalError

def agent_labels(specs: list[str]) -> list[str]:
    """Unique labels: a spec given twice becomes ``spec``, ``spec#2``."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for s in specs:
        seen[s] += 1
        out.append(s if seen[s] == 1 else f"{s}#{seen[s]}")
    return out


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
