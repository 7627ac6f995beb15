"""Bad configurations, illegal actions, corrupt snapshots and corrupt card files fail loudly, with
a message that names the problem."""

import inspect
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


# Game.apply is a C method (the core takes a legal plain int itself, py_game.cpp); everything else
# goes to Game._apply_checked. These are the messages the Python method gave, word for word.
_MAIN = "is not legal for player_1's main decision; legal: 0 (end the turn), 1 (play Sticky Claws), " \
        "21 (use Pilfer (Ruby's innate play)), 23 (discard Sticky Claws and draw), 24 (discard Heist " \
        "and draw), 26 (discard Hot Potato and draw)"


def _np(name, *args):
    np = pytest.importorskip("numpy")
    return getattr(np, name)(*args)


@pytest.mark.parametrize("action, message", [
    (999, f"action 999 (no such action 999) {_MAIN}"),
    (-1, f"action -1 (no such action -1) {_MAIN}"),
    (2 ** 70, f"action {2 ** 70} (no such action {2 ** 70}) {_MAIN}"),
    (-2 ** 70, f"action {-2 ** 70} (no such action {-2 ** 70}) {_MAIN}"),
    (3.0, f"action 3 (play Second Helping) {_MAIN}"),
    (True, "action True is not an integer"),
    (1.5, "action 1.5 is not an integer"),
    ("end", "action 'end' is not an integer"),
    (None, "action None is not an integer"),
    ([0], "action [0] is not an integer"),
    (lambda: _np("int64", 999), f"action 999 (no such action 999) {_MAIN}"),
    (lambda: _np("int32", 2), f"action 2 (play Heist) {_MAIN}"),
    (lambda: _np("bool_", True), "action {r} is not an integer"),
    (lambda: _np("float64", 2.5), "action {r} is not an integer"),
])
def test_illegal_action_messages(action, message):
    action = action() if callable(action) else action
    for call in (lambda g: g.apply(action), lambda g: g.apply(action=action),
                 lambda g: Game.apply(g, action)):
        g = Game(2, seed=3)
        before = g.snapshot()
        with pytest.raises(IllegalActionError) as e:
            call(g)
        assert str(e.value) == message.replace("{r}", repr(action))
        assert g.snapshot() == before


def test_integral_actions_of_other_types_are_taken_like_ints():
    import enum

    class Choice(enum.IntEnum):
        PLAY = 1

    np = pytest.importorskip("numpy")
    for action in (1, 1.0, np.int64(1), np.int8(1), np.uint16(1), Choice.PLAY):
        g, ref = Game(2, seed=3), Game(2, seed=3)
        ref.apply(1)
        g.apply(action)
        assert g.snapshot() == ref.snapshot()
        assert g.pending == ref.pending  # the live view sees the move (its cache is refreshed)


def test_apply_is_called_like_the_method_it_was():
    # a C method of the class (no Python frame per decision), with the Python method's signature
    assert type(Game.__dict__["apply"]).__name__ == "method_descriptor"
    assert str(inspect.signature(Game.apply)) == "(self, /, action)"
    g, ref = Game(2, seed=3), Game(2, seed=3)
    g.apply(action=1)
    ref.apply(1)
    assert g.snapshot() == ref.snapshot()
    with pytest.raises(TypeError):
        g.apply()
    with pytest.raises(TypeError):
        g.apply(1, 2)
    with pytest.raises(TypeError):
        g.apply(move=1)
    with pytest.raises(TypeError):
        Game.apply(object(), 1)


def test_legal_actions_is_one_c_call_giving_a_new_list():
    # a plain C method of the core (no nanobind dispatch per decision); each call a new list
    g = Game(2, seed=3)
    assert type(g.legal_actions).__name__ == "builtin_function_or_method"
    first = g.legal_actions()
    assert first == g.pending["choices"] and first is not g.legal_actions()
    first.append(-1)  # the caller's to keep or change
    assert g.legal_actions() == first[:-1]
    with pytest.raises(TypeError):
        g.legal_actions(1)
    while not g.is_over:
        g.apply(g.legal_actions()[-1])
    assert g.legal_actions() == []


