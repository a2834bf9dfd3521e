// The review start page: "n" takes the next item (not while typing in a field). Without the "I have read the
// guidelines" tick the browser points at it instead; Space ticks it, and "n" works from there too.
document.addEventListener("keydown", (e) => {
  const t = e.target;
  const typing = t && (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || (t.tagName === "INPUT" && t.type !== "checkbox"));
  if (e.ctrlKey || e.metaKey || e.altKey || typing) return;
  if (e.key === "n") { e.preventDefault(); document.getElementById("next-form").requestSubmit(); }
});
