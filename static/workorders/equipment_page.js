/*
 * The equipment page (/equipment/<cell>/, workorders.views_equipment): a cell's equipment KB, read
 * as the server rendered it. *Edit* shows the input rendered beside each value; *Save* sends the
 * values changed as one JSON merge patch, with the note and the `updated_at` the page was read at,
 * to PATCH /api/v1/workorders/kb/<cell> (the API's one write path; it refuses a change made since
 * with 409, and a bad value with a 4xx naming the field: nothing is written either way). The error
 * is said beside the input of the field it names (else above Save). After a save the page re-reads
 * itself and swaps #kb-content: the server stays the one renderer, and text only ever reaches the
 * page through it (autoescaped) or through textContent. Times are rendered in UTC and shown here
 * in the viewer's zone (Aria.fmtDateTime), the UTC text kept as the title.
 *
 * A value in a list (a spare part's stock) is sent as the whole list, as a merge patch replaces
 * lists; lines (signals, steps, permits) are one item per line, blank lines dropped; a number
 * field sends a number when it reads as one, else the text, which the server refuses by name.
 *
 * It follows the event bus: `equipment_kb_updated` for this cell (another person's save, an agent's
 * write, a stock move) re-reads the page when it is not being edited; while editing it says who
 * changed it and when (the save would be refused with 409) and offers to reload. The frame of the
 * page's own save names the version the save answered, so it is not news.
 */
