"""
# Havok & Hijinks

| Import             | `from havok_env import env, raw_env`           |
|--------------------|------------------------------------------------|
| Actions            | Discrete                                       |
| Parallel API       | No                                             |
| Manual Control     | Yes (the `human` agent of `evaluate.py`)       |
| Agents             | `agents= ['player_0', ..., 'player_{n-1}']`    |
| Agents             | 2, 3 or 4                                      |
| Action Shape       | (1,)                                           |
| Action Values      | Discrete(76)                                   |
| Observation Shape  | (643,) plus a (76,) action mask                |
| Observation Values | [0, inf) per entry, see "Bounds" below         |

Havok & Hijinks is a card game for 2-4 dragons racing to a hoard worth 15. Each turn a dragon flips a
Havok card (a treasure for its hoard, or an event) and may then play Hijinks: steal, break, trade,
and so on. Crash cards are played *out of turn*, in reaction to another player's card, an event or a
flipped treasure. The full rules as this engine plays them are in `docs/rules.md`.

## Agents and turns

Agents are `player_0 .. player_{n-1}`; `infos[agent]["dragon"]` names each seat's dragon (Ruby/fire,
Obsidian/darkness, Amber/sunlight, Pearl/moonlight). `agent_selection` is always the seat whose
decision is pending. That is usually the player whose turn it is, but when a **crash window** opens
(a card or innate ability is used, an event is flipped, a flipped treasure is about to be added to a
hoard) the selection moves, in turn order from the active player, to each player who could legally
crash, and to nobody else. Each either crashes or declines; declarations stay hidden until the window
closes. Targets are chosen by the seat they belong to (e.g. during Tidal Shift every dragon picks
the treasure it passes). Decisions with one legal choice are taken automatically; crash windows never.

## Action space

One `Discrete(76)` space serves every decision; the mask says which actions are legal now, and
`env.unwrapped.action_label(a)` says what an action means in the current decision.

| Actions | Meaning                                                                              |
|---------|--------------------------------------------------------------------------------------|
| 0       | end the turn / decline to crash / stop / keep the order / do not flip                |
| 1-20    | Hijinks card kind 0-19: play it (main), crash with it (crash), take it (Wishing Well) |
| 21      | use the dragon's innate play ability                                                 |
| 22      | crash with the dragon's innate crash ability                                         |
| 23-42   | discard Hijinks card kind 0-19 and draw (ends the turn)                              |
| 43-46   | target the seat 0-3 places to the left (0 = yourself)                                |
| 47-72   | target treasure kind 0-25 (in the hoard, trash heap or own hoard the decision names) |
| 73-75   | option 1-3 (which revealed card to put on the bottom or to resolve, or "flip")       |

Card kinds are numbered in the order of `havok_env/data/*.toml` (`game.cards.names`: treasures
0-25, events 26-35, Hijinks cards 36-55; Hijinks kind `i` is card `36 + i`).

## Observation space

`{"observation": Box(float32, (643,)), "action_mask": Box(int8, (76,))}`. The observation holds what
the seat may know and nothing else; seats are in relative order (slot 0 = the observer, slot 1 the
seat on its left, ...). The decision sections are zero, and the mask all zero, for every seat except
the one that must decide.

| Offset  | Length | Section          | Contents                                                    |
|---------|--------|------------------|-------------------------------------------------------------|
| 0       | 20     | hand             | own Hijinks cards, count per kind                           |
| 20      | 156    | seats            | 4 slots x 39: present, dragon one-hot (4), ready, innate used this turn, cards used this turn, cards still allowed, lost in the woods, is the current player, hand size / 3, hoard value / 15, hoard count per treasure kind (26) |
| 176     | 20     | discard          | discard pile, count per Hijinks kind                        |
| 196     | 26     | trash            | trash heap, count per treasure kind                         |
| 222     | 10     | past_events      | past events pile, count per event                           |
| 232     | 20     | canceled         | canceled cards waiting to return, per Hijinks kind          |
| 252     | 36     | havok_remaining  | Havok deck composition (public by elimination)              |
| 288     | 1      | havok_size       | Havok deck size / 40                                        |
| 289     | 1      | hijinks_size     | Hijinks deck size / 40                                      |
| 290     | 108    | known_top        | 3 x one-hot Havok kind: cards this seat saw on top (Foresight, Stargazing) |
| 398     | 1      | turn             | turn number / 40                                            |
| 399     | 6      | decision_kind    | main, crash, target_seat, target_treasure, choose_card, option |
| 405     | 19     | purpose          | what the decision is for (`havok_env.decisions.PURPOSES`)   |
| 424     | 38     | ability          | the card or ability being resolved or crashed: Hijinks kind (20), event (10), innate play/crash per dragon (8) |
| 462     | 4      | actor            | relative seat acting (the user, flipper or recipient)       |
| 466     | 4      | target           | relative seat targeted                                      |
| 470     | 3      | trigger          | crash window on: event, treasure, use                       |
| 473     | 36     | trigger_card     | the event or treasure a crash window is about               |
| 509     | 26     | picks            | treasures already targeted, per treasure kind               |
| 535     | 108    | shown            | 3 x one-hot Havok kind: the cards offered by this decision  |

**Bounds.** `observation_space` declares each entry's least and greatest value, derived from the
card data (`Observer.bounds()`; the same for every player count), and every observation play
reaches, or a restored snapshot gives, lies within them:

| Entries                             | Least | Greatest                              |
|-------------------------------------|-------|---------------------------------------|
| flags and one-hots (`present`, ...) | 0     | 1                                     |
| counts per card kind                | 0     | the kind's copies (1 to 4)            |
| `picks`                             | 0     | 2 of a kind (Heist)                   |
| `havok_size`                        | 0     | 1 (every Havok card)                  |
| `turn`                              | 1/40  | 38/40 (every turn flips a card)       |
| `hijinks_size`                      | 0     | 1                                     |
| `hand_size`                         | 0     | 40/3 (no maximum hand size)           |
| `score` (hoard value / 15)          | 0     | 79/15 (every treasure, for Obsidian)  |
| `cards_left` (cards still allowed)  | 0     | 1                                     |
| `cards_used` (cards used this turn) | 0     | inf                                   |

Play stays well inside some of these, as a game ends once a hoard is worth 15: in 3,000 random
games (1,000 each with 2, 3 and 4 players) no hoard passed 20/15, no hand held more than 8 cards
and no game lasted 30 turns. Cards used this turn has no bound: a Sunny Side Up can be reshuffled
into an empty Hijinks deck, drawn and played again in the same turn (random play used up to 3).

## State

`env.state()` is the whole position but the order of the unseen cards, for centralised critics
and analysis (never for a seat's policy: it holds every hand): the observations of seats 0 to n-1,
concatenated (`state_space` is `Box(float32, (n * 643,))` with the observation's bounds repeated).
Each block is written as that seat sees the game, in its own relative seat order, so the state
is everything revealed to anyone: every hand, the cards each seat has seen on top of the Havok
deck, and the public piles. The batched training environment (`havok_env.vector.LearnerGames`,
`state=True`) gives the same blocks starting with the learner's seat.

## Rewards

At the end of the game the sole winner gets +1 and every other seat -1; in a draw the tied leaders
get 0 and the rest -1. All other rewards are 0. The game ends as soon as a hoard is worth 15 or more
(highest hoard wins) or when a Havok card must be flipped from an empty deck. An illegal action
through `env()` ends the game with -1 for the offender (PettingZoo's `TerminateIllegalWrapper`);
`raw_env` raises `IllegalActionError` naming the action and the decision. An action that is not an
integer (`True`, `"3"`, `2.5`) raises `IllegalActionError` through both; integral numbers (numpy
ints, `3.0`) are taken. `raw_env.step()` before `reset()`, or once the game is over and every agent
has been stepped with `None`, raises `IllegalActionError` too (`env()` keeps PettingZoo's
behaviour: an error before `reset()`, a warning and nothing else after the end).

## Arguments

``env(num_players=2, dragons=None, render_mode=None)``: `dragons` is a list of dragon names or
affinities, one per seat (`None` entries are chosen at random, distinct). `reset(seed=s)` fixes
everything: the same seed and actions give the same game, byte for byte.
`reset(options={"snapshot": d})` starts from a position saved with `env.unwrapped.game.snapshot()`
or edited by hand (give `"pending": None` to have the decision derived); every field is validated
and a bad one raises `SnapshotError` naming it. A finished game's snapshot starts as just after its
last step: every agent terminated with its reward, stepped with `None` until none is left.
`env.unwrapped.record()` returns the game so far as a replay.

## Version history

The version is `havok_env.version.ENV_VERSION` (this env's `metadata["name"]`); its history:

* v0: initial release.
* v1: ruling 24 follows the design: an event may be nullified or redirected only when that
  changes something (docs/rules.md), so crash windows on events that would do nothing are gone.
  Models trained on v0 are refused.
"""

