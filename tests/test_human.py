"""The human agent driven by scripted input: typos, names, crash windows, quitting, the ledger."""

from __future__ import annotations

import io
import itertools
import json
import os

import pytest

import evaluate
import evaluation.ledger
import evaluation.tournament
from agents import make_agent
from agents.human import HumanAgent, HumanQuit
from agents.runner import play_game
from builder import Pos, do
from havok_env import default_cards
from havok_env.engine import Game
from havok_env.render import choice_label, trigger_text
from havok_env.view import SeatView


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
    rep = evaluation.tournament.run_tournament(["human", "random"], seed=3, workers=2, ledger=str(ledger),
                                  human_io={"input": inp, "output": out})
    assert "Carrying on." in out.getvalue()
    assert rep["interrupted"].startswith("stopped") and rep["config"]["games"] == 0
    assert not ledger.exists()  # an unfinished game is not recorded
    # the input simply ends: the same
    rep = evaluation.tournament.run_tournament(["random", "human"], seed=3, ledger=str(ledger),
                                  human_io={"input": Script([], cycle=False), "output": io.StringIO()})
    assert "input ended" in rep["interrupted"]
    assert not ledger.exists()


def test_human_agent_alone_with_the_runner():
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
    rep = evaluation.tournament.run_tournament(["human:kim", "random", "heuristic"], num_players=2, seed=2,
                                  ledger=str(ledger),
                                  human_io={"input": Script(["1"]), "output": io.StringIO()})
    assert rep["config"]["games"] == 6 and "interrupted" not in rep
    entries = [json.loads(x) for x in ledger.read_text().splitlines()]
    assert len(entries) == 4  # the two bot-only games are not human games
    assert all("human:kim" in e["seats"] for e in entries)
    summary = evaluation.ledger.summarise_ledger(evaluation.ledger.read_ledger(str(ledger))[0])
    assert {(m["opponent"], m["games"]) for m in summary["matchups"]} == {("random", 2), ("heuristic", 2)}


def human_labels(g: Game) -> list[str]:
    """The numbered choices the person at the terminal is shown."""
    out = io.StringIO()
    human = HumanAgent(input=Script(["1"]), output=out, width=1000)
    human.reset(g.to_act, g.num_players)
    human.act(None, None, SeatView(g, g.to_act))
    listed = [line.split(". ", 1)[1] for line in out.getvalue().splitlines() if line.startswith("  ")
              and line.split(".", 1)[0].strip().isdigit()]
    labels = [choice_label(SeatView(g, g.to_act), a) for a in g.legal_actions()]
    assert listed[-len(labels):] == labels  # the arena's words (havok_env.render), one home
    return labels


def test_event_bonuses_name_their_affinity():
    cards = default_cards()
    with_bonus = [e for e in cards.events if e.bonus]
    assert with_bonus
    for e in with_bonus:
        text = cards.texts[cards.kind(e.name)]
        assert f"Bonus ({e.affinity}): {e.bonus_text}" in text and "Bonus:" not in text
    # as a person sees it in a crash window on the event
    g = Game(2, ["Ruby", "Pearl"], seed=0)
    heat = cards.kind("Heat Wave")
    text, detail = trigger_text(SeatView(g, 0), {"on": "event", "card": heat, "flipper": 1})
    assert text == "player_1 flipped the event Heat Wave." and "Bonus (fire): Also draw 1." in detail


def test_choices_between_treasures_show_their_values():
    # in a hoard: the worth there (Jeweled Dagger, printed 2, is worth 3 to Obsidian)
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Sticky Claws", "Moonlit Ward", "Eclipse")
         .hoard(1, "Jeweled Dagger", "Knight's Helm").tired(1).build())
    do(g, "play Sticky Claws")
    assert human_labels(g) == ["target player_1's Knight's Helm (worth 2)",
                               "target player_1's Jeweled Dagger (worth 3)"]
    # the decider's own hoard: what it gives away is worth to it
    g = (Pos(2, ["Amber", "Obsidian"]).hand(0, "Fair Trade", "Moonlit Ward", "Eclipse")
         .hoard(0, "Sunstone Ring", "Copper Kettle").hoard(1, "Silver Spoons").tired(1).build())
    do(g, "play Fair Trade")
    while g.pending["purpose"] != "trade_give":
        g.apply(g.legal_actions()[-1])
    assert {"give your Sunstone Ring (worth 4)", "give your Copper Kettle (worth 1)"} >= \
        set(human_labels(g)) and human_labels(g)
    # outside hoards: the printed value, what a card's "worth 3 or less" reads there
    g = (Pos(2, ["Obsidian", "Ruby"]).hand(0, "Grave Robbing", "Moonlit Ward", "Eclipse")
         .trash("Jeweled Dagger", "Copper Kettle").tired(1).build())
    do(g, "play Grave Robbing")
    assert set(human_labels(g)) == {"take from the trash heap: Copper Kettle (worth 1)",
                                    "take from the trash heap: Jeweled Dagger (worth 2)"}
    # cards shown from the Havok deck (Ruby's Second Helping: resolve one of two)
    g = (Pos(2, ["Ruby", "Obsidian"]).hand(0, "Second Helping", "Moonlit Ward", "Eclipse")
         .havok_top("Phoenix Feather", "Tribute").tired(1).build())
    do(g, "play Second Helping")
    assert human_labels(g) == ["resolve Phoenix Feather (worth 4)", "resolve Tribute"]


