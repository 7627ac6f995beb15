"""docs/rules.md describes the card set the package ships."""

import re
from pathlib import Path

from havok_env import default_cards

RULES = (Path(__file__).parent.parent / "docs" / "rules.md").read_text()


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
