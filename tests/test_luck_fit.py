"""Fitting the luck correction's value function where the look-ahead estimator values positions
(evaluation/fit.py, ``--ahead``): the fitting data is the estimator's own split of each corrected
reward, and the fit lowers what the corrected rewards vary by."""

import numpy as np
import pytest

from agents import make_agent
from agents.runner import play_game
from evaluation import fit, luck
from agents.value import DATA, ValueModel


def record(specs, seed):
    r = play_game([make_agent(s) for s in specs], seed=seed)
    return {k: r[k] for k in ("seed", "options", "actions")}


@pytest.mark.parametrize("specs,seed", [(("heuristic", "random"), 11), (("search:8", "heuristic"), 12),
                                        (("heuristic", "random", "random"), 13)])
def test_the_fitting_steps_add_up_to_the_estimators_corrected_rewards(specs, seed):
    rec = record(specs, seed)
    g = fit.game_steps(rec, list(specs))
    model = luck.default_model()
    steps = fit.steps_values(g, model)
    lk = luck.analyse(rec, list(specs), steps=True)
    # the same split, step for step (analyse leaves out a card's carrying on where it changes
    # nothing; features stored as float16: to a few thousandths)
    theirs = np.array([v for _, _, v in lk.steps])
    big = [np.abs(a).max(axis=1) > 1e-5 for a in (steps, theirs)]  # not zero but for rounding
    assert np.allclose(steps[big[0]], theirs[big[1]], atol=5e-3)
    assert np.allclose(steps.sum(axis=0), lk.corrected, atol=5e-3)
    assert np.array_equal(g["rewards"], lk.rewards)
    # the search bot's decisions (what its choice was worth) and the start are not to be made zero
    labels = [label for label, _, _ in lk.steps]
    assert not g["train"][0]
    assert (~g["train"]).sum() == 1 + sum(1 for label in labels if label.startswith("decision: search"))


