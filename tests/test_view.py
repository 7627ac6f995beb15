"""The seat view is the only door from a bot to the game: its action helpers and targeting rules
agree with the engine, the heuristic judges cards with those rules (and refuses what it cannot
judge), nothing outside havok_env reaches past a view, and what a seat is shown reads only its
view."""

import ast
import dataclasses
import json
import random
import sys
from pathlib import Path

import pytest

from agents.heuristic import JUDGED, HeuristicAgent, UnjudgedRuleError, check_judged
from havok_env import _core, default_cards
from havok_env.engine import Game
from havok_env.view import PeekingView, SeatView, rollout

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import determinize_golden  # noqa: E402


def random_positions(n, games, seed0=0):
    """Every decision of a few random games (as clones)."""
    for g in range(games):
        game, rng = Game(n, seed=seed0 + g), random.Random(g)
        while not game.is_over:
            yield game.clone()
            legal = game.legal_actions()
            game.apply(legal[rng.randrange(len(legal))])


# -- what an action means ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 4])
def test_action_helpers_decode_what_the_engine_encodes(n):
    game = Game(n, seed=n)
    cs, lay = game.cards, game.layout
    hijinks = range(cs.first_hijinks, cs.n_kinds)
    for seat in range(n):
        v = SeatView(game, seat)
        for k in hijinks:
            assert v.card_of(v.card_action(k)) == k and v.is_card(v.card_action(k))
            assert v.discard_of(v.discard_action(k)) == k and v.is_discard(v.discard_action(k))
            assert cs.names[k] in game.action_label(v.card_action(k))
        assert sorted(v.card_action(k) for k in hijinks) == list(range(lay.PLAY, lay.INNATE_PLAY))
        assert sorted(v.discard_action(k) for k in hijinks) == list(range(lay.DISCARD, lay.SEAT))
        assert not any(v.is_card(a) or v.is_discard(a) for a in
                       (lay.END, lay.INNATE_PLAY, lay.INNATE_CRASH, lay.SEAT, lay.TREASURE))
        for q in range(n):
            assert v.seat_of(v.seat_action(q)) == q
            assert v.seat_action(q) == game.seat_action(seat, q)
        assert v.seat_action(seat) == lay.SEAT  # relative: 0 is the seat itself
        for k in range(cs.n_treasures):
            assert v.treasure_of(v.treasure_action(k)) == k
        assert [v.option_of(v.option_action(i)) for i in range(3)] == [0, 1, 2]
        assert v.option_action(0) == lay.OPTION


def test_the_targets_the_engine_offers_are_the_views_rules():
    """Whatever the engine asks, the view's rules (which the heuristic judges with) name the same
    seats and treasures."""
    seen = set()
    for n in (2, 3, 4):
        for game in random_positions(n, 12, seed0=40 * n):
            p = game.pending
            purpose, ctx, seat = p["purpose"], p["context"], p["player"]
            v = SeatView(game, seat)
            op = next((o for o in game.ops_for(ctx["ability"], ctx["actor"])
                       if purpose.startswith(o["op"])), None) if "ability" in ctx else None
            if purpose in ("steal_from", "break_from", "trade_from"):
                cands = [q for q in v.victims(seat if op["op"] != "steal" else ctx["actor"],
                                              ctx["actor"], op.get("victim", "opponent"))
                         if (v.trade_takes(seat, q, op) if op["op"] == "trade"
                             else v.eligible(q, op.get("max_value", 1 << 30)))]
                assert sorted(p["choices"]) == sorted(v.seat_action(q) for q in cands)
            elif purpose == "trade_take":
                assert p["choices"] == [v.treasure_action(k)
                                        for k in v.trade_takes(seat, ctx["target"], op)]
            elif purpose == "trade_give":
                assert p["choices"] == [v.treasure_action(k) for k in v.trade_gives_for(
                    seat, ctx["target"], ctx["picks"][0], op)]
            elif purpose == "salvage_pick":
                assert p["choices"] == [v.treasure_action(k) for k in v.salvage_options(op)]
            else:
                continue
            seen.add(purpose)
    assert {"steal_from", "trade_take", "trade_give", "salvage_pick"} <= seen


