// A finished game, decision by decision, with every card shown (admin token in the link).
"use strict";

const adminToken = new URLSearchParams(location.search).get("token") || "";
const gid = location.pathname.split("/").filter(Boolean).pop();
const root = document.getElementById("root");
const slider = document.getElementById("slider");
let rep = null;
let at = 0;

document.getElementById("back").href = "/admin?token=" + encodeURIComponent(adminToken);

function go(i) {
  if (!rep) return;
  at = Math.max(0, Math.min(rep.steps.length - 1, i));
  slider.value = at;
  draw();
}

function draw() {
  const step = rep.steps[at];
  const t = drawTable(step.table, { reveal: true });
  const n = rep.steps.length - 1;
  document.getElementById("pos").textContent = at < n ? "decision " + (at + 1) + " of " + n : "end of the game";
  let dec;
  if (step.decision) {
    const d = step.decision;
    dec = el("div", { class: "decision panel" + (d.crash ? " crash" : ""), id: "decision" },
      el("div", { class: "kind" }, (d.crash ? "Crash window · " : "") + d.name + " (" + d.who + ") decides"),
      el("div", { class: "q" }, d.question),
      d.detail ? el("div", { class: "detail" }, d.detail) : null,
      el("div", { class: "choices" }, d.choices.map((c, i) => el("button", {
        class: c.action === d.chosen ? "chosen" : "", disabled: c.action !== d.chosen },
        el("span", { class: "n" }, String(i + 1)), " ", c.label))));
  } else {
    const r = rep.result;
    dec = el("div", { class: "decision panel", id: "decision" }, el("div", { class: "kind" }, "Game over"),
      el("div", { class: "over" }, r ? "Winner(s): " + r.winners.map(p => "player_" + p + " (" + rep.labels[p] + ")").join(", ") : ""),
      r ? el("p", {}, "Final hoards " + r.scores.join(" – ") + " (" + r.reason + ").") : null);
  }
  const log = el("div", { class: "panel news" }, el("h2", {}, "What happened since the previous decision"),
    step.log.length ? el("ul", { class: "log" }, step.log.map(line => el("li", { class: "new" }, line)))
      : el("p", { class: "muted" }, "nothing public"));
  root.replaceChildren(el("div", { class: "game" }, t.status, dec, t.players, log, t.side));
}

(async () => {
  try {
    rep = await api("GET", "/api/admin/games/" + gid + "/replay", adminToken);
  } catch (e) {
    const err = document.getElementById("error");
    err.textContent = e.message; err.classList.remove("hidden");
    root.replaceChildren();
    return;
  }
  document.getElementById("what").textContent = "replay of game " + rep.game + ": " +
    rep.labels.map((l, p) => "player_" + p + " " + l).join(", ");
  slider.max = rep.steps.length - 1;
  slider.addEventListener("input", () => go(Number(slider.value)));
  document.getElementById("first").onclick = () => go(0);
  document.getElementById("prev").onclick = () => go(at - 1);
  document.getElementById("next").onclick = () => go(at + 1);
  document.getElementById("last").onclick = () => go(rep.steps.length - 1);
  document.addEventListener("keydown", ev => {
    if (ev.key === "ArrowRight") go(at + 1);
    else if (ev.key === "ArrowLeft") go(at - 1);
  });
  go(0);
})();
