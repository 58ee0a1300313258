/* The Plans page: the viewer's goal-plans, their steps and asks, live over /ws/events.
 * Everything is built with createElement/textContent (no HTML strings); CSP allows static JS only. */
(() => {
  "use strict";
  const list = document.getElementById("plans-list");
  if (!list) return;
  const API = list.getAttribute("data-api") || "/api/v1/aria";
  const msg = document.getElementById("plans-msg");

  const { el } = window.Aria;
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

  /* "alert: 4.8 · reason: …" — what a person reads before deciding; unset (null) inputs mean "keep" and are left out. */
  function describe(value) {
    if (value === null || value === undefined) return "";
    if (typeof value !== "object") return String(value);
    if (Array.isArray(value)) return value.map(describe).filter(Boolean).join(", ");
    return Object.keys(value).map((key) => {
      const shown = describe(value[key]);
      if (!shown) return "";
      return `${key}: ${typeof value[key] === "object" && !Array.isArray(value[key]) ? `{${shown}}` : shown}`;
    }).filter(Boolean).join(" · ");
  }

  function answer(ask, decision) {
    return api("POST", `/interactions/${ask.id}/answer`, { decision });
  }

  function askNode(ask, canAnswer) {
    const li = el("li", "ask");
    li.appendChild(el("span", "ask-question", ask.question));
    if (ask.required_scope) li.appendChild(el("span", "step-inputs", `needs a different ${ask.required_scope}`));
    li.appendChild(el("div", "ask-evidence", describe(ask.evidence)));
    if (canAnswer) {
      const actions = el("div", "plan-actions");
      const yes = ask.kind === "confirm" ? "accept" : "approve";
      actions.appendChild(button(yes.charAt(0).toUpperCase() + yes.slice(1), () => answer(ask, yes)));
      actions.appendChild(button("Reject", () => answer(ask, "reject")));
      li.appendChild(actions);
    }
    return li;
  }

  function stepNode(step) {
    const li = el("li");
    li.appendChild(el("span", "step-cap", step.capability));
    li.appendChild(document.createTextNode(" "));
    const status = el("span", "step-status", step.status);
    status.setAttribute("data-status", step.status);
    li.appendChild(status);
    li.appendChild(el("span", "step-inputs", `${step.tier} · ${describe(step.inputs)}`));
    if (step.depends_on.length) li.appendChild(el("span", "step-inputs", `after ${step.depends_on.join(", ")}`));
    if (step.error) li.appendChild(el("span", "step-error", step.error));
    return li;
  }

  function planNode(plan) {
    const box = el("article", "plan");
    box.id = `plan-${plan.id}`;
    const head = el("div", "plan-head");
    head.appendChild(el("span", "plan-id", `#${plan.id}`));
    head.appendChild(el("span", "plan-goal", plan.goal));
    const status = el("span", "plan-status", plan.status);
    status.setAttribute("data-status", plan.status);
    head.appendChild(status);
    const autonomy = el("select", "plan-autonomy");
    ["ask_all", "ask_mutations", "auto"].forEach((value) => {
      const option = el("option", "", value);
      option.value = value;
      option.selected = value === plan.autonomy;
      autonomy.appendChild(option);
    });
    autonomy.disabled = ["completed", "cancelled", "failed"].includes(plan.status);
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

    const steps = el("ol", "plan-steps");
    plan.steps.forEach((step) => { steps.appendChild(stepNode(step)); });
    box.appendChild(steps);
    if (plan.planner_notes && plan.planner_notes.length) {
      box.appendChild(el("div", "plan-notes", plan.planner_notes.map((n) => `${n.action} ${n.capability || ""}: ${n.reason}`).join(" · ")));
    }
    if (plan.error) box.appendChild(el("div", "step-error", plan.error));

    const actions = el("div", "plan-actions");
    const path = `/plans/${plan.id}`;
    if (plan.status === "draft") actions.appendChild(button("Approve", () => api("POST", `${path}/approve`)));
    if (plan.status === "approved") actions.appendChild(button("Execute", () => api("POST", `${path}/execute`)));
    if (plan.steps.some((s) => s.status === "waiting_job")) {
      actions.appendChild(button("Poll jobs", () => api("POST", `${path}/poll`)));
    }
    if (["draft", "approved", "running", "paused"].includes(plan.status)) {
      actions.appendChild(button("Cancel", () => api("PATCH", path, { status: "cancelled" })));
    }
    box.appendChild(actions);

    const open = (plan.interactions || []).filter((i) => i.status === "open");
    if (open.length) {
      const asks = el("ul", "plans-asks");
      open.forEach((ask) => { asks.appendChild(askNode(ask, !ask.required_scope)); });
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
      const li = askNode(ask, true);
      li.insertBefore(el("span", "plan-id", `plan #${ask.plan_id} · `), li.firstChild);
      ul.appendChild(li);
    });
    panel.hidden = others.length === 0;
  }

  let pending = null;
  function refresh() {
    if (pending) return;
    pending = setTimeout(async () => {
      pending = null;
      const [plans, needs] = await Promise.allSettled([api("GET", "/plans"), api("GET", "/needs-me")]);
      if (plans.status === "fulfilled") renderPlans(plans.value); else say(plans.reason.message);
      if (needs.status === "fulfilled") renderNeeds(needs.value);
    }, 150);
  }

  document.getElementById("plans-new").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const refs = form.context_refs.value.split(",").map((s) => s.trim()).filter(Boolean);
    say("");
    try {
      await api("POST", "/plans", {
        goal: form.goal.value, context_refs: refs, done_when: form.done_when.value,
        autonomy: form.autonomy.value, planner: form.planner.value,
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
      types: ["plan_updated", "interaction_needed"],
      onFrame: refresh,
      onStatus
    });
  } else {
    onStatus("closed");
  }
  refresh();
})();
