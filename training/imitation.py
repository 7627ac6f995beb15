"""Behaviour cloning: a warm start for the policy network from a teacher bot's games.

``collect(...)`` plays games with :func:`agents.runner.play_game` (the bare engine: fast, no env,
no PettingZoo) in which the *teacher* (by default the heuristic bot) sits in the learner's seat,
with the learner's dragon, against the training opponents, seats rotated. At every decision of the
learner's seat with more than one legal action it records the seat's observation, action mask and
the teacher's action, the
teacher's value estimate of every legal action if it has them (the search bot's ``action_values()``),
and the learner's discounted final reward (for the value network).

``pretrain(policy, data, ...)`` then fits a MaskablePPO ``MlpPolicy`` to that data: the policy head
by cross-entropy on the *masked* logits (illegal actions excluded, as MaskablePPO does), the value
head by regression on the discounted final reward. PPO then fine-tunes from there (train.py
``--bc-games``).

train.py runs it twice: on many games of the cheap heuristic bot (``--bc-games``), then on fewer
games of the search bot (``--distill-games``), whose choices improve on the heuristic's: imitating
an improved policy is one step of expert iteration, and teaches the network far more per game than
PPO's single outcome per game. From the search bot it learns soft targets, a softmax of the
search's value estimates (``--distill-temperature``), rather than its choices alone: the search
deviates from the heuristic only on clear evidence, so its single choice hides how close a call
was, and the estimates tell the network (docs/TRAINING.md measures the difference).
"""

from __future__ import annotations

import threading
import time

import numpy as np

from .parallel import Pool


CHUNK_GAMES = 20  # games per job of collect()
_DTYPES = {"obs": np.float16, "mask": bool, "action": np.int64, "ret": np.float32, "values": np.float32}


def _collect_chunk(args):
    teacher_spec, opp_specs, dragon, players, seed, lo, hi, gamma = args
    from agents import make_agent
    from agents.policy import expected_sizes
    from agents.runner import play_game

    teacher = make_agent(teacher_spec)
    action_values = getattr(teacher, "action_values", None)  # the search bot's estimates
    rows = {"obs": [], "mask": [], "action": [], "ret": []}
    if action_values:
        rows["values"] = []
    for g in range(lo, hi):
        seat = g % players
        rng = np.random.default_rng(seed + g)  # per game, so the chunking cannot change the games
        opps = [make_agent(opp_specs[int(rng.integers(len(opp_specs)))]) for _ in range(players - 1)]
        table = opps[:seat] + [teacher] + opps[seat:]
        dragons = [None] * players
        dragons[seat] = dragon

        def record(q, obs, mask, a, seat=seat):
            if q == seat and mask.sum() > 1:
                rows["obs"].append(obs.astype(np.float16))  # a copy, and half the memory
                rows["mask"].append(mask.astype(bool))
                rows["action"].append(a)
                if action_values:
                    v = np.full(mask.shape, np.nan, np.float32)
                    for b, x in action_values().items():
                        v[b] = x
                    rows["values"].append(v)

        start = len(rows["action"])
        r = float(play_game(table, seed=seed + g, dragons=dragons, on_decision=record)["rewards"][seat])
        k = len(rows["action"]) - start
        # discounted return seen from each recorded decision (rewards arrive at the end only)
        rows["ret"].extend(r * gamma ** (k - 1 - j) for j in range(k))
    # one row per decision; reshape keeps the row width when a chunk recorded none (tiny counts)
    n_obs, n_actions = expected_sizes()
    width = {"obs": n_obs, "mask": n_actions, "values": n_actions}
    return {key: np.asarray(v, _DTYPES[key]).reshape(-1, *([width[key]] if key in width else []))
            for key, v in rows.items()}


def collect(dragon: str, players: int, games: int, opponents=("heuristic",), teacher: str = "heuristic",
            seed: int = 0, workers: int = 1, gamma: float = 0.99, progress=None) -> dict:
    """Teacher decisions in the learner's seat: ``{"obs", "mask", "action", "ret"}`` arrays, and
    ``"values"`` (the teacher's estimate of every legal action, NaN elsewhere) when the teacher
    offers ``action_values()``, as the search bot does.

    Games run in chunks of ``CHUNK_GAMES`` spread over ``workers`` processes: small chunks keep
    every worker busy to the end, and the data is the same whatever the number of workers.
    ``progress(games_done, games)`` is called as chunks finish, in order: a
    :class:`training.progress.Progress` there writes each tenth with the time left."""
    return Collection(dragon, players, games, opponents, teacher, seed, workers, gamma, progress).result()


