"""The human ledger: every field of a line is checked; a hostile or torn line costs only itself."""

from __future__ import annotations

import json
import os

import pytest

import evaluate
import evaluation.ledger
from havok_env.engine import Game


def _entry(seed=4, seats=("human:ann", "random")):
    g = Game(len(seats), seed=seed)
    actions = []
    while not g.is_over:
        actions.append(g.legal_actions()[0])
        g.apply(actions[-1])
    return {"version": 1, "time": "2025-01-01T00:00:00+00:00", "seed": seed, "options": g.options,
            "actions": actions, "seats": list(seats),
            "humans": [i for i, s in enumerate(seats) if s.startswith("human")],
            "agents": list(dict.fromkeys(seats)), "dragons": [g.dragon(p).name for p in range(len(seats))],
            "result": g.result, "turns": g.s.turn, "decisions": len(actions),
            "tournament": {"seed": 1, "deal": 0, "table": 0, "rotation": 0}}


GOOD = _entry()
assert len(GOOD["result"]["winners"]) == 1  # some cases below rely on a sole winner


def _with(**changes):
    e = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if value is KeyError:
            del e[key]
        else:
            e[key] = value
    return json.dumps(e)


def _result(**changes):
    return {**GOOD["result"], **changes}


DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE = [
    # the seven lines that crashed the summary
    ("deep nesting", DEEP, "nested too deeply"),
    ("deep nesting in a field", '{"version": 1, "seats": ' + DEEP + "}", "nested too deeply"),
    ("seat as a list", _with(seats=["human:ann", ["random"]]), "seats[1] must be a string, not a list"),
    ("seat as a dict", _with(seats=["human:ann", {"spec": "random"}]), "seats[1] must be a string, not an object"),
    ("int seat", _with(seats=["human:ann", 7]), "seats[1] must be a string, not a number"),
    ("turns as a string", _with(turns="12"), "turns must be an integer, not a string"),
    ("turns as a list", _with(turns=[12]), "turns must be an integer, not a list"),
    # seats counted twice, booleans taken for seat 1
    ("a seat twice in humans", _with(humans=[0, 0]), "humans lists seat 0 twice"),
    ("true for seat 1", _with(humans=[True]), "humans[0] must be an integer, not true/false"),
    ("a bot counted as a human", _with(humans=[0, 1]), "seat 1 (random) is not a human"),
    ("a human left out", _with(seats=["human:ann", "human:bob"], humans=[0], agents=["human:ann", "human:bob"]),
     "seat 1 (human:bob) is a human but not in humans"),
    ("no human", _with(humans=[]), "humans must not be empty"),
    ("human seat out of range", _with(humans=[2]), "humans[0] must be a seat from 0 to 1, not 2"),
    ("humans not a list", _with(humans=0), "humans must be a list, not a number"),
    # the rest of the schema
    ("not an object", "[1, 2, 3]", "not a JSON object but a list"),
    ("not JSON", "{not json", "not JSON"),
    ("missing fields", '{"version": 1}', "missing 'seed', 'options', 'actions', 'seats', 'humans', 'result', 'turns'"),
    ("another version", _with(version=2), "version must be 1, not 2"),
    ("seed as a string", _with(seed="4"), "seed must be an integer, not a string"),
    ("negative seed", _with(seed=-4), "seed must be an integer from 0 to"),
    ("unknown option", _with(options={**GOOD["options"], "cards": "x"}), "options has unknown key 'cards'"),
    ("player count as true", _with(options={**GOOD["options"], "num_players": True}),
     "options.num_players must be an integer, not true/false"),
    ("five players", _with(options={**GOOD["options"], "num_players": 5}),
     "options.num_players must be an integer from 2 to 4, not 5"),
    ("too few seats", _with(seats=["human:ann"]), "seats must list 2 seats (options.num_players), not 1"),
    ("an unknown dragon", _with(options={"num_players": 2, "dragons": ["Ruby", "Goldie"]}),
     "unknown dragon 'Goldie'"),
    ("an action as a string", _with(actions=GOOD["actions"][:3] + ["1"]),
     "actions[3] must be an integer, not a string"),
    ("an action as true", _with(actions=[True] + GOOD["actions"][1:]), "actions[0] must be an integer, not true/false"),
    ("an illegal action", _with(actions=[75] + GOOD["actions"][1:]), "the replay fails at actions[0]"),
    ("an unfinished game", _with(actions=GOOD["actions"][:5], decisions=5), "the replay does not finish the game"),
    ("actions after the end", _with(actions=GOOD["actions"] + [0], decisions=len(GOOD["actions"]) + 1),
     "the replay fails at actions["),
    ("a seat with control characters", _with(seats=["human:\x1b[2Jann", "random"]), "control characters"),
    ("a huge seat name", _with(seats=["human:" + "a" * 500, "random"]), "longer than 200 characters"),
    ("agents not a list", _with(agents="random"), "agents must be a list, not a string"),
    ("a seat not among the agents", _with(agents=["human:ann"]), "seat 1 (random) is not among the agents"),
    ("result not an object", _with(result=[0]), "result must be an object, not a list"),
    ("winners as true", _with(result=_result(winners=[True])), "result.winners[0] must be an integer"),
    ("a winner twice", _with(result=_result(winners=[0, 0])), "result.winners lists seat 0 twice"),
    ("scores of the wrong length", _with(result=_result(scores=[3])), "result.scores must list 2 scores"),
    ("a score as a string", _with(result=_result(scores=["3", 15])), "result.scores[0] must be an integer"),
    ("winners that are not the best scores", _with(result=_result(winners=[1 - GOOD["result"]["winners"][0]])),
     "result.winners must be the seats with the best score"),
    ("a lying result", _with(result=_result(scores=GOOD["result"]["scores"][::-1],
                                            winners=[1 - GOOD["result"]["winners"][0]])),
     "the replay does not reproduce the recorded result"),
    ("a lying reason", _with(result=_result(reason="resigned")), "the replay does not reproduce the recorded result"),
    ("lying turns", _with(turns=GOOD["turns"] + 1),
     f"turns is {GOOD['turns'] + 1} but the replay takes {GOOD['turns']}"),
    ("negative turns", _with(turns=-1), "turns must be an integer from 0"),
    ("lying decisions", _with(decisions=1), f"decisions is 1 but there are {len(GOOD['actions'])} actions"),
    ("lying dragons", _with(dragons=list(reversed(GOOD["dragons"]))), "dragons do not match the replay"),
    ("time as a number", _with(time=5), "time must be a string, not a number"),
    ("tournament as a list", _with(tournament=[]), "tournament must be an object, not a list"),
    ("a huge number", '{"version": 1, "seed": ' + "9" * 5000 + "}", "not JSON"),
]


