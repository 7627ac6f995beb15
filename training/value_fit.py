"""Fitting a value function (:class:`agents.value.ValueModel`) on bot games: the games played in
the batched core with their states kept as feature rows (:func:`collect`), and a small network
fitted to their final rewards, then to λ-returns (:func:`fit`). evaluation/fit.py fits the luck
correction's shipped network this way (and a second stage of its own); a train.py run fits its
search's value function (``--value-games``: :func:`fit_rollout_value`), on games of the heuristic,
the player its search's rollouts play. Fitting needs torch.
"""

from __future__ import annotations

import time

import numpy as np

from agents.value import FEATURES_VERSION, ValueModel, features


def collect(games: int, mix: dict, share: dict, seed: int, keep: float = 0.15, envs: int = 256, log=print,
            progress=None) -> dict:
    """Bot games, ``envs`` at a time in the core (:class:`VectorGames`): each game's player count
    drawn by ``share`` (player count -> weight), its agents by ``mix`` (player count -> (weight,
    agents by seat before rotation) pairs; seats rotated);
    the random bot's decisions drawn for all games at once, the heuristic's asked game by game.
    Each decision's state is kept with probability ``keep`` (the states of one game are much
    alike: more games, fewer states each), as feature rows (float16; one per seat; the table's
    seen top is the longest run any seat knows), with the game, the step along it and the final
    reward of each row. Games still running when ``games`` have ended are left out.
    ``progress(games_done, games)`` is called as games end (a
    :class:`training.progress.Progress` shows the time left)."""
    rng = np.random.default_rng(seed)
    counts = list(share)
    per = rng.multinomial(games, [share[n] for n in counts])
    out = {"x": [], "game": [], "step": [], "reward": [], "players": []}
    t0 = time.time()
    for n, want in zip(counts, per):
        if want:
            _collect_count(out, mix[n], n, int(want), rng, seed + n, keep, envs,
                           lambda m: log(f"{m}, {time.time() - t0:.0f} s"), progress, games)
    data = {k: np.concatenate(v) for k, v in out.items() if k != "players"}
    data["players"] = np.array(out["players"], np.int8)
    return data


def _collect_count(out: dict, mix: list, n: int, want: int, rng, seed: int, keep: float, envs: int, log,
                   progress=None, total: int = 0) -> None:
    """:func:`collect`'s games of ``n`` players (agents by ``mix``), appended to ``out``;
    ``progress(games ended so far, total)`` as each ends."""
    from agents.heuristic import HeuristicAgent
    from havok_env.vector import VectorGames, random_legal_actions
    from havok_env.view import SeatView

    p = np.array([w for w, _ in mix], float)
    vg = VectorGames(min(envs, want), n, seed=seed)
    _, mask, to_act = vg.reset()
    specs, bots, kept = [None] * vg.num_envs, [None] * vg.num_envs, [None] * vg.num_envs

    def deal(i):
        sp = mix[int(rng.choice(len(mix), p=p / p.sum()))][1]
        r = int(rng.integers(n))
        specs[i] = sp[r:] + sp[:r]
        bots[i] = [HeuristicAgent() if a == "heuristic" else None for a in specs[i]]
        for q, b in enumerate(bots[i]):
            if b is not None:
                b.reset(q, n)
        kept[i] = []

    for i in range(vg.num_envs):
        deal(i)
    done = 0
    while done < want:
        acts = random_legal_actions(mask, rng)
        for i in range(vg.num_envs):
            seat = int(to_act[i])
            bot = bots[i][seat]
            if bot is None and rng.random() >= keep:
                continue
            g = vg.game(i)
            if bot is None or rng.random() < keep:
                st = g.s
                top = min(max(len(k) for k in st.known), len(st.havok))
                kept[i].append(features([(st, top)], [q for q, a in enumerate(specs[i]) if a == "random"]))
            if bot is not None:
                acts[i] = bot.choose(SeatView(g, seat))
        _, mask, rewards, ended, to_act = vg.step(acts)
        for i in np.flatnonzero(ended):
            if done < want:
                gi = len(out["players"])
                if kept[i]:
                    x = np.concatenate(kept[i])
                    out["x"].append(x.astype(np.float16))
                    out["game"].append(np.full(len(x), gi, np.int32))
                    out["step"].append(np.repeat(np.arange(len(kept[i]), dtype=np.int32), n))
                    out["reward"].append(np.tile(rewards[i].astype(np.float32), len(kept[i])))
                out["players"].append(n)
                done += 1
                if progress:
                    progress(len(out["players"]), total)
                if len(out["players"]) % 10_000 == 0:
                    log(f"  {len(out['players'])} games, {sum(len(a) for a in out['x'])} rows")
            deal(i)


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
        dropout: float = 0.3, weight_decay: float = 1e-3, batch: int = 4096, seed: int = 0,
        pass_rows: int = 500_000, log=print):
    """The network, fitted as the module docstring says. Returns its layers and a report.

    Stage 1 (on the final reward): ``steps`` passes over ``pass_rows`` training rows drawn afresh
    each time, AdamW at 2e-3 (times 0.3 from the fourth pass), dropout ``dropout`` after each hidden
    layer; the pass with the least held-out error is kept. Stage 2: ``rounds`` passes over twice
    as many rows on the λ-returns of the network as it stands (recomputed before each pass),
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
        err_train = one_pass(net, opt, reward, pass_rows)
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
        err_train = one_pass(td, opt, target, 2 * pass_rows)
        err = held_out(td)
        history.append(round(err, 4))
        log(f"  λ-returns (λ {lam}), round {rnd + 1}: training error {err_train:.4f}, "
            f"held-out error on the final reward {err:.4f}")
    base = float(((yv - float(reward[~held].mean())) ** 2).mean())
    return layers(td), {"held_out_error": history[-1], "held_out_error_of_the_mean": round(base, 4),
                        "final_reward_pass_kept": best[2], "held_out_errors": history}


def fit_rollout_value(players: int, games: int, seed: int, log=print, progress=None) -> tuple[ValueModel, dict]:
    """A value function for a search's rollouts: ``games`` games of ``players`` heuristic bots
    (the rollouts' player), a quarter of their states kept, and :func:`fit` on them (a 256-128
    network, one λ-return round). Returns the model and the record of its fit (also its ``meta``).
    ``progress(games_done, games)`` is called as the games end."""
    t0 = time.time()
    mix = {players: [(1, ("heuristic",) * players)]}
    data = collect(games, mix, {players: 1.0}, seed=seed, keep=0.25, log=log, progress=progress)
    played = time.time() - t0
    layers, report = fit(data, hidden=(256, 128), lam=0.8, rounds=1, steps=4,
                         pass_rows=min(800_000, len(data["x"])), log=log)
    record = {"what": "each seat's expected final reward (+1 sole winner, 0 tied leader, -1 otherwise) when "
                      "the heuristic plays every seat on from the state",
              "features_version": FEATURES_VERSION, "inputs": int(data["x"].shape[1]), "layers": [256, 128, 1],
              "games": games, "players": players, "agents": ["heuristic"] * players,
              "dealt_by": f"havok_env.vector.VectorGames seeded {seed + players} (each game's seed a 63-bit "
                          "number drawn from it)",
              "states_kept": 0.25, "rows": int(len(data["x"])), "lambda": 0.8, "rounds": 1,
              "passes_on_the_final_reward": 4, "fit": report,
              "seconds": {"playing_the_games": round(played, 1), "fit": round(time.time() - t0 - played, 1)}}
    return ValueModel(layers, record), record
