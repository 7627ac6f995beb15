"""Saved models: the safetensors + JSON format, its checks, hostile files through every entry
point, shipped models (``pretrained:NAME``) and the old-format converter."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from agents import AgentSpecError, make_agent, play_game
from agents import policy
from agents.policy import PolicyAgent, read_meta
from training.selfplay import make_pool
from havok_env.wrappers import ENV_VERSION
from model_files import hostile_zip, payload, record, weights, write_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one_line_error(fn, *args):
    with pytest.raises(AgentSpecError) as e:
        fn(*args)
    msg = str(e.value)
    assert msg and "\n" not in msg, msg
    return msg


# -- the format ---------------------------------------------------------------------------------------

def test_a_saved_model_loads_by_either_file_and_plays(tmp_path):
    base = write_model(tmp_path / "fire", seed=1)
    a, b = make_agent(base + ".safetensors"), make_agent(base + ".json")
    assert a.meta == b.meta == read_meta(base + ".json") == {
        "env_version": ENV_VERSION, "dragon": "Ruby", "affinity": "fire", "players": 2,
        "observation_size": a.record["observation_size"], "action_size": 76}
    rec = play_game([a, make_agent("random")], seed=3, dragons=["fire", None])
    assert rec["result"] is not None and rec["decisions"] > 0
    assert play_game([b, make_agent("random")], seed=3, dragons=["fire", None])["actions"] == rec["actions"]


def test_the_policy_is_the_masked_argmax_of_the_mlp(tmp_path):
    rec = record(network={"pi": [8, 4], "vf": [3], "activation": "relu"})
    w = weights(rec, seed=2)
    policy.save_model(str(tmp_path / "m"), w, rec)
    agent = make_agent(str(tmp_path / "m.json"))
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs = rng.uniform(0, 3, rec["observation_size"]).astype(np.float32)
        mask = rng.random(rec["action_size"]) < 0.3
        mask[0] = True
        h = np.maximum(w["mlp_extractor.policy_net.0.weight"] @ obs + w["mlp_extractor.policy_net.0.bias"], 0)
        h = np.maximum(w["mlp_extractor.policy_net.2.weight"] @ h + w["mlp_extractor.policy_net.2.bias"], 0)
        z = w["action_net.weight"] @ h + w["action_net.bias"]
        z[~mask] = -np.inf
        assert agent.act(obs, mask.astype(np.int8)) == int(np.argmax(z))


def test_loading_and_playing_need_neither_torch_nor_stable_baselines3(tmp_path):
    base = write_model(tmp_path / "fire")
    code = ("import sys\n"
            "for m in ('torch', 'stable_baselines3', 'sb3_contrib'): sys.modules[m] = None\n"
            "from agents import make_agent, play_game\n"
            f"a = make_agent({base + '.safetensors'!r})\n"
            "print(play_game([a, make_agent('heuristic')], seed=1)['result']['reason'])\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 0 and p.stdout.strip(), p.stderr


def _mutate_json(base, fn):
    path = base + ".json"
    with open(path) as f:
        rec = json.load(f)
    fn(rec)
    with open(path, "w") as f:
        json.dump(rec, f)


@pytest.mark.parametrize("mutate, words", [
    (lambda r: r.pop("format"), "format must be 'havok-policy-v1'"),
    (lambda r: r.update(format="sb3"), "format must be"),
    (lambda r: r.pop("players"), "players is missing"),
    (lambda r: r.update(players="2"), "players must be an integer"),
    (lambda r: r.update(players=True), "players must be an integer"),
    (lambda r: r.update(players=7), "players must be 2, 3 or 4"),
    (lambda r: r.update(dragon="Ruby", affinity="darkness"), "is no dragon of the game"),
    (lambda r: r.update(dragon=["Ruby"]), "dragon must be a string"),
    (lambda r: r.update(timesteps=-1), "timesteps"),
    (lambda r: r.update(network=[8]), "network must be an object"),
    (lambda r: r["network"].update(pi=[0]), "network.pi"),
    (lambda r: r["network"].update(vf="8"), "network.vf"),
    (lambda r: r["network"].update(pi=[8] * 40), "network.pi"),
    (lambda r: r["network"].update(activation="sigmoid"), "network.activation"),
    (lambda r: r["network"].update(pi=[16]), "does not match its record"),
    (lambda r: r.update(env_version="havok_hijinks_v9", observation_size=700), "havok_hijinks_v9 (observation 700"),
    (lambda r: r.update(action_size=75), "75 actions"),
])
def test_a_bad_record_is_refused_in_one_line(tmp_path, mutate, words):
    base = write_model(tmp_path / "m")
    _mutate_json(base, mutate)
    assert words in one_line_error(make_agent, base + ".json")


@pytest.mark.parametrize("content, words", [
    (b"[" * 100_000 + b"]" * 100_000, "RecursionError"),
    (b"\xff\xfe not utf-8", "UnicodeDecodeError"),
    (b"{\"format\": ", "JSONDecodeError"),
    (b"[1, 2]", "a JSON object is needed"),
    (b"", "JSONDecodeError"),
])
def test_an_unreadable_record_is_refused_in_one_line(tmp_path, content, words):
    base = write_model(tmp_path / "m")
    with open(base + ".json", "wb") as f:
        f.write(content)
    assert words in one_line_error(make_agent, base + ".safetensors")


def test_an_oversized_record_is_refused_unread(tmp_path, monkeypatch):
    base = write_model(tmp_path / "m")
    monkeypatch.setattr(policy, "MAX_RECORD_BYTES", 100)
    assert "larger than" in one_line_error(make_agent, base + ".json")


def _rewrite_weights(base, fn):
    from safetensors.numpy import load_file, save_file
    t = load_file(base + ".safetensors")
    fn(t)
    save_file(t, base + ".safetensors")


@pytest.mark.parametrize("mutate, words", [
    (lambda t: t.pop("action_net.bias"), "missing tensor action_net.bias"),
    (lambda t: t.update(extra=np.zeros(3, np.float32)), "unexpected tensor extra"),
    (lambda t: t.update({"action_net.bias": np.zeros(75, np.float32)}),
     "action_net.bias is F32 [75], expected F32 [76]"),
    (lambda t: t.update({"action_net.bias": np.zeros(76, np.float64)}), "F64 [76], expected F32"),
    (lambda t: t.update({"value_net.weight": np.zeros((1, 8), np.int32)}), "I32"),
    (lambda t: t["action_net.weight"].__setitem__((0, 0), np.nan), "not finite"),
])
def test_bad_weights_are_refused_in_one_line(tmp_path, mutate, words):
    base = write_model(tmp_path / "m")
    _rewrite_weights(base, mutate)
    assert words in one_line_error(make_agent, base + ".json")


@pytest.mark.parametrize("content", [b"", b"\x00" * 7, b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":1}    ",
                                     b"garbage" * 100])
def test_a_corrupt_weights_file_is_refused_in_one_line(tmp_path, content):
    base = write_model(tmp_path / "m")
    size = os.path.getsize(base + ".safetensors")
    with open(base + ".safetensors", "wb") as f:  # as long as the weights, so that it is parsed
        f.write(content + b"\0" * max(0, size - len(content)))
    assert "is not a valid safetensors file" in one_line_error(make_agent, base + ".json")


def test_a_record_claiming_a_huge_network_is_refused_before_its_weights_are_read(tmp_path, monkeypatch):
    # a 16,384 x 32,768 network: 2 GiB of weights, which a sparse file holds in no space at all
    import safetensors
    monkeypatch.setattr(safetensors, "safe_open", lambda *a, **k: pytest.fail("the weights were read"))
    base = write_model(tmp_path / "m")
    rec = json.loads(open(base + ".json").read())
    rec["network"]["pi"] = [16384, 32768]
    with open(base + ".json", "w") as f:
        json.dump(rec, f)
    os.truncate(base + ".safetensors", 4 * policy.parameters(policy.expected_tensors(rec)))
    words = one_line_error(make_agent, base + ".json")
    assert "parameters, more than the 67,108,864 a model may have" in words
    rec["network"]["pi"] = [2048]  # within the bound, and more than the file holds
    with open(base + ".json", "w") as f:
        json.dump(rec, f)
    os.truncate(base + ".safetensors", 4096)
    assert "does not match its record: the network needs" in one_line_error(make_agent, base + ".json")
    assert "and the file holds 4,096" in one_line_error(make_agent, base + ".json")


def test_a_truncated_weights_file_is_refused(tmp_path):
    base = write_model(tmp_path / "m")
    with open(base + ".safetensors", "rb") as f:
        data = f.read()
    with open(base + ".safetensors", "wb") as f:
        f.write(data[:-100])
    assert "m.safetensors" in one_line_error(make_agent, base + ".json")


def test_a_missing_half_of_a_model_is_named(tmp_path):
    base = write_model(tmp_path / "m")
    os.remove(base + ".safetensors")
    assert "missing" in one_line_error(make_agent, base + ".json") and "m.safetensors" in \
        one_line_error(make_agent, base + ".json")
    assert "no saved model" in one_line_error(make_agent, str(tmp_path / "nothing.safetensors"))
    assert "no saved model" in one_line_error(make_agent, str(tmp_path / "nothing.zip"))


def test_saving_checks_the_tensors_against_the_record(tmp_path):
    rec = record()
    w = weights(rec)
    w.pop("value_net.bias")
    with pytest.raises(ValueError, match="value_net.bias"):
        policy.save_model(str(tmp_path / "m"), w, rec)
    assert not os.path.exists(tmp_path / "m.safetensors")


def test_saved_files_are_readable_by_others(tmp_path):
    base = write_model(tmp_path / "m")
    mask = os.umask(0)
    os.umask(mask)
    for ext in (".safetensors", ".json"):
        assert os.stat(base + ext).st_mode & 0o777 == 0o666 & ~mask


# -- hostile files ------------------------------------------------------------------------------------

@pytest.fixture
def hostile(tmp_path):
    """Hostile files of every kind and the marker their code would write."""
    marker = tmp_path / "MARKER"
    d = tmp_path / "models"
    d.mkdir()
    specs = {}
    # an SB3-like zip, by its own name and by the .json record beside it (train.py's old layout),
    # with a .last.zip for --resume
    hostile_zip(d / "oldzip.zip", marker)
    hostile_zip(d / "oldzip.last.zip", marker)
    with open(d / "oldzip.json", "w") as f:
        json.dump({k: v for k, v in record().items() if k not in ("format", "network")}, f)
    specs["zip"] = str(d / "oldzip.zip")
    specs["zip.json"] = str(d / "oldzip.json")
    # a pickle named .safetensors beside a valid record
    write_model(d / "pickled")
    (d / "pickled.safetensors").write_bytes(payload(marker))
    specs["pickle.safetensors"] = str(d / "pickled.safetensors")
    specs["pickle.json"] = str(d / "pickled.json")
    # a torch-style file (a zip holding data.pkl) named .safetensors
    write_model(d / "torchfile")
    with zipfile.ZipFile(d / "torchfile.safetensors", "w") as z:
        z.writestr("archive/data.pkl", payload(marker))
    specs["torch.safetensors"] = str(d / "torchfile.safetensors")
    # valid weights, and a record whose fields carry the payload as SB3 would serialize it
    write_model(d / "serialized")
    _mutate_json(str(d / "serialized"), lambda r: r.update(
        network={":type:": "<class 'dict'>", ":serialized:": payload(marker).hex()}))
    specs["serialized.json"] = str(d / "serialized.json")
    return specs, marker


def test_the_hostile_payload_is_live(tmp_path):
    marker = tmp_path / "m"
    pickle.loads(payload(marker))  # what any unpickling of these files would do
    assert marker.read_text() == "code ran"


def test_hostile_files_fail_in_make_agent_read_meta_and_load(hostile):
    specs, marker = hostile
    for kind, spec in specs.items():
        for fn in (make_agent, read_meta, PolicyAgent.load):
            msg = one_line_error(fn, spec)
            if kind.startswith("zip"):
                assert "old stable-baselines3 format" in msg and "python -m agents.convert" in msg
    assert not marker.exists()


def test_hostile_files_fail_in_a_self_play_pool(hostile):
    specs, marker = hostile
    for spec in specs.values():
        with pytest.raises(AgentSpecError):
            make_pool([], [spec]).reset(0, 2, seed=0)
        pool = make_pool(["random"], [spec])
        with pytest.raises(AgentSpecError):
            for seed in range(50):  # the snapshot is drawn in about half of the games
                pool.reset(0, 2, seed=seed)
    assert not marker.exists()


def test_hostile_files_fail_in_evaluate(hostile, capsys):
    import evaluate
    specs, marker = hostile
    for spec in specs.values():
        for workers in ("1", "2"):
            rc = evaluate.main(["--agents", spec, "random", "--games", "4", "--workers", workers,
                                "--no-progress", "--seed", "1"])
            err = capsys.readouterr().err.strip()
            assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("evaluate.py: error:"), err
    assert not marker.exists()


def test_hostile_files_fail_in_train(hostile, capsys):
    pytest.importorskip("sb3_contrib")
    import train
    specs, marker = hostile
    common = ["--timesteps", "64", "--n-envs", "1", "--logdir", "", "--quiet", "--bc-games", "0",
              "--distill-games", "0", "--value-games", "0"]
    runs = []
    for spec in specs.values():
        runs.append(["--opponents", spec])
        runs.append(["--opponents", "random", "--eval-opponents", spec])
    for spec in (specs["zip"], specs["pickle.json"], specs["torch.safetensors"], specs["serialized.json"]):
        runs.append(["--resume", "--out", os.path.splitext(spec)[0]])
    for argv in runs:
        rc = train.main(argv + common)
        err = capsys.readouterr().err.strip()
        assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("train.py: error:"), (argv, err)
    assert not marker.exists()


# -- shipped models -----------------------------------------------------------------------------------

def test_pretrained_specs_load_shipped_models(tmp_path, monkeypatch):
    monkeypatch.setattr(policy, "PRETRAINED_DIR", str(tmp_path))
    assert "ships none" in one_line_error(make_agent, "pretrained:fire")
    write_model(tmp_path / "fire", seed=4)
    for spec in ("pretrained:fire", "pretrained:Ruby", "pretrained:ruby", " pretrained:FIRE"):
        agent = make_agent(spec)
        assert agent.meta["affinity"] == "fire" and agent.name == spec.strip()
    assert read_meta("pretrained:ruby")["dragon"] == "Ruby"
    msg = one_line_error(make_agent, "pretrained:amber")
    assert "no pretrained agent for Amber (sunlight)" in msg and "ships pretrained:fire" in msg
    msg = one_line_error(make_agent, "pretrained:unicorn")
    assert "no such model" in msg and "pretrained:fire" in msg
    assert policy.shipped() == ["fire"]


def test_every_shipped_model_loads_and_plays_its_dragon():
    # each pair in agents/pretrained/ (none until a trained model is committed there)
    for name in policy.shipped():
        agent = make_agent(f"pretrained:{name}")
        meta = agent.meta
        assert meta["affinity"] == name.split("_")[0]
        seats = [agent] + [make_agent("heuristic") for _ in range(meta["players"] - 1)]
        dragons = [meta["affinity"]] + [None] * (meta["players"] - 1)
        assert play_game(seats, seed=0, dragons=dragons)["result"] is not None
        assert "optimizer" not in " ".join(os.listdir(policy.PRETRAINED_DIR))


@pytest.mark.skipif(os.environ.get("HAVOK_TEST_WHEEL") != "1",
                    reason="builds a wheel, compiling the core (minutes): HAVOK_TEST_WHEEL=1 runs it, as "
                           ".ci/run does in a step of its own")
def test_the_package_ships_the_pretrained_folder(tmp_path):
    """A wheel built from the source holds every package with its data: the models put in
    agents/pretrained/, the card set and the luck correction's value function."""
    import shutil
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        packages = tomllib.load(f)["tool"]["scikit-build"]["wheel"]["packages"]
    src = tmp_path / "src"
    for d in (*packages, "src"):  # src: the native core's sources
        shutil.copytree(os.path.join(ROOT, d), src / d,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "pretrained"))
    for f in ("pyproject.toml", "README.md", "CMakeLists.txt"):
        shutil.copy(os.path.join(ROOT, f), src / f)
    write_model(src / "agents" / "pretrained" / "fire")
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=900)
    if p.returncode and "No module named 'scikit_build_core'" in p.stderr:
        pytest.skip("no wheel building here: the build backend is in the dev extra (pip install -e '.[dev]')")
    assert p.returncode == 0, p.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "agents/pretrained/fire.safetensors" in names and "agents/pretrained/fire.json" in names
    assert "havok_env/data/dragons.toml" in names
    assert "agents/data/value.safetensors" in names and "agents/data/value.json" in names
    assert any(n.startswith("havok_env/_core") for n in names)
    for package in packages:
        assert f"{package}/__init__.py" in names


# -- the old format -----------------------------------------------------------------------------------

def test_a_zip_that_is_no_model_is_named_so(tmp_path):
    (tmp_path / "notes.zip").write_text("not a zip at all")
    assert "is not a model" in one_line_error(make_agent, str(tmp_path / "notes.zip"))


def test_a_model_is_saved_whole_or_not_at_all_record_last(tmp_path, monkeypatch, torn_json):
    base = write_model(tmp_path / "m", seed=1)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    rec = record()
    torn_json()  # the record's write stops halfway
    with pytest.raises(KeyboardInterrupt):
        policy.save_model(base, weights(rec, seed=2), rec)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # both untouched, nothing beside
    monkeypatch.undo()
    moved = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (moved.append(os.path.basename(b)), real_replace(a, b)))
    policy.save_model(base, weights(rec, seed=2), rec)
    assert moved == ["m.safetensors", "m.json"]  # the record last: a model is there once its record is
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after.keys() == before.keys() and after["m.safetensors"] != before["m.safetensors"]
