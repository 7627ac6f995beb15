// The study's first page. A recruitment link (with the participant id, e.g. ?PROLIFIC_PID=...)
// goes straight to the participant's own page, where consent comes first; otherwise the consent
// text and a pseudonym, unless the study takes people only through the recruitment site.
"use strict";

(async () => {
  const err = document.getElementById("error");
  const name = document.getElementById("pseudonym");
  const agree = document.getElementById("agree");
  const go = document.getElementById("go");
  const form = document.getElementById("join");
  const fail = (e) => { err.textContent = e.message; err.classList.remove("hidden"); };
  const update = () => { go.disabled = !(agree.checked && name.value.trim()); };
  name.addEventListener("input", update);
  agree.addEventListener("change", update);
  let s;
  try { s = await apiRetry("GET", "/api/study"); } catch (e) { fail(e); return; }
  document.getElementById("title").textContent = s.title;
  const params = Object.fromEntries(new URLSearchParams(location.search));
  if (s.id_params.some(k => (params[k] || "").trim())) {
    form.classList.add("hidden");
    document.getElementById("consent").textContent = "";
    document.getElementById("entering").classList.remove("hidden");
    try {
      const r = await apiRetry("POST", "/api/enter", null, { params });
      location.replace(r.url);  // the participant's own page; the same id always finds it again
    } catch (e) { fail(e); }
    return;
  }
  if (s.require_id) {
    form.classList.add("hidden");
    document.getElementById("consent").textContent = "";
    document.getElementById("use-link").classList.remove("hidden");
    return;
  }
  document.getElementById("consent").textContent = s.consent;
  document.getElementById("consent-version").textContent = "Consent form version " + s.consent_version;
  document.getElementById("games").textContent = "You will play " + s.games_per_person + " game" +
    (s.games_per_person === 1 ? "" : "s") + " with " + s.players + " players at the table.";
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const r = await apiRetry("POST", "/api/join", null,
        { pseudonym: name.value, consent: agree.checked, consent_version: s.consent_version });
      location.assign(r.url);  // the participant's own link: bookmark it to come back
    } catch (e) { fail(e); }
  });
})();
