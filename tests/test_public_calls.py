"""Every public call of Game, SeatView, Observer and the environments, given wrong types and
out-of-range values: each is refused with one of the project's errors, whose message names the
argument (never an internal error, an IndexError or nanobind's TypeError, and never a wrong value
taken without a word, as g.dragon(-1) once gave the last seat's dragon)."""

import inspect
import random

import numpy as np
import pytest

import havok_env
from havok_env import ConfigError, Game, IllegalActionError, SnapshotError, default_cards
from havok_env.engine import ArgumentError
from havok_env.observe import Observer
from havok_env.view import SeatView
from havok_env.wrappers import SingleAgentEnv

OURS = (ArgumentError, ConfigError, IllegalActionError, SnapshotError)
CS = default_cards()
BAD = [-1, 999, 10**6, 2**31, 2**64, -(2**64), 1.5, 1.0, True, None, "x", "", [], [0], {}, (), object(),
       np.int64(-1), np.float32(1.0)]

STEAL = {"op": "steal", "victim": "opponent"}
TRADE = {"op": "trade", "victim": "opponent"}
SALVAGE = {"op": "salvage", "max_value": 3}
REDIRECT = {"op": "redirect_event", "to": "choice"}
PASS = {"op": "pass_left"}
HEIST = CS.kind("Heist")


def a_game() -> Game:
    """A 3-player game at a crash decision on a treasure just flipped."""
    g = Game(3, seed=0)
    assert g.pending["kind"] == "crash"
    return g


# name -> (good arguments, {parameter: the values of BAD it takes (None: any value)}); a call
# with one argument swapped for a value of BAD must be refused unless listed. A public function
# missing here fails test_every_public_call_is_listed.
def game_calls(g: Game) -> dict:
    lay, trig = g.layout, g.pending["context"]["trigger"]
    return {
        "seat_name": ((1,), {}),
        "seat_action": ((0, 1), {}),
        "seat_from_action": ((0, lay.SEAT + 1), {}),
        "treasure_action": ((2,), {}),
        "treasure_of": ((lay.TREASURE + 2,), {}),
        "card_action": ((HEIST,), {}),
        "card_of": ((lay.PLAY,), {}),
        "discard_action": ((HEIST,), {}),
        "discard_of": ((lay.DISCARD,), {}),
        "ability": ((HEIST,), {}),
        "record": ((), {}),
        "dragon": ((1,), {}),
        "value": ((1, 2), {}),
        "score": ((1,), {}),
        "ops_for": ((HEIST, 1), {}),
        "crash_choices": ((1, trig), {}),
        "trigger": ((1,), {}),
        "victims": ((0, 0, "opponent"), {}),
        "thief": ((0, STEAL), {}),
        "eligible": ((1, 5, [2]), {"max_value": [-1, 999, 10**6, 2**31, 2**64, -(2**64)],
                                   "exclude": [[], [0], ()]}),
        "trade_gives": ((0, TRADE), {}),
        "trade_min_give": ((TRADE, 3), {"take_value": [-1, 999, 10**6, 2**31, 2**64, -(2**64)]}),
        "trade_takes": ((0, 1, TRADE), {}),
        "trade_gives_for": ((0, 1, 2, TRADE), {}),
        "candidates": ((0, STEAL), {}),
        "salvage_options": ((SALVAGE,), {}),
        "redirect_seats": ((0, REDIRECT), {}),
        "tribute_seats": ((0,), {}),
        "pass_seats": ((0, PASS), {}),
        "apply": ((g.legal_actions()[0],), {}),
        "run_chance": ((g.legal_actions()[0], (), None, False),
                       {"force": [[], (), "", {}], "stop": [999, 10**6, 2**31, 2**64, None], "states": [True]}),
        # labels anything ("no such action -1"): the arena and the logs show what was asked
        "action_label": ((g.legal_actions()[0], None), {"action": None, "pending": [None]}),
        "from_snapshot": ((g.snapshot(), None), {"cards": [None]}),
        "replay": (({"seed": 1, "options": {"num_players": 2, "dragons": None}, "actions": [0]}, None),
                   {"cards": [None]}),
    }


