"""Fuzzing the inputs a user hands the engine: snapshots and card files.

Snapshots are taken from random games at random points (finished games included) and mutated:
values changed or given another type, keys deleted or added, list entries deleted, duplicated or
swapped, cards moved between places, values nested deeply. Card files are mutated the same way
(as parsed TOML, written back) or as bytes (not UTF-8, cut short, deeply nested, lines repeated).
Each mutant must give exactly one of two outcomes:

* our error (``SnapshotError`` / ``CardDataError``), or
* a game that passes every invariant (each card in one place, distinct dragons, seats and
  counters in range, a pending decision with legal choices, a result agreeing with the hoards,
  observations and a JSON round trip that work) and plays to the end with random legal actions,
  checked again at every step, with illegal actions mixed in (each must be refused with
  ``IllegalActionError`` and change nothing).

Anything else is counted as a raw error (another exception on load) or as accepted but invalid,
and fails the run (exit status 1).
``tests/test_hostile_inputs.py`` runs the same mutations under Hypothesis.

    python benchmarks/fuzz_inputs.py [--count 30000] [--card-files 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from havok_env import CardDataError, Game, IllegalActionError, SnapshotError, load_cards
from havok_env.cards import DATA_DIR, tomllib
from havok_env.constants import MAX_PLAYERS, MIN_PLAYERS
from havok_env.engine import DECISION_KINDS, PURPOSES
from havok_env.observe import Observer
from training.progress import Progress

CARD_FILES = ("havok.toml", "hijinks.toml", "dragons.toml")
MAX_STEPS = 20_000  # decisions before a game counts as one that does not end


class Invalid(Exception):
    """An accepted input that breaks an invariant or fails in play."""


# -- snapshots to mutate ------------------------------------------------------------------------


def positions(rng: random.Random, games: int) -> list[dict]:
    """Snapshots of random games at a few random points each, and at their end."""
    out = []
    for _ in range(games):
        g = Game(rng.choice(range(MIN_PLAYERS, MAX_PLAYERS + 1)), seed=rng.getrandbits(32), log=rng.random() < 0.2)
        stops = set(rng.sample(range(120), 3))
        i = 0
        while not g.is_over:
            if i in stops:
                out.append(json.loads(json.dumps(g.snapshot())))
            g.apply(rng.choice(g.legal_actions()))
            i += 1
        out.append(json.loads(json.dumps(g.snapshot())))
    return out


# -- mutations --------------------------------------------------------------------------------


def _nodes(tree, path=()):
    """Every (path, value) of a JSON-like tree (depth-first, the root first)."""
    out = [(path, tree)]
    stack = [(path, tree)]
    while stack:
        p, v = stack.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in items:
            out.append((p + (k,), x))
            if isinstance(x, (dict, list)):
                stack.append((p + (k,), x))
    return out


def _deep(depth: int):
    v = []
    for _ in range(depth):
        v = [v]
    return v


def _copy(v):
    """A deep copy; for a value nested too deeply to copy, a new one as deep (never ``v`` itself:
    a tree holding one of its own branches twice could come to hold itself)."""
    try:
        return copy.deepcopy(v)
    except RecursionError:
        return _deep(3000)


def _values(rng: random.Random, names: list[str], nodes: list) -> list:
    """Replacement values: other types, boundary numbers, card names, deep nesting, another
    node's value."""
    other = rng.choice(nodes)[1]
    return [None, True, False, 0, 1, -1, 2, 3, 4, 5, 15, 40, 41, 99, 2 ** 64, -2 ** 63, 1.5,
            math.inf, "", "x", "main", "crash", rng.choice(names), [], {}, [0], [rng.choice(names)],
            {"f": "turn", "step": "main"}, _deep(rng.choice((3, 50, 5000))),
            _copy(other)]