# -- the heuristic judges with the rules, or refuses ----------------------------------------------


def decision(cards=None, n=3):
    """A game at its first decision, and the core's heuristic judging for the seat to act."""
    game = Game(n, seed=3, cards=cards)
    me = game.to_act
    bot = _core.Heuristic()

    def judge(what, ref, who=0, trig=None):
        return bot.judge(game._core, me, what, ref, who, trig)
    return game, me, judge


def with_ability(cards, kind, **changes):
    """The card set with the ability of ``kind`` (an event or Hijinks kind) changed."""
    if cards.is_event(kind):
        events = list(cards.events)
        events[kind - cards.first_event] = dataclasses.replace(events[kind - cards.first_event], **changes)
        return dataclasses.replace(cards, events=events)
    hijinks = list(cards.hijinks)
    hijinks[kind - cards.first_hijinks] = dataclasses.replace(hijinks[kind - cards.first_hijinks], **changes)
    return dataclasses.replace(cards, hijinks=hijinks)


REQUIRED = {"draw": {"n": 1}, "foresight": {"n": 2}}  # parameters a primitive cannot do without


def judged_op(role, name):
    op = {"op": name, **REQUIRED.get(name, {})}
    need = JUDGED[role][name]
    if need is not None:
        op[need[0]] = need[2][0]
    return op


def test_every_primitive_the_heuristic_claims_to_judge_has_a_judgement():
    """Each entry of JUDGED reaches its own branch (an entry without one raises)."""
    cards = default_cards()
    play = next(k for k in range(cards.first_hijinks, cards.n_kinds) if cards.card(k).kind == "play")
    crash = next(k for k in range(cards.first_hijinks, cards.n_kinds) if cards.card(k).kind == "crash")
    event = cards.first_event
    steal = cards.kind("Sticky Claws")
    for role, kind in (("play", play), ("event", event), ("crash", crash)):
        for name in JUDGED[role]:
            op = judged_op(role, name)
            cs = with_ability(cards, kind, effect=(op,), bonus=None, bonus_effect=())
            game, me, judge = decision(cs)
            other = (me + 1) % game.num_players
            use = {"on": "use", "frame": 0, "use": "play", "type": "steal", "give": None,
                   "owners": [me], "picks": list(game.s.hoards[me][:1])}
            if role == "play":
                assert isinstance(judge("estimate", kind), float)
                assert isinstance(judge("use", None, trig={**use, "user": other, "ability": kind}), float)
            elif role == "event":
                assert isinstance(judge("event", kind, other), float)
            else:  # what the crash is triggered by
                trig = {**use, "user": other, "ability": steal}
                if name in ("nullify", "redirect_event"):
                    trig = {"on": "event", "frame": 0, "card": event, "flipper": other}
                elif name == "redirect_treasure":
                    trig = {"on": "treasure", "frame": 0, "card": 0, "to": other}
                assert isinstance(judge("crash", game.card_action(kind), trig=trig), float)


@pytest.mark.parametrize("role, name, change", [
    ("play", "tribute", {}),  # a primitive the heuristic judges only on events
    ("play", "steal", {"thief": "right"}),  # someone else would pick the targets
    ("event", "trade", {}),
    ("event", "break", {"victim": "opponent"}),  # the heuristic assumes you break your own
    ("crash", "restrict", {}),
    ("crash", "tire", {"who": "you"}),
])
def test_the_heuristic_refuses_a_card_it_cannot_judge(role, name, change):
    cards = default_cards()
    kinds = {"play": cards.kind("Sticky Claws"), "event": cards.first_event,
             "crash": next(k for k in range(cards.first_hijinks, cards.n_kinds)
                           if cards.card(k).kind == "crash")}
    op = {"op": name, **REQUIRED.get(name, {}), **change}
    cs = with_ability(cards, kinds[role], effect=(op,), bonus=None, bonus_effect=())
    with pytest.raises(UnjudgedRuleError, match=repr(name)):
        check_judged(cs)
    game = Game(2, seed=0, cards=cs)
    bot = HeuristicAgent()
    bot.reset(game.to_act, 2)
    with pytest.raises(UnjudgedRuleError):  # at its first decision, not when the card turns up
        bot.choose(SeatView(game, game.to_act))
    check_judged(cards)  # the real cards are all judged


