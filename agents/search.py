"""Determinized Monte Carlo search with heuristic rollouts (the top rung of the ladder)."""

from __future__ import annotations

import copy
import math
import random
import time

from havok_env.view import core_random, rollout, rollouts

from .base import Agent, AgentSpecError
from .heuristic import HeuristicAgent

# Default budget by player count, five to six times what Python rollouts afforded: a median
# decision well under 100 ms on one core, and a full-budget one under it too (docs/BENCHMARKS.md,
# "Search speed"; 3-player rollouts cost the most).
DEFAULT_BUDGET = {2: 960, 3: 800, 4: 864}
# A rollout's cost in simulated decisions: the decisions it plays plus WORLD_COST for sampling
# and copying its world. Each unit of budget buys ROLLOUT_COST of them (the average cost of a
# 2-player rollout played to the end) and at most MAX_ROLLOUTS rollouts.
WORLD_COST = 2
ROLLOUT_COST = 16
MAX_ROLLOUTS = 4
# Which treasure or card to take, give or break once the move is chosen. Over 81,568 search
# decisions in distillation games these were a fifth of the decisions and of the time, but the
# search left the heuristic's choice in 1 of 47 (1 in 5 elsewhere), for a best estimated gain of
# 0.003 (0.055 elsewhere); ``heuristic_picks`` leaves them to the heuristic (docs/TRAINING.md).
HEURISTIC_PICKS = frozenset({"steal_pick", "break_pick", "trade_take", "trade_give", "pass_pick",
                             "raid_pick", "tribute_pick", "salvage_pick", "swap_pick"})


def _options(arg: str, spec: str) -> tuple[str, dict, str | None]:
    """A search spec's argument split into its budget, its options (``heuristic-picks``, and
    ``value`` or ``value=PATH``, to the path or None) and its guide's model spec (the rest after
    ``guide=``, which may hold colons)."""
    budget, _, rest = arg.partition(":")
    options, guide = {}, None
    while rest:
        if rest.startswith("guide="):
            guide = rest[len("guide="):]
            break
        option, _, rest = rest.partition(":")
        name, eq, path = option.partition("=")
        if name not in SEARCH_OPTIONS or name in options or eq and (name != "value" or not path):
            raise AgentSpecError(f"agent spec {spec!r}: {'repeated' if name in options else 'unknown'} "
                                 f"search option {option!r}; the options are heuristic-picks and value "
                                 "(or value=PATH, a path without colons), then guide=MODEL (last)")
        options[name] = path or None
    return budget, options, guide


SEARCH_OPTIONS = ("heuristic-picks", "value")


def guided_spec(spec: str, model: str) -> str | None:
    """The spec of search ``spec`` guided by ``model`` (``search:80:heuristic-picks`` ->
    ``search:80:heuristic-picks:guide=MODEL``); None if ``spec`` is not a search without a guide."""
    name, _, arg = str(spec).strip().partition(":")
    if name != "search":
        return None
    try:
        budget, options, guide = _options(arg, spec)
    except AgentSpecError:
        return None
    if guide is not None:
        return None
    named = [o if options[o] is None else f"{o}={options[o]}" for o in SEARCH_OPTIONS if o in options]
    return ":".join(["search", budget, *named, f"guide={model}"])


