// Review page: the draft (verdict, relevance, texts) is also kept on the server, per person and item, so that it
// survives another device. review.js keeps it in localStorage and announces each save with a "review:draft" event;
// this file sends it (debounced, same-origin, with the CSRF token) and, on load, hands the server's copy to
// review.js through localStorage when it is newer than the one this browser has. Load it before review.js.
(function () {
  "use strict";
  const root = document.getElementById("review-root");
  if (!root) return;
  const draftKey = "review-draft:" + root.dataset.assignment + ":" + root.dataset.key;
  const url = root.dataset.draftUrl;

  // --- restore: the server's draft wins when this browser has none or an older one ---------------------------
  let server = null;
  try { server = root.dataset.serverDraft ? JSON.parse(root.dataset.serverDraft) : null; } catch (e) { server = null; }
  if (server) {
    let local = null;
    try { local = JSON.parse(localStorage.getItem(draftKey) || "null"); } catch (e) { local = null; }
    if (!local || (Number(server.saved) || 0) > (Number(local.saved) || 0)) {
      try { localStorage.setItem(draftKey, JSON.stringify(server)); } catch (e) { /* storage off: nothing to hand over */ }
    }
  }

  // --- save: one request a second at most, only when something the reviewer wrote changed -----------------
  const tokenInput = document.querySelector("input[name=csrfmiddlewaretoken]");
  const token = tokenInput ? tokenInput.value : "";
  const DELAY_MS = 1000;
  let pending = null;
  let timer = null;
  let stopped = false;
  function content(draft) {
    const copy = Object.assign({}, draft);
    delete copy.active;
    delete copy.saved;
    return JSON.stringify(copy);
  }
  let lastSent = server ? content(server) : content({ verdict: "", relevance: "" });
  function send() {
    timer = null;
    if (stopped || !pending) return;
    const draft = pending;
    pending = null;
    const body = content(draft);
    if (body === lastSent) return;
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": token },
      body: JSON.stringify(draft),
    }).then((response) => { if (response.ok) lastSent = body; }).catch(() => { /* offline: localStorage has it */ });
  }
  document.addEventListener("review:draft", (e) => {
    if (stopped) return;
    pending = e.detail;
    if (!timer) timer = setTimeout(send, DELAY_MS);
  });
  // A form sent ends the lease and the server drops the draft: a save still waiting must not bring it back.
  for (const form of document.querySelectorAll("form[data-kind]")) {
    form.addEventListener("submit", () => { stopped = true; if (timer) clearTimeout(timer); });
  }
})();
