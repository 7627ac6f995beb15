"""Interrupt stress: signal the process groups of evaluate.py and train.py at random moments.

    python benchmarks/interrupt_stress.py                               # 50 tries of each target
    python benchmarks/interrupt_stress.py --targets evaluate collect --tries 20 --sigterm 0.5
    python benchmarks/interrupt_stress.py --from-start --window 2 --load 4   # the first seconds, loaded

Each try starts a target in a process group of its own, as a terminal runs a command, waits until
its pool starts, then after a random delay of up to ``--window`` seconds sends SIGINT (or SIGTERM,
to a ``--sigterm`` share of the tries) to the whole group, as Ctrl-C does. With ``--from-start``
the delay counts from the start of the process instead, so that the signal lands in the script's
first seconds: its imports, its setup, its pools starting. ``--load N`` keeps N processes spinning
on the cores meanwhile, as a busy machine would. The targets:

* ``evaluate``: a tournament with ``--workers 2``, from its first child process;
* ``collect``: train.py's behaviour-cloning games (training/imitation.py), from their start;
* ``distill``: train.py fitting the warm start while the distillation games are played in the
  background, from their start;
* ``ppo``: train.py's PPO phase (SubprocVecEnv workers, and the periodic evaluation's pool).

A try is clean when the process exits within ``--grace`` seconds with code 130, its standard error
is the one line the script prints, and no process of the group is left running. Otherwise it is
slow (ended later), a hang (not ended after ``--hang`` seconds: the group is then killed with
SIGKILL), a bad exit code, extra output (a traceback) or a leftover process. A run that finished
before the signal does not count, nor one signalled before the script's handling was installed
(SIGTERM not yet caught: the signal landed in the interpreter's own start, which on a loaded
machine takes seconds; "before the script"), unless the signal was lost there: a run that then
hangs or exits with code 0 fails. The target starts with the signals' default actions even when
this benchmark runs in the background and ignores SIGINT (:func:`start`). The
ending of a train.py process includes the teardown of torch and the other libraries, about a
second of CPU: on a loaded machine allow a longer ``--grace`` (the time to the interrupt's line
is printed too).

A process that exits stays a zombie until its parent reaps it. The workers' parent must reap them
(a zombie whose parent is alive counts as left over); a zombie left by a process that has exited
belongs to init, which reaps it on a normal system, so it does not count.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from training.progress import Progress  # noqa: E402

_TRAIN = ["train.py", "--dragon", "fire", "--opponents", "random", "--n-envs", "2", "--n-steps", "128",
          "--batch-size", "64", "--n-epochs", "1", "--net-arch", "16", "--final-eval-games", "0", "--seed", "1",
          "--value-games", "0",
          "--logdir", "", "--no-progress", "--out", "{tmp}/fire"]
TARGETS = {  # name: (command, the line on standard output that starts the window, if any)
    # each target's work must outlast the window many times over, or a signal lands in the
    # interpreter's teardown, which is CPython's and not the scripts' to handle. heuristic against
    # random: about 4 ms a game on a core, so this runs well past the window
    "evaluate": (["evaluate.py", "--agents", "heuristic", "random", "--games", "2000", "--workers", "2",
                  "--seed", "1", "--no-progress"], None),
    "collect": (_TRAIN + ["--timesteps", "128", "--eval-every", "0", "--bc-games", "40000", "--bc-epochs", "1",
                          "--distill-games", "0"], "behaviour cloning: "),
    "distill": (_TRAIN + ["--timesteps", "128", "--eval-every", "0", "--bc-games", "200", "--bc-epochs", "40",
                          "--distill-games", "2000", "--distill-teacher", "search:4"], "distillation: "),
    "ppo": (_TRAIN + ["--timesteps", "100000", "--eval-every", "1024", "--eval-games", "100",
                      "--bc-games", "0", "--distill-games", "0"], "training Ruby"),
}


def _drop(signum, frame):
    pass


def start(args: list[str], **popen) -> subprocess.Popen:
    """Start ``python ARGS`` in the repository, in a process group of its own, as a shell starts a
    foreground command: SIGINT and SIGTERM have their default actions from the child's first
    instruction. ``popen``: more arguments for :class:`subprocess.Popen` (by default the child's
    standard output and error are pipes of text).

    Started in the background by a shell without job control (``cmd &`` in a script), this process
    ignores SIGINT, and an ignored signal stays ignored across exec, where a caught one goes back
    to its default action. So a signal ignored here is caught (and dropped) while the child is
    started. (Resetting it in the child, in a Python wrapper that then ran the target, left the
    wrapper's start-up to a SIGINT that was ignored: lost, the run went on.)"""
    held = {}
    try:
        for s in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(s) == signal.SIG_IGN:
                if threading.current_thread() is not threading.main_thread():
                    raise RuntimeError(f"{s.name} is ignored in this process, and only its main thread "
                                       "can give the target the signal's default action")
                held[s] = signal.signal(s, _drop)
        popen = {"cwd": ROOT, "env": dict(os.environ, PYTHONPATH=ROOT, PYTHONUNBUFFERED="1"),
                 "stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
                 "text": True, **popen}
        return subprocess.Popen([sys.executable, *args], start_new_session=True, **popen)
    finally:
        for s, handler in held.items():
            signal.signal(s, handler)


def group(pgid: int) -> list[tuple[int, int, str]]:
    """``(pid, ppid, state)`` of every process in the process group (a scan of /proc)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (command)"
        if int(fields[2]) == pgid:
            found.append((int(name), int(fields[1]), fields[0]))
    return found


def maps(pid: int, name: str) -> bool:
    """Whether process ``pid`` has mapped a file whose path holds ``name``."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return name in f.read()
    except OSError:
        return False


def handles_sigterm(pid: int) -> bool:
    """Whether process ``pid`` catches SIGTERM (a script's handling is installed: an interpreter
    alone leaves SIGTERM to its default action)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            caught = next(line.split()[1] for line in f if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(int(caught, 16) >> (signal.SIGTERM - 1) & 1)


def left_over(pgid: int, wait: float = 2.0) -> list[tuple[int, int, str]]:
    """The group's processes still running, or dead but unreaped by a live parent, after up to
    ``wait`` seconds (a worker needs a moment to notice that its parent has gone)."""
    end = time.monotonic() + wait
    while True:
        procs = group(pgid)
        alive = {pid for pid, _, state in procs if state != "Z"}
        left = [p for p in procs if p[2] != "Z" or p[1] in alive]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def one_try(args: list[str], sig: int = signal.SIGINT, delay: float = 0.0, marker: str | None = None,
            grace: float = 5.0, hang: float = 30.0, start_timeout: float = 60.0,
            from_start: bool = False, mapped: str | None = None) -> dict:
    """Start ``python ARGS`` in its own process group, send ``sig`` to the group ``delay`` seconds
    after ``marker`` appears on its standard output (without one: after its first child process
    appears; with ``from_start``: after the process starts; with ``mapped``: once the process has
    mapped a file whose path holds it, e.g. numpy's core library while it imports), and judge
    the ending. Returns
    ``{"outcome": "clean" | "slow" | "hang" | "exit code" | "output" | "left over" | "finished" |
    "before the script", "code", "stderr", "seconds" (signal to exit), "line_s" (signal to the
    first line on standard error), "left"}``."""
    proc = start(args)
    seen = threading.Event()
    err: list[str] = []

    def read_out():
        for line in proc.stdout:
            if marker is not None and marker in line:
                seen.set()

    first_line = []  # when the first line came on standard error

    def read_err():
        for line in proc.stderr:
            first_line.append(time.monotonic())
            err.append(line)

    readers = [threading.Thread(target=f, daemon=True) for f in (read_out, read_err)]
    for t in readers:
        t.start()
    end = time.monotonic() + start_timeout
    while not from_start and time.monotonic() < end and proc.poll() is None:
        if mapped is not None:
            if maps(proc.pid, mapped):
                break
            time.sleep(0.001)
        elif seen.wait(0.01) or (marker is None and len(group(proc.pid)) > 1):
            break
    time.sleep(delay)
    result = {"code": None, "stderr": "", "seconds": None, "line_s": None, "left": []}
    if proc.poll() is not None:
        for t in readers:
            t.join()
        return {**result, "outcome": "finished", "code": proc.returncode, "stderr": "".join(err)}
    early = not handles_sigterm(proc.pid)  # the script has not yet installed its handling
    t0 = time.monotonic()
    os.killpg(proc.pid, sig)
    try:
        proc.wait(max(grace, hang))
        result["seconds"] = time.monotonic() - t0
        outcome = None
    except subprocess.TimeoutExpired:
        outcome = "hang"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for t in readers:
        t.join(5)
    result.update(code=proc.returncode, stderr="".join(err), early=early,
                  line_s=first_line[0] - t0 if first_line else None)
    if outcome is None:
        result["left"] = left_over(proc.pid)
    lines = result["stderr"].splitlines()
    if outcome is None:
        if early and proc.returncode != 0 and (proc.returncode != 130 or len(lines) != 1):
            outcome = "before the script"  # the interpreter's own start: no script ran yet
        elif proc.returncode != 130:
            outcome = "exit code"
        elif len(lines) != 1 or "Traceback" in result["stderr"]:
            outcome = "output"
        elif result["left"]:
            outcome = "left over"
        elif result["seconds"] > grace:
            outcome = "slow"
        else:
            outcome = "clean"
    for pid, _, _ in left_over(proc.pid, wait=0):  # never leave a stray worker behind
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return {**result, "outcome": outcome}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", nargs="+", choices=sorted(TARGETS), default=sorted(TARGETS))
    ap.add_argument("--tries", type=int, default=50, help="tries per target (default 50)")
    ap.add_argument("--window", type=float, default=3.0,
                    help="the signal comes up to this many seconds into the work (default 3)")
    ap.add_argument("--grace", type=float, default=5.0, help="seconds allowed to exit (default 5)")
    ap.add_argument("--hang", type=float, default=30.0,
                    help="seconds after which a process that has not exited is killed (default 30)")
    ap.add_argument("--sigterm", type=float, default=0.2, help="share of tries sent SIGTERM (default 0.2)")
    ap.add_argument("--from-start", action="store_true",
                    help="count the delay from the start of the process (its imports and setup)")
    ap.add_argument("--load", type=int, default=0, help="processes spinning on the cores meanwhile")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    failed = 0
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.load)]
    try:
        failed = run_tries(a, rng)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    return 1 if failed else 0


def run_tries(a, rng: random.Random) -> int:
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.targets:
            cmd, marker = TARGETS[name]
            cmd = [c.format(tmp=tmp) for c in cmd]
            counts: dict[str, int] = {}
            exits, lines = [], []  # seconds from the signal to the exit, and to the first line
            # on standard error with the time left, as plain lines: a failed try prints its own
            bar = Progress(a.tries, desc=name, unit="try", say=lambda m: print(m, file=sys.stderr, flush=True))
            for k in range(a.tries):
                sig = signal.SIGTERM if rng.random() < a.sigterm else signal.SIGINT
                delay = rng.uniform(0, a.window)
                r = one_try(cmd, sig, delay, marker, a.grace, a.hang, from_start=a.from_start)
                counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
                if r["seconds"] is not None:
                    exits.append(r["seconds"])
                if r["line_s"] is not None:
                    lines.append(r["line_s"])
                if r["outcome"] not in ("clean", "finished", "before the script"):
                    failed += 1
                    tail = r["stderr"].strip().splitlines()[-3:]
                    took = "not ended" if r["seconds"] is None else f"ended in {r['seconds']:.1f}s"
                    print(f"{name} try {k + 1}: {r['outcome']} after {signal.Signals(sig).name} at "
                          f"{delay:.2f}s{' (before the script)' if r.get('early') else ''} ({took}, code "
                          f"{r['code']}, left {r['left']}): {' | '.join(tail)}", flush=True)
                bar.update()
            counted = a.tries - counts.get("finished", 0) - counts.get("before the script", 0)
            summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
            timing = (f"; exit {statistics.median(exits):.2f}s median, {max(exits):.2f}s at most"
                      if exits else "")
            if lines:
                timing += f"; first line {statistics.median(lines):.2f}s median, {max(lines):.2f}s at most"
            print(f"{name}: {counts.get('hang', 0)} hangs / {counted} tries; {summary}{timing}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
