/* Control Room shell: the live event feed and the connection status pill (uses AriaEvents). */
(() => {
  "use strict";
  const feed = document.getElementById("live-feed");
  const pill = document.getElementById("ws-status");
  const empty = document.getElementById("feed-empty");
  if (!feed || !window.AriaEvents) return;
  const { el, fmtTime, fmtDateTime } = window.Aria;

  const MAX_ROWS = 200;
  const SKIP = { id: true, type: true, created_at: true, turn_id: true };
  const MAX_FIELDS = 8;
  // Fields that say the most about an event come first; the rest follow in payload order.
  const KEY_FIELDS = ["severity", "direction", "agent", "tool_name", "from_agent", "to_agent", "work_order_id",
    "cell_id", "signal_def_id", "value", "threshold", "finish_reason", "component", "duration_ms",
    "confidence", "rca_summary", "reason", "content"];

  function fieldOrder(frame) {
    const keys = Object.keys(frame).filter((k) => !SKIP[k]);
    const first = KEY_FIELDS.filter((k) => keys.includes(k));
    const rest = keys.filter((k) => !KEY_FIELDS.includes(k));
    return first.concat(rest).slice(0, MAX_FIELDS);
  }
  const STATUS_TEXT = {
    connecting: "connecting",
    open: "live",
    reconnecting: "reconnecting",
    unauthorized: "signed out",
    forbidden: "no access",
    closed: "closed"
  };

  function summarise(value) {
    if (value === null || value === undefined) return "—";
    const text = typeof value === "object" ? JSON.stringify(value) : String(value);
    return text.length > 80 ? `${text.slice(0, 77)}…` : text;
  }

  // When the event was published (`created_at`, on live and replayed frames alike).
  function whenOf(frame) {
    const when = frame.created_at ? new Date(frame.created_at) : null;
    return when && !isNaN(when.getTime()) ? when : null;
  }

  function row(frame) {
    const item = el("li", `feed-row type-${String(frame.type).replace(/[^a-z0-9_-]/gi, "")}`);
    item.setAttribute("data-event-id", String(frame.id));
    item.setAttribute("data-event-type", String(frame.type));

    const when = whenOf(frame);
    const time = el("time", "feed-time", when ? fmtTime(when) : "—");
    if (when) {
      time.dateTime = when.toISOString();
      time.title = fmtDateTime(when);
    }
    item.appendChild(time);
    item.appendChild(el("span", "feed-type", frame.type));

    const fields = el("span", "feed-fields");
    fieldOrder(frame).forEach((key) => {
      const field = el("span", "feed-field");
      field.appendChild(el("b", null, key));
      field.appendChild(document.createTextNode(` ${summarise(frame[key])}`));
      fields.appendChild(field);
    });
    item.appendChild(fields);
    item.appendChild(el("span", "feed-id", `#${frame.id}`));
    return item;
  }

  const after = parseInt(feed.getAttribute("data-replay-after"), 10);
  window.AriaEvents.connect({
    after: isNaN(after) ? undefined : after,
    onFrame: (frame) => {
      if (empty) empty.hidden = true;
      feed.insertBefore(row(frame), feed.firstChild);
      while (feed.children.length > MAX_ROWS) feed.removeChild(feed.lastChild);
    },
    onStatus: (status) => {
      if (!pill) return;
      pill.setAttribute("data-status", status);
      pill.textContent = STATUS_TEXT[status] || status;
    }
  });
})();
