"""The study: its settings (:class:`Study`, read from a study file by :func:`load_study_file`;
``docs/studies.md`` documents every field), and its design: which bot, which deal and which seat
each new game gets.

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

import re
import string
from dataclasses import asdict, dataclass, field

from agents.runner import study_seed
from havok_env.cards import tomllib
from havok_env.constants import PLAYER_COUNTS, is_player_count

STAGES = ("before", "after_game", "end")
QUESTION_TYPES = ("likert", "choice", "number", "text")
TEXT_ANSWER_MAX = 1000
DEFAULT_ID_PARAMS = ["PROLIFIC_PID"]
DEFAULT_KEEP_PARAMS = ["STUDY_ID", "SESSION_ID"]


@dataclass
class Study:
    """A study as the server runs it and the database keeps it (``docs/studies.md`` documents each
    field as the study file spells it)."""

    agents: list[str]
    players: int = 2
    seed: int = 0
    games_per_person: int = 0  # 0: one game against every bot
    consent: str = ""
    title: str = "Havok & Hijinks: play against the bots"
    extra: dict = field(default_factory=dict)
    consent_version: str = "1"
    instructions: str = ""
    tutorial: bool = False
    practice_games: int = 0
    practice_bot: str = "random"
    questions: dict = field(default_factory=dict)  # stage -> list of question tables
    blind: bool = True
    reveal: bool = False
    id_params: list = field(default_factory=lambda: list(DEFAULT_ID_PARAMS))
    keep_params: list = field(default_factory=lambda: list(DEFAULT_KEEP_PARAMS))
    require_id: bool = False
    completion_code: str = ""
    redirect_url: str = ""

    def __post_init__(self):
        if not self.games_per_person:
            self.games_per_person = len(self.agents)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Study":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def stage(self, name: str) -> list[dict]:
        return list(self.questions.get(name) or [])

    def redirect(self) -> str:
        return self.redirect_url.replace("{code}", self.completion_code)

    def bot_specs(self) -> list[str]:
        """Every bot the server runs: the study's, and the practice bot if there is practice."""
        extra = [self.practice_bot] if (self.practice_games or self.tutorial) else []
        return list(dict.fromkeys(self.agents + extra + ([TUTORIAL["bot"]] if self.tutorial else [])))


DEFAULT_CONSENT = (
    "This is a research study of how people play the card game Havok & Hijinks against computer "
    "opponents. You will play a few games in your browser. We record every decision you make in "
    "the games, the time it was made and the pseudonym you choose, and nothing else: please do not "
    "use your real name. The games are used to compare the computer opponents, and may be published "
    "in anonymous form. Taking part is voluntary, and you may stop at any time by closing the page."
)

#: the tutorial's game: a fixed deal in which the coach's suggestions (``arena.tutorial``) lead a
#: newcomer to flip, play a card, use the innate ability and crash within a few turns
TUTORIAL = {"seed": 25, "bot": "heuristic", "seat": 0, "players": 2}


# -- the study file --------------------------------------------------------------------------------


class StudyFileError(Exception):
    """A study file that cannot be run: the message names the file, the field and the problem."""


_TOP = {"title", "bots", "players", "seed", "games_per_person", "consent", "instructions",
        "recruitment", "blinding", "questions"}
_SECTIONS = {
    "consent": {"text", "version"},
    "instructions": {"text", "tutorial", "practice_games", "practice_bot"},
    "recruitment": {"id_parameter", "keep_parameters", "require_id", "completion_code", "redirect_url"},
    "blinding": {"enabled", "reveal_at_end"},
}
_QUESTION_KEYS = {"id", "text", "type", "required", "options", "scale", "low", "high", "min", "max", "expect"}
_PARAM = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_QID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


def _check_keys(where: str, table: dict, allowed: set) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ValueError(f"{where}{unknown[0]}: unknown field (the fields here: {', '.join(sorted(allowed))})")


def _get(table: dict, key: str, kind, where: str, default=None):
    if key not in table:
        return default
    v = table[key]
    ok = isinstance(v, kind) and not (kind is int and isinstance(v, bool))
    if not ok:
        names = {str: "a string", int: "an integer", bool: "true or false", list: "a list"}
        raise ValueError(f"{where}{key}: must be {names.get(kind, kind.__name__)}, not {v!r}")
    return v


def _strings(v: list, where: str) -> list[str]:
    if not v or not all(isinstance(x, str) and x.strip() for x in v):
        raise ValueError(f"{where}: must be a list of non-empty strings")
    if len(set(v)) != len(v):
        raise ValueError(f"{where}: names an entry twice")
    return [x.strip() for x in v]