def play_scripted(lines, **kwargs):
    out = io.StringIO()
    human = HumanAgent(input=Script(lines), output=out, **kwargs)
    play_game([human, make_agent("heuristic")], seed=21, dragons=["Ruby", "Obsidian"], log=True)
    return out.getvalue()


def test_the_table_is_shown_whole_once_then_only_what_changed():
    text = play_scripted(["1"])
    prompts = text.count("\n> ") + text.startswith("> ")
    assert prompts > 5
    assert text.count("  innate crash Snatch:") == 1  # what never changes is shown once
    trash = [line for line in text.splitlines() if line.startswith("Trash heap:")]
    assert 1 <= len(trash) < prompts
    assert all(a != b for a, b in zip(trash, trash[1:]))  # each time it is shown, it changed
    assert "--- On the table now ('table' shows all of it) ---" in text
    # 'table' shows the whole of it again
    text = play_scripted(["table", "1"])
    assert text.count("  innate crash Snatch:") >= text.count("You chose:")


def test_hand_changes_name_known_cards_and_give_new_cards_their_text():
    text = play_scripted(["2", "1"])
    sections = text.split("'s hand:\n")[2:]  # the hand as shown after the first time
    assert sections
    shown = [line for s in sections for line in s.splitlines() if line.startswith("  - ")]
    assert any(" [" not in line for line in shown) and any(" [" in line for line in shown)


@pytest.mark.parametrize("width", [40, 72])
def test_output_is_wrapped_to_the_terminal_width(width, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((width, 24)))
    text = play_scripted(["table", "1"])
    assert max(map(len, text.splitlines())) <= width
    assert max(map(len, play_scripted(["table", "1"], width=200).splitlines())) > width
    # continuation lines are indented under their first line
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("  - "))
    assert lines[i + 1].startswith("      ")


def test_a_person_is_told_how_many_games_why_and_where_they_are_recorded(tmp_path):
    ledger = tmp_path / "ledger.jsonl"
    out = io.StringIO()
    assert evaluate.main(["--agents", "human", "heuristic", "--games", "1", "--seed", "3",
                          "--ledger", str(ledger), "--no-progress"], stdin=Script(["1"]),
                         stdout=out) == 0
    text = " ".join(out.getvalue().split())  # as if unwrapped
    plan = "You will play 2 game(s), as --games 1 is rounded up to whole deals"
    assert plan in text and text.index(plan) < text.index("=== Game 1 of 2:")
    assert "=== Game 2 of 2:" in text and "luck of the deal cancels out" in text
    recorded = f"This game is recorded in the ledger {ledger}"
    assert text.count(recorded) == 2
    assert text.index(recorded) < text.index("=== Game 2 of 2:")
    assert f"Games with a human are recorded in the ledger {ledger}." in out.getvalue().splitlines()
    # with more agents than seats, the person plays only the tables it sits at
    out = io.StringIO()
    evaluation.tournament.run_tournament(["human", "random", "heuristic"], num_players=2, seed=2, ledger=str(ledger),
                            human_io={"input": Script(["1"]), "output": out})
    assert "You will play 4 of the 6 game(s): each deal" in out.getvalue()


def test_the_terminal_and_the_arena_word_a_crash_window_alike():
    # one home for the words (havok_env.render.question): a trade names what it gives in exchange,
    # a salvage says where its card comes from, at the terminal as on the arena's pages
    import random

    from havok_env.render import question

    seen = set()
    for seed in range(40):
        g = Game(2 + seed % 3, seed=seed)
        rng = random.Random(seed)
        human = HumanAgent(input=io.StringIO(), output=io.StringIO(), width=200)
        while not g.is_over:
            p = g.pending
            view = SeatView(g, p["player"])
            human.seat = p["player"]
            text = human._question(view)
            q, detail = question(view, p["purpose"], p["context"] or {})
            assert text.startswith(q) and detail in text
            if " in exchange for " in text:
                seen.add("give")
            if " from the trash heap" in text:
                seen.add("salvage")
            g.apply(rng.choice(g.legal_actions()))
    assert seen == {"give", "salvage"}
