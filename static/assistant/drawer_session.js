/* Ask ARIA drawer, per-session parts: the confirm card of a held tool call (Confirm runs the call
   the server stored; Reject declines it), the session's tool_approval toggle and skill pin/disable
   (build mode), a turn's details (correlation id, agent runs, engine) with the "offline demo
   engine" mark, and the header's offline badge. Text only via textContent. */
(() => {
  "use strict";
  const drawer = document.getElementById("aria-drawer");
  if (!drawer || !window.Aria) return;
  const { el } = window.Aria;
  const API = drawer.dataset.assistantApi;
  const $ = (id) => document.getElementById(id);
  const api = (method, path, body) => window.Aria.api(method, API + path, body);
  const ctx = { sessionId: null, ensureSession: null, notice: () => {} };
  const OUTCOME = { done: "Ran", failed: "Failed", rejected: "Declined", expired: "Expired", running: "Running…" };

  const readable = (value) => {
    if (value === null || value === undefined || value === "") return "—";
    if (Array.isArray(value)) return value.map(readable).join(", ");
    if (typeof value === "object") return JSON.stringify(value);
    return String(value);
  };
  const label = (key) => key.replace(/_/g, " ");

  /* ---------- the confirm card of a held tool call ---------- */
  function outcome(card, call) {
    card.dataset.status = call.status;
    card.querySelectorAll("button").forEach((b) => b.remove());
    const text = call.status === "done" ? `${OUTCOME.done}: ${call.result_summary}`
      : `${OUTCOME[call.status] || call.status}${call.error ? `: ${call.error}` : ""}`;
    card.querySelector(".aria-confirm-status").textContent = text;
  }

  function decide(card, call, verb) {
    return async () => {
      card.querySelectorAll("button").forEach((b) => { b.disabled = true; });
      try {
        outcome(card, await api("POST", `/tool-calls/${call.id}/${verb}`, {}));
      } catch (e) {
        card.querySelector(".aria-confirm-status").textContent = e.message;
        card.querySelectorAll("button").forEach((b) => { b.disabled = false; });
      }
    };
  }

  function confirmCard(call) {
    const card = el("div", "aria-card aria-confirm");
    card.dataset.callId = String(call.id);
    card.appendChild(el("h4", null, `Confirm change: ${call.tool}`));
    card.appendChild(el("p", "aria-note", `${call.description} (tier ${call.tier}; runs with your permissions)`));
    const args = el("dl", "aria-kv aria-confirm-args");
    Object.entries(call.args || {}).forEach(([k, v]) => { args.append(el("dt", null, label(k)), el("dd", null, readable(v))); });
    card.appendChild(args);
    if ((call.changes || []).length) {
      card.appendChild(el("p", "aria-confirm-what", "What it will change:"));
      const ul = el("ul", "aria-confirm-changes");
      call.changes.forEach((c) => ul.appendChild(el("li", null, `${label(c.field)}: ${readable(c.before)} → ${readable(c.after)}`)));
      card.appendChild(ul);
    }
    card.appendChild(el("p", "aria-confirm-status", ""));
    if (call.status === "pending") {
      const yes = el("button", "aria-confirm-yes", "Confirm");
      const no = el("button", "aria-confirm-no", "Reject");
      yes.type = "button";
      no.type = "button";
      yes.addEventListener("click", decide(card, call, "confirm"));
      no.addEventListener("click", decide(card, call, "reject"));
      card.append(yes, no);
    } else {
      outcome(card, call);
    }
    return card;
  }

  function pendingCards(li, calls) { (calls || []).forEach((call) => li.appendChild(confirmCard(call))); }

  async function sessionCalls(sessionId) {
    return sessionId ? api("GET", `/sessions/${sessionId}/tool-calls`).catch(() => []) : [];
  }

  /* ---------- a turn's details and the offline mark ---------- */
  function offlineMark(li) {
    if (li.querySelector(".aria-offline-mark")) return;
    const mark = el("span", "aria-offline-mark", "offline demo engine");
    mark.title = "This answer came from ARIA's offline stand-in, not a language model.";
    li.insertBefore(mark, li.firstChild);
  }

  function turnDetails(li, meta) {
    if (!meta) return;
    if (meta.offline) offlineMark(li);
    if (!meta.correlation_id && !(meta.agent_runs || []).length) return;
    const det = el("details", "aria-turn-details");
    det.appendChild(el("summary", null, "turn details"));
    const dl = el("dl", "aria-kv");
    dl.append(el("dt", null, "correlation id"), el("dd", "aria-correlation", meta.correlation_id || "—"));
    dl.append(el("dt", null, "engine"), el("dd", null, (meta.engines || []).join(", ") || "—"));
    det.appendChild(dl);
    const ul = el("ul", "aria-agent-runs");
    (meta.agent_runs || []).forEach((r) => ul.appendChild(el("li", null, `#${r.id} ${r.agent} · ${r.engine}${r.model ? ` (${r.model})` : ""} · ${r.status}`)));
    det.appendChild(ul);
    li.appendChild(det);
  }

  async function engineBadge() {
    const badge = $("aria-offline");
    try {
      const cfg = await api("GET", "/config");
      badge.hidden = Boolean(cfg.engine_info && cfg.engine_info.real_provider);
    } catch (e) { /* no scope to read it: leave the badge as it is */ }
    return !badge.hidden;
  }

  /* ---------- build mode: tool approval and skills of this session ---------- */
  // Refreshes in flight (a session opened, a turn answered) may resolve out of order or land after
  // the user changed tool approval or a skill: the newest wins, and the user's change counts as newest.
  const latest = { approval: 0, skills: 0 };
  async function refresh(options) {
    Object.assign(ctx, options || {});
    const select = $("aria-tool-approval");
    const list = $("aria-skill-list");
    if (!select) return;  // the session panel is drawn for operators only (drawer.html)
    const mine = { approval: ++latest.approval, skills: ++latest.skills };
    if (!ctx.sessionId) { select.value = "ask"; list.replaceChildren(el("li", "aria-note", "Skills: send a message first.")); return; }
    try {
      const s = await api("GET", `/sessions/${ctx.sessionId}`);
      if (mine.approval === latest.approval) select.value = s.tool_approval || "ask";
    } catch (e) { if (mine.approval === latest.approval) ctx.notice(e.message, "aria-error"); }
    const skills = await api("GET", `/sessions/${ctx.sessionId}/skills`).catch(() => []);
    if (mine.skills !== latest.skills) return;
    list.replaceChildren(...skills.map(skillRow));
    if (!skills.length) list.appendChild(el("li", "aria-note", "No skills published yet."));
  }

  function skillRow(s) {
    const li = el("li", "aria-skill");
    li.dataset.skill = s.name;
    li.appendChild(el("span", null, `${s.name} `));
    if (s.runtime_mode !== "auto") li.appendChild(el("span", "aria-badge", `${s.runtime_mode} for everyone`));
    const pick = el("select", "aria-skill-state");
    pick.setAttribute("aria-label", `${s.name} in this session`);
    [["auto", "auto"], ["pinned", "pin"], ["disabled", "disable"]].forEach(([value, text]) => {
      const o = el("option", null, text);
      o.value = value;
      pick.appendChild(o);
    });
    pick.value = s.session_state;
    pick.addEventListener("change", async () => {
      latest.skills += 1;  // a refresh on its way shows the state before this change: it is not drawn
      try {
        const skills = await api("PUT", `/sessions/${ctx.sessionId}/skills/${encodeURIComponent(s.name)}`, { state: pick.value });
        $("aria-skill-list").replaceChildren(...skills.map(skillRow));
      } catch (e) { pick.value = s.session_state; ctx.notice(e.message, "aria-error"); }
    });
    li.appendChild(pick);
    return li;
  }

  if ($("aria-tool-approval")) $("aria-tool-approval").addEventListener("change", async (event) => {
    latest.approval += 1;  // a refresh on its way shows the value before this change: it is not drawn
    const status = $("aria-tool-approval-status");
    try {
      const sid = ctx.ensureSession ? await ctx.ensureSession() : ctx.sessionId;
      ctx.sessionId = sid;
      const s = await api("PATCH", `/sessions/${sid}`, { tool_approval: event.target.value });
      event.target.value = s.tool_approval;
      status.textContent = s.tool_approval === "allow" ? "Changes run without asking in this session." : "Each change waits for your Confirm.";
    } catch (e) { status.textContent = e.message; }
  });

  // a decision taken in another tab (or the admin's view of it) updates this tab's card
  async function onDecided(frame) {
    const card = drawer.querySelector(`.aria-confirm[data-call-id="${Number(frame.call_id)}"]`);
    if (!card || card.dataset.status === frame.status) return;
    try { outcome(card, await api("GET", `/tool-calls/${Number(frame.call_id)}`)); } catch (e) { /* not ours */ }
  }
  if (window.AriaEvents) window.AriaEvents.connect({ types: ["tool_call_decided"], onFrame: onDecided });

  window.AriaSession = Object.freeze({ refresh, pendingCards, sessionCalls, turnDetails, offlineMark, engineBadge });
})();
