// Marking hallucinated words (span studies). Each answer's text is drawn from the JSON block #span-texts with
// textContent only; marks are <mark> elements with a hidden text label for screen readers. Three ways to select:
// the mouse, the phone's own selection (the marking bar at the bottom appears on "selectionchange"), and a word
// cursor on the keyboard (arrows, Shift+arrows), all ending in the browser's Selection, so one path marks them.
// The DOM counts UTF-16 code units; the server counts characters (code points): offsets are converted at the edge
// (the hidden #spans-field and the draft hold code points). ranking.js keeps the draft and checks before sending.
(function () {
  "use strict";
  const panel = document.getElementById("span-marking");
  const form = document.getElementById("ranking-form");
  if (!panel || !form) return;
  const field = document.getElementById("spans-field");
  const toolbar = document.getElementById("span-toolbar");
  const quote = toolbar.querySelector(".span-quote-text");
  const modeLabel = toolbar.querySelector(".span-mode");
  const noteInput = toolbar.querySelector(".span-note");
  const removeButton = toolbar.querySelector(".span-remove");
  const status = document.getElementById("span-status");
  const texts = JSON.parse(document.getElementById("span-texts").textContent);
  const KINDS = ["intrinsic", "extrinsic", "other"];
  const KEY_KIND = { "1": "intrinsic", "2": "extrinsic", "3": "other", i: "intrinsic", e: "extrinsic", o: "other" };
  const areas = {};
  const marks = {};   // slot -> [{start, end, kind, note}] in UTF-16 offsets, sorted, never overlapping or touching
  const words = {};   // slot -> [[start, end]] UTF-16
  const cursor = {};  // slot -> {anchor, focus} word indexes
  let pending = null; // {slot, start, end}: the selection the bar would mark
  let editing = null; // {slot, index}: the mark the bar edits

  // --- offsets: UTF-16 (the DOM) <-> code points (the server) ---
  const toCodePoints = (text, u16) => Array.from(text.slice(0, u16)).length;
  function fromCodePoints(text, cp) {
    let i = 0;
    let n = 0;
    for (const ch of text) { if (n === cp) break; i += ch.length; n += 1; }
    return i;
  }
  const isLow = (text, i) => i > 0 && i < text.length && /[\uDC00-\uDFFF]/.test(text[i]) && /[\uD800-\uDBFF]/.test(text[i - 1]);

  function wordsOf(text) {
    const found = [];
    if (window.Intl && Intl.Segmenter) {
      for (const s of new Intl.Segmenter(undefined, { granularity: "word" }).segment(text)) {
        if (s.segment.trim() !== "") found.push([s.index, s.index + s.segment.length]);
      }
    } else {
      for (const m of text.matchAll(/\S+/g)) found.push([m.index, m.index + m[0].length]);
    }
    return found;
  }

  // --- drawing: text nodes and <mark>s, built with textContent only ---
  function render(slot) {
    const area = areas[slot];
    const text = texts[slot];
    area.textContent = "";
    let at = 0;
    marks[slot].forEach((m, i) => {
      if (m.start > at) area.append(document.createTextNode(text.slice(at, m.start)));
      const mark = document.createElement("mark");
      mark.className = "span-mark kind-" + m.kind;
      mark.dataset.index = String(i);
      mark.textContent = text.slice(m.start, m.end);
      const label = document.createElement("span");
      label.className = "visually-hidden";
      label.dataset.skip = "1";
      label.textContent = " (" + m.kind + " hallucination" + (m.note ? ": " + m.note : "") + ")";
      area.append(mark, label);
      at = m.end;
    });
    if (at < text.length) area.append(document.createTextNode(text.slice(at)));
    renderList(slot);
  }

  function renderList(slot) {
    const article = document.getElementById("spans-" + slot);
    const list = article.querySelector(".span-list");
    list.textContent = "";
    marks[slot].forEach((m, i) => {
      const li = document.createElement("li");
      li.className = "span-item kind-" + m.kind;
      li.dataset.index = String(i);
      const words = document.createElement("q");
      words.textContent = texts[slot].slice(m.start, m.end);
      const kind = document.createElement("span");
      kind.className = "span-item-kind";
      kind.textContent = " – " + m.kind + (m.note ? " – " : "");
      const note = document.createElement("span");
      note.className = "span-item-note";
      note.textContent = m.note || "";
      const edit = button("Edit", "span-edit", "Edit the mark on “" + words.textContent + "”");
      const remove = button("Remove", "span-delete", "Remove the mark on “" + words.textContent + "”");
      li.append(words, kind, note, " ", edit, remove);
      list.appendChild(li);
    });
    const clean = article.querySelector(".span-clean");
    clean.hidden = marks[slot].length > 0;
    if (clean.hidden) clean.querySelector("input").checked = false;
  }

  function button(text, className, label) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "secondary small-button " + className;
    b.textContent = text;
    b.setAttribute("aria-label", label);
    return b;
  }

  // --- DOM points <-> UTF-16 offsets in the answer (the hidden labels do not count) ---
  function textNodes(area) {
    const nodes = [];
    const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) if (!t.parentElement.closest("[data-skip]")) nodes.push(t);
    return nodes;
  }
  function offsetOf(area, node, offset) {
    const before = document.createRange();
    before.selectNodeContents(area);
    before.setEnd(node, offset);
    let count = 0;
    for (const t of textNodes(area)) {
      if (t === node) return count + offset;
      if (!before.intersectsNode(t)) break;
      count += t.length;
    }
    return count;
  }
  function pointAt(area, offset, isEnd) {
    let count = 0;
    const nodes = textNodes(area);
    for (const t of nodes) {
      if (isEnd ? count + t.length >= offset : count + t.length > offset) return [t, offset - count];
      count += t.length;
    }
    const last = nodes[nodes.length - 1];
    return [last, last ? last.length : 0];
  }
  const areaOf = (node) => (node && (node.nodeType === 1 ? node : node.parentElement)?.closest(".span-text")) || null;

  function selectionSpan() {
    const sel = document.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
    const range = sel.getRangeAt(0);
    const area = areaOf(range.startContainer);
    if (!area || area !== areaOf(range.endContainer)) return null;
    const slot = area.dataset.slot;
    const text = texts[slot];
    let start = offsetOf(area, range.startContainer, range.startOffset);
    let end = offsetOf(area, range.endContainer, range.endOffset);
    while (start < end && /\s/.test(text[start])) start += 1;
    while (end > start && /\s/.test(text[end - 1])) end -= 1;
    if (isLow(text, start)) start -= 1;  // never half an emoji
    if (isLow(text, end)) end += 1;
    [start, end] = wholeWords(slot, start, end);
    return end > start ? { slot, start, end } : null;
  }

  // A drag or a touch selection rarely starts and ends exactly between words; a mark on "peropia actually r" says
  // nothing a physician meant, so a selection grows to the whole words it touches (the keyboard's word cursor
  // already moves by words). Words as Intl.Segmenter cuts them, which handles Chinese without spaces.
  function wholeWords(slot, start, end) {
    if (panel.dataset.spanUnit === "characters") return [start, end];  // the study asks for exact characters
    for (const [from, to] of words[slot] || []) {
      if (from < start && start < to) start = from;
      if (from < end && end < to) end = to;
    }
    return [start, end];
  }

  // --- the marks: add (absorbing what it overlaps or touches), change, remove ---
  function addMark(slot, start, end, kind, note) {
    const keep = [];
    const notes = [];
    let joined = 0;
    marks[slot].forEach((m) => {
      if (m.start <= end && m.end >= start) {
        start = Math.min(start, m.start);
        end = Math.max(end, m.end);
        if (m.note) notes.push(m.note);
        joined += 1;
      } else keep.push(m);
    });
    if (note) notes.push(note);
    keep.push({ start, end, kind, note: Array.from(new Set(notes)).join(" / ").slice(0, 1000) });
    keep.sort((a, b) => a.start - b.start);
    marks[slot] = keep;
    changed(slot, "Marked “" + texts[slot].slice(start, end) + "” as " + kind +
      (joined ? " (joined with " + joined + " mark" + (joined > 1 ? "s" : "") + " it touched)" : "") + ".");
  }
  function removeMark(slot, index) {
    const [m] = marks[slot].splice(index, 1);
    changed(slot, "Removed the mark on “" + texts[slot].slice(m.start, m.end) + "”.");
  }
  function changed(slot, message) {
    render(slot);
    status.textContent = message;
    write();
    field.dispatchEvent(new Event("change", { bubbles: true }));  // ranking.js saves the draft
  }

  // --- the hidden field (code points): every marked answer, and [] for each answer confirmed clean ---
  function write() {
    const out = {};
    Object.keys(areas).forEach((slot) => {
      const text = texts[slot];
      const clean = form.querySelector("input[name='clean_" + slot + "']");
      if (marks[slot].length) {
        out[slot] = marks[slot].map((m) => ({ start: toCodePoints(text, m.start), end: toCodePoints(text, m.end),
                                             kind: m.kind, note: m.note || "" }));
      } else if (clean && clean.checked) out[slot] = [];
    });
    field.value = JSON.stringify(out);
  }
  function read() {
    let stored = {};
    try { stored = JSON.parse(field.value || "{}") || {}; } catch (err) { stored = {}; }
    Object.keys(areas).forEach((slot) => {
      const text = texts[slot];
      marks[slot] = (Array.isArray(stored[slot]) ? stored[slot] : [])
        .filter((m) => KINDS.includes(m.kind))
        .map((m) => ({ start: fromCodePoints(text, m.start), end: fromCodePoints(text, m.end), kind: m.kind, note: m.note || "" }))
        .filter((m) => m.end > m.start)
        .sort((a, b) => a.start - b.start);
      render(slot);
    });
  }

  // --- the marking bar ---
  function showBar(mode) {
    toolbar.hidden = false;
    toolbar.classList.toggle("editing", mode === "edit");
    removeButton.hidden = mode !== "edit";
    if (mode === "edit") {
      const m = marks[editing.slot][editing.index];
      modeLabel.textContent = "Mark in answer " + editing.slot + ":";
      quote.textContent = texts[editing.slot].slice(m.start, m.end);
      noteInput.value = m.note || "";
      toolbar.querySelectorAll(".span-kind").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.kind === m.kind)));
    } else {
      modeLabel.textContent = "Mark selection in answer " + pending.slot + ":";
      quote.textContent = texts[pending.slot].slice(pending.start, pending.end);
      noteInput.value = "";
      toolbar.querySelectorAll(".span-kind").forEach((b) => b.setAttribute("aria-pressed", "false"));
    }
  }
  function closeBar(focusSlot) {
    toolbar.hidden = true;
    pending = null;
    editing = null;
    if (focusSlot && areas[focusSlot]) areas[focusSlot].focus();
  }
  function openEditor(slot, index, focusBar) {
    editing = { slot, index };
    pending = null;
    showBar("edit");
    if (focusBar) toolbar.querySelector(".span-kind[aria-pressed=true]")?.focus();
  }
  function markPending(kind, note) {
    if (!pending) return false;
    const { slot, start, end } = pending;
    addMark(slot, start, end, kind, note);
    document.getSelection()?.removeAllRanges();
    closeBar(null);
    return true;
  }

  toolbar.addEventListener("mousedown", (e) => { if (e.target.closest("button")) e.preventDefault(); });
  toolbar.addEventListener("click", (e) => {
    const kindButton = e.target.closest(".span-kind");
    if (kindButton) {
      if (editing) {
        const m = marks[editing.slot][editing.index];
        m.kind = kindButton.dataset.kind;
        m.note = noteInput.value.trim().slice(0, 1000);
        const slot = editing.slot;
        changed(slot, "The mark on “" + texts[slot].slice(m.start, m.end) + "” is now " + m.kind + ".");
        closeBar(slot);
      } else if (pending) {
        const slot = pending.slot;
        markPending(kindButton.dataset.kind, noteInput.value.trim());
        areas[slot].focus();
      }
    } else if (e.target.closest(".span-remove") && editing) {
      const slot = editing.slot;
      removeMark(slot, editing.index);
      closeBar(slot);
    } else if (e.target.closest(".span-close")) {
      closeBar(editing?.slot || pending?.slot);
    }
  });
  noteInput.addEventListener("input", () => {
    if (!editing) return;
    marks[editing.slot][editing.index].note = noteInput.value.trim().slice(0, 1000);
    renderList(editing.slot);
    write();
    field.dispatchEvent(new Event("change", { bubbles: true }));
  });
  toolbar.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { closeBar(editing?.slot || pending?.slot); e.preventDefault(); }
    else if (e.key === "Enter" && e.target === noteInput) e.preventDefault();  // not a submit of the whole form
  });

  // Mouse and touch: whatever the ranker selects inside one answer becomes the bar's selection. A collapsed
  // selection leaves it (tapping the bar on a phone collapses the selection before the tap arrives).
  document.addEventListener("selectionchange", () => {
    const span = selectionSpan();
    if (!span) return;
    pending = span;
    editing = null;
    showBar("new");
  });

  // --- keyboard: a word cursor inside the focused answer; keys act only there ---
  function selectWords(slot) {
    const c = cursor[slot];
    const w = words[slot];
    const start = w[Math.min(c.anchor, c.focus)][0];
    const end = w[Math.max(c.anchor, c.focus)][1];
    const area = areas[slot];
    const [startNode, startOffset] = pointAt(area, start, false);
    const [endNode, endOffset] = pointAt(area, end, true);
    document.getSelection().setBaseAndExtent(startNode, startOffset, endNode, endOffset);
    pending = { slot, start, end };
    editing = null;
    showBar("new");
  }
  function markAtCursor(slot) {
    const c = cursor[slot];
    if (!c) return -1;
    const at = words[slot][c.focus][0];
    return marks[slot].findIndex((m) => m.start <= at && at < m.end);
  }
  function onAreaKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const area = e.currentTarget;
    const slot = area.dataset.slot;
    const w = words[slot];
    const key = e.key;
    if (["ArrowLeft", "ArrowRight", "Home", "End"].includes(key) && w.length) {
      const c = cursor[slot] || { anchor: 0, focus: -1 };
      const last = w.length - 1;
      let focus = key === "ArrowLeft" ? c.focus - 1 : key === "ArrowRight" ? c.focus + 1 : key === "Home" ? 0 : last;
      focus = Math.max(0, Math.min(focus, last));
      cursor[slot] = { anchor: e.shiftKey && cursor[slot] ? c.anchor : focus, focus };
      selectWords(slot);
      e.preventDefault();
    } else if (KEY_KIND[key.toLowerCase()] && !e.shiftKey) {
      if (!pending || pending.slot !== slot) {
        const span = selectionSpan();
        if (span && span.slot === slot) pending = span;
      }
      if (pending && pending.slot === slot) markPending(KEY_KIND[key.toLowerCase()], "");
      else status.textContent = "Select words first: → moves to the next word, Shift+→ adds it.";
      e.preventDefault();
    } else if (key === "Enter") {
      const index = markAtCursor(slot);
      if (index >= 0) openEditor(slot, index, true);
      e.preventDefault();
    } else if (key === "Escape") {
      document.getSelection()?.removeAllRanges();
      closeBar(null);
      e.preventDefault();
    }
  }

  // --- the list of marks: Edit, Remove, Delete on the focused mark ---
  panel.addEventListener("click", (e) => {
    const item = e.target.closest(".span-item");
    if (item) {
      const slot = item.closest(".span-answer").dataset.slot;
      const index = Number(item.dataset.index);
      if (e.target.closest(".span-edit")) openEditor(slot, index, true);
      else if (e.target.closest(".span-delete")) {
        removeMark(slot, index);
        focusList(slot, index);
      }
      return;
    }
    const mark = e.target.closest("mark.span-mark");
    const sel = document.getSelection();
    if (mark && (!sel || sel.isCollapsed)) openEditor(mark.closest(".span-text").dataset.slot, Number(mark.dataset.index), false);
  });
  panel.addEventListener("keydown", (e) => {
    const item = e.target.closest && e.target.closest(".span-item");
    if (!item || (e.key !== "Delete" && e.key !== "Backspace")) return;
    const slot = item.closest(".span-answer").dataset.slot;
    const index = Number(item.dataset.index);
    removeMark(slot, index);
    focusList(slot, index);
    e.preventDefault();
  });
  function focusList(slot, index) {
    const items = document.querySelectorAll("#spans-" + slot + " .span-item");
    const next = items[Math.min(index, items.length - 1)];
    (next ? next.querySelector(".span-edit") : areas[slot]).focus();
  }

  // --- the form: confirmations, checks before sending, drafts ---
  form.addEventListener("change", (e) => { if (e.target.name && e.target.name.startsWith("clean_")) write(); });
  form.addEventListener("assessment:check", (e) => {
    write();
    Object.keys(areas).forEach((slot) => {
      const clean = form.querySelector("input[name='clean_" + slot + "']");
      if (!marks[slot].length && !(clean && clean.checked)) {
        e.detail.push("answer " + slot + ": mark its hallucinated words, or tick “No hallucination in this answer”");
      }
    });
  });
  form.addEventListener("draft:applied", () => { read(); write(); });
  // Another step shown (steps.js): a bar left open would mark words no longer in sight.
  form.addEventListener("steps:shown", () => { if (panel.hidden && !toolbar.hidden) closeBar(null); });

  panel.querySelectorAll(".span-text").forEach((area) => {
    const slot = area.dataset.slot;
    areas[slot] = area;
    words[slot] = wordsOf(texts[slot]);
    area.addEventListener("keydown", onAreaKey);
  });
  read();  // ranking.js may already have put this browser's draft into the field
  write();
  panel.dataset.ready = "1";
})();
