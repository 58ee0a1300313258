/*
 * AriaRender — the one set of renderers for `ui_render` components, used by the Ask ARIA drawer,
 * the Control Room activity feed and any page that shows agent evidence (props schemas:
 * core/events/render_props.py, docs/EVENTS.md). Text only via textContent; charts are inline SVG.
 *
 *   AriaRender.component(name, props)          // → a new element (unknown names: a key/value card)
 *   AriaRender.drawInto(container, name, props) // replaces the container's content, returns the element
 *   AriaRender.components                       // the names drawn by a dedicated renderer
 *
 * An RCA written by the offline engine carries the mark: `diagnosis_card` when props.offline is
 * true, `work_order_card` when work_order.rca_engine.real_provider is false (workorders selectors).
 */
(() => {
  "use strict";
  const STYLE = `
.aria-render { max-width: 100%; }
.aria-alert { border-left: 4px solid var(--warn, #b26b00); }
.aria-alert.sev-trip { border-left-color: var(--bad, #c62828); }
.aria-alert-message { margin: 0; font-weight: 600; font-size: .85rem; }
.aria-progress-bg { fill: #eef1f4; } .aria-progress-fill { fill: #1a7f37; }
.aria-compare { border-collapse: collapse; font-size: .8rem; margin: .2rem 0; }
.aria-compare th, .aria-compare td { border-bottom: 1px solid #eef1f4; padding: .1rem .5rem .1rem 0; text-align: left; }
.aria-bar-past { fill: #aab4be; }
.aria-diag.sev-critical { border-left: 4px solid var(--bad, #c62828); }
.aria-diag.sev-warning { border-left: 4px solid var(--warn, #b26b00); }
.aria-wo-actions, .aria-wo-parts { margin: .2rem 0 .2rem 1.1rem; padding: 0; font-size: .8rem; }
.aria-wo-links { display: flex; gap: .8rem; font-size: .8rem; margin-top: .3rem; }
.act-render-body { flex-basis: 100%; min-width: 0; }`;

  function injectStyle() {
    if (document.getElementById("aria-render-style")) return;
    const style = document.createElement("style");
    style.id = "aria-render-style";
    style.textContent = STYLE;
    (document.head || document.documentElement).appendChild(style);
  }

  const { el, svg, offlineMark, fmtNumber, fmtWindow } = window.Aria;
  // A value for a person: a measurement through the shared formatter (4.5916 → 4.59), whole numbers
  // (ids, counts) and text as they are.
  const shown = (v) => (typeof v === "number" && !Number.isInteger(v) ? fmtNumber(v) : String(v));

  // An empty bucket (null) is a gap in the line, never a zero: Number(null) would be 0.
  function num(v) { return v === null || v === undefined || v === "" ? NaN : Number(v); }

  function yOf(point) {
    if (Array.isArray(point)) return num(point[1]);
    if (point && typeof point === "object") return num(point.avg ?? point.value ?? point.max);
    return num(point);
  }

  function signalChart(props) {
    const box = el("figure", "aria-chart");
    box.appendChild(el("figcaption", null, props.title || "Signal trend"));
    const series = Array.isArray(props.series) ? props.series : [];
    const W = 320, H = 140, P = 24;
    const values = [];
    series.forEach((s) => (s.points || []).forEach((p) => { const y = yOf(p); if (Number.isFinite(y)) values.push(y); }));
    const limits = [];
    // Threshold lines only make sense when one signal (one unit) is charted.
    (series.length === 1 ? series : []).forEach((s) => {
      const t = s.thresholds || {};
      ["alert", "trip", "high_alert", "low_alert"].forEach((k) => { if (Number.isFinite(Number(t[k])) && t[k] !== null) limits.push([k, Number(t[k])]); });
    });
    limits.forEach(([, v]) => values.push(v));
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "aria-svg" });
    if (!values.length) {
      box.appendChild(el("p", "aria-note", "No data in the window."));
      return box;
    }
    let lo = Math.min(...values), hi = Math.max(...values);
    if (hi === lo) { hi += 1; lo -= 1; }
    const y = (v) => H - P - ((v - lo) / (hi - lo)) * (H - 2 * P);
    chart.appendChild(svg("line", { x1: P, y1: H - P, x2: W - 4, y2: H - P, class: "aria-axis" }));
    limits.forEach(([name, v]) => {
      chart.appendChild(svg("line", { x1: P, y1: y(v), x2: W - 4, y2: y(v), class: `aria-limit aria-limit-${name}` }));
      const label = svg("text", { x: W - 6, y: y(v) - 2, "text-anchor": "end", class: "aria-limit-label" });
      label.textContent = `${name} ${v}`;
      chart.appendChild(label);
    });
    series.forEach((s, i) => {
      const pts = (s.points || []).map(yOf);
      if (!pts.length) return;
      const step = (W - P - 4) / Math.max(1, pts.length - 1);
      const path = pts.map((v, j) => (Number.isFinite(v) ? `${(P + j * step).toFixed(1)},${y(v).toFixed(1)}` : null)).filter(Boolean).join(" ");
      chart.appendChild(svg("polyline", { points: path, class: `aria-series aria-series-${i % 4}`, fill: "none" }));
    });
    [hi, lo].forEach((v) => {
      const t = svg("text", { x: 2, y: y(v) + 4, class: "aria-tick" });
      t.textContent = Number(v).toFixed(1);
      chart.appendChild(t);
    });
    box.appendChild(chart);
    const legend = el("ul", "aria-legend");
    series.forEach((s, i) => legend.appendChild(el("li", `aria-series-${i % 4}`, `${s.key || s.name || "signal " + (s.signal_def_id ?? i)} ${s.unit || ""}`)));
    box.appendChild(legend);
    return box;
  }

  function barChart(props) {
    const box = el("figure", "aria-chart");
    box.appendChild(el("figcaption", null, props.title || "Bar chart"));
    const labels = props.labels || [], values = (props.values || []).map(Number);
    const W = 320, H = 140, P = 20;
    const max = Math.max(1e-9, ...values.filter(Number.isFinite));
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "aria-svg" });
    const bw = (W - P) / Math.max(1, values.length);
    values.forEach((v, i) => {
      const h = Number.isFinite(v) ? (v / max) * (H - 2 * P) : 0;
      chart.appendChild(svg("rect", { x: P + i * bw + 2, y: H - P - h, width: Math.max(1, bw - 4), height: h, class: "aria-bar" }));
      const t = svg("text", { x: P + i * bw + bw / 2, y: H - 6, "text-anchor": "middle", class: "aria-tick" });
      t.textContent = String(labels[i] ?? "");
      chart.appendChild(t);
      const vt = svg("text", { x: P + i * bw + bw / 2, y: H - P - h - 2, "text-anchor": "middle", class: "aria-tick" });
      vt.textContent = `${shown(v)}${props.unit ? " " + props.unit : ""}`;
      chart.appendChild(vt);
    });
    box.appendChild(chart);
    return box;
  }

  function keyValues(obj, depth) {
    const dl = el("dl", "aria-kv");
    Object.entries(obj || {}).slice(0, 20).forEach(([k, v]) => {
      dl.appendChild(el("dt", null, k));
      const dd = el("dd");
      if (v && typeof v === "object" && depth < 1 && !Array.isArray(v)) dd.appendChild(keyValues(v, depth + 1));
      else dd.textContent = Array.isArray(v) ? v.map((x) => (x && typeof x === "object" ? JSON.stringify(x) : shown(x))).join(", ") : v && typeof v === "object" ? JSON.stringify(v) : shown(v);
      dl.appendChild(dd);
    });
    return dl;
  }

  function card(title, body) {
    const box = el("div", "aria-card");
    box.appendChild(el("h4", null, title));
    box.appendChild(body);
    return box;
  }

  function kbCard(props) {
    const kb = props.kb || props;
    return card(`${props.cell_tag || "Equipment"} ${props.name || ""}`.trim(), keyValues({ equipment: kb.equipment, failure_modes: Object.keys(kb.failure_modes || {}), spare_parts: (kb.spare_parts || []).map((p) => p.ref) }, 0));
  }

  function planCard(props) {
    const body = el("div");
    body.appendChild(el("p", "aria-note", `${props.status || "draft"} · ${(props.steps || []).length} step(s)`));
    const ol = el("ol");
    (props.steps || []).forEach((s) => ol.appendChild(el("li", null, s.title || s.capability || JSON.stringify(s))));
    body.appendChild(ol);
    return card(props.title || props.goal || "Plan", body);
  }

  function percent(value) {
    const n = num(value);
    return Number.isFinite(n) ? `${Math.round(n * 100)}%` : "—";
  }

  function list(cls, items, text) {
    const ul = el("ul", cls);
    (Array.isArray(items) ? items : []).slice(0, 30).forEach((item) => ul.appendChild(el("li", null, text(item))));
    return ul;
  }

  function alertBanner(props) {
    const box = card(`Alarm on cell ${props.cell_id ?? "?"} · ${String(props.severity || "alert").toUpperCase()}`, el("p", "aria-alert-message", props.message || ""));
    box.classList.add("aria-alert", `sev-${props.severity === "trip" ? "trip" : "alert"}`);
    return box;
  }

  function kbProgress(props) {
    const total = Math.max(1, Number(props.total) || 1), done = Math.min(total, Math.max(0, Number(props.done) || 0));
    const body = el("div");
    body.appendChild(el("p", "aria-note", `${props.stage || "working"} · ${done} of ${total}${props.message ? " · " + props.message : ""}`));
    const W = 240, H = 10;
    const bar = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "progressbar", class: "aria-svg aria-progress", "aria-valuemin": 0, "aria-valuemax": total, "aria-valuenow": done });
    bar.appendChild(svg("rect", { x: 0, y: 0, width: W, height: H, class: "aria-progress-bg" }));
    bar.appendChild(svg("rect", { x: 0, y: 0, width: (W * done) / total, height: H, class: "aria-progress-fill" }));
    body.appendChild(bar);
    return card(`KB agent · ${props.cell_tag || "cell " + props.cell_id}`, body);
  }

  // The current peak of each signal beside the matched past failure's: a table and paired bars.
  function patternMatch(props) {
    const past = props.past_failure || {};
    const current = props.current_pattern || {};
    const before = past.signal_patterns || {};
    const keys = Array.from(new Set([...Object.keys(current), ...Object.keys(before)])).slice(0, 8);
    const body = el("div");
    body.appendChild(el("p", "aria-note", `Matches failure #${past.id ?? "?"} ${past.failure_mode || ""} of ${String(past.failure_time || "").slice(0, 10)} · similarity ${percent(props.similarity)}`));
    const table = el("table", "aria-compare");
    const head = el("tr");
    ["signal", "now: peak", "now: min beyond", "then: peak", "then: min beyond"].forEach((h) => head.appendChild(el("th", null, h)));
    table.appendChild(head);
    const peaks = [];
    keys.forEach((key) => {
      const a = current[key] || {}, b = before[key] || {};
      const tr = el("tr");
      [key, a.peak, a.duration_min, b.peak, b.duration_min].forEach((v, i) => tr.appendChild(el("td", null, v === null || v === undefined ? "—" : i ? shown(v) : v)));
      table.appendChild(tr);
      peaks.push([key, num(a.peak), num(b.peak)]);
    });
    body.appendChild(table);
    const values = peaks.flatMap(([, a, b]) => [a, b]).filter(Number.isFinite);
    if (values.length) {
      const W = 320, H = 110, P = 18, max = Math.max(1e-9, ...values.map(Math.abs));
      const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "aria-svg" });
      const group = (W - P) / peaks.length;
      peaks.forEach(([key, a, b], i) => {
        [[a, "aria-bar"], [b, "aria-bar aria-bar-past"]].forEach(([v, cls], j) => {
          const h = Number.isFinite(v) ? (Math.abs(v) / max) * (H - 2 * P) : 0;
          chart.appendChild(svg("rect", { x: P + i * group + 4 + j * (group / 2 - 4), y: H - P - h, width: Math.max(1, group / 2 - 8), height: h, class: cls }));
        });
        const t = svg("text", { x: P + i * group + group / 2, y: H - 4, "text-anchor": "middle", class: "aria-tick" });
        t.textContent = key;
        chart.appendChild(t);
      });
      body.appendChild(chart);
      body.appendChild(list("aria-legend", ["now", "past failure"], (x) => x));
    }
    if (past.root_cause) body.appendChild(el("p", "aria-note", past.root_cause));
    const box = card("Pattern match", body);
    box.classList.add("aria-pattern");
    return box;
  }

  function diagnosisCard(props) {
    const body = el("div");
    body.appendChild(el("p", "aria-note", `${props.cell_tag || "cell " + props.cell_id} · ${props.severity || "warning"} · confidence ${percent(props.confidence)}${props.work_order_id ? " · WO-" + props.work_order_id : ""}`));
    body.appendChild(list("aria-findings", props.findings, (x) => x));
    const box = card(props.title || "Diagnosis", body);
    const mark = props.offline === true ? offlineMark({ engine: props.engine, real_provider: false }) : null;
    if (mark) box.querySelector("h4").appendChild(mark);
    box.classList.add("aria-diag", `sev-${["info", "warning", "critical"].includes(props.severity) ? props.severity : "warning"}`);
    return box;
  }

  function printUrl(props, wo) {
    const url = String(props.print_url || "");
    if (/^\/workorders\/\d+\/print$/.test(url)) return url;
    return Number.isInteger(wo.id) ? `/workorders/${wo.id}/print` : null;
  }

  function workOrderCard(props) {
    const wo = props.work_order || {};
    const body = el("div");
    body.appendChild(el("p", "aria-note", `${wo.cell_tag || "cell " + (wo.cell_id ?? props.cell_id)} · ${wo.status || "?"} · ${wo.priority || ""} priority`));
    if (wo.rca_summary) body.appendChild(el("p", "aria-wo-rca", `RCA (${percent(wo.confidence)}): ${wo.rca_summary}`));
    if ((wo.recommended_actions || []).length) {
      const ol = el("ol", "aria-wo-actions");
      wo.recommended_actions.slice(0, 30).forEach((a) => ol.appendChild(el("li", null, a)));
      body.appendChild(ol);
    }
    if ((wo.required_parts || []).length) body.appendChild(list("aria-wo-parts", wo.required_parts, (p) => (p && typeof p === "object" ? `${p.qty ?? 1}× ${p.ref || p.name || "?"}` : p)));
    if (wo.suggested_window_start) body.appendChild(el("p", "aria-note", `Window ${fmtWindow(wo.suggested_window_start, wo.suggested_window_end)}`));
    const href = printUrl(props, wo);  // every order has its printable page; print_url is only trusted in its one shape
    if (href) {
      const links = el("p", "aria-wo-links");
      const a = el("a", "aria-print-link", "Printable work order");
      a.href = href;
      a.target = "_blank";
      a.rel = "noopener";
      links.appendChild(a);
      body.appendChild(links);
    }
    const box = card(`WO-${wo.id ?? "?"} ${wo.title || ""}`.trim(), body);
    const mark = wo.rca_summary ? offlineMark(wo.rca_engine) : null;
    if (mark) box.querySelector("h4").appendChild(mark);
    box.classList.add("aria-wo-card");
    return box;
  }

  const RENDERERS = {
    alert_banner: alertBanner,
    signal_chart: signalChart,
    bar_chart: barChart,
    equipment_kb_card: kbCard,
    kb_progress: kbProgress,
    pattern_match: patternMatch,
    diagnosis_card: diagnosisCard,
    diagnostic_card: diagnosisCard,  // events stored before the component was renamed
    work_order_card: workOrderCard,
    plan_card: planCard,
  };

  function component(name, props) {
    injectStyle();
    const fn = Object.prototype.hasOwnProperty.call(RENDERERS, name) ? RENDERERS[name] : null;
    const node = fn ? fn(props && typeof props === "object" ? props : {}) : card(String(name), keyValues(props || {}, 0));
    node.classList.add("aria-render");
    node.setAttribute("data-component", String(name));
    return node;
  }

  window.AriaRender = {
    el,
    component,
    components: Object.keys(RENDERERS).filter((n) => n !== "diagnostic_card"),
    drawInto(container, name, props) {
      const node = component(name, props);
      container.replaceChildren(node);
      return node;
    },
  };
})();
