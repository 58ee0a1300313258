/* Ask ARIA drawer: chat (WebSocket, streamed ChatMap frames) and build/plan/coordinator turns
   (REST), history, attachments, settings, drafts with status badges. No inline scripts; text only
   via textContent. */
(() => {
  "use strict";
  const drawer = document.getElementById("aria-drawer");
  if (!drawer || !window.AriaRender) return;
  const { el } = window.Aria;
  const API = drawer.dataset.assistantApi;
  const $ = (id) => document.getElementById(id);
  const log = $("aria-log");
  // Without the operator scope the template draws no Send, attachments, new-draft form, modes,
  // history or settings (the API would answer 403): the drawer is then the drafts review queue only.
  const canOperate = drawer.dataset.canOperate === "1";
  const canReview = drawer.dataset.canReview === "1";
  const state = { sessionId: null, mode: !canOperate && canReview ? "build" : "chat", socket: null, pending: null, busy: false, queue: [], opening: 0 };

  // Paths are under the assistant API unless already absolute (/api/…); uploads go as FormData.
  const api = (method, path, body, isForm) =>
    window.Aria.api(method, path.startsWith("/api/") ? path : API + path, body, { form: Boolean(isForm) });

  /* ---------- log rendering ---------- */
  function row(cls) {
    const li = el("li", `aria-row ${cls}`);
    log.appendChild(li);
    log.scrollTop = log.scrollHeight;
    return li;
  }
  function say(role, text) {
    const li = row(`aria-${role}`);
    li.appendChild(el("div", "aria-text", text));
    return li;
  }
  function notice(text, cls) { row(`aria-notice ${cls || ""}`).textContent = text; }

  function turnView() {
    const li = row("aria-assistant");
    const view = { li, text: null, thinking: null, tools: {} };
    view.textNode = () => {
      if (!view.text) { view.text = el("div", "aria-text"); li.appendChild(view.text); }
      return view.text;
    };
    return view;
  }

  function onFrame(view, frame) {
    switch (frame.type) {
      case "text_delta":
        view.textNode().textContent += frame.content;
        break;
      case "thinking_delta": {
        if (!view.thinking) {
          const d = el("details", "aria-thinking");
          d.appendChild(el("summary", null, "thinking"));
          view.thinking = el("p");
          d.appendChild(view.thinking);
          view.li.appendChild(d);
        }
        view.thinking.textContent += frame.content;
        break;
      }
      case "tool_call": {
        const d = el("details", "aria-tool");
        const summary = el("summary", null, frame.name);
        summary.appendChild(el("span", "aria-tool-status", " …"));
        d.appendChild(summary);
        d.appendChild(el("pre", null, JSON.stringify(frame.args, null, 1)));
        view.li.appendChild(d);
        (view.tools[frame.name] = view.tools[frame.name] || []).push(d);
        break;
      }
      case "tool_result": {
        const d = (view.tools[frame.name] || []).find((x) => !x.dataset.done);
        if (d) {
          d.dataset.done = "1";
          d.querySelector(".aria-tool-status").textContent = frame.summary.startsWith("error") ? " ✗" : " ✓";
          d.appendChild(el("p", "aria-tool-result", frame.summary));
        }
        break;
      }
      case "ui_render":
        view.li.appendChild(window.AriaRender.component(frame.component, frame.props));
        break;
      case "agent_handoff":
        view.li.appendChild(el("p", "aria-handoff", `${frame.from} → ${frame.to}: ${frame.reason}`));
        break;
      default:
        break;
    }
    log.scrollTop = log.scrollHeight;
  }

  /* ---------- chat over the WebSocket ---------- */
  function socket() {
    if (state.socket && state.socket.readyState <= 1) return state.socket;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}${drawer.dataset.wsPath}`);
    ws.addEventListener("message", (event) => {
      let frame;
      try { frame = JSON.parse(event.data); } catch (e) { return; }
      if (!state.pending) return;
      if (frame.type === "done") {
        if (frame.error) state.pending.li.appendChild(el("p", "aria-error", frame.error));
        const view = state.pending;
        state.pending = null;
        busy(false);
        refreshSessions(true).then(() => chatDetails(view));
      } else {
        onFrame(state.pending, frame);
      }
    });
    ws.addEventListener("close", (event) => {
      const why = { 4401: "Sign in to chat.", 4403: "Chat needs the operator scope." }[event.code];
      if (state.pending) { state.pending.li.appendChild(el("p", "aria-error", why || "Connection closed.")); state.pending = null; busy(false); }
      else if (why) notice(why, "aria-error");
    });
    state.socket = ws;
    return ws;
  }

  function sendChat(text) {
    const ws = socket();
    state.pending = turnView();
    const frame = { type: "user", content: text };
    if (state.sessionId) frame.session_id = state.sessionId;
    const go = () => ws.send(JSON.stringify(frame));
    if (ws.readyState === 1) go(); else ws.addEventListener("open", go, { once: true });
  }

  // The finished chat turn's details (its agent runs, engine, the offline mark) from the stored message.
  async function chatDetails(view) {
    if (!window.AriaSession || !state.sessionId) return;
    const messages = await api("GET", `/sessions/${state.sessionId}/messages`).catch(() => []);
    const last = messages.filter((m) => m.role === "assistant").pop();
    if (last) window.AriaSession.turnDetails(view.li, last.metadata);
  }

  /* ---------- build / plan turns over REST ---------- */
  async function ensureSession() {
    if (state.sessionId) return state.sessionId;
    const s = await api("POST", "/sessions", { mode: state.mode, title: "" });
    state.sessionId = s.id;
    return s.id;
  }

  async function sendTurn(text) {
    const view = turnView();
    // Coordinator mode: its live states (orchestrator/turn_details.js) while the turn runs
    const live = state.mode === "coordinate" && window.AriaTurnDetails ? window.AriaTurnDetails.live(view.li) : null;
    try {
      const sid = await ensureSession();
      if (live) await live.ready;
      const out = await api("POST", `/sessions/${sid}/messages`, { content: text, mode: state.mode });
      if (live) live.finish(out.coordinator);
      (out.tool_calls || []).forEach((t) => onFrame(view, { type: "tool_call", name: t.name, args: t.args }));
      view.textNode().textContent = out.reply;
      if (out.questions && out.questions.length) {
        const ul = el("ul", "aria-questions");
        out.questions.forEach((q) => ul.appendChild(el("li", null, q)));
        view.li.appendChild(ul);
      }
      (out.delta_errors || []).forEach((e) => view.li.appendChild(el("p", "aria-error", e)));
      if (out.plan_card) planCard(view.li, out.plan_card);
      if (out.coordinator) coordinatorTurn(view.li, out.coordinator);
      if (window.AriaSession) {
        window.AriaSession.pendingCards(view.li, out.pending_calls);  // held changes: Confirm / Reject
        window.AriaSession.turnDetails(view.li, out.message && out.message.metadata);
      }
      if (out.drafts && out.drafts.length) refreshDrafts();
    } catch (err) {
      if (live) live.finish(null);
      view.li.appendChild(el("p", "aria-error", err.message));
    }
    busy(false);
    refreshSessions(false);
    if (state.mode === "build") refreshSession();
  }

  function coordinatorTurn(li, turn) {  // the compact line + expandable details (orchestrator/turn_details.js)
    if (window.AriaTurnDetails) window.AriaTurnDetails.attach(li, turn, "aria-coord-details");
    const drafted = (turn.actions || []).filter((a) => a.ok && a.plan_id && (a.type === "create_plan" || a.type === "delegate"));
    new Set(drafted.map((a) => a.plan_id)).forEach((id) => planCard(li, { component: "plan_card", props: { id, goal: `Plan #${id}` } }));
  }

  function planCard(li, card) {
    const node = li.appendChild(window.AriaRender.component(card.component, card.props));
    if (window.AriaPlanCard) window.AriaPlanCard.attach(node, card.props.id);  // live: approve, execute, answer
  }

  function busy(on) {
    state.busy = on;
    $("aria-send").disabled = on;
    $("aria-send").textContent = on ? "…" : "Send";
  }

  if (canOperate) $("aria-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("aria-text").value.trim();
    if (!text || state.busy) return;
    $("aria-text").value = "";
    say("user", text);
    busy(true);
    if (state.mode === "chat") sendChat(text); else sendTurn(text);
  });
  if (canOperate) $("aria-text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("aria-form").requestSubmit(); }
  });

  /* ---------- drawer, mode, history ---------- */
  function toggle(panelId, buttonId, force) {
    const panel = $(panelId);
    const open = force !== undefined ? force : panel.hidden;
    panel.hidden = !open;
    if (buttonId) $(buttonId).setAttribute("aria-expanded", String(open));
    return open;
  }
  $("aria-ask-toggle").addEventListener("click", () => {
    const open = toggle("aria-drawer", "aria-ask-toggle");
    if (open) { loadAccess(); if (canOperate) $("aria-text").focus(); else if (canReview) refreshDrafts(); }
  });
  $("aria-close").addEventListener("click", () => toggle("aria-drawer", "aria-ask-toggle", false));
  if (canOperate) $("aria-mode").addEventListener("change", async (event) => {
    state.mode = event.target.value;
    $("aria-drafts").hidden = state.mode !== "build";
    $("aria-build-settings").hidden = state.mode !== "build";
    if (state.sessionId && state.mode !== "chat") {
      try { await api("PATCH", `/sessions/${state.sessionId}`, { mode: state.mode }); } catch (e) { notice(e.message, "aria-error"); }
    }
    if (state.mode === "build") { refreshDrafts(); refreshSession(); }
  });
  if (canOperate) $("aria-new").addEventListener("click", () => {
    state.opening += 1;  // a session still loading is not shown in the new chat
    state.sessionId = null;
    if (state.socket) { state.socket.close(); state.socket = null; }
    log.replaceChildren();
    if (canOperate) $("aria-chips").replaceChildren();
    if (window.AriaDrafts) window.AriaDrafts.refresh({ sessionId: null });
    refreshSession();
  });
  if (canOperate) $("aria-history-toggle").addEventListener("click", () => { if (toggle("aria-history", "aria-history-toggle")) refreshSessions(false); });
  if (canOperate) $("aria-show-archived").addEventListener("change", () => refreshSessions(false));

  // Lists in flight ("show archived" toggled twice) may resolve out of order: the newest draws. A
  // finished chat still adopts its session from an older list (else its next turn starts another),
  // but only if no chat was started with "New" (or session opened) meanwhile.
  let sessionsLoad = 0;
  async function refreshSessions(adoptNewest) {
    if (!canOperate) return;  // no sessions without the operator scope (no History drawn)
    const mine = ++sessionsLoad;
    const opening = state.opening;
    let sessions = [];
    try {
      const archived = $("aria-show-archived").checked ? "" : "?archived=false";
      sessions = await api("GET", `/sessions${archived}`);
    } catch (e) { return; }
    if (adoptNewest && !state.sessionId && opening === state.opening && sessions.length) state.sessionId = sessions[0].id;
    if (mine !== sessionsLoad) return;
    const list = $("aria-session-list");
    list.replaceChildren();
    sessions.forEach((s) => {
      const li = el("li", s.id === state.sessionId ? "aria-current" : "");
      const open = el("button", "aria-link", s.title || `Session ${s.id}`);
      open.type = "button";
      open.addEventListener("click", () => openSession(s));
      li.appendChild(open);
      li.appendChild(el("span", "aria-badge", s.mode));
      const rename = el("button", null, "Rename");
      rename.type = "button";
      rename.addEventListener("click", async () => {
        const title = window.prompt("New title", s.title);
        if (title !== null) { await api("PATCH", `/sessions/${s.id}`, { title }); refreshSessions(false); }
      });
      const archive = el("button", null, s.archived ? "Unarchive" : "Archive");
      archive.type = "button";
      archive.addEventListener("click", async () => { await api("PATCH", `/sessions/${s.id}`, { archived: !s.archived }); refreshSessions(false); });
      li.append(rename, archive);
      list.appendChild(li);
    });
  }

  async function openSession(s) {
    const opening = ++state.opening;
    state.sessionId = s.id;
    state.mode = s.mode;
    $("aria-mode").value = s.mode;
    $("aria-drafts").hidden = s.mode !== "build";
    $("aria-build-settings").hidden = s.mode !== "build";
    if (state.socket) { state.socket.close(); state.socket = null; }
    log.replaceChildren();
    let messages, calls;
    try {
      messages = await api("GET", `/sessions/${s.id}/messages`);
      calls = window.AriaSession ? await window.AriaSession.sessionCalls(s.id) : [];
    } catch (err) {
      if (opening === state.opening) notice(`Could not open "${s.title || `Session ${s.id}`}": ${err.message}`);
      return;
    }
    if (opening !== state.opening) return;  // another session (or a new chat) was opened meanwhile
    messages.forEach((m) => {
      if (m.role === "system") { notice(m.content); return; }  // e.g. the decision on a held change
      const li = say(m.role === "user" ? "user" : "assistant", m.content);
      (m.metadata.tool_calls || []).forEach((t) => {
        const d = el("details", "aria-tool");
        d.appendChild(el("summary", null, t.name));
        d.appendChild(el("pre", null, JSON.stringify(t.args, null, 1)));
        if (t.result_summary) d.appendChild(el("p", "aria-tool-result", t.result_summary));
        li.appendChild(d);
      });
      if (m.metadata.plan_card) planCard(li, m.metadata.plan_card);
      if (m.metadata.coordinator) coordinatorTurn(li, m.metadata.coordinator);
      if (window.AriaSession && m.role === "assistant") {
        const held = m.metadata.pending_calls || [];
        window.AriaSession.pendingCards(li, calls.filter((c) => held.includes(c.id)));
        window.AriaSession.turnDetails(li, m.metadata);
      }
    });
    refreshAttachments();
    if (s.mode === "build") { refreshDrafts(); refreshSession(); }
    refreshSessions(false);
  }

  /* ---------- attachments ---------- */
  // Refreshes in flight (two uploads, a session opened) may resolve out of order: the newest is
  // drawn, once, and only for the session still open.
  let attachmentsLoad = 0;
  async function refreshAttachments() {
    const chips = $("aria-chips");
    if (!chips) return;
    const mine = ++attachmentsLoad;
    const sid = state.sessionId;
    if (!sid) { chips.replaceChildren(); return; }
    const items = await api("GET", `/sessions/${sid}/attachments`).catch(() => []);
    if (mine !== attachmentsLoad || sid !== state.sessionId) return;
    chips.replaceChildren();
    items.forEach((a) => {
      const chip = el("li", "aria-chip", `${a.name}${a.truncated ? " (truncated)" : ""}`);
      const x = el("button", null, "×");
      x.type = "button";
      x.setAttribute("aria-label", `Remove ${a.name}`);
      x.addEventListener("click", async () => { await api("DELETE", `/attachments/${a.id}`); refreshAttachments(); });
      chip.appendChild(x);
      chips.appendChild(chip);
    });
  }
  if (canOperate) $("aria-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    event.target.value = "";
    if (!file) return;
    try {
      const sid = await ensureSession();
      const form = new FormData();
      form.append("file", file);
      await api("POST", `/sessions/${sid}/attachments/upload`, form, true);
      refreshAttachments();
    } catch (e) { notice(e.message, "aria-error"); }
  });
  if (canOperate) $("aria-snippet").addEventListener("click", async () => {
    const text = window.prompt("Paste the text to add as context");
    if (!text) return;
    try {
      const sid = await ensureSession();
      await api("POST", `/sessions/${sid}/attachments`, { kind: "text_snippet", name: "snippet", text });
      refreshAttachments();
    } catch (e) { notice(e.message, "aria-error"); }
  });

  /* ---------- drafts (drawer_drafts.js) ---------- */
  function refreshDrafts() {
    if (!window.AriaDrafts) return Promise.resolve();
    return window.AriaDrafts.refresh({ sessionId: state.sessionId, ensureSession, notice });
  }

  /* ---------- this session's tool approval and skills (drawer_session.js) ---------- */
  function refreshSession() {
    if (!window.AriaSession) return Promise.resolve();
    return window.AriaSession.refresh({ sessionId: state.sessionId, ensureSession, notice });
  }

  /* ---------- access (settings: drawer_settings.js) ---------- */
  async function loadAccess() {
    if (window.AriaSession) window.AriaSession.engineBadge();  // "offline demo engine" in the header
    const badge = $("aria-access");
    if (badge.dataset.loaded) return;
    try {
      const me = await api("GET", drawer.dataset.meApi);
      badge.replaceChildren();
      (me.scopes.length ? me.scopes : ["no scope"]).forEach((s) => badge.appendChild(el("span", `aria-badge aria-scope-${s}`, s)));
      badge.dataset.loaded = "1";
    } catch (e) { badge.textContent = "signed out"; }
  }

  // an approval or publication elsewhere (admin, API, another tab) updates the badges live
  if (window.AriaEvents) window.AriaEvents.connect({ types: ["draft_updated"], onFrame: () => { if (state.mode === "build") refreshDrafts(); } });

  if (document.body.classList.contains("aria-open-drawer")) {
    toggle("aria-drawer", "aria-ask-toggle", true);
    loadAccess();
    if (!canOperate && canReview) refreshDrafts();
  }
})();
