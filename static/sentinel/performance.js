/* The alarm-performance page: rate per 10 minutes with the target and flood lines and flood bands,
 * the top 10 bad actors, tuning suggestions that become a gated limit-change plan in one click,
 * and the lists (chattering, fleeting, standing/stale, shelved, out of service).
 * Built with createElement(NS)/textContent only (no HTML strings); CSP allows static JS only. */
(() => {
  "use strict";
  const root = document.getElementById("perf-root");
  if (!root) return;
  const API = root.getAttribute("data-api");
  const PLANS = root.getAttribute("data-plans-api");
  const CAN_PLAN = root.getAttribute("data-can-plan") === "true";  // drafting a plan needs the operator scope
  const form = document.getElementById("perf-window");
  const status = document.getElementById("perf-status");
  const msg = document.getElementById("perf-msg");
  let linesLoaded = false;

  const { el, svg, api, fmtShortDate } = window.Aria;

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function say(text) { msg.textContent = text || ""; msg.hidden = !text; }

  // An alarm's state for a person: the model's label (rendered by the view), not the stored value.
  const labelsNode = document.getElementById("perf-state-labels");
  const STATE_LABEL = labelsNode ? JSON.parse(labelsNode.textContent) : {};

  function who(item) { return `${item.cell_tag} ${item.display_name || item.signal_key}`; }

  function kpis(report) {
    const rate = report.rate;
    const box = clear(document.getElementById("perf-kpis"));
    [
      ["average / 10 min", rate.average_per_10_min, rate.verdict],
      ["max in 10 min", rate.max_per_10_min],
      ["alarms", rate.total],
      ["per hour", rate.per_hour],
      ["10-min periods above target", `${rate.percent_periods_above_target} %`],
      ["time in flood", `${rate.percent_time_in_flood} %`],
      ["floods", report.floods.length]
    ].forEach((row) => {
      const div = el("div");
      div.appendChild(el("dt", "", row[0]));
      const dd = el("dd", "", row[1]);
      if (row[2]) { dd.setAttribute("data-verdict", row[2]); dd.title = row[2]; dd.textContent += ` (${row[2]})`; }
      div.appendChild(dd);
      box.appendChild(div);
    });
  }

  function rateChart(report) {
    const host = clear(document.getElementById("perf-rate-chart"));
    const buckets = report.rate.buckets;
    const t = report.targets;
    const W = 900;
    const H = 220;
    const L = 34;
    const R = 70;
    const T = 12;
    const B = 22;
    const start = new Date(report.window.start).getTime();
    const end = new Date(report.window.end).getTime();
    const top = Math.max(t.flood_above_per_10_min + 2, report.rate.max_per_10_min + 1);
    function x(ms) { return L + (W - L - R) * (ms - start) / Math.max(end - start, 1); }
    function y(v) { return H - B - (H - T - B) * v / top; }
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "Alarms per 10 minutes", id: "perf-rate-svg" });
    report.floods.forEach((flood) => {
      const x0 = x(new Date(flood.start).getTime());
      const x1 = x(flood.end ? new Date(flood.end).getTime() : end);
      const band = svg("rect", { "class": "flood-band", x: x0, y: T, width: Math.max(x1 - x0, 2), height: H - T - B, "data-start": flood.start });
      band.appendChild(svg("title", {}, `flood: peak ${flood.peak} in 10 min, ${flood.alarms} alarms`));
      chart.appendChild(band);
    });
    const width = (W - L - R) / Math.max(buckets.length, 1);
    buckets.forEach((b) => {
      if (!b.count) return;
      const cls = b.count > t.flood_above_per_10_min ? "over-flood" : b.count > t.per_10_min_target ? "over-target" : "";
      const bar = svg("rect", { "class": `rate-bar ${cls}`, x: x(new Date(b.start).getTime()) + width * 0.1,
        y: y(b.count), width: Math.max(width * 0.8, 1), height: y(0) - y(b.count), "data-count": b.count });
      bar.appendChild(svg("title", {}, `${fmtShortDate(b.start)}: ${b.count} alarms`));
      chart.appendChild(bar);
    });
    [[t.per_10_min_target, "line-target", `target ${t.per_10_min_target}`],
     [t.flood_above_per_10_min, "line-flood", `flood ${t.flood_above_per_10_min}`]].forEach((line) => {
      chart.appendChild(svg("line", { "class": line[1], x1: L, x2: W - R, y1: y(line[0]), y2: y(line[0]) }));
      chart.appendChild(svg("text", { x: W - R + 4, y: y(line[0]) + 3 }, line[2]));
    });
    chart.appendChild(svg("line", { "class": "axis", x1: L, x2: W - R, y1: y(0), y2: y(0) }));
    chart.appendChild(svg("text", { x: L, y: H - 6 }, fmtShortDate(report.window.start)));
    chart.appendChild(svg("text", { x: W - R, y: H - 6, "text-anchor": "end" }, fmtShortDate(report.window.end)));
    chart.appendChild(svg("text", { x: L - 4, y: y(top) + 8, "text-anchor": "end" }, String(top)));
    chart.appendChild(svg("text", { x: L - 4, y: y(0), "text-anchor": "end" }, "0"));
    host.appendChild(chart);

    const list = clear(document.getElementById("perf-floods"));
    report.floods.forEach((f) => {
      list.appendChild(el("li", "flood-item", `Flood ${fmtShortDate(f.start)} → ${f.end ? fmtShortDate(f.end) : "ongoing"}: peak ${f.peak} in 10 min, ${f.alarms} alarms, ${f.duration_minutes} min`));
    });
    if (!report.floods.length) list.appendChild(el("li", "", "No flood in this window."));
  }

  function actorsChart(report) {
    const host = clear(document.getElementById("perf-actors-chart"));
    const actors = report.bad_actors;
    document.getElementById("perf-top-share").textContent = actors.length
      ? `The top ${actors.length} account for ${report.top10_share_percent} % of all alarms (target ~1–5 %).`
      : "No alarms in this window.";
    if (!actors.length) return;
    const W = 900;
    const row = 24;
    const L = 260;
    const H = actors.length * row + 8;
    const most = actors[0].count;
    const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "Top bad actors", id: "perf-actors-svg" });
    actors.forEach((a, i) => {
      const yy = 4 + i * row;
      const w = (W - L - 230) * a.count / most;
      chart.appendChild(svg("text", { x: L - 6, y: yy + 14, "text-anchor": "end" }, who(a)));
      const bar = svg("rect", { "class": `bad-actor-bar${a.chattering ? " chattering" : ""}`, x: L, y: yy + 3,
        width: Math.max(w, 2), height: row - 8, "data-signal": `${a.cell_tag}.${a.signal_key}`, "data-count": a.count });
      bar.appendChild(svg("title", {}, `${a.count} alarms (${a.share_percent} %)`));
      chart.appendChild(bar);
      const tags = (a.chattering ? " · chattering" : "") + (a.fleeting ? ` · ${a.fleeting} fleeting` : "");
      chart.appendChild(svg("text", { x: L + w + 6, y: yy + 14 }, `${a.count} (${a.share_percent} %)${tags}`));
    });
    host.appendChild(chart);
  }

  async function createPlan(suggestion, button, done) {
    button.disabled = true;
    say("");
    let plan;
    try {
      plan = await api("POST", PLANS, suggestion.plan);
    } catch (err) {
      say(err.message);
      button.disabled = false;
      return;
    }
    const step = (plan.steps || []).filter((s) => s.capability === "sentinel.change_signal_limits")[0];
    done.textContent = "";
    done.appendChild(document.createTextNode(step
      ? `Plan #${plan.id} drafted (gated limit change). `
      : `Plan #${plan.id} drafted, but the planner could not add the change: ${(plan.planner_notes || []).map((n) => n.reason).join("; ")} `));
    const link = el("a", "", "Review it on Plans");
    link.href = "/plans/";
    done.appendChild(link);
    done.setAttribute("data-plan-id", plan.id);
  }

  function suggestions(report) {
    const list = clear(document.getElementById("perf-suggestions"));
    report.bad_actors.forEach((a) => {
      const s = a.suggestion;
      if (!s) return;
      const li = el("li", "suggestion");
      li.setAttribute("data-signal", `${a.cell_tag}.${a.signal_key}`);
      li.appendChild(el("span", "suggestion-title", `${who(a)}: ${s.title}`));
      li.appendChild(el("div", "suggestion-evidence", s.evidence.join(" · ")));
      const done = el("span", "suggestion-done");
      if (s.plan && CAN_PLAN) {
        const b = el("button", "", "Create limit-change plan");
        b.type = "button";
        b.addEventListener("click", () => { createPlan(s, b, done); });
        li.appendChild(b);
      } else if (s.plan) {
        li.appendChild(el("span", "suggestion-evidence suggestion-needs-operator",
          "Creating the limit-change plan needs the operator scope."));
      } else {
        li.appendChild(el("span", "suggestion-evidence", s.plan_unavailable));
      }
      li.appendChild(done);
      list.appendChild(li);
    });
    // Nothing to suggest is a sentence, not item 1 of a numbered list.
    list.hidden = !list.firstChild;
    document.getElementById("perf-suggestions-empty").hidden = Boolean(list.firstChild);
  }

  function mix(report) {
    const table = clear(document.getElementById("perf-mix"));
    const head = el("tr");
    ["priority", "alarms", "share", "target"].forEach((h) => { head.appendChild(el("th", "", h)); });
    table.appendChild(head);
    ["high", "medium", "low"].forEach((level) => {
      const m = report.priority_mix[level];
      const tr = el("tr");
      [level, m.count, `${m.percent} %`, `~${m.target_percent} %`].forEach((v) => { tr.appendChild(el("td", "", v)); });
      table.appendChild(tr);
    });
  }

  function lists(report) {
    const describe = {
      chattering: (c) => `${who(c)}: ${c.alarms} alarms, up to ${c.max_in_60s} in 60 s${c.flagged ? " (flagged)" : ""}`,
      fleeting: (f) => `${who(f)} at ${fmtShortDate(f.raised_at)}: cleared after ${f.seconds} s`,
      standing: (s) => `${who(s)}: ${STATE_LABEL[s.state] || s.state.replace(/_/g, " ")} for ${s.age_hours} h${s.signal_stale ? " (signal stale)" : ""}`,
      shelved: (s) => who(s) + (s.until_work_order_closes ? ": until its work order closes" : s.shelved_until ? `: until ${fmtShortDate(s.shelved_until)}` : ""),
      out_of_service: (s) => `${who(s)}: out of service for ${s.age_hours} h`
    };
    Object.keys(describe).forEach((name) => {
      const ul = clear(document.getElementById(`perf-${name}`));
      const block = report[name];
      block.items.forEach((item) => {
        const li = el("li", "", describe[name](item));
        if (name === "standing" && item.stale) li.appendChild(el("span", "tag-stale", "stale > 24 h"));
        ul.appendChild(li);
      });
      if (block.count > block.items.length) ul.appendChild(el("li", "", `… and ${block.count - block.items.length} more`));
      if (!block.count) ul.appendChild(el("li", "", "None."));
    });
  }

  function positions(report) {
    if (linesLoaded) return;
    const select = form.elements.line_id;
    report.lines.forEach((line) => {
      const option = el("option", "", line.name);
      option.value = line.id;
      select.appendChild(option);
    });
    linesLoaded = true;
  }

  // Loads in flight (the window or line changed while a report loads) may resolve out of order: newest wins.
  let latest = 0;
  async function load() {
    const mine = ++latest;
    const params = new URLSearchParams();
    params.set("hours", form.elements.hours.value);
    if (form.elements.line_id.value) params.set("line_id", form.elements.line_id.value);
    status.setAttribute("data-status", "connecting");
    status.textContent = "loading";
    let report;
    try {
      report = await api("GET", `${API}?${params}`);
    } catch (err) {
      if (mine !== latest) return;
      status.setAttribute("data-status", "closed");
      status.textContent = "error";
      say(err.message);
      return;
    }
    if (mine !== latest) return;
    positions(report);
    kpis(report);
    rateChart(report);
    actorsChart(report);
    suggestions(report);
    mix(report);
    lists(report);
    say("");
    status.setAttribute("data-status", "open");
    status.textContent = report.window.position.name;
  }

  form.addEventListener("change", load);
  load();
})();