def mutate(tree, rng: random.Random, names: list[str], focus=()) -> object:
    """A mutated deep copy of ``tree``: one to three changes. ``focus`` lists top-level keys to
    prefer (half the changes go to them)."""
    tree = _copy(tree)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        nodes = _nodes(tree)
        near = [nd for nd in nodes if nd[0] and nd[0][0] in focus] if focus else []
        path, value = rng.choice(near if near and rng.random() < 0.5 else nodes)
        if not path:
            continue
        parent = tree
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        kind = rng.choice(("replace", "replace", "tweak", "delete", "duplicate", "add", "swap",
                           "move", "nest", "shuffle"))
        if kind == "replace":
            parent[key] = rng.choice(_values(rng, names, nodes))
        elif kind == "tweak" and isinstance(value, int) and not isinstance(value, bool):
            parent[key] = value + rng.choice((-2, -1, 1, 2))
        elif kind == "tweak" and isinstance(value, bool):
            parent[key] = not value
        elif kind == "tweak" and isinstance(value, str):
            parent[key] = rng.choice(names)
        elif kind == "delete":
            del parent[key]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(key, _copy(value))
        elif kind == "add":
            if isinstance(value, dict):
                value[rng.choice(("extra", "a", "step", "t", "o", "pc", "ok", "to", "picks"))] = \
                    rng.choice(_values(rng, names, nodes))
            elif isinstance(value, list):
                value.insert(rng.randrange(len(value) + 1), rng.choice(_values(rng, names, nodes)))
        elif kind in ("swap", "move"):  # between two places of the same kind (cards: two piles)
            # not a place inside the other (the tree would come to hold itself)
            same = [nd for nd in nodes if nd[0] and type(nd[1]) is type(value)
                    and nd[0][:len(path)] != path and path[:len(nd[0])] != nd[0]]
            if same:
                p2, v2 = rng.choice(same)
                parent2 = tree
                for k in p2[:-1]:
                    parent2 = parent2[k]
                if kind == "swap":
                    parent[key], parent2[p2[-1]] = v2, value
                elif isinstance(parent, list) and isinstance(parent2, list):
                    del parent[key]  # a card taken from one place and put in another
                    parent2.insert(rng.randrange(len(parent2) + 1), value)
        elif kind == "nest":
            parent[key] = rng.choice(([value], {"x": value}, _deep(rng.choice((2, 3000)))))
        elif kind == "shuffle" and isinstance(value, list):
            rng.shuffle(value)
    return tree


def exchange_cards(tree: dict, rng: random.Random, cards) -> dict:
    """Two card kinds exchanged everywhere in a snapshot: names in the piles, kinds in the stack
    (a position that still holds every card once if both kinds have as many copies)."""
    a, b = rng.sample(range(cards.n_kinds), 2)
    names = {cards.names[a]: cards.names[b], cards.names[b]: cards.names[a]}

    def swap(v, in_stack):
        if isinstance(v, list):
            return [swap(x, in_stack) for x in v]
        if isinstance(v, dict):
            return {k: swap(x, in_stack or k == "stack") for k, x in v.items()}
        if in_stack and v.__class__ is int:
            return b if v == a else a if v == b else v
        return names.get(v, v) if isinstance(v, str) else v

    try:
        return swap(tree, False)
    except RecursionError:
        return tree


def mutate_snapshot(base: dict, rng: random.Random, cards) -> dict:
    """A mutated snapshot; often its pending decision is dropped as well, so that the engine
    derives it from the mutated frames instead of refusing a pending that no longer matches."""
    r = rng.random()
    if r < 0.15:
        d = exchange_cards(base, rng, cards)
    else:
        d = mutate(base, rng, cards.names, focus=("stack", "pending", "result", "players"))
    if isinstance(d, dict) and rng.random() < 0.35:
        d["pending"] = None
    return d


def _same(a, b) -> bool:
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (RecursionError, ValueError, TypeError):
        return False


# -- the oracle -------------------------------------------------------------------------------


