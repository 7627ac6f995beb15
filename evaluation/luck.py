"""Luck-corrected rewards: the AIVAT estimator for Havok & Hijinks.

For a recorded game (a replay: ``seed``, ``options``, ``actions``) the corrected reward of a seat is
its reward minus one correction for every luck event of the game (:mod:`evaluation.chance`): for a
chance event, the value after what happened minus the expected value over everything that could
have happened, weighted by its true probability; for a decision of a seat played by the uniformly
random bot, the value after its action minus the mean over its legal actions. Each correction has
expectation zero whatever happened before, so the corrected reward has the same expectation as the
reward (an unbiased estimate of the same thing) but a smaller variance: most of the luck of the
draw is taken out. Decisions of deterministic bots (heuristic, search, trained models: deterministic
given their seed) need no correction; people's decisions get none. The value function is fixed
(:class:`agents.value.ValueModel`, fitted on other bot games before any evaluation).

Burch, Schmid, Moravčík, Morrill and Bowling, "AIVAT: A New Variance Reduction Technique for Agent
Evaluation in Imperfect Information Games", AAAI 2018 (arXiv:1612.06915). See docs/luck.md.
"""

from __future__ import annotations

import bisect
import copy
import hashlib

import numpy as np

from havok_env.constants import is_player_count

from .chance import TraceError, trace
from agents.value import ModelFileError, ValueModel

__all__ = ["corrected_rewards", "corrected_batch", "analyse", "GameLuck", "TraceError", "default_model",
           "unavailable", "corrected_or_none", "corrected_all", "correcting", "deeper_problem"]

RANDOM_POLICY = "random"
# Agents whose decisions draw on a generator of their own (the search bot's sampled worlds), seeded
# when the game begins. With ``reruns``, each of their decisions is a luck event whose expectation is
# estimated by asking the agent again with independent draws; with ``replay_search``, the look-ahead
# replays the game with them (their state before each decision: :meth:`agents.search.SearchAgent.snapshot`)
# and asks them, as they stood, wherever the game could have gone.
SEEDED = ("search",)
# How many chance events deep ``analyse(deeper=W, depth=K)`` may take the value: each event deeper
# costs fifteen to twenty times the one before it (a game of the search bot against the heuristic,
# the walk in the core: 0.03, 0.07, 1.2 and about 18 s of CPU at depths 0 (plain), 1, 2 and 3).
MAX_DEPTH = 3
_MODEL: ValueModel | None = None


def default_model() -> ValueModel:
    """The shipped value model (loaded once)."""
    global _MODEL
    if _MODEL is None:
        _MODEL = ValueModel.load()
    return _MODEL


def unavailable() -> str | None:
    """Why the shipped value model cannot correct games of the card set in use (another card set
    through ``HAVOK_CARDS`` has other features), or None when it can."""
    try:
        default_model()
    except ModelFileError as e:
        return str(e)
    return None


def corrected_or_none(record: dict, policies=(), ahead: bool = True, seats=None, deeper: float = 0.0,
                      depth: int = 1) -> list | None:
    """Each seat's corrected reward of a finished game, or None where :func:`unavailable` says
    why the correction cannot be made: what tournaments and ledgers report. ``ahead``, ``seats``,
    ``deeper`` and ``depth``: see :func:`analyse`; a seat not in ``seats`` gets None."""
    if unavailable() is not None:
        return None
    c = analyse(record, policies, ahead=ahead, seats=seats, deeper=deeper, depth=depth).corrected
    return [None if np.isnan(v) else float(v) for v in c]


