// Review page: keyboard shortcuts, a draft kept in localStorage per assignment (review_drafts.js also keeps it on the
// server), and active-time measurement.
(function () {
  "use strict";
  const root = document.getElementById("review-root");
  if (!root) return;
  const draftKey = "review-draft:" + root.dataset.assignment + ":" + root.dataset.key;
  const reviewForm = document.getElementById("review-form");
  const disputePanel = document.getElementById("dispute-panel");
  const feedbackPanel = document.getElementById("feedback-panel");
  const giveBackPanel = document.getElementById("give-back-panel");
  const fields = {
    comment: document.getElementById("id_comment"),
    category: document.getElementById("id_category"),
    disputeText: document.getElementById("id_text"),
    quote: document.getElementById("id_quote_text"),
    feedback: document.getElementById("id_feedback_text"),
  };

  // --- draft: survives a reload, dropped once a form is sent -------------------------------------------
  let active = 0;
  function checked(name) {
    const el = reviewForm.querySelector("input[name=" + name + "]:checked");
    return el ? el.value : "";
  }
  function saveDraft() {
    const draft = {
      verdict: checked("verdict"), reason: checked("cannot_tell_reason"), relevance: checked("relevance"),
      active: active, saved: Date.now(),
    };
    for (const [k, el] of Object.entries(fields)) if (el) draft[k] = el.value;
    try { localStorage.setItem(draftKey, JSON.stringify(draft)); } catch (e) { /* storage full or off */ }
    document.dispatchEvent(new CustomEvent("review:draft", { detail: draft }));
  }
  function restoreDraft() {
    let draft = null;
    try { draft = JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (e) { draft = null; }
    if (!draft) return;
    const radios = { verdict: "verdict", reason: "cannot_tell_reason", relevance: "relevance" };
    for (const [key, name] of Object.entries(radios)) {
      const el = draft[key] && reviewForm.querySelector("input[name=" + name + "][value='" + draft[key] + "']");
      if (el && !checked(name)) el.checked = true;
    }
    for (const [k, el] of Object.entries(fields)) if (el && draft[k] && !el.value) el.value = draft[k];
    if (draft.disputeText || draft.quote) disputePanel.open = true;
    if (draft.feedback) feedbackPanel.open = true;
    active = Number(draft.active) || 0;
  }
  // --- "cannot tell" asks why: the reasons are shown, required and sent only with that verdict --------------
  // (a disabled fieldset sends nothing and is not checked, so a reason left chosen under another verdict stays out)
  const reasonField = document.getElementById("cannot-tell-reason");
  function syncReason(focus) {
    if (!reasonField) return;
    const asked = checked("verdict") === "cannot_tell";
    reasonField.hidden = !asked;
    reasonField.disabled = !asked;
    if (asked && focus) {  // straight to the reasons: the arrow keys pick one, as in any radio group
      (reasonField.querySelector("input:checked") || reasonField.querySelector("input")).focus();
    }
  }
  reviewForm.addEventListener("change", (e) => {
    if (e.target.name === "verdict") syncReason(e.target.value === "cannot_tell");
  });

  restoreDraft();
  syncReason(false);
  document.addEventListener("input", saveDraft);
  document.addEventListener("change", saveDraft);

  // --- active time: seconds with the page visible and some input in the last 60 s ------------------------
  let lastInput = Date.now();
  for (const ev of ["keydown", "mousemove", "mousedown", "scroll", "touchstart"]) {
    document.addEventListener(ev, () => { lastInput = Date.now(); }, { passive: true });
  }
  setInterval(() => {
    if (document.visibilityState === "visible" && Date.now() - lastInput < 60000) {
      active += 1;
      if (active % 5 === 0) saveDraft();
    }
  }, 1000);

  let sending = false;
  for (const form of document.querySelectorAll("form[data-kind]")) {
    form.addEventListener("submit", (e) => {
      if (sending) { e.preventDefault(); return; }  // a double press sends once (the server is idempotent too)
      sending = true;
      const seconds = reviewForm.querySelector("input[name=active_seconds]");
      if (seconds) seconds.value = String(active);
      try { localStorage.removeItem(draftKey); } catch (err) { /* ignore */ }
    });
  }

  // --- the hold on the item: once it has run out, say so (a review sent then is stored late, if it can be) -----
  const leaseEnded = document.getElementById("lease-ended");
  const leaseUntil = document.getElementById("lease-until");
  if (leaseEnded) {
    const expires = Date.parse(leaseEnded.dataset.expires);
    const skew = Date.parse(leaseEnded.dataset.now) - Date.now();  // the server's clock decides, as it does on submit
    let timer = 0;
    function showLease() {
      clearTimeout(timer);
      const over = Date.now() + skew - expires;
      if (Number.isNaN(over)) return;
      if (over <= 0) { timer = setTimeout(showLease, Math.min(1000 - over, 60000)); return; }
      // Whole minutes, at least one: the same count the server writes when the page opens after the hold ended.
      document.getElementById("lease-ended-ago").textContent = Math.max(1, Math.floor(over / 60000)) + " min";
      leaseEnded.hidden = false;
      if (leaseUntil) leaseUntil.hidden = true;
      timer = setTimeout(showLease, 60000 - (over % 60000) + 50);
    }
    showLease();
    // Timers sleep in a background tab: look again when the reviewer comes back to it.
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") showLease(); });
  }

  // --- quote from the excerpt without a keyboard: select text, then "Quote this" ------------------------------
  const excerpt = document.getElementById("excerpt");
  const quoteButton = document.getElementById("quote-selection");
  if (excerpt && quoteButton && fields.quote) {
    let picked = "";
    let hideTimer = 0;
    function excerptSelection() {
      const sel = window.getSelection();
      if (!sel || sel.isCollapsed || !sel.rangeCount) return "";
      const range = sel.getRangeAt(0);
      if (!excerpt.contains(range.startContainer) || !excerpt.contains(range.endContainer)) return "";
      return String(sel).trim();  // as it stands in the excerpt: the dispute page finds the quote word for word
    }
    document.addEventListener("selectionchange", () => {
      const text = excerptSelection();
      clearTimeout(hideTimer);
      if (text) { picked = text; quoteButton.hidden = false; return; }
      // A tap on the button may clear the selection before its click arrives: hide a moment later, keep the text.
      hideTimer = setTimeout(() => { quoteButton.hidden = true; }, 400);
    });
    quoteButton.addEventListener("pointerdown", (e) => e.preventDefault());  // keep the selection where it can be
    quoteButton.addEventListener("click", () => {
      if (!picked) return;
      disputePanel.open = true;
      fields.quote.value = picked;
      saveDraft();
      picked = "";
      const sel = window.getSelection();
      if (sel) sel.removeAllRanges();  // the quote is taken: the selection (and with it the button) goes
      quoteButton.hidden = true;
      fields.quote.scrollIntoView({ block: "center" });
    });
  }

  // --- keyboard ------------------------------------------------------------------------------------------
  function setRadio(name, value) {
    const el = reviewForm.querySelector("input[name=" + name + "][value='" + value + "']");
    if (el) { el.checked = true; el.dispatchEvent(new Event("change", { bubbles: true })); }
  }
  function typing(t) {
    if (!t || !t.tagName) return false;
    if (t.tagName === "TEXTAREA" || t.tagName === "SELECT") return true;
    return t.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(t.type);
  }
  function submit(form) { if (form) form.requestSubmit(); }
  const verdictKeys = { c: "correct", i: "incorrect", u: "cannot_tell" };

  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      submit((t && t.form) || reviewForm);
      return;
    }
    if (e.key === "Escape") { if (document.activeElement) document.activeElement.blur(); return; }
    if (typing(t) || e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.toLowerCase();
    if (verdictKeys[key]) { e.preventDefault(); setRadio("verdict", verdictKeys[key]); }
    else if (/^[1-5]$/.test(key)) { e.preventDefault(); setRadio("relevance", key); }
    else if (e.key === "Enter") { e.preventDefault(); submit((t && t.form) || reviewForm); }
    else if (key === "e") { e.preventDefault(); fields.comment.focus(); }
    else if (key === "d") { e.preventDefault(); disputePanel.open = true; fields.category.focus(); }
    else if (key === "f") { e.preventDefault(); feedbackPanel.open = true; fields.feedback.focus(); }
    else if (key === "b" && giveBackPanel) {  // give the item back: open the panel, focus its first reason
      e.preventDefault(); giveBackPanel.open = true; giveBackPanel.querySelector("input[name=reason]").focus();
    }
    else if (key === "z") { e.preventDefault(); window.location.assign(root.dataset.lastUrl); }  // reopen last review
    else if (key === "q") {
      const sel = String(window.getSelection() || "").trim();
      if (sel) { e.preventDefault(); disputePanel.open = true; fields.quote.value = sel; saveDraft(); fields.disputeText.focus(); }
    }
  });
})();
