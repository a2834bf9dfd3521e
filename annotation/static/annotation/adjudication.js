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
  function save() {
    const draft = { verdict: checked("verdict"), relevance: checked("relevance"), reason: reason ? reason.value : "" };
    try { localStorage.setItem(key, JSON.stringify(draft)); } catch (e) { /* storage full or off */ }
  }
  let draft = null;
  try { draft = JSON.parse(localStorage.getItem(key) || "null"); } catch (e) { draft = null; }
  if (draft) {
    for (const name of ["verdict", "relevance"]) {
      const value = /^[a-z0-9_]+$/.test(String(draft[name] || "")) ? draft[name] : "";
      const el = value && form.querySelector("input[name=" + name + "][value='" + value + "']");
      if (el && !checked(name)) el.checked = true;
    }
    if (reason && draft.reason && !reason.value) reason.value = draft.reason;
  }
  form.addEventListener("input", save);
  form.addEventListener("change", save);
  form.addEventListener("submit", () => { try { localStorage.removeItem(key); } catch (e) { /* ignore */ } });
})();