from __future__ import annotations

import copy
import random
import reprlib
from typing import ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from .cards import default_cards
from .engine import ArgumentError, ConfigError, Game, IllegalActionError, SnapshotError, as_action, check_seed
from .observe import Observer
from .render import describe_table
from .version import ENV_VERSION
from .view import SeatView


def env(**kwargs):
    raw = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    e2 = wrappers.AssertOutOfBoundsWrapper(e)
    e3 = _OrderEnforcingWrapper(e2)
    e3.__dict__["_raw"] = raw  # what its step reads, without the unwrapped chain at every step
    raw._mirrors = (e, e2, e3)
    return e3


# The AEC attributes read at every step. Wrappers find them by a __getattr__ chain, one Python
# call per wrapper per read (about half the cost of a step); raw_env copies them onto its
# wrappers whenever it sets them, so reads are plain attribute hits. Values are the same objects.
_MIRRORED = frozenset({"agent_selection", "agents", "rewards", "terminations", "truncations",
                       "infos", "_cumulative_rewards"})


class _OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper that first refuses a non-integer action with the
    engine's IllegalActionError, as raw_env does: inside, AssertOutOfBoundsWrapper takes True for
    1 and TerminateIllegalWrapper then indexes the action mask with it. Integral numbers (numpy
    ints, 3.0) go on as plain ints."""

    def step(self, action):
        if action.__class__ is not int and action is not None:
            action = as_action(action)
        raw = self._raw
        if (action is None or not 0 <= action < raw.n_actions) and self._has_reset and raw.agents:
            # refused by raw_env, in its words (inside, AssertOutOfBoundsWrapper would assert);
            # None stays the step of an agent that is done
            agent = raw.agent_selection
            if action is not None or not (raw.terminations[agent] or raw.truncations[agent]):
                raw.step(action)
        super().step(action)

    def __str__(self) -> str:
        return str(self.env)


# The observation and state spaces of the standard card set, by player count: a gymnasium Box
# formats its 643 bounds into a repr string when it is made, which was nearly all of an env's
# 9 ms build. Each env gets shallow copies: the bounds are shared (never written), the
# generators that sample() draws from are not.
_SPACES: dict[int, tuple] = {}


def _own(space):
    """A copy of ``space`` with a generator of its own (sampling one env's space leaves another's
    stream alone)."""
    out = copy.copy(space)
    out._np_random = None
    if isinstance(space, spaces.Dict):
        out.spaces = {k: _own(v) for k, v in space.spaces.items()}
    return out


def _spaces(observer: Observer, n_actions: int, num_players: int) -> tuple:
    """(observation space, state space) for one env, built once per player count for the
    standard card set."""
    key = num_players if observer.cards is default_cards() else None
    made = _SPACES.get(key) if key is not None else None
    if made is None:  # (the standard cards' action count is fixed by the player count)
        low, high = observer.bounds()
        made = (spaces.Dict({"observation": spaces.Box(low, high, dtype=np.float32),
                             "action_mask": spaces.Box(0, 1, (n_actions,), np.int8)}),
                spaces.Box(np.tile(low, num_players), np.tile(high, num_players), dtype=np.float32))
        if key is not None:
            for box in (made[0]["observation"], made[0]["action_mask"], made[1]):
                box.low.setflags(write=False)  # shared by every env's copy
                box.high.setflags(write=False)
            _SPACES[key] = made
    return _own(made[0]), _own(made[1])


class _ActionSpace(spaces.Discrete):
    """``Discrete(n)`` whose membership test has a fast path for plain ints.

    AssertOutOfBoundsWrapper calls ``contains`` at every step, and gymnasium's version costs
    about as much as a tenth of a whole step here; the answer is the same.
    """

    def contains(self, x) -> bool:
        if x.__class__ is int:
            return 0 <= x < self.n
        return super().contains(x)


class raw_env(AECEnv):
    metadata: ClassVar[dict] = {"render_modes": ["human", "ansi"], "name": ENV_VERSION,
                "is_parallelizable": False, "render_fps": 1}

    def __init__(self, num_players: int = 2, dragons=None, render_mode: str | None = None,
                 cards=None):
        super().__init__()
        if render_mode not in (None, "human", "ansi"):
            raise ValueError(f"render_mode must be None, 'human' or 'ansi', not {render_mode!r}")
        # Validates num_players and dragons with a clear error before anything else is built.
        probe = Game(num_players, dragons, seed=0, cards=cards)
        self.num_players = num_players
        self.dragons = dragons
        self.render_mode = render_mode
        self._cards = probe.cards
        self.observer = Observer(self._cards)
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.n_actions = n_actions = probe.layout.size
        obs_space, self.state_space = _spaces(self.observer, n_actions, num_players)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: _ActionSpace(n_actions) for a in self.possible_agents}
        self._seeder = random.Random()
        self.game: Game | None = None
        self.actions: list[int] = []

    _mirrors: tuple = ()

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in _MIRRORED:
            for w in self._mirrors:
                w.__dict__[name] = value

    def _agent(self, agent) -> int:
        """The seat of ``agent`` (a name of possible_agents), else ArgumentError naming it."""
        try:
            return self.agent_name_mapping[agent]
        except (KeyError, TypeError):  # (TypeError: unhashable)
            raise ArgumentError(f"agent must be one of {', '.join(self.possible_agents)}, not "
                                f"{reprlib.repr(agent)}") from None

    def observation_space(self, agent):
        return self.observation_spaces[self.possible_agents[self._agent(agent)]]

    def action_space(self, agent):
        return self.action_spaces[self.possible_agents[self._agent(agent)]]

    def reset(self, seed: int | None = None, options: dict | None = None):
        if options is not None and not isinstance(options, dict):  # (other keys: PettingZoo's to pass)
            raise ConfigError(f"options must be None or a dict ({{'snapshot': a snapshot}}), not "
                              f"{reprlib.repr(options)}")
        if seed is not None:
            game_seed = check_seed(seed)
            self._seeder.seed(game_seed)
        else:
            game_seed = self._seeder.getrandbits(63)
        if options and "snapshot" in options:  # start from a saved or hand-built position
            game = Game.from_snapshot(options["snapshot"], cards=self._cards)
            if game.num_players != self.num_players:
                raise SnapshotError(f"the snapshot has {game.num_players} players, this env "
                                    f"{self.num_players}")
            self.game = game
        else:
            self.game = Game(self.num_players, self.dragons, seed=game_seed, cards=self._cards,
                             log=self.render_mode is not None)
        self.actions = []
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {"dragon": self.game.dragon(i).name} for i, a in enumerate(self.agents)}
        self._obs_cache: dict = {}
        if self.game.is_over:  # a finished game's snapshot: as just after its last step
            self._game_over()
            self.agent_selection = self.possible_agents[0]
        else:
            self.agent_selection = self.possible_agents[self.game.to_act]

    def observe(self, agent):
        obs = self._obs_cache.get(agent) if agent.__class__ is str else None
        if obs is None:
            if self.game is None:
                raise IllegalActionError("observe() before reset(): no game has started")
            o, m = self.observer.observe(self.game, self._agent(agent))
            obs = self._obs_cache[agent] = {"observation": o, "action_mask": m}
        return obs

    def state(self) -> np.ndarray:
        """Every seat's observation, seat 0's first (the module docstring's "State")."""
        if self.game is None:
            raise IllegalActionError("state() before reset(): no game has started")
        return np.concatenate([self.observer.observe(self.game, q)[0] for q in range(self.num_players)])

    def step(self, action):
        try:
            agent = self.agent_selection
            dead = self.terminations[agent] or self.truncations[agent]
        except (AttributeError, KeyError):  # no game yet, or every agent is done with it
            raise IllegalActionError(
                "step() before reset(): no game has started" if self.game is None else
                "step() after the game is over and every agent is done: call reset()") from None
        if dead:
            if action is not None:
                raise IllegalActionError(f"action {action!r}: {agent} is done: when an agent is dead, "
                                         f"the only valid action is None")
            return self._was_dead_step(action)
        self.game.apply(action)
        self.actions.append(int(action))
        self._obs_cache.clear()
        self._cumulative_rewards[agent] = 0.0
        if self.game.is_over:
            self._game_over()
        else:
            self.agent_selection = self.possible_agents[self.game.to_act]
        if self.render_mode == "human":
            self.render()

    def _game_over(self):
        """Every agent terminated, with its reward for the result."""
        rewards = self.game.rewards()
        for i, a in enumerate(self.agents):
            self.rewards[a] = rewards[i]
            self.terminations[a] = True
            self.infos[a]["result"] = self.game.result
        self._accumulate_rewards()  # rewards are all zero before the end

    def action_label(self, action: int) -> str:
        """What ``action`` means in the current decision, e.g. 'play Sticky Claws'."""
        return self.game.action_label(as_action(action))

    def record(self) -> dict:
        """The game so far as a replay: seed, options and actions (Game.record)."""
        return self.game.record()

    def render(self):
        if self.render_mode is None:
            return None
        g = self.game  # as the seat that must decide sees it (the active player once it is over)
        text = describe_table(SeatView(g, g.to_act if g.to_act is not None else g.current_player))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass


# help(raw_env) and help(env) show the tables above rather than AECEnv's generic text.
raw_env.__doc__ = __doc__
env.__doc__ = ("The environment with PettingZoo's standard wrappers (an illegal action loses the "
               "game; `raw_env` is the bare one).\n" + __doc__)
