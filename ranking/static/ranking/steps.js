// A study that asks for more than one thing (ranking, facts, words) is done one step at a time: each answer would
// otherwise appear up to three times on one very long page, with the question far out of view. The steps are only
// shown and hidden here: every field stays in the one form, the draft (ranking.js) still keeps them all, and one
// submit sends them all. Without this script, or with a single step, every section shows as before.
// The step you are on is kept per tab (sessionStorage), so a reload comes back to it.
// Other scripts talk to this one by events on the form: "steps:reveal" (detail: an element about to get the focus:
// its step opens first), "assessment:section-done" (a step finished by keyboard: on to the next step, cancelled
// when there is one) and "assessment:refused" (a refused submit: the step of the first problem opens and its first
// missing control gets the focus, cancelled when found).
(function () {
  "use strict";
  const form = document.getElementById("ranking-form");
  if (!form) return;
  const steps = Array.from(form.querySelectorAll("[data-step]"));
  if (steps.length < 2) return;
  const question = document.querySelector(".rank-question");
  const storeKey = "ranking-step:" + form.dataset.draftKey;
  const title = (step) => step.dataset.stepTitle;
  let current = 0;

  // --- what a step still misses: the same checks as the page's own check before sending (ranking.js problems()) ---
  const checked = (root, selector) => root.querySelector(selector + ":checked") !== null;
  function missingIn(step) {
    const kind = step.dataset.step;
    if (kind === "rank") {
      const cards = Array.from(step.querySelectorAll(".answer-card"));
      const keep = document.getElementById("keep-order");
      if (keep && !keep.hidden && cards.length) return cards[0];  // the order is not set yet
      for (const card of cards) {
        if (!checked(card, "input[name^=tag_]")) return card.querySelector("input[name^=tag_]");
      }
      for (const card of cards) {
        const box = card.querySelector("input[name^=hall_]");
        const select = card.querySelector("select[name^=hallkind_]");
        if (box && box.checked && select && !select.value) return select;
      }
    } else if (kind === "facts") {
      for (const nugget of step.querySelectorAll(".nugget")) {
        if (!checked(nugget, "input[type=radio]")) return nugget;
      }
    } else if (kind === "words") {
      for (const answer of step.querySelectorAll(".span-answer")) {
        const marked = answer.querySelector(".span-list li") !== null;
        if (!marked && !checked(answer, "input[name^=clean_]")) return answer.querySelector(".span-text");
      }
    }
    return null;
  }

  // --- the step bar (at the top, kept in view with the question) and Back / Next under each step ---
  const head = document.createElement("div");
  head.className = "step-head";
  const bar = document.createElement("nav");
  bar.className = "step-bar";
  bar.setAttribute("aria-label", "Steps");
  const now = document.createElement("p");
  now.className = "step-now";
  now.setAttribute("aria-live", "polite");
  const list = document.createElement("ol");
  list.className = "step-list";
  const tabs = steps.map((step, i) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "step-tab secondary";
    button.dataset.index = String(i);
    const name = document.createElement("span");
    name.className = "step-name";
    name.textContent = i + 1 + " " + title(step);
    const state = document.createElement("span");
    state.className = "step-state";
    button.append(name, " ", state);
    button.addEventListener("click", () => open(i, true));
    li.appendChild(button);
    list.appendChild(li);
    return button;
  });
  bar.append(now, list);
  if (question) {
    question.before(head);
    head.appendChild(question);
    // On a phone the question shrinks to a line or two that opens on a tap, so the answers keep the screen.
    const toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = "question-toggle secondary small-button";
    toggle.setAttribute("aria-expanded", "false");
    toggle.textContent = "Show the whole question";
    toggle.addEventListener("click", () => {
      const open = question.classList.toggle("expanded");
      toggle.setAttribute("aria-expanded", String(open));
      toggle.textContent = open ? "Show less of the question" : "Show the whole question";
      measure();
    });
    question.appendChild(toggle);
  } else form.before(head);
  head.appendChild(bar);
  document.body.classList.add("stepped");

  steps.forEach((step, i) => {
    step.classList.add("step");
    step.tabIndex = -1;
    const nav = document.createElement("p");
    nav.className = "step-nav";
    if (i > 0) {
      const back = document.createElement("button");
      back.type = "button";
      back.className = "step-back secondary";
      back.textContent = "Back";
      back.addEventListener("click", () => open(i - 1, true));
      nav.appendChild(back);
    }
    if (i < steps.length - 1) {
      const next = document.createElement("button");
      next.type = "button";
      next.className = "step-next";
      next.textContent = "Next: " + title(steps[i + 1]).toLowerCase();
      next.addEventListener("click", () => open(i + 1, true));
      nav.appendChild(next);
    }
    step.appendChild(nav);
  });

  // The sticky head's height, so that what scrolls into view (a focused fact, a sticky progress line) is not
  // hidden under it.
  function measure() {
    document.documentElement.style.setProperty("--step-head-height", head.offsetHeight + "px");
  }
  if (window.ResizeObserver) new ResizeObserver(measure).observe(head);
  window.addEventListener("resize", measure);

  function paint() {
    steps.forEach((step, i) => {
      const done = missingIn(step) === null;
      tabs[i].querySelector(".step-state").textContent = done ? "done" : "to do";
      tabs[i].classList.toggle("done", done);
      tabs[i].classList.toggle("current", i === current);
      if (i === current) tabs[i].setAttribute("aria-current", "step");
      else tabs[i].removeAttribute("aria-current");
    });
    now.textContent = "Step " + (current + 1) + " of " + steps.length + " · " + title(steps[current]);
  }

  // focus: true puts the focus on the step's first missing control (else on the step itself); an element: on it.
  function open(index, focus) {
    current = Math.max(0, Math.min(index, steps.length - 1));
    steps.forEach((step, i) => { step.hidden = i !== current; });
    try { sessionStorage.setItem(storeKey, String(current)); } catch (err) { /* storage blocked */ }
    paint();
    measure();
    form.dispatchEvent(new CustomEvent("steps:shown", { detail: steps[current] }));
    if (focus) {
      const target = focus instanceof Element ? focus : missingIn(steps[current]) || steps[current];
      if (!(focus instanceof Element) && target === steps[current]) {
        target.focus({ preventScroll: true });
      } else target.focus();
      if (target === steps[current] || target.getBoundingClientRect().top > window.innerHeight) {
        steps[current].scrollIntoView({ block: "start" });
      }
    }
  }
  const stepOf = (el) => steps.findIndex((step) => step.contains(el));

  form.addEventListener("steps:reveal", (e) => {
    const i = stepOf(e.detail);
    if (i >= 0 && i !== current) open(i, false);
  });
  form.addEventListener("assessment:section-done", (e) => {
    const i = stepOf(e.detail);
    if (i < 0 || i >= steps.length - 1) return;
    e.preventDefault();
    open(i + 1, true);
  });
  form.addEventListener("assessment:refused", (e) => {
    for (let i = 0; i < steps.length; i++) {
      const target = missingIn(steps[i]);
      if (target) {
        e.preventDefault();
        open(i, target);
        return;
      }
    }
    // Only something outside the steps is missing (the reference guess): the last step, where it is asked.
    const guess = form.querySelector("input[name=unblinding_guess]");
    if (guess && !checked(form, "input[name=unblinding_guess]")) {
      e.preventDefault();
      open(steps.length - 1, false);
      guess.focus();
    }
  });
  ["change", "ranking:refreshed", "draft:applied"].forEach((name) => form.addEventListener(name, paint));

  let stored = 0;
  try { stored = Number(sessionStorage.getItem(storeKey)) || 0; } catch (err) { stored = 0; }
  open(stored, false);
  form.dataset.steps = String(steps.length);
})();
