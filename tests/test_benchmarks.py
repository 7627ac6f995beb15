"""The benchmark scripts run end to end (their figures come from full runs, not from tests)."""

import re
import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parent.parent / "benchmarks"


def run_script(name, args, monkeypatch):
    """Runs a benchmark script as its command line does; its exit status (0 if it returns)."""
    monkeypatch.setattr(sys, "argv", [str(BENCH / name), *args])
    monkeypatch.syspath_prepend(str(BENCH))
    try:
        runpy.run_path(str(BENCH / name), run_name="__main__")
    except SystemExit as e:
        return e.code or 0
    return 0


def test_throughput_prints_ratios(monkeypatch, capsys):
    run_script("throughput.py", ["--seconds", "0.5", "--players", "2"], monkeypatch)
    out = capsys.readouterr().out
    assert "texas_holdem_v4" in out and "ratio havok_hijinks_v1 / texas_holdem_v4" in out


def test_balance_report_runs(monkeypatch, capsys):
    run_script("balance.py", ["--agent", "random", "--games", "24", "--players", "2", "--jobs", "1"],
               monkeypatch)
    out = capsys.readouterr().out
    assert "Ruby" in out and "Havok deck" in out


@pytest.mark.parametrize("name, args, descs, tenths", [
    ("balance.py", ["--agent", "random", "--games", "24", "--players", "2", "--jobs", "1"], ["2 players: 24/24"],
     True),
    ("ladder.py", ["--pairs", "heuristic:random", "--games", "20", "--players", "2", "--jobs", "2"],
     ["heuristic vs random, 2 players: 20/20"], True),
    ("luck_gain.py", ["--pair", "heuristic", "random", "--games", "10", "--where-it-stands"],
     ["heuristic vs random: 10/10"], True),
    ("fuzz_inputs.py", ["--count", "20", "--card-files", "2"], ["snapshot mutants: 20/20", "card-file mutants: 2/2"],
     True),
    # counted by chunks of games (50 and 200): a sample this small is one chunk
    ("luck_cap.py", ["--budget", "1", "--games", "6", "--workers", "1"], ["games: 6/6"], False),
    ("roundtrip.py", ["--games", "20"], ["games: 20/20"], False),
])
def test_long_benchmarks_show_their_progress_with_the_time_left(monkeypatch, capsys, name, args, descs, tenths):
    assert run_script(name, args, monkeypatch) == 0
    err = capsys.readouterr().err
    # not a terminal: plain lines on standard error, each tenth with the time left, then the end
    for desc in descs:
        assert re.search(rf"^{desc} \(100%\) in \d+s$", err, re.M), err
    if tenths:
        assert re.search(r": \d+/[\d,]+ \(\d+%\) in \d+s, about \d+s left$", err, re.M), err


def test_luck_cap_reports_a_win_rate(monkeypatch, capsys):
    try:
        run_script("luck_cap.py", ["--budget", "1", "--games", "6", "--workers", "1"], monkeypatch)
    except SystemExit as e:
        assert e.code == 0
    out = capsys.readouterr().out
    assert ("search:1 (random rollout opponents, 4-turn rollouts, z 1, prior 0.02) as fire vs random"
            in out and "6 games" in out)


