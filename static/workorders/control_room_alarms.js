/*
 * The Control Room's alarm lists (loaded before control_room.js, which owns the state and the bus):
 * the annunciated and shelved alarms under "Active alarms", the out-of-service ones in their own
 * section (by cell and signal, with a filter), each row saying who acknowledged, who shelved it, why
 * and until when, or who took it out of service, why and since when. Operators (state.can_operate)
 * get the actions the sentinel API allows them: acknowledge, shelve and put out of service (a
 * reason is required for both), unshelve, return to service (not while the signal is not evaluated).
 * Everything the page shows is set with textContent / createElement (reasons are user text).
 */
(() => {
  "use strict";
  const { el, api, fmtNumber, fmtTime, fmtDateTime } = window.Aria;
  const STATE_LABEL = { active_unack: "unacknowledged", acknowledged: "acknowledged", shelved: "shelved",
    out_of_service: "out of service" };
  const OUT = "out_of_service";
  // Hiding an alarm records why (ISA-18.2): the API refuses a blank reason too, naming `comment`.
  const NEEDS_REASON = { alarm_shelve: "shelve it", alarm_put_out_of_service: "put it out of service" };

  function tooWhat(direction) { return direction === "low" ? "TOO LOW" : "TOO HIGH"; }
  function when(iso) { return iso ? (fmtDateTime || fmtTime)(iso) : "?"; }

  // opts: { getState() → the snapshot, url(name, id) → an API path, refresh() → re-read the snapshot }
  function create(opts) {
    const comments = {};  // alarm id → the comment being typed (kept across re-renders)

    function findSignal(id) {
      const cells = opts.getState().cells;
      for (let i = 0; i < cells.length; i++) {
        const found = cells[i].signals.filter((s) => s.id === id)[0];
        if (found) return { cell: cells[i], signal: found };
      }
      return null;
    }
    // The limit the alarm is judged against now (a limit change since it was raised shows as such).
    function currentLimit(alarm) {
      const found = findSignal(alarm.signal_id);
      const now = found && alarm.threshold_field ? found.signal.thresholds[alarm.threshold_field] : null;
      return typeof now === "number" ? now : alarm.threshold_value;
    }
    // The order an alarm opened or joined (its card says so): what "until the work order closes" waits on.
    function activeOrderOf(alarm) {
      return opts.getState().work_orders.filter((w) => !AriaWorkOrderCards.isClosed(w.status) && w.triggered_by_alarm_id === alarm.id)[0] || null;
    }

    function showError(text, alarm) {
      const error = document.getElementById("alarm-error");
      error.textContent = text;
      error.hidden = false;
      const field = alarm && document.querySelector(`.cr-alarm-comment[data-alarm-id="${alarm.id}"]`);
      if (field) field.focus();
    }
    async function act(alarm, kind, button, untilWorkOrder) {
      document.getElementById("alarm-error").hidden = true;
      const comment = (comments[alarm.id] || "").trim();
      if (NEEDS_REASON[kind] && !comment) {
        showError(`Alarm #${alarm.id}: type the reason in its comment field to ${NEEDS_REASON[kind]}.`, alarm);
        return;
      }
      button.disabled = true;
      const body = kind !== "alarm_shelve" ? { comment }
        : untilWorkOrder ? { until_work_order_closes: true, comment } : { minutes: 60, comment };
      try {
        await api("POST", opts.url(kind, alarm.id), body);
        delete comments[alarm.id];
        opts.refresh();
      } catch (err) {
        showError(`Alarm #${alarm.id}: ${err.message}`);
        button.disabled = false;
      }
    }
    function button(cls, text, onClick) {
      const b = el("button", `btn ${cls}`, text);
      b.type = "button";
      b.addEventListener("click", () => { onClick(b); });
      return b;
    }

    // Who did what to the alarm: acknowledged by; shelved by, until, why; out of service by, since, why.
    function standing(alarm) {
      if (alarm.state === "acknowledged" && alarm.acknowledged_by) return `acknowledged by ${alarm.acknowledged_by}`;
      if (alarm.state === "shelved") {
        const until = alarm.shelved_until_work_order_closes
          ? `until its work order closes (at the latest ${when(alarm.shelved_until)})`
          : `until ${when(alarm.shelved_until)}`;
        return `shelved by ${alarm.shelved_by || "?"} ${until}`;
      }
      if (alarm.state === OUT) return `out of service since ${when(alarm.out_of_service_since)} by ${alarm.out_of_service_by || "?"}`;
      return STATE_LABEL[alarm.state] || alarm.state;
    }
    function reasonOf(alarm) {
      return alarm.state === "shelved" ? alarm.shelve_reason : alarm.state === OUT ? alarm.out_of_service_reason : null;
    }

    function actions(alarm) {
      const box = el("div", "cr-alarm-actions");
      const comment = el("input", "cr-alarm-comment");
      comment.type = "text";
      comment.maxLength = 500;
      comment.placeholder = alarm.state === OUT ? "Comment (optional)" : alarm.state === "shelved"
        ? "Comment (optional; why, to put out of service)" : "Comment (why; required to shelve or put out of service)";
      comment.setAttribute("aria-label", `Comment on alarm #${alarm.id}`);
      comment.setAttribute("data-alarm-id", String(alarm.id));
      comment.value = comments[alarm.id] || "";
      comment.addEventListener("input", () => { comments[alarm.id] = comment.value; });
      box.appendChild(comment);
      if (alarm.state === OUT) {
        if (alarm.signal_evaluated === false) {  // the API refuses it (409): nothing would clear the alarm
          box.removeChild(comment);
          box.appendChild(el("span", "cr-alarm-note", "Its signal is not evaluated (disabled, or its cell is off onboarding): enable it in the admin, then return the alarm to service."));
          return box;
        }
        box.appendChild(button("btn-return", "Return to service", (b) => act(alarm, "alarm_return_to_service", b)));
        return box;
      }
      const outOfService = () => button("btn-oos", "Put out of service", (b) => act(alarm, "alarm_put_out_of_service", b));
      if (alarm.state === "shelved") {
        box.appendChild(button("btn-unshelve", "Unshelve", (b) => act(alarm, "alarm_unshelve", b)));
        box.appendChild(outOfService());
        return box;
      }
      if (alarm.state === "active_unack") box.appendChild(button("btn-ack", "Acknowledge", (b) => act(alarm, "alarm_acknowledge", b)));
      box.appendChild(button("btn-shelve", "Shelve 1 h", (b) => act(alarm, "alarm_shelve", b)));
      const order = activeOrderOf(alarm);
      if (order) box.appendChild(button("btn-shelve-wo", `Shelve until WO #${order.id} closes`, (b) => act(alarm, "alarm_shelve", b, true)));
      box.appendChild(outOfService());
      return box;
    }

    function row(alarm, canOperate) {
      const item = el("li", `cr-alarm sev-${alarm.severity} state-${alarm.state}`);
      item.setAttribute("data-alarm-id", String(alarm.id));
      item.setAttribute("data-state", alarm.state);
      item.appendChild(el("span", "cr-sev", alarm.severity.toUpperCase()));
      const what = el("div", "cr-alarm-what");
      what.appendChild(el("strong", null, `${alarm.cell_tag} · ${alarm.signal_name} ${tooWhat(alarm.direction)}`));
      const limit = currentLimit(alarm);
      const limitText = `limit ${fmtNumber(limit)}${limit !== alarm.threshold_value ? ` (was ${fmtNumber(alarm.threshold_value)} when raised)` : ""}`;
      what.appendChild(el("div", "cr-alarm-detail", `${fmtNumber(alarm.value)} ${alarm.unit} (${limitText}, peak ${fmtNumber(alarm.peak_value)}) · raised ${fmtTime(alarm.raised_at)} · ${standing(alarm)}`));
      const reason = reasonOf(alarm);
      if (reason) what.appendChild(el("div", "cr-alarm-reason", `Reason: ${reason}`));
      if (alarm.signal_stale) {
        const staleFlag = el("span", "trend-flag flag-stale", "signal stale: held until fresh data");
        staleFlag.title = "The transmitter sends no fresh samples: this alarm can neither clear nor escalate.";
        what.appendChild(staleFlag);
      }
      if (alarm.chattering) what.appendChild(el("span", "trend-flag flag-chatter", "chattering"));
      item.appendChild(what);
      if (canOperate) item.appendChild(actions(alarm));
      return item;
    }

    function fill(listId, countId, emptyId, alarms, canOperate, total) {
      const list = document.getElementById(listId);
      list.textContent = "";
      document.getElementById(countId).textContent = String(total === undefined ? alarms.length : total);
      document.getElementById(emptyId).hidden = alarms.length > 0;
      alarms.forEach((alarm) => { list.appendChild(row(alarm, canOperate)); });
    }
    // The out-of-service filter: a cell tag or signal name (the operator looks for the alarms a
    // signal's disabling took out of service, once it is enabled again).
    const oosFilter = document.getElementById("oos-filter");
    if (oosFilter) oosFilter.addEventListener("input", () => { render(); });
    function matches(alarm, text) {
      return !text || `${alarm.cell_tag} ${alarm.signal_name}`.toLowerCase().indexOf(text) >= 0;
    }

    function render() {
      const state = opts.getState();
      const focused = document.activeElement;
      const typingIn = focused && focused.classList && focused.classList.contains("cr-alarm-comment")
        ? focused.getAttribute("data-alarm-id") : null;
      fill("alarm-list", "alarm-count", "alarms-empty", state.alarms.filter((a) => a.state !== OUT), state.can_operate);
      const out = state.alarms.filter((a) => a.state === OUT);
      const text = oosFilter ? oosFilter.value.trim().toLowerCase() : "";
      const total = typeof state.out_of_service_alarms === "number" ? state.out_of_service_alarms : out.length;
      fill("oos-list", "oos-count", "oos-empty", out.filter((a) => matches(a, text)), state.can_operate, total);
      const more = document.getElementById("oos-more");
      more.hidden = !(total > out.length);
      more.textContent = more.hidden ? "" : `Showing ${out.length} of ${total} out-of-service alarms (by cell); the admin lists every one.`;
      document.getElementById("oos-section").hidden = total === 0;
      if (typingIn) {  // a refresh never takes the comment field from under the operator's fingers
        const again = document.querySelector(`.cr-alarm-comment[data-alarm-id="${typingIn}"]`);
        if (again) { again.focus(); again.setSelectionRange(again.value.length, again.value.length); }
      }
    }

    return { render, currentLimit };
  }

  window.AriaControlRoomAlarms = { create };
})();
