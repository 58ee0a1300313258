/* The inline goal-plan card of plan mode: the plan's live status, steps and their results (worded
   by orchestrator/plan_views.js, as on the Plans page, with its "offline demo engine" mark), with
   Approve, Execute, Resume (paused with nothing to answer), Poll and the answers to its open asks (choices, decision cards) — the same
   /api/v1/aria routes as the Plans page, refreshed on plan_updated / interaction_needed from the
   event bus. Text only via textContent. */
(() => {
  "use strict";
  const API = "/api/v1/aria";
  const cards = new Map(); // plan id → refresh functions of the cards showing it
  let bus = null;

  const { el } = window.Aria;
  const api = (method, path, body) => window.Aria.api(method, API + path, body);

  function listen() {
    if (bus || !window.AriaEvents) return;
    bus = window.AriaEvents.connect({
      types: ["plan_updated", "interaction_needed"],
      onFrame: (frame) => (cards.get(frame.plan_id) || []).forEach((refresh) => refresh()),
    });
  }

  function render(box, plan, refresh) {
    box.replaceChildren();
    const views = window.AriaPlanViews; // static/orchestrator/plan_views.js: the Plans page's wording
    const said = views ? views.statusText(plan) : plan.status;
    const status = el("p", "aria-note aria-plan-status", `${said} · ${plan.steps.length} step(s) · ${plan.autonomy}`);
    status.dataset.status = plan.status;
    box.appendChild(status);
    const outcome = views && views.outcome(plan);  // a completed plan that did not apply every change
    if (outcome) box.appendChild(outcome);
    const offline = views && views.offlineMark(plan);  // drafted by the offline demo engine, as on the Plans page
    if (offline) status.appendChild(offline);
    const guidance = views && views.guidance(plan);
    if (guidance) box.appendChild(guidance);
    const ol = el("ol", "aria-plan-steps");
    plan.steps.forEach((s) => {
      const li = el("li", null, `${views ? views.stepTitle(s) : s.capability} `);
      li.appendChild(el("span", `aria-badge aria-status-${s.status}`, s.status.replace(/_/g, " ")));
      const shown = views && views.result(s);
      if (shown) li.appendChild(shown); else if (s.error) li.appendChild(el("p", "aria-error", s.error));
      ol.appendChild(li);
    });
    box.appendChild(ol);
    const notes = views && views.notes(plan);
    if (notes) box.appendChild(notes);
    if (plan.error) box.appendChild(el("p", "aria-error", plan.error));
    const msg = el("p", "aria-error");
    msg.hidden = true;
    const act = (label, call) => {
      const b = el("button", null, label);
      b.type = "button";
      b.addEventListener("click", async () => {
        b.disabled = true;
        try { await call(); msg.hidden = true; } catch (e) { msg.textContent = e.message; msg.hidden = false; }
        refresh();
      });
      return b;
    };
    const actions = el("div", "aria-plan-actions");
    const path = `/plans/${plan.id}`;
    const choosing = (plan.interactions || []).some((i) => i.kind === "choice" && i.status === "open");
    if (plan.status === "draft" && !choosing) actions.appendChild(act("Approve", () => api("POST", `${path}/approve`)));
    if (plan.status === "approved") actions.appendChild(act("Execute", () => api("POST", `${path}/execute`)));
    // paused with nothing to answer (e.g. "pause plan 4"): the execute route resumes it, as on the Plans page
    const asking = (plan.interactions || []).some((i) => i.status === "open");
    if (plan.status === "paused" && !asking) actions.appendChild(act("Resume", () => api("POST", `${path}/execute`)));
    if (plan.steps.some((s) => s.status === "waiting_job")) actions.appendChild(act("Poll", () => api("POST", `${path}/poll`)));
    box.appendChild(actions);
    (plan.interactions || []).filter((i) => i.status === "open").forEach((ask) => {
      const row = el("div", "aria-plan-ask");
      const answer = (body) => api("POST", `/interactions/${ask.id}/answer`, body);
      if (ask.kind === "choice") {
        if (views) row.appendChild(views.choice(ask, (label, option) => act(label, () => answer({ choice: option }))));
        else ask.options.forEach((option) => row.appendChild(act(option, () => answer({ choice: option }))));
        box.appendChild(row);
        return;
      }
      // the card is on the owner's own plan: a gated ask says someone else decides, with no buttons
      row.appendChild(views ? views.card(ask, "owner") : el("p", null, ask.question));
      if (!ask.required_scope) {
        const yes = ask.kind === "confirm" ? "accept" : "approve";
        row.appendChild(act(yes === "accept" ? "Accept" : "Approve step", () => answer({ decision: yes })));
        row.appendChild(act("Reject", () => answer({ decision: "reject" })));
      }
      box.appendChild(row);
    });
    box.appendChild(msg);
  }

  /* Make a rendered plan_card node live. */
  function attach(node, planId) {
    if (!node || !Number.isInteger(planId)) return;
    const box = el("div", "aria-plan-live");
    box.dataset.planId = String(planId);
    const body = node.querySelector(".aria-card-body") || node;
    Array.from(body.children).forEach((child) => { if (child.tagName !== "STRONG" && child.tagName !== "H4") child.remove(); });
    body.appendChild(box);
    let latest = 0; // concurrent refreshes (a click and bus frames) may resolve out of order: newest wins
    const refresh = async () => {
      const mine = ++latest;
      try {
        const plan = await api("GET", `/plans/${planId}`);
        if (mine === latest) render(box, plan, refresh);
      } catch (e) { if (mine === latest) box.replaceChildren(el("p", "aria-error", e.message)); }
    };
    cards.set(planId, (cards.get(planId) || []).concat([refresh]));
    listen();
    refresh();
  }

  window.AriaPlanCard = { attach };
})();
