/* Control Room shell: the live event feed and the connection status pill (uses AriaEvents). */
(function () {
  "use strict";
  var feed = document.getElementById("live-feed");
  var pill = document.getElementById("ws-status");
  var empty = document.getElementById("feed-empty");
  if (!feed || !window.AriaEvents) return;

  var MAX_ROWS = 200;
  var SKIP = { id: true, type: true, created_at: true, turn_id: true };
  var MAX_FIELDS = 8;
  // Fields that say the most about an event come first; the rest follow in payload order.
  var KEY_FIELDS = ["severity", "direction", "agent", "tool_name", "from_agent", "to_agent", "work_order_id",
    "cell_id", "signal_def_id", "value", "threshold", "finish_reason", "component", "duration_ms",
    "confidence", "rca_summary", "reason", "content"];

  function fieldOrder(frame) {
    var keys = Object.keys(frame).filter(function (k) { return !SKIP[k]; });
    var first = KEY_FIELDS.filter(function (k) { return keys.indexOf(k) !== -1; });
    var rest = keys.filter(function (k) { return KEY_FIELDS.indexOf(k) === -1; });
    return first.concat(rest).slice(0, MAX_FIELDS);
  }
  var STATUS_TEXT = {
    connecting: "connecting",
    open: "live",
    reconnecting: "reconnecting",
    unauthorized: "signed out",
    closed: "closed"
  };

  function summarise(value) {
    if (value === null || value === undefined) return "—";
    var text = typeof value === "object" ? JSON.stringify(value) : String(value);
    return text.length > 80 ? text.slice(0, 77) + "…" : text;
  }

  // When the event was published (`created_at`, on live and replayed frames alike).
  function whenOf(frame) {
    var when = frame.created_at ? new Date(frame.created_at) : null;
    return when && !isNaN(when.getTime()) ? when : null;
  }

  function row(frame) {
    var item = document.createElement("li");
    item.className = "feed-row type-" + String(frame.type).replace(/[^a-z0-9_-]/gi, "");
    item.setAttribute("data-event-id", String(frame.id));
    item.setAttribute("data-event-type", String(frame.type));

    var time = document.createElement("time");
    time.className = "feed-time";
    var when = whenOf(frame);
    if (when) {
      time.dateTime = when.toISOString();
      time.title = when.toLocaleString();
      time.textContent = when.toLocaleTimeString();
    } else {
      time.textContent = "—";
    }
    item.appendChild(time);

    var type = document.createElement("span");
    type.className = "feed-type";
    type.textContent = frame.type;
    item.appendChild(type);

    var fields = document.createElement("span");
    fields.className = "feed-fields";
    fieldOrder(frame).forEach(function (key) {
      var field = document.createElement("span");
      field.className = "feed-field";
      var name = document.createElement("b");
      name.textContent = key;
      field.appendChild(name);
      field.appendChild(document.createTextNode(" " + summarise(frame[key])));
      fields.appendChild(field);
    });
    item.appendChild(fields);

    var id = document.createElement("span");
    id.className = "feed-id";
    id.textContent = "#" + frame.id;
    item.appendChild(id);
    return item;
  }

  var after = parseInt(feed.getAttribute("data-replay-after"), 10);
  window.AriaEvents.connect({
    after: isNaN(after) ? undefined : after,
    onFrame: function (frame) {
      if (empty) empty.hidden = true;
      feed.insertBefore(row(frame), feed.firstChild);
      while (feed.children.length > MAX_ROWS) feed.removeChild(feed.lastChild);
    },
    onStatus: function (status) {
      if (!pill) return;
      pill.setAttribute("data-status", status);
      pill.textContent = STATUS_TEXT[status] || status;
    }
  });
})();
