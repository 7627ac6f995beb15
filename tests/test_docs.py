"""docs/rules.md describes the card set the package ships; the README's examples run as written."""

import contextlib
import io
import re
from pathlib import Path

from havok_env import default_cards

RULES = (Path(__file__).parent.parent / "docs" / "rules.md").read_text()
README = (Path(__file__).parent.parent / "README.md").read_text()


def test_treasure_table_matches_card_data():
    cards = default_cards()
    rows = re.findall(r"^\| (\d+) \| ([^|]+?) \| (\d+) \| (\d+) \| ([^|]+?) \|$", RULES, re.M)
    table = {name: (int(copies), int(value), aff) for _, name, copies, value, aff in rows}
    for k in range(cards.n_treasures):
        name = cards.names[k]
        copies, value, aff = table[name]
        assert (copies, value) == (cards.copies[k], cards.value[k]), name
        assert aff.startswith(cards.affinity[k] or "—"), name
    total = sum(cards.value[k] * cards.copies[k] for k in range(cards.n_treasures))
    assert f"total printed value {total}" in RULES


def test_every_card_and_ability_is_documented():
    cards = default_cards()
    for name in cards.names:
        assert name in RULES, name
    for d in cards.dragons:
        assert d.play.name in RULES and d.crash.name in RULES


def test_the_readmes_python_examples_run_verbatim_and_give_the_same_output_every_time():
    blocks = re.findall(r"^```python\n(.*?)^```$", README, re.M | re.S)
    assert len(blocks) >= 2
    printed = []
    for code in blocks:
        runs = []
        for _ in range(2):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
            runs.append(out.getvalue())
        assert runs[0] == runs[1], code
        printed.append(runs[0])
    assert "winners" in printed[0]  # the Quickstart's game finished and printed its result
