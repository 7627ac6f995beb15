// The participant's page: the study step by step, as the server says (consent, questions, the
// tutorial, practice and scored games, the completion), and the game itself.
"use strict";

const token = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const params = new URLSearchParams(location.search);
const DELAY = params.has("delay") ? Math.max(0, Number(params.get("delay")) || 0) : 900;
const root = document.getElementById("root");
const errBox = document.getElementById("error");
let study = null;      // the study's texts
let state = null;      // the last game state the server sent
let busy = false;      // a decision is on its way, or bot moves are being shown
let skipping = false;  // the participant asked to skip the bot moves' animation
let shownAt = 0;       // when the pending decision's buttons were drawn (performance.now())

function showError(msg) {
  errBox.textContent = msg;
  errBox.classList.toggle("hidden", !msg);
}

function setProgress(text) { document.getElementById("progress").textContent = text || ""; }

function panel(title, ...children) {
  return el("div", { class: "panel" }, el("h2", {}, title), ...children);
}

async function start() {
  showError("");
  let me;
  try {
    me = await apiRetry("GET", "/api/me", token);
    if (!study) study = await apiRetry("GET", "/api/study");
  } catch (e) {
    root.replaceChildren(panel("This link does not work", el("p", {}, e.message),
      el("p", {}, "If you came from a recruitment site, open the study from its link again.")));
    return;
  }
  document.getElementById("who").textContent = me.pseudonym;
  const step = me.step;
  const n = step.of ? (step.step === "practice" ? "practice game " : "game ") + Math.min(step.number, step.of) + " of " + step.of : "";
  setProgress(n);
  if (step.step === "consent") return showConsent();
  if (step.step === "questions") return showQuestions(step, me.questions);
  if (step.step === "done") return showDone(step);
  if (step.game) return load(step.game);
  if (step.step === "tutorial") return showTutorialIntro();
  showLobby(me, step);
}

function showConsent() {
  const box = el("input", { type: "checkbox", id: "agree" });
  const go = el("button", { class: "primary", id: "consent-go", disabled: true, onclick: async () => {
    try { await apiRetry("POST", "/api/consent", token, { version: study.consent_version }); start(); }
    catch (e) { showError(e.message); }
  } }, "Agree and continue");
  box.addEventListener("change", () => { go.disabled = !box.checked; });
  root.replaceChildren(panel(study.title,
    el("p", { class: "consent", id: "consent" }, study.consent),
    el("p", { class: "muted small" }, "Consent form version " + study.consent_version),
    el("p", {}, el("label", {}, box, " I have read this and agree to take part.")), go));
}

function questionField(q) {
  const name = "q-" + q.id;
  const req = q.required ? el("span", { class: "muted" }, " *") : null;
  const text = q.text;
  let input;
  if (q.type === "likert" || q.type === "choice") {
    const values = q.type === "likert" ? Array.from({ length: q.scale }, (_, i) => String(i + 1)) : q.options;
    input = el("div", { class: "options" + (q.type === "likert" ? " likert" : "") },
      q.type === "likert" && q.low ? el("span", { class: "muted small" }, q.low) : null,
      values.map(v => el("label", { class: "option" }, el("input", { type: "radio", name, value: v }), " " + v)),
      q.type === "likert" && q.high ? el("span", { class: "muted small" }, q.high) : null);
  } else if (q.type === "number") {
    input = el("input", { type: "number", name, min: q.min, max: q.max, step: 1, class: "num" });
  } else {
    input = el("textarea", { name, rows: 3, maxlength: 1000 });
  }
  return el("fieldset", { class: "question", "data-q": q.id }, el("legend", {}, text, req), input);
}

function showQuestions(step, questions) {
  const fill = t => t.replace("{opponent}", step.opponent || "your opponent");
  questions = questions.map(q => Object.assign({}, q, { text: fill(q.text) }));
  const title = { before: "Before the games", after_game: "About the game you just played",
    end: "Last questions" }[step.stage];
  const form = el("form", { id: "questions" }, questions.map(questionField),
    el("button", { class: "primary", id: "questions-go", type: "submit" }, "Continue"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const answers = {};
    for (const q of questions) {
      const f = form.querySelector('[name="q-' + q.id + '"]:checked') ||
        form.querySelector('input[name="q-' + q.id + '"]:not([type=radio]), textarea[name="q-' + q.id + '"]');
      const v = f ? f.value.trim() : "";
      if (!v && q.required) { showError("Please answer: " + q.text); return; }
      if (v) answers[q.id] = v;
    }
    try {
      await apiRetry("POST", "/api/answers", token, { stage: step.stage, game: step.game || 0, answers });
      start();
    } catch (e) { showError(e.message); }
  });
  root.replaceChildren(panel(title, form));
}

