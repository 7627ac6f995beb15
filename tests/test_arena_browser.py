"""A whole study in a real browser: headless Chromium (Debian's ``chromium`` package) driven by
Playwright through ``executable_path``, since no browser can be downloaded here. A participant
comes through a recruitment link (``PROLIFIC_PID``), agrees to the consent form, answers the
questions, plays the coached tutorial, a practice game and a scored game (by clicks and number
keys, with a crash in a crash window), answers the questions after it and at the end, and is sent
to the completion redirect; then the admin page shows the person, the answers and the replay."""

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

# study seed 5: the first scored deal gives the participant a crash window (checked below)
STUDY = """
title = "A browser study"
bots = ["heuristic"]
seed = 5
games_per_person = 1
[consent]
version = "b-1"
text = "This is a research study of how people play."
[instructions]
text = "Race to a hoard worth 15."
practice_games = 1
[recruitment]
require_id = true
completion_code = "DONE-77"
redirect_url = "http://127.0.0.1:PORT/healthz?cc={code}"
[blinding]
reveal_at_end = true
[[questions.before]]
id = "age"
text = "How old are you?"
type = "number"
min = 18
[[questions.before]]
id = "games"
text = "How often do you play card games?"
type = "choice"
options = ["Never", "Weekly"]
[[questions.after_game]]
id = "skill"
text = "How skilled was {opponent}?"
type = "likert"
scale = 5
[[questions.end]]
id = "attention"
text = "Choose 'Often'."
type = "choice"
options = ["Never", "Often"]
expect = "Often"
"""


def play(page, crash: bool, counts: dict) -> None:
    """Answer decisions until the game is over (or the tutorial done): the coach's suggestion where
    there is one, a crash at the first chance if ``crash``, the number keys now and then."""
    for _ in range(300):
        page.wait_for_selector("#decision button.choice:not([disabled]), #verdict, #tutorial-done")
        if page.query_selector("#verdict, #tutorial-done"):
            return
        buttons = page.query_selector_all("#decision button.choice")
        labels = [b.inner_text().split(" ", 1)[1].strip() for b in buttons]
        question = page.inner_text("#question")
        suggested = page.query_selector_all("#decision button.choice.suggested")
        if suggested:
            pick = int(suggested[0].get_attribute("data-n")) - 1
        elif page.query_selector("#decision.crash"):
            assert "Will you crash?" in question and labels[0] == "decline to crash"
            pick = next((i for i, lab in enumerate(labels) if lab.startswith("crash with")), 0) \
                if crash and not counts["crashed"] else 0
            counts["crashed"] += pick > 0
        else:
            pick = len(labels) - 1 if labels[0] == "end the turn" else 0
        if pick < 9 and (counts["clicks"] + counts["keys"]) % 3 == 2:
            page.keyboard.press(str(pick + 1))  # the number keys work too
            counts["keys"] += 1
        else:
            buttons[pick].click()
            counts["clicks"] += 1
        page.wait_for_function(
            "q => !document.querySelector('#question') || "
            "document.querySelector('#question').innerText !== q || "
            "document.querySelector('#decision button.chosen') === null", arg=question)
    raise AssertionError("the game did not end")