def corrected_all(games, deeper: float = 0.0, depth: int = 1, workers: int = 1, progress=None) -> list:
    """:func:`corrected_or_none` of each ``(record, policies)`` of ``games``, in their order.

    With ``deeper``, in ``workers`` processes: a game of the search bot takes some 0.07 s of CPU one
    event deeper and 1.2 s two events deeper, so a study's games corrected that way share out over
    a machine's cores; the plain correction (some 30 ms a game, less than a process takes to start)
    stays in this one. Each game's figures are the same bits whatever the number of workers.
    ``progress``, a :class:`training.progress.Progress`, counts the games corrected."""
    import contextlib

    from training.parallel import Pool

    jobs = [(record, list(policies or ()), deeper, depth) for record, policies in games]
    if unavailable() is not None:
        return [None] * len(jobs)
    parallel = bool(deeper) and workers > 1 and len(jobs) > 1
    out = []
    # spawned, not forked: the arena serves from threads, and a fork copies none of them
    with Pool(min(workers, len(jobs)), context="spawn") if parallel else contextlib.nullcontext() as pool:
        for got in pool.imap(_corrected_job, jobs) if parallel else map(_corrected_job, jobs):
            out.append(got)
            if progress is not None:
                progress.update()
    return out


def correcting(games: int, deeper: float, show: bool = True):
    """The :class:`training.progress.Progress` of correcting ``games`` games with
    :func:`corrected_all`: shown (on standard error) where the correction looks deeper, seconds a
    game; a plain one is over before a bar would tell anything."""
    from training.progress import Progress

    return Progress(games, desc="luck correction", unit="game", show=None if show and deeper else False)


def _corrected_job(job: tuple) -> list | None:
    record, policies, deeper, depth = job
    return corrected_or_none(record, policies, deeper=deeper, depth=depth)


def random_seats(policies) -> list[int]:
    """Seats whose policy is the uniformly random bot (agent spec ``random``)."""
    return [i for i, p in enumerate(policies or ()) if p is not None and str(p).strip() == RANDOM_POLICY]


class GameLuck:
    """One game's correction: ``rewards`` (as played), ``corrected`` (rewards minus the
    corrections), and per event (in the order they happened) its ``kinds``, ``seats``, ``turns``
    and ``corrections`` (one row per event, one column per seat)."""

    def __init__(self, rewards, corrections, kinds, seats, turns):
        self.rewards = np.asarray(rewards, dtype=np.float64)
        self.corrections = corrections
        self.kinds, self.seats, self.turns = kinds, seats, turns
        self.corrected = self.rewards - corrections.sum(axis=0)
        self.steps = None
        self.replayed = {}  # the search bots the look-ahead replayed (Lookahead.replayed)
        # per event and seat: the value after what happened, and its expectation over the outcomes
        self.actual = self.expected = None

    def by_kind(self) -> dict[str, np.ndarray]:
        """The total correction of each kind of event, per seat."""
        out: dict[str, np.ndarray] = {}
        for k, c in zip(self.kinds, self.corrections):
            out[k] = out.get(k, 0) + c
        return out


def constant_sum(v: np.ndarray, n: int) -> np.ndarray:
    """The estimator's values (float64) from the model's (one column per seat of an ``n``-player
    game): each less an equal share of what the seats' values sum to beyond ``2 - n``, what the
    rewards sum to (:func:`_values`); in a two-player game, half the difference of the two seats'."""
    v = np.asarray(v, np.float64)
    if n == 2:  # the same, written so that the two seats' values are exactly each other's negative
        return (v - v[:, [1, 0]]) / 2.0
    total = v[:, 0]
    for q in range(1, n):  # seat by seat, as the core's walk adds them
        total = total + v[:, q]
    return v - ((total - (2 - n)) / n)[:, None]


def _values(model: ValueModel, states: list, n: int, random=(), seats=None) -> np.ndarray:
    """Values of a list of after-states: ``(GameState, top_seen)`` pairs (valued by the model) or
    final rewards (taken as they are); with ``seats``, only those seats' (the other columns 0).

    A game's rewards sum to ``2 - n`` (+1 for the winner and -1 for each other seat; 0 for two tied
    leaders and -1 for the others), but in a tie of three seats or more. The model values each
    seat's row on its own, so its values need not sum to that, and what their sum is off by is error
    alone: each seat's value is the model's less an equal share of it (:func:`constant_sum`; with
    two players, half the difference of the two seats' values). It is a fixed function of the state
    too, so every correction keeps its zero mean."""
    out = np.zeros((len(states), n))
    idx = [i for i, a in enumerate(states) if isinstance(a, tuple)]
    if idx:  # every seat's row, for their sum
        out[idx] = constant_sum(model.values([states[i] for i in idx], random), n)
    for i, a in enumerate(states):
        if not isinstance(a, tuple):
            out[i] = a
    if seats is not None:
        out[:, [q for q in range(n) if q not in seats]] = 0.0
    return out