def invariants(g: Game, observer: Observer, bounds: tuple[np.ndarray, np.ndarray]):
    """Raise Invalid unless the position is one the engine can be in (``bounds``: the
    observation space's, ``observer.bounds()``)."""
    s, cs, n = g.s, g.cards, g.num_players
    try:
        g.check_cards()
    except SnapshotError as e:
        raise Invalid(f"cards: {e}") from None
    if not 2 <= n <= 4 or len(s.dragons) != n or len(set(s.dragons)) != n \
            or not all(0 <= d < len(cs.dragons) for d in s.dragons):
        raise Invalid(f"dragons {s.dragons}")
    if not 0 <= s.current < n:
        raise Invalid(f"current player {s.current}")
    for field in ("hands", "hoards", "ready", "cards_used", "card_limit", "innate_used",
                  "restricted", "known"):
        if len(getattr(s, field)) != n:
            raise Invalid(f"{field} for {len(getattr(s, field))} seats")
    for p in range(n):
        if not 0 <= s.cards_used[p] <= s.card_limit[p] <= 1 + len(cs.all_cards()):
            raise Invalid(f"seat {p}: {s.cards_used[p]} cards used of {s.card_limit[p]}")
        if len(s.known[p]) > 3 or s.known[p] != s.havok[:len(s.known[p])]:
            raise Invalid(f"seat {p} knows {s.known[p]}, not the top of the Havok deck")
        if not all(cs.is_hijinks(k) for k in s.hands[p]) or \
                not all(cs.is_treasure(k) for k in s.hoards[p]):
            raise Invalid(f"seat {p}: a card out of its place")
    if not 0 <= s.turn <= sum(cs.copies[:cs.first_hijinks]) + 1:
        raise Invalid(f"turn {s.turn}")
    if s.result is not None:
        scores = g.scores()
        if s.pending is not None or s.result.get("scores") != scores or \
                s.result.get("winners") != [p for p in range(n) if scores[p] == max(scores)] or \
                s.result.get("reason") not in ("hoard_15", "havok_empty"):
            raise Invalid(f"result {s.result} with scores {scores}")
    else:
        p = s.pending
        if p is None or not 0 <= p.get("player", -1) < n or p.get("kind") not in DECISION_KINDS \
                or p.get("purpose") not in PURPOSES or not p.get("choices") \
                or not all(a.__class__ is int and 0 <= a < g.layout.size for a in p["choices"]) \
                or len(set(p["choices"])) != len(p["choices"]):
            raise Invalid(f"pending {p}")
        low, high = bounds
        for seat in range(n):
            obs, mask = observer.observe(g, seat)
            outside = ~np.isfinite(obs) | (obs < low) | (obs > high)
            if outside.any():
                raise Invalid(f"observation out of its space at {np.flatnonzero(outside)[:5].tolist()}")
            want = sorted(p["choices"]) if seat == p["player"] else []
            if sorted(np.flatnonzero(mask)) != want:
                raise Invalid("action mask differs from the legal actions")


# actions no decision takes (out of range, not integers) and, drawn at random, one that may be legal
_BAD_ACTIONS = (-1, 10**9, 2**70, 1.5, "1", None, True)


def illegal(g: Game, rng: random.Random):
    """Feeds ``g`` an action its pending decision does not allow: it must be refused with
    IllegalActionError and change nothing."""
    bad = rng.choice(_BAD_ACTIONS + (rng.randrange(g.layout.size + 2),))
    if bad in g.legal_actions() and not isinstance(bad, bool):
        return
    before = g.snapshot()
    try:
        g.apply(bad)
    except IllegalActionError:
        pass
    else:
        raise Invalid(f"the illegal action {bad!r} was taken")
    if g.snapshot() != before:
        raise Invalid(f"the refused action {bad!r} changed the game")


