"""Determinized Monte Carlo search with heuristic rollouts (the top rung of the ladder)."""

from __future__ import annotations

import random
import time

from havok_env.view import SeatView

from .base import Agent
from .heuristic import HeuristicAgent

# Default rollouts per decision by player count: rollouts get longer with more players, and these
# keep the median decision under 100 ms on one core (docs/BENCHMARKS.md).
DEFAULT_BUDGET = {2: 144, 3: 64, 4: 40}


class SearchAgent(Agent):
    """Determinized ("perfect information") Monte Carlo search over the current decision.

    For each of ``simulations // len(legal)`` sampled worlds (at least one), the seat's hidden
    information is filled in at random consistently with what it knows
    (:meth:`SeatView.determinize`:
    opponents' hands, Hijinks deck order, unseen Havok deck order, the game's random generator).
    Every legal action is tried in the *same* world (common random numbers, so the comparison
    between actions is paired and far less noisy) and the game is played out to the end with
    :class:`HeuristicAgent` playing every seat. An outcome scores +1 for a win, 0 for a draw and -1
    for a loss, plus ``margin_weight`` times the final margin (my hoard minus the best other
    hoard) to break ties between equally winning lines. The action with the best mean is chosen;
    ties, and differences smaller than ``prior`` (in mean outcome), go to the heuristic's own choice.

    ``simulations`` is the budget: rollouts per decision. The default (None) is 144 with 2 players,
    64 with 3 and 40 with 4 (``DEFAULT_BUDGET``), which keeps the median decision under 100 ms on
    one core (docs/BENCHMARKS.md). ``time_limit`` (seconds), if set,
    stops early once spent (non-deterministic; off by default). ``max_turns`` truncates rollouts
    after that many turns and scores them by the hoard margin instead (None: play to the end).
    The seeded generator makes the bot reproducible, and since it reads only the seat's view it
    chooses the same way whatever the hidden cards are.
    """

    name = "search"

    def __init__(self, simulations: int | None = None, seed: int | None = None, time_limit: float | None = None,
                 margin_weight: float = 0.02, prior: float = 0.02, z: float = 1.0,
                 max_turns: int | None = None):
        if simulations is not None and simulations < 1:
            raise ValueError("simulations must be at least 1")
        self.simulations = simulations
        self.budget = DEFAULT_BUDGET[2] if simulations is None else int(simulations)
        self.time_limit = time_limit
        self.margin_weight = margin_weight
        self.prior = prior
        self.z = z
        self.max_turns = max_turns
        self.rng = random.Random(seed)
        self.seat = 0
        self.heuristic = HeuristicAgent()
        self.stats = {"decisions": 0, "rollouts": 0}

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.rng = random.Random(seed)
        if self.simulations is None:
            self.budget = DEFAULT_BUDGET.get(num_players, DEFAULT_BUDGET[4])
        self.heuristic.reset(seat, num_players, seed)

    def act(self, observation, action_mask, view) -> int:
        return self.choose(view)

    # -- search ------------------------------------------------------------------------------

    def choose(self, view) -> int:
        legal = view.legal_actions()
        prior_action = self.heuristic.choose(view)
        if len(legal) == 1:
            return legal[0]
        self.stats["decisions"] += 1
        worlds = max(1, self.budget // len(legal))
        values = {a: [] for a in legal}
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        for _ in range(worlds):
            world = view.determinize(self.rng)
            for a in legal:
                g = world.clone()
                g.apply(a)
                values[a].append(self.rollout(g))
            if deadline is not None and time.perf_counter() > deadline:
                break
        done = len(values[prior_action])
        self.stats["rollouts"] += done * len(legal)
        # Deviate from the heuristic's choice only on clear evidence: the paired per-world
        # differences must beat it by ``prior`` on average and by ``z`` standard errors.
        base = values[prior_action]
        best_a, best_score = prior_action, 0.0
        for a in legal:
            if a == prior_action:
                continue
            d = [x - y for x, y in zip(values[a], base)]
            mean = sum(d) / done
            if mean <= self.prior:
                continue
            var = sum((x - mean) ** 2 for x in d) / max(1, done - 1)
            se = (var / done) ** 0.5
            if mean < self.z * se:
                continue
            if mean > best_score:
                best_a, best_score = a, mean
        return best_a

    def rollout(self, g) -> float:
        """Play ``g`` out with heuristic bots in every seat; the outcome for this seat."""
        n = g.num_players
        bots = [HeuristicAgent() for _ in range(n)]
        for i, b in enumerate(bots):
            b.seat = i
        views = [SeatView(g, i) for i in range(n)]
        s, apply = g.s, g.apply  # the engine mutates its state in place
        if self.max_turns is None:
            while s.result is None:
                p = s.pending["player"]
                apply(bots[p].choose(views[p]))
        else:
            stop = s.turn + self.max_turns
            while s.result is None and s.turn < stop:
                p = s.pending["player"]
                apply(bots[p].choose(views[p]))
        scores = g.scores()
        me = self.seat
        margin = scores[me] - max(scores[q] for q in range(n) if q != me)
        if g.is_over:
            winners = g.result["winners"]
            out = (1.0 if len(winners) == 1 else 0.0) if me in winners else -1.0
        else:
            out = max(-1.0, min(1.0, margin / 8.0))
        return out + self.margin_weight * margin