def _question(q, where: str) -> dict:
    if not isinstance(q, dict):
        raise ValueError(f"{where}: must be a table ([[{where.split('[')[0]}]])")
    _check_keys(where + ".", q, _QUESTION_KEYS)
    qid = _get(q, "id", str, where + ".")
    if qid is None or not _QID.match(qid):
        raise ValueError(f"{where}.id: each question needs an id of lower-case letters, digits and "
                         f"'_', starting with a letter (up to 64), not {qid!r}")
    where = f"{where} ({qid})"
    text = _get(q, "text", str, where + ".")
    if not text or not text.strip():
        raise ValueError(f"{where}.text: each question needs its text")
    kind = _get(q, "type", str, where + ".")
    if kind not in QUESTION_TYPES:
        raise ValueError(f"{where}.type: must be one of {', '.join(QUESTION_TYPES)}, not {kind!r}")
    out = {"id": qid, "text": text.strip(), "type": kind, "required": _get(q, "required", bool, where + ".", True)}
    allowed = {"likert": {"scale", "low", "high"}, "choice": {"options"}, "number": {"min", "max"},
               "text": set()}[kind] | {"id", "text", "type", "required", "expect"}
    extra = sorted(set(q) - allowed)
    if extra:
        raise ValueError(f"{where}.{extra[0]}: not a field of a {kind} question")
    if kind == "likert":
        out["scale"] = _get(q, "scale", int, where + ".", 7)
        if not 2 <= out["scale"] <= 11:
            raise ValueError(f"{where}.scale: a Likert scale has 2 to 11 points, not {out['scale']}")
        out["low"] = _get(q, "low", str, where + ".", "")
        out["high"] = _get(q, "high", str, where + ".", "")
    elif kind == "choice":
        out["options"] = _strings(_get(q, "options", list, where + ".", []), where + ".options")
    elif kind == "number":
        out["min"] = _get(q, "min", int, where + ".", None)
        out["max"] = _get(q, "max", int, where + ".", None)
        if out["min"] is not None and out["max"] is not None and out["min"] > out["max"]:
            raise ValueError(f"{where}.max: is below min")
    if "expect" in q:  # an attention check: the answer a reader gives
        expect = q["expect"]
        try:
            out["expect"] = check_answer(out, expect if isinstance(expect, str) else str(expect))
        except ValueError as e:
            raise ValueError(f"{where}.expect: {expect!r} is not an answer to the question ({e})") from None
        if isinstance(expect, bool):
            raise ValueError(f"{where}.expect: must be one of the answers, not {expect!r}")
    return out


def check_answer(q: dict, given) -> str:
    """The answer to question ``q`` as it is stored (a string); ValueError saying what is wrong."""
    if given is None or (isinstance(given, str) and not given.strip()):
        if q.get("required", True):
            raise ValueError("an answer is needed")
        return ""
    text = str(given).strip()
    if q["type"] == "choice":
        if text not in q["options"]:
            raise ValueError("choose one of: " + ", ".join(q["options"]))
    elif q["type"] in ("likert", "number"):
        try:
            n = int(text)
        except ValueError:
            raise ValueError("a whole number is needed") from None
        lo, hi = (1, q["scale"]) if q["type"] == "likert" else (q.get("min"), q.get("max"))
        if (lo is not None and n < lo) or (hi is not None and n > hi):
            raise ValueError(f"must be from {lo if lo is not None else '...'} to {hi if hi is not None else '...'}")
        text = str(n)
    elif len(text) > TEXT_ANSWER_MAX:
        raise ValueError(f"at most {TEXT_ANSWER_MAX} characters")
    return text


