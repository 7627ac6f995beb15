"""Load benchmark of the arena: simulated participants play the heuristic bot at the same time.

Starts ``python evaluate.py --serve`` on 127.0.0.1 (a free port, a fresh SQLite database in a
temporary folder) and runs ``--participants`` simulated people against it, all on this machine:
each joins, then plays games one after another, answering each decision with a random legal
choice after a think time drawn uniformly from ``--think`` (seconds), until ``--seconds`` have
passed (a game in progress is left unfinished, as a person closing the page would). The latency
of a decision is the time from sending the action to having the participant's next decision (or
the game's end) in hand: the server stores the action, the bot answers in its worker process, the
bot's moves are stored, and the page's next state comes back. Starting a game is timed apart.

At the end the database is checked game by game: every game replays from its seed and stored
actions, a finished game to its stored result, and every decision a participant saw answered is
in it (none lost, none twice).

    python benchmarks/arena_load.py [--participants 50] [--seconds 60] [--think 0.5 1.5]
        [--agent heuristic] [--json PATH]

The loopback address only: nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from havok_env.files import replaced  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: str, port: int, agent: str, seed: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "evaluate.py", "--serve", "--agents", agent, "--db", db, "--port", str(port),
         "--host", "127.0.0.1", "--seed", str(seed), "--games-per-person", "100000"],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)
    said = []
    for line in proc.stdout:
        said.append(line)
        if "admin:" in line:
            return proc
    raise SystemExit("arena_load.py: the server did not start: " + "".join(said[-5:]).strip())


def cpu_seconds(pid: int) -> float:
    """CPU time used so far by a process and its children, from /proc (0 where unreadable)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo, seen = 0.0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            pass
    return total


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


async def participant(i: int, client, deadline: float, think: tuple[float, float], out: dict) -> None:
    import httpx

    rng = random.Random(i)
    me = {"name": f"sim{i:03d}", "games": {}, "latency": [], "start": [], "errors": []}
    out[i] = me
    try:
        r = await client.post("/api/join", json={"pseudonym": me["name"], "consent": True})
        r.raise_for_status()
        headers = {"Authorization": "Bearer " + r.json()["token"]}
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            r = await client.post("/api/games", headers=headers)
            if r.status_code != 200:
                me["errors"].append(f"start: {r.status_code} {r.text[:100]}")
                return
            me["start"].append(time.perf_counter() - t0)
            s = r.json()
            game = me["games"][s["game"]] = {"decisions": 0, "result": None}
            while not s["over"] and time.monotonic() < deadline:
                await asyncio.sleep(rng.uniform(*think))
                choice = rng.choice(s["decision"]["choices"])
                t0 = time.perf_counter()
                r = await client.post(f"/api/games/{s['game']}/act", headers=headers,
                                      json={"step": s["step"], "action": choice["action"]})
                if r.status_code != 200:
                    me["errors"].append(f"act: {r.status_code} {r.text[:100]}")
                    break
                s = r.json()
                me["latency"].append(time.perf_counter() - t0)
                game["decisions"] += 1
            if s["over"]:
                game["result"] = s["result"]["winners"]
    except httpx.HTTPError as e:
        me["errors"].append(f"{type(e).__name__}: {e}")


async def run_load(url: str, n: int, seconds: float, think: tuple[float, float]) -> dict:
    import httpx

    out: dict = {}
    deadline = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        await asyncio.gather(*(participant(i, client, deadline, think, out) for i in range(n)))
    return out