def test_the_batched_first_stage_labels_each_games_states_with_its_own_final_rewards():
    from agents.value import layout

    data = fit.collect(30, seed=123, keep=1.0, envs=8, log=lambda m: None)
    again = fit.collect(30, seed=123, keep=1.0, envs=8, log=lambda m: None)
    assert all(np.array_equal(data[k], again[k]) for k in data)  # the same seed, the same games
    assert len(data["players"]) == 30 and set(data["players"]) <= {2, 3, 4}
    L = layout()
    game, x, reward = data["game"], data["x"].astype(np.float32), data["reward"]
    assert np.all(np.diff(game) >= 0) and set(np.unique(game)) == set(range(30))  # game by game
    for g in range(30):
        n = int(data["players"][g])
        rows = np.flatnonzero(game == g)
        assert len(rows) % n == 0
        r = reward[rows].reshape(-1, n)
        assert np.all(r == r[0]) and set(r[0]) <= {-1.0, 0.0, 1.0}  # one final result per game
        assert (r[0] == 1).sum() <= 1 and (r[0] >= 0).sum() >= 1  # a sole winner, or tied leaders
        assert np.array_equal(data["step"][rows], np.repeat(np.arange(len(rows) // n), n))
        own = x[rows].reshape(-1, n, L.size)
        # each state's rows are its seats' views: the same table, each seat's own block first
        assert np.all(own[:, :, 4 * L.seat:] == own[:, :1, 4 * L.seat:])
        # the random bot's seats, marked the same in every state of the game
        rand = own[:, :, L.o["random"]]
        assert np.all(rand == rand[0]) and set(np.unique(rand)) <= {0.0, 1.0}
    # with all decisions kept, the last state of a game is close to its end: its leader's margin
    # says who won far more often than not
    last = np.flatnonzero(np.r_[game[1:] != game[:-1], True])
    ends = [(x[i - int(data["players"][game[i]]) + 1:i + 1], reward[i - int(data["players"][game[i]]) + 1:i + 1])
            for i in last]
    agree = [np.argmax(v[:, L.o["worth"] + 1]) == np.argmax(r) for v, r in ends if r.max() == 1]
    assert np.mean(agree) > 0.8


def test_games_joined_and_merged_keep_each_games_rows_and_steps():
    parts = [fit.game_steps(record(s, 20 + i), list(s))
             for i, s in enumerate([("heuristic", "random"), ("random", "random", "random", "heuristic"),
                                    ("heuristic", "heuristic")])]
    one = fit.join(parts)
    two = fit.merge(iter([fit.join(parts[:1]), fit.join(parts[1:])]))
    assert one.keys() == two.keys()
    assert all(np.array_equal(one[k], two[k]) for k in one)
    model = luck.default_model()
    got = fit.corrected_of(model, two, range(3))
    for i, p in enumerate(parts):
        n = p["players"]
        assert np.allclose(got[i, :n], fit.steps_values(p, model).sum(axis=0))
        assert not got[i, n:].any()
    # the rows are kept by their nonzero inputs, and come back as they were, across the merge
    x = np.concatenate([p["x"] for p in parts]).astype(np.float32)
    assert np.array_equal(fit.dense_rows(two, 0, len(x)), x)
    r0, r1 = two["row_at"][1], two["row_at"][2]
    assert np.array_equal(fit.dense_rows(two, r0, r1), parts[1]["x"].astype(np.float32))
    assert len(two["x_val"]) == np.count_nonzero(x) < x.size / 4


def test_a_cache_file_with_its_rows_dense_is_read_as_a_sparse_one(tmp_path):
    one = fit.join([fit.game_steps(record(("heuristic", "random"), 20), ["heuristic", "random"])])
    dense = {k: v for k, v in one.items() if not k.startswith("x_")}
    dense["x"] = fit.dense_rows(one, 0, one["row_at"][-1]).astype(np.float16)
    np.savez(tmp_path / "old.npz", **dense)
    np.savez(tmp_path / "new.npz", **one)
    for name in ("old.npz", "new.npz"):
        got = fit.read_part(tmp_path / name)
        assert got.keys() == one.keys()
        assert all(np.array_equal(got[k], one[k]) for k in one)


def test_the_loss_is_what_the_corrected_rewards_vary_by_and_the_fit_keeps_its_best_epoch():
    torch = pytest.importorskip("torch")
    model = luck.default_model()
    wide = ValueModel(fit.widen(model.layers, (model.layers[0][0].shape[1] + 8, model.layers[1][0].shape[1] + 4)), {})
    x = np.random.default_rng(0).random((50, model.layers[0][0].shape[0])).astype(np.float32)
    assert np.allclose(wide.predict(x), model.predict(x), atol=1e-6)
    plan = fit.ahead_plan(24)
    assert plan == fit.ahead_plan(40)[:24]  # more games extend the same plan
    data = fit.collect_ahead([(s, sp) for s, sp in plan if "search:160" not in sp], log=lambda m: None)
    games = np.arange(len(data["players"]))
    # per seat: (corrected reward - the start's step)^2, averaged over the seats of the games
    first = data["const"][data["step_at"][:-1]].astype(np.float64)
    starts = np.zeros((len(games), 4))
    for g in games:  # the first step is the start value: its entries valued by the model
        n = int(data["players"][g])
        e0, e1 = data["entry_at"][g], data["entry_at"][g + 1]
        v = model.predict(fit.dense_rows(data, data["row_at"][g], data["row_at"][g + 1])).reshape(-1, n)
        v = luck.constant_sum(v, n)  # the estimator's values (float64)
        sel = data["e_step"][e0:e1] == 0
        starts[g, :n] = first[g, :n] + (data["e_coeff"][e0:e1][sel, None] * v[data["e_state"][e0:e1][sel]]).sum(axis=0)
    want = ((fit.corrected_of(model, data, games) - starts) ** 2).sum() / data["players"].sum()
    with torch.no_grad():
        got = float(fit.game_loss(fit.torch_net(model.layers), data, games))
    assert got == pytest.approx(want, rel=1e-4)
    layers, report = fit.fit_ahead(data, model.layers, epochs=2, lr=3e-3, batch=4, log=lambda m: None)
    assert len(report["held_out_loss"]) == 3
    kept = report["epoch_kept"]
    assert report["held_out_loss"][kept] == min(report["held_out_loss"])
    held = games[games % 10 == 0]
    with torch.no_grad():
        again = float(fit.game_loss(fit.torch_net(layers), data, held))
    assert again == pytest.approx(report["held_out_loss"][kept], abs=1e-4)


def test_held_out_ratios_take_each_agents_own_seats_as_luck_gain_measures_a_pairing():
    plan = [(50 + i, ("heuristic", "search:8") if i % 2 else ("search:8", "heuristic")) for i in range(8)]
    plan += [(60, ("heuristic", "random", "random")), (61, ("random", "heuristic", "random"))]
    data = fit.collect_ahead(plan, log=lambda m: None)
    model = luck.default_model()
    games = np.arange(len(plan))
    got = fit.held_out_ratios(model, data, [sp for _, sp in plan], games)
    cor = fit.corrected_of(model, data, games)
    seat = [sp.index("heuristic") for _, sp in plan[:8]]
    c, r = np.array([(cor[g, q], data["rewards"][g, q]) for g, q in enumerate(seat)]).T
    assert 0 < (r > 0).sum() < 8  # the heuristic's seat both won and lost: its SD is the raw one's
    assert got["heuristic vs search:8"] == {"seat_games": 8, "sd_ratio": round(float(c.std() / r.std()), 3)}
    assert got["3 players: heuristic"]["seat_games"] == 2 and got["3 players: random"]["seat_games"] == 4
    assert set(got) == {"heuristic vs search:8", "3 players: heuristic", "3 players: random"}
    # the heuristic won both its 3-player games: no spread to compare with, no ratio (not infinity)
    assert (data["rewards"][8:, [0, 1]].diagonal() == 1).all() and got["3 players: heuristic"]["sd_ratio"] is None


def test_the_shipped_network_says_its_stages_and_keeps_benchmarks_off_their_seeds():
    meta = luck.default_model().meta
    first, second, *more = meta["stages"]
    # the first stage's games were dealt by the batched core, the second's from seeds of their own
    assert first["games"] >= 50_000 and first["batch_seeds"] == [fit.BATCH_SEED + n for n in fit.PLAYER_SHARE]
    assert first["command"].startswith("python -m evaluation.fit --games ")
    assert second["seeds"][0] == fit.AHEAD_SEEDS
    assert second["command"].startswith("python -m evaluation.fit --ahead ")
    # each further stage takes up the plan where the one before left it
    for before, stage in zip([second] + more, more):
        assert stage["seeds"][0] == before["seeds"][1]
        assert stage["command"].startswith(f"python -m evaluation.fit --ahead {stage['seeds'][1] - fit.AHEAD_SEEDS} "
                                           f"--from {stage['seeds'][0] - fit.AHEAD_SEEDS} ")
    # what luck_gain.py refuses: every seeded fitting game, those of the value functions before too
    assert meta["seeds"] == [fit.FIT_SEEDS, meta["stages"][-1]["seeds"][1]]
    assert meta["games"] == sum(s["games"] for s in meta["stages"])
    assert meta["layers"][:-1] == [int(w.shape[1]) for w, _ in luck.default_model().layers[:-1]]


def test_the_second_stage_says_which_seeds_to_refuse_whatever_its_first_stage_records():
    shipped = luck.default_model().meta
    last = shipped["stages"][-1]["seeds"][1] - fit.AHEAD_SEEDS
    assert fit.refused_seeds(shipped["stages"][0], last) == shipped["seeds"]
    # a first stage with no seeded games (train.py's value function, dealt by generators) or a
    # record without them: the second stage's own seeds, not a KeyError after an hour's fit
    for meta in ({"games": 20000, "dealt_by": "havok_env.vector.VectorGames"}, {"seeds": "?"}, {}):
        assert fit.refused_seeds(meta, 500) == [fit.AHEAD_SEEDS, fit.AHEAD_SEEDS + 500]


def test_a_further_stages_games_follow_the_plan_with_the_search_bot_at_its_own_budget_first():
    plan = fit.stage_plan(60, 20, 6)
    assert [s for s, _ in plan] == list(range(fit.AHEAD_SEEDS + 20, fit.AHEAD_SEEDS + 60))
    assert [sp for _, sp in plan[:6]] == [("search", "heuristic"), ("heuristic", "search")] * 3
    assert plan[6:] == fit.ahead_plan(60)[26:]
    assert fit.stage_plan(60) == fit.ahead_plan(60)
    # the search bot's games are cached under names of their own, never read as the plan's
    names = [f.name for f in fit.ahead_files(1100, "c", 300, 260)]
    assert names == ["search300-550.npz", "search550-800.npz", "games800-1050.npz", "games1050-1100.npz"]
    assert [f.name for f in fit.ahead_files(300, "c")] == ["games0-250.npz", "games250-300.npz"]


def test_a_further_stage_fits_the_network_again_and_appends_its_record(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "next.safetensors"
    before = luck.default_model().meta
    k = before["stages"][-1]["seeds"][1] - fit.AHEAD_SEEDS  # where the plan's games fitted so far end
    assert fit.main(["--ahead", str(k + 20), "--from", str(k), "--search", "2",
                     "--init", str(DATA / "value.safetensors"), "--epochs", "1", "--lr", "1e-4",
                     "--drop-at", "1", "--jobs", "1", "--cache", str(tmp_path), "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.glob("*.npz")) == [f"search{k}-{k + 20}.npz"]
    after = ValueModel.load(out).meta
    assert after["stages"][:-1] == before["stages"]
    stage = after["stages"][-1]
    assert stage["games"] == 20 and stage["seeds"] == [fit.AHEAD_SEEDS + k, fit.AHEAD_SEEDS + k + 20]
    assert stage["search_bot_games"]["seeds"] == [fit.AHEAD_SEEDS + k, fit.AHEAD_SEEDS + k + 2]
    assert stage["command"].startswith(f"python -m evaluation.fit --ahead {k + 20} --from {k} --search 2 "
                                       f"--init V{len(before['stages'])}.safetensors ")
    assert "--lr 0.0001 --drop-at 1" in stage["command"]
    assert after["games"] == before["games"] + 20
    assert after["seeds"] == [before["seeds"][0], fit.AHEAD_SEEDS + k + 20]
    assert len(stage["fit"]["held_out_loss"]) == 2


@pytest.mark.parametrize("extra,says", [
    (["--search", "4"], "--search is for a further stage"),
    (["--from", "35"], "--from must leave at least 10 games"),
    (["--from", "10", "--search", "40"], "--search at most"),
    (["--from", "10", "--hidden", "300", "140"], "with --from, the network's own"),
    (["--lr", "0"], "--lr between 0 and 1"),
])
def test_a_stage_asked_for_wrongly_is_refused_before_any_game_is_played(extra, says, capsys):
    with pytest.raises(SystemExit):
        fit.main(["--ahead", "40", "--init", str(DATA / "value.safetensors")] + extra)
    assert says in capsys.readouterr().err


def test_a_further_stage_needs_a_network_with_a_record_of_its_stages(tmp_path, capsys):
    bare = tmp_path / "bare.safetensors"
    meta = luck.default_model().meta
    ValueModel(luck.default_model().layers, {k: meta[k] for k in ("what", "features_version", "inputs")}).save(bare)
    with pytest.raises(SystemExit):
        fit.main(["--ahead", "40", "--from", "20", "--init", str(bare), "--cache", str(tmp_path)])
    assert "is not a second stage's network" in capsys.readouterr().err
    # nor one whose record lists stages but no seeds to take up from: our error, not a TypeError
    odd = tmp_path / "odd.safetensors"
    ValueModel(luck.default_model().layers, dict(meta, seeds="?")).save(odd)
    with pytest.raises(SystemExit):
        fit.main(["--ahead", "40", "--from", "20", "--init", str(odd), "--cache", str(tmp_path)])
    assert "is not a second stage's network" in capsys.readouterr().err
    # nor one of the games the network was fitted on already
    fitted = luck.default_model().meta["stages"][-1]["seeds"][1] - fit.AHEAD_SEEDS
    with pytest.raises(SystemExit):
        fit.main(["--ahead", str(fitted + 50), "--from", str(fitted - 10), "--init", str(DATA / "value.safetensors"),
                  "--cache", str(tmp_path)])
    assert f"was fitted on the plan's games up to {fitted}" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.npz"))


def test_a_cache_file_of_the_second_stage_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = str(tmp_path / "games0-2.npz")
    monkeypatch.setattr(fit, "collect_ahead", lambda plan, log: {"x": np.arange(len(plan))})
    fit._collect_part(([1, 2], path))
    whole = (tmp_path / "games0-2.npz").read_bytes()

    def torn(file, **arrays):  # stops after the archive's first bytes, as a stopped run would
        f = open(file, "wb") if isinstance(file, str) else file
        f.write(whole[:len(whole) // 2])
        f.flush()
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", torn)
    with pytest.raises(KeyboardInterrupt):
        fit._collect_part(([1, 2, 3], path))
    assert (tmp_path / "games0-2.npz").read_bytes() == whole
    assert [p.name for p in tmp_path.iterdir()] == ["games0-2.npz"]
    monkeypatch.undo()
    monkeypatch.setattr(fit, "collect_ahead", lambda plan, log: {"x": np.arange(len(plan))})
    fit._collect_part(([1, 2, 3], path))
    with np.load(path) as z:
        assert list(z["x"]) == [0, 1, 2]
