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
(function () {
  "use strict";
  if (window.AriaTurnDetails) return; // loaded by the drawer and by the Plans page
  var TURNS = "/api/v1/aria/coordinator/turns";

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (d) {
        if (!r.ok) throw new Error(typeof d.detail === "string" ? d.detail : "HTTP " + r.status);
        return d;
      });
    });
  }

  function cookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : "";
  }

  function postJSON(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": cookie("csrftoken") },
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (d) {
        if (!r.ok) throw new Error(typeof d.detail === "string" ? d.detail : "HTTP " + r.status);
        return d;
      });
    });
  }

  var BACKED = "backed_by_message";

  /* [{index, text}] of the actions a turn proposed but did not do: from a compact turn (the
   * drawer: actions[].reason "backed_by_message: …") or a detailed one (validation checks). */
  function proposals(turn) {
    if (turn.validation) {
      return turn.validation.filter(function (c) { return c.check === BACKED && !c.ok; })
        .map(function (c) { return { index: c.action_index, text: c.reason }; });
    }
    return (turn.actions || []).filter(function (a) { return (a.reason || "").indexOf(BACKED + ":") === 0; })
      .map(function (a) { return { index: a.index, text: a.reason.slice(BACKED.length + 1).trim() }; });
  }

  /* One card per proposal: what it would do, and a button that confirms it. */
  function confirmCards(parent, turnId, items) {
    items.forEach(function (p) {
      var card = el("div", "coord-confirm");
      card.dataset.actionIndex = p.index;
      card.appendChild(el("p", "coord-confirm-text", p.text.replace(/^proposed, not done: /, "Proposed, not done: ")));
      var button = el("button", "coord-confirm-button", "Confirm");
      button.type = "button";
      button.addEventListener("click", function () {
        button.disabled = true;
        postJSON(TURNS, { message: "confirm proposal " + p.index + " of turn " + turnId }).then(function (turn) {
          card.replaceChildren(el("p", "coord-confirm-result", turn.answer));
          card.dataset.status = turn.status;
        }, function (err) {
          button.disabled = false;
          card.appendChild(el("p", "fail", err.message));
        });
      });
      card.appendChild(button);
      parent.appendChild(card);
    });
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  /* "ok · inspected 5 tools · 2 actions (1 done, 1 refused)" from the compact turn record. */
  function summaryLine(turn) {
    var actions = turn.actions || [];
    var count = function (test) { return actions.filter(test).length; };
    var parts = [
      [count(function (a) { return a.executed && a.ok; }), "done"],
      [count(function (a) { return (a.reason || "").indexOf(BACKED + ":") === 0; }), "to confirm"],
      [count(function (a) { return !a.allowed && (a.reason || "").indexOf(BACKED + ":") !== 0; }), "refused"],
      [count(function (a) { return a.executed && !a.ok; }), "failed"],
    ].filter(function (p) { return p[0]; }).map(function (p) { return p[0] + " " + p[1]; });
    var line = turn.status + " · inspected " + plural(turn.tool_calls || 0, "tool") + " · " + plural(actions.length, "action");
    return parts.length ? line + " (" + parts.join(", ") + ")" : line;
  }

  function target(a) {
    if (a.plan_id) return " plan " + a.plan_id;
    return a.interaction_id ? " ask " + a.interaction_id : "";
  }

  function section(parent, title, items, empty) {
    parent.appendChild(el("div", "turn-details-title", title));
    var ul = el("ul", "turn-details-list");
    if (!items.length) ul.appendChild(el("li", "turn-details-none", empty));
    items.forEach(function (item) {
      var li = el("li", item.fail ? "fail" : "");
      if (item.href) li.appendChild(el("a", "", item.text)).setAttribute("href", item.href);
      else li.textContent = item.text;
      ul.appendChild(li);
    });
    parent.appendChild(ul);
  }

  function planLinks(x) {
    var seen = {}, links = [];
    function add(id, how) {
      if (!Number.isInteger(id) || seen[id]) return;
      seen[id] = true;
      links.push({ text: "plan #" + id + " (" + how + ")", href: "/plans/#plan-" + id });
    }
    x.details.actions.forEach(function (a) { if (a.ok) add(a.plan_id, a.type); });
    ((x.references || {}).plan_ids || []).forEach(function (id) { add(id, "cited"); });
    return links;
  }

  function render(box, x) {
    box.textContent = "";
    section(box, "Inspected", x.evidence.map(function (e) {
      return { text: e.tool + " " + JSON.stringify(e.args) + " → " + (e.is_error ? "ERROR " : "") + e.summary, fail: e.is_error };
    }), "nothing (no read tool was called)");
    section(box, "Selected actions", x.selected_actions.map(function (a, i) {
      var words = a.text || a.goal || a.decision || a.profile || "";
      return { text: "#" + i + " " + a.type + target(a) + (words ? ": " + words : "") };
    }), "none (no action plan)");
    section(box, "Checks", x.validation_checks.map(function (c) {
      return { text: (c.ok ? "✓ " : "✗ ") + c.check + (c.action_index === null ? "" : " #" + c.action_index) + (c.reason ? ": " + c.reason : ""), fail: !c.ok };
    }), "none");
    section(box, "Result", x.details.actions.map(function (a) {
      return { text: (a.ok ? "✓ " : "✗ ") + a.type + target(a) + (a.error ? ": " + a.error : ""), fail: !a.ok };
    }).concat(x.result.error ? [{ text: "✗ " + x.result.error, fail: true }] : []), "nothing was executed");
    section(box, "Plans", planLinks(x), "none touched");
    var pending = proposals({ validation: x.validation_checks || [] });
    if (pending.length) {
      box.appendChild(el("div", "turn-details-title", "To confirm"));
      confirmCards(box, x.id, pending);
    }
  }

  /* A closed <details> that loads the turn's explanation the first time it is opened. */
  function details(turnId, cls) {
    var node = el("details", cls || "turn-details");
    node.appendChild(el("summary", "", "details"));
    var box = el("div", "turn-details-body");
    node.appendChild(box);
    node.addEventListener("toggle", function () {
      if (!node.open || box.childNodes.length) return;
      box.appendChild(el("p", "turn-details-loading", "loading…"));
      getJSON(TURNS + "/" + turnId + "/explain").then(function (x) { render(box, x); }, function (err) {
        box.replaceChildren(el("p", "fail", err.message));
      });
    });
    return node;
  }

  /* Under a chat answer: the compact line, then the expandable details. */
  function attach(parent, turn, cls) {
    var line = el("p", "turn-details-line", summaryLine(turn));
    line.dataset.status = turn.status;
    parent.appendChild(line);
    confirmCards(parent, turn.turn_id, proposals(turn));
    parent.appendChild(details(turn.turn_id, cls));
  }

  window.AriaTurnDetails = {
    summaryLine: summaryLine, details: details, attach: attach, render: render,
    proposals: proposals, confirmCards: confirmCards,
  };
})();
