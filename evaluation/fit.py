"""Fit the luck correction's value function on bot games (run once; the result is shipped).

    python -m evaluation.fit --games 10000 --cache CACHE.npz --out V1.npz   # the first stage
    python -m evaluation.fit --ahead 4000 --init V1.npz --hidden 256 128 --epochs 2 --cache DIR
    python -m evaluation.fit --ahead 8000 --from 4000 --search 1000 --init V2.npz --lr 3e-4 --drop-at 1

The first stage plays bot games of every player count (a fixed mix of heuristic and random bots,
seats rotated) whose seeds lie in ``[FIT_SEEDS, FIT_SEEDS + games)``, which no benchmark or test
evaluates on, and replays each with :func:`evaluation.chance.trace` to list every state on the way
where the value is taken (after each chance event, at each decision, where each position stands),
labelled with the final rewards. A small network (:class:`agents.value.ValueModel`) is fitted
to them by least squares, first on the final reward itself, then ``--rounds`` times on λ-returns
(targets that mix the final reward with the network's own values further along the same game,
``--lam`` from 0 to 1). One game in ten is held out: of the passes on the final reward, the one
with the least error on the held-out games is kept (later passes overfit), and the λ-return rounds
start from it (see :func:`training.value_fit.fit`).

The second stage (``--ahead GAMES``, the shipped network) fits that network again, widened to
``--hidden`` (the same function to begin with), on the games that follow (:data:`AHEAD_SEEDS`;
heuristic, random, search and the trained fire agent: :data:`AHEAD_MIX`) for what the estimator
needs of it. Each game is traced as :func:`evaluation.luck.analyse` corrects it, looking ahead,
with every outcome of every event, and split into its steps (:func:`game_steps`): the corrected
reward of a seat is the value at the start plus, for each event, V's expectation over its outcomes
minus V just before it, and so on, each a linear function of V (the estimator's V: in a two-player
game, half the difference of the network's two seats' values, and with more, each seat's less an
equal share of what they sum to beyond what the rewards do, :func:`evaluation.luck.constant_sum`;
the shipped network's second stage was fitted before the estimator took them, on each seat's own
value; its third, on them). The loss is, per game and seat, the square of the sum of those steps
but the start: what the corrected reward varies by. Asking each step to be zero on its own does
worse: V's errors at one event and the next largely cancel, and only what is left of their sum
counts. One game in ten is held out; the epoch with the least held-out loss is kept (more
overfit).

A further stage (``--from GAME``) fits that network again, with the same loss, on the plan's games
from ``GAME`` to ``--ahead``, which it has not seen (refitting on its own games overfits from the
first pass); ``--search N`` replaces the first ``N`` of them with the search bot at its default
budget against the heuristic (:func:`stage_plan`), the search bot the evaluations measure (the
plan has it at a sixth of that budget). Its record is appended to the network's.

Fitting needs torch (``pip install -e ".[train]"``); the estimator itself needs only numpy.
``value.json`` records what was played, on which seeds, and how well the fit did on games it did
not see. ``--cache`` keeps the played games (an ``.npz``; with ``--ahead`` a folder, one file per
250 games) to fit again without replaying.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from agents.value import DATA, FEATURES_VERSION, MAX_SEATS, ModelFileError, ValueModel, features, layout
from havok_env.files import replaced
from training import value_fit

from .chance import trace
from .luck import constant_sum

# Seeds of the games the value function is fitted on start here. Evaluations and benchmarks use
# other seeds (benchmarks/luck_gain.py refuses these).
FIT_SEEDS = 7_000_000_000

# (weight, agents by seat before rotation) per player count
MIX = {
    2: [(9, ("heuristic", "heuristic")), (9, ("heuristic", "random")), (2, ("random", "random"))],
    3: [(1, ("heuristic",) * 3), (1, ("heuristic", "random", "random"))],
    4: [(2, ("heuristic",) * 4), (2, ("heuristic", "random", "random", "random")),
        (1, ("heuristic", "heuristic", "random", "random"))],
}
PLAYER_SHARE = {2: 0.7, 3: 0.1, 4: 0.2}


def game_plan(games: int, start: int = FIT_SEEDS, mixes=None, share=None) -> list[tuple[int, tuple]]:
    """(seed, agents by seat) for each fitting game, in a fixed order (the first stage's mix by
    default)."""
    mixes, share = mixes or MIX, share or PLAYER_SHARE
    rng = random.Random(start)
    out = []
    counts = list(share)
    for i in range(games):
        n = rng.choices(counts, weights=[share[c] for c in counts])[0]
        mix = mixes[n]
        specs = rng.choices([m[1] for m in mix], weights=[m[0] for m in mix])[0]
        r = rng.randrange(n)
        out.append((start + i, specs[r:] + specs[:r]))
    return out


# The first stage's games are dealt by the batched core (havok_env.vector.VectorGames), one
# generator per player count seeded BATCH_SEED + players: each game's own seed is a 63-bit number
# drawn from it, so no evaluation's seeded game is among them (the chance is about one in 10^9).
BATCH_SEED = FIT_SEEDS + 100_000


def collect(games: int, seed: int = BATCH_SEED, keep: float = 0.15, envs: int = 256, log=print) -> dict:
    """The first stage's bot games (:func:`training.value_fit.collect` with :data:`MIX` and
    :data:`PLAYER_SHARE`)."""
    return value_fit.collect(games, MIX, PLAYER_SHARE, seed=seed, keep=keep, envs=envs, log=log)


# -- the second stage: fitted where the look-ahead estimator takes its values ----------------------

# The second stage's games follow the first's seeds, with the agents the evaluations pit against
# each other: the trained fire agent keeps its own dragon, the search bot plays at a sixth of its
# default budget (it is only the path that matters: the look-ahead values a search seat's positions
# with the heuristic's choices).
AHEAD_SEEDS = FIT_SEEDS + 10_000
AHEAD_MIX = {
    2: [(4, ("pretrained:fire_distilled", "heuristic")), (2, ("heuristic", "heuristic")), (2, ("heuristic", "random")),
        (1, ("search:160", "heuristic")), (0.5, ("pretrained:fire_distilled", "random")), (0.5, ("random", "random"))],
    3: MIX[3],
    4: MIX[4],
}
AHEAD_SHARE = {2: 0.8, 3: 0.05, 4: 0.15}


def ahead_plan(games: int) -> list[tuple[int, tuple]]:
    """(seed, agents by seat) for each game of the second stage, in a fixed order."""
    return game_plan(games, AHEAD_SEEDS, AHEAD_MIX, AHEAD_SHARE)


def stage_plan(games: int, first: int = 0, search: int = 0) -> list[tuple[int, tuple]]:
    """Games ``first`` to ``games`` of :func:`ahead_plan`, the first ``search`` of them replaced by
    the search bot at its default budget against the heuristic on the same seeds, seats alternating
    (a further stage's games: the plan has the search bot at a sixth of the budget the evaluations
    measure)."""
    bot = [(AHEAD_SEEDS + i, ("search", "heuristic") if i % 2 == 0 else ("heuristic", "search"))
           for i in range(first, first + search)]
    return bot + ahead_plan(games)[first + search:]


def game_steps(rec: dict, specs) -> dict:
    """One game's steps as :func:`evaluation.luck.analyse` (looking ahead, ``steps=True``) splits
    its corrected reward, each a linear function of values: the distinct states valued (``x``,
    feature rows, one per seat, float16), and per step its entries (``e_step``, ``e_state``,
    ``e_coeff``), its constant per seat (``const``: the final rewards it reaches) and whether a
    value function should make it zero (``train``: every step but the first, the start, and a
    search bot's decisions, which are what its choice was worth). ``path``: the states the game
    went through, ``rewards``: the final rewards. The steps sum to the corrected rewards."""
    from .luck import lookahead, random_seats

    n = len(specs)
    rand = random_seats(specs)
    tr = trace(rec, rand, check=True, every_outcome=True, advance=lookahead(specs, n))
    states, where = [], {}

    def ref(a):
        if a is None:  # before the first event: valued 0 (the first step is the start value)
            return None
        if not isinstance(a, tuple):
            return np.asarray(a, np.float32)
        if id(a) not in where:
            where[id(a)] = len(states)
            states.append(a)
        return where[id(a)]

    steps = []  # ([(state or rewards, coefficient)], train), as luck._steps makes them
    points = tr.points
    at = {ev.node: ev for ev in tr.events}
    for t in range(len(points) - 1):
        ev = at.get(t)
        if ev is not None:
            p = np.asarray(ev.weights, np.float64) / ev.total
            steps.append(([(ref(a), float(w)) for a, w in zip(ev.after, p)] + [(ref(points[t]), -1.0)], t > 0))
            steps.append(([(ref(points[t + 1]), 1.0), (ref(ev.after[ev.actual]), -1.0)], True))
        else:
            seat = tr.deciders.get(t)
            search = seat is not None and str(specs[seat]).startswith("search")
            steps.append(([(ref(points[t + 1]), 1.0), (ref(points[t]), -1.0)], not search))
    x = features(states, rand) if states else np.zeros((0, layout().size), np.float32)
    uniq, inverse, keep = {}, np.empty(len(states), np.int64), []
    for i in range(len(states)):  # states whose rows are the same are valued once
        j = uniq.setdefault(x[i * n:(i + 1) * n].tobytes(), len(keep))
        if j == len(keep):
            keep.append(i)
        inverse[i] = j
    x = x.reshape(len(states), n, -1)[keep].reshape(len(keep) * n, -1)
    e_step, e_state, e_coeff = [], [], []
    const = np.zeros((len(steps), n), np.float32)
    for k, (entries, _) in enumerate(steps):
        merged: dict = {}
        for r, c in entries:
            if isinstance(r, np.ndarray):
                const[k] += c * r
            elif r is not None:
                merged[int(inverse[r])] = merged.get(int(inverse[r]), 0.0) + c
        for j, c in merged.items():
            if abs(c) > 1e-12:
                e_step.append(k), e_state.append(j), e_coeff.append(c)
    path = sorted({int(inverse[where[id(a)]]) for a in points[1:-1] if id(a) in where})
    return {"x": x.astype(np.float16), "e_step": np.asarray(e_step, np.int32),
            "e_state": np.asarray(e_state, np.int32), "e_coeff": np.asarray(e_coeff, np.float32),
            "const": const, "train": np.asarray([s[1] for s in steps], bool), "path": np.asarray(path, np.int32),
            "rewards": np.asarray(tr.rewards, np.float32), "players": n}


def steps_values(g: dict, model: ValueModel) -> np.ndarray:
    """Each step of a :func:`game_steps` game valued by ``model``: shape (steps, seats)."""
    n = g["players"]
    v = constant_sum(model.predict(g["x"].astype(np.float32)).reshape(-1, n), n)
    out = g["const"].astype(np.float64)
    np.add.at(out, g["e_step"], g["e_coeff"][:, None] * v[g["e_state"]])
    return out


_AGENTS: dict = {}


def _agent(spec: str, seat: int):
    from agents import make_agent

    if (spec, seat) not in _AGENTS:
        _AGENTS[(spec, seat)] = make_agent(spec)
    return _AGENTS[(spec, seat)]


def collect_ahead(plan, log=print) -> dict:
    """:func:`game_steps` of every game of ``plan`` (seed, agents by seat), joined (:func:`join`)."""
    from agents.runner import play_game

    parts = []
    t0 = time.time()
    for gi, (seed, specs) in enumerate(plan):
        agents = [_agent(s, i) for i, s in enumerate(specs)]
        dragons = [getattr(a, "meta", {}).get("dragon") if hasattr(a, "meta") else None for a in agents]
        dragons = [d if isinstance(d, str) else None for d in dragons]  # a trained model keeps its own
        parts.append(game_steps(play_game(agents, seed=seed, dragons=dragons), specs))
        if gi % 250 == 249:
            log(f"  {gi + 1} games, {time.time() - t0:.0f} s")
    return join(parts)


_SIZES = {"row": "x", "entry": "e_step", "step": "const", "pathn": "path"}


def sparse(x: np.ndarray) -> dict:
    """Feature rows kept by their nonzero inputs (57 of 359 on average: a third of the memory, so
    that three times the games fit): ``x_at`` (where each row's inputs start, one more than the
    rows: offsets, merged as the other ``_at`` arrays are), ``x_col`` (which inputs) and ``x_val``
    (their values, float16 as the rows were)."""
    nz = x != 0
    return {"x_at": np.r_[0, np.cumsum(nz.sum(axis=1))].astype(np.int64),
            "x_col": np.nonzero(nz)[1].astype(np.uint16), "x_val": x[nz].astype(np.float16)}


def dense_rows(d: dict, r0: int, r1: int) -> np.ndarray:
    """Rows ``r0`` to ``r1`` of joined games (:func:`join`), as the float32 inputs of the network."""
    ptr = d["x_at"]
    p0, p1 = ptr[r0], ptr[r1]
    out = np.zeros((r1 - r0, layout().size), np.float32)
    out[np.repeat(np.arange(r1 - r0), np.diff(ptr[r0:r1 + 1])), d["x_col"][p0:p1]] = d["x_val"][p0:p1]
    return out


def join(parts) -> dict:
    """Games of :func:`game_steps` as one set of arrays, each game's rows (:func:`sparse`),
    entries, steps and path states found by ``row_at``, ``entry_at``, ``step_at`` and
    ``pathn_at`` (offsets, one more than the games); constants and rewards padded to 4 seats."""
    out = {k: np.concatenate([p[k] for p in parts]) for k in ("e_step", "e_state", "e_coeff", "train", "path")}
    out.update(sparse(np.concatenate([p["x"] for p in parts])))
    out["const"] = np.concatenate([np.pad(p["const"], ((0, 0), (0, MAX_SEATS - p["players"]))) for p in parts])
    out["rewards"] = np.stack([np.pad(p["rewards"], (0, MAX_SEATS - p["players"])) for p in parts])
    out["players"] = np.array([p["players"] for p in parts], np.int32)
    for name, key in _SIZES.items():
        out[name + "_at"] = np.r_[0, np.cumsum([len(p[key]) for p in parts])].astype(np.int64)
    return out


def merge(datas) -> dict:
    """Several :func:`join` results as one, in order (read one at a time: ``datas`` may be a
    generator, so that only one is held besides the result)."""
    out: dict = {}
    for d in datas:
        for k, v in d.items():
            if k.endswith("_at"):
                v = v[1:] + (out[k][-1][-1] if k in out else 0)
            out.setdefault(k, []).append(v)
        del d
    for k in list(out):
        if k.endswith("_at"):
            out[k] = np.concatenate([np.zeros(1, np.int64)] + out[k])
        else:
            pieces = out.pop(k)
            arr = np.empty((sum(len(p) for p in pieces),) + pieces[0].shape[1:], pieces[0].dtype)
            i = 0
            while pieces:
                p = pieces.pop(0)
                arr[i:i + len(p)] = p
                i += len(p)
            out[k] = arr
    return out


def _collect_part(job):
    plan, path = job
    data = collect_ahead(plan, log=lambda m: print(f"[{path}] {m}", flush=True))
    with replaced(path, "wb") as f:  # whole or not at all: a stopped run leaves no half a file
        np.savez(f, **data)
    return path


CHUNK = 250  # games per file of the second stage's cache


def ahead_files(games: int, cache, first: int = 0, search: int = 0) -> list[Path]:
    """The files of games ``first`` to ``games`` of :func:`stage_plan` under folder ``cache``,
    :data:`CHUNK` games each, in the plan's order; those holding the search bot's games of a
    further stage are named ``search{first}-{end}.npz``, so that they never pass for the plan's."""
    return [Path(cache) / f"{'search' if k < first + search else 'games'}{k}-{min(k + CHUNK, games)}.npz"
            for k in range(first, games, CHUNK)]


def load_ahead(games: int, jobs: int, cache: str | None, log=print, first: int = 0,
               search: int = 0) -> tuple[dict, list]:
    """Games ``first`` to ``games`` of :func:`stage_plan`, in files of :data:`CHUNK` games in the
    plan's order (``games{first}-{end}.npz`` under ``cache``, reread if there: a longer plan
    extends a shorter one, so its first files are the shorter one's), played by ``jobs``
    processes, first files first; then joined, with their agents in the same order."""
    from multiprocessing import Pool

    plan = stage_plan(games, first, search)
    cache = Path(cache) if cache else Path(tempfile.mkdtemp())
    cache.mkdir(parents=True, exist_ok=True)
    parts = [(plan[i:i + CHUNK], str(path))
             for i, path in zip(range(0, len(plan), CHUNK), ahead_files(games, cache, first, search))]
    todo = [p for p in parts if not Path(p[1]).exists()]
    if todo:
        log(f"playing and tracing {sum(len(p[0]) for p in todo)} games in {min(jobs, len(todo))} processes")
        with Pool(min(jobs, len(todo))) as pool:
            for path in pool.imap(_collect_part, todo):
                log(f"  {path}")

    data = merge(read_part(path) for _, path in parts)
    return data, [s for _, s in plan]


def read_part(path) -> dict:
    """One file of the second stage's cache (:func:`join`'s arrays); a file written with its rows
    dense, as the cache kept them before, is read into the same form."""
    with np.load(path, allow_pickle=False) as z:
        d = {k: z[k] for k in z.files}
    if "x" in d:
        d.update(sparse(d.pop("x")))
    return d


def _batch(d: dict, games):
    """The rows of a batch of games, and their entries and steps, one per seat (steps 4 wide), and
    for each row the state it is a row of (numbered through the batch) and its game's player count
    (:func:`evaluation.luck.constant_sum`)."""
    xs, rows, at, coeff, const, train, owner, state, count = [], [], [], [], [], [], [], [], []
    roff = soff = noff = 0
    for k, g in enumerate(games):
        n = int(d["players"][g])
        r0, r1 = d["row_at"][g], d["row_at"][g + 1]
        e0, e1 = d["entry_at"][g], d["entry_at"][g + 1]
        s0, s1 = d["step_at"][g], d["step_at"][g + 1]
        q = np.arange(n)
        xs.append(dense_rows(d, r0, r1))
        state.append(noff + np.arange(r1 - r0) // n)
        count.append(np.full(r1 - r0, n))
        noff += (r1 - r0) // n
        rows.append((roff + d["e_state"][e0:e1][:, None] * n + q).ravel())
        at.append(((soff + d["e_step"][e0:e1])[:, None] * MAX_SEATS + q).ravel())
        coeff.append(np.repeat(d["e_coeff"][e0:e1], n))
        const.append(d["const"][s0:s1])
        m = np.zeros((s1 - s0, MAX_SEATS), bool)
        m[:, :n] = d["train"][s0:s1, None]
        train.append(m)
        owner.append(np.full(s1 - s0, k))
        roff += r1 - r0
        soff += s1 - s0
    return (np.concatenate(xs), np.concatenate(rows).astype(np.int64), np.concatenate(at).astype(np.int64),
            np.concatenate(coeff), np.concatenate(const), np.concatenate(train), np.concatenate(owner),
            np.concatenate(state).astype(np.int64), np.concatenate(count).astype(np.float32))


def _steps_of(net, d, games):
    """Steps (4 wide), which of them to make zero, and the game of each, for a batch."""
    import torch

    x, rows, at, coeff, const, train, owner, state, count = _batch(d, games)
    v = torch.tanh(net(torch.from_numpy(x))[:, 0])
    # luck.constant_sum, state by state: each seat's value less an equal share of the sum beyond 2 - n
    state, count = torch.from_numpy(state), torch.from_numpy(count)
    sums = torch.zeros(int(state.max()) + 1 if len(state) else 0).index_add(0, state, v)
    v = v - (sums[state] - (2.0 - count)) / count
    steps = torch.from_numpy(const).reshape(-1).index_add(0, torch.from_numpy(at), torch.from_numpy(coeff) * v[rows])
    return steps.reshape(-1, MAX_SEATS), train, owner


def game_loss(net, d, games):
    """Per seat and game, the square of the sum of its steps but the start: what the corrected
    reward varies by, less the start value (the seat's corrected reward minus V at the start)."""
    import torch

    steps, train, owner = _steps_of(net, d, games)
    per = torch.zeros(len(games), MAX_SEATS).index_add(0, torch.from_numpy(owner), steps * torch.from_numpy(train))
    return (per ** 2).sum() / float(d["players"][games].sum())


def corrected_of(model: ValueModel, d: dict, games) -> np.ndarray:
    """Each seat's corrected reward in each of ``games`` (the sum of its steps), by ``model``."""
    out = np.zeros((len(games), MAX_SEATS))
    for k, g in enumerate(games):
        n = int(d["players"][g])
        s0, s1 = d["step_at"][g], d["step_at"][g + 1]
        e0, e1 = d["entry_at"][g], d["entry_at"][g + 1]
        v = constant_sum(model.predict(dense_rows(d, d["row_at"][g], d["row_at"][g + 1])).reshape(-1, n), n)
        steps = d["const"][s0:s1, :n].astype(np.float64)
        np.add.at(steps, d["e_step"][e0:e1], d["e_coeff"][e0:e1, None] * v[d["e_state"][e0:e1]])
        out[k, :n] = steps.sum(axis=0)
    return out


def held_out_ratios(model: ValueModel, d: dict, specs: list, games) -> dict:
    """SD of the corrected reward over the raw one's in the held-out games, per agent and table:
    ``A vs B`` the seats of A (the first of the two by name) against B, as ``luck_gain.py``
    measures a pairing, ``N players: A`` every seat of A at tables of N. A seat is never pooled
    with its opponents': their rewards have other means (+0.8 and -0.8 for the heuristic and the
    random bot), which pooled would count as spread."""
    cor = corrected_of(model, d, games)
    groups: dict = {}
    for k, g in enumerate(games):
        sp = specs[g]
        for q in range(len(sp)):
            if len(sp) == 2:
                if sp[q] != min(sp):
                    continue
                key = f"{sp[q]} vs {sp[1 - q]}"
            else:
                key = f"{len(sp)} players: {sp[q]}"
            groups.setdefault(key, []).append((cor[k, q], d["rewards"][g, q]))
    out = {}
    for key, v in sorted(groups.items()):
        v = np.asarray(v)
        raw = float(v[:, 1].std())
        out[key] = {"seat_games": len(v), "sd_ratio": round(float(v[:, 0].std()) / raw, 3) if raw else None}
    return out


def widen(layers, hidden, seed: int = 1):
    """A network with more hidden units computing the same function: the new units get small
    random incoming weights and zero outgoing ones."""
    rng = np.random.default_rng(seed)
    (w0, b0), (w1, b1), (w2, b2) = layers
    h0, h1 = hidden
    W0 = np.zeros((w0.shape[0], h0), np.float32)
    W0[:, :w0.shape[1]] = w0
    W0[:, w0.shape[1]:] = rng.normal(0, 0.05, (w0.shape[0], h0 - w0.shape[1]))
    B0 = np.zeros(h0, np.float32)
    B0[:len(b0)] = b0
    W1 = np.zeros((h0, h1), np.float32)
    W1[:w1.shape[0], :w1.shape[1]] = w1
    W1[:, w1.shape[1]:] = rng.normal(0, 0.05, (h0, h1 - w1.shape[1]))
    B1 = np.zeros(h1, np.float32)
    B1[:len(b1)] = b1
    W2 = np.zeros((h1, 1), np.float32)
    W2[:w2.shape[0]] = w2
    return [(W0, B0), (W1, B1), (W2, b2)]


def torch_net(layers):
    """A torch network computing what ``ValueModel(layers)`` does, before the tanh."""
    import torch

    mods = []
    for i, (w, b) in enumerate(layers):
        lin = torch.nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(np.ascontiguousarray(w.T)))
            lin.bias.copy_(torch.from_numpy(np.asarray(b)))
        mods += [lin, torch.nn.ReLU()] if i < len(layers) - 1 else [lin]
    return torch.nn.Sequential(*mods)


def net_layers(net) -> list:
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
            for m in net if hasattr(m, "weight")]


