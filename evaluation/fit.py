"""Fit the luck correction's value function on bot games (run once; the result is shipped).

    python -m evaluation.fit [--games 10000] [--lam 0.8] [--cache PATH] [--out evaluation/data/value.npz]

Plays bot games of every player count (a fixed mix of heuristic and random bots, seats rotated)
whose seeds lie in ``[FIT_SEEDS, FIT_SEEDS + games)``, which no benchmark or test evaluates on,
and replays each with :func:`evaluation.chance.trace` to list every state on the way where the
value is taken (after each chance event, at each decision), labelled with the final rewards. A
small network (:class:`evaluation.value.ValueModel`) is fitted to them by least squares, first on
the final reward itself, then ``--rounds`` times on λ-returns (targets that mix the final reward
with the network's own values further along the same game, ``--lam`` from 0 to 1): values of
states a few steps apart are much less noisy than a game's outcome, which is what the correction
needs, a value whose changes from one step to the next are right. One game in ten is held out:
of the passes on the final reward, the one with the least error on the held-out games is kept
(later passes overfit), and the λ-return rounds start from it (see :func:`fit`).

Fitting needs torch (``pip install -e ".[train]"``); the estimator itself needs only numpy.
``value.json`` records what was played, on which seeds, and how well the fit did on games it did
not see. ``--cache PATH`` keeps the played states in an ``.npz`` to fit again without replaying.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from .chance import trace
from .value import DATA, FEATURES_VERSION, ValueModel, features, layout

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


def game_plan(games: int, start: int = FIT_SEEDS) -> list[tuple[int, tuple]]:
    """(seed, agents by seat) for each fitting game, in a fixed order."""
    rng = random.Random(start)
    out = []
    counts = list(PLAYER_SHARE)
    for i in range(games):
        n = rng.choices(counts, weights=[PLAYER_SHARE[c] for c in counts])[0]
        mix = MIX[n]
        specs = rng.choices([m[1] for m in mix], weights=[m[0] for m in mix])[0]
        r = rng.randrange(n)
        out.append((start + i, specs[r:] + specs[:r]))
    return out


def collect(games: int, start: int = FIT_SEEDS, log=print) -> dict:
    """Every state on each game's way, as feature rows (float16; one per seat), with the game,
    the step along it and the final reward of each row."""
    from agents import make_agent
    from agents.runner import play_game

    xs, game, step, reward = [], [], [], []
    t0 = time.time()
    for gi, (seed, specs) in enumerate(game_plan(games, start)):
        rec = play_game([make_agent(s) for s in specs], seed=seed)
        path = trace(rec, check=True, every_outcome=False).path()
        states, rewards = path[:-1], np.asarray(path[-1], np.float32)
        n = len(specs)
        xs.append(features(states, [i for i, s in enumerate(specs) if s == "random"]).astype(np.float16))
        game.append(np.full(len(states) * n, gi, np.int32))
        step.append(np.repeat(np.arange(len(states), dtype=np.int32), n))
        reward.append(np.tile(rewards, len(states)))
        if gi % 1000 == 999:
            log(f"  {gi + 1} games, {time.time() - t0:.0f} s")
    return {"x": np.concatenate(xs), "game": np.concatenate(game), "step": np.concatenate(step),
            "reward": np.concatenate(reward), "players": np.array([len(s) for _, s in game_plan(games, start)])}


def lambda_returns(values: np.ndarray, data: dict, lam: float) -> np.ndarray:
    """For each row, the λ-return of its seat: G = (1 - λ) V(next state) + λ G(next state), the
    final reward after the last state."""
    game, reward = data["game"], data["reward"]
    out = np.empty_like(values)
    # rows are stored game by game, step by step, seat by seat: walk each game backwards
    bounds = np.flatnonzero(np.diff(game)) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(game)]):
        n = int(data["players"][game[lo]])
        v = values[lo:hi].reshape(-1, n)
        g = np.empty_like(v)
        nxt_g = reward[lo:lo + n].copy()
        nxt_v = nxt_g
        for t in range(len(v) - 1, -1, -1):
            g[t] = (1 - lam) * nxt_v + lam * nxt_g
            nxt_g, nxt_v = g[t], v[t]
        out[lo:hi] = g.reshape(-1)
    return out


def fit(data: dict, hidden=(128, 64), lam: float = 0.8, rounds: int = 3, steps: int = 6,
        dropout: float = 0.3, weight_decay: float = 1e-3, batch: int = 4096, seed: int = 0, log=print):
    """The network, fitted as the module docstring says. Returns its layers and a report.

    Stage 1 (on the final reward): ``steps`` passes over 500,000 training rows drawn afresh each
    time, AdamW at 2e-3 (times 0.3 from the fourth pass), dropout ``dropout`` after each hidden
    layer; the pass with the least held-out error is kept. Stage 2: ``rounds`` passes over
    1,000,000 rows on the λ-returns of the network as it stands (recomputed before each pass),
    AdamW at 5e-4, starting from stage 1's network."""
    import torch

    torch.set_num_threads(1)  # a shared machine; one thread also makes the fit repeatable
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x, reward = data["x"], data["reward"]
    held = data["game"] % 10 == 0
    train_rows = np.flatnonzero(~held)
    xv, yv = torch.from_numpy(x[held].astype(np.float32)), torch.from_numpy(reward[held])

    def make():
        sizes = [x.shape[1], *hidden, 1]
        mods = []
        for i in range(len(sizes) - 1):
            mods.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                mods += [torch.nn.ReLU(), torch.nn.Dropout(dropout)]
        return torch.nn.Sequential(*mods)

    def layers(net):
        return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
                for m in net if isinstance(m, torch.nn.Linear)]

    def values_of_all(net) -> np.ndarray:
        model = ValueModel(layers(net), {})
        return np.concatenate([model.predict(x[i:i + 200_000].astype(np.float32))
                               for i in range(0, len(x), 200_000)])

    def held_out(net) -> float:
        net.eval()
        with torch.no_grad():
            err = float(((torch.tanh(net(xv)[:, 0]) - yv) ** 2).mean())
        net.train()
        return err

    def one_pass(net, opt, target, size) -> float:
        rows = rng.choice(train_rows, size=min(size, len(train_rows)), replace=False)
        total = 0.0
        for i in range(0, len(rows), batch):
            idx = np.sort(rows[i:i + batch])
            xb = torch.from_numpy(x[idx].astype(np.float32))
            yb = torch.from_numpy(target[idx].astype(np.float32))
            loss = ((torch.tanh(net(xb)[:, 0]) - yb) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        return total / len(rows)

    history = []
    net = make()
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=weight_decay)
    best = (float("inf"), None, 0)
    for step in range(steps):
        if step == 3:
            for g in opt.param_groups:
                g["lr"] *= 0.3
        err_train = one_pass(net, opt, reward, 500_000)
        err = held_out(net)
        history.append(round(err, 4))
        log(f"  final reward, pass {step + 1}: training error {err_train:.4f}, held-out error {err:.4f}")
        if err < best[0]:
            best = (err, [p.detach().clone() for p in net.parameters()], step + 1)
    with torch.no_grad():
        for p, q in zip(net.parameters(), best[1]):
            p.copy_(q)
    td = make()
    td.load_state_dict(net.state_dict())
    opt = torch.optim.AdamW(td.parameters(), lr=5e-4, weight_decay=weight_decay)
    for rnd in range(rounds):
        td.eval()
        target = lambda_returns(values_of_all(td), data, lam)
        td.train()
        err_train = one_pass(td, opt, target, 1_000_000)
        err = held_out(td)
        history.append(round(err, 4))
        log(f"  λ-returns (λ {lam}), round {rnd + 1}: training error {err_train:.4f}, "
            f"held-out error on the final reward {err:.4f}")
    base = float(((yv - float(reward[~held].mean())) ** 2).mean())
    return layers(td), {"held_out_error": history[-1], "held_out_error_of_the_mean": round(base, 4),
                        "final_reward_pass_kept": best[2], "held_out_errors": history}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10000)
    ap.add_argument("--lam", type=float, default=0.8, help="λ of the λ-returns (1: the final reward)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of λ-returns after the first fit")
    ap.add_argument("--steps", type=int, default=6, help="passes of the first fit, on the final reward")
    ap.add_argument("--hidden", type=int, nargs="+", default=[128, 64])
    ap.add_argument("--cache", help="an .npz keeping the played states (read if it exists)")
    ap.add_argument("--out", default=str(DATA / "value.npz"))
    args = ap.parse_args(argv)
    if not 0 <= args.lam <= 1:
        ap.error("--lam must be between 0 and 1")
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
        log(f"playing and replaying {args.games} games")
        data = collect(args.games, log=log)
        data["games"] = np.array(args.games)
        if args.cache:
            np.savez(args.cache, **data)
        log(f"{len(data['x'])} rows in {time.time() - t0:.0f} s")
    layers, report = fit(data, tuple(args.hidden), args.lam, args.rounds, args.steps, log=log)
    model = ValueModel(layers, {
        "what": "each seat's expected final reward (+1 sole winner, 0 tied leader, -1 otherwise)",
        "features_version": FEATURES_VERSION,
        "inputs": layout().size,
        "layers": [int(w.shape[1]) for w, _ in layers],
        "games": args.games,
        "seeds": [FIT_SEEDS, FIT_SEEDS + args.games],
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
    })
    model.save(args.out)
    log(json.dumps(model.meta, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