def test_luck_cap_passes_its_search_settings_to_the_search(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    import luck_cap
    seen = []
    monkeypatch.setattr(luck_cap, "evaluate", lambda agent, *a, **k: seen.append(agent) or
                        {"opponent": "random", "games": 1, "wins": 1, "draws": 0, "losses": 0,
                         "win_rate": 1.0, "ci95": [0.2, 1.0]})
    luck_cap.main(["--max-turns", "0", "--z", "0.5", "--prior", "0", "--budget", "7"])
    luck_cap.main(["--max-turns", "6"])
    full, six = seen
    assert (full.max_turns, full.z, full.prior, full.budget) == (None, 0.5, 0.0, 7)
    assert (six.max_turns, six.z, six.prior, six.budget) == (6, 1.0, 0.02, 160)
    with pytest.raises(SystemExit) as e:
        luck_cap.main(["--max-turns", "-1"])
    assert e.value.code == 2 and "--max-turns must be 0" in capsys.readouterr().err


def test_luck_cap_peeking_probes_see_what_they_name(monkeypatch, capsys):
    import random

    from havok_env.engine import Game
    from havok_env.view import SeatView

    monkeypatch.syspath_prepend(str(BENCH))
    import luck_cap

    def hand(snap, seat):
        return snap["players"][seat]["hand"]

    game = Game(2, seed=5)
    truth = game.snapshot()
    fair = SeatView(game, 0).determinize(random.Random(0)).snapshot()
    hands = luck_cap.PeekingView(game, 0, "hands").determinize(random.Random(0)).snapshot()
    everything = luck_cap.PeekingView(game, 0, "all").determinize(random.Random(0)).snapshot()
    assert everything == truth
    # the fair world resamples the opponent's hand; peeking at hands keeps it, but not the decks
    assert hand(fair, 1) != hand(truth, 1) and hand(hands, 1) == hand(truth, 1)
    assert sorted(hands["hijinks_deck"]) == sorted(truth["hijinks_deck"])
    assert hands["havok_deck"] != truth["havok_deck"]
    # peeking at crash cards keeps exactly the opponent's crash cards; its other cards are dealt
    # from the unseen cards that are not crash cards
    cards = game.cards
    crash = {cards.names[k] for k in range(cards.first_hijinks, cards.n_kinds)
             if cards.card(k).kind == "crash"}

    def mixed(g):  # the opponent holds crash cards and others, so both parts are tested
        held = {cards.names[k] for k in g.s.hands[1]}
        return held & crash and held - crash

    mixed_game = next(g for g in (Game(2, seed=s) for s in range(100)) if mixed(g))
    mixed_truth = mixed_game.snapshot()
    held = [c for c in hand(mixed_truth, 1) if c in crash]
    dealt = []
    for seed in range(20):
        peeked = luck_cap.PeekingView(mixed_game, 0, "crash").determinize(random.Random(seed)).snapshot()
        assert sorted(c for c in hand(peeked, 1) if c in crash) == sorted(held)
        assert len(hand(peeked, 1)) == len(hand(mixed_truth, 1))
        assert sorted(hand(peeked, 1) + peeked["hijinks_deck"]) == \
            sorted(hand(mixed_truth, 1) + mixed_truth["hijinks_deck"])
        dealt.append(sorted(hand(peeked, 1)))
    assert any(d != sorted(hand(mixed_truth, 1)) for d in dealt)  # the other cards are resampled
    try:
        run_script("luck_cap.py", ["--peek", "hands", "--budget", "1", "--games", "4", "--workers", "1"],
                   monkeypatch)
    except SystemExit as e:
        assert e.code == 0
    out = capsys.readouterr().out
    assert ("search peeking at hands:1 (random rollout opponents, 4-turn rollouts, z 1, prior 0.02) "
            "as fire vs random") in out
    try:
        run_script("luck_cap.py", ["--peek", "crash", "--opponent", "heuristic", "--heuristic-picks",
                                   "--budget", "1", "--games", "2", "--workers", "1"], monkeypatch)
    except SystemExit as e:
        assert e.code == 0
    out = capsys.readouterr().out
    assert ("search peeking at crash:1:heuristic-picks (heuristic rollout opponents, 4-turn rollouts, "
            "z 1, prior 0.02) as fire vs heuristic") in out


def test_fuzz_inputs_reports_each_outcome(monkeypatch, capsys):
    assert run_script("fuzz_inputs.py", ["--count", "40", "--card-files", "4"], monkeypatch) == 0
    out = capsys.readouterr().out
    assert "snapshots: 40 mutants" in out and "card files: 4 mutants" in out
    for outcome in ("rejected", "accepted", "raw error", "invalid"):
        assert outcome in out
    assert re.search(r"raw error +0\n", out) and re.search(r"invalid +0\n", out)


def test_fuzz_inputs_fails_the_run_on_an_invalid_mutant(monkeypatch, capsys):
    # benchmarks/sanitize.py reads the exit status: a mutant accepted into a broken position must fail it
    monkeypatch.syspath_prepend(str(BENCH))
    import fuzz_inputs
    monkeypatch.setattr(fuzz_inputs, "try_snapshot", lambda d, rng: ("invalid", "a broken position"))
    assert fuzz_inputs.main(["--count", "3", "--card-files", "0"]) == 1
    assert "invalid: 3 x a broken position" in capsys.readouterr().out


def test_roundtrip_sample_saves_and_restores_every_position(monkeypatch, capsys):
    # seeds 104100-104159 hold game 104123, whose fourth decision is a position that once did
    # not restore (a card both canceled and resolving); the benchmark plays 100,000 games
    assert run_script("roundtrip.py", ["--games", "60", "--first", "104100"], monkeypatch) == 0
    out = capsys.readouterr().out
    assert re.search(r"^60 games, [\d,]+ positions saved and restored, 0 failures", out, re.M)


def test_roundtrip_fails_the_run_on_a_position_that_does_not_restore(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCH))
    import roundtrip
    monkeypatch.setattr(roundtrip.Game, "from_snapshot", classmethod(lambda cls, d, **k: cls(2, seed=99)))
    assert roundtrip.main(["--games", "2"]) == 1
    out = capsys.readouterr().out
    assert "seed 0, 2 players, decision 0: the snapshots differ" in out and "2 failures" in out


