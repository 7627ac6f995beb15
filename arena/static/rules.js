// The rules reference: the game in short and the text of every card and dragon ability.
"use strict";

(async () => {
  const root = document.getElementById("root");
  let r;
  try { r = await apiRetry("GET", "/api/rules"); } catch (e) {
    const err = document.getElementById("error");
    err.textContent = e.message; err.classList.remove("hidden");
    return;
  }
  const dragons = el("div", { class: "panel", id: "dragons" }, el("h2", {}, "Dragons"),
    el("div", { class: "cards" }, r.dragons.map(d => el("div", { class: "card" },
      el("div", { class: "cn " + affClass(d.affinity) }, d.name + " (" + d.affinity + ")"),
      el("div", { class: "ct" }, el("b", {}, "Innate play · " + d.play.name + ": "), d.play.text),
      el("div", { class: "ct" }, el("b", {}, "Innate crash · " + d.crash.name + ": "), d.crash.text),
      el("div", { class: "ck" }, "Ready again when: " + d.ready_text)))));
  const treasures = el("div", { class: "panel", id: "treasures" }, el("h2", {}, "Treasures (Havok deck)"),
    el("div", { class: "chips" }, r.treasures.map(t => el("span", { class: "chip" },
      el("span", { class: affClass(t.affinity) }, t.name), el("b", {}, t.value)))),
    el("p", { class: "muted small" }, "The number is the printed value; in a hoard of the same affinity a treasure is worth one more."));
  const events = el("div", { class: "panel", id: "events" }, el("h2", {}, "Events (Havok deck)"),
    el("div", { class: "cards" }, r.events.map(cardBox)));
  const hijinks = el("div", { class: "panel", id: "hijinks" }, el("h2", {}, "Hijinks cards"),
    el("div", { class: "cards" }, r.hijinks.map(cardBox)));
  root.replaceChildren(dragons, treasures, events, hijinks);
})();
