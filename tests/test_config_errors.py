"""Bad configurations, illegal actions, corrupt snapshots and corrupt card files fail loudly, with
a message that names the problem."""

import json
import re
import shutil

import pytest

from havok_env import (CardDataError, ConfigError, Game, IllegalActionError, SnapshotError,
                       load_cards)
from havok_env.cards import DATA_DIR

# -- configuration --------------------------------------------------------------------------------


def test_unknown_dragon():
    with pytest.raises(ConfigError, match="Gold"):
        Game(2, ["Ruby", "Gold"], seed=1)
    with pytest.raises(ConfigError, match="unknown dragon"):
        Game(2, ["Ruby", "water"], seed=1)


def test_duplicate_dragons():
    with pytest.raises(ConfigError, match="Ruby is chosen twice"):
        Game(2, ["Ruby", "ruby"], seed=1)
    with pytest.raises(ConfigError, match="Pearl is chosen twice"):
        Game(3, ["moonlight", None, "Pearl"], seed=1)


def test_dragon_list_of_the_wrong_length_or_type():
    with pytest.raises(ConfigError, match="3 players"):
        Game(3, ["Ruby", "Pearl"], seed=1)
    with pytest.raises(ConfigError, match="list"):
        Game(2, "Ruby", seed=1)


@pytest.mark.parametrize("n", [1, 5, 0, -2, "2", 2.0, True, None])
def test_bad_player_count(n):
    with pytest.raises(ConfigError, match="num_players must be 2, 3 or 4"):
        Game(n, seed=1)


@pytest.mark.parametrize("seed", ["7", 1.5, True, [1], object()])
def test_non_int_seed(seed):
    with pytest.raises(ConfigError, match="seed must be an integer"):
        Game(2, seed=seed)


def test_errors_are_value_errors():
    for cls in (ConfigError, IllegalActionError, SnapshotError, CardDataError):
        assert issubclass(cls, ValueError)


# -- illegal actions ----------------------------------------------------------------------------


def test_illegal_action_names_the_action_the_decision_and_the_legal_choices():
    g = Game(2, seed=3)
    legal = g.legal_actions()
    bad = next(a for a in range(g.layout.size) if a not in legal)
    before = g.snapshot()
    with pytest.raises(IllegalActionError) as e:
        g.apply(bad)
    msg = str(e.value)
    assert f"action {bad}" in msg and "not legal" in msg
    assert g.pending["purpose"] in msg and f"player_{g.pending['player']}" in msg
    assert "legal:" in msg and g.action_label(legal[0]) in msg
    assert g.snapshot() == before


@pytest.mark.parametrize("action", ["end", None, 1.5, [0], -1, 10 ** 6])
def test_illegal_action_values(action):
    g = Game(2, seed=3)
    before = g.snapshot()
    with pytest.raises(IllegalActionError):
        g.apply(action)
    assert g.snapshot() == before


def test_boolean_is_not_an_action():
    # True == 1 in Python; it must not pass for action 1 ("play" the first Hijinks kind)
    g = Game(2, seed=3)
    assert 1 in g.legal_actions()
    with pytest.raises(IllegalActionError, match="not an integer"):
        g.apply(True)
    np = pytest.importorskip("numpy")
    with pytest.raises(IllegalActionError, match="not an integer"):
        g.apply(np.True_)
    g.apply(np.int64(1))


def test_numpy_integer_action_is_accepted():
    np = pytest.importorskip("numpy")
    g = Game(2, seed=3)
    a = g.legal_actions()[0]
    g.apply(np.int64(a))


def test_no_action_after_the_end():
    g = Game(2, seed=3)
    import random
    rng = random.Random(1)
    while not g.is_over:
        g.apply(rng.choice(g.legal_actions()))
    with pytest.raises(IllegalActionError, match="game is over"):
        g.apply(0)


# -- corrupt snapshots ----------------------------------------------------------------------------


def snap():
    return json.loads(json.dumps(Game(3, seed=5).snapshot()))