_MODELS: dict = {}


def _model(spec: str):
    """The trained model a spec names, loaded once (its argmax policy keeps no state), or None
    where it cannot be loaded or samples its actions."""
    from agents import AgentSpecError, make_agent
    from agents.policy import PolicyAgent

    if spec not in _MODELS:
        try:
            bot = make_agent(spec)
        except AgentSpecError:
            bot = None
        _MODELS[spec] = bot if isinstance(bot, PolicyAgent) and bot.deterministic else None
    return _MODELS[spec]


def lookahead(policies, num_players: int, record: dict | None = None, agent_seeds=None) -> "Lookahead":
    """The decisions the value looks through (:class:`Lookahead`); with ``record``, the search bot's
    own among them."""
    return Lookahead(policies, num_players, record, agent_seeds)


class Lookahead:
    """The decisions the value looks through: called as ``advance(game, state)`` by the tracer, it
    gives the action to play on at ``state``'s decision, or None where the value is taken there.

    A decision with one choice is played on; so is a decision of a seat whose policy is
    deterministic and cheap to ask (the heuristic, a trained model), with that policy; the random
    bot's decisions are events of their own (corrected), and a look at the Havok deck is one too.
    Any other seat (a person, a policy not known) is played on with the heuristic's choice: where
    it chooses as the heuristic would, its decision leaves nothing behind, and where it does not,
    the difference is what its choice was worth.

    The search bot draws on a generator of its own, seeded when the game began (``agent_seeds``,
    by default :func:`agents.runner.agent_seed` of the record's seed and the seat, as
    :func:`agents.runner.play_game` and the arena seed it). With ``record``, the game is replayed
    with the bot itself, reset with that seed, keeping what it carries from one decision to the next
    (:meth:`agents.search.SearchAgent.snapshot`) before each of its decisions; :meth:`at` then gives
    the look-ahead from a point of the game, where the bot is asked as it stood there: its choices
    are then known, and leave nothing behind either. If the replayed bot does not take the
    recorded action (another seed, another budget), the seat falls back to the heuristic's choice
    for the rest of the game (``replayed`` says where).

    Valuing the position where those decisions lead, rather than where it stands, is still a fixed
    function of the game so far: it plays the policies forward from what has been revealed, the
    search bot with a generator independent of the deal, and stops before any card nobody has seen
    comes up, so every correction keeps expectation zero (docs/luck.md)."""

    def __init__(self, policies, num_players: int, record: dict | None = None, agent_seeds=None):
        from agents.heuristic import HeuristicAgent
        from agents.policy import is_model_spec

        self.specs = [None] * num_players
        self.bots = {}
        for seat in range(num_players):
            spec = policies[seat] if seat < len(policies or ()) else None
            spec = self.specs[seat] = None if spec is None else str(spec).strip()
            if spec == RANDOM_POLICY:
                continue
            bot = _model(spec) if spec is not None and is_model_spec(spec) else None
            if bot is None:
                bot = HeuristicAgent()
                bot.reset(seat, num_players)
            self.bots[seat] = bot
        self.observer = None
        # every seat but the random bot's played on with the heuristic's choice: what the core's
        # look-through (_Deeper.through) plays too
        self.heuristic_only = all(isinstance(bot, HeuristicAgent) for bot in self.bots.values())
        self.replays: dict[int, _Replay] = {}
        seeds_ok = isinstance(agent_seeds, (list, tuple)) and len(agent_seeds) == num_players \
            and all(isinstance(x, int) and not isinstance(x, bool) for x in agent_seeds)
        if agent_seeds is not None and not seeds_ok:
            raise ValueError(f"agent_seeds must be a list of {num_players} integers (the seed each seat's agent "
                             f"was reset with), not {agent_seeds!r}")
        if record is not None:
            self._replay(record, num_players, agent_seeds)

    @property
    def replayed(self) -> dict:
        """seat -> None where the replayed search bot took every recorded action, else the index
        of the first action it did not take (its seat is looked through with the heuristic from
        there on)."""
        return {seat: r.wrong for seat, r in self.replays.items()}

    def at(self, index: int) -> "_Branch":
        """The look-ahead from after the record's first ``index`` actions: each replayed search bot
        stands as it did there (and carries on from its own choices in the look-ahead)."""
        stood = {}
        for seat, r in self.replays.items():
            if r.wrong is None or index <= r.wrong:
                stood[seat] = r.snaps[bisect.bisect_left(r.indices, index)]
        return _Branch(self, stood)

    def observe(self, game, seat):
        from havok_env.observe import Observer

        if self.observer is None:
            self.observer = Observer(game.cards)
        return self.observer.observe(game, seat)

    def choose(self, game, state):
        """The action played on at ``state`` by the known policies (the search bot's seat: the
        heuristic's), or None."""
        from agents.heuristic import HeuristicAgent
        from havok_env.view import SeatView

        p = state.pending
        if p is None or p["purpose"] == "bottom":
            return None
        if len(p["choices"]) == 1:
            return p["choices"][0]
        seat = p["player"]
        bot = self.bots.get(seat)
        if bot is None:
            return None
        if isinstance(bot, HeuristicAgent):
            bot.forget()  # what its earlier decisions left is not part of the position
            return int(bot.choose(SeatView(game, seat)))
        obs, mask = self.observe(game, seat)
        return int(bot.act(obs, mask, SeatView(game, seat)))

    __call__ = choose

    def _replay(self, record: dict, n: int, agent_seeds) -> None:
        from agents.runner import agent_seed
        from havok_env.engine import Game
        from havok_env.view import SeatView

        end = 0
        try:
            for seat, bot in seeded_bots(self.specs, n).items():
                if getattr(getattr(bot, "guide", None), "deterministic", True) is False:
                    continue
                seed = agent_seeds[seat] if agent_seeds is not None else agent_seed(record["seed"], seat)
                bot.reset(seat, n, seed=seed)
                self.replays[seat] = _Replay(bot)
            for end, (game, a) in enumerate(Game.positions(record) if self.replays else ()):
                r = None if a is None else self.replays.get(game.to_act)
                if r is not None and r.wrong is None:
                    r.indices.append(end)
                    r.snaps.append(r.bot.snapshot())
                    obs, mask = self.observe(game, game.to_act)
                    if int(r.bot.act(obs, mask, SeatView(game, game.to_act))) != a:
                        r.wrong = end
        except (TypeError, KeyError, ValueError):
            pass  # not a record this engine replays, from here on: the tracer says why
        for r in self.replays.values():
            if r.wrong is None:  # as it stands after its last decision
                r.indices.append(end)
                r.snaps.append(r.bot.snapshot())


