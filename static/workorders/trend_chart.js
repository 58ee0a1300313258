/*
 * AriaTrendChart — an inline SVG line chart of one signal with its threshold lines. Uses window.Aria (aria/lib.js).
 *
 *   AriaTrendChart.points(json)   // trend API body → [{t: Date, v: Number, lo?, hi?}] (tolerant of shape)
 *   AriaTrendChart.draw(svgHost, {points, thresholds: {low_alert, alert, high_alert, trip}, unit, stale})
 *   AriaTrendChart.ticks(lo, hi, count)   // round axis ticks covering [lo, hi]: {lo, hi, step, values}
 *
 * The y axis runs between round ticks (1, 2, 2.5 or 5 × 10^k apart); threshold lines and their
 * labels stay at their exact values. `stale: true` draws the line muted and says "last", not "now".
 *
 * Everything is built with createElementNS/textContent; no markup strings.
 */
((global) => {
  "use strict";
  const { svg, fmtClock } = global.Aria;


  const W = 560;
  const H = 180;
  const PAD_L = 42;
  const PAD_R = 74;
  const PAD_T = 20;
  const PAD_B = 22;
  const LINES = [
    { key: "trip", label: "trip", cls: "thr-trip" },
    { key: "high_alert", label: "high", cls: "thr-high" },
    { key: "alert", label: "alert", cls: "thr-alert" },
    { key: "low_alert", label: "low", cls: "thr-low" }
  ];

  function num(value) {
    return typeof value === "number" && isFinite(value) ? value : null;
  }

  function firstArray(body) {
    if (Array.isArray(body)) return body;
    if (!body || typeof body !== "object") return [];
    const keys = ["points", "buckets", "samples", "data", "series", "items", "trend"];
    for (let i = 0; i < keys.length; i++) {
      const value = body[keys[i]];
      if (Array.isArray(value)) {
        // A list of per-signal series: take the first one's points.
        if (value.length && value[0] && typeof value[0] === "object" && !("value" in value[0]) &&
            !("avg" in value[0]) && firstArray(value[0]).length) return firstArray(value[0]);
        return value;
      }
    }
    if (Array.isArray(body.signals) && body.signals.length) return firstArray(body.signals[0]);
    return [];
  }

  function points(body) {
    const out = [];
    firstArray(body).forEach((item) => {
      let t;
      let v;
      let lo = null;
      let hi = null;
      if (Array.isArray(item)) {
        t = item[0]; v = num(item[1]);
      } else if (item && typeof item === "object") {
        t = item.time || item.t || item.start || item.bucket || item.ts;
        v = num(item.value);
        if (v === null) v = num(item.avg);
        if (v === null) v = num(item.mean);
        if (v === null) v = num(item.v);
        lo = num(item.min); hi = num(item.max);
      }
      const when = new Date(t);
      if (v !== null && !isNaN(when.getTime())) out.push({ t: when, v, lo, hi });
    });
    out.sort((a, b) => a.t - b.t);
    return out;
  }

  function fmt(value) {
    const abs = Math.abs(value);
    return abs >= 100 ? value.toFixed(0) : abs >= 10 ? value.toFixed(1) : value.toFixed(2);
  }

  // A configured limit as it was entered (7.1, 210), without padding zeros or float noise.
  function exact(value) { return String(parseFloat(value.toPrecision(6))); }

  function ticks(lo, hi, count) {
    let span = hi - lo;
    if (!(span > 0)) { span = Math.abs(lo) || 1; lo -= span / 2; hi += span / 2; }
    const raw = (hi - lo) / (count || 4);
    const mag = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
    const norm = raw / mag;
    const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
    const decimals = Math.max(0, -Math.floor(Math.log(step) / Math.LN10 + 1e-9)) + (norm > 2 && norm <= 2.5 ? 1 : 0);
    const first = Math.floor(lo / step + 1e-9) * step;
    const last = Math.ceil(hi / step - 1e-9) * step;
    const values = [];
    for (let v = first; v <= last + step / 2; v += step) values.push(Number(v.toFixed(decimals)));
    return { lo: first, hi: last, step, decimals, values };
  }

  function clock(date) {
    return fmtClock(date);
  }

  function draw(host, options) {
    const pts = options.points || [];
    const thresholds = options.thresholds || {};
    const unit = options.unit || "";
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "trend-svg", role: "img",
      "aria-label": (options.title || "Trend") + (pts.length ? "" : " (no data)") });
    chart.appendChild(svg("title", {}, (options.title || "Trend") + (unit ? ` (${unit})` : "")));

    const values = [];
    pts.forEach((p) => { values.push(p.v); if (p.hi !== null) values.push(p.hi); });
    LINES.forEach((l) => { if (num(thresholds[l.key]) !== null) values.push(thresholds[l.key]); });
    let lo = values.length ? Math.min.apply(null, values) : 0;
    let hi = values.length ? Math.max.apply(null, values) : 1;
    if (hi === lo) { hi += 1; lo -= 1; }
    const span = hi - lo;
    const axis = ticks(lo - span * 0.04, hi + span * 0.04, 4);
    lo = axis.lo; hi = axis.hi;
    const now = Date.now();
    let t0 = pts.length ? pts[0].t.getTime() : now - 30 * 60000;
    const t1 = pts.length ? pts[pts.length - 1].t.getTime() : now;
    if (t1 === t0) t0 -= 60000;

    function x(t) { return PAD_L + (t - t0) / (t1 - t0) * (W - PAD_L - PAD_R); }
    function y(v) { return PAD_T + (hi - v) / (hi - lo) * (H - PAD_T - PAD_B); }

    chart.appendChild(svg("rect", { x: PAD_L, y: PAD_T, width: W - PAD_L - PAD_R, height: H - PAD_T - PAD_B, class: "trend-plot" }));
    axis.values.forEach((v) => {
      chart.appendChild(svg("line", { x1: PAD_L, x2: W - PAD_R, y1: y(v), y2: y(v), class: "trend-grid" }));
      chart.appendChild(svg("text", { x: PAD_L - 4, y: y(v) + 4, class: "trend-axis trend-tick", "text-anchor": "end",
        "data-value": v }, v.toFixed(axis.decimals)));
    });
    chart.appendChild(svg("text", { x: PAD_L, y: H - 6, class: "trend-axis" }, clock(new Date(t0))));
    chart.appendChild(svg("text", { x: W - PAD_R, y: H - 6, class: "trend-axis", "text-anchor": "end" }, clock(new Date(t1))));

    LINES.forEach((l) => {
      const v = num(thresholds[l.key]);
      if (v === null) return;
      const line = svg("line", { x1: PAD_L, x2: W - PAD_R, y1: y(v), y2: y(v), class: `trend-threshold ${l.cls}`,
        "data-threshold": l.key });
      chart.appendChild(line);
      chart.appendChild(svg("text", { x: W - PAD_R + 4, y: y(v) + 4, class: `trend-label ${l.cls}` },
        `${l.label} ${exact(v)}`));
    });

    if (pts.length > 1) {
      const band = pts.filter((p) => p.lo !== null && p.hi !== null);
      if (band.length > 1) {
        const area = band.map((p, i) => `${(i ? "L" : "M") + x(p.t.getTime()).toFixed(1)},${y(p.hi).toFixed(1)}`);
        band.slice().reverse().forEach((p) => { area.push(`L${x(p.t.getTime()).toFixed(1)},${y(p.lo).toFixed(1)}`); });
        chart.appendChild(svg("path", { d: `${area.join(" ")} Z`, class: "trend-band" }));
      }
      const d = pts.map((p, i) => `${(i ? "L" : "M") + x(p.t.getTime()).toFixed(1)},${y(p.v).toFixed(1)}`);
      chart.appendChild(svg("path", { d: d.join(" "), class: `trend-line${options.stale ? " trend-line-stale" : ""}`,
        "data-points": pts.length }));
    }
    if (pts.length) {
      const last = pts[pts.length - 1];
      chart.appendChild(svg("circle", { cx: x(last.t.getTime()), cy: y(last.v), r: 3.5, class: "trend-last" }));
      chart.appendChild(svg("text", { x: PAD_L, y: 13, class: "trend-value" },
        `${(options.stale ? "last " : "now ") + fmt(last.v)} ${unit}`));
    } else {
      chart.appendChild(svg("text", { x: (PAD_L + W - PAD_R) / 2, y: H / 2, class: "trend-axis", "text-anchor": "middle" }, "no samples in window"));
    }
    host.textContent = "";
    host.appendChild(chart);
  }

  global.AriaTrendChart = { points, draw, ticks };
})(window);
