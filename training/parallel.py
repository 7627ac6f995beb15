"""Worker pools that end at once when the run is interrupted (what train.py, evaluate.py,
training/imitation.py and the benchmarks play their games in).

``multiprocessing.Pool`` did not survive Ctrl-C: the terminal sends SIGINT to the whole process
group, every worker printed a KeyboardInterrupt traceback, and a worker that died holding one of
the pool's shared queue locks left ``Pool.terminate()`` (or the join of its result thread) waiting
forever, the workers zombies under a sleeping parent. Here:

* each worker talks to the parent over a pipe of its own, and one job at a time: no lock is
  shared between processes, so a worker can be killed at any moment without blocking anyone;
* the parent owns interruption: workers ignore SIGINT and SIGTERM (the signals are blocked while
  they start, so none arrives before that), and a worker exits by itself within half a second
  when its parent has gone, however the parent died (it checks ``os.getppid()``, which works
  everywhere, rather than Linux's parent-death signal);
* a pool ends by SIGKILL to its workers, which are then reaped: when the ``with`` block is left
  by an exception (KeyboardInterrupt included), when a job fails, and at exit for a pool still
  open (a pool driven from a background thread, as :class:`training.imitation.Collection` does).
  Left normally, the block lets the idle workers exit and reaps them.

Scripts call :func:`handle_interrupts` first: SIGTERM then interrupts as SIGINT does (a
KeyboardInterrupt, which the script reports in one line with exit code 130); a second signal
while it shuts down kills the workers and exits at once. :func:`run_script` does both for a
script's ``main``. A script installs it as the very first thing, before its heavy imports, with
``starting=True``: until its ``main`` runs, an interrupt ends it at once with its one line (a
KeyboardInterrupt raised inside an import could be swallowed there, and was: the run went on),
and an interrupt never goes unanswered later either: a KeyboardInterrupt that leaves the process
running (caught and dropped somewhere) is followed, after ``ACK_S`` seconds, by the same ending,
unless the code that caught it calls :func:`interrupt_handled` (it ends the run itself).

Results are those of ``multiprocessing.Pool``: :meth:`Pool.imap` in job order, ``imap_unordered``
as they finish, each job a call of ``fn(job)`` in one of the workers, after the worker ran
``initializer(*initargs)``. A job's exception is raised in the parent, with the worker's
traceback as its cause.
"""

from __future__ import annotations

import atexit
import gc
import multiprocessing as mp
import multiprocessing.connection
import multiprocessing.util  # noqa: F401 - its exit hook is registered first, so ours runs before it
import os
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_PARENT_CHECK_S = 0.5
_open: set = set()  # the pools not yet ended, killed at exit


class WorkerError(RuntimeError):
    """A worker process died while it had a job."""


class RemoteTraceback(Exception):
    """The traceback of a job's exception in its worker (attached as the exception's cause)."""

    def __str__(self):
        return self.args[0]


@contextmanager
def signals_blocked():
    """Start worker processes inside: no interrupt reaches them, or the parent, until they run.

    A process started here inherits the blocked mask, so it ignores the signals before any can
    arrive. The mask is the calling thread's only: a signal sent to the process (as Ctrl-C sends
    one to the whole group) goes to another thread (numpy's BLAS threads, a result thread), and
    Python then runs the handler in the main thread in the middle of ``Process.start()``, between
    the spawn and the write of the child's start-up data: the child read an empty pipe and printed
    a traceback. So the main thread's handlers are held too, and a signal caught meanwhile is
    raised again once the block is left."""
    caught = []
    held = {}
    if threading.current_thread() is threading.main_thread():
        for s in _SIGNALS:
            handler = signal.getsignal(s)
            if handler is not None:  # None: set outside Python, and it could not be put back
                held[s] = signal.signal(s, lambda signum, frame: caught.append(signum))
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS) if hasattr(signal, "pthread_sigmask") else None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        for s, handler in held.items():
            signal.signal(s, handler)
        if caught:
            signal.raise_signal(caught[0])


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_PARENT_CHECK_S)
    os._exit(1)


