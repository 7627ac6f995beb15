// Shared by the pages: building elements, calling the API, drawing the table. No build step.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

async function api(method, path, token, body) {
  const headers = {};
  if (token) headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let r;
  try {
    r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new Error("the study server cannot be reached");  // no status: an outage
  }
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  if (!r.ok) {
    const err = new Error((data && data.detail) || ("the server answered " + r.status));
    err.status = r.status;
    err.outage = r.status === 503 && !(data && data.detail);  // a proxy's answer, not the arena's
    throw err;
  }
  return data;
}

// The server unreachable (no answer, or a proxy's 502/504): a banner says so, every button is
// disabled, and the call is tried again until it gets an answer, which it then returns.
let offlineDisabled = [];

function setOffline(msg) {
  let banner = document.getElementById("outage");
  if (msg) {
    if (!banner) {
      banner = el("div", { id: "outage", class: "outage", role: "alert" });
      document.body.prepend(banner);
    }
    banner.textContent = msg;
    if (!document.body.classList.contains("offline")) {
      document.body.classList.add("offline");
      offlineDisabled = Array.from(document.querySelectorAll("button:not([disabled]), input:not([disabled]), textarea:not([disabled])"));
      offlineDisabled.forEach(b => { b.disabled = true; });
    }
  } else if (document.body.classList.contains("offline")) {
    document.body.classList.remove("offline");
    if (banner) banner.remove();
    offlineDisabled.forEach(b => { b.disabled = false; });
    offlineDisabled = [];
  }
}

function isOutage(e) { return e.status === undefined || e.status === 502 || e.status === 504 || e.outage; }

async function apiRetry(method, path, token, body) {
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await api(method, path, token, body);
      setOffline("");
      return r;
    } catch (e) {
      if (!isOutage(e)) { setOffline(""); throw e; }
      const wait = Math.min(10, 2 + 2 * attempt);
      setOffline("The connection to the study server was lost. Trying again in " + wait +
        " s… Your game is saved: nothing is lost.");
      await new Promise(resolve => setTimeout(resolve, wait * 1000));
    }
  }
}

function affClass(aff) { return aff ? "aff-" + aff : ""; }

function cardBox(c) {
  const kind = c.kind === "crash" ? "crash card" : c.kind === "play" ? "play card" : c.kind;
  return el("div", { class: "card" + (c.kind === "crash" ? " crash" : "") },
    el("div", { class: "cn" }, c.name),
    el("div", { class: "ck" }, [c.affinity ? el("span", { class: affClass(c.affinity) }, c.affinity + " ") : null,
      kind + (c.type ? " · " + c.type : "")]),
    c.text ? el("div", { class: "ct" }, c.text) : null);
}

function pileLine(title, items, fmt) {
  return el("div", { class: "pile" }, el("h3", {}, title),
    items.length ? el("div", { class: "chips" }, items.map(fmt)) : el("div", { class: "muted small" }, "none"));
}

function playerBox(p, reveal) {
  const d = p.dragon;
  const state = d.ready ? el("span", { class: "tag ready" }, "ready") : el("span", { class: "tag tired" }, "tired");
  const notes = [];
  notes.push(p.hand_size + " card" + (p.hand_size === 1 ? "" : "s") + " in hand");
  notes.push(p.cards_left + " Hijinks card" + (p.cards_left === 1 ? "" : "s") + " left this turn");
  if (p.innate_used) notes.push("innate play used");
  const who = p.you ? p.name + " (you)" : p.name + (p.who && p.who !== "you" ? " · " + p.who : "");
  return el("div", { class: "player" + (p.you ? " you" : "") + (p.current ? " current" : ""), "data-seat": p.seat },
    el("div", {}, el("span", { class: "score" }, p.score, el("small", {}, " / 15")), el("span", { class: "pname" }, who)),
    el("div", { class: "dragon" }, el("b", { class: affClass(d.affinity) }, d.name), " ",
      el("span", { class: "muted small" }, "(" + d.affinity + ") "), state),
    el("div", { class: "chips" }, p.hoard.length ? p.hoard.map(t =>
      el("span", { class: "chip", title: "printed value " + t.printed }, t.name, el("b", {}, t.value))) :
      el("span", { class: "muted small" }, "empty hoard")),
    el("div", { class: "abilities" },
      el("div", {}, el("span", { class: "an" }, "Innate play · " + d.play.name + ": "), d.play.text),
      el("div", {}, el("span", { class: "an" }, "Innate crash · " + d.crash.name + ": "), d.crash.text),
      el("div", { class: "muted" }, "Ready again when: " + d.ready_text)),
    el("div", { class: "meta" }, notes.join(" · ")),
    reveal && p.hand ? el("div", { class: "cards" }, p.hand.map(cardBox)) : null);
}

