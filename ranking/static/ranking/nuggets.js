// Nugget assessment: for each answer (known by its letter only), the item's facts one after another, labelled by
// 1 / 2 / 3 (supported / partly / not supported) or by the buttons; the next fact comes up by itself, then the next
// answer. Sentences of an answer are marked wrong / unsupported by W / U (on the focused sentence) or the buttons.
// The labels are plain radio buttons and the marks hidden fields of the page's form: ranking.js keeps them in the
// draft (here and on the server) and this file tells it of every change with a "change" event.
(function () {
  "use strict";
  const form = document.getElementById("ranking-form");
  const panel = document.getElementById("nugget-assessment");
  if (!form || !panel) return;
  const rankingToo = panel.dataset.ranking === "1";
  const progress = document.getElementById("nugget-progress");
  const nuggets = Array.from(panel.querySelectorAll(".nugget"));  // answer after answer, each in its order
  const KEYS = { 1: "support", 2: "partial", 3: "not_support" };
  const KINDS = { w: "wrong", u: "unsupported" };
  let current = 0;

  const answerOf = (el) => el.closest(".nugget-answer");
  const labelOf = (nugget) => {
    const checked = nugget.querySelector("input[type=radio]:checked");
    return checked ? checked.value : "";
  };
  const changed = (input) => input.dispatchEvent(new Event("change", { bubbles: true }));

  function show(index, focus) {
    if (!nuggets.length) {
      progress.textContent = "This question has no facts to check.";
      return;
    }
    current = Math.max(0, Math.min(index, nuggets.length - 1));
    nuggets.forEach((n, i) => n.classList.toggle("current", i === current));
    const nugget = nuggets[current];
    const answer = answerOf(nugget);
    const own = Array.from(answer.querySelectorAll(".nugget"));
    const left = nuggets.filter((n) => !labelOf(n)).length;
    progress.textContent = "Answer " + answer.dataset.slot + " · nugget " + (own.indexOf(nugget) + 1) + " of " +
      own.length + (left ? " · " + left + " still to label" : " · every fact labelled");
    if (focus) {
      form.dispatchEvent(new CustomEvent("steps:reveal", { detail: nugget }));  // its step opens (steps.js)
      nugget.focus({ preventScroll: true });
      nugget.scrollIntoView({ block: "nearest" });
    }
  }

  function label(value) {
    const nugget = nuggets[current];
    const input = nugget.querySelector("input[value=" + value + "]");
    input.checked = true;
    changed(input);
    if (current < nuggets.length - 1) show(current + 1, true);
    else {
      show(current, false);
      // The last fact: on to what is left (a fact skipped earlier), else to sending.
      const open = nuggets.findIndex((n) => !labelOf(n));
      if (open >= 0) show(open, true);
      else if (form.dispatchEvent(new CustomEvent("assessment:section-done", { detail: panel, cancelable: true }))) {
        document.getElementById("submit-ranking").focus();  // no step after this one (steps.js moved on if there is)
      }
    }
  }

  // --- sentence marks: the same kind again clears it ---
  function paintSentence(sentence) {
    const kind = sentence.querySelector("input[type=hidden]").value;
    sentence.classList.toggle("marked-wrong", kind === "wrong");
    sentence.classList.toggle("marked-unsupported", kind === "unsupported");
    sentence.querySelectorAll("button.mark").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.kind === kind)));
  }
  function mark(sentence, kind) {
    const input = sentence.querySelector("input[type=hidden]");
    input.value = input.value === kind ? "" : kind;
    paintSentence(sentence);
    changed(input);
  }

  panel.addEventListener("click", (e) => {
    const button = e.target.closest("button.mark");
    if (button) mark(button.closest(".sentence"), button.dataset.kind);
  });
  // A tap (or click) on a label: that fact becomes the current one and the highlight moves on.
  panel.addEventListener("change", (e) => {
    if (e.target.type !== "radio") return;
    const index = nuggets.indexOf(e.target.closest(".nugget"));
    if (index >= 0 && e.isTrusted) show(index + 1 < nuggets.length ? index + 1 : index, false);
  });
  panel.addEventListener("focusin", (e) => {
    const nugget = e.target.closest(".nugget");
    if (nugget) show(nuggets.indexOf(nugget), false);
  });

  // --- keyboard ---
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (t.tagName === "TEXTAREA" || t.tagName === "SELECT" || (t.tagName === "INPUT" && t.type === "text")) return;
    if (t.closest && t.closest("#span-marking")) return;  // the span marking's keys are its own (spans.js)
    const inside = panel.contains(t);
    // With a ranking on the same page its keys win outside this panel (N comes here); alone, the keys are these.
    if (!inside && rankingToo && e.key.toLowerCase() === "n" && !e.shiftKey && nuggets.length) {
      show(current, true);
      e.preventDefault();
      return;
    }
    if (!inside && panel.hidden) return;  // another step is shown (steps.js)
    if (!inside && (rankingToo || (t !== document.body && t.tagName !== "BUTTON"))) return;
    // On a button outside (Submit, once every fact is labelled) only Backspace acts: back to the last fact.
    if (!inside && t.tagName === "BUTTON") {
      if (e.key === "Backspace" && nuggets.length) { show(current, true); e.preventDefault(); }
      return;
    }
    const sentence = t.closest && t.closest(".sentence");
    const key = e.key.toLowerCase();
    if (sentence && KINDS[key] && !e.shiftKey) {
      mark(sentence, KINDS[key]);
      e.preventDefault();
      return;
    }
    if (sentence && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      const all = Array.from(answerOf(sentence).querySelectorAll(".sentence"));
      const next = all[all.indexOf(sentence) + (e.key === "ArrowDown" ? 1 : -1)];
      if (next) next.focus();
      e.preventDefault();
      return;
    }
    if (sentence && e.key === "Escape") {
      show(current, true);
      e.preventDefault();
      return;
    }
    if (KEYS[e.key] && !e.shiftKey && nuggets.length) {
      label(KEYS[e.key]);
      e.preventDefault();
      return;
    }
    if (key === "s" && !e.shiftKey && nuggets.length) {
      const first = answerOf(nuggets[current]).querySelector(".sentence");
      if (first) { first.focus(); e.preventDefault(); }
      return;
    }
    if (sentence || t.tagName === "BUTTON") return;
    if (e.key === "Escape" && rankingToo) {  // back to the ranking
      const card = document.querySelector("#ranked .answer-card");
      if (card) {
        form.dispatchEvent(new CustomEvent("steps:reveal", { detail: card }));
        card.focus();
        e.preventDefault();
      }
      return;
    }
    if (e.key === "ArrowLeft" || e.key === "ArrowUp" || e.key === "Backspace") {
      show(current - 1, true);
      e.preventDefault();
    } else if (e.key === "ArrowRight" || e.key === "ArrowDown") {
      show(current + 1, true);
      e.preventDefault();
    }
  });

  // --- the send check (ranking.js asks before sending; the server checks again) ---
  form.addEventListener("assessment:check", (e) => {
    panel.querySelectorAll(".nugget-answer").forEach((answer) => {
      const open = Array.from(answer.querySelectorAll(".nugget")).map((n, i) => (labelOf(n) ? 0 : i + 1)).filter(Boolean);
      if (open.length) {
        e.detail.push("answer " + answer.dataset.slot + ": no label yet for nugget " + open.join(", ") + " (of " +
          answer.querySelectorAll(".nugget").length + ")");
      }
    });
  });

  // --- a draft put back (this browser's or the server's): show its marks, go on where it stopped ---
  function resume(focus) {
    panel.querySelectorAll(".sentence").forEach(paintSentence);
    const open = nuggets.findIndex((n) => !labelOf(n));
    show(open >= 0 ? open : 0, focus);
  }
  form.addEventListener("draft:applied", () => resume(false));
  resume(!rankingToo && !panel.hidden && document.activeElement === document.body);
  panel.dataset.ready = "1";
})();