def test_the_heuristic_refuses_a_primitive_it_has_no_judgement_of():
    # check_judged keeps such card sets away from the bot; the core's own judgement refuses too
    # rather than count the primitive as worth nothing
    cards = default_cards()
    tire = {"op": "tire"}  # judged on events and crashes, not on plays
    cs = with_ability(cards, cards.kind("Sticky Claws"), effect=(tire,), bonus=None, bonus_effect=())
    game, me, judge = decision(cs)
    with pytest.raises(ValueError, match="the heuristic bot has no judgement of 'tire' in a play"):
        judge("estimate", cs.kind("Sticky Claws"))


def test_a_peeking_view_names_what_it_peeks_at():
    game = Game(2, seed=1)
    with pytest.raises(ValueError, match="peek must be one of hands, crash, all"):
        PeekingView(game, 0, "everything")
    v = PeekingView.behind(SeatView(game, 1), "all")
    assert v.seat == 1 and v.determinize(random.Random(0)).snapshot() == game.snapshot()


# -- determinization ----------------------------------------------------------------------------


@pytest.mark.parametrize("game", json.loads((ROOT / "tests" / "data" / "determinize.json").read_text())["games"],
                         ids=lambda g: f"{len(g['specs'])}p-seed{g['seed']}")
def test_determinize_deals_the_worlds_and_draws_the_numbers_it_always_did(game):
    """The core's determinization against worlds and generator states recorded from the former
    Python implementation (tests/determinize_golden.py), crash windows and Tidal Shifts included."""
    assert determinize_golden.samples(tuple(game["specs"]), game["seed"]) == game["samples"]


def test_a_world_depends_only_on_what_the_seat_knows_and_the_generator():
    """Two positions a seat cannot tell apart (the game and a world sampled from it) give the same
    world from the same generator state, in crash windows and Tidal Shifts too."""
    tried = hidden = 0
    for n in (2, 3, 4):
        for i, game in enumerate(random_positions(n, 6, seed0=300)):
            if i % 3 and not determinize_golden.hidden_choices(game):
                continue
            for me in range(n):
                view = SeatView(game, me)
                other = SeatView(view.determinize(random.Random(i)), me)
                a, b = random.Random(f"{i}/{me}"), random.Random(f"{i}/{me}")
                assert view.determinize(a).fields() == other.determinize(b).fields()
                assert a.getstate() == b.getstate()
                tried += 1
                hidden += determinize_golden.hidden_choices(game)
    assert tried > 1000 and hidden > 100


class _CorruptRandom(random.Random):
    def getstate(self):
        return (3, (1, 2, 3), None)


@pytest.mark.parametrize("rng, error, match", [
    (None, TypeError, "determinize needs a random.Random, not NoneType"),
    (7, TypeError, "determinize needs a random.Random, not int"),
    (random.SystemRandom(), TypeError, "determinize needs a random.Random with a state, not SystemRandom"),
    (_CorruptRandom(1), ValueError, "not a random.Random state"),
])
def test_determinize_refuses_what_is_no_random_generator(rng, error, match):
    game = Game(3, seed=5)
    before = game.fields()
    with pytest.raises(error, match=match) as e:
        SeatView(game, 1).determinize(rng)
    assert "\n" not in str(e.value) and game.fields() == before


