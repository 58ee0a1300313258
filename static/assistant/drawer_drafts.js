/* Ask ARIA drawer, drafts panel: this session's drafts with their spec in an editor (an edit makes
   a new candidate: back to `draft`, as the API does), a new-draft form with a type selector, and for
   approvers the drafts that wait for them (approve or reject with a reason, publish, with the draft's
   earlier reviews to read first) through the same routes as the admin.
   Text only via textContent. */
(() => {
  "use strict";
  const drawer = document.getElementById("aria-drawer");
  if (!drawer || !window.Aria) return;
  const { el } = window.Aria;
  const API = drawer.dataset.assistantApi;
  const $ = (id) => document.getElementById(id);
  const api = (method, path, body) => window.Aria.api(method, API + path, body);
  const STEP = { draft: ["validate", "Validate"], validated: ["test", "Test"] };
  const BUSY = new Set(["validating", "testing", "reviewing", "publishing"]);
  const DRAFT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
  const TEMPLATES = {
    prompt: { agent: "investigator", text: "Always list 3 hypotheses. Finish by calling submit_rca.", variables: [] },
    skill: { instructions: "", triggers: [], runtime_mode: "auto" },
    tool: { description: "", entrypoint: "run", source: "def run(params):\n    return {}\n", input_schema: { type: "object" }, tests: [] },
    workflow: { description: "", steps: [] },
    mcp_server: { transport: "stdio", command: [], tools: [] },
  };
  const ctx = { sessionId: null, policy: undefined, scopes: null, notice: () => {} };
  const TIERS = ["read", "safe", "mutate", "gated"];

  // The last refusal per draft (e.g. a 403 naming the separation-of-duties reason), kept across re-renders.
  const refusals = new Map();
  // The decision reason being typed per draft: a live refresh (draft_updated) redraws the rows.
  const reasons = new Map();
  // Drafts whose reviews panel is open: a redraw opens it again (and reads the reviews afresh).
  const openReviews = new Set();

  function button(label, onClick) {
    const b = el("button", null, label);
    b.type = "button";
    b.addEventListener("click", async () => {
      b.disabled = true;
      const li = b.closest("li");
      const id = li ? li.dataset.draftId : "";
      try {
        await onClick();
        refusals.delete(id);
      } catch (e) {
        if (id) refusals.set(id, e.message); else ctx.notice(e.message, "aria-error");
      }
      refresh();
    });
    return b;
  }

  function reports(li, d) {
    [["validation", d.validation_report], ["tests", d.test_report]].forEach(([label, report]) => {
      if (!report || report.ok === undefined) return;
      const det = el("details", "aria-report");
      det.appendChild(el("summary", null, `${label}: ${report.ok ? "passed" : "failed"}`));
      (report.errors || []).forEach((e) => det.appendChild(el("p", "aria-error", e)));
      (report.cases || []).forEach((c) => det.appendChild(el("p", c.ok ? "aria-ok" : "aria-error", `${c.name}: ${c.ok ? "ok" : c.reason + " " + (c.error || "")}`)));
      if (report.error) det.appendChild(el("p", "aria-error", report.error));
      li.appendChild(det);
    });
  }

  function head(d, mine) {
    const li = el("li", "aria-draft");
    li.dataset.draftId = String(d.id);
    li.appendChild(el("span", null, `${d.type} ${d.name} v${d.version} `));
    li.appendChild(el("span", `aria-badge aria-status-${d.status}`, d.status.replace(/_/g, " ")));
    if (!mine) li.appendChild(el("span", "aria-note aria-draft-author", ` by ${d.owner_username}`));
    if (d.status_reason) li.appendChild(el("p", "aria-error aria-status-reason", d.status_reason));
    if (refusals.has(String(d.id))) li.appendChild(el("p", "aria-error aria-draft-error", refusals.get(String(d.id))));
    return li;
  }

  // The spec as JSON in a textarea; Save edit sends it back (PATCH) and the draft returns to `draft`.
  function editor(li, d) {
    const det = el("details", "aria-spec");
    det.appendChild(el("summary", null, "spec"));
    const area = el("textarea", "aria-spec-editor");
    area.rows = 8;
    area.spellcheck = false;
    area.value = JSON.stringify(d.spec, null, 2);
    det.appendChild(area);
    det.appendChild(button("Save edit", async () => {
      let spec;
      try { spec = JSON.parse(area.value); } catch (e) { throw new Error(`spec is not valid JSON: ${e.message}`); }
      await api("PATCH", `/drafts/${d.id}`, { spec });
    }));
    li.appendChild(det);
  }

  function readOnlySpec(li, d) {
    const det = el("details", "aria-spec");
    det.appendChild(el("summary", null, "spec"));
    det.appendChild(el("pre", "aria-spec-view", JSON.stringify(d.spec, null, 2)));
    li.appendChild(det);
  }

  function mineRow(d) {
    const li = head(d, true);
    if (STEP[d.status]) li.appendChild(button(STEP[d.status][1], () => api("POST", `/drafts/${d.id}/${STEP[d.status][0]}`)));
    if (d.status === "tested") {
      li.appendChild(el("span", "aria-note", " waiting for approval"));
      if (ctx.policy && ctx.policy !== "manual") {
        li.appendChild(button("Request agent review", () => api("POST", `/drafts/${d.id}/review`)));
      }
    }
    if (!BUSY.has(d.status) && d.status !== "published") {
      // Never published and not mid-step: the author may throw it away (the server refuses, with
      // the reason, a draft that was published once and edited since).
      li.appendChild(button("Discard", async () => {
        if (window.confirm(`Discard ${d.type} "${d.name}" v${d.version}? This cannot be undone.`)) {
          await api("DELETE", `/drafts/${d.id}`);
        }
      }));
    }
    editor(li, d);
    reports(li, d);
    return li;
  }

  // MCP server drafts: the approver gives each tool its tier (preselected: what the spec declares, else
  // mutate); what the registry uses once published. Returns a reader of the choices.
  function tierPicker(li, d) {
    const tools = (d.spec.tools && d.spec.tools.length ? d.spec.tools : (d.test_report.discovered || []));
    const box = el("fieldset", "aria-tiers");
    box.appendChild(el("legend", null, "Tool tiers (read · safe run freely; mutate asks; gated always asks)"));
    const picks = tools.map((t) => {
      const label = el("label", "aria-tier", `${t.name} `);
      const pick = el("select", "aria-tier-pick");
      pick.name = t.name;
      TIERS.forEach((tier) => { const o = el("option", null, tier); o.value = tier; pick.appendChild(o); });
      pick.value = TIERS.includes(t.tier) ? t.tier : "mutate";
      label.appendChild(pick);
      box.appendChild(label);
      return pick;
    });
    li.appendChild(box);
    return () => picks.reduce((chosen, p) => Object.assign(chosen, { [p.name]: p.value }), {});
  }

  // The reason beside Approve / Reject (a rejection needs one: the server's 422 is shown in the row).
  function reasonField(li, d) {
    const input = el("input", "aria-decision-reason");
    input.type = "text";
    input.maxLength = 4000;
    input.placeholder = "Reason (required to reject)";
    input.setAttribute("aria-label", `Reason for ${d.type} ${d.name} v${d.version}`);
    input.dataset.draftId = String(d.id);
    input.value = reasons.get(String(d.id)) || "";
    input.addEventListener("input", () => { reasons.set(String(d.id), input.value); });
    li.appendChild(input);
    return () => input.value.trim();
  }

  // One review: what was decided, by whom, on which candidate, when, and why. A review cleared by an
  // edit was of an earlier candidate: still worth reading (why it was rejected), marked as such.
  function reviewLine(r) {
    const who = r.reviewer_username || (r.kind === "agent" ? "the agent reviewer" : "a removed user");
    const line = el("li", `aria-review-entry aria-review-${r.decision}`);
    line.appendChild(el("span", null, `${r.decision === "failed" ? "failed closed" : r.decision} by ${who} · v${r.candidate_version} · ${window.Aria.fmtDateTime(r.created)}`));
    if (r.cleared) line.appendChild(el("span", "aria-note", " (an earlier candidate: edited since)"));
    if (r.reason) line.appendChild(el("p", "aria-review-reason", r.reason));
    return line;
  }

  // The draft's reviews (GET /drafts/{id}/reviews, which an approver reads as the draft itself), read
  // when opened, so the queue's refresh stays one request.
  function reviewHistory(li, d) {
    const id = String(d.id);
    const det = el("details", "aria-reviews");
    det.appendChild(el("summary", null, "reviews"));
    const list = el("ul", "aria-review-history");
    det.appendChild(list);
    det.addEventListener("toggle", async () => {
      if (!det.open) { openReviews.delete(id); return; }
      openReviews.add(id);
      try {
        const rows = await api("GET", `/drafts/${d.id}/reviews`);
        list.replaceChildren(...(rows.length ? rows.map(reviewLine) : [el("li", "aria-note", "No reviews yet.")]));
      } catch (e) {
        list.replaceChildren(el("li", "aria-error", e.message));
      }
    });
    det.open = openReviews.has(id);  // the toggle event reads them again
    li.appendChild(det);
  }

  function reviewRow(d) {
    const li = head(d, false);
    readOnlySpec(li, d);
    reports(li, d);
    reviewHistory(li, d);
    if (d.status === "tested") {  // draft_approve and draft_reject both take a tested draft only
      const tiers = d.type === "mcp_server" ? tierPicker(li, d) : null;
      const reason = reasonField(li, d);
      li.appendChild(button("Approve", async () => {
        // candidate_hash: the candidate shown here; one the author replaced since is refused (409), not approved unseen
        await api("POST", `/drafts/${d.id}/approve`, { reason: reason(), tool_tiers: tiers ? tiers() : null, candidate_hash: d.content_hash });
        reasons.delete(String(d.id));
      }));
      li.appendChild(button("Reject", async () => {
        await api("POST", `/drafts/${d.id}/reject`, { reason: reason() });
        reasons.delete(String(d.id));
      }));
    }
    if (d.status === "approved" || d.status === "publish_failed") {
      // can_publish / publish_refusal: the publish service's own checks for this user (e.g. the approver
      // who approved may not publish): the button only when it would be allowed, else who may.
      if (d.can_publish) {
        li.appendChild(button(d.status === "approved" ? "Publish" : "Retry publish", () => api("POST", `/drafts/${d.id}/publish`)));
      } else if (d.publish_refusal) {
        li.appendChild(el("p", "aria-note aria-publish-note", d.publish_refusal));
      }
    }
    return li;
  }

  async function scopes() {
    if (ctx.scopes === null) {
      ctx.scopes = await window.Aria.api("GET", drawer.dataset.meApi).then((me) => me.scopes).catch(() => []);
    }
    return ctx.scopes;
  }

  // Refreshes in flight (a click, draft_updated frames) may resolve out of order: the newest wins.
  let latest = 0;
  async function refresh() {
    const current = ++latest;
    const list = $("aria-draft-list");
    const review = $("aria-review-list");
    if (ctx.policy === undefined) {
      ctx.policy = await api("GET", "/config").then((c) => c.approval_policy).catch(() => "manual");
    }
    if (list) {  // this session's drafts, and those in no session: drawn for operators only (drawer.html)
      const [mine, loose] = await Promise.all([
        ctx.sessionId ? api("GET", `/drafts?session_id=${ctx.sessionId}`).catch(() => []) : [],
        api("GET", "/drafts?without_session=true").catch(() => []),
      ]);
      if (current !== latest) return;
      list.replaceChildren(...mine.map(mineRow));
      $("aria-draft-loose-list").replaceChildren(...loose.map(mineRow));
      $("aria-draft-loose").hidden = !loose.length;
    }
    const approver = (await scopes()).some((s) => s === "approver" || s === "admin");
    $("aria-review").hidden = !approver;
    if (approver) {
      const waiting = await api("GET", "/drafts?review=true").catch(() => []);
      if (current !== latest) return;
      const focused = document.activeElement;
      const typingIn = focused && review.contains(focused) && focused.classList.contains("aria-decision-reason") ? focused.dataset.draftId : null;
      review.replaceChildren(...waiting.map(reviewRow));
      if (typingIn) {  // a live redraw never takes the reason field from under the approver's fingers
        const again = review.querySelector(`.aria-decision-reason[data-draft-id="${typingIn}"]`);
        if (again) { again.focus(); again.setSelectionRange(again.value.length, again.value.length); }
      }
      if (!waiting.length) review.appendChild(el("li", "aria-note", "Nothing waits for your approval."));
    }
  }

  // The new-draft form is drawn for operators only (drawer.html).
  const typeSelect = $("aria-draft-type");
  const specArea = $("aria-draft-spec");
  const fillTemplate = () => { specArea.value = JSON.stringify(TEMPLATES[typeSelect.value] || {}, null, 2); };
  if (typeSelect) typeSelect.addEventListener("change", fillTemplate);
  if (typeSelect) fillTemplate();
  if ($("aria-draft-new")) $("aria-draft-new").addEventListener("submit", async (event) => {
    event.preventDefault();
    const note = $("aria-draft-new-status");
    note.textContent = "";
    const name = $("aria-draft-name").value.trim();
    if (!DRAFT_NAME.test(name)) {  // the server's rule (assistant/validators.py DRAFT_NAME), said in words
      note.textContent = "Name: letters, digits, _ or - (starting with a letter or digit), up to 100 characters.";
      return;
    }
    let spec;
    try { spec = JSON.parse(specArea.value); } catch (e) { note.textContent = `Spec is not valid JSON: ${e.message}`; return; }
    try {
      const sessionId = ctx.ensureSession ? await ctx.ensureSession() : ctx.sessionId;
      await api("POST", "/drafts", { type: typeSelect.value, name, spec, session_id: sessionId });
      ctx.sessionId = sessionId;
      $("aria-draft-name").value = "";
    } catch (e) { note.textContent = e.message; }
    refresh();
  });

  window.AriaDrafts = Object.freeze({
    refresh(options) {
      Object.assign(ctx, options || {});
      return refresh();
    },
  });
})();
