/* A coordinator turn's details, shared by the Plans page's coordinator box and the Ask ARIA
 * drawer's Coordinator mode: a one-line compact summary, and a <details> that on first opening
 * fetches GET /api/v1/aria/coordinator/turns/{id}/explain and lists what was inspected (tool →
 * result), the selected actions, the validation checks (✓/✗ with the reason), the result of each
 * action and links to the plans the turn touched or cited. Text only via textContent.
 *
 * Confirm cards: an action the user's message did not ask for (validation check
 * "backed_by_message" failed) was not done; its card's button sends the exact words
 * "confirm proposal <index> of turn <id>" as a new coordinator turn, which re-checks the action
 * against the state now and runs it once (orchestrator/coordinator/service.py). */
(() => {
  "use strict";
  if (window.AriaTurnDetails) return; // loaded by the drawer and by the Plans page
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

  /* A closed <details> that loads the turn's explanation the first time it is opened. */
  function details(turnId, cls) {
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
    });

    return node;
  }

  /* Under a chat answer: the compact line, then the expandable details. */
  function attach(parent, turn, cls) {
    const line = el("p", "turn-details-line", summaryLine(turn));
    line.dataset.status = turn.status;
    parent.appendChild(line);
    confirmCards(parent, turn.turn_id, proposals(turn));
    parent.appendChild(details(turn.turn_id, cls));
  }

  window.AriaTurnDetails = {
    summaryLine, details, attach, render,
    proposals, confirmCards,
  };
})();