function showTutorialIntro() {
  root.replaceChildren(panel("How to play",
    study.instructions ? el("p", { class: "consent", id: "instructions" }, study.instructions) : null,
    el("p", {}, "First, a short tutorial game: a coach tells you what each decision is and suggests a " +
      "choice (highlighted). Follow it to flip, play a card, use your dragon's innate ability and crash. " +
      "The tutorial is not scored."),
    el("p", { class: "muted small" }, "The rules and every card's text are under \"Rules and cards\" at the top."),
    el("button", { class: "primary", id: "start-game", onclick: newGame }, "Start the tutorial")));
}

function showLobby(me, step) {
  const practice = step.step === "practice";
  const rows = me.history.map((h, i) => el("li", {}, "Game " + (i + 1) + (h.opponent ? " against " + h.opponent : "") + ": ",
    el("span", { class: "outcome-" + h.outcome }, h.outcome), " · final hoards " + h.scores.join(" – ")));
  root.replaceChildren(el("div", { class: "panel" },
    el("h2", {}, practice ? "A practice game" : "Ready for a game?"),
    el("p", {}, practice
      ? "Practice game " + step.number + " of " + step.of + ": it is not scored. Take your time to try things out."
      : "You have played " + me.finished + " of " + me.games_per_person + " games. Each game is against " +
        "computer opponents; the first dragon to a hoard worth 15 wins."),
    study.instructions && !study.tutorial ? el("p", { class: "consent", id: "instructions" }, study.instructions) : null,
    rows.length ? el("ul", {}, rows) : null,
    el("p", { class: "muted small" }, "Your own link (bookmark it to come back later): ",
      el("span", { id: "own-link" }, location.origin + location.pathname)),
    el("button", { class: "primary", id: "start-game", onclick: newGame },
      practice ? "Start the practice game" : me.finished ? "Start the next game" : "Start the first game")));
}

function showDone(step) {
  const reveal = step.reveal && Object.keys(step.reveal).length ? el("div", {}, el("p", {}, "Your opponents were:"),
    el("ul", { id: "reveal" }, Object.entries(step.reveal).map(([label, bot]) => el("li", {}, label + ": " + bot)))) : null;
  const code = step.code ? el("p", {}, "Your completion code: ", el("b", { id: "completion-code", class: "code" }, step.code)) : null;
  const back = step.redirect ? el("p", {}, "Taking you back to the recruitment site… ",
    el("a", { id: "redirect-link", href: step.redirect }, "Go there now")) : null;
  root.replaceChildren(el("div", { class: "panel" }, el("h2", {}, "Thank you!"),
    el("p", { id: "all-done" }, "You have completed this study." + (step.redirect ? "" : " You may close this page.")),
    code, reveal, back));
  setProgress("");
  if (step.redirect) setTimeout(() => location.assign(step.redirect), 3000);
}

async function newGame() {
  showError("");
  try { show(await apiRetry("POST", "/api/games", token)); } catch (e) { showError(e.message); }
}

async function load(gid) {
  try { show(await apiRetry("GET", "/api/games/" + gid, token)); } catch (e) { showError(e.message); }
}

function sleep(ms) {
  return new Promise(resolve => {
    const t0 = Date.now();
    const tick = () => (skipping || Date.now() - t0 >= ms) ? resolve() : setTimeout(tick, 30);
    tick();
  });
}

// Bot moves arrive as frames (one per change of the public log): show them one by one.
async function show(s) {
  state = s;
  if (s.kind === "tutorial") setProgress("tutorial");
  else if (s.kind === "practice") setProgress("practice game " + s.practice.number + " of " + s.practice.of);
  else setProgress("game " + Math.min(s.finished_games + (s.over ? 0 : 1), s.games_per_person) + " of " + s.games_per_person);
  const frames = s.frames || [];
  if (frames.length && DELAY > 0) {
    busy = true;
    skipping = false;
    let log = s.log.slice(0, s.news_from);
    for (const f of frames) {
      log = log.concat(f.log);
      render(f.table, log, s.news_from, null, null, true);
      await sleep(DELAY);
    }
    busy = false;
  }
  render(s.table, s.log, s.news_from, s.decision, s.result, false);
}

function coachPanel(tut) {
  if (!tut) return null;
  return el("div", { class: "panel coach", id: "coach" },
    el("div", { class: "kind" }, "Tutorial"),
    el("ul", { class: "goals" }, tut.goals.map(g => el("li", { class: g.done ? "done" : "", "data-goal": g.goal },
      (g.done ? "✔ " : "○ ") + g.text))),
    tut.done ? el("div", {}, el("p", {}, "Well done: you have tried everything a turn offers."),
      el("button", { class: "primary", id: "tutorial-done", onclick: start }, "Finish the tutorial"))
      : el("p", { id: "coach-text" }, tut.text));
}

