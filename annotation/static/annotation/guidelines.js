// Review page: the guideline panel beside the item. "g" shows or hides it; the choice is remembered in this
// browser, except that a guideline version new to the reviewer always opens.
(function () {
  "use strict";
  const panel = document.getElementById("guideline-panel");
  if (!panel) return;
  const storageKey = "guideline-panel-open";
  function remember(open) {
    try { localStorage.setItem(storageKey, open ? "1" : "0"); } catch (e) { /* storage full or off */ }
  }
  if (!panel.dataset.new) {
    try { if (localStorage.getItem(storageKey) === "0") panel.open = false; } catch (e) { /* keep it open */ }
  }
  panel.querySelector("summary").addEventListener("click", () => remember(!panel.open));

  function typing(t) {
    if (!t || !t.tagName) return false;
    if (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable) return true;
    return t.tagName === "INPUT" && !["radio", "checkbox", "submit", "button"].includes(t.type);
  }
  document.addEventListener("keydown", (e) => {
    if (e.key.toLowerCase() !== "g" || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    e.preventDefault();
    panel.open = !panel.open;
    remember(panel.open);
    if (panel.open) panel.scrollIntoView({ block: "nearest" });
  });
})();
