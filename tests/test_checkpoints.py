"""training.checkpoints: the one listing of the models a run saved, for train.py's resumed league and
the learning-curve benchmark."""

from __future__ import annotations

import pytest

from training.checkpoints import saved_models, saved_snapshots


def test_a_runs_models_are_listed_by_their_steps_as_numbers(tmp_path):
    for name in ("snapshot_1000", "snapshot_900", "step_2048", "step_512", "snapshot_12"):
        (tmp_path / f"{name}.safetensors").write_bytes(b"")
        (tmp_path / f"{name}.json").write_text("{}")
    for stray in ("snapshot_7.json", "snapshot_x.safetensors", "snapshot_5.safetensors.tmp", "best.safetensors"):
        (tmp_path / stray).write_text("")  # a record alone, no number, a half-written file, another model
    d = str(tmp_path)
    assert saved_models(d, "snapshot") == [(12, f"{d}/snapshot_12"), (900, f"{d}/snapshot_900"),
                                           (1000, f"{d}/snapshot_1000")]
    assert saved_models(d, "step") == [(512, f"{d}/step_512"), (2048, f"{d}/step_2048")]
    assert saved_snapshots(d) == [("snapshot_12", f"{d}/snapshot_12"), ("snapshot_900", f"{d}/snapshot_900"),
                                  ("snapshot_1000", f"{d}/snapshot_1000")]
    assert saved_models(str(tmp_path / "none"), "step") == [] == saved_snapshots(str(tmp_path / "none"))
    with pytest.raises(ValueError, match="kind must be one of"):
        saved_models(d, "best")
