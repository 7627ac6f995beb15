"""The bots, off the event loop: one worker process per bot spec (``workers`` per spec if asked).

A game always goes to the same worker (by game id), which keeps the game and its bots alive
between calls, so a bot with memory within a game (the heuristic remembers the stake of its last
play) plays exactly as it does in a tournament: reset once per game with the runner's seed
formula, then asked at each of its decisions in order. A worker that does not hold the game (after
a restart, or after dropping it from its cache) rebuilds it from the seed and the stored actions,
asking the bots again at their past decisions so that their memory is restored; the stored actions
win where a bot would now choose otherwise (which only a bot that is not deterministic does).

Each call returns the bots' actions up to the human's next decision or the end of the game. Bots are
built with ``agents.make_agent``; a slow one (a search bot) only holds up games of the same bot on
the same worker, never the server or another bot's games.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import multiprocessing as mp
import os
from collections import OrderedDict

from agents import make_agent
from agents.runner import agent_seed
from havok_env.engine import Game
from havok_env.observe import Observer
from havok_env.play import play_known
from havok_env.view import SeatView
from training.parallel import leave_interrupts_to_parent, signals_blocked

CACHE = 256  # live games kept per worker
_SESSIONS: "OrderedDict[tuple, _Session]" = OrderedDict()


class _Session:
    def __init__(self, spec: str, seed: int, options: dict, human_seat: int):
        self.game = Game(seed=seed, **options)
        n = self.game.num_players
        self.observer = Observer(self.game.cards)
        self.human = human_seat
        self.agents = {}
        for seat in range(n):
            if seat != human_seat:
                agent = make_agent(spec)
                agent.reset(seat, n, seed=agent_seed(seed, seat))
                self.agents[seat] = agent
        self.views = [SeatView(self.game, i) for i in range(n)]
        self.actions: list[int] = []
        self.disagreed = 0  # past decisions a rebuilt bot would now take differently

    def _ask(self, seat: int) -> int:
        obs, mask = self.observer.observe(self.game, seat)
        return int(self.agents[seat].act(obs, mask, self.views[seat]))

    def follow(self, actions: list[int]) -> None:
        """Apply stored actions beyond those already applied; bots are asked at their own."""
        for a in actions[len(self.actions):]:
            seat = self.game.to_act
            if seat != self.human and self._ask(seat) != a:
                self.disagreed += 1
            self.game.apply(a)
            self.actions.append(a)

    def play(self) -> list[int]:
        """The bots' moves up to the person's next decision or the end of the game."""
        out = play_known(self.game, self.agents, self.observer, self.views)
        self.actions += out
        return out


def bot_moves(key, spec: str, seed: int, options: dict, human_seat: int, actions: list[int]) -> list[int]:
    """The bots' actions after ``actions``, up to the human's next decision or the end."""
    sess = _SESSIONS.pop(key, None)
    if sess is None or sess.actions != actions[:len(sess.actions)]:
        sess = _Session(spec, seed, options, human_seat)
    _SESSIONS[key] = sess
    while len(_SESSIONS) > CACHE:
        _SESSIONS.popitem(last=False)
    sess.follow(actions)
    return sess.play()


def check_spec(spec: str) -> str:
    """Build the bot once (what a worker does first); returns its name."""
    agent = make_agent(spec)
    return getattr(agent, "name", type(agent).__name__)


class BotError(Exception):
    """A bot that cannot be built or failed during a game."""


class BotPool:
    """``workers`` processes per bot spec; ``inline=True`` runs the bots in a thread instead (tests)."""

    def __init__(self, specs: list[str], workers: int = 1, inline: bool = False):
        self.specs = list(specs)
        self.workers = max(1, workers)
        self.inline = inline
        self._pools: dict[tuple[str, int], cf.Executor] = {}

    def _pool(self, spec: str, i: int) -> cf.Executor:
        key = (spec, i)
        pool = self._pools.get(key)
        if pool is None:
            if self.inline:
                pool = cf.ThreadPoolExecutor(1, thread_name_prefix=f"bot-{spec}")
            else:
                # Ctrl-C reaches the whole process group: the server shuts down and ends its
                # workers, which ignore the signals (blocked until they do) and leave when it has gone
                pool = cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"),
                                              initializer=leave_interrupts_to_parent,
                                              initargs=(os.getpid(),))
                with signals_blocked():
                    pool.submit(int)  # starts the worker now
            self._pools[key] = pool
        return pool

    def start(self) -> None:
        """Start every worker and build its bot; raises BotError naming a spec that fails."""
        futures = [(spec, self._pool(spec, i).submit(check_spec, spec))
                   for spec in self.specs for i in range(self.workers)]
        for spec, fut in futures:
            try:
                fut.result()
            except Exception as e:  # noqa: BLE001 - any failure to load is one line, with its type
                raise BotError(f"cannot load agent {spec!r}: {type(e).__name__}: {e}") from None

    async def moves(self, gid: int, spec: str, seed: int, options: dict, human_seat: int,
                    actions: list[int]) -> list[int]:
        i = gid % self.workers
        loop = asyncio.get_running_loop()
        for attempt in (0, 1):
            pool = self._pool(spec, i)
            try:
                return await loop.run_in_executor(pool, bot_moves, (spec, gid), spec, seed, options,
                                                  human_seat, list(actions))
            except cf.process.BrokenProcessPool:
                # the worker died (killed, out of memory): a fresh one rebuilds the game
                self._pools.pop((spec, i), None)
                pool.shutdown(wait=False, cancel_futures=True)
                if attempt:
                    raise BotError(f"the {spec} bot's worker died twice") from None
            except Exception as e:  # noqa: BLE001 - a bot's failure is one line, with its type
                raise BotError(f"the {spec} bot failed: {type(e).__name__}: {e}") from None

    def close(self) -> None:
        """End the workers at once, a bot in the middle of a decision too (its game is stored up
        to the human's last action and replays from there)."""
        for pool in self._pools.values():
            procs = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                p.kill()
            for p in procs:
                p.join()
        self._pools.clear()
