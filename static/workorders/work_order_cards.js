/*
 * AriaWorkOrderCards — the Control Room's work-order cards: active orders first, each a card with
 * its lifecycle steps (detected → analyzed → open), RCA, actions and plan; completed and cancelled
 * orders below under "Closed", each a one-line summary that expands to the full card (the choice
 * survives re-renders). Built with createElement / textContent only.
 *
 * Active cards carry the execution controls (AriaWorkOrderActions: assign, start, hold, complete,
 * cancel) when the viewer may operate, and every card links to its work-order page.
 *
 *   AriaWorkOrderCards.render(hostElement, workOrders, { canOperate, onChange, onError })
 *
 * An RCA the offline engine wrote (wo.rca_engine.real_provider false) carries an "offline demo
 * engine" mark in its heading.
 */
((global) => {
  "use strict";

  const STEPS = ["detected", "analyzed", "open"];
  const CLOSED = { completed: true, cancelled: true };
  const expanded = {};  // work order id → the operator opened its collapsed card

  const { el, fmtDate, fmtWindow, offlineMark } = window.Aria;

  function describeFailure(value) {
    if (!value) return "";
    if (typeof value === "string") return value;
    if (typeof value !== "object") return String(value);
    const parts = [];
    ["failure_mode", "failure_time", "root_cause", "summary", "description"].forEach((k) => {
      if (value[k]) parts.push(k === "failure_time" ? fmtDate(value[k]) : String(value[k]));
    });
    return parts.length ? parts.join(" · ") : JSON.stringify(value);
  }
  function verdictText(report, wo) {
    if (!report) return "";
    if (!wo.rca_summary) return `Cause found: ${report.failure_mode}`;  // raised by hand: no RCA was proposed
    return report.rca_verdict === "corrected"
      ? `RCA corrected: actually ${report.failure_mode}${report.proposed_failure_mode ? ` (proposed ${report.proposed_failure_mode})` : ""}`
      : `RCA confirmed: ${report.failure_mode}`;
  }
  function workOrderCard(wo, opts) {
    const closed = CLOSED[wo.status] === true;
    const card = el(closed ? "details" : "article", `wo status-${wo.status}${closed ? " wo-closed" : ""}`);
    card.id = `work-order-${wo.id}`;
    card.setAttribute("data-work-order-id", String(wo.id));
    card.setAttribute("data-status", wo.status);
    if (closed) {
      const summary = el("summary", "wo-summary");
      summary.appendChild(el("span", "wo-id", `#${wo.id}`));
      summary.appendChild(el("span", "wo-cell", wo.cell_tag || ""));
      summary.appendChild(el("span", "wo-title", wo.title || "(untitled)"));
      summary.appendChild(el("span", `wo-state state-${wo.status}`, wo.status));
      summary.appendChild(el("span", `wo-priority prio-${wo.priority}`, wo.priority));
      if (wo.updated_at) summary.appendChild(el("time", "wo-when", fmtDate(wo.updated_at)));
      card.appendChild(summary);
      card.open = expanded[wo.id] === true;
      card.addEventListener("toggle", () => { expanded[wo.id] = card.open; });
    } else {
      const head = el("header", "wo-head");
      head.appendChild(el("span", "wo-id", `#${wo.id}`));
      head.appendChild(el("span", "wo-cell", wo.cell_tag || ""));
      head.appendChild(el("strong", "wo-title", wo.title || "Investigating anomaly…"));
      head.appendChild(el("span", `wo-priority prio-${wo.priority}`, wo.priority));
      card.appendChild(head);
    }

    // An order raised by hand starts open: it never was detected nor analyzed.
    if (wo.raised_by && !wo.triggered_by_alarm_id) card.appendChild(el("p", "wo-raised-by", `Raised by hand by ${wo.raised_by}`));
    const shownSteps = wo.raised_by && !wo.triggered_by_alarm_id ? ["open"] : STEPS;
    const steps = el("ol", "wo-steps");
    let reached = shownSteps.indexOf(wo.status);
    if (reached < 0 && wo.status !== "cancelled") reached = shownSteps.length;  // in_progress / completed
    shownSteps.forEach((step, i) => {
      const li = el("li", i < reached ? "done" : i === reached ? "current" : "todo", step);
      li.setAttribute("data-step", step);
      steps.appendChild(li);
    });
    if (!shownSteps.includes(wo.status)) steps.appendChild(el("li", "current", wo.status));
    card.appendChild(steps);

    if (wo.rca_summary) {
      const rca = el("section", "wo-rca");
      rca.appendChild(el("h3", null, `Root cause${typeof wo.confidence === "number" ?
  ` · confidence ${Math.round(wo.confidence * 100)}%` : ""}`));
      const mark = offlineMark(wo.rca_engine);
      if (mark) rca.lastChild.appendChild(mark);
      rca.appendChild(el("p", "wo-rca-summary", wo.rca_summary));
      const details = wo.rca_details || {};
      const similar = describeFailure(details.similar_past_failure);
      if (similar) rca.appendChild(el("p", "wo-similar", `Similar past failure: ${similar}`));
      card.appendChild(rca);
    } else if (wo.status === "detected") {
      card.appendChild(el("p", "wo-pending", "Investigator at work…"));
    }
    const actions = wo.recommended_actions || [];
    if (actions.length) {
      card.appendChild(el("h3", null, "Actions"));
      const ol = el("ol", "wo-actions");
      actions.forEach((a) => { ol.appendChild(el("li", null, typeof a === "string" ? a : (a.action || a.text || JSON.stringify(a)))); });
      card.appendChild(ol);
    }
    const facts = [];
    if ((wo.required_parts || []).length) {
      facts.push(`Parts: ${wo.required_parts.map((p) => `${p.qty || 1}× ${p.ref || p.name || "?"}`).join(", ")}`);
    }
    if (wo.estimated_duration_min) facts.push(`Est. ${wo.estimated_duration_min} min`);
    if (wo.suggested_window_start) facts.push(`Window ${fmtWindow(wo.suggested_window_start, wo.suggested_window_end)}`);
    if (facts.length) card.appendChild(el("p", "wo-facts", facts.join(" · ")));
    if (wo.completion_report) card.appendChild(el("p", `wo-verdict verdict-${wo.completion_report.rca_verdict}`,
      verdictText(wo.completion_report, wo)));
    if (global.AriaWorkOrderActions && typeof wo.id === "number") {
      const exec = el("div", "wo-exec-host");
      global.AriaWorkOrderActions.render(exec, wo, opts || {});
      card.appendChild(exec);
    }
    if (typeof wo.id === "number") {
      const links = el("p", "wo-links");
      const page = el("a", "wo-open", "Open work order");
      page.href = `/workorders/${wo.id}/`;
      links.appendChild(page);
      links.appendChild(document.createTextNode(" · "));
      const print = el("a", "wo-print-link", "Printable work order");  // workorders/views_print.py
      print.href = `/workorders/${wo.id}/print`;
      print.target = "_blank";
      print.rel = "noopener";
      links.appendChild(print);
      card.appendChild(links);
    }
    return card;
  }
  function render(host, workOrders, opts) {
    host.textContent = "";
    const active = workOrders.filter((wo) => !CLOSED[wo.status]);
    const closed = workOrders.filter((wo) => CLOSED[wo.status]);
    active.forEach((wo) => { host.appendChild(workOrderCard(wo, opts)); });
    if (closed.length) {
      host.appendChild(el("h3", "wo-closed-head", "Closed"));
      closed.forEach((wo) => { host.appendChild(workOrderCard(wo, opts)); });
    }
  }

  global.AriaWorkOrderCards = { render, isClosed: (status) => CLOSED[status] === true };
})(window);