def test_snapshot_not_a_dict_or_wrong_version():
    with pytest.raises(SnapshotError, match="version"):
        Game.from_snapshot([1, 2, 3])
    d = snap()
    d["version"] = 2
    with pytest.raises(SnapshotError, match="version"):
        Game.from_snapshot(d)


def test_snapshot_missing_key():
    d = snap()
    del d["havok_deck"]
    with pytest.raises(SnapshotError, match="havok_deck"):
        Game.from_snapshot(d)


def test_snapshot_unknown_card():
    d = snap()
    d["players"][0]["hand"][0] = "Dragon Egg"
    with pytest.raises(SnapshotError, match="Dragon Egg"):
        Game.from_snapshot(d)


def test_snapshot_card_in_two_places():
    d = snap()
    d["trash"].append(d["players"][0]["hoard"][0])  # a Bronze Talon too many
    with pytest.raises(SnapshotError, match="Bronze Talon: 5 instead of 4"):
        Game.from_snapshot(d)


def test_snapshot_card_missing():
    d = snap()
    lost = d["havok_deck"].pop()
    with pytest.raises(SnapshotError, match="cards out of place") as e:
        Game.from_snapshot(d)
    assert lost in str(e.value)


def test_snapshot_bad_player_count_and_dragon():
    d = snap()
    d["num_players"] = 5
    with pytest.raises(SnapshotError, match="player count"):
        Game.from_snapshot(d)
    d = snap()
    d["players"][1]["dragon"] = "Sapphire"
    with pytest.raises(SnapshotError, match="Sapphire"):
        Game.from_snapshot(d)


def test_snapshot_bad_types():
    d = snap()
    d["players"] = "nobody"
    with pytest.raises(SnapshotError):
        Game.from_snapshot(d)
    d = snap()
    d["rng"] = "abc"
    with pytest.raises(SnapshotError):
        Game.from_snapshot(d)


# -- corrupt card files -------------------------------------------------------------------------


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    shutil.copytree(DATA_DIR, d)
    return d


def edit(path, old, new, count=1):
    text = path.read_text()
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, count))


def edit_card(path, name, pattern, new):
    """Replace the first match of the regex ``pattern`` within the record of card ``name`` (the
    card data may be tuned, so edits find their place instead of matching whole lines)."""
    text = path.read_text()
    start = text.index(f'name = "{name}"')
    end = text.find("[[", start)
    end = len(text) if end < 0 else end
    section, n = re.subn(pattern, new, text[start:end], count=1, flags=re.M)
    assert n == 1, (name, pattern)
    path.write_text(text[:start] + section + text[end:])


def load_error(data) -> str:
    with pytest.raises(CardDataError) as e:
        load_cards(data)
    return str(e.value)


def test_copied_data_loads(data):
    cs = load_cards(data)
    assert sum(cs.copies) == 80


def test_unknown_effect_primitive(data):
    edit_card(data / "hijinks.toml", "Sticky Claws", r'^effect = \[\{ op = "steal"',
              'effect = [{ op = "teleport"')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Sticky Claws" in msg and "unknown effect primitive 'teleport'" in msg


def test_bad_parameter_name(data):
    edit_card(data / "hijinks.toml", "Butterfingers", r'^effect = \[\{ op = "break", max_value',
              'effect = [{ op = "break", max_valu')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Butterfingers" in msg and "max_valu" in msg


def test_bad_parameter_value(data):
    edit_card(data / "hijinks.toml", "Sunny Side Up", r'^effect = \[\{ op = "draw", n = \d+',
              'effect = [{ op = "draw", n = "two"')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Sunny Side Up" in msg and "draw.n" in msg and "two" in msg


def test_negative_parameter(data):
    edit_card(data / "havok.toml", "Adventurer Ambush", r"max_value = \d+", "max_value = -3")
    msg = load_error(data)
    assert "havok.toml" in msg and "Adventurer Ambush" in msg and "max_value" in msg


def test_bad_choice_parameter(data):
    edit_card(data / "hijinks.toml", "Hot Potato", r'^bonus_effect = \[\{ op = "redirect_event", to = "\w+"',
              'bonus_effect = [{ op = "redirect_event", to = "right"')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Hot Potato" in msg and "redirect_event.to" in msg