def play_out(g: Game, rng: random.Random):
    """Checks ``g`` and plays it to the end with random legal actions, checking every step."""
    observer = Observer(g.cards)
    bounds = observer.bounds()
    try:
        invariants(g, observer, bounds)
        again = Game.from_snapshot(json.loads(json.dumps(g.snapshot())), cards=g.cards)
        if again.snapshot() != g.snapshot():
            raise Invalid("the snapshot does not restore exactly")
        steps = 0
        while not g.is_over:
            if rng.random() < 0.2:
                illegal(g, rng)
            g.apply(rng.choice(g.legal_actions()))
            invariants(g, observer, bounds)
            steps += 1
            if steps > MAX_STEPS:
                raise Invalid(f"no end after {MAX_STEPS} decisions")
        again = Game.from_snapshot(json.loads(json.dumps(g.snapshot())), cards=g.cards)
        if again.snapshot() != g.snapshot() or again.rewards() != g.rewards():
            raise Invalid("the final snapshot does not restore exactly")
    except Invalid:
        raise
    except Exception as e:  # noqa: BLE001 - any failure in play is what the fuzzer looks for
        raise Invalid(f"in play: {type(e).__name__}: {e}") from None


def try_snapshot(d, rng: random.Random) -> tuple[str, str]:
    """(outcome, detail) for one snapshot: 'rejected', 'accepted', 'raw error' or 'invalid'."""
    try:
        g = Game.from_snapshot(d)
    except SnapshotError as e:
        return "rejected", str(e)
    except Exception as e:  # noqa: BLE001 - any other error is the finding the fuzzer reports
        return "raw error", f"{type(e).__name__}: {e}"
    try:
        play_out(g, rng)
    except Invalid as e:
        return "invalid", str(e)
    return "accepted", ""


# -- card files ---------------------------------------------------------------------------------


def _toml_key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "_-" for c in k) and k.isascii() else json.dumps(k)


