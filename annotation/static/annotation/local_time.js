// Times in the viewer's own time zone: <time datetime="ISO" data-local-time="time|date|datetime">. The server's
// text (in UTC) stays as the fallback without JavaScript and as the tooltip.
(function () {
  "use strict";
  const styles = {
    time: { hour: "2-digit", minute: "2-digit", timeZoneName: "short" },
    date: { day: "numeric", month: "short", year: "numeric" },
    datetime: { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" },
  };
  for (const el of document.querySelectorAll("time[data-local-time]")) {
    const when = new Date(el.getAttribute("datetime"));
    if (Number.isNaN(when.getTime())) continue;
    try {
      const text = new Intl.DateTimeFormat(undefined, styles[el.dataset.localTime] || styles.datetime).format(when);
      el.title = el.textContent.trim();
      el.textContent = text;
      el.dataset.localised = "1";
    } catch (e) { /* an old browser keeps the server's UTC text */ }
  }
})();
