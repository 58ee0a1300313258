/* The Plans page: the viewer's goal-plans, their steps and asks, live over /ws/events.
 * Everything is built with createElement/textContent (no HTML strings); CSP allows static JS only. */
(function () {
  "use strict";
  var list = document.getElementById("plans-list");
  if (!list) return;
  var API = list.getAttribute("data-api") || "/api/v1/aria";
  var msg = document.getElementById("plans-msg");

  function cookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : "";
  }

  function api(method, path, body) {
    var headers = { Accept: "application/json" };
    if (method !== "GET") { headers["Content-Type"] = "application/json"; headers["X-CSRFToken"] = cookie("csrftoken"); }
    return fetch(API + path, {
      method: method, credentials: "same-origin", headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          var detail = data.detail || ("HTTP " + response.status);
          if (data.allowed) detail += " (allowed: " + data.allowed.join(", ") + ")";
          throw new Error(detail);
        }
        return data;
      });
    });
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function say(text) {
    msg.textContent = text || "";
    msg.hidden = !text;
  }

  function button(label, onClick) {
    var b = el("button", "", label);
    b.type = "button";
    b.addEventListener("click", function () {
      b.disabled = true;
      say("");
      onClick().then(refresh, function (err) { say(err.message); b.disabled = false; });
    });
    return b;
  }

  /* "alert: 4.8 · reason: …" — what a person reads before deciding; unset (null) inputs mean "keep" and are left out. */
  function describe(value) {
    if (value === null || value === undefined) return "";
    if (typeof value !== "object") return String(value);
    if (Array.isArray(value)) return value.map(describe).filter(Boolean).join(", ");
    return Object.keys(value).map(function (key) {
      var shown = describe(value[key]);
      if (!shown) return "";
      return key + ": " + (typeof value[key] === "object" && !Array.isArray(value[key]) ? "{" + shown + "}" : shown);
    }).filter(Boolean).join(" · ");
  }

  function answer(ask, decision) {
    return api("POST", "/interactions/" + ask.id + "/answer", { decision: decision });
  }

  function askNode(ask, canAnswer) {
    var li = el("li", "ask");
    li.appendChild(el("span", "ask-question", ask.question));
    if (ask.required_scope) li.appendChild(el("span", "step-inputs", "needs a different " + ask.required_scope));
    li.appendChild(el("div", "ask-evidence", describe(ask.evidence)));
    if (canAnswer) {
      var actions = el("div", "plan-actions");
      var yes = ask.kind === "confirm" ? "accept" : "approve";
      actions.appendChild(button(yes.charAt(0).toUpperCase() + yes.slice(1), function () { return answer(ask, yes); }));
      actions.appendChild(button("Reject", function () { return answer(ask, "reject"); }));
      li.appendChild(actions);
    }
    return li;
  }

  function stepNode(step) {
    var li = el("li");
    li.appendChild(el("span", "step-cap", step.capability));
    li.appendChild(document.createTextNode(" "));
    var status = el("span", "step-status", step.status);
    status.setAttribute("data-status", step.status);
    li.appendChild(status);
    li.appendChild(el("span", "step-inputs", step.tier + " · " + describe(step.inputs)));
    if (step.depends_on.length) li.appendChild(el("span", "step-inputs", "after " + step.depends_on.join(", ")));
    if (step.error) li.appendChild(el("span", "step-error", step.error));
    return li;
  }

  function planNode(plan) {
    var box = el("article", "plan");
    box.id = "plan-" + plan.id;
    var head = el("div", "plan-head");
    head.appendChild(el("span", "plan-id", "#" + plan.id));
    head.appendChild(el("span", "plan-goal", plan.goal));
    var status = el("span", "plan-status", plan.status);
    status.setAttribute("data-status", plan.status);
    head.appendChild(status);
    var autonomy = el("select", "plan-autonomy");
    ["ask_all", "ask_mutations", "auto"].forEach(function (value) {
      var option = el("option", "", value);
      option.value = value;
      option.selected = value === plan.autonomy;
      autonomy.appendChild(option);
    });
    autonomy.disabled = ["completed", "cancelled", "failed"].indexOf(plan.status) >= 0;
    autonomy.addEventListener("change", function () {
      api("PATCH", "/plans/" + plan.id, { autonomy: autonomy.value }).then(refresh, function (err) { say(err.message); });
    });
    head.appendChild(autonomy);
    box.appendChild(head);

    var steps = el("ol", "plan-steps");
    plan.steps.forEach(function (step) { steps.appendChild(stepNode(step)); });
    box.appendChild(steps);
    if (plan.planner_notes && plan.planner_notes.length) {
      box.appendChild(el("div", "plan-notes", plan.planner_notes.map(function (n) {
        return n.action + " " + (n.capability || "") + ": " + n.reason;
      }).join(" · ")));
    }
    if (plan.error) box.appendChild(el("div", "step-error", plan.error));

    var actions = el("div", "plan-actions");
    var path = "/plans/" + plan.id;
    if (plan.status === "draft") actions.appendChild(button("Approve", function () { return api("POST", path + "/approve"); }));
    if (plan.status === "approved") actions.appendChild(button("Execute", function () { return api("POST", path + "/execute"); }));
    if (plan.steps.some(function (s) { return s.status === "waiting_job"; })) {
      actions.appendChild(button("Poll jobs", function () { return api("POST", path + "/poll"); }));
    }
    if (["draft", "approved", "running", "paused"].indexOf(plan.status) >= 0) {
      actions.appendChild(button("Cancel", function () { return api("PATCH", path, { status: "cancelled" }); }));
    }
    box.appendChild(actions);

    var open = (plan.interactions || []).filter(function (i) { return i.status === "open"; });
    if (open.length) {
      var asks = el("ul", "plans-asks");
      open.forEach(function (ask) { asks.appendChild(askNode(ask, !ask.required_scope)); });
      box.appendChild(asks);
    }
    return box;
  }

  function renderPlans(plans) {
    list.textContent = "";
    document.getElementById("plans-empty").hidden = plans.length > 0;
    plans.forEach(function (plan) { list.appendChild(planNode(plan)); });
  }

  function renderNeeds(needs) {
    var badge = document.getElementById("plans-needs");
    document.getElementById("plans-needs-count").textContent = String(needs.count);
    badge.hidden = needs.count === 0;
    var panel = document.getElementById("plans-asks-panel");
    var ul = document.getElementById("plans-asks");
    ul.textContent = "";
    var others = needs.interactions.filter(function (i) { return i.required_scope; });
    others.forEach(function (ask) {
      var li = askNode(ask, true);
      li.insertBefore(el("span", "plan-id", "plan #" + ask.plan_id + " · "), li.firstChild);
      ul.appendChild(li);
    });
    panel.hidden = others.length === 0;
  }

  var pending = null;
  function refresh() {
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      api("GET", "/plans").then(renderPlans, function (err) { say(err.message); });
      api("GET", "/needs-me").then(renderNeeds, function () {});
    }, 150);
  }

  document.getElementById("plans-new").addEventListener("submit", function (event) {
    event.preventDefault();
    var form = event.target;
    var refs = form.context_refs.value.split(",").map(function (s) { return s.trim(); }).filter(Boolean);
    say("");
    api("POST", "/plans", {
      goal: form.goal.value, context_refs: refs, done_when: form.done_when.value,
      autonomy: form.autonomy.value, planner: form.planner.value
    }).then(function () { form.reset(); refresh(); }, function (err) { say(err.message); });
  });

  var pill = document.getElementById("plans-ws-status");
  function onStatus(status) { pill.textContent = status; pill.setAttribute("data-status", status); }
  if (window.AriaEvents) {
    window.AriaEvents.connect({
      types: ["plan_updated", "interaction_needed"],
      onFrame: refresh,
      onStatus: onStatus
    });
  } else {
    onStatus("closed");
  }
  refresh();
})();
