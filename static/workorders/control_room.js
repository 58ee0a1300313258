/*
 * The maintenance Control Room: alert banners, alarms (control_room_alarms.js), work orders
 * moving detected → analyzed → open, a trend chart per cell and the agent activity feed — all kept
 * live from the event bus (AriaEvents) without reloading. Data is only ever put in the page with
 * textContent / createElement. Work-order cards are drawn by work_order_cards.js. A trend says when
 * its cell is not onboarded or its value is stale.
 */
(() => {
  "use strict";
  const root = document.getElementById("control-room");
  if (!root || !window.AriaEvents || !window.AriaTrendChart || !window.AriaActivityFeed ||
      !window.AriaWorkOrderCards || !window.AriaControlRoomAlarms) return;

  let state = JSON.parse(document.getElementById("cr-snapshot").textContent);
  const paths = JSON.parse(document.getElementById("cr-api-paths").textContent);
  const latestAtLoad = Number(root.getAttribute("data-latest-event-id")) || 0;
  const replayAfter = Number(root.getAttribute("data-replay-after")) || 0;
  const canWatch = root.getAttribute("data-can-watch") === "1";  // the view's decision (operator or approver)
  const feed = AriaActivityFeed.create(document.getElementById("activity-feed"), document.getElementById("activity-empty"),
    { liveAfter: latestAtLoad });

  // Alarm moves (raised, cleared, acknowledged elsewhere…) arrive as alarm_changed; the snapshot is
  // also re-read every STATE_REFRESH_MS so a frame lost while reconnecting never leaves a stale alarm.
  const TREND_MINUTES = 30;

  const TREND_REFRESH_MS = 15000;
  const STATE_REFRESH_MS = 5000;
  const CLOSED_STATUS = { completed: true, cancelled: true };
  const chosenSignal = {};   // cell id → signal id the operator picked
  const banners = {};        // cell id → banner info

  // --- helpers ------------------------------------------------------------------------------------
  const { el, api, fmtNumber, fmtDateTime } = window.Aria;
  function url(name, id) { return paths[name].replace("{id}", encodeURIComponent(String(id))); }
  function findSignal(id) {
    for (let i = 0; i < state.cells.length; i++) {
      const signals = state.cells[i].signals;
      for (let j = 0; j < signals.length; j++) if (signals[j].id === id) return { cell: state.cells[i], signal: signals[j] };
    }
    return null;
  }
  function cellById(id) { return state.cells.filter((c) => c.id === id)[0] || null; }
  function tooWhat(direction) { return direction === "low" ? "TOO LOW" : "TOO HIGH"; }

  // --- alert banners ------------------------------------------------------------------------------
  function renderBanners() {
    const host = document.getElementById("cr-banners");
    host.textContent = "";
    Object.keys(banners).forEach((cellId) => {
      const b = banners[cellId];
      const box = el("div", `cr-banner sev-${b.severity === "trip" ? "trip" : "alert"}`);
      box.setAttribute("data-cell-id", cellId);
      box.setAttribute("data-severity", b.severity || "alert");
      box.appendChild(el("span", "cr-banner-sev", (b.severity || "alert").toUpperCase()));
      const text = el("div", "cr-banner-text");
      const headline = `${b.cellTag || (`Cell ${cellId}`)} · ${b.signalName || "signal"} ${tooWhat(b.direction)}`;
      text.appendChild(el("strong", "cr-banner-head", headline));
      if (typeof b.value === "number") {
        const limit = bannerLimit(b);
        text.appendChild(el("span", "cr-banner-value", ` ${fmtNumber(b.value)} ${b.unit || ""}${typeof limit === "number" ? ` (limit ${fmtNumber(limit)})` : ""}`));
      }
      if (b.message) text.appendChild(el("div", "cr-banner-msg", b.message));
      box.appendChild(text);
      if (b.workOrderId) {
        const link = el("a", "cr-banner-wo", `Work order #${b.workOrderId}`);
        link.href = `#work-order-${b.workOrderId}`;
        box.appendChild(link);
      }
      const close = el("button", "cr-banner-close", "×");
      close.type = "button";
      close.setAttribute("aria-label", "Dismiss");
      close.addEventListener("click", () => { delete banners[cellId]; renderBanners(); });
      box.appendChild(close);
      host.appendChild(box);
    });
  }
  // The limit a banner names is the one in force now (as the alarm row says): the open alarm on
  // the banner's signal judged by currentLimit(); the raise-time threshold when there is none.
  function bannerLimit(b) {
    const alarm = b.signalId ? state.alarms.filter((a) => a.signal_id === b.signalId)[0] : null;
    return alarm ? currentLimit(alarm) : b.threshold;
  }
  function raiseBanner(cellId, info) {
    const b = banners[cellId] || {};
    Object.keys(info).forEach((k) => { if (info[k] !== undefined && info[k] !== null && info[k] !== "") b[k] = info[k]; });
    const cell = cellById(cellId);
    if (cell) b.cellTag = cell.tag;
    banners[cellId] = b;
    renderBanners();
  }
  function bannerFromAnomaly(frame) {
    const found = findSignal(frame.signal_def_id);
    raiseBanner(frame.cell_id, { severity: frame.severity, direction: frame.direction, value: frame.value,
      threshold: frame.threshold, workOrderId: frame.work_order_id, signalId: frame.signal_def_id,
      signalName: found ? found.signal.name : null, unit: found ? found.signal.unit : null });
  }

  // --- alarms (drawn by control_room_alarms.js) ------------------------------------------------
  const alarms = AriaControlRoomAlarms.create({ getState: () => state, url, refresh: refreshState });
  const currentLimit = alarms.currentLimit;
  const renderAlarms = alarms.render;

  // --- work orders --------------------------------------------------------------------------------
  let workOrderRenderHeld = false;
  function renderWorkOrders() {
    const host = document.getElementById("work-order-list");
    const focused = document.activeElement;
    if (focused && host.contains(focused) && /^(INPUT|TEXTAREA|SELECT)$/.test(focused.tagName)) {
      // The operator is filling in a form on a card: redraw when they leave the field.
      if (!workOrderRenderHeld) {
        workOrderRenderHeld = true;
        focused.addEventListener("blur", () => { workOrderRenderHeld = false; setTimeout(renderWorkOrders, 0); }, { once: true });
      }
      return;
    }
    document.getElementById("wo-empty").hidden = state.work_orders.length > 0;
    const shownActive = state.work_orders.filter((w) => !CLOSED_STATUS[w.status]).length;
    const more = document.getElementById("wo-more");
    more.hidden = !(state.active_work_orders > shownActive);
    more.textContent = more.hidden ? "" : `Showing the ${shownActive} newest of ${state.active_work_orders} active work orders.`;
    AriaWorkOrderCards.render(host, state.work_orders, { canOperate: state.can_operate,
      onChange: (detail) => { orderLoad[detail.id] = (orderLoad[detail.id] || 0) + 1; if (!patchWorkOrder(detail.id, detail)) refreshState(); refreshAccuracy(); },
      onError: (message) => { const e = document.getElementById("alarm-error"); e.textContent = message; e.hidden = false; } });
  }
  // "RCA confirmed n / corrected m": how often technicians agreed with the proposed root cause.
  async function refreshAccuracy() {
    const title = document.getElementById("wo-title");
    let badge = document.getElementById("rca-accuracy");
    if (!badge) {
      badge = el("span", "cr-accuracy");
      badge.id = "rca-accuracy";
      badge.title = "Root causes the technicians confirmed or corrected when completing orders";
      title.appendChild(badge);
    }
    try {
      const a = await api("GET", "/api/v1/workorders/execution/rca-accuracy");
      badge.textContent = ` · RCA confirmed ${a.confirmed} / corrected ${a.corrected}`;
      badge.setAttribute("data-confirmed", String(a.confirmed));
      badge.setAttribute("data-corrected", String(a.corrected));
    } catch (err) { /* read again on the next change */ }
  }
  let orderPatches = 0;  // bumped by every patch: a snapshot sent before one is older than the page
  function patchWorkOrder(id, fields) {
    const wo = state.work_orders.filter((w) => w.id === id)[0];
    if (!wo) return false;
    orderPatches += 1;
    Object.keys(fields).forEach((k) => { if (fields[k] !== undefined) wo[k] = fields[k]; });
    renderWorkOrders();
    return true;
  }
  // Reloads of one order in flight (rca_ready, then work_order_ready) may resolve out of order: the
  // newest wins (an action's answer counts as newest), so "analyzed" never lands over "open".
  const orderLoad = {};
  async function refreshWorkOrder(id) {
    const mine = orderLoad[id] = (orderLoad[id] || 0) + 1;
    try {
      const data = await api("GET", url("work_order", id));
      if (mine !== orderLoad[id]) return;
      const wo = data && (data.work_order || data);
      if (!wo || wo.id !== id || !patchWorkOrder(id, wo)) refreshState();
    } catch (err) {
      refreshState();
    }
  }

  // --- trends -------------------------------------------------------------------------------------
  function defaultSignal(cell) {
    const alarmed = state.alarms.filter((a) => a.cell_id === cell.id)[0];
    if (alarmed) return alarmed.signal_id;
    const limited = cell.signals.filter((s) => s.thresholds.alert !== null || s.thresholds.trip !== null);
    const vibration = limited.filter((s) => s.key.indexOf("vibration") === 0)[0];
    return (vibration || limited[0] || cell.signals[0]).id;
  }
  function ago(iso) {
    const seconds = (Date.now() - new Date(iso).getTime()) / 1000;
    if (!isFinite(seconds)) return "";
    if (seconds < 90) return `${Math.max(0, Math.round(seconds))} s ago`;
    if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
    if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`;
    return `${Math.round(seconds / 86400)} d ago`;
  }
  function flagTrend(cell, signal, figure) {
    const flags = figure.querySelector(".trend-flags");
    flags.textContent = "";
    figure.toggleAttribute("data-stale", !!signal.stale);
    figure.toggleAttribute("data-not-onboarded", cell.onboarded === false);
    if (cell.onboarded === false) {
      const off = el("span", "trend-flag flag-onboarding", "not onboarded");
      off.title = "Sentinel does not scan this cell: no alarms are raised for it.";
      flags.appendChild(off);
    }
    if (signal.stale) {
      let text = "stale";
      if (signal.time) text += ` · last sample ${fmtNumber(signal.value)}${signal.unit ? ` ${signal.unit}` : ""}, ${ago(signal.time)}`;
      const stale = el("span", "trend-flag flag-stale", text);
      if (signal.time) stale.title = `Last sample at ${fmtDateTime(signal.time)}`;
      flags.appendChild(stale);
    } else if (!signal.time) {
      flags.appendChild(el("span", "trend-flag flag-stale", "no samples yet"));
    }
  }
  const trendLoad = {};  // cell id → its newest trend GET: a signal picked meanwhile is drawn, not the older one
  async function drawTrend(cell, figure) {
    const mine = trendLoad[cell.id] = (trendLoad[cell.id] || 0) + 1;
    const signalId = chosenSignal[cell.id] || defaultSignal(cell);
    const found = findSignal(signalId);
    if (!found) return;
    flagTrend(found.cell, found.signal, figure);
    const host = figure.querySelector(".trend-host");
    const select = figure.querySelector(".trend-select");
    if (select) select.value = String(signalId);
    figure.setAttribute("data-signal-id", String(signalId));
    try {
      const body = await api("GET", `${url("trends", signalId)}?minutes=${TREND_MINUTES}&buckets=60`);
      if (mine !== trendLoad[cell.id]) return;
      const pts = AriaTrendChart.points(body);
      AriaTrendChart.draw(host, { points: pts, thresholds: found.signal.thresholds, unit: found.signal.unit,
        title: `${cell.tag} ${found.signal.name}`, stale: !!found.signal.stale });
      figure.setAttribute("data-points", String(pts.length));
    } catch (err) {
      if (mine === trendLoad[cell.id]) host.textContent = `Trend unavailable: ${err.message}`;
    }
  }
  function renderTrends() {
    const host = document.getElementById("trend-list");
    host.textContent = "";
    state.cells.forEach((cell) => {
      const figure = el("figure", "trend");
      figure.setAttribute("data-cell-id", String(cell.id));
      const caption = el("figcaption", "trend-caption");
      const tag = el("strong", null, state.can_operate ? null : cell.tag);
      if (state.can_operate) {  // the equipment page (its KB) is the operators'
        const link = el("a", "trend-cell-link", cell.tag);
        link.href = `/equipment/${encodeURIComponent(String(cell.id))}/`;
        link.title = `${cell.tag}: equipment knowledge (manufacturer, failure modes, parts, procedures)`;
        tag.appendChild(link);
      }
      caption.appendChild(tag);
      caption.appendChild(el("span", "trend-cell-name", ` ${cell.name} `));
      const select = el("select", "trend-select");
      select.setAttribute("aria-label", `${cell.tag} signal`);
      const current = chosenSignal[cell.id] || defaultSignal(cell);
      cell.signals.forEach((s) => {
        const option = el("option", null, s.name + (s.unit ? ` (${s.unit})` : ""));
        option.value = String(s.id);
        option.selected = s.id === current;
        select.appendChild(option);
      });
      select.addEventListener("change", () => { chosenSignal[cell.id] = Number(select.value); drawTrend(cell, figure); });
      caption.appendChild(select);
      figure.appendChild(caption);
      figure.appendChild(el("div", "trend-flags"));
      figure.appendChild(el("div", "trend-host"));
      host.appendChild(figure);
      drawTrend(cell, figure);
    });
  }
  function reflagTrends() {
    state.cells.forEach((cell) => {
      const figure = document.querySelector(`.trend[data-cell-id="${cell.id}"]`);
      const found = figure && findSignal(chosenSignal[cell.id] || defaultSignal(cell));
      if (found) flagTrend(found.cell, found.signal, figure);
    });
  }
  function redrawTrends(cellId) {
    state.cells.forEach((cell) => {
      if (cellId !== undefined && cell.id !== cellId) return;
      const figure = document.querySelector(`.trend[data-cell-id="${cell.id}"]`);
      if (figure) drawTrend(cell, figure);
    });
  }

  // --- state and events ---------------------------------------------------------------------------
  let refreshTimer = null;
  let stateLoad = 0;  // the timer is cleared before the GET: snapshots in flight may resolve out of order, newest wins
  function refreshState() {
    if (refreshTimer) return;
    refreshTimer = setTimeout(async () => {
      refreshTimer = null;
      const mine = ++stateLoad;
      const patchesAtSend = orderPatches;
      try {
        const data = await api("GET", paths.state);
        if (mine !== stateLoad) return;
        // A work order patched from a frame (or its reload) while this snapshot was on its way is newer
        // than the snapshot, which would undo it ("open" back to "analyzed"): read again instead.
        if (orderPatches !== patchesAtSend) { refreshState(); return; }
        const cellsChanged = JSON.stringify(data.cells.map((c) => [c.id, c.signals.length])) !==
          JSON.stringify(state.cells.map((c) => [c.id, c.signals.length]));
        state = data;
        renderBanners();  // a limit changed since a banner was raised shows the new one
        renderAlarms();
        renderWorkOrders();
        if (cellsChanged) renderTrends();
        else reflagTrends();
      } catch (err) { /* the next event or reconnect retries */ }
    }, 250);
  }

  function onFrame(frame) {
    const live = frame.id > latestAtLoad;
    feed.add(frame);
    if (!live) return;  // replayed history feeds the activity log only
    switch (frame.type) {
      case "anomaly_detected":
        bannerFromAnomaly(frame);
        if (frame.signal_def_id && !chosenSignal[frame.cell_id]) chosenSignal[frame.cell_id] = frame.signal_def_id;
        refreshState();
        redrawTrends(frame.cell_id);
        break;
      case "alarm_changed":  // another person acknowledged, shelved, … an alarm (or a shelve ran out)
        refreshState();
        break;
      case "ui_render":
        if (frame.component === "alert_banner" && frame.props && frame.props.cell_id !== undefined) {
          raiseBanner(frame.props.cell_id, { severity: frame.props.severity, message: frame.props.message });
        }
        break;
      case "rca_ready":
        if (!patchWorkOrder(frame.work_order_id, { status: "analyzed", rca_summary: frame.rca_summary,
          confidence: frame.confidence })) refreshState();
        refreshWorkOrder(frame.work_order_id);
        break;
      case "work_order_ready":
        if (!patchWorkOrder(frame.work_order_id, { status: "open" })) refreshState();
        refreshWorkOrder(frame.work_order_id);
        break;
      case "work_order_updated":
        refreshState();  // status, assignment, report, and alarms unshelved by a close
        if (frame.status === "completed") refreshAccuracy();
        break;
      case "signal_limits_changed":
        refreshState();  // alarm rows and trends show the new limits
        redrawTrends(frame.cell_id);
        break;
      default:
        break;
    }
  }

  const pill = document.getElementById("ws-status");
  const STATUS_TEXT = { open: "live", connecting: "connecting", reconnecting: "reconnecting",
    unauthorized: "signed out", forbidden: "no access", closed: "closed" };
  function onStatus(status) {
    pill.setAttribute("data-status", status);
    pill.textContent = STATUS_TEXT[status] || status;
    if (status === "open") refreshState();  // catch up on what changed while disconnected
  }

  // Open unacknowledged alarms announce themselves on load, too.
  state.alarms.filter((a) => a.state === "active_unack").reverse().forEach((a) => {
    const wo = state.work_orders.filter((w) => w.triggered_by_alarm_id === a.id)[0];
    raiseBanner(a.cell_id, { severity: a.severity, direction: a.direction, value: a.value, threshold: a.threshold_value, signalId: a.signal_id,
      signalName: a.signal_name, unit: a.unit, workOrderId: wo ? wo.id : null });
  });
  renderAlarms();
  renderWorkOrders();
  renderTrends();
  const newOrderForm = document.getElementById("wo-new-form");  // operators only (the template's choice)
  if (newOrderForm && window.AriaNewWorkOrder) {
    AriaNewWorkOrder.attach(newOrderForm, { url: paths.work_order_raise, onRaised: () => refreshState() });
  }
  if (!canWatch) {  // no operator/approver scope: the page says so (#cr-scope-notice); every read would be a 403
    onStatus("forbidden");
    return;
  }
  refreshAccuracy();
  setInterval(() => { redrawTrends(); }, TREND_REFRESH_MS);
  setInterval(() => { if (!document.hidden) refreshState(); }, STATE_REFRESH_MS);
  AriaEvents.connect({ onFrame, onStatus, after: replayAfter });
})();