class _Replay:
    """A search bot replayed through a record: the record indices of its decisions, its
    :meth:`~agents.search.SearchAgent.snapshot` before each (then one after its last), and ``wrong``,
    the index of the first decision where it did not take the recorded action (None: it took every
    one)."""

    __slots__ = ("bot", "indices", "snaps", "wrong")

    def __init__(self, bot):
        self.bot, self.indices, self.snaps, self.wrong = bot, [], [], None


class _Branch:
    """The look-ahead along one way the game could go (:meth:`Lookahead.at`): the replayed search
    bots' states on it, advanced by their own choices."""

    def __init__(self, owner: Lookahead, stood: dict):
        self.owner, self.stood = owner, stood

    @property
    def heuristic_only(self) -> bool:
        """Whether every seat but the random bot's is played on with the heuristic's choice here
        (no replayed search bot stands on this way)."""
        return self.owner.heuristic_only and not self.stood

    def copy(self) -> "_Branch":
        """The same point, for another way on from it (snapshots are never changed in place)."""
        return _Branch(self.owner, dict(self.stood))

    def __call__(self, game, state):
        from havok_env.view import SeatView

        p = state.pending
        seat = None if p is None else p["player"]
        if seat not in self.stood or p["purpose"] == "bottom":
            return self.owner.choose(game, state)
        bot = self.owner.replays[seat].bot
        bot.restore(self.stood[seat])
        obs, mask = self.owner.observe(game, seat)
        a = int(bot.act(obs, mask, SeatView(game, seat)))  # a single choice too: it remembers it
        self.stood[seat] = bot.snapshot()
        return a


