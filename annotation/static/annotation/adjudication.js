// Adjudication queue and item pages: keyboard shortcuts in the review page's conventions (annotation/review.js).
(function () {
  "use strict";

  function typing(t) {
    if (!t || !t.tagName) return false;
    if (t.tagName === "TEXTAREA" || t.tagName === "SELECT") return true;
    return t.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(t.type);
  }
  function modified(e) { return e.ctrlKey || e.metaKey || e.altKey; }

  // --- the queue: j / k move through the rows, Enter opens the focused one (a link) ---------------------
  const queue = document.getElementById("adjudication-queue");
  if (queue) {
    const links = Array.from(queue.querySelectorAll("a.queue-link"));
    document.addEventListener("keydown", (e) => {
      if (typing(e.target) || modified(e) || !links.length) return;
      const key = e.key.toLowerCase();
      if (key !== "j" && key !== "k") return;
      e.preventDefault();
      const at = links.indexOf(document.activeElement);
      const to = key === "j" ? Math.min(at + 1, links.length - 1) : Math.max(at - 1, 0);
      links[at < 0 ? 0 : to].focus();
    });
  }

  // --- one item -------------------------------------------------------------------------------------------
  const root = document.getElementById("adjudication-root");
  if (!root) return;
  const form = document.getElementById("adjudication-form");
  const reason = document.getElementById("id_reason");

  let sending = false;
  if (form) {
    form.addEventListener("submit", (e) => {
      if (sending) { e.preventDefault(); return; }  // a double press sends once
      sending = true;
    });
  }
  function setRadio(name, value) {
    const el = form && form.querySelector("input[name=" + name + "][value='" + value + "']");
    if (el) { el.checked = true; el.dispatchEvent(new Event("change", { bubbles: true })); }
  }
  function go(url) { if (url) window.location.assign(url); }
  const verdictKeys = { c: "correct", i: "incorrect", u: "cannot_tell" };

  // --- open disputes: the verdict settles each one's outcome (the rule is the server's, written on each row as
  // data-when-<verdict>); where it settles nothing the adjudicator says which (p / r), and nothing is preselected.
  const outcomeRows = form ? Array.from(form.querySelectorAll(".dispute-outcome")) : [];
  const outcomeWords = { upheld: "Upheld", rejected: "Rejected" };
  function verdictNow() {
    const el = form && form.querySelector("input[name=verdict]:checked");
    return el ? el.value : "";
  }
  function outcomeRadios(row) { return Array.from(row.querySelectorAll("input[type=radio]")); }
  function settleOutcomes() {
    const verdict = verdictNow();
    for (const row of outcomeRows) {
      const implied = verdict ? row.getAttribute("data-when-" + verdict) || "" : "";
      const now = row.querySelector(".outcome-now");
      row.dataset.open = verdict && !implied ? "yes" : "";
      for (const radio of outcomeRadios(row)) {
        if (implied) {
          radio.checked = radio.value === implied;
          radio.disabled = radio.value !== implied;  // the other outcome would contradict the verdict
          radio.dataset.auto = "yes";
        } else {
          radio.disabled = false;
          if (radio.dataset.auto) { radio.checked = false; delete radio.dataset.auto; }  // no leftover from a verdict
        }
        radio.required = Boolean(verdict && !implied);
      }
      if (now) {
        now.textContent = !verdict ? ""
          : implied ? outcomeWords[implied] + ": the verdict settles it."
          : "The verdict does not settle it: choose upheld (p) or rejected (r).";
      }
    }
  }
  function chooseOutcome(outcome) {
    const open = outcomeRows.filter((row) => row.dataset.open === "yes");
    for (const row of outcomeRows) {
      const now = row.querySelector(".outcome-now");
      if (!open.includes(row)) {
        if (now && !verdictNow()) now.textContent = "Choose the verdict first: it settles most outcomes.";
        continue;
      }
      for (const radio of outcomeRadios(row)) {
        radio.checked = radio.value === outcome;
        delete radio.dataset.auto;
      }
      if (now) now.textContent = outcomeWords[outcome] + ": your choice.";
    }
    if (open.length) form.dispatchEvent(new Event("change", { bubbles: true }));  // the draft keeps it
  }
  if (form && outcomeRows.length) {
    form.addEventListener("change", (e) => { if (e.target && e.target.name === "verdict") settleOutcomes(); });
    form.addEventListener("outcomes:refresh", settleOutcomes);
    settleOutcomes();
  }

  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      const target = (t && t.form) || form;
      if (target) { e.preventDefault(); target.requestSubmit(); }
      return;
    }
    if (e.key === "Escape") { if (document.activeElement) document.activeElement.blur(); return; }
    if (typing(t) || modified(e)) return;
    const key = e.key.toLowerCase();
    if (form && verdictKeys[key]) { e.preventDefault(); setRadio("verdict", verdictKeys[key]); }
    else if (form && /^[1-5]$/.test(key)) { e.preventDefault(); setRadio("relevance", key); }
    else if (form && key === "e" && reason) { e.preventDefault(); reason.focus(); }
    else if (form && outcomeRows.length && (key === "p" || key === "r")) {
      e.preventDefault();
      chooseOutcome(key === "p" ? "upheld" : "rejected");
    }
    else if (e.key === "Enter") {
      // A focused link or button does its own thing; anywhere else Enter records the judgement.
      if (t && (t.tagName === "A" || t.tagName === "BUTTON")) return;
      if (form) { e.preventDefault(); form.requestSubmit(); }
    }
    else if (key === "n" || key === "j") { e.preventDefault(); go(root.dataset.next); }
    else if (key === "k") { e.preventDefault(); go(root.dataset.previous); }
  });
})();

// Draft of the final judgement per item: survives a reload or a look at another tab, dropped once it is sent.
(function () {
  "use strict";
  const root = document.getElementById("adjudication-root");
  const form = document.getElementById("adjudication-form");
  if (!root || !form) return;
  const key = "adjudication-draft:" + root.dataset.uid;
  const reason = document.getElementById("id_reason");
  function checked(name) {
    const el = form.querySelector("input[name=" + name + "]:checked");
    return el ? el.value : "";
  }
  function radioNames() {
    return Array.from(new Set(Array.from(form.querySelectorAll("input[type=radio]")).map((el) => el.name)));
  }
  function save() {
    const draft = { reason: reason ? reason.value : "" };
    for (const name of radioNames()) draft[name] = checked(name);
    try { localStorage.setItem(key, JSON.stringify(draft)); } catch (e) { /* storage full or off */ }
  }
  let draft = null;
  try { draft = JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { draft = null; }
  if (draft) {
    // The verdict first: it settles the disputes' outcomes, and a restored choice must not be undone by it.
    for (const name of radioNames().sort((a, b) => (b === "verdict") - (a === "verdict"))) {
      const value = /^[a-z0-9_]+$/.test(String(draft[name] || "")) ? draft[name] : "";
      const el = value && form.querySelector("input[name=" + name + "][value='" + value + "']");
      if (el && !el.disabled && !checked(name)) el.checked = true;
      if (name === "verdict") form.dispatchEvent(new Event("outcomes:refresh"));
    }
    if (reason && draft.reason && !reason.value) reason.value = draft.reason;
  }
  form.addEventListener("input", save);
  form.addEventListener("change", save);
  form.addEventListener("submit", () => { try { localStorage.removeItem(key); } catch (e) { /* ignore */ } });
})();
