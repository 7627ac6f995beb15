"""A person's whole game in a real browser: headless Chromium (Debian's ``chromium`` package)
driven by Playwright through ``executable_path``, since no browser can be downloaded here. It
joins through the first page, plays a game by clicking and pressing number keys, crashes in a crash
window, and then finds the game on the results page and steps through its replay."""

from __future__ import annotations

import os
import re
import shutil

import pytest

pytest.importorskip("uvicorn", reason="the arena tests need the arena extra: pip install -e '.[arena]'")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs Playwright for Python: pip install playwright")

from arena_util import Server, free_port  # noqa: E402

CHROMIUM = os.environ.get("ARENA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y chromium) "
                "or set ARENA_CHROMIUM to a Chromium binary", allow_module_level=True)

# study seed 5: the first deal gives the participant a crash window (checked below)
OPTIONS = ["--agents", "heuristic", "--seed", "5", "--games-per-person", "2"]


def test_a_person_plays_a_whole_game_in_chromium(tmp_path):
    server = Server(f"sqlite:///{tmp_path}/arena.db", free_port(), OPTIONS)
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(server.url + "/")
            page.wait_for_selector("#consent:not(:empty)")
            assert "research study" in page.inner_text("#consent")
            page.fill("#pseudonym", "Robin")
            assert page.is_disabled("#go")  # consent first
            page.check("#agree")
            page.click("#go")
            page.wait_for_url(re.compile(r"/p/[A-Za-z0-9_-]{43}$"))
            page.goto(page.url + "?delay=40")  # bot moves shown one by one, quickly
            page.click("#start-game")
            crashed = clicks = keys = 0
            for _ in range(200):
                page.wait_for_selector("#decision button.choice:not([disabled]), #verdict")
                if page.query_selector("#verdict"):
                    break
                buttons = page.query_selector_all("#decision button.choice")
                labels = [b.inner_text().split(" ", 1)[1].strip() for b in buttons]
                question = page.inner_text("#question")
                if page.query_selector("#decision.crash"):
                    assert "Will you crash?" in question and labels[0] == "decline to crash"
                    pick = next((i for i, lab in enumerate(labels) if lab.startswith("crash with")), 0) \
                        if not crashed else 0
                    crashed += pick > 0
                else:
                    pick = len(labels) - 1 if labels[0] == "end the turn" else 0
                if pick < 9 and (clicks + keys) % 3 == 2:
                    page.keyboard.press(str(pick + 1))  # the number keys work too
                    keys += 1
                else:
                    buttons[pick].click()
                    clicks += 1
                page.wait_for_function(
                    "q => !document.querySelector('#question') || "
                    "document.querySelector('#question').innerText !== q || "
                    "document.querySelector('#decision button.chosen') === null", arg=question)
            verdict = page.inner_text("#verdict")
            assert verdict in ("You win!", "You lose.", "A draw: you share the lead.")
            assert crashed == 1 and clicks >= 3 and keys >= 1
            assert page.query_selector("#next-game")  # one more game to play in this study
            # a phone-sized screen: nothing wider than the screen
            page.set_viewport_size({"width": 390, "height": 844})
            page.reload()
            page.wait_for_selector("#start-game")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390

            admin = browser.new_page(viewport={"width": 1280, "height": 900})
            admin.goto(server.url + "/admin?token=" + server.admin)
            admin.wait_for_selector("#bots table")
            row = admin.inner_text("#bots tbody tr")
            assert row.split("\t")[:3] == ["1", "heuristic", "1"]
            assert "Robin" in admin.inner_text("#participants")
            admin.click("#participants summary")
            admin.click("#participants a:text('replay')")
            admin.wait_for_selector("#decision")
            assert "decision 1 of" in admin.inner_text("#pos")
            admin.keyboard.press("ArrowRight")
            assert "decision 2 of" in admin.inner_text("#pos")
            assert len(admin.query_selector_all(".player .card")) == 6  # every hand is shown
            admin.click("#last")
            assert "Winner(s): player_0 (human:Robin)" in admin.inner_text("#decision")
            bad = browser.new_page()
            bad.goto(server.url + "/admin?token=wrong")
            bad.wait_for_selector("#error:not(.hidden)")
            assert "admin token" in bad.inner_text("#error")
            assert errors == []
            browser.close()
    finally:
        server.kill()
