"""Writing a file whole or not at all: the one way the project replaces a file others read (a
tournament's report, a model's weights and record, a training run's record, the ledger's JSON).
Imports nothing of the project, so every layer may use it."""

from __future__ import annotations

import os
from contextlib import contextmanager


@contextmanager
def replaced(path: str, mode: str = "w", **open_args):
    """A file to write ``path`` whole or not at all: written beside it, synced, then moved over it.
    An interrupt or a crash during the write (a second Ctrl-C while an interrupted tournament
    writes its ``.partial`` files, a training run stopped while it saves) leaves the earlier file,
    or none, never a torn one; a process killed outright (SIGKILL) may leave its ``PATH.tmpPID``
    beside it, which nothing reads. Makes the folder if need be."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"  # open's mode, not mkstemp's 600: the file others read
    try:
        with open(tmp, mode, **open_args) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