class Collection:
    """:func:`collect` started in the background: with more than one worker the games are played
    while the caller does other work (train.py fits the warm start meanwhile); :meth:`result`
    waits for them. With one worker the games are played by :meth:`result` itself."""

    def __init__(self, dragon: str, players: int, games: int, opponents=("heuristic",),
                 teacher: str = "heuristic", seed: int = 0, workers: int = 1, gamma: float = 0.99,
                 progress=None):
        self.bounds = [*range(0, max(games, 1), CHUNK_GAMES), games]  # no games: one empty chunk
        self.jobs = [(teacher, list(opponents), dragon, players, seed, lo, hi, gamma)
                     for lo, hi in zip(self.bounds, self.bounds[1:])]
        self.games, self.progress = games, progress
        self.parts, self._error, self._thread, self._data = [], None, None, None
        if workers > 1 and len(self.jobs) > 1:
            pool = Pool(min(workers, len(self.jobs)), context="fork")
            results = pool.imap(_collect_chunk, self.jobs)  # in order, so the data is deterministic
            self._thread = threading.Thread(target=self._drain, args=(results, pool), daemon=True)
            self._thread.start()

    def _drain(self, results, pool=None) -> None:
        try:
            for done, part in zip(self.bounds[1:], results):
                self.parts.append(part)
                if self.progress:
                    self.progress(done, self.games)
        except BaseException as e:  # noqa: BLE001 - re-raised by result(), in the caller's thread
            self._error = e
        finally:
            if pool is not None and self._error is not None:
                pool.kill()  # a failed chunk ends the others at once: its error is what counts
            elif pool is not None:
                pool.close()

    def result(self) -> dict:
        if self._data is None:
            if self._thread is None:
                self._drain(map(_collect_chunk, self.jobs))
            else:
                self._thread.join()
            if self._error is not None:
                raise self._error
            self._data = {key: np.concatenate([p[key] for p in self.parts]) for key in self.parts[0]}
        return self._data


def soft_targets(values: np.ndarray, mask: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(values / temperature)`` over each row's legal actions (0 elsewhere)."""
    z = np.where(mask & ~np.isnan(values), np.nan_to_num(values) / temperature, -np.inf)
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return (z / z.sum(axis=1, keepdims=True)).astype(np.float32)


def pretrain(policy, data: dict, epochs: int = 8, batch_size: int = 512, lr: float = 1e-3,
             value_coef: float = 0.5, seed: int = 0, holdout: float = 0.05, log=None,
             stage: str = "behaviour cloning", temperature: float = 0.0) -> dict:
    """Fit ``policy`` (an SB3 ``MaskableActorCriticPolicy``) to ``data`` by supervised learning.

    With ``temperature > 0`` and the teacher's ``"values"`` in ``data``, the policy head learns the
    soft targets ``softmax(values / temperature)`` instead of the teacher's choices: a search's
    single choice is a noisy verdict on close calls, its value estimates say how close they were.

    Returns ``{"samples", "epochs", "train_accuracy", "holdout_accuracy", "value_mse", "seconds",
    "targets"}`` (accuracy: agreement with the teacher's choices).
    """
    import torch
    import torch.nn.functional as F

    t0 = time.time()
    n = len(data["action"])
    g = np.random.default_rng(seed)
    perm = g.permutation(n)
    n_hold = int(n * holdout)
    hold, train = perm[:n_hold], perm[n_hold:]
    obs = torch.from_numpy(data["obs"])  # float16; converted per batch
    mask = torch.from_numpy(data["mask"])
    act = torch.from_numpy(data["action"])
    ret = torch.from_numpy(data["ret"])
    soft = temperature > 0 and "values" in data
    # cross_entropy takes class indices or, for soft targets, a probability per class
    target = torch.from_numpy(soft_targets(data["values"], data["mask"], temperature)) if soft else act
    params = list(policy.mlp_extractor.parameters()) + list(policy.action_net.parameters()) \
        + list(policy.value_net.parameters()) + list(policy.features_extractor.parameters())
    opt = torch.optim.Adam(params, lr=lr)
    steps_total = epochs * max(1, len(train) // batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.05, 1 - s / max(1, steps_total)))

    def forward(idx):
        x = obs[idx].float()
        feats = policy.extract_features(x)
        if isinstance(feats, tuple):
            pf, vf = feats
        else:
            pf = vf = feats
        logits = policy.action_net(policy.mlp_extractor.forward_actor(pf))
        logits = logits.masked_fill(~mask[idx], -1e8)
        value = policy.value_net(policy.mlp_extractor.forward_critic(vf)).squeeze(-1)
        return logits, value

    policy.train()
    acc = 0.0
    vloss = 0.0
    for ep in range(epochs):
        order = torch.from_numpy(g.permutation(train))
        correct = total = 0
        vsum = 0.0
        for i in range(0, len(order) - batch_size + 1, batch_size):
            idx = order[i:i + batch_size]
            logits, value = forward(idx)
            loss_pi = F.cross_entropy(logits, target[idx])
            loss_v = F.mse_loss(value, ret[idx])
            loss = loss_pi + value_coef * loss_v
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            correct += int((logits.argmax(-1) == act[idx]).sum())
            total += len(idx)
            vsum += float(loss_v.detach()) * len(idx)
        acc, vloss = correct / max(1, total), vsum / max(1, total)
        if log:
            log(f"{stage} epoch {ep + 1}/{epochs}: accuracy {100 * acc:.1f}%, value mse {vloss:.3f}")
    policy.eval()
    hacc = None
    if n_hold:
        with torch.no_grad():
            logits, _ = forward(torch.from_numpy(hold))
            hacc = float((logits.argmax(-1) == act[torch.from_numpy(hold)]).float().mean())
    return {"samples": int(n), "epochs": epochs, "train_accuracy": round(acc, 4),
            "holdout_accuracy": None if hacc is None else round(hacc, 4),
            "value_mse": round(vloss, 4), "seconds": round(time.time() - t0, 1),
            "targets": f"soft, temperature {temperature:g}" if soft else "choices"}