def test_missing_field(data):
    edit_card(data / "havok.toml", "Gold Chalice", r"^value = \d+\n", "")
    msg = load_error(data)
    assert "havok.toml" in msg and "Gold Chalice" in msg and "missing field 'value'" in msg


def test_missing_effect(data):
    edit_card(data / "hijinks.toml", "Wishing Well", r"^effect = .*\n", "")
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Wishing Well" in msg and "missing field 'effect'" in msg


def test_missing_dragon_ability(data):
    text = (data / "dragons.toml").read_text()
    start = text.index("[dragon.crash]\nname = \"Moonward\"")
    (data / "dragons.toml").write_text(text[:start])
    msg = load_error(data)
    assert "dragons.toml" in msg and "Pearl" in msg and "missing field 'crash'" in msg


def test_duplicate_name(data):
    edit(data / "havok.toml", 'name = "Copper Kettle"', 'name = "Chipped Goblet"')
    msg = load_error(data)
    assert "havok.toml" in msg and "Chipped Goblet" in msg and "duplicate card name" in msg


def test_duplicate_name_across_files(data):
    edit(data / "hijinks.toml", 'name = "Heist"', 'name = "Tribute"')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Tribute" in msg and "duplicate" in msg


def test_bad_toml(data):
    edit(data / "hijinks.toml", 'name = "Heist"', 'name = "Heist')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "not valid TOML" in msg


def test_missing_file(data):
    (data / "dragons.toml").unlink()
    msg = load_error(data)
    assert "dragons.toml" in msg and "not found" in msg


def test_unknown_field(data):
    edit(data / "hijinks.toml", 'name = "Heist"', 'name = "Heist"\ncolour = "red"')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Heist" in msg and "colour" in msg


def test_bad_affinity(data):
    edit_card(data / "havok.toml", "Ember Opal", r'^affinity = "\w+"', 'affinity = "lava"')
    msg = load_error(data)
    assert "havok.toml" in msg and "Ember Opal" in msg and "lava" in msg


def test_crash_primitive_in_a_play(data):
    edit_card(data / "hijinks.toml", "Wishing Well", r"^effect = .*$", 'effect = [{ op = "cancel" }]')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Wishing Well" in msg and "only be used by a crash" in msg


def test_bad_trigger(data):
    edit(data / "hijinks.toml", 'trigger = { on = "event" }', 'trigger = { on = "sunset" }')
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Hot Potato" in msg and "sunset" in msg


def test_bonus_without_bonus_kind(data):
    edit_card(data / "hijinks.toml", "Sticky Claws", r'^bonus = "\w+"\n', "")
    msg = load_error(data)
    assert "hijinks.toml" in msg and "Sticky Claws" in msg and "bonus" in msg


def test_bad_starting_treasure(data):
    edit(data / "havok.toml", 'starting_treasure = "Bronze Talon"', 'starting_treasure = "Egg"')
    msg = load_error(data)
    assert "havok.toml" in msg and "Egg" in msg


def test_two_dragons_share_an_affinity(data):
    edit(data / "dragons.toml", 'name = "Pearl"\naffinity = "moonlight"', 'name = "Pearl"\naffinity = "fire"')
    msg = load_error(data)
    assert "dragons.toml" in msg and "Pearl" in msg and "affinity" in msg


def test_game_with_a_modified_card_set(data):
    # a value changed in the data changes the game, without touching the engine
    edit_card(data / "havok.toml", "King's Crown", r"^value = \d+", "value = 9")
    cs = load_cards(data)
    assert cs.value[cs.kind("King's Crown")] == 9
    g = Game(2, seed=1, cards=cs)
    assert g.values[0][cs.kind("King's Crown")] == 9


def test_the_core_interprets_exactly_the_primitives_and_types_of_the_card_files():
    from havok_env import _core
    from havok_env.cards import HIJINKS_TYPES, OP_PARAMS

    assert list(OP_PARAMS) == list(_core.PRIMITIVES)
    assert list(HIJINKS_TYPES) == list(_core.HIJINKS_TYPES)
