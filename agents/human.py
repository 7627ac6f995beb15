"""A person playing in the terminal (``make_agent("human")`` or ``"human:NAME"``).

At each of its decisions the agent shows what happened since its last decision (the game's public
log), the table as its seat sees it (hoards with each treasure's value, dragons ready or tired, its
hand with each card's text, the piles), what is being decided and the legal choices numbered from 1.
The whole table is shown at the start of a game; after that only the parts that changed (cards
already in the hand by name, new ones with their text), and ``table`` shows all of it again. A
choice of treasure says what it is worth: in the hoard it is in, or its printed value in the trash
heap or the Havok deck, in the arena's words (``havok_env.render.choice_label``). Text is wrapped to the
terminal's width (``shutil.get_terminal_size``, read at every message) or to ``width``.
The player answers with a number or with (part of) a choice's label: ``2``, ``play Sticky Claws``,
``sticky``. Anything else gets a short message and the question again; a typo never makes a move.
``help`` lists the commands, ``table`` shows the table again, ``quit`` (confirmed) stops the
tournament; the unfinished game is not recorded.

Everything shown is read through the seat's :class:`havok_env.view.SeatView` (the table through
``havok_env.render``), so the screen tells the person only what the seat may know.

Crash windows are decisions like any other: whenever the human could crash something, on any player's
turn, the engine asks, and this agent shows the question.

The agent reads from ``input`` and writes to ``output`` (default stdin and stdout), so tests and other
front ends can script it. Games should be played with ``log=True`` so that "what just happened" has
something to show.
"""

from __future__ import annotations

import difflib
import shutil
import sys
import textwrap

from havok_env.constants import WIN_SCORE
from havok_env.engine import END_REASONS
from havok_env.render import choice_label, question

from .base import Agent

# what to say when a block of the table goes away
GONE = {"canceled": "Canceled cards: none now (they went back to their owners' hands).",
        "known": "You no longer know the top of the Havok deck."}

HELP = ("Type the number of a choice, or its name (any unambiguous part of it, e.g. 'end' or a card "
        "name). Commands: 'table' shows the table again, 'help' shows this, 'quit' stops playing.")


def is_human(spec: str) -> bool:
    """Whether an agent spec is a person (``human`` or ``human:NAME``)."""
    return str(spec).strip().split(":", 1)[0] == "human"


def human_name(spec: str) -> str:
    """The person's name in a ``human:NAME`` spec (``human`` without one)."""
    name = str(spec).strip().partition(":")[2].strip()
    return name or "human"


class HumanQuit(Exception):
    """The person stopped playing (typed quit, or the input ended)."""