def test_a_whole_study_from_a_recruitment_link_in_chromium(tmp_path):
    port = free_port()
    study = tmp_path / "study.toml"
    study.write_text(STUDY.replace("PORT", str(port)), encoding="utf-8")
    server = Server(f"sqlite:///{tmp_path}/arena.db", port, ["--study", str(study)])
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            # without a recruitment id the study does not let anyone in
            page.goto(server.url + "/")
            page.wait_for_selector("#use-link:not(.hidden)")
            assert page.is_hidden("#join")
            page.goto(server.url + "/?PROLIFIC_PID=60aa0bb1cc2dd3&STUDY_ID=st1&SESSION_ID=se1")
            page.wait_for_url(re.compile(r"/p/[A-Za-z0-9_-]{43}$"))
            page.goto(page.url + "?delay=40")  # bot moves shown one by one, quickly
            page.wait_for_selector("#consent")
            assert "research study" in page.inner_text("#consent") and "version b-1" in page.inner_text("main")
            assert page.is_disabled("#consent-go")  # agreeing first
            page.check("#agree")
            page.click("#consent-go")
            page.wait_for_selector("#questions")
            page.click("#questions-go")  # nothing answered: the page asks
            assert "Please answer: How old are you?" in page.inner_text("#error")
            page.fill('input[name="q-age"]', "34")
            page.check('input[name="q-games"][value="Weekly"]')
            page.click("#questions-go")
            # the tutorial, led by the coach, then its end
            page.wait_for_selector("#instructions")
            assert "Race to a hoard" in page.inner_text("#instructions")
            page.click("#start-game")
            page.wait_for_selector("#coach")
            counts = {"crashed": 0, "clicks": 0, "keys": 0}
            play(page, False, counts)
            assert len(page.query_selector_all("#coach .goals li.done")) == 4
            page.click("#tutorial-done")
            # the rules reference is one click away
            with page.expect_popup() as popup:
                page.click("#rules-link")
            rules = popup.value
            rules.wait_for_selector("#hijinks .card")
            assert "Sticky Claws" in rules.inner_text("#hijinks") and "Amber" in rules.inner_text("#dragons")
            rules.close()
            # a practice game
            page.wait_for_selector("#start-game")
            assert "Practice game 1 of 1" in page.inner_text("main")
            page.click("#start-game")
            # an outage: the server dies at a decision; the page says so, disables its buttons and
            # goes on by itself when the server is back (with the same admin link)
            page.wait_for_selector("#decision button.choice:not([disabled])")
            question = page.inner_text("#question")
            server.kill()
            page.click("#decision button.choice")
            page.wait_for_selector("#outage")
            assert "connection to the study server was lost" in page.inner_text("#outage")
            assert all(b.is_disabled() for b in page.query_selector_all("button"))
            admin_link = server.admin
            server = Server(f"sqlite:///{tmp_path}/arena.db", port, ["--study", str(study)])
            assert server.admin == admin_link
            page.wait_for_selector("#outage", state="detached", timeout=30_000)
            page.wait_for_function("q => !document.querySelector('#question') || "
                                   "document.querySelector('#question').innerText !== q", arg=question)
            play(page, False, counts)
            assert page.inner_text("#progress") == "practice game 1 of 1"
            page.click("#next-game")
            # the scored game, with a crash, against a blinded opponent
            page.wait_for_selector("#start-game")
            page.click("#start-game")
            page.wait_for_selector("#decision")
            assert "Opponent A" in page.inner_text(".players") and "heuristic" not in page.content()
            # on a phone the scores stay in a bar above the decision while the page scrolls
            page.set_viewport_size({"width": 390, "height": 844})
            bar, decision = page.locator("#scorebar").bounding_box(), page.locator("#decision").bounding_box()
            assert bar["y"] < decision["y"] and "you" in page.inner_text("#scorebar")
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            assert abs(page.locator(".status").bounding_box()["y"]) < 2
            page.set_viewport_size({"width": 1280, "height": 900})
            play(page, True, counts)
            verdict = page.inner_text("#verdict")
            assert verdict in ("You win!", "You lose.", "A draw: you share the lead.")
            assert counts["crashed"] == 1 and counts["clicks"] >= 3 and counts["keys"] >= 1
            # a phone-sized screen: nothing wider than the screen, the score bar above the decision
            page.set_viewport_size({"width": 390, "height": 844})
            page.reload()
            page.wait_for_selector("#questions")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            assert "How skilled was Opponent A?" in page.inner_text("#questions")
            page.check('input[name="q-skill"][value="4"]')
            page.click("#questions-go")
            page.wait_for_selector('input[name="q-attention"]')
            page.check('input[name="q-attention"][value="Often"]')
            page.click("#questions-go")
            page.wait_for_selector("#completion-code")
            assert page.inner_text("#completion-code") == "DONE-77"
            assert "Opponent A: heuristic" in page.inner_text("#reveal")
            page.wait_for_url(re.compile(r"/healthz\?cc=DONE-77$"), timeout=10_000)
            page.close()

            admin = browser.new_page(viewport={"width": 1280, "height": 900})
            admin.on("pageerror", lambda e: errors.append(str(e)))
            admin.goto(server.url + "/admin?token=" + server.admin)
            admin.wait_for_selector("#bots table")
            row = admin.inner_text("#bots tbody tr")
            assert row.split("\t")[:3] == ["1", "heuristic", "1"]
            people = admin.inner_text("#people")
            assert "60aa0bb1cc2dd3" in people and "vb-1" in people and "1 of 1 passed" in people
            assert "How skilled" not in admin.inner_text("#answers")  # the question's id, its text on hover
            assert "skill" in admin.inner_text("#answers") and "passed" in admin.inner_text("#answers")
            # the corrected column is not clipped: the page is as wide as its widest table
            assert admin.evaluate("document.documentElement.scrollWidth") <= 1280
            admin.click("#participants summary")
            admin.click("#participants a:text('replay')")
            admin.wait_for_selector("#decision")
            assert "decision 1 of" in admin.inner_text("#pos")
            admin.keyboard.press("ArrowRight")
            assert "decision 2 of" in admin.inner_text("#pos")
            assert len(admin.query_selector_all(".player .card")) == 6  # every hand is shown
            bad = browser.new_page()
            bad.goto(server.url + "/admin?token=wrong")
            bad.wait_for_selector("#error:not(.hidden)")
            assert "admin token" in bad.inner_text("#error")
            assert errors == []
            browser.close()
    finally:
        server.kill()