def view_calls(v: SeatView) -> dict:
    lay = v.layout
    return {
        "hand_size": ((1,), {}), "hoard": ((1,), {}), "dragon": ((1,), {}), "dragon_index": ((1,), {}),
        "ready": ((1,), {}), "innate_used": ((1,), {}), "cards_used": ((1,), {}),
        "restricted": ((1,), {}), "seat_name": ((1,), {}), "ability": ((HEIST,), {}),
        "cards_left": ((1,), {}), "value": ((1, 2), {}), "score": ((1,), {}),
        "action_label": ((0,), {"action": None}),
        "is_card": ((1,), {}), "card_action": ((HEIST,), {}), "card_of": ((lay.PLAY,), {}),
        "is_discard": ((1,), {}), "discard_action": ((HEIST,), {}), "discard_of": ((lay.DISCARD,), {}),
        "seat_action": ((1,), {}), "seat_of": ((lay.SEAT + 1,), {}),
        "is_treasure": ((1,), {}), "treasure_action": ((2,), {}), "treasure_of": ((lay.TREASURE,), {}),
        "is_option": ((1,), {}), "option_action": ((1,), {}), "option_of": ((lay.OPTION,), {}),
        "victims": ((0, 0, "opponent"), {}), "thief": ((0, STEAL), {}),
        "eligible": ((1, 5, [2]), {"max_value": [-1, 999, 10**6, 2**31, 2**64, -(2**64)],
                                   "exclude": [[], [0], ()]}),
        "trade_gives": ((0, TRADE), {}), "trade_takes": ((0, 1, TRADE), {}),
        "trade_gives_for": ((0, 1, 2, TRADE), {}),
        "trade_min_give": ((TRADE, 3), {"take_value": [-1, 999, 10**6, 2**31, 2**64, -(2**64)]}),
        "salvage_options": ((SALVAGE,), {}), "redirect_seats": ((0, REDIRECT), {}),
        "tribute_seats": ((0,), {}), "pass_seats": ((0, PASS), {}),
        "native_choice": ((havok_env._core.Heuristic(),), {}),
        "determinize": ((random.Random(1),), {}),
    }


def observer_calls(g: Game) -> dict:
    return {"observe": ((g, 1), {}), "ability_index": ((HEIST,), {})}


def env_calls(e) -> dict:
    return {
        "reset": ((3, None), {"seed": [-1, 999, 10**6, 2**31, None], "options": [None, {}]}),  # (any dict)
        "observe": (("player_0",), {}),
        "observation_space": (("player_0",), {}),
        "action_space": (("player_1",), {}),
        "action_label": ((0,), {"action": [-1, 999, 10**6, 2**31, 2**64, -(2**64), 1.0, np.int64(-1),
                                           np.float32(1.0)]}),
        # an action of the space that is not legal loses the game in env() (PettingZoo's
        # TerminateIllegalWrapper), and integral numbers are actions
        "step": ((e.unwrapped.game.legal_actions()[0],), {"action": [1.0, np.float32(1.0)]}),
    }


