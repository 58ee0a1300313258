/*
 * AriaActivityFeed — what the agents are doing, from bus frames: agent start/end, tool calls with
 * their durations, handoffs, a collapsible thinking stream per agent turn (live: thinking_delta
 * frames append to it), RCA / order readiness, and every ui_render drawn by the shared renderers
 * (static/assistant/render.js, window.AriaRender): charts, pattern match, diagnosis and work order
 * cards. A handed-off agent's rows carry its parent's turn (`data-parent-turn`).
 *
 *   const feed = AriaActivityFeed.create(listElement, emptyElement, {liveAfter: latestEventIdAtLoad});
 *   feed.add(frame);   // any bus frame; irrelevant types are ignored
 *
 * A row's time is the event's own time when the frame carries one (`created_at`, or `time` on
 * anomaly_detected); else the arrival time for live frames, and "earlier" for frames replayed from
 * before the page loaded (their arrival time would be the page-load time, not when they happened).
 */
((global) => {
  "use strict";

  const MAX_ITEMS = 150;

  const { el, fmtNumber, fmtTime } = window.Aria;

  function brief(value, limit) {
    let text;
    try { text = typeof value === "string" ? value : JSON.stringify(value); } catch (err) { text = String(value); }
    if (text === undefined) text = "";
    return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
  }

  function eventTime(frame) {
    const stamp = frame.created_at || (frame.type === "anomaly_detected" ? frame.time : null);
    const date = stamp ? new Date(stamp) : null;
    return date && !isNaN(date.getTime()) ? date : null;
  }

  function create(list, empty, options) {
    const liveAfter = options && typeof options.liveAfter === "number" ? options.liveAfter : -1;
    const toolRows = {};   // turn|agent|tool → [li, ...] waiting for completion (FIFO)
    const thinking = {};   // turn|agent → {details, pre, count}

    function push(item, frame) {
      item.setAttribute("data-event-type", frame.type);
      if (frame.agent) item.setAttribute("data-agent", frame.agent);
      const replayed = typeof frame.id === "number" && frame.id <= liveAfter;
      if (replayed) item.setAttribute("data-replayed", "");
      const when = eventTime(frame) || (replayed ? null : new Date());
      const time = el("time", "act-time", when ? fmtTime(when) : "earlier");
      if (when) time.setAttribute("datetime", when.toISOString());
      item.insertBefore(time, item.firstChild);
      list.insertBefore(item, list.firstChild);
      while (list.children.length > MAX_ITEMS) list.removeChild(list.lastChild);
      if (empty) empty.hidden = true;
      return item;
    }

    function row(frame, cls, parts) {
      const item = el("li", `act ${cls}`);
      parts.forEach((part) => { item.appendChild(part); });
      return push(item, frame);
    }

    function agentTag(name) { return el("span", "act-agent", name || "agent"); }

    // The component drawn by the shared renderers; a page without them still says what was shown.
    function rendered(frame) {
      const body = el("div", "act-render-body");
      const render = global.AriaRender;
      if (render && typeof render.drawInto === "function") {
        try {
          render.drawInto(body, String(frame.component || ""), frame.props || {});
          return body;
        } catch (err) {
          body.replaceChildren();
        }
      }
      body.appendChild(el("code", null, frame.component));
      return body;
    }

    function toolKey(frame) { return [frame.turn_id, frame.agent, frame.tool_name].join("|"); }

    function onToolStarted(frame) {
      const item = row(frame, "act-tool pending", [
        agentTag(frame.agent), el("span", "act-arrow", "→"),
        el("code", "act-tool-name", frame.tool_name),
        el("span", "act-args", brief(frame.args || {}, 90)),
        el("span", "act-duration", "running…")
      ]);
      item.setAttribute("data-tool", frame.tool_name);
      const key = toolKey(frame);
      (toolRows[key] = toolRows[key] || []).push(item);
    }

    function onToolCompleted(frame) {
      const waiting = toolRows[toolKey(frame)];
      let item = waiting && waiting.shift();
      const text = `${typeof frame.duration_ms === "number" ? frame.duration_ms : "?"} ms`;
      if (!item) {
        item = row(frame, "act-tool", [agentTag(frame.agent), el("span", "act-arrow", "→"),
          el("code", "act-tool-name", frame.tool_name), el("span", "act-duration", text)]);
      } else {
        item.querySelector(".act-duration").textContent = text;
      }
      item.classList.remove("pending");
      item.setAttribute("data-duration-ms", String(frame.duration_ms));
    }

    function onThinking(frame) {
      const key = [frame.turn_id, frame.agent].join("|");
      let entry = thinking[key];
      if (!entry) {
        const details = el("details", "act-thinking");
        const summary = el("summary", null);
        summary.appendChild(agentTag(frame.agent));
        summary.appendChild(el("span", "act-thinking-label", " thinking"));
        summary.appendChild(el("span", "act-thinking-count", ""));
        details.appendChild(summary);
        const pre = el("pre", "act-thinking-text", "");
        details.appendChild(pre);
        const item = el("li", "act act-thinking-row");
        item.appendChild(details);
        push(item, frame);
        entry = thinking[key] = { pre, count: summary.querySelector(".act-thinking-count") };
      }
      entry.pre.textContent += frame.content || "";
      entry.count.textContent = ` (${entry.pre.textContent.length} chars)`;
    }

    function add(frame) {
      switch (frame.type) {
        case "agent_start": {
          const parts = [el("span", "act-icon", "▶"), agentTag(frame.agent), el("span", null, "started")];
          if (frame.parent_turn_id) parts.push(el("span", "act-nested-note", "(handed off)"));
          const started = row(frame, `act-start${frame.parent_turn_id ? " act-nested" : ""}`, parts);
          if (frame.parent_turn_id) started.setAttribute("data-parent-turn", frame.parent_turn_id);
          break;
        }
        case "agent_end":
          row(frame, "act-end", [el("span", "act-icon", "■"), agentTag(frame.agent),
            el("span", null, `finished (${frame.finish_reason || "?"})`)]);
          break;
        case "tool_call_started": onToolStarted(frame); break;
        case "tool_call_completed": onToolCompleted(frame); break;
        case "thinking_delta": onThinking(frame); break;
        case "agent_handoff":
          row(frame, "act-handoff", [agentTag(frame.from_agent), el("span", "act-arrow", "⇢"),
            agentTag(frame.to_agent), el("span", "act-reason", brief(frame.reason || "", 120))]);
          break;
        case "rca_ready":
          row(frame, "act-rca", [el("span", "act-icon", "✔"), el("span", null,
            `RCA ready for work order #${frame.work_order_id} (confidence ${Math.round((frame.confidence || 0) * 100)}%)`)]);
          break;
        case "work_order_ready":
          row(frame, "act-ready", [el("span", "act-icon", "✔"),
            el("span", null, `Work order #${frame.work_order_id} is open`)]);
          break;
        case "anomaly_detected":
          row(frame, `act-anomaly sev-${frame.severity}`, [el("span", "act-icon", "⚠"),
            el("span", null, `Anomaly on cell ${frame.cell_id}: ${fmtNumber(frame.value)} (${frame.direction === "low" ? "below " : "above "}${fmtNumber(frame.threshold)})`)]);
          break;
        case "ui_render": {
          const shown = row(frame, "act-render", [agentTag(frame.agent), el("span", "act-render-label", "shows"),
            rendered(frame)]);
          shown.setAttribute("data-component", String(frame.component || ""));
          break;
        }
        default:
          break;
      }
    }

    return { add };
  }

  global.AriaActivityFeed = { create };
})(window);
