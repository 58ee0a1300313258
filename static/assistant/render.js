/* Ask ARIA: renderers for ui_render components (SVG charts, cards). Text only via textContent. */
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, String(v)));
    return node;
  }

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
      vt.textContent = `${v}${props.unit ? " " + props.unit : ""}`;
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
      else dd.textContent = Array.isArray(v) ? v.map((x) => (typeof x === "object" ? JSON.stringify(x) : x)).join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v);
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

  const RENDERERS = {
    signal_chart: signalChart,
    bar_chart: barChart,
    equipment_kb_card: kbCard,
    plan_card: planCard,
    diagnostic_card: (p) => card(p.title || "Diagnosis", keyValues({ severity: p.severity, confidence: p.confidence, findings: p.findings }, 0)),
    work_order_card: (p) => card(`WO-${(p.work_order || {}).id}`, keyValues(p.work_order || {}, 0)),
  };

  window.AriaRender = {
    el,
    component(name, props) {
      const fn = RENDERERS[name];
      if (fn) return fn(props || {});
      return card(name, keyValues(props || {}, 0));
    },
  };
})();
