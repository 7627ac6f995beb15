"""The study design: which bot, which deal and which seat each new game gets.

* **Bots rotate.** A new game goes to the bot with the fewest games so far (ties: the bot this
  participant has met least, then the order of ``--agents``), so every bot gets the same number of
  games, within one, at every moment.
* **Paired deals, rotated seats.** Each bot plays the same sequence of slots: slot ``j`` is deal
  ``j // players`` with the human in seat ``j % players``. A deal is one game seed (derived from the
  study seed), and the seed fixes the shuffles and the dragon of every seat, so every deal is played
  against every bot, from every seat: comparisons between bots on human opponents are paired.
* **Nobody sees a deal twice.** A person who played a deal would remember its deck order, so a
  participant is never given a deal it has already played (against any bot); the slot is left for
  the next participant and taken then.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, asdict


@dataclass
class Study:
    agents: list[str]
    players: int = 2
    seed: int = 0
    games_per_person: int = 0  # 0: one game against every bot
    consent: str = ""
    title: str = "Havok & Hijinks: play against the bots"
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.games_per_person:
            self.games_per_person = len(self.agents)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Study":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


DEFAULT_CONSENT = (
    "This is a research study of how people play the card game Havok & Hijinks against computer "
    "opponents. You will play a few games in your browser. We record every decision you make in "
    "the games, the time it was made and the pseudonym you choose, and nothing else: please do not "
    "use your real name. The games are used to compare the computer opponents, and may be published "
    "in anonymous form. Taking part is voluntary, and you may stop at any time by closing the page."
)


def deal_seed(study_seed: int, deal: int) -> int:
    """The game seed of deal number ``deal``: 63 bits, fixed by the study seed."""
    digest = hashlib.sha256(f"havok-arena/{study_seed}/{deal}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def slot_position(slot: int, players: int) -> tuple[int, int]:
    """(deal, human seat) of a bot's slot."""
    return slot // players, slot % players


def next_assignment(bots: list[str], players: int, taken: list[tuple[str, int, int, int]],
                    pid: int) -> tuple[str, int, int, int]:
    """(bot, slot, deal, human seat) of participant ``pid``'s next game.

    ``taken`` holds (bot, slot, deal, participant) for every game assigned so far.
    """
    per_bot = {b: set() for b in bots}
    met = {b: 0 for b in bots}
    seen_deals = set()
    for bot, slot, deal, who in taken:
        if bot in per_bot:
            per_bot[bot].add(slot)
        if who == pid:
            seen_deals.add(deal)
            if bot in met:
                met[bot] += 1
    bot = min(bots, key=lambda b: (len(per_bot[b]), met[b], bots.index(b)))
    slot = 0
    while slot in per_bot[bot] or slot_position(slot, players)[0] in seen_deals:
        slot += 1
    deal, seat = slot_position(slot, players)
    return bot, slot, deal, seat
