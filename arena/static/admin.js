// The results page (admin token in the link): bots ranked by how humans fared, ratings,
// participants' histories, replays, invitations, ledger export and import.
"use strict";

const adminToken = new URLSearchParams(location.search).get("token") || "";
const root = document.getElementById("root");
const errBox = document.getElementById("error");

function showError(msg) { errBox.textContent = msg; errBox.classList.toggle("hidden", !msg); }

function table(head, rows, numeric) {
  numeric = numeric || [];
  return el("div", { class: "scroll" }, el("table", { class: "data" },
    el("thead", {}, el("tr", {}, head.map((h, i) => el("th", { class: numeric.includes(i) ? "num" : "" }, h)))),
    el("tbody", {}, rows.map(r => el("tr", {}, r.map((c, i) => el("td", { class: numeric.includes(i) ? "num" : "" }, c)))))));
}

function replayLink(gid) {
  return el("a", { href: "/admin/replay/" + gid + "?token=" + encodeURIComponent(adminToken) }, "replay");
}

function hoards(scores, seat) {
  return scores[seat] + " vs " + scores.filter((_, p) => p !== seat).join(", ");
}

function outcome(o) { return el("span", { class: "outcome-" + o }, o); }

// a score (mean reward) with the half-width of its 95% interval, or "-"; n games: one game has
// no interval
function score(mean, ci, n) {
  if (mean === null || mean === undefined) return "-";
  const m = (mean >= 0 ? "+" : "") + mean.toFixed(3);
  return n < 2 || !ci ? m + " (no interval: 1 game)" : m + " ± " + ((ci[1] - ci[0]) / 2).toFixed(3);
}

function half(lo, hi) { return lo === null || lo === undefined ? null : [lo, hi]; }

async function post(path, body) {
  return api("POST", path, adminToken, body);
}