class _Rerun:
    """Asks a search bot again, ``reruns`` times with draws of its own (seeds from the record's seed,
    the action's index and the rerun, by sha256: independent of the played bot's), at each of its
    seat's decisions in turn. The played bot's baseline, the heuristic, remembers what its earlier
    decisions left (the stake of its last play, the last crash window's trigger); the search asks
    it once at every decision, so asking a heuristic at every decision of the seat in turn rebuilds
    that memory, and each rerun starts from a copy of it: the reruns follow the played bot's policy
    at that point, with other draws."""

    def __init__(self, bot, seat: int, num_players: int, seed, reruns: int):
        from agents.heuristic import HeuristicAgent

        # one search bot (``make_agent`` of the seat's spec) for every rerun: each resets it with
        # its own seed, so a guided search's network is loaded once, not at every rerun
        self.bot, self.num_players, self.seed, self.reruns = bot, num_players, seed, reruns
        self.memory = HeuristicAgent()
        self.memory.reset(seat, num_players)

    def __call__(self, game, seat: int, index: int) -> list[int]:
        from havok_env.observe import Observer
        from havok_env.view import SeatView

        view = SeatView(game, seat)
        legal = view.legal_actions()
        out = list(legal)
        if len(legal) > 1:
            out = []
            # a guided search's baseline is its policy's choice, which reads the observation
            obs, mask = Observer(game.cards).observe(game, seat)
            bot = self.bot
            for k in range(self.reruns):
                bot.reset(seat, self.num_players, seed=rerun_seed(self.seed, index, k))
                bot.heuristic._bot = copy.deepcopy(self.memory._bot)
                out.append(int(bot.act(obs, mask, view)))
        self.memory.choose(view)  # as the played bot's baseline was asked at this decision
        return out


def rerun_seed(seed, index: int, k: int) -> int:
    """The seed of rerun ``k`` of the decision at action ``index`` of the game of ``seed``."""
    return int.from_bytes(hashlib.sha256(f"rerun {seed} {index} {k}".encode()).digest()[:8], "big") >> 1


def resamplers(policies, num_players: int, seed, reruns: int) -> dict:
    """seat -> a :class:`_Rerun` for the seats played by an agent of :data:`SEEDED` (none if
    ``reruns`` is 0): the ``sample`` of :func:`evaluation.chance.trace`."""
    if reruns <= 0:
        return {}
    return {seat: _Rerun(bot, seat, num_players, seed, reruns)
            for seat, bot in seeded_bots(policies, num_players).items()}


def seeded_bots(policies, num_players: int) -> dict:
    """seat -> a fresh agent of the seat's spec, for the seats played by an agent of :data:`SEEDED`
    (a spec that does not load is left out: its seat is looked through as an unknown policy's)."""
    from agents import AgentSpecError, make_agent

    out = {}
    for seat, spec in enumerate(list(policies or ())[:num_players]):
        spec = None if spec is None else str(spec).strip()
        if spec is None or spec.partition(":")[0] not in SEEDED:
            continue
        try:
            out[seat] = make_agent(spec)
        except AgentSpecError:
            continue
    return out


