/* The Shift page: the logbook per cell (write, list, search, text attachments) and the shift
 * handover (draft by the agent → edit → sign by the outgoing operator → acknowledge by the
 * incoming one), kept live over /ws/events (logbook_entry_created, handover_updated).
 * DOM is built with createElement/textContent only (entries and reports are untrusted text). */
(() => {
  "use strict";
  const configNode = document.getElementById("shift-config");
  if (!configNode) return;
  const config = JSON.parse(configNode.textContent);
  const API = config.api;

  function $(id) { return document.getElementById(id); }

  const { el, api, fmtDateTime } = window.Aria;

  function option(value, label) {
    const o = el("option", "", label);
    o.value = value;
    return o;
  }

  function query(params) {
    const parts = [];
    Object.keys(params).forEach((key) => {
      const value = params[key];
      if (value !== "" && value !== null && value !== undefined) parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
    });
    return parts.length ? `?${parts.join("&")}` : "";
  }

  const msg = $("shift-msg");
  function say(text, kind) {
    msg.textContent = text || "";
    msg.hidden = !text;
    msg.setAttribute("data-kind", kind || "error");
  }

  $("shift-now").textContent = `now: ${config.shift.shift} shift of ${config.shift.date} · next: ${config.shift.next}`;
  if (!config.can_read) return;

  /* ---- logbook ---------------------------------------------------------------------------- */

  const cellSelect = $("logbook-cell");
  const filterSelect = $("logbook-filter");
  config.cells.forEach((cell) => {
    cellSelect.appendChild(option(cell.id, `${cell.tag} · ${cell.name}`));
    filterSelect.appendChild(option(cell.id, cell.tag));
  });
  config.categories.forEach((c) => { $("logbook-category").appendChild(option(c.value, c.label)); });
  config.media_types.forEach((t) => { $("logbook-attachment-type").appendChild(option(t, t)); });
  $("logbook-form").hidden = !config.can_write || config.cells.length === 0;

  const shownAttachments = {};  // attachment id → its text, kept open across live re-renders

  function showAttachment(holder, id, name, text) {
    const pre = el("pre", "logbook-attachment-text", text);
    pre.setAttribute("data-attachment-id", id);
    pre.setAttribute("data-attachment", name);
    holder.appendChild(pre);
  }

  function attachmentButton(att, holder) {
    const b = el("button", "", `${att.name} (${att.size} B)`);
    b.type = "button";
    b.title = "Show the attached text";
    b.addEventListener("click", async () => {
      const selector = `.logbook-attachment-text[data-attachment-id="${att.id}"]`;
      const shown = holder.querySelector(selector);
      if (shown) { shown.remove(); delete shownAttachments[att.id]; return; }
      let data;
      try {
        data = await api("GET", API.attachment.replace("{id}", att.id));
      } catch (err) {
        say(err.message);
        return;
      }
      shownAttachments[att.id] = data.text;
      const current = document.querySelector(`.logbook-entry[data-entry-id="${data.entry_id}"]`) || holder;
      if (!current.querySelector(selector)) showAttachment(current, att.id, data.name, data.text);
    });
    return b;
  }

  // The author adds a text to their own entry later (the logbook is append-only: never an edit).
  // What they typed survives the list's live reloads (another operator's entry re-renders it).
  const attachDrafts = {};  // entry id → {open, name, type, text}
  function attachLater(entry) {
    const draft = attachDrafts[entry.id] || (attachDrafts[entry.id] = { open: false, name: "", type: "", text: "" });
    const box = el("details", "logbook-attach-later");
    box.appendChild(el("summary", null, "Attach a text"));
    const name = el("input");
    name.maxLength = 120;
    name.placeholder = "readings.csv";
    name.setAttribute("aria-label", "Attachment name");
    const type = el("select");
    type.setAttribute("aria-label", "Attachment type");
    config.media_types.forEach((t) => { type.appendChild(option(t, t)); });
    const text = el("textarea");
    text.rows = 3;
    text.setAttribute("aria-label", "Attachment text");
    const go = el("button", "logbook-attach-submit", "Attach");
    go.type = "button";
    go.addEventListener("click", async () => {
      if (!text.value.trim()) { say("Attachment: write or load the text first."); return; }
      go.disabled = true;
      try {
        await api("POST", `${API.logbook}/${encodeURIComponent(entry.id)}/attachments`,
          { name: name.value.trim() || "note.txt", media_type: type.value, text: text.value });
        delete attachDrafts[entry.id];
        say("Attachment added.", "ok");
        await loadLogbook();
      } catch (err) {
        say(err.message);
      }
      go.disabled = false;
    });
    [name, type, text, go].forEach((node) => { box.appendChild(node); });
    name.value = draft.name;
    if (draft.type) type.value = draft.type;
    text.value = draft.text;
    box.open = draft.open;
    box.addEventListener("toggle", () => { draft.open = box.open; });
    box.addEventListener("input", () => { Object.assign(draft, { name: name.value, type: type.value, text: text.value }); });
    box.addEventListener("change", () => { draft.type = type.value; });
    return box;
  }

  function entryNode(entry) {
    const li = el("li", "logbook-entry");
    li.setAttribute("data-entry-id", entry.id);
    const head = el("div", "logbook-head");
    head.appendChild(el("span", "logbook-cell", entry.cell_tag));
    head.appendChild(el("span", "logbook-time", fmtDateTime(entry.time)));
    head.appendChild(el("span", "logbook-author", entry.author));
    head.appendChild(el("span", "logbook-category", entry.category || "note"));
    head.appendChild(el("span", "logbook-shift", entry.shift));
    li.appendChild(head);
    li.appendChild(el("div", "logbook-text", entry.text));
    if (entry.attachments.length) {
      const box = el("div", "logbook-attachments");
      entry.attachments.forEach((att) => { box.appendChild(attachmentButton(att, li)); });
      li.appendChild(box);
      entry.attachments.forEach((att) => {
        if (shownAttachments[att.id] !== undefined) showAttachment(li, att.id, att.name, shownAttachments[att.id]);
      });
    }
    if (entry.can_attach && config.can_write) li.appendChild(attachLater(entry));
    return li;
  }

  // Loads in flight (a search, a filter, a live frame) may resolve out of order: the newest wins.
  const latest = { logbook: 0, handovers: 0, detail: 0 };

  async function loadLogbook() {
    const url = API.logbook + query({ cell_id: filterSelect.value, q: $("logbook-search").value.trim(), limit: 30 });
    const mine = ++latest.logbook;
    let data;
    try {
      data = await api("GET", url);
    } catch (err) {
      if (mine === latest.logbook) say(err.message);
      return;
    }
    if (mine !== latest.logbook) return;
    const list = $("logbook-list");
    list.textContent = "";
    data.items.forEach((entry) => { list.appendChild(entryNode(entry)); });
    $("logbook-empty").hidden = data.items.length > 0;
  }

  $("logbook-attachment-file").addEventListener("change", (event) => {
    const file = event.target.files && event.target.files[0];
    if (!file) return;
    const reader = new FileReader();
    reader.onload = () => {
      $("logbook-attachment-text").value = String(reader.result || "");
      if (!$("logbook-attachment-name").value) $("logbook-attachment-name").value = file.name;
      if (/\.csv$/i.test(file.name)) $("logbook-attachment-type").value = "text/csv";
      else if (/\.json$/i.test(file.name)) $("logbook-attachment-type").value = "application/json";
      else if (/\.md$/i.test(file.name)) $("logbook-attachment-type").value = "text/markdown";
    };
    reader.readAsText(file);
  });

  $("logbook-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      cell_id: Number(cellSelect.value),
      category: $("logbook-category").value,
      text: $("logbook-text").value,
      attachments: []
    };
    const attText = $("logbook-attachment-text").value;
    if (attText.trim()) {
      body.attachments.push({
        name: $("logbook-attachment-name").value.trim() || "note.txt",
        media_type: $("logbook-attachment-type").value,
        text: attText
      });
    }
    const submit = $("logbook-submit");
    submit.disabled = true;
    say("");
    try {
      await api("POST", API.logbook, body);
      $("logbook-text").value = "";
      $("logbook-attachment-text").value = "";
      $("logbook-attachment-name").value = "";
      $("logbook-attachment-file").value = "";
      $("logbook-attach").open = false;
      say("Logbook entry written.", "ok");
      await loadLogbook();
    } catch (err) {
      say(err.message);
    }
    submit.disabled = false;
  });

  filterSelect.addEventListener("change", loadLogbook);
  let searchTimer = null;
  $("logbook-search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(loadLogbook, 250);
  });

  /* ---- handover --------------------------------------------------------------------------- */

  let selected = null;   // the handover shown in the detail pane
  let dirty = false;     // the outgoing operator has unsaved edits
  const bodyBox = $("handover-body");
  $("handover-draft").hidden = !config.can_write;

  function label(h) { return `${h.date} ${h.shift} · ${h.outgoing}`; }

  function showDetail(h) {
    latest.detail += 1;  // a reload sent before this is older: it is not shown over it
    selected = h;
    dirty = false;
    $("handover-detail").hidden = false;
    $("handover-detail").setAttribute("data-handover-id", h.id);
    $("handover-heading").textContent = `Handover ${label(h)}`;
    const status = $("handover-status");
    status.textContent = h.status;
    status.setAttribute("data-status", h.status);
    $("handover-offline").hidden = !h.drafted_offline;
    let meta = `Period ${fmtDateTime(h.period_start)} – ${fmtDateTime(h.period_end)} · revision ${h.revision}`;
    if (h.signed_at) meta += ` · signed by ${h.outgoing} ${fmtDateTime(h.signed_at)}`;
    if (h.acknowledged_at) meta += ` · acknowledged by ${h.incoming} ${fmtDateTime(h.acknowledged_at)}`;
    if (h.acknowledge_comment) meta += ` — “${h.acknowledge_comment}”`;
    $("handover-meta").textContent = meta;
    bodyBox.value = h.report;
    bodyBox.readOnly = !h.can_edit;
    $("handover-save").hidden = !h.can_edit;
    $("handover-sign").hidden = !h.can_sign;
    $("handover-ack").hidden = !h.can_acknowledge || !config.can_write;
    $("handover-ack-label").hidden = $("handover-ack").hidden;
    document.querySelectorAll(".handover-item").forEach((item) => {
      item.setAttribute("aria-current", String(Number(item.getAttribute("data-handover-id")) === h.id));
    });
  }

  // `live`: a reload for a bus frame, dropped when the user started editing while it was on its way.
  async function openHandover(id, live) {
    const mine = ++latest.detail;
    let handover;
    try {
      handover = await api("GET", API.handover.replace("{id}", id));
    } catch (err) {
      if (mine === latest.detail) say(err.message);
      return;
    }
    if (mine !== latest.detail || (live && dirty)) return;
    showDetail(handover);
  }

  function itemNode(h) {
    const li = el("li", "handover-item");
    li.setAttribute("data-handover-id", h.id);
    li.setAttribute("aria-current", String(selected !== null && selected.id === h.id));
    const open = el("button", "handover-open", label(h));
    open.type = "button";
    open.addEventListener("click", () => {
      if (dirty && !window.confirm("Discard your unsaved edits?")) return;
      openHandover(h.id);
    });
    li.appendChild(open);
    const status = el("span", "handover-status", h.status);
    status.setAttribute("data-status", h.status);
    li.appendChild(status);
    // Acknowledging needs the operator scope (as its button does): an approver is not asked to.
    if (h.can_acknowledge && config.can_write) li.appendChild(el("span", "handover-hint", "waiting for your acknowledgement"));
    return li;
  }

  async function loadHandovers() {
    const url = API.handovers + query({ q: $("handover-search").value.trim(), limit: 20 });
    const mine = ++latest.handovers;
    let data;
    try {
      data = await api("GET", url);
    } catch (err) {
      if (mine === latest.handovers) say(err.message);
      return;
    }
    if (mine !== latest.handovers) return;
    const list = $("handover-list");
    list.textContent = "";
    data.items.forEach((h) => { list.appendChild(itemNode(h)); });
    $("handover-empty").hidden = data.items.length > 0;
  }

  async function act(button, work) {
    button.disabled = true;
    say("");
    try {
      showDetail(await work());
      await loadHandovers();
    } catch (err) {
      say(err.message);
    }
    button.disabled = false;
  }

  function save() {
    return api("PATCH", API.handover.replace("{id}", selected.id), { report: bodyBox.value });
  }

  bodyBox.addEventListener("input", () => { dirty = true; });

  $("handover-draft").addEventListener("click", async () => {
    const button = $("handover-draft");
    button.disabled = true;
    say("Drafting the handover from the shift's alarms, work orders, limit changes and logbook…", "ok");
    try {
      const h = await api("POST", API.handovers, {});
      say("Draft ready: check it, edit and sign.", "ok");
      showDetail(h);
      await loadHandovers();
    } catch (err) {
      say(err.message);
    }
    button.disabled = false;
  });

  $("handover-save").addEventListener("click", async () => {
    await act($("handover-save"), save);
    if (!msg.hidden && msg.getAttribute("data-kind") === "error") return;
    say("Saved.", "ok");
  });

  $("handover-sign").addEventListener("click", () => {
    act($("handover-sign"), async () => {
      if (dirty) await save();
      return api("POST", `${API.handover.replace("{id}", selected.id)}/sign`);
    });
  });


  $("handover-ack").addEventListener("click", () => {
    act($("handover-ack"), () => api("POST", `${API.handover.replace("{id}", selected.id)}/acknowledge`, { comment: $("handover-ack-comment").value }));
  });

  let handoverTimer = null;
  $("handover-search").addEventListener("input", () => {
    clearTimeout(handoverTimer);
    handoverTimer = setTimeout(loadHandovers, 250);
  });

  /* ---- live updates ----------------------------------------------------------------------- */

  const pending = {};
  function soon(name, fn) {
    clearTimeout(pending[name]);
    pending[name] = setTimeout(fn, 150);
  }

  if (window.AriaEvents) {
    window.AriaEvents.connect({
      after: config.latest_event_id,
      types: ["logbook_entry_created", "handover_updated"],
      onStatus: (status) => {
        const pill = $("shift-ws-status");
        pill.textContent = status;
        pill.setAttribute("data-status", status);
      },
      onFrame: (frame) => {
        if (frame.type === "logbook_entry_created") { soon("logbook", loadLogbook); return; }
        soon("handovers", loadHandovers);
        if (selected && frame.handover_id === selected.id && !dirty) soon("detail", () => { openHandover(selected.id, true); });
      }
    });
  }

  loadLogbook();
  loadHandovers();
})();