def leave_interrupts_to_parent(parent: int | None = None) -> None:
    """Run first in a worker process: ignore SIGINT and SIGTERM (unblocking them, as a worker
    started under :func:`signals_blocked` has them blocked) and exit within half a second once
    the process ``parent`` (by default the worker's parent) has gone."""
    for s in _SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)
    threading.Thread(target=_watch_parent, args=(parent or os.getppid(),), daemon=True).start()


def _worker(conn, parent: int | None, initializer, initargs) -> None:
    # Everything a forked worker inherits (train.py's parent holds torch, stable-baselines3 and
    # their models: some 200,000 objects) is set aside from the cyclic garbage collector, which
    # otherwise walks all of it in every full collection of the luck tracer's many small objects
    # (300 corrected games: 4.8-5.1 s of CPU, 1.2 of it collecting; 3.4-3.5 s, 0.2, frozen).
    gc.freeze()
    # a forkserver's child watches the server, which ends with the parent
    leave_interrupts_to_parent(parent)
    failed = None
    if initializer is not None:
        try:
            initializer(*initargs)
        except Exception as e:  # noqa: BLE001 - every job then fails with it, in the parent
            failed = (e, traceback.format_exc())
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the parent has gone
            return
        if msg is None:
            return
        index, fn, batch = msg
        if failed:
            out = (index, False, failed)
        else:
            try:
                out = (index, True, [fn(job) for job in batch])
            except Exception as e:  # noqa: BLE001 - raised again in the parent
                out = (index, False, (e, traceback.format_exc()))
        try:
            conn.send(out)
        except OSError:  # the parent has gone
            return
        except Exception as e:  # noqa: BLE001 - a result or an exception that cannot be pickled
            error = WorkerError(f"the result of batch {index} cannot be sent back: {type(e).__name__}: {e}")
            conn.send((index, False, (error, traceback.format_exc())))


class Pool:
    """``workers`` processes of start method ``context`` (``"fork"``, ``"spawn"``, ``"forkserver"``;
    default: the platform's) that each run ``initializer(*initargs)`` once. Use it as a context
    manager. ``chunksize`` jobs travel to a worker together (a batch)."""

    def __init__(self, workers: int, initializer=None, initargs=(), context: str | None = None):
        ctx = mp.get_context(context)
        if ctx.get_start_method() != "fork":
            # started now, as it would be by the first worker: starting it unblocks the signals
            from multiprocessing import resource_tracker
            resource_tracker.ensure_running()
        parent = None if ctx.get_start_method() == "forkserver" else os.getpid()
        self._procs, self._conns = [], []
        self._lock = threading.Lock()
        self._running = {}  # connection -> (index of the batch it plays, its worker)
        _open.add(self)
        try:
            for _ in range(max(1, workers)):
                here, there = ctx.Pipe()
                with signals_blocked():
                    p = ctx.Process(target=_worker, args=(there, parent, initializer, initargs), daemon=True)
                    p.start()
                    self._procs.append(p)
                    self._conns.append(here)
                there.close()
        except BaseException:
            self.kill()
            raise

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            self.close()
        else:
            self.kill()

    def map(self, fn, jobs, chunksize: int = 1) -> list:
        """``[fn(job) for job in jobs]``, computed by the workers."""
        return list(self.imap(fn, jobs, chunksize))

    def imap(self, fn, jobs, chunksize: int = 1):
        """``fn(job)`` for each job, in job order; ``chunksize`` jobs travel together."""
        return self._results(fn, jobs, chunksize, ordered=True)

    def imap_unordered(self, fn, jobs, chunksize: int = 1):
        """``fn(job)`` for each job, in the order they finish."""
        return self._results(fn, jobs, chunksize, ordered=False)

    def _results(self, fn, jobs, chunksize, ordered):
        jobs = list(jobs)
        batches = iter(enumerate(jobs[i:i + chunksize] for i in range(0, len(jobs), max(1, chunksize))))
        if self._running:
            raise RuntimeError("one map at a time per pool")
        running = self._running
        done, ready = {}, 0

        def feed(conn, proc):
            for index, batch in batches:
                conn.send((index, fn, batch))
                running[conn] = (index, proc)
                return

        for conn, proc in zip(self._conns, self._procs):
            feed(conn, proc)
        while running:
            for conn in mp.connection.wait(list(running)):
                index, proc = running.pop(conn)
                try:
                    _, ok, out = conn.recv()
                except (EOFError, OSError):
                    proc.join(1)
                    raise WorkerError(f"a worker process died (exit code {proc.exitcode}) "
                                      f"while it played job {index}") from None
                if not ok:
                    exc, text = out
                    exc.__cause__ = RemoteTraceback(text)
                    raise exc
                feed(conn, proc)
                if not ordered:
                    yield from out
                    continue
                done[index] = out
                while ready in done:
                    yield from done.pop(ready)
                    ready += 1

    def close(self) -> None:
        """Let the workers exit and reap them; kill them instead if a map is unfinished."""
        if self._running:
            self.kill()
            return
        with self._lock:
            for conn in self._conns:
                try:
                    conn.send(None)
                except OSError:  # that worker has gone already
                    pass
            for p in self._procs:
                p.join()
            _open.discard(self)

    def kill(self) -> None:
        """SIGKILL every worker and reap it (safe at any moment, from any thread)."""
        with self._lock:
            _end(self._procs)
            _open.discard(self)