def _toml_value(v) -> str | None:
    """``v`` as an inline TOML value (None for null, which TOML lacks)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return {math.inf: "inf", -math.inf: "-inf"}.get(v, "nan" if v != v else repr(v))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(x for x in map(_toml_value, v) if x is not None) + "]"
    if isinstance(v, dict):
        parts = [f"{_toml_key(k)} = {x}" for k, x in ((k, _toml_value(x)) for k, x in v.items())
                 if x is not None]
        return "{ " + ", ".join(parts) + " }"
    return None


def to_toml(doc: dict) -> str:
    """A parsed card file written back: plain keys first, then the [[tables]]."""
    lines, tables = [], []
    for k, v in doc.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            tables.append((k, v))
        elif (text := _toml_value(v)) is not None:
            lines.append(f"{_toml_key(k)} = {text}")
    for k, recs in tables:
        for rec in recs:
            lines += ["", f"[[{_toml_key(k)}]]"]
            lines += [f"{_toml_key(f)} = {x}" for f, x in ((f, _toml_value(x)) for f, x in rec.items())
                      if x is not None]
    return "\n".join(lines) + "\n"


def card_docs() -> dict[str, dict]:
    return {name: tomllib.loads((DATA_DIR / name).read_text("utf-8")) for name in CARD_FILES}


def mutate_cards(docs: dict, rng: random.Random, names: list[str]) -> dict[str, bytes]:
    """The three card files, one of them mutated (as data or as bytes)."""
    out = {name: to_toml(doc).encode() for name, doc in docs.items()}
    name = rng.choice(CARD_FILES)
    text = out[name]
    deep = text.replace(b"effect = [", b"effect = " + b"[" * 3000, 1)  # nested too deeply
    if rng.random() < 0.75:
        try:
            out[name] = to_toml(mutate(docs[name], rng, names)).encode()
        except RecursionError:  # a value nested too deeply for to_toml: nest it in the text
            out[name] = deep
        return out
    at = rng.randrange(len(text))
    out[name] = rng.choice((
        text[:at] + b"\xff\xfe" + text[at:],  # not UTF-8
        text[:at],  # cut short
        deep,
        text + b"\n" + text.splitlines()[rng.randrange(len(text.splitlines()))],  # a key twice
        text.replace(b"copies = ", b"copies = -", 1),
        text.replace(b'name = "', b'name = ["', 1).replace(b'"\n', b'"]\n', 1),
    ))
    return out


def try_card_files(files: dict[str, bytes], rng: random.Random, games: int = 3) -> tuple[str, str]:
    """(outcome, detail) for one set of card files: loaded and played, or refused."""
    tmp = Path(tempfile.mkdtemp(prefix="havok-cards-"))
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        try:
            cs = load_cards(tmp)
        except CardDataError as e:
            return "rejected", str(e)
        except Exception as e:  # noqa: BLE001 - any other error is the finding the fuzzer reports
            return "raw error", f"{type(e).__name__}: {e}"
        try:
            for i in range(games):
                try:
                    g = Game(MIN_PLAYERS + i % (MAX_PLAYERS - MIN_PLAYERS + 1), seed=rng.getrandbits(32), cards=cs)
                except Exception as e:  # noqa: BLE001 - a card set that cannot deal is reported
                    raise Invalid(f"setup: {type(e).__name__}: {e}") from None
                play_out(g, rng)
        except Invalid as e:
            return "invalid", str(e)
        return "accepted", ""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- the report ---------------------------------------------------------------------------------


def report(title: str, outcomes: Counter, examples: dict, seconds: float):
    total = sum(outcomes.values())
    print(f"{title}: {total} mutants in {seconds:.0f} s")
    for k in ("rejected", "accepted", "unchanged", "raw error", "invalid"):
        print(f"  {k:<10} {outcomes[k]:>7,}")
    for k in ("raw error", "invalid", "rejected"):
        for detail, count in Counter(examples.get(k, [])).most_common(8 if k != "rejected" else 5):
            print(f"    {k}: {count} x {detail[:150]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=30_000, help="snapshot mutants")
    ap.add_argument("--card-files", type=int, default=2_000, help="card-file mutants")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.count < 0 or args.card_files < 0:
        sys.exit("fuzz_inputs.py: --count and --card-files must not be negative")
    rng = random.Random(args.seed)
    cards = Game(2, seed=0).cards
    names = list(cards.names)
    pool = positions(rng, max(1, min(200, args.count // 20)))
    outcomes, examples = Counter(), {}
    start = time.perf_counter()
    with Progress(args.count, desc="snapshot mutants", unit="mutant") as bar:  # on standard error
        for _ in range(args.count):
            base = rng.choice(pool)
            for _ in range(5):  # a mutation can change nothing (a swap of equal cards, say)
                d = mutate_snapshot(base, rng, cards)
                if not _same(d, base):
                    break
            outcome, detail = ("unchanged", "") if _same(d, base) else try_snapshot(d, rng)
            outcomes[outcome] += 1
            examples.setdefault(outcome, []).append(detail.split(":")[0] if outcome == "rejected"
                                                    else detail)
            bar.update()
    report("snapshots", outcomes, examples, time.perf_counter() - start)
    failed = outcomes["raw error"] + outcomes["invalid"]
    docs = card_docs()
    outcomes, examples = Counter(), {}
    start = time.perf_counter()
    with Progress(args.card_files, desc="card-file mutants", unit="mutant") as bar:
        for _ in range(args.card_files):
            outcome, detail = try_card_files(mutate_cards(docs, rng, names), rng)
            outcomes[outcome] += 1
            examples.setdefault(outcome, []).append(detail)
            bar.update()
    report("card files", outcomes, examples, time.perf_counter() - start)
    failed += outcomes["raw error"] + outcomes["invalid"]
    return 1 if failed else 0  # (a failed mutant fails the run: benchmarks/sanitize.py reads it)


if __name__ == "__main__":
    sys.exit(main())
