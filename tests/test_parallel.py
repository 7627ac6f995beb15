"""training.parallel: the worker pool that train.py, evaluate.py, the imitation games and the
benchmarks use, and that ends at once, without a trace, when the run is interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from training.parallel import Pool, WorkerError  # noqa: E402


def square(x):
    if x < 0:
        raise ValueError(f"negative job {x}")
    return x * x


def slow(x):
    if x < 0:
        raise ValueError("failed at once")
    time.sleep(x)
    return x


def die(x):
    os._exit(3)


def unpicklable(x):
    return lambda: x


_seen = None


def remember(value):
    global _seen
    _seen = value


def seen(x):
    return _seen


def running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def exists(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_results_are_those_of_a_plain_map(context):
    jobs = list(range(40))
    with Pool(2, context=context) as pool:
        assert pool.map(square, jobs) == [x * x for x in jobs]
        assert list(pool.imap(square, jobs, chunksize=7)) == [x * x for x in jobs]
        assert sorted(pool.imap_unordered(square, jobs)) == [x * x for x in jobs]
        assert pool.map(square, []) == []
        workers = [p.pid for p in pool._procs]
    assert not any(exists(pid) for pid in workers)  # exited and reaped


def test_the_initializer_runs_in_every_worker_and_its_error_fails_the_jobs():
    with Pool(2, remember, ("ready",)) as pool:
        assert pool.map(seen, range(6)) == ["ready"] * 6
    with pytest.raises(TypeError), Pool(2, remember, ()) as pool:
        pool.map(seen, range(6))


def test_a_jobs_error_is_raised_with_the_workers_traceback_and_ends_the_pool():
    t = time.monotonic()
    with pytest.raises(ValueError, match="failed at once") as info, Pool(2) as pool:
        workers = [p.pid for p in pool._procs]
        pool.map(slow, [60, -1, 60])  # the other worker is asleep in its job
    assert time.monotonic() - t < 10
    assert "in slow" in str(info.value.__cause__)
    assert not any(exists(pid) for pid in workers)


def test_leaving_the_block_by_an_interrupt_kills_and_reaps_busy_workers():
    t = time.monotonic()
    with pytest.raises(KeyboardInterrupt), Pool(2) as pool:
        workers = [p.pid for p in pool._procs]
        for _ in pool.imap_unordered(slow, [0, 60, 60]):
            raise KeyboardInterrupt
    assert time.monotonic() - t < 10
    assert not any(exists(pid) for pid in workers)


def test_a_dead_worker_or_an_unpicklable_result_is_an_error_not_a_hang():
    with pytest.raises(WorkerError, match="exit code 3"), Pool(2) as pool:
        pool.map(die, range(4))
    with pytest.raises(WorkerError, match="batch 0 cannot be sent back"), Pool(1) as pool:
        pool.map(unpicklable, [1])


def test_workers_ignore_sigint_the_parent_owns_it(capfd):
    with Pool(2) as pool:
        results = pool.imap(slow, [0, 1.0, 1.0])
        assert next(results) == 0
        for p in pool._procs:
            os.kill(p.pid, signal.SIGINT)  # what Ctrl-C sends to every process of the group
            os.kill(p.pid, signal.SIGTERM)
        assert list(results) == [1.0, 1.0]
    assert capfd.readouterr().err == ""  # no KeyboardInterrupt traceback from a worker


def test_an_interrupt_while_workers_start_is_raised_once_they_have_started():
    # The signal goes to the process, as Ctrl-C sends it: another thread, which does not block it,
    # takes it, and Python would run the handler in the main thread at once, in the middle of
    # Process.start() (the spawned child then read an empty pipe and printed a traceback).
    # The child starts with Python's own SIGINT handler, as in a terminal: a pytest started in the
    # background (`pytest &` in a script) has SIGINT ignored, its children inherit that, and an
    # ignored signal is rightly still ignored when the block raises it again.
    code = ("import os, signal, sys, threading, time; sys.path.insert(0, %r)\n"
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "from training.parallel import signals_blocked\n"
            "stop = threading.Event(); threading.Thread(target=stop.wait, daemon=True).start()\n"
            "inside = False\n"
            "try:\n"
            "    with signals_blocked():\n"
            "        os.kill(os.getpid(), signal.SIGINT)\n"
            "        for _ in range(200): time.sleep(0.001)\n"
            "        inside = True\n"
            "    print('not raised')\n"
            "except KeyboardInterrupt:\n"
            "    print('raised after the block' if inside else 'raised inside the block')\n" % ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "raised after the block", out


def start_parent(body: str):
    """A Python process that starts a pool of two workers, prints their ids, then runs ``body``
    (``pool`` is the pool, ``slow`` the job above)."""
    code = ("import sys, time; sys.path[:0] = [%r, %r]\n"
            "from test_parallel import slow\n"
            "from training.parallel import Pool, handle_interrupts\n" % (ROOT, os.path.join(ROOT, "tests")))
    code += body.replace("POOL", "pool = Pool(2); print(*[p.pid for p in pool._procs], flush=True)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    return proc, [int(w) for w in proc.stdout.readline().split()]


def test_workers_exit_when_their_parent_dies():
    parent, workers = start_parent("POOL\npool.map(slow, [60, 60])\n")
    assert len(workers) == 2 and all(running(pid) for pid in workers)
    parent.kill()  # SIGKILL: no handler, no cleanup in the parent
    parent.wait()
    end = time.monotonic() + 5
    while any(running(pid) for pid in workers) and time.monotonic() < end:
        time.sleep(0.05)
    assert not any(running(pid) for pid in workers)


def test_the_pools_users_give_the_same_results_for_any_number_of_workers():
    from training.winrate import evaluate
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import balance
    one = evaluate("heuristic", "random", "fire", 2, 100, seed=5, workers=1)
    assert evaluate("heuristic", "random", "fire", 2, 100, seed=5, workers=2) == one
    jobs = [(["random", "heuristic"], 7 + g, None) for g in range(12)]
    assert balance.run_games(jobs, 2) == balance.run_games(jobs, 1)


def test_a_second_interrupt_while_shutting_down_exits_at_once_and_kills_the_workers():
    proc, workers = start_parent("handle_interrupts()\n"
                                 "try:\n"
                                 "    POOL\n"
                                 "    pool.map(slow, [60, 60])\n"
                                 "except KeyboardInterrupt:\n"
                                 "    print('shutting down', flush=True)\n"
                                 "    time.sleep(60)  # a shutdown that does not end\n")
    proc.send_signal(signal.SIGTERM)  # the first: a KeyboardInterrupt, as SIGINT
    assert proc.stdout.readline() == "shutting down\n"
    assert all(running(pid) for pid in workers)  # nothing has ended the pool yet
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) == 130
    assert not any(exists(pid) for pid in workers)  # killed and reaped


def frozen_and_collected(x):
    import gc

    return gc.get_freeze_count(), gc.isenabled()


def test_a_forked_worker_sets_what_it_inherits_aside_from_the_garbage_collector():
    # what the parent holds is never walked by the worker's collections (they took a quarter of
    # an evaluation forked from train.py), and the worker still collects its own garbage
    import gc

    assert gc.get_freeze_count() == 0  # the parent itself is left as it is
    with Pool(1, context="fork") as pool:
        [(count, enabled)] = pool.map(frozen_and_collected, [0])
    assert count > 1000 and enabled
    assert gc.get_freeze_count() == 0


def test_an_interrupt_the_script_handles_is_not_ended_while_it_writes_what_it_has():
    # an interrupted tournament writes its finished games' report, which can outlast ACK_S on a
    # busy machine: interrupt_handled() says the script ends the run itself
    code = ("import sys, time; sys.path.insert(0, %r)\n"
            "import training.parallel as tp\n"
            "tp.handle_interrupts('writes.py', starting=True)\n"
            "tp.ACK_S = 0.5\n"
            "tp.handle_interrupts()\n"
            "try:\n"
            "    print('running', flush=True)\n"
            "    time.sleep(60)\n"
            "except KeyboardInterrupt:\n"
            "    tp.interrupt_handled()\n"
            "    time.sleep(2)  # four times ACK_S\n"
            "    print('written', flush=True)\n"
            "    sys.exit(130)\n" % ROOT)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "running\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out, err) == (130, "written\n", "")
