"""train.py end to end (a tiny run), its command-line errors, and saved models as agent specs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import train  # noqa: E402
from training.settings import FROM_SCRATCH, UsageError, validate  # noqa: E402
from training.winrate import evaluate, selection_score  # noqa: E402
from agents import AgentSpecError, make_agent, play_game  # noqa: E402
from agents.policy import META_KEYS, read_meta  # noqa: E402


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "fire"
    rc = train.main(["--dragon", "fire", "--opponents", "random", "--timesteps", "2048", "--n-envs", "2",
                     "--n-steps", "256", "--batch-size", "128", "--n-epochs", "2", "--net-arch", "32", "32",
                     "--eval-every", "1024", "--eval-games", "20", "--final-eval-games", "40",
                     "--bc-games", "40", "--bc-epochs", "2",
                     "--distill-games", "4", "--distill-teacher", "search:2", "--distill-epochs", "2",
                     "--guided-games", "3", "--value-games", "30",
                     "--seed", "3", "--out", str(out), "--logdir", "", "--no-progress",
                     "--quiet"])
    assert rc == 0
    return str(out)


def test_tiny_training_saves_model_and_record(tiny_model):
    for ext in (".safetensors", ".last.safetensors", ".last.json", ".last.optimizer.safetensors"):
        assert os.path.exists(tiny_model + ext), ext
    assert not os.path.exists(tiny_model + ".optimizer.safetensors")  # the best model: weights only
    assert not [f for f in os.listdir(os.path.dirname(tiny_model)) if f.endswith(".zip")]
    with open(tiny_model + ".json") as f:
        rec = json.load(f)
    assert read_meta(tiny_model + ".json") == {k: rec[k] for k in META_KEYS}
    assert rec["format"] == "havok-policy-v1" and rec["network"] == {"pi": [32, 32], "vf": [32, 32],
                                                                     "activation": "tanh"}
    for key in ("dragon", "players", "opponents", "seed", "timesteps", "env_version", "observation_size",
                "action_size", "versions", "wall_time_s", "final_evaluation", "curve"):
        assert key in rec, key
    assert rec["dragon"] == "Ruby" and rec["players"] == 2 and rec["opponents"] == ["random"]
    assert rec["seed"] == 3 and rec["run_timesteps"] >= 2048 and rec["action_size"] == 76
    assert rec["timesteps"] == rec["best_at_timesteps"]  # the kept model's own steps
    assert {"torch", "stable_baselines3", "sb3_contrib", "gymnasium"} <= set(rec["versions"])
    assert [r["opponent"] for r in rec["final_evaluation"]] == ["random"]
    r = rec["final_evaluation"][0]
    assert r["games"] == 40 and r["wins"] + r["draws"] + r["losses"] == 40
    assert r["ci95"][0] <= r["win_rate"] <= r["ci95"][1]
    assert len(rec["curve"]) >= 3 and rec["curve"][0]["timesteps"] == 0  # the warm start is evaluated
    bc = rec["behaviour_cloning"]
    assert bc["games"] == 40 and bc["samples"] > 100 and bc["teacher"] == "heuristic"
    assert rec["hyperparameters"]["bc_games"] == 40
    distill = rec["distillation"]
    assert distill["games"] == 4 and distill["samples"] > 10 and distill["teacher"] == "search:2"
    assert 0 < distill["games_wall_time_s"] <= distill["wall_time_s"]
    assert distill["targets"] == "soft, temperature 0.05" and bc["targets"] == "choices"
    assert rec["hyperparameters"]["distill_games"] == 4
    # the second round: the same search, departing from the distilled network (saved for its
    # workers), whose games are imitated in turn
    guided, distilled = rec["guided_distillation"], tiny_model + "_checkpoints/distilled.safetensors"
    assert guided["games"] == 3 and guided["samples"] > 5 and guided["teacher"] == f"search:2:guide={distilled}"
    assert guided["targets"] == "soft, temperature 0.05" and rec["hyperparameters"]["guided_games"] == 3
    assert read_meta(distilled) == read_meta(tiny_model + ".json")
    # the value function of the agent's search: fitted on heuristic games, beside the model, with
    # its record; the spec the run names plays the network with search and that value function
    value = rec["value"]
    assert value["games"] == 30 and value["file"] == tiny_model + "_value.safetensors" and value["rows"] > 100
    assert rec["hyperparameters"]["value_games"] == 30
    with open(tiny_model + "_value.json") as f:
        fitted = json.load(f)
    assert fitted["games"] == 30 and fitted["players"] == 2 and fitted["agents"] == ["heuristic", "heuristic"]
    assert value["search_spec"] == f"search::value={value['file']}:guide={tiny_model}.safetensors"
    agent = make_agent(value["search_spec"].replace("search::", "search:4:"))
    assert agent.value.meta == fitted and agent.guide is not None
    assert play_game([agent, make_agent("random")], seed=1, dragons=["fire", None])["result"] is not None
    # PPO's starting point, the imitation stages' network, is kept as a usable checkpoint
    start = make_agent(tiny_model + "_checkpoints/step_0.safetensors")
    assert play_game([start, make_agent("random")], seed=1, dragons=["fire", None])["result"] is not None


def test_evaluations_and_checkpoints_are_of_the_model_their_steps_name(tiny_model):
    # 512 steps per update (2 envs x 256): an evaluation or checkpoint is made between updates, of
    # the model trained on exactly the steps it is labelled with, and the last update's model is
    # among them (made inside a rollout, the one labelled 2048 was the model before its update)
    from safetensors.numpy import load_file

    with open(tiny_model + ".json") as f:
        rec = json.load(f)
    assert [pt["timesteps"] for pt in rec["curve"]] == [0, 1024, 2048]
    ckpts = sorted(f for f in os.listdir(tiny_model + "_checkpoints") if f.endswith(".safetensors"))
    assert ckpts == ["distilled.safetensors",  # the guided round's guide
                     "step_0.safetensors", "step_1024.safetensors", "step_2048.safetensors"]
    last = load_file(tiny_model + ".last.safetensors")
    at_end = load_file(tiny_model + "_checkpoints/step_2048.safetensors")
    assert last.keys() == at_end.keys() and all((last[k] == at_end[k]).all() for k in last)


def test_behaviour_cloning_imitates_the_teacher():
    from sb3_contrib import MaskablePPO

    from training.imitation import collect, pretrain
    from havok_env.wrappers import SingleAgentEnv
    data = collect("fire", 2, 150, opponents=["heuristic"], seed=1)
    n = len(data["action"])
    assert n > 500 and data["obs"].shape == (n, SingleAgentEnv("fire", 2).observation_space.shape[0])
    assert all(data["mask"][i, a] for i, a in enumerate(data["action"]))  # teacher moves are legal
    r = np.abs(data["ret"][data["ret"] != 0]).astype(np.float64)  # discounted +-1 final rewards
    k = np.log(r) / np.log(0.99)
    assert len(r) > 0 and np.allclose(k, np.round(k), atol=1e-3) and k.min() == pytest.approx(0, abs=1e-3)
    model = MaskablePPO("MlpPolicy", SingleAgentEnv("fire", 2), seed=0, device="cpu",
                        policy_kwargs={"net_arch": [64, 64]})
    info = pretrain(model.policy, data, epochs=4, seed=0)
    chance = float(np.mean(1.0 / data["mask"].sum(axis=1)))  # a uniformly random legal choice
    assert info["samples"] == n and info["train_accuracy"] > chance + 0.2, (info, chance)


def test_imitation_data_does_not_depend_on_the_number_of_workers():
    from training.imitation import CHUNK_GAMES, Collection, collect
    games = 2 * CHUNK_GAMES + 3  # a short last chunk
    seen = []
    one = collect("fire", 2, games, opponents=["heuristic", "random"], seed=4, workers=1)
    # in the background, as train.py plays the search games while it fits the warm start
    job = Collection("fire", 2, games, opponents=["heuristic", "random"], seed=4, workers=2,
                     progress=lambda done, total: seen.append((done, total)))
    two = job.result()
    assert job.result() is two  # waited for once
    assert one.keys() == two.keys() and all(np.array_equal(one[k], two[k]) for k in one)
    assert seen == [(CHUNK_GAMES, games), (2 * CHUNK_GAMES, games), (games, games)]
    other = collect("fire", 2, games, opponents=["heuristic", "random"], seed=5, workers=2)
    assert not np.array_equal(one["action"][:50], other["action"][:50])


def test_a_background_collection_reraises_a_workers_error():
    from training.imitation import CHUNK_GAMES, Collection
    job = Collection("fire", 2, 2 * CHUNK_GAMES, teacher="search:many", workers=2)
    with pytest.raises(AgentSpecError, match="search:many"):
        job.result()


def _first_chunk_fails(job):
    if job[5] == 0:  # the chunk of games from 0
        raise ValueError("the first chunk failed")
    time.sleep(60)


def test_a_failing_chunk_ends_its_collection_at_once(monkeypatch):
    import multiprocessing as mp

    import training.imitation as imitation
    from training.imitation import CHUNK_GAMES, Collection
    monkeypatch.setattr(imitation, "_collect_chunk", _first_chunk_fails)  # forked workers see it
    before = set(mp.active_children())
    t = time.monotonic()
    job = Collection("fire", 2, 3 * CHUNK_GAMES, workers=2)
    with pytest.raises(ValueError, match="the first chunk failed"):
        job.result()
    assert time.monotonic() - t < 20  # the other worker's chunk is not waited for
    assert set(mp.active_children()) <= before  # its workers are gone


def test_soft_targets_are_a_softmax_over_legal_actions():
    from training.imitation import soft_targets
    nan = float("nan")
    values = np.array([[0.0, 0.1, nan, -0.5], [0.0, nan, nan, 0.3]], np.float32)
    mask = np.array([[True, True, False, True], [True, False, False, True]])
    t = soft_targets(values, mask, 0.1)
    assert np.allclose(t.sum(axis=1), 1) and not t[~mask].any()
    e = np.exp(np.array([0.0, 1.0, -5.0]))
    assert np.allclose(t[0, [0, 1, 3]], e / e.sum())
    sharp = soft_targets(values, mask, 0.01)
    assert sharp[1, 3] > t[1, 3] > 0.5 and sharp[1, 3] > 0.99


def test_distillation_learns_the_search_bots_soft_targets():
    import torch
    from sb3_contrib import MaskablePPO

    from training.imitation import collect, pretrain, soft_targets
    from havok_env.wrappers import SingleAgentEnv
    data = collect("fire", 2, 4, opponents=["heuristic"], teacher="search:2", seed=2)
    values, mask, act = data["values"], data["mask"], data["action"]
    assert np.array_equal(~np.isnan(values), mask)  # an estimate for every legal action
    rows = np.arange(len(act))
    assert (values[rows, act] >= 0).all() and (np.nanmax(values, axis=1) >= 0).all()
    target = soft_targets(values, mask, 0.05)
    gap = {}
    for temperature in (0.0, 0.05):
        model = MaskablePPO("MlpPolicy", SingleAgentEnv("fire", 2), seed=0, device="cpu",
                            policy_kwargs={"net_arch": [64, 64]})
        info = pretrain(model.policy, data, epochs=150, batch_size=16, seed=0, holdout=0,
                        temperature=temperature)
        assert info["targets"] == ("choices" if temperature == 0 else "soft, temperature 0.05")
        with torch.no_grad():
            dist = model.policy.get_distribution(torch.from_numpy(data["obs"]).float(),
                                                 action_masks=mask)
            probs = dist.distribution.probs.numpy()
        gap[temperature] = float(np.abs(probs - target).sum(axis=1).mean())
    assert gap[0.05] < gap[0.0] * 0.7, gap  # the soft targets were learned, not just the choices


def test_saved_model_is_an_agent_spec_and_plays_full_games(tiny_model):
    agent = make_agent(tiny_model + ".safetensors")
    assert agent.deterministic
    for seat in (0, 1):
        table = [make_agent("heuristic"), make_agent("heuristic")]
        table[seat] = agent
        dragons = [None, None]
        dragons[seat] = "fire"
        rec = play_game(table, seed=10 + seat, dragons=dragons)
        assert rec["result"] is not None and rec["decisions"] > 0
    # the .json path names the same model; the model is usable in a 3-player game too
    agent2 = make_agent(tiny_model + ".json")
    rec = play_game([agent2, make_agent("random"), make_agent("random")], seed=5)
    assert rec["result"] is not None


def test_model_from_another_environment_is_refused(tiny_model, tmp_path):
    import shutil
    bad = str(tmp_path / "other")
    shutil.copy(tiny_model + ".safetensors", bad + ".safetensors")
    with open(tiny_model + ".json") as f:
        rec = json.load(f)
    rec.update(env_version="havok_hijinks_v9", observation_size=700)
    with open(bad + ".json", "w") as f:
        json.dump(rec, f)
    with pytest.raises(AgentSpecError) as e:
        make_agent(bad + ".safetensors")
    msg = str(e.value)
    assert "\n" not in msg and "havok_hijinks_v9" in msg and "700" in msg
    with pytest.raises(AgentSpecError):
        make_agent(str(tmp_path / "missing.safetensors"))


def _copy_model(src, dst, exts=(".safetensors", ".json", ".last.safetensors", ".last.json",
                                  ".last.optimizer.safetensors")):
    import shutil
    for ext in exts:
        shutil.copy(src + ext, dst + ext)


def _files(folder) -> dict:
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}


def test_the_run_record_is_written_whole_or_not_at_all(tiny_model, tmp_path, monkeypatch, torn_json):
    from training.run import Run
    out = str(tmp_path / "fire")
    _copy_model(tiny_model, out)
    run = Run(train.build_parser().parse_args(["--opponents", "random", "--n-envs", "1", "--resume",
                                               "--out", out, "--logdir", "", "--quiet"]))
    try:
        before = _files(tmp_path)
        torn_json()
        with pytest.raises(KeyboardInterrupt):
            run.write_record([], None)
        assert _files(tmp_path) == before
        monkeypatch.undo()
        run.write_record([], None)
        after = _files(tmp_path)
        assert after.keys() == before.keys() and after["fire.json"] != before["fire.json"]
    finally:
        run.venv.close()


def test_the_optimizer_state_is_written_whole_or_not_at_all(tiny_model, tmp_path, monkeypatch):
    import safetensors.numpy

    from agents import sb3_model
    from havok_env.wrappers import SingleAgentEnv
    model, rec, _ = sb3_model.rebuild(tiny_model + ".last", SingleAgentEnv("fire", 2))
    base = str(tmp_path / "fire")
    sb3_model.save(model, base, rec, optimizer=True)
    before = _files(tmp_path)
    model.learn(64)  # a new optimizer state
    real, calls = safetensors.numpy.save, []

    def fails_second(*a, **k):  # the weights are written, then the optimizer's state stops
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(safetensors.numpy, "save", fails_second)
    with pytest.raises(KeyboardInterrupt):
        sb3_model.save(model, base, rec, optimizer=True)
    after = _files(tmp_path)
    assert after.keys() == before.keys()  # nothing left beside them
    assert after["fire.optimizer.safetensors"] == before["fire.optimizer.safetensors"]
    monkeypatch.undo()
    sb3_model.save(model, base, rec, optimizer=True)
    assert _files(tmp_path)["fire.optimizer.safetensors"] != before["fire.optimizer.safetensors"]


def test_resume_continues_training(tiny_model, tmp_path):
    out = str(tmp_path / "fire")
    _copy_model(tiny_model, out)
    rc = train.main(["--opponents", "random", "--timesteps", "512", "--n-envs", "1", "--resume",
                     "--eval-every", "0", "--final-eval-games", "10", "--value-games", "0", "--out", out,
                     "--logdir", "", "--quiet", "--lr", "0.5"])
    assert rc == 0
    with open(out + ".json") as f:
        rec = json.load(f)
    assert rec["resumed"] and rec["run_timesteps"] >= 2048 + 512
    assert rec["timesteps"] == rec["best_at_timesteps"]  # the model's own steps
    # the PPO hyperparameters are the resumed record's, but for the options given
    assert rec["hyperparameters"]["learning_rate"] == 0.5 and rec["hyperparameters"]["n_steps"] == 256
    assert rec["hyperparameters"]["batch_size"] == 128  # the run's own, not train.py's default (1,024)
    # the rollout's size is the run's: changing it is refused rather than ignored
    args = train.build_parser().parse_args(["--resume", "--n-steps", "64", "--out", out])
    with pytest.raises(UsageError, match="--n-steps"):
        validate(args)
    with open(out + ".last.json") as f:
        assert json.load(f)["timesteps"] == rec["run_timesteps"]


def test_resume_rebuilds_the_model_and_its_optimizer_exactly(tiny_model):
    import torch

    from agents import sb3_model
    from havok_env.wrappers import SingleAgentEnv
    model, rec, restored = sb3_model.rebuild(tiny_model + ".last", SingleAgentEnv("fire", 2))
    assert restored and model.num_timesteps == rec["timesteps"] >= 2048
    assert (model.n_steps, model.batch_size, model.n_epochs, model.learning_rate) == (256, 128, 2, 3e-4)
    from safetensors.numpy import load_file
    w = load_file(tiny_model + ".last.safetensors")
    opt = load_file(tiny_model + ".last.optimizer.safetensors")
    state = model.policy.optimizer.state_dict()["state"]
    for i, (name, p) in enumerate(model.policy.named_parameters()):
        assert np.array_equal(p.detach().numpy(), w[name])
        assert np.array_equal(state[i]["exp_avg"].numpy(), opt["exp_avg." + name])
        assert np.array_equal(state[i]["exp_avg_sq"].numpy(), opt["exp_avg_sq." + name])
        assert float(state[i]["step"]) == float(opt["step." + name][0]) > 0
    # it trains on from there
    model.learn(64)
    assert not torch.equal(next(model.policy.parameters()).detach(),
                           torch.from_numpy(w[next(iter(dict(model.policy.named_parameters())))]))


def test_resume_refuses_a_model_of_another_dragon_or_bad_hyperparameters(tiny_model, tmp_path):
    out = str(tmp_path / "fire")
    _copy_model(tiny_model, out)
    p = subprocess.run([sys.executable, os.path.join(ROOT, "train.py"), "--dragon", "pearl", "--resume",
                        "--out", out], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2 and "trained as Ruby (fire) for 2 players, not Pearl" in p.stderr
    with open(out + ".last.json") as f:
        rec = json.load(f)
    rec["hyperparameters"]["n_steps"] = "many"
    with open(out + ".last.json", "w") as f:
        json.dump(rec, f)
    assert train.main(["--resume", "--out", out, "--quiet"]) == 2


@pytest.mark.parametrize("args, words", [
    (["--dragon", "unicorn"], "unknown dragon"),
    (["--players", "5"], "--players"),
    (["--opponents", "nobody"], "unknown agent"),
    (["--distill-teacher", "oracle"], "unknown agent"),
    (["--bc-teacher", "human"], "nor a teacher"),
    (["--distill-games", "-1"], "--distill-games"),
    (["--distill-temperature", "-0.1"], "--distill-temperature"),
    (["--opponents", "missing/model.zip"], "no saved model"),
    (["--opponents", "missing/model.safetensors"], "no saved model"),
    (["--eval-opponents", "pretrained:unicorn"], "pretrained:unicorn"),
    (["--n-envs", "0"], "--n-envs"),
    (["--timesteps", "abc"], "invalid int"),
    (["--resume", "--out", "/nonexistent/dir/fire"], "no saved model"),
    (["--from-scratch", "--bc-games", "5"], "--from-scratch"),
    (["--from-scratch", "--guided-games", "5"], "--from-scratch"),
    (["--guided-games", "-1"], "--guided-games"),
    (["--value-games", "-1"], "--value-games must not be negative"),
    (["--value-games", "many"], "invalid int"),
    (["--guided-games", "5", "--distill-games", "0"], "--guided-games needs"),
    (["--guided-games", "5", "--distill-teacher", "heuristic"], "--guided-games needs"),
    (["--critic", "state", "--vec-env", "subproc"], "--critic state"),
    (["--critic", "state", "--opponents", "search:2"], "--critic state"),
    (["--critic", "brain"], "--critic"),
    (["--shaping", "1"], "--vec-env subproc"),
    (["--minutes", "0"], "--minutes"),
    (["--threads", "0"], "--threads"),
])
def test_bad_command_lines_exit_2_with_one_line(args, words):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "train.py"), *args], capture_output=True,
                       text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("train.py: error:") and words in lines[0], p.stderr


def _masked_argmax_agrees(agent, model, steps=200):
    from havok_env.wrappers import SingleAgentEnv
    env = SingleAgentEnv("fire", 2)
    obs, _ = env.reset(seed=0)
    checked = 0
    for _ in range(steps):
        mask = env.action_masks()
        want, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert agent.act(obs, mask.astype(np.int8), None) == int(want)
        checked += int(mask.sum() > 1)
        obs, _, term, _, _ = env.step(int(want))
        if term:
            obs, _ = env.reset()
    assert checked > 20


def test_policy_agent_matches_the_models_own_masked_argmax(tiny_model):
    from agents import sb3_model
    from havok_env.wrappers import SingleAgentEnv
    model, _, _ = sb3_model.rebuild(tiny_model, SingleAgentEnv("fire", 2))
    _masked_argmax_agrees(make_agent(tiny_model + ".safetensors"), model)


def _old_format_model(path):
    """A model saved the way train.py used to: MaskablePPO.save with the metadata attribute."""
    from sb3_contrib import MaskablePPO

    from agents.policy import expected_sizes
    from havok_env.wrappers import ENV_VERSION, SingleAgentEnv
    obs, act = expected_sizes()
    model = MaskablePPO("MlpPolicy", SingleAgentEnv("fire", 2), seed=1, device="cpu", n_steps=64,
                        policy_kwargs={"net_arch": {"pi": [16, 8], "vf": [16]}})
    model.havok_meta = {"env_version": ENV_VERSION, "dragon": "Ruby", "affinity": "fire", "players": 2,
                        "observation_size": obs, "action_size": act}
    model.save(path)
    return model


def test_an_old_model_is_refused_with_how_to_convert_it_and_converts(tmp_path, capsys):
    from agents.convert import main as convert
    old = str(tmp_path / "fire.zip")
    model = _old_format_model(old)
    with open(tmp_path / "fire.json", "w") as f:  # the old run record beside it
        json.dump({"curve": [{"timesteps": 0, "results": []}], "timesteps": 12345, "seed": 7}, f)
    for spec in (old, str(tmp_path / "fire.json")):
        with pytest.raises(AgentSpecError, match=r"old stable-baselines3 format.*python -m agents\.convert"):
            make_agent(spec)
    assert convert([old, str(tmp_path / "new")]) == 0
    out = capsys.readouterr()
    assert "unpickles" in out.err and "trust" in out.err and "weights only" in out.out
    agent = make_agent(str(tmp_path / "new.json"))
    assert agent.meta["dragon"] == "Ruby" and agent.record["network"]["pi"] == [16, 8]
    assert agent.record["timesteps"] == 12345 and agent.record["seed"] == 7 and agent.record["curve"]
    assert agent.record["hyperparameters"]["n_steps"] == 64
    _masked_argmax_agrees(agent, model)
    assert not os.path.exists(tmp_path / "new.optimizer.safetensors")


def test_the_converter_runs_the_files_code_as_it_warns(tmp_path, capsys):
    from model_files import hostile_zip

    from agents.convert import main as convert
    marker = tmp_path / "MARKER"
    hostile_zip(tmp_path / "evil.zip", marker)
    assert convert([str(tmp_path / "evil.zip"), str(tmp_path / "out")]) == 2
    assert marker.exists()  # what every loader did before: only this trusted-files tool still does
    assert "use it only on a file you trust" in capsys.readouterr().err


@pytest.mark.parametrize("vec_env", ["batched", "subproc"])
def test_self_play_snapshots_are_saved_models_that_join_the_pool(tmp_path, vec_env):
    out = str(tmp_path / "fire")
    rc = train.main(["--vec-env", vec_env, "--opponents", "random", "--self-play", "--snapshot-every", "128",
                     "--pool-size", "2",
                     "--timesteps", "512", "--n-envs", "1", "--n-steps", "128", "--batch-size", "64",
                     "--n-epochs", "1", "--net-arch", "16", "--eval-every", "0", "--final-eval-games", "4",
                     "--bc-games", "0", "--distill-games", "0", "--value-games", "0", "--out", out, "--logdir", "",
                     "--quiet"])
    assert rc == 0
    snaps = sorted(f for f in os.listdir(out + "_checkpoints") if f.startswith("snapshot_"))
    assert len(snaps) >= 6 and all(f.endswith((".safetensors", ".json")) for f in snaps)
    agent = make_agent(os.path.join(out + "_checkpoints", snaps[0]))
    assert agent.meta["affinity"] == "fire" and agent.record["network"]["pi"] == [16]


def test_the_evaluations_report_their_games_with_the_time_left(tmp_path, capsys):
    # one env in this process (--vec-env subproc with one env): the periodic evaluation plays its
    # luck-corrected games, as the final one does; each reports its tenths in the run's log
    out = str(tmp_path / "fire")
    assert train.main(["--vec-env", "subproc", "--n-envs", "1", "--opponents", "random", "--timesteps", "256",
                       "--n-steps", "128", "--batch-size", "64", "--n-epochs", "1", "--net-arch", "8",
                       "--eval-every", "256", "--eval-games", "100", "--final-eval-games", "120",
                       "--bc-games", "0", "--distill-games", "0", "--value-games", "0", "--out", out,
                       "--logdir", "", "--no-progress"]) == 0
    log = capsys.readouterr().out
    assert re.search(r"^evaluation vs random: 50/100 \(50%\) in \d+s, about \d+s left$", log, re.M), log
    assert re.search(r"^evaluation vs random: 100/100 \(100%\) in \d+s$", log, re.M), log
    assert re.search(r"^final evaluation vs random: 100/120 \(83%\) in \d+s, about \d+s left$", log, re.M), log
    assert re.search(r"^final evaluation vs random: 120/120 \(100%\) in \d+s$", log, re.M), log


def test_the_periodic_evaluation_picks_the_best_model_by_the_corrected_score():
    from training.stats import mean_ci
    from evaluation.luck import analyse

    def flat(m):
        return [m[0], *m[1]]

    r = evaluate("heuristic", "random", "fire", 2, 6, seed=3)
    assert {"score", "score_ci95", "corrected_score", "corrected_ci95"} <= set(r)
    want = []
    for g in range(6):  # the learner's seat rotates; the random opponent's decisions are corrected
        seat = g % 2
        table = [make_agent("random")]
        table.insert(seat, make_agent("heuristic"))
        specs = ["random", "random"]
        specs[seat] = "learner"
        rec = play_game(table, seed=3 + g, dragons=["fire" if p == seat else None for p in range(2)])
        # valued where each position stands (training/winrate.py: the cheaper estimator)
        want.append(analyse(rec, specs, ahead=False).corrected[seat])
    assert [r["corrected_score"], *r["corrected_ci95"]] == pytest.approx(flat(mean_ci(want)))
    assert r["score"] == pytest.approx((r["wins"] - r["losses"]) / 6)
    # the pick: the corrected score, not the win rate; an old curve point without one by its raw score
    lucky = {"opponent": "x", "games": 10, "wins": 9, "draws": 0, "losses": 1, "win_rate": 0.9,
             "corrected_score": 0.1}
    steady = dict(lucky, wins=6, losses=4, win_rate=0.6, corrected_score=0.3)
    assert selection_score([steady]) > selection_score([lucky])
    assert selection_score([dict(lucky, corrected_score=None)]) == pytest.approx(0.8)
    assert selection_score([{k: v for k, v in lucky.items() if k != "corrected_score"}]) == pytest.approx(0.8)


_ENV_WORKERS_SERVER = """
from functools import partial
from training.vec_env import env_workers
from agents import make_agent
from havok_env.wrappers import make_env
venv = env_workers([make_env("fire", 2, opponents=partial(make_agent, "random"), seed=i) for i in range(2)])
venv.reset()
for p in venv.processes:  # each env worker's parent is the fork server
    server = int(open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[1])
    print("server has torch", "libtorch" in open(f"/proc/{server}/maps").read())
