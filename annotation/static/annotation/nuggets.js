// The nugget list editor of the writing and validating pages: keyboard-first, no inline script (CSP).
// Enter adds a nugget after the current one; Alt+Up/Down moves it; Alt+1/2/3 sets vital/okay/avoid; Alt+S splits at
// the cursor; Alt+M merges with the next; Alt+Backspace drops; Alt+A accepts all (validation); Ctrl+Enter sends.
(function () {
  "use strict";
  const form = document.getElementById("nugget-form");
  const list = document.getElementById("nugget-list");
  const template = document.getElementById("nugget-row-template");
  if (!form || !list || !template) return;
  const IMPORTANCE_KEYS = { Digit1: "vital", Digit2: "okay", Digit3: "avoid", Numpad1: "vital", Numpad2: "okay", Numpad3: "avoid" };

  function rowOf(el) { return el && el.closest ? el.closest(".nugget-row") : null; }
  function textOf(row) { return row.querySelector("textarea[name=nugget_text]"); }
  function focusRow(row, atEnd) {
    if (!row) return;
    const box = textOf(row);
    box.focus();
    const at = atEnd === false ? 0 : box.value.length;
    box.setSelectionRange(at, at);
  }
  function newRow(after, text, importance) {
    const row = template.content.firstElementChild.cloneNode(true);
    textOf(row).value = text || "";
    if (importance) row.querySelector("select").value = importance;
    if (after) after.after(row); else list.append(row);
    return row;
  }
  function ensureOne() { if (!list.querySelector(".nugget-row")) focusRow(newRow(null)); }

  function act(action, row) {
    if (action === "add") { focusRow(newRow(row)); return; }
    if (!row) return;
    const box = textOf(row);
    if (action === "up" && row.previousElementSibling) { row.previousElementSibling.before(row); focusRow(row); }
    else if (action === "down" && row.nextElementSibling) { row.nextElementSibling.after(row); focusRow(row); }
    else if (action === "drop") {
      const next = row.nextElementSibling || row.previousElementSibling;
      row.remove();
      if (next) focusRow(next); else ensureOne();
    } else if (action === "split") {
      const at = box.selectionStart || Math.floor(box.value.length / 2);
      const rest = box.value.slice(at).trim();
      box.value = box.value.slice(0, at).trim();
      focusRow(newRow(row, rest, row.querySelector("select").value), false);
    } else if (action === "merge") {
      const next = row.nextElementSibling;
      if (!next) return;
      const joined = [box.value.trim(), textOf(next).value.trim()].filter(Boolean).join(" ");
      box.value = joined;
      next.remove();
      focusRow(row);
    }
  }

  list.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-action]");
    if (button) act(button.dataset.action, rowOf(button));
  });
  const add = document.getElementById("add-nugget");
  if (add) add.addEventListener("click", function () { act("add", list.lastElementChild); });

  document.addEventListener("keydown", function (event) {
    const row = rowOf(document.activeElement);
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      const send = document.getElementById("send-changes") || document.getElementById("send-nuggets");
      if (send) form.requestSubmit(send);
      return;
    }
    if (event.altKey && !event.ctrlKey && !event.metaKey) {
      if (event.code === "KeyA" && form.dataset.validating === "1") {
        event.preventDefault();
        form.requestSubmit(document.getElementById("accept-all"));
        return;
      }
      if (!row) return;
      const moves = { ArrowUp: "up", ArrowDown: "down", KeyS: "split", KeyM: "merge", Backspace: "drop", Delete: "drop" };
      if (IMPORTANCE_KEYS[event.code]) {
        event.preventDefault();
        row.querySelector("select").value = IMPORTANCE_KEYS[event.code];
      } else if (moves[event.code]) {
        event.preventDefault();
        act(moves[event.code], row);
      }
      return;
    }
    if (event.key === "Enter" && !event.shiftKey && row && document.activeElement.tagName === "TEXTAREA") {
      event.preventDefault();
      act("add", row);
    }
  });

  // The list is also kept in this browser while the page is open (per lease), so a reload or a lost connection
  // loses nothing; it is dropped once the list is sent. A page that came back from a refused send shows what was
  // sent instead.
  const draftKey = form.dataset.draftKey;
  function rowsNow() {
    return Array.from(list.querySelectorAll(".nugget-row")).map(function (row) {
      return { id: row.querySelector("input[name=nugget_id]").value, text: textOf(row).value, importance: row.querySelector("select").value };
    });
  }
  function save() {
    if (!draftKey) return;
    try { localStorage.setItem(draftKey, JSON.stringify(rowsNow())); } catch (e) { /* storage off: nothing kept */ }
  }
  if (draftKey && form.dataset.fresh === "1") {
    let saved = null;
    try { saved = JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (e) { saved = null; }
    if (Array.isArray(saved) && saved.length) {
      list.replaceChildren();
      saved.forEach(function (entry) {
        const row = newRow(null, String(entry.text || ""), entry.importance);
        row.querySelector("input[name=nugget_id]").value = String(entry.id || "");
      });
    }
  }
  if (draftKey) {
    list.addEventListener("input", save);
    list.addEventListener("change", save);
    list.addEventListener("click", function () { setTimeout(save, 0); });
    document.addEventListener("keyup", function (event) { if (event.altKey || event.key === "Enter") save(); });
    form.addEventListener("submit", function () { try { localStorage.removeItem(draftKey); } catch (e) { /* nothing kept */ } });
  }

  // Each row's buttons say whether they can act: no Move up on the first nugget, no Move down or Merge on the last,
  // no Split of an empty nugget. Kept in step with every change of the list.
  function refreshButtons() {
    const rows = Array.from(list.querySelectorAll(".nugget-row"));
    rows.forEach(function (row, index) {
      const last = index === rows.length - 1;
      const set = function (action, off) {
        const button = row.querySelector('button[data-action="' + action + '"]');
        if (button) button.disabled = off;
      };
      set("up", index === 0);
      set("down", last);
      set("merge", last);
      set("split", !textOf(row).value.trim());
    });
  }
  new MutationObserver(refreshButtons).observe(list, { childList: true });
  list.addEventListener("input", refreshButtons);

  // Nothing takes the focus on load: a key pressed on arrival (w, v, a shortcut meant for another page) must not
  // land in a nugget's text. "e" (or a click) starts editing; a nugget with a problem after a refused send is the
  // exception, since the person is there to fix it.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "e" || event.ctrlKey || event.metaKey || event.altKey) return;
    const tag = (document.activeElement && document.activeElement.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    const row = list.querySelector(".has-problem") || list.querySelector(".nugget-row");
    if (row) { event.preventDefault(); focusRow(row); }
  });
  const problem = list.querySelector(".has-problem");
  if (problem && !document.getElementById("refusal")) focusRow(problem);
  ensureOne();
  refreshButtons();
})();
