/*
 * The intent workbench page (/assistant/workbench/): type what to create → POST intent/resolve
 * (intent + slots, both editable) → POST plans (the operation and the draft it would create) →
 * confirm → POST plans/execute → GET operations/{id} (the stored result). With a session chosen,
 * the session-scoped routes (/sessions/{id}/…) are used and the session's drafts are listed; a
 * planned operation still waiting for its confirmation (plans/latest) is offered again on load.
 * Every call goes through Aria.api; errors show the server's message (field named).
 */
(() => {
  "use strict";
  const dataEl = document.getElementById("wb-page-data");
  if (!dataEl) return;
  const data = JSON.parse(dataEl.textContent);
  const { el, api, fmtDateTime } = window.Aria;
  const $ = (id) => document.getElementById(id);

  let sessionId = "";
  let operation = null;  // the operation on screen (planned, then executed/failed)
  // Loads in flight may resolve after the user switched session (or after a newer load): the newest
  // wins, so the previous session's operation or drafts never appear; the user's own plan counts as newest.
  const latest = { plan: 0, drafts: 0 };

  const base = () => (sessionId ? `${data.api}/sessions/${encodeURIComponent(sessionId)}` : data.api);

  function showError(err) {
    const box = $("wb-error");
    box.textContent = err ? (err.message || String(err)) : "";
    box.hidden = !err;
  }
  async function call(method, path, body) {
    showError(null);
    try {
      return await api(method, `${base()}${path}`, body);
    } catch (err) {
      showError(err);
      throw err;
    }
  }
  function setBadge(node, status) {
    node.textContent = status || "";
    node.setAttribute("data-status", status || "");
  }
  function pre(value) { return el("pre", null, typeof value === "string" ? value : JSON.stringify(value, null, 2)); }

  // --- 1 · sessions ---------------------------------------------------------------------------
  async function loadSessions() {
    const select = $("wb-session");
    const wanted = new URLSearchParams(window.location.search).get("session") || "";
    try {
      const sessions = await api("GET", `${data.api}/sessions?archived=false`);
      sessions.forEach((s) => {
        const option = el("option", null, `#${s.id} ${s.title || "(untitled)"} · ${s.mode}`);
        option.value = String(s.id);
        select.appendChild(option);
      });
    } catch (err) {
      showError(err);
    }
    if (wanted && select.querySelector(`option[value="${CSS.escape(wanted)}"]`)) select.value = wanted;
    await chooseSession(select.value);
  }
  async function chooseSession(value) {
    sessionId = value;
    operation = null;
    $("wb-planned").hidden = true;
    $("wb-operation").hidden = true;
    await Promise.all([resumeLatest(), loadDrafts()]);
  }

  // --- 2 · resolve ----------------------------------------------------------------------------
  function fillIntents() {
    const select = $("wb-intent");
    data.intents.forEach((name) => {
      const option = el("option", null, name);
      option.value = name;
      select.appendChild(option);
    });
  }
  function showResolved(resolved) {
    $("wb-resolved").hidden = false;
    $("wb-intent").value = resolved.intent || "";
    $("wb-confidence").textContent = `${Math.round((resolved.confidence || 0) * 100)}%`;
    $("wb-slots").value = JSON.stringify(resolved.slots || {}, null, 2);
    const note = $("wb-intent-note");
    note.className = "wb-note";
    if (!resolved.intent) {
      note.textContent = "No intent recognised: pick one, or rephrase (name a tool, skill, prompt, workflow or MCP server).";
      note.classList.add("wb-warn");
    } else if (resolved.disabled) {
      note.textContent = `${resolved.intent} is disabled by the administrator: planning it will be refused.`;
      note.classList.add("wb-warn");
    } else {
      note.textContent = "Check the intent and the slots, then plan.";
    }
    note.hidden = false;
    $("wb-resolved").setAttribute("data-intent", resolved.intent || "");
  }
  async function onResolve(event) {
    event.preventDefault();
    const text = $("wb-text").value.trim();
    if (!text) { showError(new Error("text: say what you want to create.")); return; }
    const resolved = await call("POST", "/intent/resolve", { text }).catch(() => null);
    if (resolved) showResolved(resolved);
  }

  // --- 3 · plan -------------------------------------------------------------------------------
  function readSlots() {
    const raw = $("wb-slots").value.trim();
    if (!raw) return {};
    let slots;
    try { slots = JSON.parse(raw); } catch (err) { slots = null; }
    if (!slots || typeof slots !== "object" || Array.isArray(slots)) {
      showError(new Error("slots: must be a JSON object, e.g. {\"name\": \"tidy_tools\"}."));
      $("wb-slots").focus();
      return null;
    }
    return slots;
  }
  function showPlan(op, note) {
    operation = op;
    $("wb-planned").hidden = false;
    $("wb-planned").setAttribute("data-operation-id", String(op.id));
    setBadge($("wb-plan-status"), op.status);
    $("wb-plan-note").textContent = note || `Operation #${op.id}: ${op.intent}. Nothing is created until you confirm.`;
    const dl = $("wb-preview");
    dl.textContent = "";
    const preview = op.preview || {};
    [["Creates", `${preview.type || "?"} draft`], ["Name", preview.name || ""]].forEach(([k, v]) => {
      dl.appendChild(el("dt", null, k));
      dl.appendChild(el("dd", null, v));
    });
    dl.appendChild(el("dt", null, "Spec"));
    const spec = el("dd");
    spec.appendChild(pre(preview.spec || {}));
    dl.appendChild(spec);
    const planned = op.status === "planned";
    $("wb-confirm").checked = false;
    $("wb-confirm").disabled = !planned;
    $("wb-execute").disabled = true;
  }
  // A refusal naming the slots (e.g. `slots.name: a draft's name has at most 100 characters`) or the
  // text marks that box and puts the cursor in it; the message itself is in #wb-error.
  function markInvalid(err) {
    ["wb-slots", "wb-text"].forEach((id) => $(id).removeAttribute("aria-invalid"));
    const field = (err && err.field) || "";
    const box = field === "slots" || field.startsWith("slots.") ? $("wb-slots") : field === "text" ? $("wb-text") : null;
    if (!box) return;
    box.setAttribute("aria-invalid", "true");
    box.focus();
  }
  async function onPlan(event) {
    event.preventDefault();
    const intent = $("wb-intent").value;
    if (!intent) { showError(new Error("intent: pick what to create.")); $("wb-intent").focus(); return; }
    const slots = readSlots();
    if (slots === null) return;
    const sentFor = sessionId;
    const mine = ++latest.plan;
    const op = await call("POST", "/plans", { intent, slots, text: $("wb-text").value.trim() }).catch((err) => { markInvalid(err); return null; });
    if (op) {
      plannedIn.add(sentFor).add("");  // waits in its session (and, for the no-session view, among all)
      // The user switched sessions while it was on its way: it is offered there, not drawn here.
      if (mine !== latest.plan || sentFor !== sessionId) return;
      markInvalid(null);
      $("wb-operation").hidden = true;
      showPlan(op);
    }
  }
  // The view says in which scopes ("" = no session) an operation waits; elsewhere plans/latest would
  // answer 404 (nothing waiting), which the browser logs as a console error, so it is not asked.
  const plannedIn = new Set(data.planned_in || []);
  async function resumeLatest() {
    const mine = ++latest.plan;
    if (!plannedIn.has(sessionId)) return;
    try {
      const op = await api("GET", `${base()}/plans/latest`);
      if (mine !== latest.plan) return;
      showPlan(op, `Operation #${op.id} (${op.intent}, planned ${fmtDateTime(op.created)}) still waits for your confirmation.`);
    } catch (err) {
      if (mine === latest.plan && err.status !== 404) showError(err);  // 404: nothing waiting
    }
  }

  // --- 4 · execute and result -----------------------------------------------------------------
  function showResult(op) {
    operation = op;
    $("wb-operation").hidden = false;
    $("wb-operation").setAttribute("data-status", op.status);
    setBadge($("wb-op-status"), op.status);
    setBadge($("wb-plan-status"), op.status);
    $("wb-plan-note").textContent = `Operation #${op.id}: ${op.intent}, ${op.status}.`;
    $("wb-confirm").disabled = true;
    $("wb-execute").disabled = true;
    const host = $("wb-result");
    host.textContent = "";
    const when = op.executed_at ? ` at ${fmtDateTime(op.executed_at)}` : "";
    if (op.status === "executed" && op.result && op.result.draft_id) {
      const p = el("p", "wb-created", `Operation #${op.id} executed${when}: draft #${op.result.draft_id} created (status draft). `);
      const link = el("a", null, "Open Ask ARIA");
      link.href = "/assistant/";
      p.appendChild(link);
      const where = op.session_id ? `session #${op.session_id}` : "“Your drafts outside a session”";
      p.appendChild(document.createTextNode(` and switch to Build: the draft is under Drafts (${where}); validate, test and send it for approval there.`));
      host.appendChild(p);
    } else if (op.status === "failed") {
      host.appendChild(el("p", "wb-error", `Operation #${op.id} failed${when}: ${op.error || "no reason recorded"}`));
    } else {
      host.appendChild(el("p", "wb-note", `Operation #${op.id} is ${op.status}.`));
    }
    if (op.result && Object.keys(op.result).length) host.appendChild(pre(op.result));
  }
  async function onExecute(event) {
    event.preventDefault();
    if (!operation || !$("wb-confirm").checked) return;
    $("wb-execute").disabled = true;
    const sentFor = sessionId;
    const executed = await call("POST", "/plans/execute", { plan_id: operation.id, confirm: true }).catch(() => null);
    if (sentFor !== sessionId) return;  // the user switched sessions meanwhile: its drafts show there
    if (!executed) { $("wb-execute").disabled = !$("wb-confirm").checked; return; }
    // The stored operation is the record: read it back rather than trusting the reply alone.
    const stored = await call("GET", `/operations/${encodeURIComponent(executed.id)}`).catch(() => executed);
    if (sentFor !== sessionId) return;
    latest.plan += 1;
    showResult(stored);
    loadDrafts();
  }

  // --- the session's drafts -------------------------------------------------------------------
  async function loadDrafts() {
    const mine = ++latest.drafts;
    const panel = $("wb-drafts-panel");
    panel.hidden = !sessionId;
    if (!sessionId) return;
    const list = $("wb-drafts");
    let drafts = [];
    try {
      drafts = await api("GET", `${base()}/drafts`);
    } catch (err) {
      if (mine === latest.drafts) showError(err);
    }
    if (mine !== latest.drafts) return;
    list.textContent = "";
    drafts.forEach((d) => {
      const li = el("li", "wb-draft", `#${d.id} ${d.type} ${d.name} v${d.version} · ${d.status}`);
      li.setAttribute("data-draft-id", String(d.id));
      list.appendChild(li);
    });
    $("wb-drafts-empty").hidden = drafts.length > 0;
  }

  fillIntents();
  $("wb-resolve-form").addEventListener("submit", onResolve);
  $("wb-plan-form").addEventListener("submit", onPlan);
  $("wb-execute-form").addEventListener("submit", onExecute);
  $("wb-confirm").addEventListener("change", () => { $("wb-execute").disabled = !$("wb-confirm").checked || !operation || operation.status !== "planned"; });
  $("wb-session").addEventListener("change", (event) => { chooseSession(event.target.value); });
  loadSessions();
})();