def analyse(record: dict, policies=(), model: ValueModel | None = None, steps: bool = False,
            ahead: bool = True, seats=None, reruns: int = 0, deeper: float = 0.0, replay_search: bool = False,
            agent_seeds=None, depth: int = 1) -> GameLuck:
    """The luck correction of one finished game. ``policies`` names each seat's agent (a spec
    such as ``random``, ``heuristic``, ``search``, a model path, ``human``; None if unknown): only
    the ``random`` bot's decisions are corrected. Raises :class:`TraceError` for a record that does
    not replay, or that stops before the game's end.

    ``steps=True`` also splits the corrected reward into what is left of each step of the game
    (``GameLuck.steps``: label, seat, value per seat; they sum to ``corrected``): for a luck event,
    the expected value after it minus the value before it (zero for a perfect value function), and
    for everything else (a decision left uncorrected, the engine carrying a revealed card on) the
    change of value across it. That is where the variance left comes from.

    ``ahead`` (the default) takes the value where the known policies lead (:func:`lookahead`);
    ``ahead=False`` where each position stands. Both are unbiased; looking ahead varies less and
    takes about 1.6 times as long.

    ``seats`` (default: all) corrects only those seats: each seat's figures are the same bits as
    when every seat is corrected, and the other seats' are NaN (the game is traced and every seat's
    rows valued either way: a seat's value is taken with the others', :func:`constant_sum`).

    ``reruns`` (default 0: none) corrects the decisions of the search bot too: each is a luck event
    whose outcomes are the search's choices when asked again ``reruns`` times with independent
    draws (:class:`_Rerun`), which estimate its expectation without bias. It costs ``reruns``
    searches per decision of the search bot.

    ``deeper`` (default 0), from 0 to 1, is the weight of the value taken one chance event further
    on: wherever the value is taken before a flip, a draw, a contest or a random bot's decision,
    it is ``(1 - deeper) V + deeper E[V]``, the expectation over that next event's outcomes, each
    played on to the stop after it (:func:`evaluation.chance.trace`'s ``deeper``). A mix of two
    fixed functions of the game so far is one too, so it stays unbiased; it costs about twenty
    times the tracing and valuing (docs/luck.md, "One event deeper"). ``depth`` (default 1, at most
    3) takes the expectation that many events deep: each outcome of the next event is valued the
    same way, ``(1 - deeper) V + deeper E[...]`` over the event after it, and so on (about twenty
    times the time again for each event deeper).

    ``replay_search`` (with ``ahead``) looks through the search bot's decisions with the bot itself:
    the game is replayed with it, reset with its seed (``agent_seeds[seat]``, by default
    :func:`agents.runner.agent_seed` of the record's seed and the seat, as games between bots and
    the arena's games seed it), and wherever the look-ahead reaches one of its decisions, it is
    asked as it stood at that point of the game (:class:`Lookahead`). Its decisions then leave
    nothing uncorrected; ``GameLuck.replayed`` says whether the replay took every recorded action.
    It costs a search at every decision of the bot the look-ahead plays: about fifty times the
    correction's time for a game of the search bot against the heuristic (docs/luck.md)."""

    problem = deeper_problem(deeper, depth)
    if problem:
        raise ValueError(problem)
    if not isinstance(replay_search, bool):
        raise ValueError(f"replay_search must be True or False, not {replay_search!r}")
    model = model or default_model()
    rand = random_seats(policies)
    advance = None
    n = record.get("options", {}).get("num_players") if isinstance(record, dict) else None
    n = n if is_player_count(n) else len(policies or ())
    if ahead:
        advance = lookahead(policies, n, record if replay_search else None, agent_seeds)
    sample = resamplers(policies, n, record.get("seed") if isinstance(record, dict) else None, reruns)
    tr = trace(record, rand, check=steps, advance=advance, sample=sample,
               deeper=_Deeper(model, rand, seats, deeper) if deeper else None, depth=depth)
    if tr.rewards is None:
        raise TraceError("the record stops before the end of the game")
    n = tr.num_players
    if seats is not None:
        seats = sorted({int(q) for q in seats})
        if not all(0 <= q < n for q in seats):
            raise ValueError(f"seats {seats} are not seats of a {n}-player game")
    flat = [a for ev in tr.events for a in ev.after]
    values = _values(model, flat, n, rand, seats)
    corrections = np.zeros((len(tr.events), n))
    expected = np.zeros((len(tr.events), n))
    actual = np.zeros((len(tr.events), n))
    i = 0
    for e, ev in enumerate(tr.events):
        v = values[i:i + len(ev.outcomes)]
        i += len(ev.outcomes)
        p = np.asarray(ev.weights, dtype=np.float64) / ev.total
        expected[e], actual[e] = p @ v, v[ev.actual]
        corrections[e] = actual[e] - expected[e]
    luck = GameLuck(tr.rewards, corrections, [ev.kind for ev in tr.events],
                    [ev.seat for ev in tr.events], [ev.turn for ev in tr.events])
    luck.expected, luck.actual = expected, actual
    luck.replayed = advance.replayed if advance is not None else {}
    if steps:
        luck.steps = _steps(tr, model, policies, expected, actual, rand, seats)
    if seats is not None:  # the same arithmetic on every column; the seats not asked for are NaN
        other = [q for q in range(n) if q not in seats]
        for a in (luck.corrected, luck.corrections, luck.expected, luck.actual,
                  *(v for _, _, v in luck.steps or ())):
            a[..., other] = np.nan
    return luck


