// The study's first page: consent and a pseudonym, then the participant's own link.
"use strict";

(async () => {
  const err = document.getElementById("error");
  const name = document.getElementById("pseudonym");
  const agree = document.getElementById("agree");
  const go = document.getElementById("go");
  const update = () => { go.disabled = !(agree.checked && name.value.trim()); };
  name.addEventListener("input", update);
  agree.addEventListener("change", update);
  try {
    const s = await api("GET", "/api/study");
    document.getElementById("title").textContent = s.title;
    document.getElementById("consent").textContent = s.consent;
    document.getElementById("games").textContent = "You will play " + s.games_per_person + " game" +
      (s.games_per_person === 1 ? "" : "s") + " with " + s.players + " players at the table.";
  } catch (e) { err.textContent = e.message; err.classList.remove("hidden"); }
  document.getElementById("join").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const r = await api("POST", "/api/join", null, { pseudonym: name.value, consent: agree.checked });
      location.assign(r.url);  // the participant's own link: bookmark it to come back
    } catch (e) { err.textContent = e.message; err.classList.remove("hidden"); }
  });
})();