venv.close()
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads Linux's /proc")
def test_env_workers_fork_from_a_server_that_has_imported_torch():
    # without the preload every env worker imported torch itself (22-31 s for train.py's 8 on 2 cores)
    import multiprocessing as mp
    if "forkserver" not in mp.get_all_start_methods():
        pytest.skip("no fork server here")
    out = subprocess.run([sys.executable, "-c", _ENV_WORKERS_SERVER], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["server has torch True"] * 2


def test_a_tiny_run_from_scratch_with_a_centralised_critic_trains_saves_evaluates_and_resumes(tmp_path):
    out = str(tmp_path / "fire")
    common = ["--n-envs", "16", "--n-steps", "32", "--batch-size", "128", "--n-epochs", "1",
              "--net-arch", "16", "--eval-games", "200", "--final-eval-games", "20", "--out", out,
              "--logdir", "", "--quiet", "--seed", "1"]
    rc = train.main(["--from-scratch", "--critic", "state", "--timesteps", "2048", "--eval-every", "1024",
                     "--snapshot-every", "512", "--minutes", "5", *common])
    assert rc == 0
    with open(out + ".json") as f:
        rec = json.load(f)
    assert rec["from_scratch"] and rec["self_play"] and rec["vec_env"] == "batched"
    assert rec["behaviour_cloning"] is None and rec["distillation"] is None
    assert rec["network"] == {"pi": [16], "vf": [16], "activation": "tanh", "critic": "state"}
    assert rec["hyperparameters"]["ent_coef"] == FROM_SCRATCH["ent_coef"]
    # the league: the bot and the snapshots, each with its share and the learner's score against it
    names = [m["name"] for m in rec["league"]]
    assert names[0] == "heuristic" and any(n.startswith("snapshot_") for n in names)
    assert abs(sum(m["share"] for m in rec["league"]) - 1) < 1e-6
    # periodic evaluations played in a batch (raw score), the final one luck corrected
    point = rec["curve"][-1]["results"][0]
    assert point["batched"] and point["games"] == 200 and point["corrected_score"] is None
    assert [r["opponent"] for r in rec["final_evaluation"]] == ["heuristic", "random"]
    assert rec["final_evaluation"][0]["corrected_score"] is not None
    # the saved actor plays as an agent; the value network reads the state (2 x 643 inputs)
    agent = make_agent(out + ".safetensors")
    assert play_game([agent, make_agent("random")], seed=1, dragons=["fire", None])["result"]
    from agents.policy import load_model
    _, weights = load_model(out)
    assert weights["mlp_extractor.value_net.0.weight"].shape == (16, 2 * 643)
    assert weights["mlp_extractor.policy_net.0.weight"].shape == (16, 643)
    # and resumes as a run from scratch: rebuilt with the asymmetric policy, its optimizer state
    # restored, its snapshots back in the league, its curve's clock going on from the run's
    with pytest.raises(UsageError, match="add --from-scratch"):
        validate(train.build_parser().parse_args(["--resume", *common]))
    assert rec["finished"] and rec["hyperparameter_changes"] == []
    assert train.main(["--from-scratch", "--resume", "--timesteps", "1024", "--eval-every", "1024",
                       "--snapshot-every", "100000", "--lr", "0.0001", "--ent-coef", "0.002", *common]) == 0
    with open(out + ".json") as f:
        again = json.load(f)
    assert again["run_timesteps"] >= 2048 + 1024 and again["from_scratch"] and again["resumed"]
    # the options given change the resumed run's hyperparameters, and the record says when
    assert again["hyperparameters"]["learning_rate"] == 0.0001 and again["hyperparameters"]["ent_coef"] == 0.002
    assert again["hyperparameters"]["batch_size"] == 128  # the run's own
    assert again["hyperparameter_changes"] == [{"at_timesteps": rec["run_timesteps"], "learning_rate": 0.0001,
                                                "ent_coef": 0.002}]
    snaps = [m["name"] for m in again["league"] if m["name"].startswith("snapshot_")]
    assert snaps and set(snaps) <= set(names)
    assert sum(m["games"] for m in again["league"] if m["name"] in snaps) > 0
    assert again["curve"][-1]["wall_s"] > rec["wall_time_s"]


def test_the_learning_curve_is_drawn_whole_or_not_at_all(tmp_path, monkeypatch, torn_writes):
    pytest.importorskip("matplotlib")
    from training.run import plot_curve

    def curve(rate):
        return [{"timesteps": t, "results": [{"opponent": "heuristic", "win_rate": rate,
                                              "ci95": [rate - 0.01, rate + 0.01]}]} for t in (0, 1024)]

    path = tmp_path / "fire.curve.png"
    assert plot_curve(curve(0.5), str(path), "Ruby")
    whole = path.read_bytes()
    assert whole[:4] == b"\x89PNG"
    torn_writes()  # stopped halfway through the new plot: the earlier one stays, nothing beside it
    with pytest.raises(KeyboardInterrupt):
        plot_curve(curve(0.7), str(path), "Ruby")
    assert path.read_bytes() == whole and os.listdir(tmp_path) == [path.name]
    monkeypatch.undo()
    assert plot_curve(curve(0.7), str(path), "Ruby") and path.read_bytes() != whole
