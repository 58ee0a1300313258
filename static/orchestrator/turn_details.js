/* A coordinator turn's details, shared by the Plans page's coordinator box and the Ask ARIA
 * drawer's Coordinator mode: a one-line compact summary, and a <details> that on first opening
 * fetches GET /api/v1/aria/coordinator/turns/{id}/explain and lists what was inspected (tool →
 * result), the selected actions, the validation checks (✓/✗ with the reason), the result of each
 * action and links to the plans the turn touched or cited. Text only via textContent.
 *
 * Confirm cards: an action the user's message did not ask for (validation check
 * "backed_by_message" failed) was not done; its card's button sends the exact words
 * "confirm proposal <index> of turn <id>" as a new coordinator turn, which re-checks the action
 * against the state now and runs it once (orchestrator/coordinator/service.py).
 *
 * Live: `live(parent)` shows a running turn's states from the bus (coordinator_turn_state, sent
 * only to the turn's user), and an answer from the offline demo engine carries the
 * "offline demo engine" mark (GET /api/v1/aria/coordinator/turn-engines, one request per batch). */
(() => {
  "use strict";
  if (window.AriaTurnDetails) return; // loaded once, with the Ask ARIA drawer (base.html)
  const TURNS = "/api/v1/aria/coordinator/turns";

  const { el, api } = window.Aria;

  const BACKED = "backed_by_message";

  /* [{index, text}] of the actions a turn proposed but did not do: from a compact turn (the
   * drawer: actions[].reason "backed_by_message: …") or a detailed one (validation checks). */
  function proposals(turn) {
    if (turn.validation) {
      return turn.validation.filter((c) => c.check === BACKED && !c.ok)
        .map((c) => ({
        index: c.action_index,
        text: c.reason
      }));
    }
    return (turn.actions || []).filter((a) => (a.reason || "").indexOf(`${BACKED}:`) === 0)
      .map((a) => ({
      index: a.index,
      text: a.reason.slice(BACKED.length + 1).trim()
    }));
  }

  /* One card per proposal: what it would do, and a button that confirms it. */
  function confirmCards(parent, turnId, items) {
    items.forEach((p) => {
      const card = el("div", "coord-confirm");
      card.dataset.actionIndex = p.index;
      card.appendChild(el("p", "coord-confirm-text", p.text.replace(/^proposed, not done: /, "Proposed, not done: ")));
      const button = el("button", "coord-confirm-button", "Confirm");
      button.type = "button";
      button.addEventListener("click", async () => {
        button.disabled = true;
        let turn;
        try {
          turn = await api("POST", TURNS, { message: `confirm proposal ${p.index} of turn ${turnId}` });
        } catch (err) {
          button.disabled = false;
          card.appendChild(el("p", "fail", err.message));
          return;
        }
        card.replaceChildren(el("p", "coord-confirm-result", turn.answer));
        card.dataset.status = turn.status;
      });
      card.appendChild(button);
      parent.appendChild(card);
    });
  }

  function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

  /* "ok · inspected 5 tools · 2 actions (1 done, 1 refused)" from the compact turn record. */
  function summaryLine(turn) {
    const actions = turn.actions || [];
    const count = (test) => actions.filter(test).length;
    const parts = [
      [count((a) => a.executed && a.ok), "done"],
      [count((a) => (a.reason || "").indexOf(`${BACKED}:`) === 0), "to confirm"],
      [count((a) => !a.allowed && (a.reason || "").indexOf(`${BACKED}:`) !== 0), "refused"],
      [count((a) => a.executed && !a.ok), "failed"],
    ].filter((p) => p[0]).map((p) => `${p[0]} ${p[1]}`);
    const line = `${turn.status} · inspected ${plural(turn.tool_calls || 0, "tool")} · ${plural(actions.length, "action")}`;
    return parts.length ? `${line} (${parts.join(", ")})` : line;
  }

  function target(a) {
    if (a.plan_id) return ` plan ${a.plan_id}`;
    return a.interaction_id ? ` ask ${a.interaction_id}` : "";
  }

  function section(parent, title, items, empty) {
    parent.appendChild(el("div", "turn-details-title", title));
    const ul = el("ul", "turn-details-list");
    if (!items.length) ul.appendChild(el("li", "turn-details-none", empty));
    items.forEach((item) => {
      const li = el("li", item.fail ? "fail" : "");
      if (item.href) li.appendChild(el("a", "", item.text)).setAttribute("href", item.href);
      else li.textContent = item.text;
      ul.appendChild(li);
    });
    parent.appendChild(ul);
  }

  function planLinks(x) {
    const seen = {};
    const links = [];
    function add(id, how) {
      if (!Number.isInteger(id) || seen[id]) return;
      seen[id] = true;
      links.push({ text: `plan #${id} (${how})`, href: `/plans/#plan-${id}` });
    }
    x.details.actions.forEach((a) => { if (a.ok) add(a.plan_id, a.type); });
    ((x.references || {}).plan_ids || []).forEach((id) => { add(id, "cited"); });
    return links;
  }

  function render(box, x) {
    box.textContent = "";
    section(box, "Inspected", x.evidence.map((e) => ({
      text: `${e.tool} ${JSON.stringify(e.args)} → ${e.is_error ? "ERROR " : ""}${e.summary}`,
      fail: e.is_error
    })), "nothing (no read tool was called)");
    section(box, "Selected actions", x.selected_actions.map((a, i) => {
      const words = a.text || a.goal || a.decision || a.profile || "";
      return { text: `#${i} ${a.type}${target(a)}${words ? `: ${words}` : ""}` };
    }), "none (no action plan)");
    section(box, "Checks", x.validation_checks.map((c) => ({
      text: (c.ok ? "✓ " : "✗ ") + c.check + (c.action_index === null ? "" : ` #${c.action_index}`) + (c.reason ? `: ${c.reason}` : ""),
      fail: !c.ok
    })), "none");
    section(box, "Result", x.details.actions.map((a) => ({
      text: (a.ok ? "✓ " : "✗ ") + a.type + target(a) + (a.error ? `: ${a.error}` : ""),
      fail: !a.ok
    })).concat(x.result.error ? [{ text: `✗ ${x.result.error}`, fail: true }] : []), "nothing was executed");
    section(box, "Plans", planLinks(x), "none touched");
    const pending = proposals({ validation: x.validation_checks || [] });
    if (pending.length) {
      box.appendChild(el("div", "turn-details-title", "To confirm"));
      confirmCards(box, x.id, pending);
    }
  }

  /* Download links for the transcript (JSON with the hash chain, checkable offline). */
  function exportLinks(turnId, conversation) {
    const p = el("p", "turn-details-export", "Export (JSON, with the hash chain): ");
    const link = (text, href) => {
      const a = p.appendChild(el("a", "", text));
      a.setAttribute("href", href);
      a.setAttribute("download", "");
    };
    link("this turn", `${TURNS}/${turnId}/export`);
    if (conversation) {
      p.appendChild(document.createTextNode(" · "));
      link("the whole conversation", `/api/v1/aria/coordinator/conversations/${encodeURIComponent(conversation)}/export`);
    }
    return p;
  }

  /* A closed <details> that loads the turn's explanation the first time it is opened. */
  function details(turnId, cls, conversation) {
    const node = el("details", cls || "turn-details");
    node.appendChild(el("summary", "", "details"));
    const box = el("div", "turn-details-body");
    node.appendChild(box);
    node.addEventListener("toggle", async () => {
      if (!node.open || box.childNodes.length) return;
      box.appendChild(el("p", "turn-details-loading", "loading…"));
      let explained;
      try {
        explained = await api("GET", `${TURNS}/${turnId}/explain`);
      } catch (err) {
        box.replaceChildren(el("p", "fail", err.message));
        return;
      }
      render(box, explained);
      box.appendChild(exportLinks(turnId, conversation));
    });

    return node;
  }

  /* ---------- the offline demo engine mark on a turn's answer ---------- */
  const engines = {};  // turn id → Promise of {id, engine, offline}
  let engineQueue = [];

  /* Which engine answered turn `id`: one GET …/turn-engines?ids=… for every turn asked for in the
   * same tick (a reloaded drawer attaches many turns at once). */
  function engineOf(id) {
    if (!engines[id]) {
      engines[id] = new Promise((resolve) => { engineQueue.push({ id, resolve }); });
      if (engineQueue.length === 1) {
        setTimeout(async () => {
          const batch = engineQueue;
          engineQueue = [];
          let found = [];
          try {
            found = (await api("GET", `/api/v1/aria/coordinator/turn-engines?ids=${batch.map((b) => b.id).join(",")}`)).turns;
          } catch (err) { /* no mark rather than a wrong one */ }
          batch.forEach((b) => b.resolve(found.find((t) => t.id === b.id) || null));
        }, 0);
      }
    }
    return engines[id];
  }

  /* Append the mark to `node` when turn `id` was answered by the offline demo engine, unless
   * `scope` (default `node`) already carries one (the drawer marks its turns too); resolves to
   * whether it added one. */
  async function offlineMark(node, id, known, scope) {
    const info = typeof known === "boolean" ? { engine: "fake", offline: known } : await engineOf(id);
    if (!info || !info.offline || (scope || node).querySelector(".offline-mark, .aria-offline-mark")) return false;
    node.appendChild(window.Aria.offlineMark({ engine: info.engine, real_provider: false }));
    return true;
  }

  /* ---------- live states of a running turn (bus event coordinator_turn_state) ---------- */
  const STATES = ["inspecting", "validating", "executing", "answered", "rejected", "failed"];
  const FINAL = { ok: "answered", rejected: "rejected", failed: "failed" };
  const trackers = new Set();
  let connection = null;
  let opened = null;

  function busConnection() {
    if (!connection && window.AriaEvents) {
      opened = new Promise((resolve) => {
        connection = window.AriaEvents.connect({
          types: ["coordinator_turn_state"],  // private: the server sends only this user's turns
          onFrame: (frame) => trackers.forEach((t) => t.frame(frame)),
          // once open, a moment for the server's first outbox read (it queues behind a running request)
          onStatus: (status) => { if (status !== "connecting" && status !== "reconnecting") setTimeout(resolve, 300); },
        });
      });
    }
    return opened || Promise.resolve();
  }

  /* A state line in `parent` that follows the turn about to be sent: "inspecting → validating →
   * executing → answered". `ready` resolves once the bus socket is open (at most 2 s), so no
   * state is missed; `finish(turn)` closes it with the turn record the request returned (frames
   * may still arrive after it: they join the same line). */
  function live(parent) {
    const line = el("p", "coord-live");
    line.setAttribute("role", "status");
    parent.appendChild(line);
    const seen = new Set();
    const tracker = { busTurn: null, recordId: null, offline: null, finished: false };
    const draw = () => {
      const states = STATES.filter((s) => seen.has(s));
      const last = states[states.length - 1] || "sending";
      line.dataset.state = last;
      line.textContent = `Coordinator: ${states.join(" → ") || "sending"}${STATES.indexOf(last) < 3 ? " …" : ""}`;
    };
    const prime = () => {  // the mark under the answer needs no extra request
      if (tracker.recordId && typeof tracker.offline === "boolean" && !engines[tracker.recordId]) {
        engines[tracker.recordId] = Promise.resolve({ id: tracker.recordId, engine: "fake", offline: tracker.offline });
      }
    };
    tracker.frame = (frame) => {
      const terminal = STATES.indexOf(frame.state) >= 3;
      let mine;
      if (tracker.busTurn) mine = frame.turn_id === tracker.busTurn;
      else if (terminal) mine = tracker.finished && frame.coordinator_turn_id === tracker.recordId;
      else mine = true;  // the first state of the turn this user sent last (frames may trail the answer)
      if (!mine) return;
      tracker.busTurn = frame.turn_id;
      tracker.offline = frame.offline;
      if (frame.coordinator_turn_id) tracker.recordId = frame.coordinator_turn_id;
      seen.add(frame.state);
      prime();
      draw();
    };
    tracker.finish = (turn) => {
      if (!turn) { trackers.delete(tracker); line.remove(); return; }
      tracker.finished = true;
      tracker.recordId = turn.turn_id || turn.id;
      if (FINAL[turn.status]) seen.add(FINAL[turn.status]);
      prime();
      draw();
      setTimeout(() => trackers.delete(tracker), 5000);  // late frames of this turn still join
    };
    trackers.forEach((t) => { if (t.finished) trackers.delete(t); });  // a new turn: older lines are done
    trackers.add(tracker);
    draw();
    const timeout = new Promise((resolve) => { setTimeout(resolve, 2000); });
    return { ready: Promise.race([busConnection(), timeout]), finish: tracker.finish, node: line };
  }

  /* Under a chat answer: the compact line, then the expandable details. */
  function attach(parent, turn, cls) {
    const engine = parent.appendChild(el("p", "turn-details-engine"));  // right under the answer
    offlineMark(engine, turn.turn_id, turn.offline, parent).then((marked) => { if (!marked) engine.remove(); });
    const line = el("p", "turn-details-line", summaryLine(turn));
    line.dataset.status = turn.status;
    parent.appendChild(line);
    confirmCards(parent, turn.turn_id, proposals(turn));
    parent.appendChild(details(turn.turn_id, cls, turn.conversation));
  }

  window.AriaTurnDetails = {
    summaryLine, details, attach, render,
    proposals, confirmCards, live, offlineMark,
  };
})();