def deeper_problem(deeper, depth=1) -> str | None:
    """What is wrong with :func:`analyse`'s ``deeper`` and ``depth`` (the command lines say it of
    their ``--deeper`` and ``--depth``), or None."""
    if isinstance(deeper, bool) or not isinstance(deeper, (int, float)) or not 0.0 <= deeper <= 1.0:
        return f"deeper must be from 0 to 1, not {deeper!r}"
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        return f"depth must be a whole number from 1 to {MAX_DEPTH}, not {depth!r}"
    if depth > 1 and not deeper:
        return "depth applies with deeper above 0"
    return None


class _Deeper:
    """The ``deeper`` of :func:`evaluation.chance.trace` for :func:`analyse`: V where the engine
    stopped, mixed with V's expectation over the next event's outcomes (called with the state
    there, the outcomes and their weights).

    :meth:`through` is the tracer's rerun of a move, as many events deep, in the core
    (``src/havok_core/lookthrough.hpp``), for a look-ahead that plays every seat but the random
    bot's with the heuristic's choice: walked, valued and mixed there with the same arithmetic, to
    the same bits (tests/test_luck.py), in a small part of the time, each state met valued once."""

    def __init__(self, model: ValueModel, rand, seats, weight: float):
        self.model, self.rand, self.seats, self.weight = model, sorted(rand), seats, weight
        self._valuer = None  # the core's, made at the first walk (it needs the game's card set)

    def _cols(self, n: int):
        return None if self.seats is None else [q for q in self.seats if 0 <= q < n]

    def _mix(self, v: np.ndarray, weights) -> list:
        # every product and sum on its own, the outcomes in order: the core's walk mixes with the
        # same operations (a matrix product would leave the order, and the bits, to the BLAS)
        w = np.asarray(weights, dtype=np.float64)
        p = w / w.sum()  # whole counts: their sum is exact in any order
        e = p[0] * v[1]
        for i in range(1, len(p)):
            e = e + p[i] * v[i + 1]
        return list((1.0 - self.weight) * v[0] + self.weight * e)

    def __call__(self, at, outcomes, weights) -> list:
        n = at[0].num_players
        return self._mix(_values(self.model, [at] + outcomes, n, self.rand, self._cols(n)), weights)

    def through(self, game, seen, action, force, stop: int, deep: int) -> list:
        """What :meth:`evaluation.chance._Tracer.rerun` gives for the move from ``game`` (at a
        decision, or before its first move where ``action`` is None) with the Havok cards ``seen``
        there, ``deep`` events deep: the value per seat, as :meth:`__call__` makes it (or as
        :func:`_values` makes it of the one state where the walk ends, or the final rewards)."""
        from agents.heuristic import check_judged
        from agents.value import layout
        from havok_env import _core

        n = game.num_players
        if self._valuer is None:
            check_judged(game.cards)
            cols = self._cols(n)
            self._valuer = _core.LookValuer(layout(game.cards).core, self.model.net, n, self.rand,
                                            list(range(n)) if cols is None else cols, self.weight,
                                            game.END, game.OPTION)
        return self._valuer.value(game._core, seen.top, seen.bottom, seen.size, -1 if action is None else action,
                                  list(force), stop, deep)


