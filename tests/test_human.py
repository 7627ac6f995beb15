"""The human agent driven by scripted input: typos, names, crash windows, quitting, the ledger."""

from __future__ import annotations

import io
import itertools
import json

import pytest

import evaluate
from agents import make_agent
from agents.human import HumanAgent, HumanQuit
from havok_env.engine import Game


class Script(io.TextIOBase):
    """An input stream that types ``lines`` over and over (or once, then ends, if ``cycle=False``)."""

    def __init__(self, lines, cycle=True):
        self.lines = list(lines)
        self.it = itertools.cycle(self.lines) if cycle else iter(self.lines)
        self.read_count = 0

    def readline(self, size=-1):
        try:
            line = next(self.it)
        except StopIteration:
            return ""
        self.read_count += 1
        return line + "\n"


LABELS = ["end the turn", "play Sticky Claws", "use Pilfer (Ruby's innate play)",
          "discard Sticky Claws and draw", "discard Moonlit Ward and draw"]


@pytest.mark.parametrize("text, pick", [
    ("1", 0), (" 3 ", 2), ("end", 0), ("END THE TURN", 0), ("pilfer", 2), ("play sticky", 1),
    ("moonlit", 4), ("discard sticky", 3), ("sticky claws play", 1),
])
def test_parse_accepts_numbers_and_names(text, pick):
    assert HumanAgent.parse(text, LABELS) == (pick, "")


@pytest.mark.parametrize("text, fragment", [
    ("", "type a number from 1 to 5"), ("0", "no choice 0"), ("6", "no choice 6"),
    ("-1", "no choice -1"), ("sticky", "fits several choices"), ("plya", "not one of the choices"),
    ("discrad moonlit wrd", "Did you mean 5"), ("help", "Type the number"),
])
def test_parse_rejects_bad_input_with_a_short_message(text, fragment):
    pick, msg = HumanAgent.parse(text, LABELS)
    assert pick is None and fragment.lower() in msg.lower() and "\n" not in msg


def test_make_agent_passes_streams():
    inp, out = Script(["1"]), io.StringIO()
    agent = make_agent("human", input=inp, output=out, name="zoe")
    assert isinstance(agent, HumanAgent) and agent.input is inp and agent.output is out
    assert agent.name == "zoe"


def test_scripted_human_with_typos_finishes_games_and_writes_the_ledger(tmp_path):
    ledger = tmp_path / "results" / "human_games.jsonl"
    # every answer is preceded by typos: an empty line, a misspelling, an out-of-range number
    inp = Script(["", "plya the crad", "99", "table", "1"])
    out = io.StringIO()
    rc = evaluate.main(["--agents", "human:tess", "heuristic", "--seed", "5", "--ledger", str(ledger),
                        "--no-progress"], stdin=inp, stdout=out)
    text = out.getvalue()
    assert rc == 0
    assert text.count("=== Game over") == 2  # one deal, both seatings
    assert "not one of the choices" in text and "no choice 99" in text
    assert "Please type a number" in text
    # what the human is shown
    assert "--- What happened ---" in text and "(you)" in text
    assert "hoard" in text and "/15" in text and ("ready" in text and "tired" in text)
    assert "'s hand:" in text and "innate play" in text
    assert "  1. " in text and "  2. " in text
    assert "Will you crash?" in text  # a crash window on the bot's turn (this seed has several)
    assert "Tournament: 2 agents" in text and "human:tess" in text
    lines = ledger.read_text().splitlines()
    assert len(lines) == 2
    for line in lines:
        e = json.loads(line)
        assert e["seats"][e["humans"][0]] == "human:tess" and "heuristic" in e["seats"]
        assert e["agents"] == ["human:tess", "heuristic"]
        g = Game(seed=e["seed"], **e["options"])  # the replay reproduces the result
        for a in e["actions"]:
            g.apply(a)
        assert g.result["winners"] == e["result"]["winners"]
        assert g.result["scores"] == e["result"]["scores"]
    assert [json.loads(x)["humans"] for x in lines] == [[0], [1]]
    # a crash window on the opponent's turn was offered: replay and look for one
    offered = False
    for line in lines:
        e = json.loads(line)
        h = e["humans"][0]
        g = Game(seed=e["seed"], **e["options"])
        for a in e["actions"]:
            p = g.pending
            if p["player"] == h and p["kind"] == "crash" and g.current_player != h:
                offered = True
            g.apply(a)
    assert offered
    # the ledger summary
    out2 = io.StringIO()
    assert evaluate.main(["--ledger", str(ledger)], stdout=out2) == 0
    assert "tess" in out2.getvalue() and "heuristic" in out2.getvalue()


def test_quit_needs_confirmation_and_end_of_input_stops_cleanly(tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    inp = Script(["quit", "no", "quit", "yes"], cycle=False)
    out = io.StringIO()
    rep = evaluate.run_tournament(["human", "random"], seed=3, workers=2, ledger=str(ledger),
                                  human_io={"input": inp, "output": out})
    assert "Carrying on." in out.getvalue()
    assert rep["interrupted"].startswith("stopped") and rep["config"]["games"] == 0
    assert not ledger.exists()  # an unfinished game is not recorded
    # the input simply ends: the same
    rep = evaluate.run_tournament(["random", "human"], seed=3, ledger=str(ledger),
                                  human_io={"input": Script([], cycle=False), "output": io.StringIO()})
    assert "input ended" in rep["interrupted"]
    assert not ledger.exists()


def test_human_agent_alone_with_the_runner():
    from agents.runner import play_game

    out = io.StringIO()
    human = HumanAgent(input=Script(["x", "1"]), output=out)
    rec = play_game([human, make_agent("random")], seed=12, dragons=["Amber", "Ruby"], log=True)
    assert rec["result"] is not None
    assert "you are player_0, playing Amber" in out.getvalue()
    with pytest.raises(HumanQuit):
        play_game([HumanAgent(input=Script([], cycle=False), output=io.StringIO()),
                   make_agent("random")], seed=12, dragons=["Amber", "Ruby"], log=True)


def test_only_games_with_a_human_go_to_the_ledger(tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    rep = evaluate.run_tournament(["human:kim", "random", "heuristic"], num_players=2, seed=2,
                                  ledger=str(ledger),
                                  human_io={"input": Script(["1"]), "output": io.StringIO()})
    assert rep["config"]["games"] == 6 and "interrupted" not in rep
    entries = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert len(entries) == 4  # the two bot-only games are not human games
    assert all("human:kim" in e["seats"] for e in entries)
    summary = evaluate.summarise_ledger(evaluate.read_ledger(str(ledger))[0])
    assert {(m["opponent"], m["games"]) for m in summary["matchups"]} == {("random", 2), ("heuristic", 2)}
