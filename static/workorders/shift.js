/* The Shift page: the logbook per cell (write, list, search, text attachments) and the shift
 * handover (draft by the agent → edit → sign by the outgoing operator → acknowledge by the
 * incoming one), kept live over /ws/events (logbook_entry_created, handover_updated).
 * DOM is built with createElement/textContent only (entries and reports are untrusted text). */
(function () {
  "use strict";
  var configNode = document.getElementById("shift-config");
  if (!configNode) return;
  var config = JSON.parse(configNode.textContent);
  var API = config.api;

  function $(id) { return document.getElementById(id); }

  function cookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : "";
  }

  function api(method, url, body) {
    var headers = { Accept: "application/json" };
    if (method !== "GET") { headers["Content-Type"] = "application/json"; headers["X-CSRFToken"] = cookie("csrftoken"); }
    return fetch(url, {
      method: method, credentials: "same-origin", headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          var detail = data.detail || ("HTTP " + response.status);
          if (data.allowed && data.allowed.length) detail += " (allowed: " + data.allowed.join(", ") + ")";
          throw new Error(detail);
        }
        return data;
      });
    });
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function option(value, label) {
    var o = el("option", "", label);
    o.value = value;
    return o;
  }

  function query(params) {
    var parts = [];
    Object.keys(params).forEach(function (key) {
      var value = params[key];
      if (value !== "" && value !== null && value !== undefined) parts.push(encodeURIComponent(key) + "=" + encodeURIComponent(value));
    });
    return parts.length ? "?" + parts.join("&") : "";
  }

  function when(iso) {
    var d = new Date(iso);
    return isNaN(d) ? iso : d.toLocaleString([], { dateStyle: "short", timeStyle: "short" });
  }

  var msg = $("shift-msg");
  function say(text, kind) {
    msg.textContent = text || "";
    msg.hidden = !text;
    msg.setAttribute("data-kind", kind || "error");
  }

  $("shift-now").textContent = "now: " + config.shift.shift + " shift of " + config.shift.date + " · next: " + config.shift.next;
  if (!config.can_read) return;

  /* ---- logbook ---------------------------------------------------------------------------- */

  var cellSelect = $("logbook-cell");
  var filterSelect = $("logbook-filter");
  config.cells.forEach(function (cell) {
    cellSelect.appendChild(option(cell.id, cell.tag + " · " + cell.name));
    filterSelect.appendChild(option(cell.id, cell.tag));
  });
  config.categories.forEach(function (c) { $("logbook-category").appendChild(option(c.value, c.label)); });
  config.media_types.forEach(function (t) { $("logbook-attachment-type").appendChild(option(t, t)); });
  $("logbook-form").hidden = !config.can_write || config.cells.length === 0;

  var shownAttachments = {};  // attachment id → its text, kept open across live re-renders

  function showAttachment(holder, id, name, text) {
    var pre = el("pre", "logbook-attachment-text", text);
    pre.setAttribute("data-attachment-id", id);
    pre.setAttribute("data-attachment", name);
    holder.appendChild(pre);
  }

  function attachmentButton(att, holder) {
    var b = el("button", "", att.name + " (" + att.size + " B)");
    b.type = "button";
    b.title = "Show the attached text";
    b.addEventListener("click", function () {
      var shown = holder.querySelector('.logbook-attachment-text[data-attachment-id="' + att.id + '"]');
      if (shown) { shown.remove(); delete shownAttachments[att.id]; return; }
      api("GET", API.attachment.replace("{id}", att.id)).then(function (data) {
        shownAttachments[att.id] = data.text;
        var current = document.querySelector('.logbook-entry[data-entry-id="' + data.entry_id + '"]') || holder;
        if (!current.querySelector('.logbook-attachment-text[data-attachment-id="' + att.id + '"]')) {
          showAttachment(current, att.id, data.name, data.text);
        }
      }, function (err) { say(err.message); });
    });
    return b;
  }

  function entryNode(entry) {
    var li = el("li", "logbook-entry");
    li.setAttribute("data-entry-id", entry.id);
    var head = el("div", "logbook-head");
    head.appendChild(el("span", "logbook-cell", entry.cell_tag));
    head.appendChild(el("span", "logbook-time", when(entry.time)));
    head.appendChild(el("span", "logbook-author", entry.author));
    head.appendChild(el("span", "logbook-category", entry.category || "note"));
    head.appendChild(el("span", "logbook-shift", entry.shift));
    li.appendChild(head);
    li.appendChild(el("div", "logbook-text", entry.text));
    if (entry.attachments.length) {
      var box = el("div", "logbook-attachments");
      entry.attachments.forEach(function (att) { box.appendChild(attachmentButton(att, li)); });
      li.appendChild(box);
      entry.attachments.forEach(function (att) {
        if (shownAttachments[att.id] !== undefined) showAttachment(li, att.id, att.name, shownAttachments[att.id]);
      });
    }
    return li;
  }

  function loadLogbook() {
    var url = API.logbook + query({ cell_id: filterSelect.value, q: $("logbook-search").value.trim(), limit: 30 });
    return api("GET", url).then(function (data) {
      var list = $("logbook-list");
      list.textContent = "";
      data.items.forEach(function (entry) { list.appendChild(entryNode(entry)); });
      $("logbook-empty").hidden = data.items.length > 0;
    }, function (err) { say(err.message); });
  }

  $("logbook-attachment-file").addEventListener("change", function (event) {
    var file = event.target.files && event.target.files[0];
    if (!file) return;
    var reader = new FileReader();
    reader.onload = function () {
      $("logbook-attachment-text").value = String(reader.result || "");
      if (!$("logbook-attachment-name").value) $("logbook-attachment-name").value = file.name;
      if (/\.csv$/i.test(file.name)) $("logbook-attachment-type").value = "text/csv";
      else if (/\.json$/i.test(file.name)) $("logbook-attachment-type").value = "application/json";
      else if (/\.md$/i.test(file.name)) $("logbook-attachment-type").value = "text/markdown";
    };
    reader.readAsText(file);
  });

  $("logbook-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var body = {
      cell_id: Number(cellSelect.value),
      category: $("logbook-category").value,
      text: $("logbook-text").value,
      attachments: []
    };
    var attText = $("logbook-attachment-text").value;
    if (attText.trim()) {
      body.attachments.push({
        name: $("logbook-attachment-name").value.trim() || "note.txt",
        media_type: $("logbook-attachment-type").value,
        text: attText
      });
    }
    var submit = $("logbook-submit");
    submit.disabled = true;
    say("");
    api("POST", API.logbook, body).then(function () {
      $("logbook-text").value = "";
      $("logbook-attachment-text").value = "";
      $("logbook-attachment-name").value = "";
      $("logbook-attachment-file").value = "";
      $("logbook-attach").open = false;
      say("Logbook entry written.", "ok");
      return loadLogbook();
    }, function (err) { say(err.message); }).then(function () { submit.disabled = false; });
  });

  filterSelect.addEventListener("change", loadLogbook);
  var searchTimer = null;
  $("logbook-search").addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(loadLogbook, 250);
  });

  /* ---- handover --------------------------------------------------------------------------- */

  var selected = null;   // the handover shown in the detail pane
  var dirty = false;     // the outgoing operator has unsaved edits
  var bodyBox = $("handover-body");
  $("handover-draft").hidden = !config.can_write;

  function label(h) { return h.date + " " + h.shift + " · " + h.outgoing; }

  function showDetail(h) {
    selected = h;
    dirty = false;
    $("handover-detail").hidden = false;
    $("handover-detail").setAttribute("data-handover-id", h.id);
    $("handover-heading").textContent = "Handover " + label(h);
    var status = $("handover-status");
    status.textContent = h.status;
    status.setAttribute("data-status", h.status);
    $("handover-offline").hidden = !h.drafted_offline;
    var meta = "Period " + when(h.period_start) + " – " + when(h.period_end) + " · revision " + h.revision;
    if (h.signed_at) meta += " · signed by " + h.outgoing + " " + when(h.signed_at);
    if (h.acknowledged_at) meta += " · acknowledged by " + h.incoming + " " + when(h.acknowledged_at);
    if (h.acknowledge_comment) meta += " — “" + h.acknowledge_comment + "”";
    $("handover-meta").textContent = meta;
    bodyBox.value = h.report;
    bodyBox.readOnly = !h.can_edit;
    $("handover-save").hidden = !h.can_edit;
    $("handover-sign").hidden = !h.can_sign;
    $("handover-ack").hidden = !h.can_acknowledge || !config.can_write;
    $("handover-ack-label").hidden = $("handover-ack").hidden;
    document.querySelectorAll(".handover-item").forEach(function (item) {
      item.setAttribute("aria-current", String(Number(item.getAttribute("data-handover-id")) === h.id));
    });
  }

  function openHandover(id) {
    return api("GET", API.handover.replace("{id}", id)).then(showDetail, function (err) { say(err.message); });
  }

  function itemNode(h) {
    var li = el("li", "handover-item");
    li.setAttribute("data-handover-id", h.id);
    li.setAttribute("aria-current", String(selected !== null && selected.id === h.id));
    var open = el("button", "handover-open", label(h));
    open.type = "button";
    open.addEventListener("click", function () {
      if (dirty && !window.confirm("Discard your unsaved edits?")) return;
      openHandover(h.id);
    });
    li.appendChild(open);
    var status = el("span", "handover-status", h.status);
    status.setAttribute("data-status", h.status);
    li.appendChild(status);
    if (h.can_acknowledge) li.appendChild(el("span", "handover-hint", "waiting for your acknowledgement"));
    return li;
  }

  function loadHandovers() {
    var url = API.handovers + query({ q: $("handover-search").value.trim(), limit: 20 });
    return api("GET", url).then(function (data) {
      var list = $("handover-list");
      list.textContent = "";
      data.items.forEach(function (h) { list.appendChild(itemNode(h)); });
      $("handover-empty").hidden = data.items.length > 0;
    }, function (err) { say(err.message); });
  }

  function act(button, work) {
    button.disabled = true;
    say("");
    return work().then(function (h) {
      showDetail(h);
      return loadHandovers();
    }, function (err) { say(err.message); }).then(function () { button.disabled = false; });
  }

  function save() {
    return api("PATCH", API.handover.replace("{id}", selected.id), { report: bodyBox.value });
  }

  bodyBox.addEventListener("input", function () { dirty = true; });

  $("handover-draft").addEventListener("click", function () {
    var button = $("handover-draft");
    button.disabled = true;
    say("Drafting the handover from the shift's alarms, work orders, limit changes and logbook…", "ok");
    api("POST", API.handovers, {}).then(function (h) {
      say("Draft ready: check it, edit and sign.", "ok");
      showDetail(h);
      return loadHandovers();
    }, function (err) { say(err.message); }).then(function () { button.disabled = false; });
  });

  $("handover-save").addEventListener("click", function () {
    act($("handover-save"), save).then(function () { if (!msg.hidden && msg.getAttribute("data-kind") === "error") return; say("Saved.", "ok"); });
  });

  $("handover-sign").addEventListener("click", function () {
    act($("handover-sign"), function () {
      var first = dirty ? save() : Promise.resolve(null);
      return first.then(function () { return api("POST", API.handover.replace("{id}", selected.id) + "/sign"); });
    });
  });

  $("handover-ack").addEventListener("click", function () {
    act($("handover-ack"), function () {
      return api("POST", API.handover.replace("{id}", selected.id) + "/acknowledge", { comment: $("handover-ack-comment").value });
    });
  });

  var handoverTimer = null;
  $("handover-search").addEventListener("input", function () {
    clearTimeout(handoverTimer);
    handoverTimer = setTimeout(loadHandovers, 250);
  });

  /* ---- live updates ----------------------------------------------------------------------- */

  var pending = {};
  function soon(name, fn) {
    clearTimeout(pending[name]);
    pending[name] = setTimeout(fn, 150);
  }

  if (window.AriaEvents) {
    window.AriaEvents.connect({
      after: config.latest_event_id,
      types: ["logbook_entry_created", "handover_updated"],
      onStatus: function (status) {
        var pill = $("shift-ws-status");
        pill.textContent = status;
        pill.setAttribute("data-status", status);
      },
      onFrame: function (frame) {
        if (frame.type === "logbook_entry_created") { soon("logbook", loadLogbook); return; }
        soon("handovers", loadHandovers);
        if (selected && frame.handover_id === selected.id && !dirty) soon("detail", function () { openHandover(selected.id); });
      }
    });
  }

  loadLogbook();
  loadHandovers();
})();
