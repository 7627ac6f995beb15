"""The luck correction's value network, valued by the native core (src/havok_core/value_net.cpp):
the network's function to float32 rounding, the same bits for a row whatever the batch or the
thread, a clear error for weights that do not make a network; and the correction of some seats
only, which gives those seats the same bits as correcting every seat."""

import threading

import numpy as np
import pytest

from agents import make_agent
from agents.runner import play_game
from evaluation import luck
from evaluation.chance import trace
from agents.value import ModelFileError, ValueModel, features, layout
from havok_env import _core
from training.winrate import _play_chunk

MODEL = ValueModel.load()


def rows_of(specs, seed, seats=None):
    rec = play_game([make_agent(s) for s in specs], seed=seed)
    rand = luck.random_seats(specs)
    tr = trace(rec, rand)
    states = [a for ev in tr.events for a in ev.after if isinstance(a, tuple)]
    return states, rand, features(states, rand, seats=seats)


def reference(layers, x):
    """The network in float64 numpy."""
    h = x.astype(np.float64)
    for w, b in layers[:-1]:
        h = np.maximum(h @ w.astype(np.float64) + b, 0.0)
    w, b = layers[-1]
    return np.tanh(h @ w.astype(np.float64) + b)[:, 0]


@pytest.mark.parametrize("specs", [("heuristic", "random"), ("random", "heuristic", "random", "heuristic")])
def test_the_native_forward_pass_is_the_network_on_real_rows(specs):
    _, _, x = rows_of(specs, 11)
    got = MODEL.predict(x)
    assert got.dtype == np.float32 and got.shape == (len(x),) and len(x) > 200
    assert np.abs(got - reference(MODEL.layers, x)).max() < 1e-5
    assert np.all(np.abs(got) <= 1)


