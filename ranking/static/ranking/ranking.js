// Ranking page: one list of answers re-ordered in place (drag via SortableJS, by mouse or touch; Move up / down
// buttons; a rank picker; the keyboard), tags, a draft kept locally and on the server, checks before sending.
// The page knows answers only by their letters (A, B, C…); nothing here can tell which system wrote what.
// A study may ask for nugget labels only (no list to order): nuggets.js runs the assessment; this file still
// keeps the draft and checks the form before sending (nuggets.js adds its own problems on "assessment:check").
(function () {
  "use strict";
  const form = document.getElementById("ranking-form");
  if (!form) return;
  const list = document.getElementById("ranked");
  const ranking = list !== null;
  const problemsBox = document.getElementById("form-problems");
  const orderState = document.getElementById("order-state");
  const draftState = document.getElementById("draft-state");
  const tiesAllowed = form.dataset.ties === "1";
  const askHallucination = form.dataset.askHallucination === "1";
  const askUnblinding = form.dataset.askUnblinding === "1";
  const draftKey = "ranking-draft:" + form.dataset.draftKey;
  const draftUrl = form.dataset.draftUrl;
  const spansField = document.getElementById("spans-field");  // span studies: the marks, kept by spans.js
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const cards = () => (ranking ? Array.from(list.children) : []);
  const cardOf = (slot) => document.getElementById("answer-" + slot);
  const slots = cards().map((c) => c.dataset.slot);
  // Until the ranker moves an answer (or says the order shown is theirs) nothing counts as ranked.
  let ordered = false;
  let selected = null;
  let restoring = true;

  // --- time on the page (only while visible) ---
  let elapsed = 0;
  let since = document.visibilityState === "visible" ? performance.now() : null;
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") since = performance.now();
    else {
      if (since !== null) { elapsed += performance.now() - since; since = null; }
      // Leaving (or reloading) sends only changes the server does not have yet: a device left open with an
      // older state must not overwrite what was done on another device since.
      if (dirty) { clearTimeout(serverTimer); sendDraft(true); }
    }
  });
  const timeSpent = () => Math.round(elapsed + (since !== null ? performance.now() - since : 0));

  // Answers that are word for word the same may share a rank even where ties are not allowed.
  const identical = (a, b) => a.dataset.sameAs !== "" && a.dataset.sameAs === b.dataset.sameAs;

  // --- ranks from the order (dense when answers share a rank) ---
  function refresh() {
    let rank = 0;
    const all = cards();
    if (!ranking) { saveDraft(); return; }
    list.classList.toggle("ordered", ordered);
    all.forEach((card, i) => {
      const tie = card.querySelector(".tie");
      const box = tie.querySelector("input");
      tie.hidden = !(ordered && i > 0 && (tiesAllowed || identical(card, all[i - 1])));
      if (tie.hidden) box.checked = false;
      if (i === 0 || !box.checked) rank += 1;
      card.querySelector(".rank-badge").textContent = ordered ? "rank " + rank : "not ranked";
      card.querySelector("input[name^=rank_]").value = ordered ? String(rank) : "";
      card.querySelector(".rank-pick").value = ordered ? String(i + 1) : "";
      card.querySelector(".move-up").disabled = i === 0;
      card.querySelector(".move-down").disabled = i === all.length - 1;
      const kind = card.querySelector(".hallkind");
      if (kind) {
        const on = card.querySelector("input[name^=hall_]").checked;
        kind.hidden = !on;
        if (!on) kind.querySelector("select").value = "";
      }
    });
    orderState.textContent = ordered ? "Order set: best at the top." : "The order is not set yet.";
    orderState.classList.toggle("set", ordered);
    document.getElementById("keep-order").hidden = ordered;
    saveDraft();
    form.dispatchEvent(new CustomEvent("ranking:refreshed"));  // steps.js shows whether the ranking step is done
  }

  function place(card, index) {
    const others = cards().filter((c) => c !== card);
    const clamped = Math.max(0, Math.min(index, others.length));
    list.insertBefore(card, others[clamped] || null);
    ordered = true;
    refresh();
  }

  function select(card, focus) {
    if (selected) selected.classList.remove("selected");
    selected = card;
    if (card) {
      card.classList.add("selected");
      if (focus) card.focus();
    }
  }

  // --- tap controls: move up / down, rank picker, "keep the order shown" ---
  if (ranking) list.addEventListener("click", (e) => {
    const button = e.target.closest("button.move-up, button.move-down");
    if (!button) return;
    const card = button.closest(".answer-card");
    const i = cards().indexOf(card);
    place(card, button.classList.contains("move-up") ? i - 1 : i + 1);
    select(card, false);
    const same = card.querySelector(button.classList.contains("move-up") ? ".move-up" : ".move-down");
    (same.disabled ? card.querySelector(".move-up:not(:disabled), .move-down:not(:disabled)") : same)?.focus();
  });
  if (ranking) list.addEventListener("change", (e) => {
    if (!e.target.classList.contains("rank-pick") || !e.target.value) return;
    const card = e.target.closest(".answer-card");
    place(card, Number(e.target.value) - 1);
    select(card, false);
    e.target.focus();
  });
  if (ranking) document.getElementById("keep-order").addEventListener("click", () => { ordered = true; refresh(); });

  // --- drag and drop, by mouse or touch (SortableJS), by the handle so that touch scrolling still works ---
  if (ranking && window.Sortable) {
    window.Sortable.create(list, {
      handle: ".handle",
      animation: 150,
      onEnd: (e) => { ordered = true; refresh(); select(e.item, false); },
    });
  }

  // --- keyboard: letter picks, digit ranks, arrows move, Shift+digit tags, Shift+H hallucination ---
  const tagInputs = (card) => Array.from(card.querySelectorAll("input[name^=tag_]"));
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    // Ctrl+Enter (Cmd+Enter) submits, from anywhere on the page, as on the review, adjudication and nugget pages:
    // the same checks as the button run first, so nothing half-done is sent.
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !(t.form && t.form !== form)) {
      e.preventDefault();
      form.requestSubmit();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    // The nugget assessment has keys of its own (nuggets.js); without a ranking there is nothing to do here.
    // Nor has the span marking (spans.js): its keys act only inside it.
    if (!ranking || (t.closest && t.closest("#nugget-assessment, #span-marking"))) return;
    // On another step (steps.js) the answers are out of sight: a stray letter or digit must not move them.
    if (list.closest("[hidden]")) return;
    if (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || (t.tagName === "INPUT" && t.type === "text")) return;
    const key = e.key;
    const card = (t.closest && t.closest(".answer-card")) || selected;
    if (e.shiftKey && card) {
      const digit = /^Digit([1-9])$/.exec(e.code);
      if (digit) {
        const input = tagInputs(card)[Number(digit[1]) - 1];
        if (input) { input.checked = true; refresh(); e.preventDefault(); }
        return;
      }
      if (e.code === "KeyH" && askHallucination) {
        const box = card.querySelector("input[name^=hall_]");
        box.checked = !box.checked;
        refresh();
        if (box.checked) card.querySelector(".hallkind select").focus();
        e.preventDefault();
        return;
      }
    }
    if (key.length === 1 && /[a-z]/i.test(key) && slots.includes(key.toUpperCase())) {
      select(cardOf(key.toUpperCase()), true);
      e.preventDefault();
      return;
    }
    if (!card) return;
    if (/^[1-9]$/.test(key)) {
      place(card, Number(key) - 1);
      select(card, true);
      e.preventDefault();
    } else if ((key === "ArrowUp" || key === "ArrowDown") && t === card) {
      const i = cards().indexOf(card);
      place(card, key === "ArrowUp" ? i - 1 : i + 1);
      select(card, true);
      e.preventDefault();
    }
  });
  form.addEventListener("focusin", (e) => {
    const card = e.target.closest(".answer-card");
    if (card) select(card, false);
  });

  // --- long answers: the same control on every answer that is cut, none on answers shown whole ---
  function markCut() {
    form.querySelectorAll(".toggle-text").forEach((button) => {
      const text = document.getElementById(button.getAttribute("aria-controls"));
      if (text.classList.contains("collapsed")) button.hidden = text.scrollHeight <= text.clientHeight + 2;
    });
  }
  form.querySelectorAll(".toggle-text").forEach((button) => {
    const label = button.textContent;
    button.addEventListener("click", () => {
      const text = document.getElementById(button.getAttribute("aria-controls"));
      const open = text.classList.toggle("collapsed") === false;
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Show less" : label;
    });
  });
  window.addEventListener("resize", markCut);
  form.addEventListener("steps:shown", markCut);  // answers on a hidden step cannot be measured

  // --- drafts: in this browser at once, on the server a moment later (so another device can go on) ---
  function draftData() {
    const data = { savedAt: Date.now(), order: cards().map((c) => c.dataset.slot), ordered: ordered,
                   elapsed: timeSpent(), fields: {} };
    form.querySelectorAll("input[type=radio]:checked, input[type=checkbox]:checked").forEach((i) => {
      data.fields[i.name] = i.type === "radio" ? i.value : true;
    });
    form.querySelectorAll("select[name], textarea, input[type=hidden][name^=mark_]").forEach((i) => {
      if (i.value) data.fields[i.name] = i.value;
    });
    if (spansField) {
      try { data.spans = JSON.parse(spansField.value || "{}"); } catch (err) { data.spans = {}; }
    }
    return data;
  }
  let serverTimer = null;
  let dirty = false;
  function saveDraft() {
    if (restoring) return;
    // "pending" until the server has it: a draft that never reached the server beats the server's on reload,
    // otherwise the server's wins (it may come from another device); no clocks are compared.
    const data = { ...draftData(), pending: true };
    try { localStorage.setItem(draftKey, JSON.stringify(data)); } catch (err) { /* storage full or blocked */ }
    dirty = true;
    draftState.textContent = "Saving the draft…";
    clearTimeout(serverTimer);
    serverTimer = setTimeout(sendDraft, 800);
  }
  function sendDraft(keepalive) {
    if (!dirty) return;
    dirty = false;
    const { savedAt, ...body } = draftData();
    fetch(draftUrl, {
      method: "POST", credentials: "same-origin", keepalive: keepalive === true,
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
      body: JSON.stringify(body),
    }).then((r) => {
      draftState.textContent = r.ok ? "Draft saved." : "Draft kept in this browser only.";
      if (r.ok && !dirty) {
        const local = localDraft();
        if (local) {
          local.pending = false;
          try { localStorage.setItem(draftKey, JSON.stringify(local)); } catch (err) { /* blocked */ }
        }
      }
    }).catch(() => { draftState.textContent = "Draft kept in this browser only."; });
  }
  function applyDraft(data) {
    const order = data.order || data.ranked || [];
    order.forEach((slot) => { const c = cardOf(slot); if (c) list.appendChild(c); });
    ordered = data.ordered === undefined ? order.length > 0 : Boolean(data.ordered);
    const fields = data.fields || {};
    // Every field is set, not only those in the draft: a server draft may replace the local one shown first.
    form.querySelectorAll("input[type=radio], input[type=checkbox]").forEach((i) => {
      i.checked = i.name in fields && (i.type === "radio" ? i.value === fields[i.name] : true);
    });
    form.querySelectorAll("select[name], textarea[name], input[type=hidden][name^=mark_]").forEach((i) => {
      i.value = fields[i.name] || "";
    });
    if (spansField) spansField.value = JSON.stringify(data.spans || {});
    elapsed = Number(data.elapsed) || 0;
    form.dispatchEvent(new CustomEvent("draft:applied"));
  }
  function localDraft() {
    try { return JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (err) { return null; }
  }
  function pruneDrafts() {
    const week = 7 * 24 * 3600 * 1000;
    for (let i = localStorage.length - 1; i >= 0; i--) {
      const k = localStorage.key(i);
      if (!k || !k.startsWith("ranking-draft:") || k === draftKey) continue;
      try { if (Date.now() - JSON.parse(localStorage.getItem(k)).savedAt > week) localStorage.removeItem(k); }
      catch (err) { localStorage.removeItem(k); }
    }
  }
  form.addEventListener("change", (e) => { if (!e.target.classList.contains("rank-pick")) refresh(); });
  form.addEventListener("input", (e) => { if (e.target.tagName === "TEXTAREA") saveDraft(); });

  // --- check before sending; the server checks again ---
  function problems() {
    const found = [];
    if (ranking && !ordered) found.push("put the answers in order (or press “Keep the order shown”)");
    const untagged = slots.filter((s) => !form.querySelector("input[name='tag_" + s + "']:checked"));
    if (untagged.length) found.push("no tag for answer " + untagged.join(", "));
    if (askHallucination) {
      slots.forEach((s) => {
        const box = form.querySelector("input[name='hall_" + s + "']");
        const kind = form.querySelector("select[name='hallkind_" + s + "']");
        if (box && box.checked && kind && !kind.value) found.push("answer " + s + ": say which kind of hallucination");
      });
    }
    if (askUnblinding && !form.querySelector("input[name=unblinding_guess]:checked")) {
      found.push("say which answer you think is the reference (or that you cannot tell)");
    }
    form.dispatchEvent(new CustomEvent("assessment:check", { detail: found }));
    return found;
  }
  form.addEventListener("submit", (e) => {
    refresh();
    const found = problems();
    if (found.length) {
      e.preventDefault();
      problemsBox.hidden = false;
      problemsBox.innerHTML = "";
      const p = document.createElement("p");
      p.textContent = "Not saved yet:";
      const ul = document.createElement("ul");
      found.forEach((text) => { const li = document.createElement("li"); li.textContent = text; ul.appendChild(li); });
      problemsBox.append(p, ul);
      // In steps (steps.js) the first missing control gets the focus, on its step; the list above stays.
      if (form.dispatchEvent(new CustomEvent("assessment:refused", { cancelable: true }))) problemsBox.focus();
      return;
    }
    clearTimeout(serverTimer);
    dirty = false;
    form.querySelector("input[name=time_spent_ms]").value = String(timeSpent());
  });

  // --- start: this browser's draft if it has changes the server never got, else the server's ---
  function start(serverDraft) {
    const local = localDraft();
    const chosen = serverDraft && !(local && local.pending) ? serverDraft : local;
    if (chosen && chosen !== local) applyDraft(chosen);
    restoring = false;
    refresh();
    markCut();
    clearTimeout(serverTimer);
    form.dataset.draftReady = "1";
    if (chosen === local && local && local.pending) sendDraft();  // the server never got these changes
    else {
      dirty = false;
      draftState.textContent = "";
      const stored = localDraft();  // what refresh() just stored, the same as the server's (or empty)
      if (stored) {
        stored.pending = false;
        try { localStorage.setItem(draftKey, JSON.stringify(stored)); } catch (err) { /* blocked */ }
      }
    }
  }
  pruneDrafts();
  // This browser's draft at once (no flash of an empty form); the server's replaces it when it is the one to keep.
  const shownFirst = localDraft();
  if (shownFirst) { applyDraft(shownFirst); refresh(); }
  markCut();
  fetch(draftUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : {}))
    .then((body) => start(body.draft || null))
    .catch(() => start(null));
})();
