/*
 * AriaWorkOrderActions — the execution controls of one work order, shared by the Control Room cards
 * and the work-order page: record the root cause a person found while the order is still detected
 * (→ analyzed; the Generator then writes the repair order), assign from the shift roster (with its conflict warnings), start / resume,
 * hold with a reason, cancel with a reason, and complete with a report (work done, failure codes,
 * parts used, labour hours, RCA confirmed or corrected). Every action calls the execution API
 * (/api/v1/workorders/{id}/…); open forms keep what was typed across re-renders. createElement /
 * textContent only.
 *
 *   AriaWorkOrderActions.render(host, workOrder, { canOperate, onChange(detail), onError(message) })
 */
((global) => {
  "use strict";

  const API = "/api/v1/workorders/";
  const ASSIGNABLE = { analyzed: true, open: true, in_progress: true, on_hold: true };
  const CANCELLABLE = { detected: true, analyzed: true, open: true, in_progress: true, on_hold: true };
  const HOLD_REASONS = [["waiting_parts", "Waiting for parts"], ["waiting_permit", "Waiting for a permit"],
    ["production_window", "Waiting for a production window"], ["waiting_skills", "Waiting for a qualified technician"],
    ["other", "Other (say why)"]];
  const drafts = {};      // work order id → {panel, values: {field: value}}
  const codesCache = {};  // cell id → failure-code list

  const { el, api, fmtShift } = window.Aria;
  function button(text, cls, onClick) {
    const b = el("button", `btn ${cls}`, text);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }
  function draft(wo) { return drafts[wo.id] || (drafts[wo.id] = { panel: null, values: {} }); }
  // A form field whose value survives re-renders (kept in the order's draft).
  function field(wo, tag, name, attrs) {
    const input = document.createElement(tag);
    input.className = "wo-field";
    input.name = name;
    input.setAttribute("data-field", name);
    Object.keys(attrs || {}).forEach((k) => { input.setAttribute(k, attrs[k]); });
    const values = draft(wo).values;
    const remember = () => { values[name] = input.type === "checkbox" ? input.checked : input.value; };
    input.addEventListener("input", remember);
    input.addEventListener("change", remember);
    return input;
  }
  function restore(wo, input) {
    const v = draft(wo).values[input.name];
    if (v === undefined) return;
    if (input.type === "checkbox") input.checked = !!v; else input.value = v;
  }
  function labelled(text, input) {
    const label = el("label", "wo-label");
    label.appendChild(el("span", null, text));
    label.appendChild(input);
    return label;
  }
  function option(select, value, text) {
    const o = el("option", null, text);
    o.value = value;
    select.appendChild(o);
    return o;
  }

  async function act(wo, path, body, opts, btn, method) {
    if (btn) btn.disabled = true;
    try {
      const detail = await api(method || "POST", `${API}${encodeURIComponent(wo.id)}/${path}`, body);
      delete drafts[wo.id];
      if (opts.onChange) opts.onChange(detail);
      return detail;
    } catch (err) {
      if (btn) btn.disabled = false;
      if (opts.onError) opts.onError(`Work order #${wo.id}: ${err.message}`);
      return undefined;
    }
  }

  // --- panels -------------------------------------------------------------------------------------
  async function assignPanel(wo, opts, panel) {
    const select = field(wo, "select", "shift_assignment_id", { "aria-label": "Technician and shift" });
    option(select, "", "Loading the roster…");
    const go = button("Assign", "btn-assign-confirm", () => {
      if (!select.value) { if (opts.onError) opts.onError(`Work order #${wo.id}: choose a technician to assign.`); return; }
      act(wo, "assign", { shift_assignment_id: Number(select.value) }, opts, go);
    });
    panel.appendChild(labelled("Technician on shift", select));
    panel.appendChild(go);
    const warn = el("ul", "wo-conflicts");
    panel.appendChild(warn);
    try {
      const data = await api("GET", `${API}${encodeURIComponent(wo.id)}/roster`);
      select.textContent = "";
      option(select, "", data.items.length ? "Choose…" : "Nobody on the roster");
      data.items.forEach((row) => {
        const when = fmtShift(row.starts_at, row.ends_at);  // "Mon 07/12, 06:00 – 14:00": planners pick by weekday
        const o = option(select, String(row.id), `${row.technician} · ${row.shift} ${when}${row.conflicts.length ? ` ⚠ ${row.conflicts.map((c) => c.code).join(", ")}` : ""}`);
        o.setAttribute("data-technician", row.technician);
        o.setAttribute("data-conflicts", String(row.conflicts.length));
      });
      restore(wo, select);
      const show = () => {
        warn.textContent = "";
        const row = data.items.filter((r) => String(r.id) === select.value)[0];
        (row ? row.conflicts : []).forEach((c) => { warn.appendChild(el("li", "wo-conflict", c.message)); });
      };
      select.addEventListener("change", show);
      show();
    } catch (err) {
      select.textContent = "";
      option(select, "", `Roster unavailable: ${err.message}`);
    }
  }

  function holdPanel(wo, opts, panel) {
    const reason = field(wo, "select", "reason", { "aria-label": "Hold reason" });
    HOLD_REASONS.forEach((r) => { option(reason, r[0], r[1]); });
    restore(wo, reason);
    const note = field(wo, "input", "note", { type: "text", maxlength: "500", placeholder: "Note (why, until when)" });
    restore(wo, note);
    panel.appendChild(labelled("Reason", reason));
    panel.appendChild(labelled("Note", note));
    const go = button("Put on hold", "btn-hold-confirm", () => {
      act(wo, "hold", { reason: reason.value, note: note.value }, opts, go);
    });
    panel.appendChild(go);
  }

  function cancelPanel(wo, opts, panel) {
    const reason = field(wo, "input", "cancel_reason", { type: "text", maxlength: "500", placeholder: "Why is it cancelled?" });
    restore(wo, reason);
    panel.appendChild(labelled("Reason", reason));
    const go = button("Cancel the order", "btn-cancel-confirm", () => {
      act(wo, "cancel", { reason: reason.value }, opts, go);
    });
    panel.appendChild(go);
  }

  // A person's root cause for an order still waiting on the Investigator (it moves to analyzed and
  // the Generator writes the repair order); the same move as the admin's RCA field.
  function rcaPanel(wo, opts, panel) {
    const summary = field(wo, "textarea", "rca_summary", { rows: "3", maxlength: "4000", placeholder: "bearing_wear: DE bearing worn, grease dried out" });
    restore(wo, summary);
    panel.appendChild(labelled("Root cause found", summary));
    const go = button("Record the root cause", "btn-rca-confirm", async () => {
      if (!summary.value.trim()) { if (opts.onError) opts.onError(`Work order #${wo.id}: say what the root cause is.`); return; }
      go.disabled = true;
      try {
        await api("POST", `${API}${encodeURIComponent(wo.id)}/transition`, { to_status: "analyzed", rca_summary: summary.value.trim() });
      } catch (err) {
        go.disabled = false;
        if (opts.onError) opts.onError(`Work order #${wo.id}: ${err.message}`);
        return;
      }
      act(wo, "execution", undefined, opts, null, "GET");  // the page's shape of the order, now analyzed
    });
    panel.appendChild(go);
  }

  function fillCodes(wo, codes, selects) {
    const cls = codes.classes[0] || { problems: [] };
    [["problem_code", cls.problems], ["cause_code", codes.causes], ["remedy_code", codes.remedies]].forEach((pair) => {
      const select = selects[pair[0]];
      select.textContent = "";
      option(select, "", "Choose…");
      pair[1].forEach((c) => {
        const o = option(select, c.code, c.label + (c.iso_mode ? ` (${c.iso_mode}, ${c.iso_mechanism})` : "") +
          (c.iso_group ? ` · ${c.iso_group.replace("_", " ")}` : ""));
        if (c.failure_mode) o.setAttribute("data-failure-mode", c.failure_mode);
      });
      restore(wo, select);
    });
  }

  async function completePanel(
wo, opts, panel) {
    const proposed = (wo.rca_details && wo.rca_details.failure_mode) || "";
    const form = el("div", "wo-complete-form");
    const workDone = field(wo, "textarea", "work_done", { rows: "3", maxlength: "4000", placeholder: "What was done and found" });
    restore(wo, workDone);
    form.appendChild(labelled("Work done", workDone));
    const selects = {};
    [["problem_code", "Problem (failure mode)"], ["cause_code", "Cause"], ["remedy_code", "Remedy"]].forEach((pair) => {
      selects[pair[0]] = field(wo, "select", pair[0], { "aria-label": pair[1] });
      option(selects[pair[0]], "", "Loading codes…");
      form.appendChild(labelled(pair[1], selects[pair[0]]));
    });
    // An order with no root cause proposed (raised by hand, or no RCA written): nothing to confirm,
    // the technician's cause is the first word (the server takes it as a correction, and says so).
    const noRca = !wo.rca_summary && !proposed;
    const verdict = field(wo, "select", "rca_verdict", { "aria-label": noRca ? "No root cause was proposed" : "Was the RCA right?" });
    if (!noRca) option(verdict, "confirmed", `RCA right: confirm${proposed ? ` (${proposed})` : ""}`);
    option(verdict, "corrected", noRca ? "None proposed: give the cause found" : "RCA wrong: correct it");
    restore(wo, verdict);
    if (noRca) verdict.value = "corrected";
    form.appendChild(labelled(noRca ? "Root cause (none proposed)" : "The AI's root cause", verdict));
    const actual = field(wo, "textarea", "actual_root_cause", {
      rows: "2", maxlength: "4000",
      placeholder: noRca ? "The root cause found (required)" : "The actual root cause (required when correcting)",
    });
    restore(wo, actual);
    form.appendChild(labelled("Actual root cause", actual));
    // Parts: the order's required parts (qty 0 = not used) plus one other part.
    const parts = el("fieldset", "wo-parts");
    parts.appendChild(el("legend", null, "Parts used"));
    const rows = [];
    (wo.required_parts || []).forEach((p, i) => {
      const qty = field(wo, "input", `part_qty_${i}`, { type: "number", min: "0", max: "1000", step: "1", value: String(p.qty || 1) });
      restore(wo, qty);
      qty.setAttribute("data-ref", p.ref);
      parts.appendChild(labelled(p.ref, qty));
      rows.push(() => ({
        ref: p.ref,
        qty: Number(qty.value)
      }));
    });
    const otherRef = field(wo, "input", "part_other_ref", { type: "text", maxlength: "64", placeholder: "Other part ref" });
    const otherQty = field(wo, "input", "part_other_qty", { type: "number", min: "0", max: "1000", step: "1", value: "0" });
    restore(wo, otherRef); restore(wo, otherQty);
    parts.appendChild(labelled("Other", otherRef));
    parts.appendChild(otherQty);
    rows.push(() => ({
      ref: otherRef.value.trim(),
      qty: Number(otherQty.value)
    }));
    form.appendChild(parts);
    const hours = field(wo, "input", "labour_hours", { type: "number", min: "0.25", max: "1000", step: "0.25", placeholder: "h" });
    restore(wo, hours);
    form.appendChild(labelled("Labour hours", hours));
    const go = button("Complete the order", "btn-complete-confirm", () => {
      // Say in words what is missing; the server would answer an unchosen code with its pattern.
      const unchosen = [["problem_code", "the problem"], ["cause_code", "the cause"], ["remedy_code", "the remedy"]]
        .filter((pair) => !selects[pair[0]].value).map((pair) => pair[1]);
      if (unchosen.length) {
        if (opts.onError) opts.onError(`Work order #${wo.id}: choose ${unchosen.join(", ")} before completing.`);
        return;
      }
      // Required by the API (labour_hours > 0, ≤ 1000): an empty box would be sent as 0 and answered
      // "Input should be greater than 0", naming no field.
      const labour = hours.value.trim() === "" ? NaN : Number(hours.value);
      if (!(labour > 0 && labour <= 1000)) {
        if (opts.onError) opts.onError(`Work order #${wo.id}: give the labour hours (more than 0, up to 1000) before completing.`);
        return;
      }
      const body = {
        work_done: workDone.value, problem_code: selects.problem_code.value, cause_code: selects.cause_code.value,
        remedy_code: selects.remedy_code.value, rca_verdict: verdict.value, actual_root_cause: actual.value,
        parts_used: rows.map((r) => r()).filter((p) => p.ref && p.qty > 0),
        labour_hours: labour,
      };
      act(wo, "complete", body, opts, go);
    });
    form.appendChild(go);
    panel.appendChild(form);
    const show = (codes) => { fillCodes(wo, codes, selects); };
    if (codesCache[wo.cell_id]) { show(codesCache[wo.cell_id]); return; }
    try {
      const codes = await api("GET", `${API}execution/failure-codes?cell_id=${encodeURIComponent(wo.cell_id)}`);
      codesCache[wo.cell_id] = codes;
      show(codes);
    } catch (err) {
      if (opts.onError) opts.onError(`Failure codes: ${err.message}`);
    }
  }


  const PANELS = { assign: assignPanel, hold: holdPanel, cancel: cancelPanel, complete: completePanel, rca: rcaPanel };

  function render(host, wo, opts) {
    opts = opts || {};
    host.textContent = "";
    const box = el("div", "wo-exec");
    box.setAttribute("data-work-order-id", String(wo.id));
    const a = wo.assignment;
    if (a) {
      box.appendChild(el("p", "wo-assignee", `Assigned to ${a.technician}${a.shift ? ` · ${a.shift} shift ${a.date || ""}` : ""}`));
    }
    if (wo.hold_reason) {  // the reason as people read it, and the note given with the hold (text only)
      box.appendChild(el("p", "wo-hold", `On hold: ${wo.hold_label || wo.hold_reason.replace(/_/g, " ")}`));
      if (wo.hold_note) box.appendChild(el("p", "wo-hold-note", wo.hold_note));
    }
    if ((wo.part_shortages || []).length) {
      box.appendChild(el("p", "wo-shortage", `Parts short: ${wo.part_shortages.map((s) => `${s.qty}× ${s.ref}${s.listed ? ` (${s.on_hand} on hand)` : " (not a spare part of this equipment)"}`).join(", ")}`));
    }
    if (!opts.canOperate || !CANCELLABLE[wo.status]) { host.appendChild(box); return; }
    const d = draft(wo);
    const bar = el("div", "wo-exec-actions");
    function toggle(name) { return () => { d.panel = d.panel === name ? null : name; render(host, wo, opts); }; }
    if (wo.status === "detected") bar.appendChild(button("Record root cause…", "btn-rca", toggle("rca")));
    if (ASSIGNABLE[wo.status]) bar.appendChild(button(a ? "Reassign…" : "Assign…", "btn-assign", toggle("assign")));
    if (wo.status === "analyzed" || wo.status === "open" || wo.status === "on_hold") {
      const start = button(wo.status === "on_hold" ? "Resume" : "Start", "btn-start", () => { act(wo, "start", {}, opts, start); });
      bar.appendChild(start);
    }
    if (wo.status === "in_progress") {
      bar.appendChild(button("Hold…", "btn-hold", toggle("hold")));
      bar.appendChild(button("Complete…", "btn-complete", toggle("complete")));
    }
    bar.appendChild(button("Cancel…", "btn-cancel", toggle("cancel")));
    box.appendChild(bar);
    if (d.panel && PANELS[d.panel]) {
      const allowed = { assign: ASSIGNABLE[wo.status], hold: wo.status === "in_progress", complete: wo.status === "in_progress", cancel: true, rca: wo.status === "detected" };
      if (allowed[d.panel]) {
        const panel = el("div", `wo-panel wo-panel-${d.panel}`);
        PANELS[d.panel](wo, opts, panel);
        box.appendChild(panel);
      } else d.panel = null;
    }
    host.appendChild(box);
  }

  global.AriaWorkOrderActions = { render };
})(window);