def test_no_action_after_the_end_whatever_its_type():
    np = pytest.importorskip("numpy")
    import random
    g = Game(2, seed=3)
    rng = random.Random(1)
    while not g.is_over:
        g.apply(rng.choice(g.legal_actions()))
    for action in (0, 2 ** 70, True, np.int64(0)):
        with pytest.raises(IllegalActionError) as e:
            g.apply(action)
        assert str(e.value) == f"action {action!r}: the game is over, no decision is pending"


def test_a_position_that_cannot_go_on_is_a_snapshot_error_on_either_path():
    # an edited position (every hoard emptied while a treasure to pass is being picked) fails
    # inside the core's move: the same SnapshotError for a plain int and a numpy int
    np = pytest.importorskip("numpy")
    import random
    g, rng = Game(2, seed=0), random.Random(0)
    while g.pending["purpose"] != "pass_pick":
        g.apply(rng.choice(g.legal_actions()))
    for action in (g.legal_actions()[-1], np.int64(g.legal_actions()[-1])):
        c = g.clone()
        c._core.set("hoards", [[], []])
        with pytest.raises(SnapshotError) as e:
            c.apply(action)
        assert str(e.value) == "the game cannot go on from this position: a card is missing from the hoard"


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
    with pytest.raises(SnapshotError, match=r"^snapshot num_players: must be 2, 3 or 4, not 5$"):
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


def position(pred, players=3):
    """The first snapshot of seeded random games for which ``pred(snapshot)`` holds."""
    import random

    for seed in range(200):
        g = Game(players, seed=seed)
        rng = random.Random(seed)
        while not g.is_over:
            d = json.loads(json.dumps(g.snapshot()))
            if pred(d):
                return d
            g.apply(rng.choice(g.legal_actions()))
    raise AssertionError("no such position")


def refused(d, message: str):
    """from_snapshot refuses ``d`` with exactly this message."""
    with pytest.raises(SnapshotError) as e:
        Game.from_snapshot(d)
    assert str(e.value) == message
    return e.value


def test_snapshot_errors_name_the_field_and_the_problem():
    d = snap()
    d["players"][1]["hand"][2] = "Gold Chalice"
    refused(d, "snapshot players[1].hand[2]: 'Gold Chalice' is not a Hijinks card")
    d = snap()
    d["players"][0]["hand"][0] = ["Heist"]  # a list where a name belongs
    refused(d, "snapshot players[0].hand[0]: must be a card name, not ['Heist']")
    d = snap()
    d["discard"] = {"Heist": 1}
    refused(d, "snapshot discard: must be a list of card names, not {'Heist': 1}")


def test_snapshot_duplicate_dragons_and_seats_out_of_range():
    d = snap()
    d["players"][2]["dragon"] = d["players"][0]["dragon"].lower()
    name = d["players"][0]["dragon"]
    refused(d, f"snapshot players[2].dragon: {name} is already player 0's dragon")
    d = snap()
    d["current_player"] = 3
    refused(d, "snapshot current_player: 3 is out of range (0 to 2)")
    d = snap()
    d["pending"]["player"] = -1
    refused(d, "snapshot pending.player: -1 is out of range (0 to 2)")
    d = snap()
    d["in_play"]["canceled"] = [[7, d["players"][0]["hand"].pop()]]
    refused(d, "snapshot in_play.canceled[0][0]: 7 is out of range (0 to 2)")


@pytest.mark.parametrize("field, value, message", [
    ("cards_used", 2, "snapshot players[0].cards_used: 2 is out of range (0 to 1)"),
    ("cards_used", -1, "snapshot players[0].cards_used: -1 is out of range (0 to 1)"),
    ("card_limit", 0, "snapshot players[0].card_limit: 0 is out of range (1 to 81)"),
    ("ready", 1, "snapshot players[0].ready: must be true or false, not 1"),
    ("innate_used", "no", "snapshot players[0].innate_used: must be true or false, not 'no'"),
    ("score", 9, "snapshot players[0].score: 9, but the hoard is worth 1"),
    ("known_top", ["Heist"], "snapshot players[0].known_top[0]: 'Heist' is not a Havok card "
                             "(treasure or event)"),
    ("colour", "red", "snapshot players[0]: unknown field 'colour'"),
])
def test_snapshot_player_counters_out_of_range(field, value, message):
    d = snap()
    d["players"][0][field] = value
    refused(d, message)


