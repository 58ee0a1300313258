/* The Plans page: the viewer's goal-plans, their steps and asks, live over /ws/events.
 * Everything is built with createElement/textContent (no HTML strings); CSP allows static JS only. */
(() => {
  "use strict";
  const list = document.getElementById("plans-list");
  if (!list) return;
  const API = list.getAttribute("data-api") || "/api/v1/aria";
  const msg = document.getElementById("plans-msg");

  const { el } = window.Aria;
  // The autonomy values with the model's labels (the view renders them; the New plan form uses the same).
  const configNode = document.getElementById("plans-config");
  const config = configNode ? JSON.parse(configNode.textContent) : {};
  const AUTONOMY = config.autonomy || ["ask_all", "ask_mutations", "auto"].map((value) => ({ value, label: value }));
  // Moving a plan or a step needs the operator scope (the API answers 403 without it): no buttons then.
  const CAN_OPERATE = config.can_operate !== false;
  const api = (method, path, body) => window.Aria.api(method, API + path, body);

  function say(text) {
    msg.textContent = text || "";
    msg.hidden = !text;
  }

  function button(label, onClick) {
    const b = el("button", "", label);
    b.type = "button";
    b.addEventListener("click", async () => {
      b.disabled = true;
      say("");
      try {
        await onClick();
      } catch (err) {
        say(err.message);
        b.disabled = false;
        return;
      }
      refresh();
    });
    return b;
  }

  /* "alert: 4.8 · reason: …" — a step's inputs; unset (null) inputs mean "keep" and are left out. */
  function describe(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "number" && !Number.isInteger(value)) return window.Aria.fmtNumber(value);  // 73.0555 → 73.06
    if (typeof value !== "object") return String(value);
    if (Array.isArray(value)) return value.map(describe).filter(Boolean).join(", ");
    return Object.keys(value).map((key) => {
      const shown = describe(value[key]);
      if (!shown) return "";
      return `${key}: ${typeof value[key] === "object" && !Array.isArray(value[key]) ? `{${shown}}` : shown}`;
    }).filter(Boolean).join(" · ");
  }

  const views = window.AriaPlanViews;

  /* An open ask: a choice (one button per option) or a decision card with Approve/Reject.
   * `viewer` is "owner" on the viewer's own plans, "decider" in the waiting-for-you panel. */
  function askNode(ask, viewer) {
    const li = el("li", "ask");
    li.setAttribute("data-kind", ask.kind);
    if (ask.kind === "choice") {
      li.appendChild(views.choice(ask, (label, option) => button(label, () => api("POST", `/interactions/${ask.id}/answer`, { choice: option }))));
      return li;
    }
    li.appendChild(views.card(ask, viewer));
    const mayAnswer = viewer === "decider" || !ask.required_scope;
    if (mayAnswer) {
      const actions = el("div", "plan-actions");
      const yes = ask.kind === "confirm" ? "accept" : "approve";
      const answer = (decision) => api("POST", `/interactions/${ask.id}/answer`, { decision });
      actions.appendChild(button(yes.charAt(0).toUpperCase() + yes.slice(1), () => answer(yes)));
      actions.appendChild(button("Reject", () => answer("reject")));
      li.appendChild(actions);
    }
    return li;
  }

  const STOPPABLE = ["running", "waiting_job"]; // a step waiting for a human is skipped (its ask withdrawn)
  const SKIPPABLE = ["pending", "waiting_interaction"];

  function stepNode(plan, step) {
    const li = el("li", "plan-step");
    li.setAttribute("data-order", String(step.order));
    li.appendChild(el("span", "step-title", views.stepTitle(step)));
    li.appendChild(document.createTextNode(" "));
    const status = el("span", "step-status", step.status);
    status.setAttribute("data-status", step.status);
    li.appendChild(status);
    li.appendChild(el("span", "step-cap", step.capability));
    li.appendChild(el("span", "step-inputs", `${step.tier} · ${describe(step.inputs)}`));
    if (step.depends_on.length) li.appendChild(el("span", "step-inputs", `after ${step.depends_on.join(", ")}`));
    const shown = views.result(step);
    if (shown) li.appendChild(shown);
    const live = ["running", "paused"].includes(plan.status);
    const open = !["completed", "cancelled", "failed"].includes(plan.status);
    const path = `/plans/${plan.id}/steps/${step.order}`;
    const moves = el("span", "step-moves");
    if (!CAN_OPERATE) { /* no moves without the operator scope */ }
    else if (live && STOPPABLE.includes(step.status)) {
      moves.appendChild(button("Stop step", () => api("POST", `${path}/stop`)));
      const after = views.dependents(plan, step.order);  // a stop cuts them off too: say so beside the button
      if (after.length) moves.appendChild(el("span", "step-stop-note", `stopping it also keeps step${after.length > 1 ? "s" : ""} ${after.join(", ")} from running`));
    }
    else if (open && SKIPPABLE.includes(step.status)) moves.appendChild(button("Skip step", () => api("POST", `${path}/skip`)));
    if (moves.children.length) li.appendChild(moves);
    return li;
  }

  function planNode(plan) {
    const box = el("article", "plan");
    box.id = `plan-${plan.id}`;
    const head = el("div", "plan-head");
    head.appendChild(el("span", "plan-id", `#${plan.id}`));
    head.appendChild(el("span", "plan-goal", plan.goal));
    const offline = views.offlineMark(plan);  // drafted by the offline demo engine
    if (offline) head.appendChild(offline);
    const status = el("span", "plan-status", views.statusText(plan));
    status.setAttribute("data-status", plan.status);
    if (plan.outcome) status.setAttribute("data-outcome", "not-all-applied");
    head.appendChild(status);
    const autonomy = el("select", "plan-autonomy");
    AUTONOMY.forEach(({ value, label }) => {
      const option = el("option", "", label);
      option.value = value;
      option.selected = value === plan.autonomy;
      autonomy.appendChild(option);
    });
    autonomy.disabled = !CAN_OPERATE || ["completed", "cancelled", "failed"].includes(plan.status);
    autonomy.addEventListener("change", async () => {
      try {
        await api("PATCH", `/plans/${plan.id}`, { autonomy: autonomy.value });
      } catch (err) {
        say(err.message);
        return;
      }
      refresh();
    });
    head.appendChild(autonomy);
    box.appendChild(head);
    const outcome = views.outcome(plan);
    if (outcome) box.appendChild(outcome);

    const steps = el("ol", "plan-steps");
    const guidance = views.guidance(plan);
    if (guidance) box.appendChild(guidance);
    plan.steps.forEach((step) => { steps.appendChild(stepNode(plan, step)); });
    box.appendChild(steps);
    const notes = views.notes(plan);
    if (notes) box.appendChild(notes);
    if (plan.error) box.appendChild(el("div", "step-error", plan.error));

    const actions = el("div", "plan-actions");
    const path = `/plans/${plan.id}`;
    const choosing = (plan.interactions || []).some((i) => i.kind === "choice" && i.status === "open");
    if (plan.status === "draft" && !choosing) actions.appendChild(button("Approve", () => api("POST", `${path}/approve`)));
    if (plan.status === "approved") actions.appendChild(button("Execute", () => api("POST", `${path}/execute`)));
    // paused with nothing to answer (e.g. "pause plan 4" to the coordinator): the execute route resumes it
    const asking = (plan.interactions || []).some((i) => i.status === "open");
    if (plan.status === "paused" && !asking) actions.appendChild(button("Resume", () => api("POST", `${path}/execute`)));
    if (plan.steps.some((s) => s.status === "waiting_job")) {
      actions.appendChild(button("Poll jobs", () => api("POST", `${path}/poll`)));
    }
    if (["draft", "approved", "running", "paused"].includes(plan.status)) {
      actions.appendChild(button("Cancel", () => api("PATCH", path, { status: "cancelled" })));
    }
    if (!CAN_OPERATE && actions.children.length) {
      actions.replaceChildren(el("span", "plan-scope-note", "Moving this plan needs the operator scope; ask an administrator."));
    }
    box.appendChild(actions);

    const open = (plan.interactions || []).filter((i) => i.status === "open");
    if (open.length) {
      const asks = el("ul", "plans-asks");
      open.forEach((ask) => { asks.appendChild(askNode(ask, "owner")); });
      box.appendChild(asks);
    }
    return box;
  }

  function renderPlans(plans) {
    list.textContent = "";
    document.getElementById("plans-empty").hidden = plans.length > 0;
    plans.forEach((plan) => { list.appendChild(planNode(plan)); });
  }

  function renderNeeds(needs) {
    const badge = document.getElementById("plans-needs");
    document.getElementById("plans-needs-count").textContent = String(needs.count);
    badge.hidden = needs.count === 0;
    const panel = document.getElementById("plans-asks-panel");
    const ul = document.getElementById("plans-asks");
    ul.textContent = "";
    const others = needs.interactions.filter((i) => i.required_scope);
    others.forEach((ask) => {
      const li = askNode(ask, "decider");
      // the plan reference opens the question's own line (before the card block it sat on a line alone)
      const line = li.querySelector(".decision-question") || li;
      line.insertBefore(el("span", "plan-id", `plan #${ask.plan_id} · `), line.firstChild);
      ul.appendChild(li);
    });
    panel.hidden = others.length === 0;
  }

  let pending = null;
  let latest = 0; // refreshes in flight (a click and bus frames) may resolve out of order: newest wins
  function refresh() {
    if (pending) return;
    pending = setTimeout(async () => {
      pending = null;
      const mine = ++latest;
      const [plans, needs] = await Promise.allSettled([api("GET", "/plans"), api("GET", "/needs-me")]);
      if (mine !== latest) return;  // a newer refresh was sent meanwhile: its answer is drawn
      if (plans.status === "fulfilled") renderPlans(plans.value); else say(plans.reason.message);
      if (needs.status === "fulfilled") renderNeeds(needs.value);
    }, 150);
  }

  /* "P-02, line 1" → {cells: ["P-02"], lines: ["line 1"]}: the structured guidance the planner applies. */
  function guidanceOf(text) {
    const items = text.split(",").map((s) => s.trim()).filter(Boolean);
    const out = {};
    const lines = items.filter((s) => /^line\b/i.test(s));
    const cells = items.filter((s) => !/^line\b/i.test(s)).map((s) => s.toUpperCase());
    if (lines.length) out.lines = lines;
    if (cells.length) out.cells = cells;
    return out;
  }

  const newPlan = document.getElementById("plans-new");  // drawn for operators only
  if (newPlan) newPlan.addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const refs = form.context_refs.value.split(",").map((s) => s.trim()).filter(Boolean);
    say("");
    try {
      await api("POST", "/plans", {
        goal: form.goal.value, context_refs: refs, done_when: form.done_when.value,
        autonomy: form.autonomy.value, planner: form.planner.value, constraints: guidanceOf(form.guidance.value),
      });
    } catch (err) {
      say(err.message);
      return;
    }
    form.reset();
    refresh();
  });


  const pill = document.getElementById("plans-ws-status");
  function onStatus(status) { pill.textContent = status; pill.setAttribute("data-status", status); }
  if (window.AriaEvents) {
    window.AriaEvents.connect({
      types: ["plan_updated", "interaction_needed", "interaction_closed"],
      onFrame: refresh,
      onStatus
    });
  } else {
    onStatus("closed");
  }
  refresh();
})();
