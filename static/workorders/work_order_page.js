/*
 * The work-order page (/workorders/<id>/): RCA with its verdict and the RCA accuracy, the repair
 * order, execution controls (AriaWorkOrderActions), the completion report and the history. Kept live
 * from the event bus: any work_order_updated / rca_ready / work_order_ready frame for this order
 * re-reads /api/v1/workorders/<id>/execution. The evidence cards are drawn into #wo-evidence by the
 * shared renderers (window.AriaRender) when the page has them. An RCA the offline engine wrote
 * (wo.rca_engine.real_provider false) carries the "offline demo engine" mark on both.
 */
(() => {
  "use strict";
  const dataEl = document.getElementById("wo-page-data");
  if (!dataEl || !window.AriaWorkOrderActions) return;
  const data = JSON.parse(dataEl.textContent);
  let wo = data.work_order;

  const { el, api, fmtDateTime, fmtWindow, offlineMark } = window.Aria;
  const CLOSED = { completed: true, cancelled: true };
  function path(name) { return data.paths[name].replace("{id}", encodeURIComponent(wo.id)).replace("{cell}", encodeURIComponent(wo.cell_id)); }
  function showError(message) {
    const e = document.getElementById("wo-error");
    e.textContent = message;
    e.hidden = !message;
  }

  function drawRca() {
    const host = document.getElementById("wo-rca");
    host.textContent = "";
    const heading = document.getElementById("wo-rca-title");
    heading.querySelectorAll(".offline-mark").forEach((node) => node.remove());
    if (!wo.rca_summary) { host.appendChild(el("p", "cr-empty", "Investigator at work…")); return; }
    const mark = offlineMark(wo.rca_engine);
    if (mark) heading.appendChild(mark);
    host.appendChild(el("p", "wo-rca-summary", wo.rca_summary));
    const details = wo.rca_details || {};
    const meta = [];
    if (details.failure_mode) meta.push(`Proposed failure mode: ${details.failure_mode}`);
    if (typeof wo.confidence === "number") meta.push(`confidence ${Math.round(wo.confidence * 100)}%`);
    if (details.similar_past_failure) meta.push(`similar past failure ${details.similar_past_failure}`);
    if (meta.length) host.appendChild(el("p", "wo-facts", meta.join(" · ")));
    const report = wo.completion_report;
    if (report) {
      host.appendChild(el("p", `wo-verdict verdict-${report.rca_verdict}`, report.rca_verdict === "corrected"
        ? `Corrected by the technician: actually ${report.failure_mode}${report.actual_root_cause ? ` — ${report.actual_root_cause}` : ""}`
        : `Confirmed by the technician (${report.failure_mode})`));
    } else if (CLOSED[wo.status]) {
      host.appendChild(el("p", "wo-verdict verdict-proposed", `Proposed: never confirmed (${wo.status} without a completion report).`));
    } else {
      host.appendChild(el("p", "wo-verdict verdict-proposed", "Proposed: not confirmed until the order is completed with a report."));
    }
    const a = wo.rca_accuracy || {};
    document.getElementById("wo-rca-accuracy").textContent =
      `RCA confirmed ${a.confirmed || 0} / corrected ${a.corrected || 0} on ${wo.cell_tag}`;
  }

  function drawPlan() {
    const host = document.getElementById("wo-plan");
    host.textContent = "";
    if (wo.description) host.appendChild(el("p", "wo-description", wo.description));
    const actions = wo.recommended_actions || [];
    if (actions.length) {
      const ol = el("ol", "wo-actions");
      actions.forEach((a) => { ol.appendChild(el("li", null, typeof a === "string" ? a : (a.action || a.text || JSON.stringify(a)))); });
      host.appendChild(ol);
    }
    const facts = [];
    if ((wo.required_parts || []).length) facts.push(`Parts: ${wo.required_parts.map((p) => `${p.qty || 1}× ${p.ref}`).join(", ")}`);
    if ((wo.required_skills || []).length) facts.push(`Skills: ${wo.required_skills.join(", ")}`);
    if (wo.estimated_duration_min) facts.push(`Est. ${wo.estimated_duration_min} min`);
    if (wo.suggested_window_start) facts.push(`Window ${fmtWindow(wo.suggested_window_start, wo.suggested_window_end)}`);
    facts.push(`Priority ${wo.priority}`);
    host.appendChild(el("p", "wo-facts", facts.join(" · ")));
  }

  function drawReport() {
    const host = document.getElementById("wo-report");
    const r = wo.completion_report;
    host.textContent = "";
    if (!r) {
      // An order closed over the API or the admin (a bare complete, a cancel) has no report.
      const text = wo.status === "completed" ? "Completed without a report (closed from the admin or the API)."
        : wo.status === "cancelled" ? "Cancelled: no report." : "Not completed yet.";
      host.appendChild(el("p", "cr-empty", text));
      return;
    }
    const dl = el("dl", "wo-report-list");
    [["Work done", r.work_done], ["Problem", `${r.problem.label} (${r.problem.code})`], ["Cause", r.cause.label],
      ["Remedy", r.remedy.label], ["Actual root cause", r.actual_root_cause || "—"],
      ["Parts used", (r.parts_used || []).map((p) => `${p.qty}× ${p.ref}`).join(", ") || "none"],
      ["Labour", `${r.labour_hours} h`], ["Technician", r.technician || "—"]].forEach((row) => {
      dl.appendChild(el("dt", null, row[0]));
      dl.appendChild(el("dd", null, row[1]));
    });
    host.appendChild(dl);
  }

  function drawHistory() {
    const host = document.getElementById("wo-history");
    host.textContent = "";
    (wo.events || []).forEach((e) => {
      const li = el("li", "wo-history-item");
      const time = el("time", null, fmtDateTime(e.time));
      time.setAttribute("datetime", e.time);
      li.appendChild(time);
      li.appendChild(el("span", null, ` ${e.from_status === e.to_status ? e.to_status : `${e.from_status || "∅"} → ${e.to_status}`} · ${e.actor}${e.note ? ` · ${e.note}` : ""}`));
      host.appendChild(li);
    });
  }

  function drawEvidence() {
    const section = document.getElementById("wo-evidence");
    section.setAttribute("data-work-order-id", String(wo.id));
    const r = window.AriaRender;
    const details = wo.rca_details || {};
    if (!r || !r.drawInto || section.getAttribute("data-drawn") || !wo.rca_summary) return;
    let host = section.querySelector(".wo-evidence-card");
    if (!host) {  // below the section's heading, which drawInto would otherwise replace
      host = el("div", "wo-evidence-card");
      section.appendChild(host);
    }
    const engine = wo.rca_engine || {};
    const findings = [details.root_cause || wo.rca_summary, ...(details.contributing_factors || [])].filter(Boolean);
    try {
      r.drawInto(host, "diagnostic_card", { cell_id: wo.cell_id, cell_tag: wo.cell_tag, work_order_id: wo.id,
        title: details.failure_mode ? `Diagnosis · ${details.failure_mode}` : "Diagnosis", findings,
        confidence: wo.confidence, offline: engine.real_provider === false, engine: engine.engine });
      section.setAttribute("data-drawn", "1");
    } catch (err) { /* the evidence renderers own their errors */ }
  }

  function draw() {
    const status = document.getElementById("wo-status");
    status.textContent = wo.status;
    status.className = `wo-state state-${wo.status}`;
    status.setAttribute("data-status", wo.status);
    drawRca();
    drawPlan();
    AriaWorkOrderActions.render(document.getElementById("wo-execution"), wo, { canOperate: data.can_operate,
      onChange: (detail) => { showError(""); latest += 1; wo = detail; draw(); }, onError: showError });
    drawReport();
    drawHistory();
    drawEvidence();
  }
  // Reloads in flight (several frames, an action's answer) may resolve out of order: the newest wins.
  let latest = 0;
  async function reload() {
    const mine = ++latest;
    let fresh;
    try {
      fresh = await api("GET", path("detail"));
    } catch (err) {
      return;  // the next event reloads
    }
    if (mine !== latest) return;
    wo = fresh;
    draw();
  }


  draw();
  if (window.AriaEvents) {
    AriaEvents.connect({ after: data.latest_event_id, types: ["work_order_updated", "rca_ready", "work_order_ready"],
      onFrame: (frame) => { if (frame.work_order_id === wo.id) reload(); } });
  }
})();