def _summary(tmp_path, capsys, lines: list[bytes | str], *extra):
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_bytes(b"".join(x if isinstance(x, bytes) else x.encode() for x in lines))
    rc = evaluate.main(["--ledger", str(ledger), "--json", str(tmp_path / "s.json"), *extra])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err.strip().splitlines(), json.loads((tmp_path / "s.json").read_text())


@pytest.mark.parametrize("line, fragment", [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_a_hostile_line_costs_only_itself(tmp_path, capsys, line, fragment):
    good = json.dumps(GOOD) + "\n"
    rc, out, err, summary = _summary(tmp_path, capsys, [good, line + "\n", good])
    assert rc == 2
    assert "2 human seat-game(s), 1 corrupt line(s) skipped" in out
    assert summary["matchups"] == [{**summary["matchups"][0], "human": "ann", "opponent": "random", "games": 2}]
    assert len(err) == 1 and ":2: skipped a corrupt ledger line: " in err[0], err
    assert fragment in err[0], err[0]
    assert len(err[0]) < 400


def test_the_good_line_itself_passes_and_counts_once(tmp_path, capsys):
    rc, out, err, summary = _summary(tmp_path, capsys, [json.dumps(GOOD) + "\n"])
    assert rc == 0 and err == []
    assert summary["humans"][0]["games"] == 1 and summary["humans"][0]["human"] == "ann"
    assert summary["humans"][0]["mean_turns"] == GOOD["turns"]
    # two humans at one table: each counts once, against the other
    both = _entry(seed=9, seats=("human:ann", "human:bob"))
    rc, out, err, summary = _summary(tmp_path, capsys, [json.dumps(both) + "\n"])
    assert rc == 0 and [h["games"] for h in summary["humans"]] == [1, 1]


def test_bytes_that_are_not_utf8_and_an_overlong_line(tmp_path, capsys, monkeypatch):
    good = json.dumps(GOOD).encode() + b"\n"
    monkeypatch.setattr(evaluation.ledger, "MAX_LEDGER_LINE", 20_000)
    rc, out, err, _ = _summary(tmp_path, capsys, [good, b'{"seats": ["\xff\xfe"]}\n', b"x" * 50_000 + b"\n", good])
    assert rc == 2 and "2 human seat-game(s), 2 corrupt line(s) skipped" in out
    assert len(err) == 2 and ":2:" in err[0] and "not UTF-8" in err[0]
    assert ":3:" in err[1] and "longer than 20000 bytes" in err[1]


def test_a_torn_last_line_is_reported_not_fatal(tmp_path, capsys):
    good = json.dumps(GOOD)
    rc, out, err, summary = _summary(tmp_path, capsys, [good + "\n", good + "\n", good[: len(good) // 2]])
    assert rc == 2 and summary["humans"][0]["games"] == 2
    assert len(err) == 1 and ":3:" in err[0] and "torn last line" in err[0]
    # a last line that is whole but for its newline is a good line
    rc, out, err, summary = _summary(tmp_path, capsys, [good + "\n", good])
    assert rc == 0 and summary["humans"][0]["games"] == 2


def test_append_writes_each_line_whole_in_one_write_and_syncs_it(tmp_path, monkeypatch):
    ledger = tmp_path / "l.jsonl"
    ledger.write_text(json.dumps(GOOD)[:50])  # a write cut short earlier
    writes, syncs = [], []
    real_write, real_fsync = os.write, os.fsync
    monkeypatch.setattr(os, "write", lambda fd, data: writes.append(bytes(data)) or real_write(fd, data))
    monkeypatch.setattr(os, "fsync", lambda fd: syncs.append(fd) or real_fsync(fd))
    evaluation.ledger.append_ledger(str(ledger), GOOD)
    line = json.dumps(GOOD, separators=(",", ":")).encode() + b"\n"
    assert writes == [b"\n" + line] and len(syncs) == 1  # the torn line closed in the same write
    entries, problems = evaluation.ledger.read_ledger(str(ledger))
    assert len(entries) == 1 and len(problems) == 1 and ":1:" in problems[0]


def test_a_write_cut_short_leaves_a_tail_the_next_append_closes(tmp_path, monkeypatch, capsys):
    ledger = tmp_path / "l.jsonl"
    evaluation.ledger.append_ledger(str(ledger), GOOD)
    real_write = os.write

    def torn(fd, data):  # the process dies halfway through the line
        real_write(fd, data[: len(data) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "write", torn)
    with pytest.raises(KeyboardInterrupt):
        evaluation.ledger.append_ledger(str(ledger), GOOD)
    monkeypatch.setattr(os, "write", real_write)
    entries, problems = evaluation.ledger.read_ledger(str(ledger))
    assert len(entries) == 1 and len(problems) == 1 and "torn last line" in problems[0]
    evaluation.ledger.append_ledger(str(ledger), GOOD)
    entries, problems = evaluation.ledger.read_ledger(str(ledger))
    assert len(entries) == 2 and len(problems) == 1 and ":2:" in problems[0]
    assert "torn" not in problems[0]  # no longer the last line: a corrupt line like any other


def test_a_score_of_one_game_is_shown_without_an_interval():
    from evaluation.results import score_stats, score_text
    one = score_stats([1.0], [0.8])
    assert score_text(one["score"], one["score_ci95"], 1) == "+1.000 (1 game)"  # not "+- 0.000"
    two = score_stats([1.0, -1.0], [0.8, -0.6])
    assert score_text(two["score"], two["score_ci95"], 2).startswith("+0.000 +- ")
    assert score_text(None, None, 1) == "-"