def test_snapshot_game_counters_out_of_range():
    for field, value, message in [
            ("turn", -1, "snapshot turn: -1 is out of range (0 to 40)"),
            ("turn", 41, "snapshot turn: 41 is out of range (0 to 40)"),
            ("turn", True, "snapshot turn: must be an integer, not True"),
            ("rng", -5, "snapshot rng: -5 is out of range (0 to 18446744073709551615)"),
            ("rng", "12", "snapshot rng: must be an integer, not '12'"),
            ("version", True, "not a Havok & Hijinks snapshot (an object with 'version': 1)"),
            ("extra", 1, "snapshot: unknown field 'extra'")]:
        d = snap()
        d[field] = value
        refused(d, message)
    d = snap()
    d["turn"] = 0
    refused(d, "snapshot turn: 0, but the turn has begun (turns count from 1)")
    # within 0 to 40, but more turns than the Havok cards turned over allow: playing on would
    # count turns no game has
    d = snap()
    left = len(d["havok_deck"])
    d["turn"] = 40 - left + 1
    refused(d, f"snapshot turn: {40 - left + 1}, but {left} of the 40 Havok cards are still in the deck "
               f"(one turn per Havok card: {40 - left} turns at most by now)")
    d["turn"] = 40 - left
    assert Game.from_snapshot(d).s.turn == 40 - left


def finished():
    import random

    g = Game(2, seed=2)
    rng = random.Random(2)
    while not g.is_over:
        g.apply(rng.choice(g.legal_actions()))
    return json.loads(json.dumps(g.snapshot()))


def test_snapshot_result_that_contradicts_the_position():
    d = finished()
    winner = d["result"]["winners"][0]
    d["result"]["winners"] = [1 - winner]
    refused(d, f"snapshot result.winners: [{1 - winner}], but the highest hoards are "
               f"[{winner}]'s")
    d = finished()
    d["result"]["scores"][0] += 1
    with pytest.raises(SnapshotError, match=r"^snapshot result.scores: \[\d+, \d+\], but the "
                                            r"hoards are worth \[\d+, \d+\]$"):
        Game.from_snapshot(d)
    d = finished()
    assert d["result"]["reason"] == "hoard_15"
    d["result"]["reason"] = "havok_empty"
    left = len(d["havok_deck"])
    refused(d, f"snapshot result.reason: 'havok_empty', but {left} Havok cards are left")
    d = snap()
    scores = [pl["score"] for pl in d["players"]]
    best = [p for p in range(3) if scores[p] == max(scores)]
    d["result"] = {"winners": [], "reason": "hoard_15", "scores": scores}
    refused(d, f"snapshot result.winners: [], but the highest hoards are {best}'s")
    d["result"]["winners"] = best
    refused(d, f"snapshot result.reason: 'hoard_15', but the best hoard is worth {max(scores)}")
    d = finished()
    d["pending"] = snap()["pending"]
    refused(d, "snapshot pending: must be null: the game is over")


def test_snapshot_malformed_frames():
    d = snap()
    d["stack"] = []
    refused(d, "snapshot stack: is empty; it holds at least the turn frame")
    d = snap()
    d["stack"][0]["a"] = 3  # an answer never stays in a frame
    refused(d, "snapshot stack[0]: unknown field 'a'")
    d = snap()
    d["stack"].append({"f": "turn", "step": "main"})
    refused(d, "snapshot stack[1]: the turn frame is the bottom of the stack, and the only one")
    d = snap()
    d["stack"][0] = {"f": "dance"}
    refused(d, "snapshot stack[0].f: 'dance' is not one of 'turn', 'havok', 'use', 'window'")
    d = snap()
    d["stack"] = 5
    refused(d, "snapshot stack: must be a list, not 5")