async function load() {
  let s;
  try { s = await api("GET", "/api/admin/results", adminToken); } catch (e) { showError(e.message); return; }
  showError("");
  document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
  const st = s.study;
  const summary = el("div", { class: "panel" }, el("h2", {}, "Study"),
    el("p", {}, "Bots: " + st.agents.join(", ") + " · " + st.players + " players · " + st.games_per_person +
      " game(s) per person · study seed " + st.seed),
    el("p", {}, s.participants_joined + " participant(s) · " + s.games_finished + " finished game(s) · " +
      s.games_playing + " in play"),
    el("p", { class: "muted small" }, "Participant link: " + location.origin + "/"),
    el("p", { class: "muted small", id: "recruitment-link" }, "Recruitment link (Prolific's placeholders): " + location.origin + "/?" +
      [st.id_params[0]].concat(st.keep_params).map(k => k + "={{%" + k + "%}}").join("&")));

  const bots = el("div", { class: "panel", id: "bots" }, el("h2", {}, "Bots, ranked by how the humans fared against them"),
    el("p", { class: "muted small" }, "Rank 1 is the bot the humans found hardest (lowest human win rate). " +
      "Intervals are 95% Wilson intervals. A fair share at this table is " +
      (st.players ? pct(1 / st.players) : "-") + "."),
    el("p", { class: "muted small", id: "corrected-note" }, "Human score: the humans' mean reward (+1 a sole win, 0 a shared win, " +
      "−1 a loss) ± its 95% interval; corrected: the same with the luck of the cards, contests and random " +
      "bots taken out of each game (an unbiased estimate that needs fewer games for the same certainty). " +
      "A corrected score can lie outside −1..+1: each game's luck is subtracted from its reward, so a game " +
      "lost despite good luck scores below −1 and one won despite bad luck above +1; only the average is " +
      "on the reward's scale. One game has no interval."),
    table(["rank", "bot", "games", "human wins", "draws", "human losses", "human win rate", "95% CI",
      "human score", "corrected", "people"],
      s.bots.map(b => [b.rank || "-", b.bot, b.human_games, b.human_wins, b.draws, b.human_losses,
        b.human_games ? [el("span", { class: "bar", style: null, "data-w": b.human_win_rate }), " ", pct(b.human_win_rate)] : "-",
        b.human_games ? "[" + pct(b.ci95[0]) + ", " + pct(b.ci95[1]) + "]" : "-",
        score(b.human_score, b.human_score_ci95, b.human_games),
        score(b.corrected_human_score, b.corrected_human_ci95, b.human_games),
        b.participants]),
      [0, 2, 3, 4, 5, 6, 8, 9, 10]));
  bots.querySelectorAll(".bar").forEach(b => { b.style.width = Math.round(60 * Number(b.dataset.w)) + "px"; });

  const ratings = el("div", { class: "panel" }, el("h2", {}, "OpenSkill ratings (Plackett-Luce), humans and bots together"),
    table(["", "name", "kind", "mu", "sigma", "ordinal"],
      s.ratings.map((r, i) => [i + 1, r.name, r.kind, r.mu.toFixed(2), r.sigma.toFixed(2), r.ordinal.toFixed(2)]),
      [0, 3, 4, 5]));

  const people = el("div", { class: "panel", id: "participants" }, el("h2", {}, "Participants"),
    s.participants.length ? s.participants.map(p => el("details", {},
      el("summary", {}, el("b", {}, p.participant), " · " + p.games + " game(s), " + p.wins + " win(s), " +
        p.draws + " draw(s) · win rate " + pct(p.win_rate) + " [" + pct(p.ci95[0]) + ", " + pct(p.ci95[1]) + "]"),
      table(["game", "bot", "seat", "dragon", "result", "hoards (human vs bot)", "turns", "finished", ""],
        p.history.map(h => [h.game, h.bot, "player_" + h.seat, h.dragon, outcome(h.outcome), hoards(h.scores, h.seat),
          h.turns, fmtTime(h.finished), replayLink(h.game)]), [0, 6])))
      : el("p", { class: "muted" }, "No finished games yet."));

  const linkOut = el("div", { class: "small", id: "links" });
  const people2 = el("div", { class: "panel", id: "people" }, el("h2", {}, "Participants: study data"),
    el("p", { class: "muted small" }, "Score and corrected score over each person's scored games, with 95% intervals. " +
      "A new link leaves the old one working; withdrawing deletes the person's games, decisions and answers " +
      "and keeps only a record that it was done."),
    table(["id", "pseudonym", "external id", "consent", "completed", "practice", "games", "score", "corrected",
      "attention checks", "", ""],
      s.people.map(p => [p.participant_id, p.pseudonym, p.external_id || "-",
        p.consented ? "v" + (p.consent_version || "?") + " " + fmtTime(p.consented) : "not yet",
        p.completed ? fmtTime(p.completed) : "-", p.practice_games, p.games,
        score(p.score, half(p.score_ci_low, p.score_ci_high), p.games),
        score(p.corrected_score, half(p.corrected_ci_low, p.corrected_ci_high), p.games),
        p.attention_checks ? p.attention_passed + " of " + p.attention_checks + " passed" : "-",
        el("button", { class: "small", "data-link": p.participant_id, onclick: async () => {
          try { const r = await post("/api/admin/participants/" + p.participant_id + "/link");
            linkOut.append(el("div", {}, p.pseudonym + ": " + location.origin + r.url)); } catch (e) { showError(e.message); }
        } }, "New link"),
        el("button", { class: "small", "data-withdraw": p.participant_id, onclick: async () => {
          if (!confirm("Delete every game, decision and answer of " + p.pseudonym + "? This cannot be undone.")) return;
          try { await post("/api/admin/participants/" + p.participant_id + "/withdraw"); load(); } catch (e) { showError(e.message); }
        } }, "Withdraw")]),
      [0, 5, 6]), linkOut,
    s.withdrawals.length ? el("p", { class: "muted small", id: "withdrawals" }, "Withdrawn: " + s.withdrawals.map(w =>
      "participant " + w.participant_id + " on " + fmtTime(w.at) + " (" + w.games + " game(s), " + w.answers + " answer(s) deleted)").join("; ")) : null);

  const answers = el("div", { class: "panel", id: "answers" }, el("h2", {}, "Questionnaire answers"),
    s.answers.length ? table(["participant", "stage", "game", "opponent", "question", "answer", "attention check"],
      s.answers.map(a => [a.pseudonym, a.stage, a.game || "-", a.opponent || "-", el("span", { title: a.text || "" }, a.question),
        a.answer, a.attention_check === null ? "" : (a.passed ? "passed" : "failed (expected " + a.attention_check + ")")]))
      : el("p", { class: "muted" }, "No answers yet."));

  const games = el("div", { class: "panel" }, el("h2", {}, "Games"),
    table(["game", "participant", "bot", "seat", "deal", "result", "hoards (human vs bot)", "finished", ""],
      s.games.slice().reverse().map(g => [g.game, g.participant, g.bot, "player_" + g.seat,
        g.deal === null ? "import" : g.deal, outcome(g.outcome), hoards(g.scores, g.seat), fmtTime(g.finished), replayLink(g.game)]),
      [0, 4]),
    s.playing.length ? el("p", { class: "muted small" }, "In play: " + s.playing.map(g =>
      "game " + g.game + " (" + g.bot + ", " + g.decisions + " decisions)").join("; ")) : null);

  const name = el("input", { type: "text", id: "invite-name", placeholder: "pseudonym" });
  const invited = el("div", { class: "small", id: "invited" });
  const file = el("input", { type: "file", id: "import-file", accept: ".jsonl,.json,.txt" });
  const imported = el("div", { class: "small", id: "imported" });
  const tools = el("div", { class: "panel" }, el("h2", {}, "Invitations and ledger"),
    el("p", {}, name, " ", el("button", { onclick: async () => {
      try {
        const r = await api("POST", "/api/admin/invite", adminToken, { pseudonym: name.value });
        invited.append(el("div", {}, r.pseudonym + ": " + location.origin + r.url));
      } catch (e) { showError(e.message); }
    } }, "Create an invitation link")), invited,
    el("p", { id: "exports" }, "Export for analysis: ", ["participants", "games", "decisions", "answers"].map(n =>
      [el("a", { class: "button", href: "/api/admin/export/" + n + ".csv?token=" + encodeURIComponent(adminToken) }, n + ".csv"), " "]),
      el("a", { class: "button", href: "/api/admin/export/study.json?token=" + encodeURIComponent(adminToken) }, "everything (JSON)")),
    el("p", {}, el("a", { class: "button", href: "/api/admin/export?token=" + encodeURIComponent(adminToken) },
      "Export the JSONL ledger"), " ",
      el("span", { class: "muted small" }, "(the format evaluate.py --ledger reads, and this page imports)")),
    el("p", {}, "Import a JSONL ledger: ", file, " ", el("button", { onclick: async () => {
      if (!file.files.length) return;
      const text = await file.files[0].text();
      const r = await fetch("/api/admin/import", { method: "POST", body: text,
        headers: { "Authorization": "Bearer " + adminToken } });
      const d = await r.json();
      if (!r.ok) { showError(d.detail); return; }
      imported.textContent = d.imported + " game(s) imported, " + d.already_there + " already there" +
        (d.skipped.length ? "; skipped: " + d.skipped.join("; ") : "");
      load();
    } }, "Import")), imported);

  root.replaceChildren(summary, bots, ratings, people2, answers, people, games, tools);
}

load();
setInterval(() => { if (!document.hidden && !document.activeElement.matches("input")) load(); }, 30000);
