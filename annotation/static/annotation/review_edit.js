// Changing one's own review: the review page's keys (c / i / u, 1-5, e, Enter or Ctrl+Enter saves, Esc).
(function () {
  "use strict";
  const form = document.getElementById("edit-form");
  if (!form) return;
  const verdictKeys = { c: "correct", i: "incorrect", u: "cannot_tell" };
  // "cannot tell" asks why: the reasons are shown, required and sent only with that verdict (a disabled fieldset
  // sends nothing), as on the review page.
  const reasonField = document.getElementById("cannot-tell-reason");
  function syncReason(focus) {
    if (!reasonField) return;
    const chosen = form.querySelector("input[name=verdict]:checked");
    const asked = Boolean(chosen) && chosen.value === "cannot_tell";
    reasonField.hidden = !asked;
    reasonField.disabled = !asked;
    if (asked && focus) (reasonField.querySelector("input:checked") || reasonField.querySelector("input")).focus();
  }
  form.addEventListener("change", (e) => {
    if (e.target.name === "verdict") syncReason(e.target.value === "cannot_tell");
  });
  syncReason(false);
  function setRadio(name, value) {
    const el = form.querySelector("input[name=" + name + "][value='" + value + "']");
    if (el) { el.checked = true; el.dispatchEvent(new Event("change", { bubbles: true })); }
  }
  function typing(t) {
    if (!t || !t.tagName) return false;
    if (t.tagName === "TEXTAREA" || t.tagName === "SELECT") return true;
    return t.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(t.type);
  }
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); return; }
    if (e.key === "Escape") { if (document.activeElement) document.activeElement.blur(); return; }
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.toLowerCase();
    if (verdictKeys[key]) { e.preventDefault(); setRadio("verdict", verdictKeys[key]); }
    else if (/^[1-5]$/.test(key)) { e.preventDefault(); setRadio("relevance", key); }
    else if (e.key === "Enter") { e.preventDefault(); form.requestSubmit(); }
    else if (key === "e") { e.preventDefault(); document.getElementById("id_comment").focus(); }
  });
})();