def check_database(db: str, people: dict) -> dict:
    """Replay every stored game; compare with what the participants saw."""
    from arena.store import Store
    from havok_env.engine import Game

    store = Store(db)
    rows = store.games()
    actions = store.all_actions()
    problems = []
    seen = {gid: g for me in people.values() for gid, g in me["games"].items()}
    finished = 0
    for row in rows:
        acts = actions.get(row["id"], [])
        try:
            human = 0
            for g, a in Game.positions({"seed": row["seed"], "options": row["options"], "actions": acts}):
                human += a is not None and g.to_act == row["human_seat"]
        except Exception as e:  # noqa: BLE001 - a game that fails to replay is what it reports
            problems.append(f"game {row['id']} does not replay: {e}")
            continue
        if len(acts) != row["n_actions"]:
            problems.append(f"game {row['id']}: {len(acts)} actions stored, {row['n_actions']} counted")
        if row["status"] == "finished":
            finished += 1
            if g.result is None or g.result["winners"] != row["result"]["winners"] \
                    or g.result["scores"] != row["result"]["scores"]:
                problems.append(f"game {row['id']} replays to another result")
        elif g.result is not None:
            problems.append(f"game {row['id']} is over but not marked finished")
        mine = seen.get(row["id"])
        if mine is None:
            problems.append(f"game {row['id']} was never shown to its participant")
            continue
        if mine["decisions"] != human:
            problems.append(f"game {row['id']}: the participant answered {mine['decisions']} "
                            f"decisions, {human} are stored")
        if mine["result"] is not None and mine["result"] != g.result["winners"]:
            problems.append(f"game {row['id']}: the participant was shown another result")
    missing = set(seen) - {r["id"] for r in rows}
    problems += [f"game {gid} is missing from the database" for gid in sorted(missing)]
    store.close()
    return {"games": len(rows), "finished": finished, "problems": problems}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--participants", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--think", type=float, nargs=2, default=(0.5, 1.5), metavar=("MIN", "MAX"),
                   help="think time of a simulated person, uniform in seconds (default 0.5 1.5)")
    p.add_argument("--agent", default="heuristic")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args(argv)
    if not 1 <= args.participants <= 500 or not 0 < args.seconds <= 900:
        p.error("--participants must be 1-500 and --seconds 0-900")
    folder = tempfile.mkdtemp(prefix="arena_load_")
    db = f"sqlite:///{folder}/arena.db"
    port = free_port()
    server = start_server(db, port, args.agent, args.seed)
    try:
        cpu0 = cpu_seconds(server.pid)
        t0 = time.time()
        people = asyncio.run(run_load(f"http://127.0.0.1:{port}", args.participants, args.seconds,
                                      tuple(args.think)))
        wall = time.time() - t0
        cpu = cpu_seconds(server.pid) - cpu0
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    lat = [x for me in people.values() for x in me["latency"]]
    starts = [x for me in people.values() for x in me["start"]]
    errors = [e for me in people.values() for e in me["errors"]]
    check = check_database(db, people)
    played = sum(1 for me in people.values() for g in me["games"].values() if g["result"] is not None)
    rep = {
        "participants": args.participants, "seconds": round(wall, 1), "think": list(args.think),
        "agent": args.agent, "decisions": len(lat), "decisions_per_s": round(len(lat) / wall, 1),
        "latency_ms": {"p50": round(1000 * percentile(lat, 50), 1), "p95": round(1000 * percentile(lat, 95), 1),
                       "max": round(1000 * max(lat), 1) if lat else None,
                       "mean": round(1000 * statistics.fmean(lat), 1) if lat else None},
        "start_game_ms": {"p50": round(1000 * percentile(starts, 50), 1),
                          "p95": round(1000 * percentile(starts, 95), 1)},
        "server_cpu_ms_per_decision": round(1000 * cpu / max(1, len(lat) + len(starts)), 2),
        "games_finished": played, "games_stored": check["games"], "games_stored_finished": check["finished"],
        "errors": len(errors), "error_samples": errors[:5], "database_problems": check["problems"][:20],
        "load_average": list(os.getloadavg()),
    }
    print(f"arena load: {args.participants} participants for {wall:.0f} s against {args.agent} "
          f"(think {args.think[0]}-{args.think[1]} s), 127.0.0.1")
    print(f"  decisions        {rep['decisions']} ({rep['decisions_per_s']}/s)")
    print(f"  latency, action to next decision: p50 {rep['latency_ms']['p50']} ms, "
          f"p95 {rep['latency_ms']['p95']} ms, max {rep['latency_ms']['max']} ms")
    print(f"  starting a game: p50 {rep['start_game_ms']['p50']} ms, p95 {rep['start_game_ms']['p95']} ms")
    print(f"  server CPU       {rep['server_cpu_ms_per_decision']} ms per request (server and bot worker)")
    print(f"  games finished   {played} (stored: {check['games']}, of which finished {check['finished']})")
    print(f"  errors           {len(errors)}" + (f": {errors[:3]}" if errors else ""))
    problems = check["problems"]
    print(f"  database check   {problems[:5] if problems else 'every game replays to what was shown'}")
    print(f"  load average     {' '.join(f'{x:.1f}' for x in rep['load_average'])}")
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with replaced(args.json) as f:
            json.dump(rep, f, indent=1)
    return 1 if errors or check["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