def test_a_row_has_the_same_bits_alone_in_any_batch_and_on_any_thread():
    _, _, x = rows_of(("heuristic", "random", "heuristic"), 5)
    batch = np.concatenate([x] * (1000 // len(x) + 1))[:1000]
    whole = MODEL.predict(batch)
    assert np.array_equal(whole.view(np.uint32), MODEL.predict(batch).view(np.uint32))
    alone = np.array([MODEL.predict(batch[i:i + 1])[0] for i in range(0, 1000, 37)])
    assert np.array_equal(alone.view(np.uint32), whole[::37].view(np.uint32))
    for lo, hi in [(3, 10), (100, 107), (0, 999)]:
        assert np.array_equal(MODEL.predict(batch[lo:hi]).view(np.uint32), whole[lo:hi].view(np.uint32))
    # copies of a row in one batch: the same bits wherever they stand
    dup = np.repeat(x[:3], 50, axis=0)
    v = MODEL.predict(dup).reshape(3, 50)
    assert all(len(set(r.view(np.uint32).tolist())) == 1 for r in v)
    # two threads at once (the GIL is released while the core computes)
    out = [None, None]

    def run(k):
        out[k] = MODEL.predict(batch)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(o.view(np.uint32), whole.view(np.uint32)) for o in out)


def test_the_four_and_eight_lane_code_give_the_same_bits():
    # a machine without AVX2 runs the four-lane code (src/havok_core/value_net.cpp)
    _, _, x = rows_of(("random", "heuristic", "random"), 9)
    net = ValueModel(MODEL.layers, {}).net
    eight = net.predict(x)
    net.sse_only = True
    assert np.array_equal(net.predict(x).view(np.uint32), eight.view(np.uint32))


def test_zero_inputs_and_hidden_units_count_as_zeros():
    # a small network checked by hand: unit 0 of the hidden layer is negative (skipped), unit 1 is 2
    w0 = np.array([[1.0, 1.0], [0.0, 0.0], [-3.0, 0.5]], np.float32)
    b0 = np.array([0.0, 1.0], np.float32)
    w1 = np.array([[5.0], [0.25]], np.float32)
    b1 = np.array([0.1], np.float32)
    m = ValueModel([(w0, b0), (w1, b1)], {})
    x = np.array([[1.0, 7.0, 1.0], [0.0, 0.0, 0.0]], np.float32)
    want = np.tanh(np.array([0.1 + 0.25 * 2.5, 0.1 + 0.25 * 1.0]))
    assert np.allclose(m.predict(x), want, atol=1e-7)
    assert m.predict(np.zeros((0, 3), np.float32)).shape == (0,)


@pytest.mark.parametrize("layers, says", [
    ([(np.ones((3, 2)), np.ones(2)), (np.ones((3, 1)), np.ones(1))], "takes 3 inputs but the layer before gives 2"),
    ([(np.ones((3, 2)), np.ones(2))], "ends in one output, not 2"),
    ([(np.ones((3, 1)), np.ones(2))], "2 biases for 1 outputs"),
    ([(np.full((3, 1), np.nan), np.ones(1))], "not finite"),
    ([(np.ones((3, 1)), np.array([np.inf]))], "not finite"),
    ([(np.ones(3), np.ones(1))], "weights must be a matrix and biases a vector"),
    ([(np.ones((0, 1)), np.ones(1))], "do not have their shape"),
    ([], "at least one layer"),
    ([(["a", "b"], np.ones(1))], "pairs of numbers"),
])
def test_weights_that_do_not_make_a_network_get_a_clear_error(layers, says):
    with pytest.raises(ModelFileError, match=says):
        ValueModel(layers, {})


def test_a_model_file_with_bad_weights_names_itself(tmp_path):
    good = [(w.copy(), b.copy()) for w, b in MODEL.layers]
    bad = [(w.copy(), b.copy()) for w, b in good]
    bad[1][0][3, 4] = np.inf
    m = ValueModel(good, dict(MODEL.meta))
    m.layers = bad  # saving does not check
    m.save(tmp_path / "bad.safetensors")
    with pytest.raises(ModelFileError, match=r"bad\.safetensors is not a value model \(value network layer 1 holds a "
                                             "number that is not finite\\)"):
        ValueModel.load(tmp_path / "bad.safetensors")
    m.layers = [(w.astype(np.float64), b) for w, b in good]
    m.save(tmp_path / "wide.safetensors")
    with pytest.raises(ModelFileError, match="layer 0 holds float64 and float32, not float32"):
        ValueModel.load(tmp_path / "wide.safetensors")


def test_a_model_file_missing_a_tensor_or_with_one_too_many_names_it(tmp_path):
    from safetensors.numpy import save_file

    m = ValueModel([(w.copy(), b.copy()) for w, b in MODEL.layers], dict(MODEL.meta))
    m.save(tmp_path / "v.safetensors")
    assert ValueModel.load(tmp_path / "v.safetensors").layers[0][0].shape == MODEL.layers[0][0].shape
    tensors = {f"{k}{i}": a for i, (w, b) in enumerate(m.layers) for k, a in (("w", w), ("b", b))}
    save_file({k: v for k, v in tensors.items() if k != "b1"}, str(tmp_path / "v.safetensors"))
    with pytest.raises(ModelFileError, match=r"v\.safetensors is not a value model \(tensor b1 missing\)"):
        ValueModel.load(tmp_path / "v.safetensors")
    save_file({**tensors, "extra": np.zeros(1, np.float32)}, str(tmp_path / "v.safetensors"))
    with pytest.raises(ModelFileError, match="tensor extra unexpected"):
        ValueModel.load(tmp_path / "v.safetensors")


def test_a_model_is_saved_whole_or_not_at_all(tmp_path, monkeypatch, torn_writes):
    import os

    m = ValueModel([(w.copy(), b.copy()) for w, b in MODEL.layers], dict(MODEL.meta))
    m.save(tmp_path / "v.safetensors")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    m.layers = [(w * 2, b) for w, b in m.layers]
    torn_writes()  # the weights' write stops halfway
    with pytest.raises(KeyboardInterrupt):
        m.save(tmp_path / "v.safetensors")
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing beside them
    m.save(tmp_path / "v.safetensors")
    assert sorted(os.listdir(tmp_path)) == sorted(before)
    assert ValueModel.load(tmp_path / "v.safetensors").layers[0][0][0, 0] == 2 * MODEL.layers[0][0][0, 0]


def test_rows_of_the_wrong_width_are_refused():
    with pytest.raises(ValueError, match=f"rows of {layout().size} features, not 10"):
        MODEL.predict(np.zeros((2, 10), np.float32))
    with pytest.raises(ValueError, match="a matrix of feature rows"):
        MODEL.predict(np.zeros(layout().size, np.float32))


@pytest.mark.parametrize("specs", [("heuristic", "random"), ("random", "heuristic", "random", "heuristic")])
def test_some_seats_rows_are_those_seats_rows_among_all(specs):
    states, rand, x = rows_of(specs, 8)
    n = len(specs)
    x = x.reshape(len(states), n, -1)
    for seats in ([1], [0], [n - 1, 0]):
        got = features(states, rand, seats=seats).reshape(len(states), len(seats), -1)
        assert np.array_equal(got, x[:, seats])
        v = MODEL.values(states, rand, seats)
        assert v.shape == (len(states), len(seats))
        assert np.array_equal(v, MODEL.values(states, rand)[:, seats])
    with pytest.raises(_core.CoreError, match="seat 1 is named twice"):
        features(states, rand, seats=[1, 1])
    with pytest.raises(_core.CoreError, match=f"seat {n} is not a seat of the game"):
        features(states, rand, seats=[n])


@pytest.mark.parametrize("specs, seed", [(("heuristic", "random"), 3), (("pretrained:fire", "heuristic"), 4),
                                         (("random", "heuristic", "random", "heuristic"), 6)])
def test_correcting_some_seats_gives_them_the_same_bits(specs, seed):
    rec = play_game([make_agent(s) for s in specs], seed=seed)
    for ahead in (False, True):
        full = luck.analyse(rec, specs, ahead=ahead)
        for q in range(len(specs)):
            one = luck.analyse(rec, specs, ahead=ahead, seats=[q])
            assert one.corrected[q] == full.corrected[q]
            assert np.array_equal(one.corrections[:, q], full.corrections[:, q])
            others = [r for r in range(len(specs)) if r != q]
            assert np.isnan(one.corrected[others]).all() and np.isnan(one.corrections[:, others]).all()
        c = luck.corrected_or_none(rec, specs, ahead=ahead, seats=[1])
        assert c[1] == full.corrected[1] and c[0] is None
    with pytest.raises(ValueError, match="are not seats of a"):
        luck.analyse(rec, specs, seats=[len(specs)])


def test_the_periodic_evaluation_corrects_the_learners_seat_as_a_full_correction_would(monkeypatch):
    asked = []
    real = luck.corrected_or_none

    def watch(rec, specs, **kw):
        asked.append((rec, specs, kw))
        return real(rec, specs, **kw)

    monkeypatch.setattr(luck, "corrected_or_none", watch)
    corrected = _play_chunk(("heuristic", "random", "fire", 2, 3, 0, 4))[4]
    assert len(asked) == 4
    for g, (rec, specs, kw) in enumerate(asked):
        seat = g % 2
        assert specs[seat] == "learner" and kw == {"ahead": False, "seats": [seat]}
        assert corrected[g] == luck.analyse(rec, specs, ahead=False).corrected[seat]