def parse_study(doc: dict) -> dict:
    """The :class:`Study` fields a study file sets (a parsed TOML document); ValueError naming
    the field otherwise. Fields left out keep the defaults (or the command line's)."""
    _check_keys("", doc, _TOP)
    for name, keys in _SECTIONS.items():
        if name in doc and not isinstance(doc[name], dict):
            raise ValueError(f"{name}: must be a table ([{name}])")
        _check_keys(name + ".", doc.get(name, {}), keys)
    out: dict = {}
    title = _get(doc, "title", str, "")
    if title is not None:
        out["title"] = title.strip() or Study.__dataclass_fields__["title"].default
    bots = _get(doc, "bots", list, "")
    if bots is not None:
        out["agents"] = _strings(bots, "bots")
    players = _get(doc, "players", int, "")
    if players is not None:
        if not is_player_count(players):
            raise ValueError(f"players: must be {PLAYER_COUNTS}, not {players}")
        out["players"] = players
    seed = _get(doc, "seed", int, "")
    if seed is not None:
        if not 0 <= seed < 2**63:
            raise ValueError(f"seed: must be from 0 to 2**63-1, not {seed}")
        out["seed"] = seed
    gpp = _get(doc, "games_per_person", int, "")
    if gpp is not None:
        if gpp < 1:
            raise ValueError(f"games_per_person: must be at least 1, not {gpp}")
        out["games_per_person"] = gpp
    consent = doc.get("consent", {})
    if "text" in consent:
        text = _get(consent, "text", str, "consent.").strip()
        if not text:
            raise ValueError("consent.text: is empty")
        out["consent"] = text
    version = _get(consent, "version", str, "consent.")
    if version is not None:
        if not version.strip() or len(version) > 64:
            raise ValueError("consent.version: must be 1 to 64 characters")
        out["consent_version"] = version.strip()
    ins = doc.get("instructions", {})
    if "text" in ins:
        out["instructions"] = _get(ins, "text", str, "instructions.").strip()
    out["tutorial"] = _get(ins, "tutorial", bool, "instructions.", True)
    practice = _get(ins, "practice_games", int, "instructions.")
    if practice is not None:
        if not 0 <= practice <= 10:
            raise ValueError(f"instructions.practice_games: must be 0 to 10, not {practice}")
        out["practice_games"] = practice
    bot = _get(ins, "practice_bot", str, "instructions.")
    if bot is not None:
        out["practice_bot"] = bot.strip()
    rec = doc.get("recruitment", {})
    ids = rec.get("id_parameter")
    if ids is not None:
        ids = [ids] if isinstance(ids, str) else ids
        if not isinstance(ids, list):
            raise ValueError(f"recruitment.id_parameter: must be a string or a list of strings, not {ids!r}")
        out["id_params"] = _strings(ids, "recruitment.id_parameter")
    keep = _get(rec, "keep_parameters", list, "recruitment.")
    if keep is not None:
        out["keep_params"] = _strings(keep, "recruitment.keep_parameters") if keep else []
    for key, names in (("id_params", "id_parameter"), ("keep_params", "keep_parameters")):
        for name in out.get(key, []):
            if not _PARAM.match(name):
                raise ValueError(f"recruitment.{names}: {name!r} is not a URL parameter name "
                                 "(letters, digits, '_', '-', '.')")
    req = _get(rec, "require_id", bool, "recruitment.")
    if req is not None:
        out["require_id"] = req
    code = _get(rec, "completion_code", str, "recruitment.")
    if code is not None:
        if len(code) > 64 or not re.fullmatch(r"[A-Za-z0-9_-]*", code):
            raise ValueError("recruitment.completion_code: up to 64 letters, digits, '_' or '-'")
        out["completion_code"] = code
    url = _get(rec, "redirect_url", str, "recruitment.")
    if url is not None:
        url = url.strip()
        if url and not re.match(r"^https?://[^\s/]+", url):
            raise ValueError(f"recruitment.redirect_url: must be an http:// or https:// address, not {url!r}")
        if "{code}" in url and not out.get("completion_code"):
            raise ValueError("recruitment.redirect_url: uses {code} but no completion_code is set")
        out["redirect_url"] = url
    blind = doc.get("blinding", {})
    out["blind"] = _get(blind, "enabled", bool, "blinding.", True)
    reveal = _get(blind, "reveal_at_end", bool, "blinding.")
    if reveal is not None:
        out["reveal"] = reveal
    qs = doc.get("questions", {})
    if not isinstance(qs, dict):
        raise ValueError("questions: must be a table of stages ([[questions.before]], "
                         "[[questions.after_game]], [[questions.end]])")
    _check_keys("questions.", qs, set(STAGES))
    out["questions"] = {}
    for stage in STAGES:
        items = qs.get(stage, [])
        if not isinstance(items, list):
            raise ValueError(f"questions.{stage}: must be a list of tables ([[questions.{stage}]])")
        parsed = [_question(q, f"questions.{stage}[{i}]") for i, q in enumerate(items)]
        ids = [q["id"] for q in parsed]
        dup = next((q for q in ids if ids.count(q) > 1), None)
        if dup:
            raise ValueError(f"questions.{stage}: the id {dup!r} is used twice")
        if parsed:
            out["questions"][stage] = parsed
    return out


def load_study_file(path: str) -> dict:
    """The study fields of the TOML file at ``path``; StudyFileError naming the file otherwise."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise StudyFileError(f"cannot read the study file {path!r}: {e.strerror or e}") from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise StudyFileError(f"{path}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as e:
        raise StudyFileError(f"{path}: not valid TOML: {e}") from None
    try:
        return parse_study(doc)
    except ValueError as e:
        raise StudyFileError(f"{path}: {e}") from None


def opponent_names(study: "Study", games: list[dict]) -> dict[str, str]:
    """bot spec -> what the participant who played ``games`` calls it: with blinding "Opponent A",
    "Opponent B"... in the order they were first met, otherwise the bot's spec."""
    names: dict[str, str] = {}
    for g in games:
        if (g.get("kind") or "game") == "game" and g["bot"] not in names:
            i = len(names)
            letter = string.ascii_uppercase[i % 26] + (str(i // 26) if i >= 26 else "")
            names[g["bot"]] = f"Opponent {letter}" if study.blind else g["bot"]
    return names


def deal_seed(seed: int, deal: int) -> int:
    """The game seed of deal number ``deal``: 63 bits, fixed by the study seed."""
    return study_seed(seed, deal)


def practice_seed(seed: int, n: int) -> int:
    """The game seed of a participant's practice game ``n``: deals no scored game uses."""
    return study_seed(seed, "practice", n)


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
