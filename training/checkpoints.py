"""The models a train.py run saves beside its own, in ``OUT_checkpoints/``: ``step_STEPS``, the
checkpoint of an evaluation (and of the run's end), and ``snapshot_STEPS``, a self-play opponent.
Each is a ``.safetensors`` file with its ``.json`` record (:mod:`agents.sb3_model`)."""

from __future__ import annotations

import os
import re

KINDS = ("step", "snapshot")


def saved_models(folder: str, kind: str) -> list[tuple[int, str]]:
    """``(steps, path)`` of the models of ``kind`` (``"step"`` or ``"snapshot"``) saved in
    ``folder``, by steps (numerically: ``snapshot_900`` before ``snapshot_1000``); none when the
    folder does not exist. The path has no extension (``folder/snapshot_2048``), as
    :meth:`agents.policy.PolicyAgent.load` takes it; an agent spec adds ``.safetensors``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    found = []
    for f in os.listdir(folder) if os.path.isdir(folder) else []:
        m = re.fullmatch(rf"{kind}_(\d+)\.safetensors", f)
        if m:
            found.append((int(m.group(1)), os.path.join(folder, f[:-len(".safetensors")])))
    return sorted(found)


def saved_snapshots(folder: str) -> list[tuple[str, str]]:
    """``(name, path)`` of a run's self-play snapshots, oldest first: the names its league gives them."""
    return [(os.path.basename(path), path) for _, path in saved_models(folder, "snapshot")]
