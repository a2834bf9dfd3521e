// Nugget start page: "v" takes the next draft to validate, "w" the next item to write nuggets for.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const tag = (document.activeElement && document.activeElement.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    const id = { v: "validate-next", w: "write-next" }[event.key];
    const button = id && document.getElementById(id);
    if (button) { event.preventDefault(); button.click(); }
  });
})();