def test_snapshot_frames_that_contradict_the_position():
    # a crash window: its trigger, the seats it asks and the declarations follow from the position
    d = position(lambda d: d["stack"][-1]["f"] == "window" and d["stack"][-1]["order"])
    top = f"stack[{len(d['stack']) - 1}]"
    e = json.loads(json.dumps(d))
    e["stack"][-1]["trig"]["frame"] += 1
    with pytest.raises(SnapshotError, match=rf"^snapshot {re.escape(top)}.trig: .* is not the "
                                            r"trigger of the frame below it"):
        Game.from_snapshot(e)
    e = json.loads(json.dumps(d))
    e["stack"][-1]["order"].append([e["stack"][-1]["order"][0][0], [1]])
    with pytest.raises(SnapshotError, match=rf"^snapshot {re.escape(top)}.order: .*, but the "
                                            r"seats that may crash"):
        Game.from_snapshot(e)
    e = json.loads(json.dumps(d))
    e["stack"][-1]["decl"] = [[e["stack"][-1]["order"][0][0], 0]]
    with pytest.raises(SnapshotError, match=rf"^snapshot {re.escape(top)}.decl\[0\]: .* is not "
                                            r"a crash declared by a seat already asked"):
        Game.from_snapshot(e)
    e = json.loads(json.dumps(d))
    e["stack"].append(json.loads(json.dumps(e["stack"][-1])))  # a window lies on nothing
    refused(e, f"snapshot stack[{len(d['stack'])}]: a window frame cannot lie on a window frame "
               f"at step None")
    # a card being played: its user, its card in play, its program counter, its targets
    d = position(lambda d: len(d["stack"]) == 2 and d["stack"][1]["f"] == "use"
                 and d["stack"][1]["step"] == "target" and "victim" in d["stack"][1]["t"]
                 and d["stack"][1]["card"] is not None)
    e = json.loads(json.dumps(d))
    e["stack"][1]["user"] = (e["stack"][1]["user"] + 1) % 3
    refused(e, f"snapshot stack[1].you: {d['stack'][1]['you']}, but a card or ability resolves "
               f"for its user ({e['stack'][1]['user']})")
    e = json.loads(json.dumps(d))
    e["stack"][1]["pc"] = 1
    refused(e, "snapshot stack[1].pc: 1 is out of range (0 to 0)")
    e = json.loads(json.dumps(d))
    e["stack"][1]["t"]["actor"] = (e["stack"][1]["t"]["actor"] + 1) % 3
    refused(e, f"snapshot stack[1].t.actor: {e['stack'][1]['t']['actor']}, but player "
               f"{d['stack'][1]['t']['actor']} acts")
    e = json.loads(json.dumps(d))
    e["in_play"]["resolving"] = []
    e["discard"] += d["in_play"]["resolving"]
    with pytest.raises(SnapshotError, match=r"^snapshot in_play.resolving: holds \[\], but the "
                                            r"stack resolves \['"):
        Game.from_snapshot(e)


def test_snapshot_question_without_an_answer():
    # a trade whose chosen victim has no treasure left that it could take: the engine would
    # ask a question with no legal choice
    d = position(lambda d: d["stack"][-1]["f"] == "use" and d["pending"]["purpose"] == "trade_take")
    t = d["stack"][-1]["t"]
    victim, me = t["victim"], t["actor"]
    d["players"][me]["hoard"] += d["players"][victim]["hoard"][1:]
    d["players"][victim]["hoard"] = d["players"][victim]["hoard"][:1]
    d["trash"] += d["players"][victim]["hoard"]
    d["players"][victim]["hoard"] = []
    for pl in d["players"]:
        pl.pop("score")
    d["pending"] = None
    refused(d, f"snapshot stack: the position asks player {me} to decide (trade_take) with no "
               f"legal choice")


def test_snapshot_deeply_nested_or_huge_values_are_refused_quickly():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    for where in ("hand", "stack", "pending", "log"):
        d = snap()
        if where == "hand":
            d["players"][0]["hand"] = deep
        else:
            d[where] = deep if where != "pending" else {**d["pending"], "context": deep}
        with pytest.raises(SnapshotError) as e:
            Game.from_snapshot(d)
        assert len(str(e.value)) < 300 and "corrupt" not in str(e.value)


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


def test_card_file_not_utf8(data):
    path = data / "hijinks.toml"
    path.write_bytes(path.read_bytes().replace(b"Heist", b"H\xe9ist"))
    msg = load_error(data)
    assert msg.startswith(str(path)) and re.search(r"not UTF-8 text \(byte \d+\)$", msg)


def test_card_file_nested_too_deeply(data):
    edit_card(data / "hijinks.toml", "Heist", r"^effect = \[", "effect = " + "[" * 5000)
    msg = load_error(data)
    assert "hijinks.toml" in msg and msg.endswith("nested too deeply")