function decisionPanel(dec, result, playing) {
  if (result) {
    const kind = result.verdict.startsWith("You win") ? "win" : result.verdict.startsWith("You lose") ? "loss" : "draw";
    return el("div", { class: "decision panel", id: "decision" },
      el("div", { class: "kind" }, "Game over"),
      el("div", { class: "over " + kind, id: "verdict" }, result.verdict),
      el("p", {}, "Final hoards: " + result.scores.map((x, p) => state.table.players[p].name +
        (p === state.seat ? " (you)" : " (" + state.table.players[p].who + ")") + " " + x).join(", ") +
        " (" + result.reason + ")."),
      el("button", { class: "primary", id: "next-game", onclick: start }, "Continue"));
  }
  if (playing || !dec) {
    return el("div", { class: "decision panel", id: "decision" },
      el("div", { class: "kind" }, "Opponents' moves"),
      el("p", { class: "waiting" }, "The opponents are playing…"),
      el("button", { id: "skip", onclick: () => { skipping = true; } }, "Show the result now"));
  }
  const suggest = state.tutorial && !state.tutorial.done ? state.tutorial.suggest : null;
  const buttons = dec.choices.map((c, i) => el("button", {
    "data-action": c.action, "data-n": i + 1, class: "choice" + (c.action === suggest ? " suggested" : ""),
    onclick: (ev) => choose(c.action, ev.currentTarget) },
    el("span", { class: "n" }, i < 9 ? String(i + 1) : i === 9 ? "0" : ""), " ", c.label));
  return el("div", { class: "decision panel" + (dec.crash ? " crash" : ""), id: "decision" },
    el("div", { class: "kind" }, dec.crash ? "Crash window: you may crash" : "Your decision"),
    el("div", { class: "q", id: "question" }, dec.question),
    dec.detail ? el("div", { class: "detail" }, dec.detail) : null,
    el("div", { class: "choices" }, buttons),
    el("div", { class: "meta" }, "Keys 1–" + Math.min(9, dec.choices.length) + (dec.choices.length > 9 ? " and 0" : "") + " choose."));
}

function render(table, log, newFrom, dec, result, playing) {
  const t = drawTable(table);
  const items = log.map((line, i) => el("li", {
    class: (i >= newFrom ? "new" : "old") + (line.includes("(you)") ? " mine" : "") }, line));
  if (newFrom > 0 && newFrom < items.length) items.splice(newFrom, 0, el("li", { class: "since" }, "since your last decision"));
  const news = el("div", { class: "panel news" }, el("h2", {}, "What happened"),
    items.length ? el("ul", { class: "log", id: "log" }, items) : el("p", { class: "muted" }, "The game begins."));
  const coach = playing ? null : coachPanel(state && state.tutorial);
  root.replaceChildren(el("div", { class: "game" }, t.status, coach, decisionPanel(dec, result, playing), t.players, news, t.hand, t.side));
  if (dec && !playing) shownAt = performance.now();
  const ul = document.getElementById("log");
  if (ul) ul.scrollTop = ul.scrollHeight;
}

async function choose(action, button) {
  if (busy || !state || !state.decision || document.body.classList.contains("offline")) return;
  busy = true;
  showError("");
  document.querySelectorAll("#decision button.choice").forEach(b => { b.disabled = true; });
  if (button) button.classList.add("chosen");
  const think = Math.round(performance.now() - shownAt);
  try {
    const s = await apiRetry("POST", "/api/games/" + state.game + "/act", token, { step: state.step, action, think_ms: think });
    busy = false;
    await show(s);
  } catch (e) {
    busy = false;
    showError(e.message);
    if (e.status === 409) load(state.game);  // answered elsewhere (or before the outage): show where the game is now
    else render(state.table, state.log, state.news_from, state.decision, state.result, false);
  }
}

document.addEventListener("keydown", (ev) => {
  if (ev.altKey || ev.ctrlKey || ev.metaKey || document.body.classList.contains("offline")) return;
  if (ev.target && ev.target.matches && ev.target.matches("input, textarea")) return;
  if (busy && (ev.key === " " || ev.key === "Escape")) { skipping = true; return; }
  if (!state || !state.decision || busy || !/^[0-9]$/.test(ev.key) || !document.getElementById("question")) return;
  const i = ev.key === "0" ? 9 : Number(ev.key) - 1;
  const c = state.decision.choices[i];
  if (c) {
    ev.preventDefault();
    choose(c.action, document.querySelector('#decision button[data-n="' + (i + 1) + '"]'));
  }
});

start();
