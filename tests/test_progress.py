"""training.progress: long work says how far it is and how long it has left, as a bar on a
terminal and as plain lines in a log."""

from __future__ import annotations

import io
import re

import pytest

from training import progress as progress_module
from training.progress import Progress, duration, progress_line, time_left


def test_the_time_left_is_the_mean_rate_so_far_times_what_is_left():
    assert time_left(0, 100, 5.0) is None  # nothing done: no estimate
    assert time_left(25, 100, 10.0) == pytest.approx(30.0)
    assert time_left(100, 100, 40.0) == 0.0
    assert [duration(s) for s in (0, 44.6, 60, 185, 3599, 7620)] == ["0s", "45s", "1m00s", "3m05s", "59m59s",
                                                                     "2h07m"]
    assert progress_line("games", 300, 1000, 72) == "games: 300/1,000 (30%) in 1m12s, about 2m48s left"
    assert progress_line("games", 1000, 1000, 240) == "games: 1,000/1,000 (100%) in 4m00s"


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", c)
    return c


def test_without_a_terminal_a_line_at_the_start_and_at_every_tenth_each_with_the_time_left(clock):
    out = io.StringIO()  # not a terminal, as a redirect or a log file
    p = Progress(20, desc="games", unit="game", file=out)
    for _ in range(20):
        clock.now += 1.5
        p.update()
    p.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "games: 0/20 games, starting"
    assert lines[1] == "games: 2/20 (10%) in 3s, about 27s left"
    assert lines[-1] == "games: 20/20 (100%) in 30s"
    assert len(lines) == 1 + 10
    assert all(re.search(r"about \d+s left$", line) for line in lines[1:-1])


def test_slow_work_gets_a_line_at_least_every_minute(clock):
    out = io.StringIO()
    p = Progress(1000, file=out, every_s=60)
    for _ in range(3):  # 3 games in 3 minutes: no tenth passed, a line a minute all the same
        clock.now += 61
        p.update()
    assert out.getvalue().splitlines()[1:] == [
        "games: 1/1,000 (0%) in 1m01s, about 16h55m left",
        "games: 2/1,000 (0%) in 2m02s, about 16h54m left",
        "games: 3/1,000 (0%) in 3m03s, about 16h53m left"]


def test_a_callback_for_done_and_total_and_a_say_function_for_the_lines(clock):
    # training.imitation.Collection reports (games done, games) as its chunks finish
    said = []
    p = Progress(100, desc="behaviour cloning", say=said.append)
    for done in (20, 40, 60, 80, 100):
        clock.now += 10
        p(done, 100)
    assert said[0] == "behaviour cloning: 20/100 (20%) in 10s, about 40s left"
    assert said[-1] == "behaviour cloning: 100/100 (100%) in 50s"
    assert len(said) == 5  # no starting line: the script says what starts in its own words


def test_no_progress_shows_nothing():
    out = io.StringIO()
    p = Progress(10, file=out, show=False)
    for _ in range(10):
        p.update()
    p.close()
    assert out.getvalue() == ""


def test_on_a_terminal_a_bar_with_the_time_left():
    pytest.importorskip("tqdm")

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    with Progress(50, desc="games", unit="game", file=out) as p:
        for _ in range(10):
            p.update()
    text = out.getvalue()
    assert "games:  20%" in text and "10/50" in text
    assert re.search(r"<\d\d:\d\d", text)  # tqdm's time left
    assert "starting" not in text


def test_the_imitation_games_report_their_time_left_through_their_callback():
    from training.imitation import collect

    said = []
    collect("fire", 2, 40, opponents=("random",), teacher="random",
            progress=Progress(40, desc="behaviour cloning", say=said.append))
    assert len(said) == 2  # one line per chunk of 20 games: each a fifth of the work
    assert said[0].startswith("behaviour cloning: 20/40 (50%) in ") and said[0].endswith(" left")
    assert said[1].startswith("behaviour cloning: 40/40 (100%) in ")


def test_an_evaluation_reports_its_games_in_order_as_they_finish():
    from training.winrate import evaluate
    seen = []
    r = evaluate("heuristic", "random", "fire", 2, 120, seed=5, workers=2, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(50, 120), (100, 120), (120, 120)]  # chunks of at least 50 games, about 20 of them
    assert r == evaluate("heuristic", "random", "fire", 2, 120, seed=5, workers=1)  # the same games