def signature(fn):
    return [p for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def check_calls(make_target, calls: dict, names: dict | None = None):
    """Calls each function of ``calls`` on a fresh ``make_target()`` with each argument swapped
    for each value of BAD; returns the failures."""
    failures = []
    for name, (good, takes) in calls.items():
        fn = getattr(make_target(), name)
        params = [p.name for p in signature(fn)][:len(good)]
        assert len(params) == len(good), (name, params, good)
        fn(*good)  # the good call works
        for i, param in enumerate(params):
            taken = takes.get(param, [])
            if taken is None:
                continue
            for bad in BAD:
                if any(bad is t or (type(bad) is type(t) and bad == t) for t in taken):
                    continue
                args = list(good)
                args[i] = bad
                fn = getattr(make_target(), name)
                try:
                    fn(*args)
                except OURS as e:
                    said = str(e)
                    want = (names or {}).get(param, param)
                    if want not in said and not (param == "action" and "action" in said):
                        failures.append(f"{name}({param}={bad!r}): {type(e).__name__} does not name "
                                        f"{want!r}: {said}")
                except Exception as e:  # noqa: BLE001 - every other error is a failure
                    failures.append(f"{name}({param}={bad!r}): {type(e).__name__}: {e}"[:200])
                else:
                    failures.append(f"{name}({param}={bad!r}): taken without a word")
    return failures


def public(cls) -> set:
    return {n for n, f in inspect.getmembers(cls) if not n.startswith("_") and callable(f)
            and not isinstance(inspect.getattr_static(cls, n), property)}


# calls without arguments, and Game.positions, a generator whose checks are replay's (it is)
UNLISTED = {"legal_actions", "scores", "rewards", "fields", "clone", "snapshot", "check_cards",
            "havok_remaining", "unseen_hijinks", "describe", "bounds", "positions"}


def test_every_public_call_is_listed():
    g = a_game()
    for cls, calls in ((Game, game_calls(g)), (SeatView, view_calls(SeatView(g, g.to_act))),
                       (Observer, observer_calls(g))):
        missing = public(cls) - set(calls) - UNLISTED
        assert not missing, f"{cls.__name__}: {sorted(missing)} not checked here"


def test_game_calls_refuse_bad_arguments_with_our_errors():
    assert check_calls(a_game, game_calls(a_game()), {"d": "snapshot", "record": "record"}) == []


def test_seat_view_calls_refuse_bad_arguments_with_our_errors():
    assert check_calls(lambda: SeatView(a_game(), a_game().to_act), view_calls(SeatView(a_game(), a_game().to_act)),
                       {"rng": "random.Random"}) == []


def test_observer_calls_refuse_bad_arguments_with_our_errors():
    obs = Observer(CS)
    assert check_calls(lambda: obs, observer_calls(a_game())) == []


@pytest.mark.parametrize("make", [havok_env.raw_env, havok_env.env], ids=["raw_env", "env"])
def test_env_calls_refuse_bad_arguments_with_our_errors(make):
    e = make(num_players=3)

    def fresh():
        e.reset(seed=3)
        return e
    assert check_calls(fresh, env_calls(fresh())) == []


def test_env_step_of_a_done_agent_takes_only_none():
    e = havok_env.env(num_players=2)
    e.reset(seed=1)
    while not any(e.terminations.values()):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    with pytest.raises(IllegalActionError, match=r"^action 3: player_\d is done: when an agent is dead"):
        e.unwrapped.step(3)
    e.step(None)  # the step of an agent that is done


def test_single_agent_env_refuses_what_is_not_an_action():
    for illegal in ("lose", "raise"):
        e = SingleAgentEnv(illegal=illegal)
        e.reset(seed=1)
        for bad in ("3", None, 1.5, [1], True):
            with pytest.raises(IllegalActionError, match="is not an integer"):
                e.step(bad)
    e = SingleAgentEnv(illegal="raise")
    e.reset(seed=1)
    with pytest.raises(IllegalActionError, match=r"^action -1 \(no such action -1\) is not legal"):
        e.step(-1)


def test_game_constructor_and_replay_refuse_bad_arguments():
    for kwargs, match in (({"cards": "x"}, "^cards must be a card set"), ({"log": "yes"}, "^log must be True or False"),
                          ({"advance": 2}, "^advance must be True or False"),
                          ({"num_players": 2.0}, "^num_players must be")):
        with pytest.raises(ConfigError, match=match):
            Game(**kwargs)
    ok = {"seed": 1, "options": {"num_players": 2, "dragons": None}, "actions": [0]}
    for record, match in (({k: v for k, v in ok.items() if k != "seed"}, r"^record must be a dict with 'seed'"),
                          ({**ok, "actions": None}, r"^record\['actions'\] must be a list"),
                          ({**ok, "options": None}, r"^record\['options'\] must be a dict"),
                          ({**ok, "options": {"num_players": 2, "colour": "red"}}, r"^record\['options'\]"),
                          ({**ok, "options": {"num_players": 2, "seed": 4}}, r"^record\['options'\]"),
                          ("x", "^record must be a dict")):
        with pytest.raises(ConfigError, match=match):
            Game.replay(record)


def test_writing_a_state_field_of_the_wrong_type_is_refused_in_one_line():
    g = Game(2, seed=1)
    for bad in ([-1], "x", [b"x"]):
        with pytest.raises(ValueError, match="^log must be a list of lines"):
            g.s.log = bad
    g.s.log = ["a line"]
    assert g.s.log == ["a line"]


def test_a_seat_action_past_the_table_is_refused_with_its_label():
    # the seat block holds the largest table's seats: at 3 players its last action names nobody
    g = Game(3, seed=0)
    with pytest.raises(IllegalActionError, match=rf"^action {g.SEAT + 3} \(target a seat this table does "
                                                 r"not have\) is not legal"):
        g.apply(g.SEAT + 3)
    with pytest.raises(ArgumentError, match="^action must be a seat target action"):
        g.seat_from_action(0, g.SEAT + 3)