def test_core_instructions_children_play_the_games_they_count(monkeypatch):
    """The instruction counts are differences between a run of N games and one of none: each
    child must play exactly what it is asked (valgrind itself is not needed for this)."""
    import subprocess
    monkeypatch.syspath_prepend(str(BENCH))
    import core_instructions
    root = str(BENCH.parent)
    for kind in ("core", "python"):
        played = [int(subprocess.run([sys.executable, "-c", core_instructions.CHILD[kind], "2", str(g)],
                                     capture_output=True, text=True, check=True, cwd=root,
                                     env={**__import__("os").environ, "PYTHONPATH": root}).stdout)
                  for g in (0, 3)]
        assert played[0] == 0 and played[1] > 3 * 5, (kind, played)


def test_core_instructions_reads_callgrinds_total(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(BENCH))
    import core_instructions
    runs = iter([(1_000, 0), (51_000, 20)])
    monkeypatch.setattr(core_instructions, "count", lambda kind, n, games: next(runs))
    assert core_instructions.per_decision("core", 2, 5) == (2_500.0, 20)


def test_learner_throughput_times_both_paths(monkeypatch, capsys):
    pytest.importorskip("sb3_contrib")
    assert run_script("learner_throughput.py", ["--steps", "512"], monkeypatch) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\| (subproc|batched)[^|]*\| ([\d,]+) \| ([\d.]+)x \| (\d+)% \| (\d+)% \|$", out, re.M)
    assert [r[0] for r in rows] == ["subproc", "batched", "batched"]
    assert rows[0][2] == "1.0" and all(int(r[3]) + int(r[4]) in (99, 100, 101) for r in rows)


def test_learning_curve_plays_checkpoints_and_draws_both_axes(monkeypatch, capsys, tmp_path):
    pytest.importorskip("sb3_contrib")
    pytest.importorskip("matplotlib")
    import json
    sys.path.insert(0, str(BENCH.parent))
    import train
    out = str(tmp_path / "fire")
    assert train.main(["--from-scratch", "--timesteps", "1024", "--eval-every", "512", "--n-envs", "8",
                       "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1", "--net-arch", "8",
                       "--eval-games", "50", "--final-eval-games", "0", "--out", out, "--logdir", "",
                       "--quiet"]) == 0
    plot = str(tmp_path / "curve.png")
    assert run_script("learning_curve.py", [out, "--opponent", "random", "--games", "6", "--points", "2",
                                            "--workers", "1", "--plot", plot], monkeypatch) == 0
    with open(str(tmp_path / "curve.json")) as f:
        played = json.load(f)["checkpoints"]
    assert len(played) == 2 and all(r["games"] == 6 and r["wall_s"] is not None for r in played)
    assert played[0]["timesteps"] < played[1]["timesteps"]
    assert Path(plot).stat().st_size > 1000
    err = capsys.readouterr().err  # each checkpoint's games, with the time left
    assert re.search(r"^checkpoint 2 of 2 \([\d,]+ steps\): 6/6 \(100%\) in \d+s$", err, re.M), err


def test_learning_curve_picks_the_last_checkpoint_within_each_mark_of_wall_time():
    sys.path.insert(0, str(BENCH))
    from learning_curve import at_minutes
    items = [(100, "a"), (200, "b"), (300, "c"), (400, "d")]
    wall = {100: 300.0, 200: 900.0, 300: 3500.0, 400: 7300.0}  # seconds
    assert at_minutes(items, wall, [15, 60, 120]) == [(200, "b"), (300, "c")]
    assert at_minutes(items, wall, [4, 200]) == [(400, "d")]  # none within 4 minutes
    assert at_minutes(items, {**wall, 200: None}, [15]) == [(100, "a")]
