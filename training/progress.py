"""Progress of long work with the time left: a bar on a terminal, plain lines elsewhere.

A tournament or a stage of games can run for an hour; whoever waits, at a terminal or reading a
log, needs to know how far it is and how long it has left. On a terminal :class:`Progress` draws
tqdm's bar, which shows the time left; when its output is not a terminal (a redirect, a log file,
a test) a bar would be one unreadable line, so it writes a line as the work starts, then one at
every tenth of the work, and at least every ``every_s`` seconds, each with the time left:

    games: 300/1,000 (30%) in 1m12s, about 2m48s left

The estimate is the mean time per unit so far times the units left: the units of a tournament or a
game collection cost about the same on average, and their order is fixed in advance.
"""

from __future__ import annotations

import sys
import threading
import time


def duration(seconds: float) -> str:
    """``45s``, ``3m05s``, ``2h07m``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s // 60 % 60:02d}m"


def time_left(done: int, total: int, elapsed: float) -> float | None:
    """Seconds left at the mean rate so far; None before the first unit is done."""
    if done <= 0:
        return None
    return elapsed / done * max(0, total - done)


def progress_line(desc: str, done: int, total: int, elapsed: float) -> str:
    """``desc: done/total (p%) in T, about L left`` (``in T`` alone once everything is done)."""
    head = f"{desc}: {done:,}/{total:,}" + (f" ({100 * done // total}%)" if total else "")
    left = time_left(done, total, elapsed)
    if done >= total or left is None:
        return f"{head} in {duration(elapsed)}"
    return f"{head} in {duration(elapsed)}, about {duration(left)} left"


class Progress:
    """``total`` units of work (``unit``, e.g. ``"game"``), counted by :meth:`update` (one more) or
    by calling it with ``(done, total)``, as :class:`training.imitation.Collection` reports.

    ``show``: None (the default) draws a bar when ``file`` (standard error by default) is a terminal
    and writes plain lines otherwise; False shows nothing. ``say``, a function taking one line,
    gets the plain lines instead of ``file`` (and no bar is drawn): a script that prints its own
    log lines keeps them in one place. Safe to update from another thread."""

    def __init__(self, total: int, desc: str = "games", unit: str = "game", show: bool | None = None,
                 file=None, say=None, every_s: float = 60.0):
        self.total, self.desc, self.every_s = total, desc, every_s
        self.done = 0
        self._file = file or sys.stderr
        self._say = say
        self._t0 = self._last = time.monotonic()
        self._next = 1  # the next tenth of the work that gets a line
        self._lock = threading.Lock()
        self._bar = None
        self._off = show is False
        if not self._off and say is None and _is_terminal(self._file):
            try:
                from tqdm import tqdm
            except ImportError:  # without tqdm: the plain lines
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, unit=unit, desc=desc, file=self._file)
        if not self._off and self._bar is None and say is None:  # what is under way, at once
            self._write(f"{desc}: 0/{total:,} {unit}s, starting")

    def __call__(self, done: int, total: int | None = None) -> None:
        with self._lock:
            if total is not None:
                self.total = total
            step, self.done = done - self.done, done
            if self._bar is not None:
                self._bar.update(step)
            elif not self._off:
                self._maybe_line()

    def update(self, n: int = 1) -> None:
        self(self.done + n)

    def _maybe_line(self) -> None:
        now = time.monotonic()
        tenth = self.done * 10 // self.total if self.total else 10
        if tenth < self._next and now - self._last < self.every_s:
            return
        self._next = tenth + 1
        self._last = now
        self._write(progress_line(self.desc, self.done, self.total, now - self._t0))

    def _write(self, line: str) -> None:
        if self._say is not None:
            self._say(line)
        else:
            print(line, file=self._file, flush=True)

    def close(self) -> None:
        """End the bar (its last state stays on the terminal)."""
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _is_terminal(file) -> bool:
    try:
        return file.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed file
        return False
