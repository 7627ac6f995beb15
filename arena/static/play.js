// The participant's page: consent, the lobby between games, and the game itself.
"use strict";

const token = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const params = new URLSearchParams(location.search);
const DELAY = params.has("delay") ? Math.max(0, Number(params.get("delay")) || 0) : 900;
const root = document.getElementById("root");
const errBox = document.getElementById("error");
let state = null;      // the last state the server sent
let busy = false;      // a decision is on its way, or bot moves are being shown
let skipping = false;  // the participant asked to skip the bot moves' animation

function showError(msg) {
  errBox.textContent = msg;
  errBox.classList.toggle("hidden", !msg);
}

function setProgress(done, total) {
  document.getElementById("progress").textContent = total ? "game " + Math.min(done + 1, total) + " of " + total : "";
}

async function start() {
  showError("");
  let me;
  try {
    me = await api("GET", "/api/me", token);
  } catch (e) {
    root.replaceChildren(el("div", { class: "panel" }, el("h2", {}, "This link does not work"),
      el("p", {}, e.message), el("p", {}, el("a", { href: "/" }, "Start from the study's first page"))));
    return;
  }
  document.getElementById("who").textContent = me.pseudonym;
  setProgress(me.finished, me.games_per_person);
  if (!me.consented) return showConsent();
  if (me.current) return load(me.current);
  showLobby(me);
}

async function showConsent() {
  const study = await api("GET", "/api/study");
  const box = el("input", { type: "checkbox", id: "agree" });
  const go = el("button", { class: "primary", id: "consent-go", disabled: true, onclick: async () => {
    try { await api("POST", "/api/consent", token); start(); } catch (e) { showError(e.message); }
  } }, "Agree and continue");
  box.addEventListener("change", () => { go.disabled = !box.checked; });
  root.replaceChildren(el("div", { class: "panel" }, el("h2", {}, study.title),
    el("p", { class: "consent" }, study.consent),
    el("p", {}, el("label", {}, box, " I have read this and agree to take part.")), go));
}

function showLobby(me) {
  const left = me.games_per_person - me.finished;
  const rows = me.history.map((h, i) => el("li", {}, "Game " + (i + 1) + ": ",
    el("span", { class: "outcome-" + h.outcome }, h.outcome), " · final hoards " + h.scores.join(" – ")));
  root.replaceChildren(el("div", { class: "panel" },
    el("h2", {}, left > 0 ? "Ready for a game?" : "Thank you!"),
    el("p", {}, left > 0
      ? "You have played " + me.finished + " of " + me.games_per_person + " games. Each game is against " +
        "computer opponents; the first dragon to a hoard worth 15 wins."
      : "You have played all " + me.games_per_person + " games of this study. You may close this page."),
    rows.length ? el("ul", {}, rows) : null,
    el("p", { class: "muted small" }, "Your own link (bookmark it to come back later): ",
      el("span", { id: "own-link" }, location.origin + location.pathname)),
    left > 0 ? el("button", { class: "primary", id: "start-game", onclick: newGame },
      me.finished ? "Start the next game" : "Start the first game") : null));
}

async function newGame() {
  showError("");
  try { show(await api("POST", "/api/games", token)); } catch (e) { showError(e.message); }
}

async function load(gid) {
  try { show(await api("GET", "/api/games/" + gid, token)); } catch (e) { showError(e.message); }
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
  setProgress(s.finished_games, s.games_per_person);
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

function decisionPanel(dec, result, playing) {
  if (result) {
    const kind = result.verdict.startsWith("You win") ? "win" : result.verdict.startsWith("You lose") ? "loss" : "draw";
    const more = state.finished_games < state.games_per_person;
    return el("div", { class: "decision panel", id: "decision" },
      el("div", { class: "kind" }, "Game over"),
      el("div", { class: "over " + kind, id: "verdict" }, result.verdict),
      el("p", {}, "Final hoards: " + result.scores.map((x, p) => "player_" + p + (p === state.seat ? " (you)" : "") + " " + x).join(", ") +
        " (" + result.reason + ")."),
      more ? el("button", { class: "primary", id: "next-game", onclick: newGame }, "Start the next game")
           : el("p", { id: "all-done" }, "That was your last game of this study. Thank you for playing!"));
  }
  if (playing || !dec) {
    return el("div", { class: "decision panel", id: "decision" },
      el("div", { class: "kind" }, "Opponents' moves"),
      el("p", { class: "waiting" }, "The bots are playing…"),
      el("button", { id: "skip", onclick: () => { skipping = true; } }, "Show the result now"));
  }
  const buttons = dec.choices.map((c, i) => el("button", {
    "data-action": c.action, "data-n": i + 1, class: "choice",
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
  root.replaceChildren(el("div", { class: "game" }, t.status, decisionPanel(dec, result, playing), t.players, news, t.hand, t.side));
  const ul = document.getElementById("log");
  if (ul) ul.scrollTop = ul.scrollHeight;
}

async function choose(action, button) {
  if (busy || !state || !state.decision) return;
  busy = true;
  showError("");
  document.querySelectorAll("#decision button.choice").forEach(b => { b.disabled = true; });
  if (button) button.classList.add("chosen");
  try {
    const s = await api("POST", "/api/games/" + state.game + "/act", token, { step: state.step, action });
    busy = false;
    await show(s);
  } catch (e) {
    busy = false;
    showError(e.message);
    if (e.status === 409) load(state.game);  // answered elsewhere: show where the game is now
    else render(state.table, state.log, state.news_from, state.decision, state.result, false);
  }
}

document.addEventListener("keydown", (ev) => {
  if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
  if (busy && (ev.key === " " || ev.key === "Escape")) { skipping = true; return; }
  if (!state || !state.decision || busy || !/^[0-9]$/.test(ev.key)) return;
  const i = ev.key === "0" ? 9 : Number(ev.key) - 1;
  const c = state.decision.choices[i];
  if (c) {
    ev.preventDefault();
    choose(c.action, document.querySelector('#decision button[data-n="' + (i + 1) + '"]'));
  }
});

start();