(() => {
  "use strict";
  const form = document.getElementById("kb-form");
  if (!form || !window.Aria) return;
  const { api, fmtDateTime } = window.Aria;
  let data = null;
  let saving = false;
  let stale = null;  // while editing: the newest equipment_kb_updated frame of another version

  /* The page data, and the times (rendered in UTC) in the viewer's zone as every page shows them. */
  function readData() {
    data = JSON.parse(document.getElementById("kb-page-data").textContent);
    document.querySelectorAll("#kb-content time[datetime]").forEach((node) => {
      const shown = fmtDateTime(node.getAttribute("datetime"));
      if (shown) { node.title = node.textContent; node.textContent = shown; }
    });
  }
  function say(node, text) { node.textContent = text || ""; node.hidden = !text; }
  const inputs = () => Array.from(form.querySelectorAll(".kb-input"));
  const nameOf = (input) => JSON.parse(input.dataset.path).join(".");

  function valueOf(input) {
    const text = input.value;
    if (input.dataset.kind === "lines") return text.split("\n").map((line) => line.trim()).filter(Boolean);
    if (input.dataset.kind === "number") {
      const trimmed = text.trim();
      if (trimmed === "") return null;
      const number = Number(trimmed);
      return Number.isFinite(number) ? number : trimmed;
    }
    return text;
  }

  /* The merge patch of the changed inputs: objects nest, the first list on a path is sent whole.
   * Its objects have no prototype: a KB key is any JSON key, and `__proto__` on a plain {} would set
   * the object's prototype (the edit lost, Object.prototype written) instead of a key. */
  function buildPatch() {
    const draft = JSON.parse(JSON.stringify(data.data));
    const patch = Object.create(null);
    let changed = 0;
    inputs().forEach((input) => {
      if (input.value === input.defaultValue) return;
      changed += 1;
      const path = JSON.parse(input.dataset.path);
      let source = draft;
      let target = patch;
      let inList = false;  // below the first list: the draft's list is in the patch, edit it in place
      for (let i = 0; i < path.length; i++) {
        const key = path[i];
        const last = i === path.length - 1;
        if (inList) {
          if (last) source[key] = valueOf(input);
          else source = source[key];
          continue;
        }
        if (last) { target[key] = valueOf(input); break; }
        if (Array.isArray(source[key])) {
          target[key] = source[key];
          source = source[key];
          inList = true;
          continue;
        }
        if (source[key] === null || typeof source[key] !== "object") source[key] = {};
        if (!target[key] || typeof target[key] !== "object") target[key] = Object.create(null);
        source = source[key];
        target = target[key];
      }
    });
    return changed ? patch : null;
  }

  function clearErrors() {
    form.querySelectorAll(".kb-error").forEach((node) => say(node, ""));
    inputs().forEach((input) => { input.removeAttribute("aria-invalid"); input.removeAttribute("title"); });
  }

  /* The input of the field the server named: the longest dotted path that is the field or holds it. */
  function inputFor(field) {
    const name = String(field || "").replace(/^patch\./, "");
    let best = null;
    inputs().forEach((input) => {
      const own = nameOf(input);
      if ((name === own || name.startsWith(`${own}.`)) && (!best || own.length > nameOf(best).length)) best = input;
    });
    return best;
  }

  function showError(err) {
    const general = document.getElementById("kb-form-error");
    const input = err.status !== 409 ? inputFor(err.field) : null;
    if (input) {
      input.setAttribute("aria-invalid", "true");
      // Beside its input the field's path says nothing more: the server's words without it.
      const detail = typeof err.detail === "string" && err.field ? err.detail.replace(`${err.field}: `, "") : err.message;
      say(form.querySelector(`.kb-error[data-for="${CSS.escape(nameOf(input))}"]`), detail);
      input.title = err.field || "";
      input.focus();
    } else if (err.status === 409) {
      say(general, "Someone changed this equipment's knowledge since you opened it. Your edits were not saved: copy them, reload the page and apply them again.");
    } else if (err.status === 403) {
      say(general, "Editing the equipment knowledge needs the operator scope.");
    } else {
      say(general, `Not saved: ${err.message}`);
    }
  }

  function setEditing(on) {
    form.classList.toggle("editing", on);
    if (!on) {
      inputs().forEach((input) => { input.value = input.defaultValue; });
      clearErrors();
      if (stale) follow();  // what changed meanwhile, now that nothing is being edited
    }
  }

  let reads = 0;
  async function refresh() {
    const mine = ++reads;  // two re-reads in flight: only the last one started is shown
    const response = await fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const text = await response.text();
    if (mine !== reads) return;
    const fresh = new DOMParser().parseFromString(text, "text/html").getElementById("kb-content");
    if (!fresh) throw new Error("the page came back without its content");
    document.getElementById("kb-content").replaceWith(document.adoptNode(fresh));
    readData();
    if (stale && stale.updated_at === data.updated_at) stale = null;
    if (!stale) document.getElementById("kb-changed").hidden = true;
  }

  /* Another version than the one shown: re-read it, or (editing) say the save would be refused. */
  function follow() {
    if (!stale || stale.updated_at === data.updated_at) { stale = null; return; }
    if (saving) return;  // the save's own answer (and re-read) decides
    if (form.classList.contains("editing")) {
      const notice = document.getElementById("kb-changed");
      say(document.getElementById("kb-changed-text"),
        `Changed by ${stale.actor} at ${fmtDateTime(stale.updated_at)} — your save will be refused; reload to see it.`);
      notice.hidden = false;
      return;
    }
    refresh().catch(() => {});  // the next event, or a reload, tries again
  }

  function onKbUpdated(frame) {
    if (frame.cell_id !== data.cell_id || frame.updated_at === data.updated_at) return;
    // a replayed frame of a version older than the one shown is not news
    if (data.updated_at && new Date(frame.updated_at) < new Date(data.updated_at)) return;
    stale = frame;
    follow();
  }

  form.addEventListener("click", (event) => {
    if (event.target.closest("#kb-edit")) { say(document.getElementById("kb-saved"), ""); setEditing(true); }
    if (event.target.closest("#kb-cancel")) setEditing(false);
    if (event.target.closest("#kb-reload")) {
      form.classList.remove("editing");
      inputs().forEach((input) => { input.value = input.defaultValue; });
      clearErrors();
      refresh().catch((err) => say(document.getElementById("kb-form-error"), `Not reloaded: ${err.message}`));
    }
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (saving) return;
    clearErrors();
    const patch = buildPatch();
    if (!patch) { say(document.getElementById("kb-form-error"), "Nothing changed."); return; }
    const save = document.getElementById("kb-save");
    saving = true;
    save.disabled = true;
    try {
      const note = document.getElementById("kb-note");
      await api("PATCH", data.paths.kb, { patch, note: note.value.trim(), if_updated_at: data.updated_at });
      note.value = "";
      await refresh();
      form.classList.remove("editing");
      say(document.getElementById("kb-saved"), "Saved.");
    } catch (err) {
      showError(err);
    } finally {
      saving = false;
      save.disabled = false;
      follow();
    }
  });

  readData();
  if (window.AriaEvents) {
    AriaEvents.connect({ after: data.latest_event_id, types: ["equipment_kb_updated"], onFrame: onKbUpdated });
  }
})();