def _steps(tr, model, policies, expected, actual, rand, seats=None) -> list:
    """What is left of each step (see :func:`analyse`)."""
    n = tr.num_players
    points = tr.points
    pv = _values(model, [p if p is not None else [0.0] * n for p in points], n, rand, seats)
    at = {ev.node: (e, ev) for e, ev in enumerate(tr.events)}
    out = []
    for t in range(len(points) - 1):
        if t in at:
            e, ev = at[t]
            out.append((ev.kind, ev.seat, expected[e] - pv[t]))
            rest = pv[t + 1] - actual[e]
            if np.any(rest):  # a card valued as soon as revealed, then carried on by the engine
                out.append((f"{ev.kind}, then", ev.seat, rest))
        else:
            seat = tr.deciders.get(t)
            who = policies[seat] if seat is not None and seat < len(policies or ()) else None
            out.append((f"decision: {who or 'unknown'}", seat, pv[t + 1] - pv[t]))
    return out


def corrected_rewards(record: dict, policies=(), model: ValueModel | None = None) -> np.ndarray:
    """Each seat's luck-corrected reward in one finished game (see :func:`analyse`)."""
    return analyse(record, policies, model).corrected


def corrected_batch(records, policies=(), model: ValueModel | None = None) -> np.ndarray:
    """Corrected rewards of many finished games of one player count: shape (games, seats).
    ``policies`` is one list of agent specs for every game, or one such list per game."""
    records = list(records)
    policies = list(policies or ())
    per_game = bool(policies) and all(isinstance(p, (list, tuple)) for p in policies)
    if per_game and len(policies) != len(records):
        raise ValueError(f"{len(policies)} lists of policies for {len(records)} games")
    rows = [corrected_rewards(r, policies[i] if per_game else policies, model) for i, r in enumerate(records)]
    return np.stack(rows) if rows else np.zeros((0, 0))


def explain(record: dict, policies=(), seat: int = 0, model: ValueModel | None = None) -> str:
    """One game's luck, event by event, for ``seat``, as a Markdown table (docs/luck.md)."""
    from havok_env.cards import default_cards
    cs = default_cards()
    lk = analyse(record, policies, model)
    tr = trace(record, random_seats(policies), every_outcome=False)

    def name(kind, o):
        if kind in ("deal", "flip", "look", "draw"):
            return cs.names[o]
        if kind == "dragons":
            return "/".join(cs.dragons[d].name for d in o)
        if kind == "first_player":
            return f"player_{o}"
        if kind == "coin":
            return f"declaration {o + 1}"
        return f"action {o}"

    rows = ["| # | turn | event | seat | outcomes | what happened (probability) | V after | expected V | "
            "correction |", "|---|---|---|---|---|---|---|---|---|"]
    for i, (ev, c) in enumerate(zip(tr.events, lk.corrections)):
        p = ev.weights[ev.actual] / ev.total
        who = "" if ev.seat is None else f"player_{ev.seat}"
        rows.append(f"| {i + 1} | {ev.turn} | {ev.kind} | {who} | {len(ev.outcomes)} | "
                    f"{name(ev.kind, ev.outcomes[ev.actual])} ({p:.3f}) | {lk.actual[i][seat]:+.3f} | "
                    f"{lk.expected[i][seat]:+.3f} | {c[seat]:+.3f} |")
    total = lk.corrections[:, seat].sum()
    rows.append("")
    rows.append(f"player_{seat}: reward {lk.rewards[seat]:+.0f}, corrections {total:+.3f}, "
                f"corrected reward {lk.corrected[seat]:+.3f}")
    return "\n".join(rows)


def main(argv=None) -> int:
    import argparse

    from agents import AgentSpecError, make_agent
    from agents.runner import play_game

    ap = argparse.ArgumentParser(description="Play one game and show its luck, event by event.")
    ap.add_argument("--agents", nargs="+", default=["heuristic", "random"], help="agent specs by seat")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--seat", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        agents = [make_agent(s) for s in args.agents]
    except AgentSpecError as e:
        ap.error(str(e))
    if not 0 <= args.seat < len(agents):
        ap.error(f"--seat must be a seat of the game (0 to {len(agents) - 1})")
    rec = play_game(agents, seed=args.seed)
    print(explain(rec, args.agents, args.seat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