def test_determinize_writes_the_generator_back():
    game = Game(2, seed=8)
    a, b = random.Random(4), random.Random(4)
    SeatView(game, 0).determinize(a)
    assert a.getstate() != b.getstate()
    b.shuffle(sorted(game.s.hijinks + game.s.hands[1]))  # the same draws, made by Python
    b.shuffle(list(range(len(game.s.havok) - len(game.s.known[0]))))
    b.getrandbits(64)
    assert a.getstate() == b.getstate() and a.random() == b.random()


def test_the_core_generator_takes_a_generators_words_as_a_tuple_or_a_list():
    """From either it deals the same world and plays the same rollout as the random.Random does,
    and hands back, as a tuple for setstate, the words the random.Random has after them."""
    for draws in (1, 620):  # (the first draw twists a new generator; the second twists during the sampling)
        rng = random.Random(3)
        for _ in range(draws):
            rng.getrandbits(32)
        version, words, gauss = rng.getstate()
        cores = [_core.Random(words), _core.Random(list(words))]
        worlds = [SeatView(Game(3, seed=2), 1).determinize(core) for core in cores]
        played = [rollout(w, 0, 2, 0.0, core) for w, core in zip(worlds, cores)]
        world = SeatView(Game(3, seed=2), 1).determinize(rng)
        assert rollout(world, 0, 2, 0.0, rng) == played[0] == played[1]
        assert world.fields() == worlds[0].fields() == worlds[1].fields()
        after = [core.state() for core in cores]
        assert type(after[0]) is type(after[1]) is tuple and after[0] == after[1]
        assert rng.getstate() == (version, after[0], gauss)
        assert (after[0][:624] == words[:624]) == (draws == 1)


# -- the only door ------------------------------------------------------------------------------


def outside_files():
    """The Python files of everything but the engine package and the tests."""
    skip = {".venv", "havok_env", "tests", "build", ".git"}
    return sorted(p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts))


def test_nothing_outside_havok_env_reaches_past_a_seat_view():
    """No bot, the human player, a benchmark or a script reads a view's game (``._game``,
    ``._s``, or by name); only the luck measurement looks behind a view, and it says so
    (``PeekingView``)."""
    files = outside_files()
    assert {"human.py", "heuristic.py", "luck_cap.py", "evaluate.py"} <= {p.name for p in files}
    reached, peeking = [], set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            name = node.attr if isinstance(node, ast.Attribute) else \
                node.value if isinstance(node, ast.Constant) else \
                node.id if isinstance(node, ast.Name) else None
            if name in ("_game", "_s"):
                reached.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if name == "PeekingView":
                peeking.add(str(path.relative_to(ROOT)))
    assert reached == []
    assert peeking <= {"benchmarks/luck_cap.py"}


def test_a_seat_is_shown_the_same_table_in_every_world_it_cannot_tell_apart():
    """The text rendering (env render, the human player's table, question and choices) reads only
    the seat's view: determinized worlds, which change what the seat cannot see, render alike."""
    from agents.human import HumanAgent
    from havok_env.render import choice_label, describe_table

    tried = differ = 0
    for n in (2, 3, 4):
        game, rng = Game(n, seed=60 + n, log=True), random.Random(n)
        for step in range(120):
            if game.is_over:
                break
            if step % 7 == 0:
                me = game.to_act
                human = HumanAgent(output=None)
                human.reset(me, n)
                view = SeatView(game, me)
                seen = (describe_table(view), human.table_text(view), human._question(view),
                        [choice_label(view, a) for a in view.legal_actions()])
                for w in range(3):
                    world = view.determinize(random.Random(w))
                    other = SeatView(world, me)
                    assert (describe_table(other), human.table_text(other), human._question(other),
                            [choice_label(other, a) for a in other.legal_actions()]) == seen
                    # the same world shown to another seat differs (its hand was resampled)
                    q = (me + 1) % n
                    differ += describe_table(SeatView(world, q)) != describe_table(SeatView(game, q))
                    tried += 1
            legal = game.legal_actions()
            game.apply(legal[rng.randrange(len(legal))])
    assert tried >= 30 and differ >= tried // 2