class HumanAgent(Agent):
    """A person at the terminal. ``HumanAgent(input=None, output=None, name="human", width=None)``."""

    SPEC_FORMS = ("human",)

    @classmethod
    def from_spec(cls, spec: str, arg: str, **kwargs) -> "HumanAgent":
        return cls(**kwargs)  # evaluate.py passes the terminal's input and output

    def __init__(self, input=None, output=None, name: str | None = None, color: bool = False,
                 width: int | None = None):
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self.name = name or "human"
        self.width = width  # None: the terminal's width, read at every message
        self.seat = 0
        self.num_players = 2
        self.seat_labels: list[str] | None = None
        self.games: int | None = None  # how many games this person is to play, when known
        self._log_pos = 0
        self._game_no = 0
        self._shown: dict | None = None  # the table blocks last shown, by name

    # -- the Agent interface -------------------------------------------------------------------

    def reset(self, seat: int, num_players: int, seed: int | None = None) -> None:
        self.seat = seat
        self.num_players = num_players
        self._log_pos = 0
        self._game_no += 1
        self._started = False
        self._shown = None

    def set_table(self, labels: list[str]) -> None:
        """Who sits where (one label per seat), shown at the start of the next game."""
        self.seat_labels = list(labels)

    def announce(self, text: str, games: int | None = None) -> None:
        """Tell the person something about the session (``games``: how many games they will play)."""
        if games is not None:
            self.games = games
        self._say(text)

    def act(self, observation, action_mask, view) -> int:
        # a person sees the table as the seat does: everything shown is read through its view
        if not self._started:
            self._started = True
            self._intro(view)
        self._say(self._news(view))
        self._say(self._table_changes(view))  # the whole table at first, then what changed
        choices = list(view.pending["choices"])
        labels = [choice_label(view, a) for a in choices]
        self._say(self._question(view))
        self._say(self._numbered(labels))
        while True:
            text = self._ask("> ")
            pick, message = self.parse(text, labels)
            if pick is not None:
                self._say(f"You chose: {labels[pick]}")
                return int(choices[pick])
            if message == "table":
                self._say(self.table_text(view))
                self._shown = dict(self._blocks(view))
                self._say(self._question(view))
                self._say(self._numbered(labels))
            elif message == "quit":
                answer = self._ask("Stop playing? This game will not be recorded. Type 'yes' to quit: ")
                if answer.strip().lower() in ("y", "yes"):
                    raise HumanQuit("the player quit")
                self._say("Carrying on.")
                self._say(self._numbered(labels))
            else:  # a short message, then the question again
                self._say(message)
                if message != HELP:
                    self._say(self._question(view))
                self._say(self._numbered(labels))

    def game_over(self, record: dict, view=None) -> None:
        """Tell the person how the game ended (``view``: this seat's view of the finished game,
        with its log)."""
        if view is not None:
            self._say(self._news(view))
            self._say(self._table_changes(view))
        r = record["result"]
        winners = r["winners"]
        scores = r["scores"]
        if self.seat in winners:
            verdict = "You win!" if len(winners) == 1 else "A draw: you share the lead."
        else:
            verdict = "You lose."
        self._say(f"=== Game over ({END_REASONS.get(r['reason'], r['reason'])}). {verdict} Final hoards: "
                  + ", ".join(f"{self._who(p)} {s}" for p, s in enumerate(scores)) + " ===\n")

    # -- input parsing ---------------------------------------------------------------------------

    @staticmethod
    def parse(text: str, labels: list[str]) -> tuple[int | None, str]:
        """(index of the chosen label, "") or (None, a message / "table" / "quit")."""
        t = " ".join(str(text).strip().split())
        low = t.lower()
        n = len(labels)
        if not t:
            return None, f"Please type a number from 1 to {n}, or a choice's name."
        if low in ("?", "h", "help"):
            return None, HELP
        if low in ("t", "table", "show", "look"):
            return None, "table"
        if low in ("q", "quit", "exit"):
            return None, "quit"
        if low.isdigit() or (low[:1] in "+-" and low[1:].isdigit()):
            i = int(low)
            if 1 <= i <= n:
                return i - 1, ""
            return None, f"There is no choice {t}; type a number from 1 to {n}."
        lows = [lab.lower() for lab in labels]
        if low in lows:
            return lows.index(low), ""
        hits = [i for i, lab in enumerate(lows) if low in lab]
        if not hits:
            words = low.split()
            hits = [i for i, lab in enumerate(lows) if all(w in lab for w in words)]
        if len(hits) == 1:
            return hits[0], ""
        if len(hits) > 1:
            listed = "; ".join(f"{i + 1} = {labels[i]}" for i in hits)
            return None, f"'{t}' fits several choices ({listed}); type the number."
        close = difflib.get_close_matches(low, lows, n=1, cutoff=0.5)
        hint = f" Did you mean {lows.index(close[0]) + 1} ({labels[lows.index(close[0])]})?" if close else ""
        return None, f"'{t}' is not one of the choices.{hint} Type a number from 1 to {n} ('help' for help)."

    # -- text ------------------------------------------------------------------------------------

    def table_text(self, view) -> str:
        """The table as this seat sees it, without the engine's own log and decision lines."""
        return "\n".join(line for _, lines in self._blocks(view) for line in lines)

    def _blocks(self, view) -> list[tuple[str, list[str]]]:
        from havok_env.render import table_blocks

        blocks = [b for b in table_blocks(view, last_log=0) if b[0] != "end"]
        d = view.dragon(self.seat)
        state = "ready" if view.ready(self.seat) else "tired"
        blocks.append(("dragon", [f"Your dragon {d.name} ({d.affinity}, {state}); it becomes ready "
                                  f"again when: {d.ready_text}"]))
        blocks.append(("innate", [f"  innate play  {d.play.name}: {d.play.text}",
                                  f"  innate crash {d.crash.name}: {d.crash.text}"]))
        return blocks

    def _table_changes(self, view) -> str:
        """The whole table the first time in a game; afterwards only the blocks that changed."""
        blocks = self._blocks(view)
        before, self._shown = self._shown, dict(blocks)
        if before is None:
            return "\n".join(line for _, lines in blocks for line in lines)
        changed = []
        for name, lines in blocks:
            if before.get(name) != lines:
                # cards already shown in the hand by name only, new ones with their text
                old = set(before.get(name, ())) if name == "hand" else ()
                changed += [line.split(" [", 1)[0] if line in old else line for line in lines]
        changed += [GONE[name] for name in before if name not in self._shown and name in GONE]
        if not changed:
            return ""
        return "\n".join(["--- On the table now ('table' shows all of it) ---"] + changed)

    def _intro(self, view) -> None:
        d = view.dragon(self.seat)
        seats = []
        for p in range(view.num_players):
            who = "you" if p == self.seat else (
                self.seat_labels[p] if self.seat_labels and p < len(self.seat_labels) else "bot")
            seats.append(f"{view.seat_name(p)} = {who} ({view.dragon(p).name})")
        of = f" of {self.games}" if self.games else ""
        self._say(f"\n=== Game {self._game_no}{of}: you are {view.seat_name(self.seat)}, playing "
                  f"{d.name}. First to a hoard worth {WIN_SCORE} wins. ===")
        self._say("Seats: " + "; ".join(seats))
        self._say(HELP)

    def _news(self, view) -> str:
        log = view.log
        new = log[self._log_pos:]
        self._log_pos = len(log)
        if not new:
            return ""
        return "\n".join(["--- What happened ---"] + [f"  {self._you(m, view)}" for m in new])

    def _you(self, msg: str, view) -> str:
        me = view.seat_name(self.seat)
        return msg.replace(me, f"{me} (you)")

    def _who(self, p: int) -> str:
        return f"player_{p}" + (" (you)" if p == self.seat else "")

    def _question(self, view) -> str:
        """The decision's question (``havok_env.render.question``, the arena's words too), and on
        a line of its own the text of the card or ability it is about."""
        p = view.pending
        q, detail = question(view, p["purpose"], p["context"] or {})
        return f"{q}\n  [{detail}]" if detail else q

    def _numbered(self, labels: list[str]) -> str:
        return "\n".join(f"  {i}. {lab}" for i, lab in enumerate(labels, 1))

    def _say(self, text: str) -> None:
        if text:
            width = self.width or shutil.get_terminal_size().columns
            self.output.write("\n".join(_wrap(line, width) for line in text.split("\n")) + "\n")
            self.output.flush()

    def _ask(self, prompt: str) -> str:
        self.output.write(prompt)
        self.output.flush()
        line = self.input.readline()
        if not line:
            self.output.write("\n")
            raise HumanQuit("input ended")
        return line.rstrip("\r\n")


def _wrap(line: str, width: int) -> str:
    """``line`` folded to ``width`` columns, continuation lines indented past its own indent."""
    if len(line) <= width:
        return line
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    return "\n".join(textwrap.wrap(line, max(width, len(indent) + 20), subsequent_indent=indent,
                                    break_long_words=False, break_on_hyphens=False)) or line