class SearchAgent(Agent):
    """Determinized ("perfect information") Monte Carlo search over the current decision.

    World after world, the seat's hidden information is filled in at random consistently with what
    it knows (:meth:`SeatView.determinize`: opponents' hands, Hijinks deck order, unseen Havok deck
    order, the game's random generator). Every action still in the race is tried in the *same*
    world (common random numbers, so the comparison between actions is paired and far less noisy)
    and played ahead with :class:`HeuristicAgent` in every seat, for ``max_turns`` turns or to the
    end. A finished game scores +1 for a win, 0 for a draw and -1 for a loss, an unfinished one
    the margin (my hoard minus the best other hoard) / 8, clipped to ±1; both add ``margin_weight``
    times the margin to break ties between equally winning lines.

    The heuristic's own choice is the baseline. After ``race_after`` worlds, an action whose
    paired difference from the baseline is more than ``z_drop`` standard errors below zero leaves
    the race, so the rest of the budget goes to the close calls; the search stops early when only
    the baseline is left. At the end it deviates from the baseline only on clear evidence: the
    best action's mean paired difference must exceed ``prior`` (in mean outcome) and ``z``
    standard errors.

    ``guide``, a trained policy (:class:`agents.policy.PolicyAgent`; spec
    ``search:BUDGET:guide=MODEL``), replaces the heuristic as the baseline: the search keeps the
    policy's choice unless its rollouts clearly beat it (the rollouts still play the heuristic).
    The search then improves on a stronger player than the heuristic, for the same budget and one
    forward pass of the network per decision; it plays the dragon and table the policy was trained
    for (its ``meta``). With ``heuristic_picks`` too, the picks are the policy's, unsearched.

    ``value``, a value network (:class:`agents.value.ValueModel`; spec ``search:BUDGET:value``, the
    shipped one, fitted on bot games; ``search:BUDGET:value=PATH``, one a train.py run fitted on
    heuristic games, ``--value-games``), scores a rollout that stops unfinished: its estimate of the
    seat's final reward from the rollout's last state (the world's, so nothing the seat has not
    seen but what the world sampled), in place of the margin / 8. It costs a forward pass per
    unfinished rollout, about a fifth more time per decision at the same budget (docs/TRAINING.md).

    ``simulations`` is the budget: ``simulations * ROLLOUT_COST``
    simulated decisions per decision (a rollout costs the decisions it plays plus ``WORLD_COST``),
    at least one world and at most ``MAX_ROLLOUTS * simulations`` rollouts. Counting work rather
    than rollouts gives short late-game rollouts more samples and keeps every decision's time about
    the same. The default (None) is ``DEFAULT_BUDGET`` by player count, which keeps the median
    decision under 100 ms on one core (docs/BENCHMARKS.md). ``time_limit`` (seconds), if set,
    stops early once spent (non-deterministic; off by default). ``max_turns`` defaults to 4 (None
    plays every rollout to the end): four turns ahead the margin predicts the winner well enough,
    and the shorter rollouts buy more worlds for the same time. ``heuristic_picks`` takes the
    heuristic's choice without searching on the picks of ``HEURISTIC_PICKS`` (spec
    ``search:N:heuristic-picks``), about a fifth less time for the same strength. The seeded
    generator makes the bot reproducible, and since it reads only the seat's view it chooses the
    same way whatever the hidden cards are.
    """

    name = "search"
    SPEC_FORMS = ("search", "search:BUDGET", "search:BUDGET:heuristic-picks", "search:BUDGET:value",
                  "search:BUDGET:value=PATH", "search:BUDGET:guide=MODEL")
    # options combine, the guide last: search:BUDGET:heuristic-picks:value=PATH:guide=MODEL

    @classmethod
    def from_spec(cls, spec: str, arg: str, **kwargs) -> "SearchAgent":
        """``search``, ``search:BUDGET`` (an empty BUDGET is the default one), then any of the
        options ``heuristic-picks`` and ``value`` (the shipped value function) or ``value=PATH``
        (a value model's ``.safetensors``, such as a train.py run's ``PATH_value.safetensors``),
        then ``guide=MODEL``, each after a colon, the guide last:
        ``search:BUDGET:heuristic-picks:value:guide=MODEL`` takes all three."""
        arg, options, model = _options(arg, spec)
        guide = value = None
        if model is not None:
            from .policy import PolicyAgent, is_model_spec
            if not is_model_spec(model):
                raise AgentSpecError(f"agent spec {spec!r}: the guide must be a trained model "
                                     "(pretrained:NAME or a saved model's path)")
            guide = PolicyAgent.load(model)
        if "value" in options:
            from .value import ModelFileError, ValueModel
            try:
                value = ValueModel.load(options["value"])
            except ModelFileError as e:
                raise AgentSpecError(f"agent spec {spec!r}: {e}") from None
        budget = None
        if arg:
            try:
                budget = int(arg)
            except ValueError:
                raise AgentSpecError(f"agent spec {spec!r}: the search budget must be an integer") from None
            if budget < 1:
                raise AgentSpecError(f"agent spec {spec!r}: the search budget must be at least 1")
        return cls(simulations=budget, heuristic_picks="heuristic-picks" in options, guide=guide, value=value)

    def __init__(self, simulations: int | None = None, seed: int | None = None, time_limit: float | None = None,
                 margin_weight: float = 0.02, prior: float = 0.02, z: float = 1.0,
                 max_turns: int | None = 4, race_after: int = 8, z_drop: float = 2.0,
                 rollout_opponents: str = "heuristic", heuristic_picks: bool = False, guide=None,
                 value=None):
        if simulations is not None and simulations < 1:
            raise ValueError("simulations must be at least 1")
        if rollout_opponents not in ("heuristic", "random"):
            raise ValueError(f"rollout_opponents must be 'heuristic' or 'random', not {rollout_opponents!r}")
        self.rollout_opponents = rollout_opponents
        self.heuristic_picks = heuristic_picks
        self.simulations = simulations
        self.budget = DEFAULT_BUDGET[2] if simulations is None else int(simulations)
        self.time_limit = time_limit
        self.margin_weight = margin_weight
        self.prior = prior
        self.z = z
        self.max_turns = max_turns
        self.race_after = race_after
        self.z_drop = z_drop
        self.rng = random.Random(seed)
        self.seat = 0
        self.heuristic = HeuristicAgent()
        self.guide = guide
        self.value = value
        self._leaf = None if value is None else value.leaf
        if guide is not None:  # it plays where its policy was trained to (evaluation.schedule)
            self.name, self.meta = f"search+{guide.name}", guide.meta
        self.stats = {"decisions": 0, "rollouts": 0}
        self._last = ({}, None)

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.rng = random.Random(seed)
        if self.simulations is None:
            self.budget = DEFAULT_BUDGET.get(num_players, DEFAULT_BUDGET[4])
        self.heuristic.reset(seat, num_players, seed)

    def act(self, observation, action_mask, view) -> int:
        return self.choose(view, None if self.guide is None else self.guide.act(observation, action_mask))

    def snapshot(self) -> tuple:
        """What this bot carries from one decision to the next: its generator's state and its
        baseline's memory (a guide's policy and a value network keep none). With :meth:`restore`,
        the luck correction asks the bot what it would have done in positions the game did not
        reach, as it stood at that point of the game (``evaluation.luck.Lookahead``)."""
        return self.rng.getstate(), copy.deepcopy(self.heuristic._bot)

    def restore(self, snapshot: tuple) -> None:
        """Put the bot back as it was at :meth:`snapshot` (the snapshot stays usable)."""
        self.rng.setstate(snapshot[0])
        self.heuristic._bot = copy.deepcopy(snapshot[1])

    # -- search ------------------------------------------------------------------------------

    def choose(self, view, baseline: int | None = None) -> int:
        """The search's choice at ``view``. ``baseline`` is the choice it deviates from only on
        clear evidence (by default the heuristic's; a guided search's is its policy's)."""
        legal = view.legal_actions()
        prior_action = self.heuristic.choose(view) if baseline is None else int(baseline)
        if len(legal) == 1 or self.heuristic_picks and view.pending["purpose"] in HEURISTIC_PICKS:
            self._last = ({prior_action: [0.0]}, prior_action)
            return prior_action
        self.stats["decisions"] += 1
        # The budget is work, not a count: simulated decisions, ROLLOUT_COST per rollout on
        # average. Short rollouts (late in the game) buy more samples, long ones fewer, so every
        # decision takes about the same time.
        work = self.budget * ROLLOUT_COST
        values = {a: [] for a in legal}
        diffs, sums, squares = {a: [] for a in legal}, dict.fromkeys(legal, 0), dict.fromkeys(legal, 0.0)
        active = list(legal)  # the heuristic's choice stays active: it is the baseline
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        used = worlds = spent = 0
        # The generator runs in the core for the whole decision (its state read and written back
        # once), and each world's rollouts, one per action still in the race, are one core call.
        with core_random(self.rng) as rng:
            random_players = rng if self.rollout_opponents == "random" else None
            while worlds == 0 or spent < work and used + len(active) <= MAX_ROLLOUTS * self.budget:
                world = view.determinize(rng)
                outcomes, steps = rollouts(world, active, self.seat, self.max_turns, self.margin_weight,
                                           random_players, self._leaf)
                for a, v in zip(active, outcomes):
                    values[a].append(v)
                spent += WORLD_COST * len(active) + sum(steps)
                used += len(active)
                worlds += 1
                base = values[prior_action]
                for a in active:  # the paired differences so far, kept as they come
                    x = values[a][-1] - base[-1]
                    diffs[a].append(x)
                    sums[a] += x
                    squares[a] += x * x
                if worlds >= self.race_after:
                    # Racing: drop challengers that are clearly worse than the heuristic's choice
                    # on the worlds they shared, so the rest of the budget sharpens the close
                    # calls. A mean difference of 0 or more is never clearly worse: its spread is
                    # not needed.
                    active = [a for a in active if a == prior_action or sums[a] / worlds >= 0
                              or not self._clearly_worse(diffs[a], sums[a], squares[a])]
                    if len(active) == 1:
                        break
                if deadline is not None and time.perf_counter() > deadline:
                    break
        self.stats["rollouts"] += used
        self._last = (values, prior_action)
        # Deviate from the heuristic's choice only on clear evidence: the paired per-world
        # differences must beat it by ``prior`` on average and by ``z`` standard errors.
        base = values[prior_action]
        best_a, best_score = prior_action, 0.0
        for a in active:
            if a == prior_action:
                continue
            mean, z = self._paired(values[a], base)
            if mean > self.prior and z >= self.z and mean > best_score:
                best_a, best_score = a, mean
        return best_a

    def action_values(self) -> dict[int, float]:
        """The last decision's estimates: every legal action's mean paired outcome difference
        from the heuristic's choice (which scores 0), over the worlds it was tried in. Actions that
        left the race early have fewer worlds behind them. Distillation (train.py) learns from these
        soft targets as well as from the choice itself."""
        values, base = self._last
        if base is None:
            return {}
        return {a: self._paired(xs, values[base])[0] if a != base else 0.0 for a, xs in values.items()}

    @staticmethod
    def _paired(xs: list, base: list) -> tuple[float, float]:
        """Mean of the paired differences ``xs[i] - base[i]`` and that mean in standard errors."""
        return SearchAgent._stats([x - y for x, y in zip(xs, base)])

    def _clearly_worse(self, d: list, total: float, squares: float) -> bool:
        """Whether the differences ``d`` (``total`` their sum, ``squares`` the sum of their
        squares, both summed as they came), whose mean is negative, are more than ``z_drop``
        standard errors below zero: exactly what ``_stats(d, total)`` says, mostly without its
        pass over ``d`` (quadratic in the worlds over a decision).

        The running sums give the sum of squared deviations ``squares - total * mean`` within
        about ``4 * len(d) * 2**-53 * squares`` of the one ``_stats`` rounds its way to (both are
        within that of the exact one), so 1e-9 * squares bounds the gap for up to 10**5 worlds,
        with room to spare; the few z-scores that close to the bar are computed in full."""
        k, z = len(d), self.z_drop
        mean = total / k
        if z > 0 and k <= 10**5:
            # clearly worse: mean**2 > z**2 * variance / k, variance = spread / max(1, k - 1)
            t, c = mean * mean * k, z * z / max(1, k - 1)
            spread, tol = squares - total * mean, 1e-9 * squares
            if t > c * (spread + tol) * (1 + 1e-9):
                return True
            if t < c * (spread - tol) * (1 - 1e-9):
                return False
        return self._stats(d, total)[1] < -z

    @staticmethod
    def _stats(d: list, total=None) -> tuple[float, float]:
        """Mean of the differences ``d`` (``total`` is their sum, if known) and that mean in
        standard errors."""
        k = len(d)
        mean = (sum(d) if total is None else total) / k
        var = sum((x - mean) ** 2 for x in d) / max(1, k - 1)
        se = (var / k) ** 0.5
        if se == 0:
            return mean, math.copysign(math.inf, mean) if mean else 0.0
        return mean, mean / se

    def rollout(self, g) -> float:
        """Play ``g`` out in the core (:func:`havok_env.view.rollout`) with heuristic bots in every
        seat (or random players, drawing from this bot's generator, in the others' seats, per
        ``rollout_opponents``); the outcome for this seat."""
        rng = self.rng if self.rollout_opponents == "random" else None
        value, _ = rollout(g, self.seat, self.max_turns, self.margin_weight, rng, self._leaf)
        return value
