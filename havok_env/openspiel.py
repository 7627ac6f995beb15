"""Havok & Hijinks as an OpenSpiel Python game: ``import havok_env.openspiel`` registers it.

    import pyspiel
    import havok_env.openspiel
    game = pyspiel.load_game("python_havok_hijinks", {"players": 3, "seed": 7})

Needs ``open_spiel`` (the ``openspiel`` extra); ``import havok_env`` does not import this module.

* Chance is *sampled stochastic*: there are no chance nodes; the engine's seeded generator, part
  of the state, flips and shuffles. ``new_initial_state()`` deals a new game from the game's own
  generator (parameter ``seed``), so the same seed gives the same sequence of games. A clone
  carries the generator, so it plays on exactly as the original would.
* Actions are the environment's ``Discrete(76)`` actions; ``legal_actions()`` is the pending
  decision's choices, crash windows included (``current_player()`` is the seat asked), and
  ``action_to_string`` says what an action means in the decision (``play Sticky Claws``).
* ``returns()``: +1 to the sole winner and -1 to the rest, 0 to tied leaders in a draw.
* The observation tensor is :class:`havok_env.observe.Observer`'s vector for the seat (what it
  may know, nothing more); the observation string is its table as the seat sees it. The
  information state string is the observation string plus a digest of everything the seat has
  observed and done so far (its recall: each change of its own observation and each of its
  actions), so that two histories the seat can tell apart get different strings. The
  information state tensor is the observation vector; it carries the public history that the
  piles count (discards, trash, past events) but not the order of events, so it is not a
  perfect-recall tensor.
* ``resample_from_infostate(player, sampler)`` deals a world consistent with what the seat knows
  (:meth:`havok_env.view.SeatView.determinize`: other hands, deck orders, hidden declarations and
  the generator are resampled), which is what IS-MCTS needs. The resampled state keeps the
  seat's recall; the other seats' recall restarts there (their true recall would reveal nothing
  to the search, but is not theirs in the sampled world).
* Not supported: serialization (``serialize_state``; a game is replayed from its seed and
  actions with :meth:`havok_env.Game.replay` instead), undo, and observation types other than a
  seat's own view (``IIGObservationType`` with public-only or all-players private information).
"""

from __future__ import annotations

import hashlib
import json
import random

import numpy as np
import pyspiel

from .cards import default_cards
from .constants import MAX_PLAYERS, MIN_PLAYERS, is_player_count
from .engine import ActionLayout, ConfigError, Game
from .observe import Observer
from .render import describe_table
from .view import SeatView

SHORT_NAME = "python_havok_hijinks"
# A bound for algorithms that size buffers by it, not a rule of the game (which has none): the
# longest of 900 random games had 89 decisions (4 players).
MAX_GAME_LENGTH = 1000

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Havok & Hijinks",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"players": 2, "seed": 0})


class HavokHijinksGame(pyspiel.Game):
    """The game with the standard card set; parameters ``players`` (2-4) and ``seed``."""

    def __init__(self, params=None):
        params = {**GAME_TYPE.parameter_specification, **(params or {})}
        n = params["players"]
        if not is_player_count(n):
            raise ConfigError(f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {n!r}")
        self.cards = default_cards()
        self.observer = Observer(self.cards)
        self._seeds = random.Random(params["seed"])
        info = pyspiel.GameInfo(
            num_distinct_actions=ActionLayout(self.cards).size, max_chance_outcomes=0,
            num_players=n, min_utility=-1.0, max_utility=1.0, utility_sum=None,
            max_game_length=MAX_GAME_LENGTH)
        super().__init__(GAME_TYPE, info, params)

    def new_initial_state(self):
        n = self.num_players()
        return HavokHijinksState(self, Game(n, seed=self._seeds.getrandbits(63), cards=self.cards))

    def make_py_observer(self, iig_obs_type=None, params=None):
        return HavokHijinksObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False),
                                    params)