def _end(procs) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.join()


@atexit.register
def _kill_open_pools() -> None:
    for pool in list(_open):
        pool.kill()


ACK_S = 5.0  # how long a KeyboardInterrupt may leave the process running before it is ended
_interrupted = False
_starting = False  # before the script's main runs: an interrupt ends the process at once
_name = None  # the script's name, for its one line (given by a script that starts with it)
_settled = threading.Event()  # the script's main has returned, or the process is exiting


def _leave(say: bool = True) -> None:
    """The script's one line (with ``say``), its workers killed, exit code 130: now, from any
    thread."""
    _end([p for pool in list(_open) for p in pool._procs])  # no lock: it may be held here
    if say:
        try:
            print(f"{_name}: interrupted", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001, S110 - a closed stderr: the exit code still says it
            pass
    os._exit(130)


def _insist() -> None:
    if not _settled.wait(ACK_S):  # the KeyboardInterrupt was caught and dropped: the run went on
        _leave()


def _interrupt(signum, frame):
    global _interrupted
    if _interrupted:  # a second signal while shutting down: leave now (the first said it)
        _leave(say=False)
    if _starting:
        _leave()
    _interrupted = True
    if _name is not None:  # (a script's, not a test's: a test may catch the interrupt and go on)
        threading.Thread(target=_insist, daemon=True).start()
    raise KeyboardInterrupt


def interrupt_handled() -> None:
    """Say that the KeyboardInterrupt just caught ends the run: the script writes what it has
    (an interrupted tournament's report of its finished games) and exits by itself, however long
    that takes on a busy machine, rather than being ended ``ACK_S`` seconds after the signal. A
    second interrupt still ends it at once."""
    _settled.set()


def _uncaught(kind, value, tb):  # sys.excepthook: a KeyboardInterrupt outside the script's main
    if issubclass(kind, KeyboardInterrupt):
        _leave()
    sys.__excepthook__(kind, value, tb)


def handle_interrupts(name: str | None = None, starting: bool = False) -> None:
    """SIGINT and SIGTERM raise KeyboardInterrupt in this (the main) thread; a second one exits
    at once with code 130, killing the pools' workers. ``starting`` (a script's first line,
    before its imports, with its ``name``): until the next call (just before its ``main``), an
    interrupt prints ``NAME: interrupted`` and exits with 130 at once."""
    global _starting, _name
    if name is not None:
        _name = name
    _starting = starting
    for s in _SIGNALS:
        signal.signal(s, _interrupt)
    if name is not None:
        sys.excepthook = _uncaught
        atexit.register(_settled.set)


def run_script(main, name: str):
    """Run a script's ``main()`` with :func:`handle_interrupts` and return what it returns; an
    interrupt prints ``NAME: interrupted`` and exits with code 130."""
    before = {s: signal.getsignal(s) for s in _SIGNALS}
    handle_interrupts()
    try:
        result = main()
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        sys.exit(130)
    for s, handler in before.items():  # as they were, for a caller that goes on (a test)
        signal.signal(s, handler)
    return result