// The table: {status, players, hand, side} elements to place in a page's grid.
function drawTable(t, opts) {
  opts = opts || {};
  const cur = t.players[t.current];
  const status = el("div", { class: "status panel" },
    el("b", {}, "Turn " + t.turn),
    el("span", {}, (cur.you ? "your turn" : cur.name + " to play")),
    el("span", { class: "muted" }, "Havok deck " + t.havok_deck + " · Hijinks deck " + t.hijinks_deck),
    el("span", { class: "scorebar", id: "scorebar" }, t.players.map(p =>
      el("span", { class: p.you ? "mine" : "" }, (p.you ? "you" : (p.who && p.who !== "you" ? p.who : p.name)) + " ",
        el("b", {}, p.score)))),
    el("span", { class: "muted" }, "first to a hoard worth 15 wins"));
  const players = el("div", { class: "players" }, t.players.map(p => playerBox(p, opts.reveal)));
  const hand = opts.reveal ? null : el("div", { class: "hand panel" }, el("h2", {}, "Your hand"),
    t.hand.length ? el("div", { class: "cards" }, t.hand.map(cardBox)) : el("div", { class: "muted" }, "(empty)"),
    t.known_top.length ? el("div", { class: "meta" }, "You know the top of the Havok deck: " +
      t.known_top.map(c => c.name + (c.kind === "treasure" ? " (worth " + c.value + ")" : "")).join(", ")) : null);
  // a treasure is named with its worth wherever it is shown
  const chip = c => el("span", { class: "chip", title: c.text || null }, c.name + (c.count > 1 ? " ×" + c.count : ""),
    c.kind === "treasure" ? el("b", {}, c.value) : null);
  const side = el("div", { class: "panel piles" },
    pileLine("Discard pile", t.discard, chip),
    pileLine("Trash heap", t.trash, chip),
    pileLine("Past events", t.past_events, chip),
    t.canceled.length ? pileLine("Canceled (back at the end of the turn)", t.canceled,
      c => el("span", { class: "chip" }, t.players[c.owner].name + "'s " + c.name)) : null,
    opts.reveal && t.havok_order ? el("div", { class: "pile order" }, el("h3", {}, "Havok deck, top first"),
      t.havok_order.join(", ") || "empty") : null,
    opts.reveal && t.hijinks_order ? el("div", { class: "pile order" }, el("h3", {}, "Hijinks deck, top first"),
      t.hijinks_order.join(", ") || "empty") : null);
  return { status, players, hand, side };
}

// every page's header: the rules, one click away
function rulesLink() {
  const header = document.querySelector("header.top");
  if (header && !document.getElementById("rules-link")) {
    header.append(el("a", { class: "who", id: "rules-link", href: "/rules", target: "_blank", rel: "noopener" }, "Rules and cards"));
  }
}
document.addEventListener("DOMContentLoaded", rulesLink);

function pct(x) { return (100 * x).toFixed(1) + "%"; }

function fmtTime(iso) { return iso ? iso.replace("T", " ").slice(0, 16) : ""; }