class _Engine:
    """Holds the engine game so that OpenSpiel's deepcopy of a state clones it with
    :meth:`Game.clone` (plain data) rather than copying the card set."""

    __slots__ = ("game",)

    def __init__(self, game: Game):
        self.game = game

    def __deepcopy__(self, memo):
        return _Engine(self.game.clone())


def _digest(recall: str, piece: bytes) -> str:
    return hashlib.blake2b(recall.encode() + piece, digest_size=16).hexdigest()


class HavokHijinksState(pyspiel.State):
    def __init__(self, game: HavokHijinksGame, engine: Game, recall=None, seen=None):
        super().__init__(game)
        self._engine = _Engine(engine)
        self._observer = game.observer
        n = engine.num_players
        self._recall = list(recall) if recall else [""] * n
        self._seen = list(seen) if seen else [b""] * n
        self._remember()

    @property
    def engine(self) -> Game:
        """The engine's game (for reading; changing it behind OpenSpiel's back breaks its history)."""
        return self._engine.game

    def _remember(self) -> None:
        """Adds each seat's observation to its recall when the seat's view of the game changed."""
        g = self._engine.game
        for p in range(g.num_players):
            seen = self._observer.observe(g, p)[0].tobytes()
            if seen != self._seen[p]:
                self._seen[p] = seen
                self._recall[p] = _digest(self._recall[p], seen)

    # -- the OpenSpiel API --------------------------------------------------------------------

    def current_player(self):
        g = self._engine.game
        return pyspiel.PlayerId.TERMINAL if g.is_over else g.to_act

    def _legal_actions(self, player):
        g = self._engine.game
        if g.is_over or player != g.to_act:
            return []
        return sorted(g.pending["choices"])

    def _apply_action(self, action):
        g = self._engine.game
        p = g.to_act
        g.apply(int(action))
        self._recall[p] = _digest(self._recall[p], b"act %d" % action)
        self._remember()

    def _action_to_string(self, player, action):
        g = self._engine.game
        if not g.is_over and player == g.to_act and action in g.pending["choices"]:
            return f"p{player}: {g.action_label(int(action))}"
        return f"p{player}: action {action}"

    def is_terminal(self):
        return self._engine.game.is_over

    def returns(self):
        return self._engine.game.rewards()

    def resample_from_infostate(self, player_id, probability_sampler):
        rng = random.Random(int(probability_sampler() * (1 << 53)))
        world = SeatView(self._engine.game, player_id).determinize(rng)
        recall, seen = [""] * world.num_players, [b""] * world.num_players
        recall[player_id], seen[player_id] = self._recall[player_id], self._seen[player_id]
        return HavokHijinksState(self.get_game(), world, recall, seen)

    def __str__(self):
        # The whole state (for debugging; not what any seat may see).
        return json.dumps(self._engine.game.snapshot(), sort_keys=True, separators=(",", ":"))


class HavokHijinksObserver:
    """OpenSpiel's PyObserver: a seat's own observation vector, its table, and its recall."""

    def __init__(self, game: HavokHijinksGame, iig_obs_type, params):
        if params:
            raise ValueError(f"{SHORT_NAME}: observation parameters are not supported, got {params}")
        if (iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
                or not iig_obs_type.public_info):
            raise ValueError(f"{SHORT_NAME} observes only a seat's own view (public information and "
                             "that seat's private information)")
        self.perfect_recall = iig_obs_type.perfect_recall
        self._observer = game.observer
        self.tensor = np.zeros(self._observer.size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: HavokHijinksState, player: int) -> None:
        self.tensor[:] = self._observer.observe(state.engine, player)[0]

    def string_from(self, state: HavokHijinksState, player: int) -> str:
        text = describe_table(SeatView(state.engine, player))
        if self.perfect_recall:
            text += f"\nrecall {state._recall[player]}"
        return text


pyspiel.register_game(GAME_TYPE, HavokHijinksGame)
