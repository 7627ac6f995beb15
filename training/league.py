"""A self-play league for the batched environment: the bots plus frozen snapshots of the learner.

Every opponent seat of every new game draws a member with *prioritised fictitious self-play*
(PFSP, as in AlphaStar's league): a member's weight is ``(1 - s) ** power``, where ``s`` is the
learner's recent score against it (1 a win, 0.5 a draw, 0 a loss; an exponentially decayed
average over about ``window`` games, 0.5 before any game). The members that still beat the
learner are played most; one it always beats is kept at a small ``floor`` share, so that it is
not forgotten. The bots together get at least ``bot_share`` of the games (scaled up, their PFSP
order kept): without it, eight snapshots at about even scores left the heuristic about a seventh
of the games, and the learner it was trained to beat fell behind (docs/TRAINING.md, "From
scratch"). ``train.py --self-play`` adds a snapshot every ``--snapshot-every`` steps and keeps
the last ``--pool-size``; the bots stay in the league for good.

    league = League(["heuristic", "random"], max_snapshots=8)
    venv = HavokVecEnv(64, opponents=league.opponents(), weights=league.weights())
    ...
    league.add("step_500000", policy_agent.act_batch)   # a frozen snapshot
    league.update(venv)                                 # its results, then new weights
"""

from __future__ import annotations

from dataclasses import dataclass


def _key(opponent):
    """Bots are named by their spec; policies are the objects themselves."""
    return opponent.strip() if isinstance(opponent, str) else id(opponent)


@dataclass
class Member:
    name: str
    opponent: object      # an agent spec of the batched env, or a batched policy
    score: float = 0.5    # the learner's decayed score against it
    games: float = 0.0    # the decayed number of games behind it
    played: int = 0       # games played against it, all told

    def record(self, score: float, decay: float) -> None:
        self.score = (self.score * self.games * decay + score) / (self.games * decay + 1.0)
        self.games = self.games * decay + 1.0
        self.played += 1


class League:
    def __init__(self, bots, max_snapshots: int = 5, power: float = 2.0, floor: float = 0.02,
                 window: int = 2000, bot_share: float = 0.5):
        if not bots:
            raise ValueError("a league needs at least one bot")
        self.members = [Member(str(b), b) for b in bots]
        self.n_bots = len(self.members)
        self.max_snapshots, self.power, self.floor = max_snapshots, power, floor
        self.bot_share = bot_share
        self.decay = 1.0 - 1.0 / max(1, window)

    def add(self, name: str, policy) -> None:
        """A frozen snapshot joins (starting from an even score); the oldest beyond
        ``max_snapshots`` leaves."""
        if self.max_snapshots <= 0:
            return
        self.members.append(Member(name, policy))
        snaps = self.members[self.n_bots:]
        if len(snaps) > self.max_snapshots:
            self.members = self.members[:self.n_bots] + snaps[-self.max_snapshots:]

    def opponents(self) -> list:
        return [m.opponent for m in self.members]

    def weights(self) -> list[float]:
        raw = [max(max(0.0, 1.0 - m.score) ** self.power, 1e-9) for m in self.members]
        total = sum(raw)
        w = [max(x / total, self.floor) for x in raw]
        bots, snaps = sum(w[:self.n_bots]), sum(w[self.n_bots:])
        if snaps and bots < self.bot_share * (bots + snaps):
            scale = self.bot_share / (1.0 - self.bot_share) * snaps / bots if self.bot_share < 1 else 1e9
            w[:self.n_bots] = [x * scale for x in w[:self.n_bots]]
        total = sum(w)
        return [x / total for x in w]

    def record(self, outcomes) -> None:
        """``outcomes``: (opponent, learner's score) pairs; a member that has left is skipped."""
        by_key = {_key(m.opponent): m for m in self.members}
        for opponent, score in outcomes:
            m = by_key.get(_key(opponent))
            if m is not None:
                m.record(score, self.decay)

    def update(self, venv) -> None:
        """Take the results ``venv`` (a :class:`training.vec_env.HavokVecEnv`) gathered since the
        last call, and give it the league's members and weights for its next games."""
        self.record(venv.take_outcomes())
        venv.set_opponents(self.opponents(), self.weights())

    def summary(self) -> list[dict]:
        w = self.weights()
        total = sum(w)
        return [{"name": m.name, "score": round(m.score, 3), "share": round(x / total, 3), "games": m.played}
                for m, x in zip(self.members, w)]
