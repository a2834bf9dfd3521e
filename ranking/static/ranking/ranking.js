// Ranking page: order answers by drag and drop or by keyboard, tag them, keep a draft, check before sending.
// The page knows answers only by their letters (A, B, C…); nothing here can tell which system wrote what.
(function () {
  "use strict";
  const form = document.getElementById("ranking-form");
  if (!form) return;
  const ranked = document.getElementById("ranked");
  const unranked = document.getElementById("unranked");
  const problemsBox = document.getElementById("form-problems");
  const tiesAllowed = form.dataset.ties === "1";
  const askHallucination = form.dataset.askHallucination === "1";
  const askUnblinding = form.dataset.askUnblinding === "1";
  const draftKey = "ranking-draft:" + form.dataset.draftKey;
  const cards = () => Array.from(form.querySelectorAll(".answer-card"));
  const cardOf = (slot) => document.getElementById("answer-" + slot);
  const slots = cards().map((c) => c.dataset.slot);
  let selected = null;

  // --- time on the page (only while visible) ---
  let elapsed = 0;
  let since = document.visibilityState === "visible" ? performance.now() : null;
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") since = performance.now();
    else if (since !== null) { elapsed += performance.now() - since; since = null; saveDraft(); }
  });
  const timeSpent = () => Math.round(elapsed + (since !== null ? performance.now() - since : 0));

  // --- ranks from the order (dense when ties are allowed) ---
  function refresh() {
    let rank = 0;
    Array.from(ranked.children).forEach((card, i) => {
      const tie = card.querySelector(".tie");
      const box = tie.querySelector("input");
      tie.hidden = !(tiesAllowed && i > 0);
      if (tie.hidden) box.checked = false;
      if (i === 0 || !box.checked) rank += 1;
      card.querySelector(".rank-badge").textContent = "rank " + rank;
      card.querySelector("input[name^=rank_]").value = String(rank);
    });
    Array.from(unranked.children).forEach((card) => {
      card.querySelector(".tie").hidden = true;
      card.querySelector(".tie input").checked = false;
      card.querySelector(".rank-badge").textContent = "not ranked";
      card.querySelector("input[name^=rank_]").value = "";
    });
    saveDraft();
  }

  function place(card, zone, index) {
    const siblings = Array.from(zone.children).filter((c) => c !== card);
    const clamped = Math.max(0, Math.min(index, siblings.length));
    zone.insertBefore(card, siblings[clamped] || null);
    refresh();
  }

  function select(card) {
    if (selected) selected.classList.remove("selected");
    selected = card;
    if (card) { card.classList.add("selected"); card.focus(); }
  }

  // --- drag and drop (HTML5) ---
  let dragged = null;
  form.addEventListener("dragstart", (e) => {
    const card = e.target.closest && e.target.closest(".answer-card");
    if (!card) return;
    dragged = card;
    card.classList.add("dragging");
    e.dataTransfer.effectAllowed = "move";
    e.dataTransfer.setData("text/plain", card.dataset.slot);
  });
  form.addEventListener("dragend", () => {
    if (dragged) dragged.classList.remove("dragging");
    dragged = null;
    [ranked, unranked].forEach((z) => z.classList.remove("drag-over"));
  });
  [ranked, unranked].forEach((zone) => {
    zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("drag-over"); });
    zone.addEventListener("dragleave", () => zone.classList.remove("drag-over"));
    zone.addEventListener("drop", (e) => {
      e.preventDefault();
      zone.classList.remove("drag-over");
      const card = dragged || cardOf(e.dataTransfer.getData("text/plain"));
      if (!card) return;
      const over = e.target.closest(".answer-card");
      let index = zone.children.length;
      if (over && over !== card && over.parentElement === zone) {
        const box = over.getBoundingClientRect();
        const before = Array.from(zone.children).filter((c) => c !== card).indexOf(over);
        index = e.clientY < box.top + box.height / 2 ? before : before + 1;
      }
      place(card, zone, index);
      select(card);
    });
  });

  // --- keyboard: letter picks, digit ranks, arrows move, 0 unranks ---
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || (t.tagName === "INPUT" && t.type === "text")) return;
    const key = e.key;
    if (key.length === 1 && /[a-z]/i.test(key) && slots.includes(key.toUpperCase())) {
      select(cardOf(key.toUpperCase()));
      e.preventDefault();
      return;
    }
    const card = (t.closest && t.closest(".answer-card")) || selected;
    if (!card) return;
    if (/^[0-9]$/.test(key)) {
      if (key === "0") place(card, unranked, unranked.children.length);
      else place(card, ranked, Number(key) - 1);
      select(card);
      e.preventDefault();
    } else if ((key === "ArrowUp" || key === "ArrowDown") && t === card) {
      const zone = card.parentElement;
      if (zone === unranked) place(card, ranked, ranked.children.length);
      else {
        const i = Array.from(ranked.children).indexOf(card);
        place(card, ranked, key === "ArrowUp" ? i - 1 : i + 1);
      }
      select(card);
      e.preventDefault();
    }
  });
  form.addEventListener("focusin", (e) => {
    const card = e.target.closest(".answer-card");
    if (card && e.target === card) select(card);
  });

  // --- long answers: the same control on every answer ---
  form.querySelectorAll(".toggle").forEach((button) => {
    const label = button.textContent;
    button.addEventListener("click", () => {
      const text = document.getElementById(button.getAttribute("aria-controls"));
      const open = text.classList.toggle("collapsed") === false;
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "Show less" : label;
    });
  });

  // --- drafts survive a reload ---
  function saveDraft() {
    const data = { savedAt: Date.now(), ranked: Array.from(ranked.children).map((c) => c.dataset.slot),
                   elapsed: timeSpent(), fields: {} };
    form.querySelectorAll("input[type=radio]:checked, input[type=checkbox]:checked").forEach((i) => {
      data.fields[i.name] = i.type === "radio" ? i.value : true;
    });
    form.querySelectorAll("select, textarea").forEach((i) => { if (i.value) data.fields[i.name] = i.value; });
    try { localStorage.setItem(draftKey, JSON.stringify(data)); } catch (err) { /* storage full or blocked */ }
  }
  function loadDraft() {
    let data = null;
    try { data = JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (err) { data = null; }
    if (!data) return;
    (data.ranked || []).forEach((slot) => { const c = cardOf(slot); if (c) ranked.appendChild(c); });
    Object.entries(data.fields || {}).forEach(([name, value]) => {
      form.querySelectorAll("[name='" + CSS.escape(name) + "']").forEach((i) => {
        if (i.type === "radio") i.checked = i.value === value;
        else if (i.type === "checkbox") i.checked = true;
        else i.value = value;
      });
    });
    elapsed = Number(data.elapsed) || 0;
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
  form.addEventListener("change", refresh);
  form.addEventListener("input", saveDraft);

  // --- check before sending; the server checks again ---
  function problems() {
    const found = [];
    const notRanked = Array.from(unranked.children).map((c) => c.dataset.slot);
    if (notRanked.length) found.push("not ranked yet: answer " + notRanked.join(", "));
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
      problemsBox.focus();
      return;
    }
    form.querySelector("input[name=time_spent_ms]").value = String(timeSpent());
  });

  pruneDrafts();
  loadDraft();
  refresh();
})();