def fit_ahead(data: dict, layers, epochs: int = 5, lr: float = 1e-3, drop_at: int = 3, batch: int = 32,
              log=print, threads: int = 1):
    """The second stage: starting from ``layers``, AdamW (``lr``, times 0.3 from epoch ``drop_at``)
    on :func:`game_loss` over the games but one in ten, batches of ``batch`` games; the epoch
    with the least loss on the held-out games is kept. Returns its layers and a report."""
    import torch

    torch.set_num_threads(threads)
    games = np.arange(len(data["players"]))
    held, train = games[games % 10 == 0], games[games % 10 != 0]
    net = torch_net(layers)

    def now():
        return net_layers(net)

    def held_loss():
        with torch.no_grad():
            return float(sum(float(game_loss(net, data, held[i:i + 64])) * data["players"][held[i:i + 64]].sum()
                             for i in range(0, len(held), 64)) / data["players"][held].sum())

    best = (held_loss(), now(), 0)
    history = [round(best[0], 4)]
    log(f"  held-out loss at the start {best[0]:.4f}")
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=0.0)
    rng = np.random.default_rng(0)
    for ep in range(epochs):
        if ep == drop_at:
            for g in opt.param_groups:
                g["lr"] *= 0.3
        order = rng.permutation(train)
        for i in range(0, len(order), batch):
            loss = game_loss(net, data, np.sort(order[i:i + batch]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        err = held_loss()
        history.append(round(err, 4))
        log(f"  epoch {ep + 1}: held-out loss {err:.4f}")
        if err < best[0]:
            best = (err, now(), ep + 1)
    return best[1], {"held_out_loss": history, "epoch_kept": best[2]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100_000)
    ap.add_argument("--keep", type=float, default=0.3, help="the share of decisions whose state is kept")
    ap.add_argument("--pass-rows", type=int, default=1_000_000, help="rows per pass of the first fit")
    ap.add_argument("--lam", type=float, default=0.8, help="λ of the λ-returns (1: the final reward)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of λ-returns after the first fit")
    ap.add_argument("--steps", type=int, default=6, help="passes of the first fit, on the final reward")
    ap.add_argument("--hidden", type=int, nargs="+", help="hidden layers (default 128 64; with --ahead, "
                                                              "the --init network's, or wider)")
    ap.add_argument("--ahead", type=int, metavar="GAMES",
                    help="the second stage instead: fit the network --init on GAMES games where the "
                         "look-ahead estimator takes its values (--hidden: widened to)")
    ap.add_argument("--init", help="with --ahead: the first stage's network (.safetensors)")
    ap.add_argument("--from", dest="first", type=int, default=0, metavar="GAME",
                    help="with --ahead: a further stage, on the plan's games from GAME on only, "
                         "--init being the stage before (fitted on the games before GAME)")
    ap.add_argument("--search", type=int, default=0, metavar="GAMES",
                    help="with --from: the first GAMES of them are the search bot at its default "
                         "budget against the heuristic instead, seats alternating")
    ap.add_argument("--epochs", type=int, default=5, help="with --ahead: passes over its games")
    ap.add_argument("--lr", type=float, default=1e-3, help="with --ahead: the learning rate to begin with")
    ap.add_argument("--drop-at", type=int, default=3, help="with --ahead: the pass from which it is "
                                                             "0.3 times that")
    ap.add_argument("--jobs", type=int, default=2, help="with --ahead: processes playing the games, "
                                                                  "then threads fitting")
    ap.add_argument("--cache", help="an .npz keeping the played states (read if it exists); with "
                                    "--ahead, a folder")
    ap.add_argument("--out", default=str(DATA / "value.safetensors"))
    args = ap.parse_args(argv)
    if not 0 <= args.lam <= 1:
        ap.error("--lam must be between 0 and 1")
    if not 0 < args.keep <= 1 or args.games < 10 or args.pass_rows < 1:
        ap.error("--keep must be above 0 and at most 1, --games at least 10, --pass-rows at least 1")
    if args.ahead is not None:
        return main_ahead(ap, args)
    t0 = time.time()

    def log(msg):
        print(msg, flush=True)

    if args.cache and Path(args.cache).exists():
        with np.load(args.cache, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
        if int(data["games"]) != args.games:
            ap.error(f"{args.cache} holds {int(data['games'])} games, not --games {args.games}")
        log(f"{len(data['x'])} rows of {args.games} games from {args.cache}")
    else:
        log(f"playing {args.games} games in the batched core")
        data = collect(args.games, keep=args.keep, log=log)
        data["games"] = np.array(args.games)
        if args.cache:
            with replaced(args.cache, "wb") as f:
                np.savez(f, **data)
        log(f"{len(data['x'])} rows in {time.time() - t0:.0f} s")
    args.hidden = args.hidden or [128, 64]
    layers, report = value_fit.fit(data, tuple(args.hidden), args.lam, args.rounds, args.steps,
                         pass_rows=args.pass_rows, log=log)
    model = ValueModel(layers, {
        "what": "each seat's expected final reward (+1 sole winner, 0 tied leader, -1 otherwise)",
        "features_version": FEATURES_VERSION,
        "inputs": layout().size,
        "layers": [int(w.shape[1]) for w, _ in layers],
        "games": args.games,
        "dealt_by": "havok_env.vector.VectorGames, one generator per player count seeded "
                    f"{BATCH_SEED} + players (each game's seed a 63-bit number drawn from it)",
        "batch_seeds": [BATCH_SEED + n for n in PLAYER_SHARE],
        "states_kept": args.keep,
        "rows_per_pass": args.pass_rows,
        # the seeds luck_gain.py refuses: every seeded fitting game there has been (the value
        # functions shipped before were fitted on seeds from FIT_SEEDS)
        "seeds": [FIT_SEEDS, FIT_SEEDS],
        "players": {str(k): v for k, v in PLAYER_SHARE.items()},
        "agents": {str(n): [[w, list(s)] for w, s in m] for n, m in MIX.items()},
        "rows": int(len(data["x"])),
        "lambda": args.lam,
        "rounds": args.rounds,
        "passes_on_the_final_reward": args.steps,
        "dropout": 0.3,
        "weight_decay": 1e-3,
        "fit": report,
        "seconds": round(time.time() - t0),
        "command": f"python -m evaluation.fit --games {args.games} --keep {args.keep} --pass-rows {args.pass_rows} "
                   f"--hidden {' '.join(map(str, args.hidden))} --lam {args.lam} --rounds {args.rounds} "
                   f"--steps {args.steps}",
    })
    model.save(args.out)
    log(json.dumps(model.meta, indent=2))
    return 0



def refused_seeds(first_meta: dict, ahead: int) -> list[int]:
    """The seeds ``luck_gain.py`` must refuse once the second stage has fitted on ``ahead`` games:
    from the first stage's seeded games on (a first stage dealt by generators alone, such as
    train.py's value function, has none: from the second stage's) to the second stage's last."""
    seeds = seed_range(first_meta)
    return [seeds[0] if seeds else AHEAD_SEEDS, AHEAD_SEEDS + ahead]


def seed_range(meta: dict) -> list[int] | None:
    """A network record's ``seeds`` (the first seeded fitting game and one past the last), or None
    where it has none or they are malformed."""
    seeds = meta.get("seeds")
    return seeds if isinstance(seeds, list) and len(seeds) == 2 and all(type(s) is int for s in seeds) else None


def main_ahead(ap, args) -> int:
    """``--ahead``: the second stage, or with ``--from`` a further one (module docstring)."""
    t0 = time.time()

    def log(msg):
        print(msg, flush=True)

    if not args.init:
        ap.error("--ahead needs --init, the first stage's network (with --from, the stage before)")
    if args.ahead < 10 or args.epochs < 1 or args.jobs < 1 or args.drop_at < 0 or not 0 < args.lr < 1:
        ap.error("--ahead must be at least 10 games, --epochs and --jobs at least 1, --drop-at at "
                 "least 0, --lr between 0 and 1")
    if not 0 <= args.first <= args.ahead - 10 or not 0 <= args.search <= args.ahead - args.first:
        ap.error("--from must leave at least 10 games before --ahead, and --search at most those")
    if args.search and not args.first:
        ap.error("--search is for a further stage (--from)")
    try:
        first = ValueModel.load(args.init)
    except ModelFileError as e:
        ap.error(str(e))
    layers = first.layers
    own = [int(w.shape[1]) for w, _ in layers[:-1]]
    args.hidden = args.hidden or own
    if list(args.hidden) != own:
        small = any(h < int(w.shape[1]) for h, (w, _) in zip(args.hidden, layers))
        if args.first or len(args.hidden) != 2 or len(layers) != 3 or small:
            ap.error("--hidden with --ahead: two sizes, each at least the first stage's (with --from, "
                     "the network's own)")
        layers = widen(layers, args.hidden)
    meta = dict(first.meta)
    stages = meta.get("stages")
    if args.first:
        seeds = seed_range(meta)
        if not (isinstance(stages, list) and len(stages) >= 2 and type(meta.get("games")) is int and seeds):
            ap.error(f"--from: {args.init} is not a second stage's network (its record has no stages)")
        fitted = seeds[1] - AHEAD_SEEDS  # where the plan's games it was fitted on end
        if fitted > args.first:
            ap.error(f"--from {args.first}: {args.init} was fitted on the plan's games up to {fitted}; "
                     f"a further stage starts there or later")
    files = ahead_files(args.ahead, args.cache, args.first, args.search) if args.cache else []
    cached = bool(files) and all(f.exists() for f in files)
    data, specs = load_ahead(args.ahead, args.jobs, args.cache, log=log, first=args.first, search=args.search)
    played = time.time() - t0
    games = args.ahead - args.first
    log(f"{data['row_at'][-1]} rows of {games} games in {played:.0f} s")
    held = np.arange(games)[np.arange(games) % 10 == 0]
    before = held_out_ratios(first, data, specs, held)
    layers, report = fit_ahead(data, layers, args.epochs, lr=args.lr, drop_at=args.drop_at, log=log,
                               threads=args.jobs)
    model = ValueModel(layers, {})
    report["held_out_sd_ratio"] = {k: {"first_stage" if not args.first else "before": before[k]["sd_ratio"], **v}
                                   for k, v in held_out_ratios(model, data, specs, held).items()}
    if args.first:
        what = ("the stage before's network fitted again as the second stage was (the same loss), on "
                "games of the second stage's plan it had not seen" + (
                    ", the first of them the search bot at its default budget against the heuristic, "
                    "seats alternating" if args.search else ""))
        stages = list(stages)
    else:
        what = ("the first stage's network (widened to the layers above where they are wider), fitted so "
                "that the corrected rewards of the look-ahead estimator vary the least: per game and seat, "
                "the square of the sum of the steps it splits a corrected reward into "
                "(evaluation.luck.analyse, steps=True), the start and a search bot's decisions left out")
        stages = [{k: v for k, v in meta.items() if k not in ("what", "features_version", "inputs")}]
    stage = {"what": what, "games": games, "seeds": [AHEAD_SEEDS + args.first, AHEAD_SEEDS + args.ahead]}
    if args.search:
        stage["search_bot_games"] = {"games": args.search, "agents": ["search", "heuristic"],
                                     "seeds": [AHEAD_SEEDS + args.first, AHEAD_SEEDS + args.first + args.search]}
    stage.update({
        "players": {str(k): v for k, v in AHEAD_SHARE.items()},
        "agents": {str(n): [[w, list(s)] for w, s in m] for n, m in AHEAD_MIX.items()},
        "rows": int(data["row_at"][-1]), "epochs": args.epochs, "lr": args.lr, "drop_at": args.drop_at,
        "fit": report,
        "seconds": {"reading_the_games_from_the_cache" if cached else "playing_and_tracing_the_games":
                    round(played), "fit": round(time.time() - t0 - played)},
        "command": "python -m evaluation.fit " + " ".join(argv_of(args, len(stages)))})
    model.meta = {
        "what": meta.get("what", "each seat's expected final reward"),
        "features_version": FEATURES_VERSION,
        "inputs": layout().size,
        "layers": [int(w.shape[1]) for w, _ in layers],
        "games": (meta["games"] if type(meta.get("games")) is int else 0) + games,
        "seeds": refused_seeds(meta, args.ahead),
        "stages": stages + [stage],
    }
    model.save(args.out)
    log(json.dumps(stage, indent=2))
    return 0


def argv_of(args, before: int) -> list:
    # the network of the ``before`` stages before as V{before}.safetensors (its own command is in
    # its last stage's record)
    out = [f"--ahead {args.ahead}"]
    if args.first:
        out += [f"--from {args.first}"] + ([f"--search {args.search}"] if args.search else [])
    out += [f"--init V{before}.safetensors", "--hidden " + " ".join(map(str, args.hidden)), f"--epochs {args.epochs}"]
    if (args.lr, args.drop_at) != (1e-3, 3):
        out += [f"--lr {args.lr:g}", f"--drop-at {args.drop_at}"]
    return out + [f"--jobs {args.jobs}"] + (["--cache DIR"] if args.cache else [])


if __name__ == "__main__":
    sys.exit(main())
