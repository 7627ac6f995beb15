"""The test suite and the input fuzzer against the native core built with AddressSanitizer and
UndefinedBehaviorSanitizer: bad input must never corrupt memory or hit undefined behaviour.

It builds the sanitized core into this checkout (``./build_core.sh asan``), runs the tests and
``benchmarks/fuzz_inputs.py`` with the sanitizer runtimes preloaded into Python (CPython itself is
not instrumented; leak checking is off, as the interpreter keeps memory until exit), and builds the
optimised core again at the end, whatever happened. A memory error or undefined behaviour aborts
the process with the sanitizer's report, so any failure shows as a failed run.

    python benchmarks/sanitize.py [--fuzz 2000] [pytest arguments, default: -q -n 2 -p no:cacheprovider]

Four tests are left out by default, as the preloaded runtimes reach the programs they start: the
arena's browser test (Chromium does not start with the ASan runtime preloaded), the arena
server's restart tests (its server subprocess, sanitized too, did not stop in 20 minutes) and the
wheel test (``pip wheel`` compiles the optimised core again, every compiler process with the
runtimes preloaded: 5 of the run's 17 minutes on the loaded machine, near its 15-minute timeout
under more load, and the wheel's contents are no matter for the sanitizers).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# tests whose subprocesses (a browser, a server, a compiler) cannot run, or take most of the run,
# with the sanitizer runtimes preloaded
_LEFT_OUT = ["--deselect", "tests/test_arena_browser.py::test_a_person_plays_a_whole_game_in_chromium",
             "--ignore", "tests/test_arena_restart.py",
             "--deselect", "tests/test_models.py::test_the_package_ships_the_pretrained_folder"]


def runtime(name: str) -> str:
    """The path of a sanitizer runtime library of the C++ compiler."""
    cxx = os.environ.get("CXX", "c++")
    path = subprocess.run([cxx, f"-print-file-name={name}"], capture_output=True, text=True,
                          check=True).stdout.strip()
    if not os.path.isabs(path):
        sys.exit(f"sanitize.py: the compiler {cxx} has no {name} (install its sanitizer runtimes)")
    return path


def run(cmd: list[str], env: dict) -> int:
    print("$", " ".join(cmd), flush=True)
    start = time.perf_counter()
    rc = subprocess.run(cmd, cwd=ROOT, env=env).returncode
    print(f"  exit {rc} after {time.perf_counter() - start:.0f} s", flush=True)
    return rc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuzz", type=int, default=2000, help="mutated snapshots to fuzz (0: none)")
    args, pytest_args = ap.parse_known_args(argv)
    pytest_args = pytest_args or ["-q", "-n", "2", "-p", "no:cacheprovider", *_LEFT_OUT]
    base = dict(os.environ)
    if run(["./build_core.sh", "asan"], base):
        return 1
    env = {**base, "PYTHONPATH": str(ROOT),
           "LD_PRELOAD": f"{runtime('libasan.so')} {runtime('libubsan.so')}",
           "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
           "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}
    try:
        rc = run([sys.executable, "-m", "pytest", *pytest_args], env)
        if args.fuzz and not rc:
            rc = run([sys.executable, "benchmarks/fuzz_inputs.py", "--count", str(args.fuzz),
                      "--card-files", str(max(1, args.fuzz // 20))], env)
    finally:
        run(["./build_core.sh"], base)
    print("sanitized run:", "passed" if rc == 0 else f"FAILED (exit {rc})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
