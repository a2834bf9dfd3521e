// The review start page: "n" takes the next item (not while typing in a field).
document.addEventListener("keydown", (e) => {
  const t = e.target;
  if (e.ctrlKey || e.metaKey || e.altKey || (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT"))) return;
  if (e.key === "n") { e.preventDefault(); document.getElementById("next-form").requestSubmit(); }
});
