// Times in the viewer's own time zone, on every page: <time datetime="ISO" data-local-time="time|date|datetime">
// (the `when` template filter writes them). Written the way the server writes them ("6 Dec 2026, 11:08 GMT+8"): an
// English page, a 24-hour clock and the zone's name whatever the browser's language, so a time never reads in two
// styles on one page. The server's text (in its own zone) stays as the tooltip and where JavaScript is off.
(function () {
  "use strict";
  const styles = {
    time: { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short" },
    date: { day: "numeric", month: "short", year: "numeric" },
    datetime: {
      day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23",
      timeZoneName: "short",
    },
  };
  function localise(root) {
    for (const el of root.querySelectorAll("time[data-local-time]:not([data-localised])")) {
      const when = new Date(el.getAttribute("datetime"));
      if (Number.isNaN(when.getTime())) continue;
      try {
        const text = new Intl.DateTimeFormat("en-GB", styles[el.dataset.localTime] || styles.datetime).format(when);
        el.title = el.textContent.trim();
        el.textContent = text;
        el.dataset.localised = "1";
      } catch (e) { /* an old browser keeps the server's text */ }
    }
  }
  localise(document);
  // Parts of pages that htmx swaps in (job progress, boards) carry times too.
  document.addEventListener("htmx:afterSwap", (e) => localise(e.target));
})();