@pytest.mark.parametrize("file, name, pattern, new, message", [
    ("hijinks.toml", "Heist", r'^name = "Heist"', 'name = ["Heist"]',
     "card ['Heist']: field 'name' must be text, not ['Heist']"),
    ("hijinks.toml", "Heist", r'^name = "Heist"', 'name = " "', "card ' ': field 'name' is empty"),
    ("hijinks.toml", "Sticky Claws", r'op = "steal"', 'op = ["steal"]',
     "card 'Sticky Claws': unknown effect primitive ['steal'] in 'effect'"),
    ("hijinks.toml", "Sunny Side Up", r'op = "draw", n = \d+', 'op = "draw"',
     "card 'Sunny Side Up': effect primitive 'draw' needs parameter 'n'"),
    ("hijinks.toml", "Finders Keepers", r'on = "treasure"', 'on = "treasure", max_printed = "two"',
     "card 'Finders Keepers': trigger max_printed must be a non-negative integer, not 'two'"),
    ("hijinks.toml", "Smoke Bomb", r'uses = \["play"\]', 'uses = "play"',
     "card 'Smoke Bomb': trigger uses must be a list of play, crash; got 'play'"),
    ("hijinks.toml", "Smoke Bomb", r'on = "use"', 'on = ["use"]',
     "card 'Smoke Bomb': trigger 'on' is ['use']; expected one of event, treasure, use"),
    ("hijinks.toml", "Sticky Claws", r"^copies = 3", "copies = -1",
     "card 'Sticky Claws': field 'copies' must be from 1 to 40, not -1"),
    ("hijinks.toml", "Sticky Claws", r"^copies = 3", "copies = 0",
     "card 'Sticky Claws': field 'copies' must be from 1 to 40, not 0"),
    ("havok.toml", "Tribute", r'^name = "Tribute"', 'name = "Tribute"\ncopies = 1000000000',
     "event 'Tribute': field 'copies' must be from 1 to 40, not 1000000000"),
    ("havok.toml", "Gold Chalice", r"^value = \d+", "value = 99",
     "treasure 'Gold Chalice': field 'value' must be from 0 to 15, not 99"),
    # a crash that acts on what its trigger does not open a window on would fail mid-game
    ("hijinks.toml", "Shadow Veil", r'on = "event"', 'on = "use"',
     "card 'Shadow Veil': effect primitive 'nullify' needs a trigger on 'event', not on 'use'"),
    ("hijinks.toml", "Shadow Veil", r'^effect = \[\{ op = "nullify" \}',
     'effect = [{ op = "tire", who = "actor" }',
     "card 'Shadow Veil': effect primitive 'tire' (who = actor) needs a trigger on 'use', not on "
     "'event'"),
])
def test_card_file_fields(data, file, name, pattern, new, message):
    edit_card(data / file, name, pattern, new)
    msg = load_error(data)
    assert msg.startswith(f"{file}: {message}"), msg


def test_card_file_crash_primitives_need_their_trigger(data):
    # Counteroffer swaps a targeted treasure: on an event there is none to swap
    edit(data / "dragons.toml", 'trigger = { on = "use", types = ["steal", "break"], targets = "own", '
                                'needs_spare = true }', 'trigger = { on = "event" }')
    msg = load_error(data)
    assert msg == ("dragons.toml: dragon 'Amber' innate crash: effect primitive 'swap_target' "
                   "needs a trigger on 'use', not on 'event'")


def test_card_file_tire_the_actor_only_in_a_crash(data):
    edit_card(data / "hijinks.toml", "Sunny Side Up", r'^effect = \[\{ op = "draw", n = \d+ \}',
              'effect = [{ op = "tire", who = "actor" }')
    assert load_error(data) == ("hijinks.toml: card 'Sunny Side Up': tire with who = \"actor\" "
                                "can only be used by a crash")


def test_card_file_two_targeted_primitives_with_an_also_bonus(data):
    edit_card(data / "hijinks.toml", "Sticky Claws", r'^bonus_effect = \[\{ op = "draw", n = 1 \}\]',
              'bonus_effect = [{ op = "break" }]')
    assert load_error(data) == ("hijinks.toml: card 'Sticky Claws': 'effect' and an \"also\" "
                                "'bonus_effect' have more than one targeted primitive between them")


def test_card_file_unknown_top_level_field(data):
    edit(data / "hijinks.toml", "[[card]]", "deck_colour = \"red\"\n\n[[card]]")
    assert load_error(data) == "hijinks.toml: unknown top-level field(s) deck_colour"


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

