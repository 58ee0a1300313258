/* window.AriaPlanViews — how a plan reads to a person, shared by the Plans page (plans.js) and the
 * inline plan card (assistant/plan_card.js): step titles, step results (an investigation's root
 * cause and confidence with a link to its work order, a read's rows as a small table, errors
 * plainly), planner notes, the plan's guidance, decision cards, choice asks and the offline mark.
 * Text only via textContent (Aria.el); links are built from ids, never from result text. */
(() => {
  "use strict";
  const { el, fmtNumber } = window.Aria;
  const MAX_ROWS = 8;

  const woLink = (id, label) => {
    const a = el("a", "plan-wo-link", label || `WO-${id}`);
    a.href = `/workorders/${Number(id)}/`;
    return a;
  };

  const fmt = (value) => {
    if (value === null || value === undefined || value === "") return "—";
    if (typeof value === "number") return Number.isInteger(value) ? String(value) : fmtNumber(value);  // 4.5916 → 4.59
    if (Array.isArray(value)) return value.map(fmt).join(", ");
    if (typeof value === "object") return Object.keys(value).map((k) => `${k}: ${fmt(value[k])}`).join(" · ");
    return String(value);
  };

  /* The step's cell as people know it: its tag from the API (`cell_tag`), the id only when unknown. */
  const cellOf = (i, step) => step.cell_tag || `cell ${i.cell_id}`;
  const TITLES = {
    "workorders.start_investigation": (i) => `Investigate WO-${i.work_order_id}`,
    "workorders.generate_repair_order": (i) => `Repair order for WO-${i.work_order_id}`,
    "workorders.get_work_order": (i) => `Read WO-${i.work_order_id}`,
    "workorders.get_signal_anomalies": (i, step) => `Alarms of ${cellOf(i, step)}`,
    "workorders.get_current_signals": (i, step) => `Signals of ${cellOf(i, step)}`,
    "workorders.get_work_orders": (i, step) => (i.cell_id ? `Work orders of ${cellOf(i, step)}` : "Work orders"),
    "workorders.find_cells": (i) => `Find cells “${i.query || ""}”`,
  };

  /* "Investigate WO-12", "Alarms of C-01" — what the step does, in words; the capability stays beside it. */
  function stepTitle(step) {
    const title = TITLES[step.capability];
    return title ? title(step.inputs || {}, step) : step.capability;
  }

  /* The columns a table of rows shows: preferred ones first, then other plain values (at most 6). */
  const PREFERRED = ["id", "tag", "cell_tag", "key", "name", "title", "status", "state", "severity", "priority", "value", "unit", "line", "failure_mode", "raised_at"];
  function columns(rows) {
    const keys = [];
    rows.slice(0, MAX_ROWS).forEach((row) => Object.keys(row).forEach((k) => {
      const v = row[k];
      if (!keys.includes(k) && (v === null || typeof v !== "object")) keys.push(k);
    }));
    return keys.sort((a, b) => {
      const ia = PREFERRED.indexOf(a) < 0 ? 99 : PREFERRED.indexOf(a);
      const ib = PREFERRED.indexOf(b) < 0 ? 99 : PREFERRED.indexOf(b);
      return ia - ib;
    }).slice(0, 6);
  }

  function table(rows, name) {
    const box = el("div", "plan-result-table");
    const cols = columns(rows);
    const t = el("table", "plan-rows");
    const head = el("tr");
    cols.forEach((c) => head.appendChild(el("th", "", c.replace(/_/g, " "))));
    t.appendChild(head);
    rows.slice(0, MAX_ROWS).forEach((row) => {
      const tr = el("tr");
      cols.forEach((c) => {
        const td = el("td");
        const isOrder = c === "id" && name === "work_orders";
        if (isOrder) td.appendChild(woLink(row[c])); else td.textContent = fmt(row[c]);
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    box.appendChild(t);
    if (rows.length > MAX_ROWS) box.appendChild(el("p", "plan-result-more", `… and ${rows.length - MAX_ROWS} more`));
    return box;
  }

  /* A step's outcome for a person (never raw JSON). */
  function result(step) {
    const box = el("div", "plan-result");
    box.setAttribute("data-step", String(step.order));
    const r = step.result && typeof step.result === "object" ? step.result : null;
    if (step.status === "stopped") { // cut off: nothing built on it runs (those steps say so)
      box.appendChild(el("p", "plan-result-stopped", step.error || "Stopped"));
      return box;
    }
    if (step.status === "failed" || (step.error && step.status !== "skipped")) {
      box.appendChild(el("p", "step-error", `Failed: ${step.error || "no reason given"}`));
      return box;
    }
    if (step.status === "skipped") {
      const blocked = /^Not run: it depends on step \d+/.test(step.error || "");
      const line = el("p", blocked ? "plan-result-skipped plan-result-blocked" : "plan-result-skipped", step.error ? `Skipped — ${step.error}` : "Skipped");
      box.appendChild(line);
      return box;
    }
    if (step.status === "waiting_job" && r && r.work_order_id) {
      const p = el("p", "plan-result-waiting", "Working on ");
      p.appendChild(woLink(r.work_order_id));
      p.appendChild(document.createTextNode(` (${r.status || "queued"})…`));
      box.appendChild(p);
      return box;
    }
    if (!r) return null;
    if (r.rca_summary) {
      const p = el("p", "plan-result-rca");
      p.appendChild(el("b", "", "Root cause: "));
      p.appendChild(document.createTextNode(r.rca_summary));
      if (typeof r.confidence === "number") p.appendChild(el("span", "plan-confidence", ` · confidence ${Math.round(r.confidence * 100)}%`));
      if (r.work_order_id) { p.appendChild(document.createTextNode(" · ")); p.appendChild(woLink(r.work_order_id, `open WO-${r.work_order_id}`)); }
      box.appendChild(p);
      return box;
    }
    if (Array.isArray(r.recommended_actions) || (r.work_order_id && r.title)) {
      const p = el("p", "plan-result-repair");
      p.appendChild(el("b", "", "Repair order: "));
      p.appendChild(woLink(r.work_order_id, `WO-${r.work_order_id}`));
      p.appendChild(document.createTextNode(` ${r.title || ""} (${[r.status, r.priority].filter(Boolean).join(", ")})`));
      box.appendChild(p);
      const actions = (r.recommended_actions || []).slice(0, 5);
      if (actions.length) {
        const ul = el("ul", "plan-result-actions");
        actions.forEach((a) => ul.appendChild(el("li", "", typeof a === "object" ? fmt(a.action || a.step || a) : a)));
        box.appendChild(ul);
      }
      return box;
    }
    if (r.summary) box.appendChild(el("p", "plan-result-summary", r.summary));
    const listName = Object.keys(r).find((k) => Array.isArray(r[k]) && r[k].length && typeof r[k][0] === "object");
    if (listName) box.appendChild(table(r[listName], listName));
    if (!box.children.length) box.appendChild(el("p", "plan-result-summary", fmt(r)));
    return box;
  }

  /* The steps built on step `order` (directly or through others): what a stop keeps from running. */
  function dependents(plan, order) {
    const found = new Set();
    let grew = true;
    while (grew) {
      grew = false;
      plan.steps.forEach((s) => {
        if (!found.has(s.order) && (s.depends_on || []).some((d) => d === order || found.has(d))) {
          found.add(s.order);
          grew = true;
        }
      });
    }
    return [...found].sort((a, b) => a - b);
  }

  function notes(plan) {
    const list = plan.planner_notes || [];
    if (!list.length) return null;
    const box = el("details", "plan-notes");
    box.open = list.some((n) => ["unresolved", "capped", "dropped", "constrained"].includes(n.action));
    box.appendChild(el("summary", "", `Planner notes (${list.length})`));
    const ul = el("ul");
    list.forEach((n) => {
      const li = el("li", "plan-note");
      li.setAttribute("data-action", n.action || "");
      li.appendChild(el("span", "plan-note-action", n.action || "note"));
      li.appendChild(document.createTextNode(` ${n.reason || ""}`));
      ul.appendChild(li);
    });
    box.appendChild(ul);
    return box;
  }

  /* The plan's structured guidance: "Only cells P-02 · lines Line 1 · the pump = P-02 · at most 4 steps". */
  function guidance(plan) {
    const c = plan.constraints || {};
    const parts = [];
    if ((c.cells || []).length) parts.push(`cells ${c.cells.join(", ")}`);
    if ((c.lines || []).length) parts.push(`lines ${c.lines.join(", ")}`);
    Object.keys(c.resolved || {}).forEach((term) => parts.push(`${term} = ${c.resolved[term]}`));
    if (c.max_steps) parts.push(`at most ${c.max_steps} steps`);
    (c.guidance || []).forEach((said) => parts.push(`“${said}”`)); // the words given for a planned plan
    Object.keys(c).filter((k) => !["cells", "lines", "resolved", "max_steps", "guidance"].includes(k)).forEach((k) => parts.push(`${k}: ${fmt(c[k])}`));
    return parts.length ? el("p", "plan-guidance", `Guidance: ${parts.join(" · ")}`) : null;
  }

  /* A permission ask as a decision card. `viewer`: "owner" (their own plan) or "decider". */
  function card(ask, viewer) {
    const c = (ask.evidence || {}).card;
    const box = el("div", "decision-card");
    box.appendChild(el("p", "decision-question", ask.question));
    if (c) {
      box.appendChild(el("p", "decision-asks", c.asks));
      const what = el("p", "decision-what");
      what.appendChild(el("b", "", "What changes: "));
      what.appendChild(document.createTextNode((c.changes || []).length ? c.changes.map((x) => x.text).join("; ") : c.title));
      box.appendChild(what);
      const why = el("p", "decision-why");
      why.appendChild(el("b", "", "Why: "));
      why.appendChild(document.createTextNode(c.why));
      box.appendChild(why);
      if ((c.evidence || []).length) {
        const ul = el("ul", "decision-evidence");
        c.evidence.forEach((e) => ul.appendChild(el("li", "", e)));
        box.appendChild(ul);
      }
      box.appendChild(el("p", "decision-approve", `If approved: ${c.on_approve}`));
      box.appendChild(el("p", "decision-reject", `If rejected: ${c.on_reject}`));
    } else if (ask.evidence && ask.evidence.inputs) {
      box.appendChild(el("p", "ask-evidence", fmt(ask.evidence.inputs)));
    }
    // only the owner is told that someone else decides; the intended approver just decides
    if (ask.required_scope && viewer === "owner") {
      box.appendChild(el("p", "decision-waiting", `Someone else must decide: a person with the ${ask.required_scope} scope (not you, the plan owner).`));
    }
    return box;
  }

  /* The "offline demo engine" mark (Aria.offlineMark) for a plan the offline engine drafted, else
   * null: plan.offline comes from the engine that proposed its steps (blank when no model ran). */
  function offlineMark(plan) {
    return plan.offline === true ? window.Aria.offlineMark({ engine: plan.engine, real_provider: false }) : null;
  }

  /* The plan's status as a person should read it: a completed plan that did not apply every change
   * step (plan.outcome, from the server's move to completed) never reads as a plain "completed". */
  function statusText(plan) {
    return plan.status === "completed" && plan.outcome ? "completed, not all applied" : plan.status;
  }

  /* What a completed plan did not apply, and why ("Nothing applied — step 2 (…): rejected by ann."),
   * else null. */
  function outcome(plan) {
    return plan.outcome ? el("p", "plan-outcome", plan.outcome) : null;
  }

  /* A choice ask: its question and one button per option (`answer(option)` returns a promise). */
  function choice(ask, button) {
    const box = el("div", "choice-ask");
    box.appendChild(el("p", "decision-question", ask.question));
    const candidates = (ask.evidence || {}).candidates || [];
    const row = el("div", "plan-actions choice-options");
    ask.options.forEach((option) => {
      const about = candidates.find((c) => c.tag === option);
      const b = button(option, option);
      if (about) b.title = `${about.name || ""} · ${about.line || ""}`;
      row.appendChild(b);
    });
    box.appendChild(row);
    return box;
  }

  window.AriaPlanViews = Object.freeze({ stepTitle, result, notes, guidance, card, choice, woLink, dependents, offlineMark, statusText, outcome });
})();
