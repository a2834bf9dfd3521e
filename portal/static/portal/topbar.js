// The top bar on a phone: the links fold behind the Menu button (portal.css shows the button below 700 px only).
// A static file, as the CSP allows no inline script; without it the bar simply stays open.
(function () {
  "use strict";
  const bar = document.querySelector(".topbar");
  const button = document.getElementById("menu-toggle");
  if (!bar || !button) return;
  bar.classList.add("collapsible");
  button.addEventListener("click", () => {
    const open = bar.classList.toggle("open");
    button.setAttribute("aria-expanded", open ? "true" : "false");
  });
})();
