/* The coordinator box on the Plans page: send a message, show each turn's answer, and expand a
 * turn to see what it inspected, which actions it chose and which checks passed (GET …/explain). */
(function () {
  "use strict";
  var list = document.getElementById("coord-turns");
  var form = document.getElementById("coord-form");
  if (!list || !form) return;
  var API = list.getAttribute("data-api");

  function cookie(name) {
    var match = document.cookie.match(new RegExp("(?:^|; )" + name + "=([^;]*)"));
    return match ? decodeURIComponent(match[1]) : "";
  }

  function call(method, url, body) {
    var headers = { Accept: "application/json" };
    if (method !== "GET") { headers["Content-Type"] = "application/json"; headers["X-CSRFToken"] = cookie("csrftoken"); }
    return fetch(url, { method: method, credentials: "same-origin", headers: headers,
                        body: body ? JSON.stringify(body) : undefined })
      .then(function (r) { return r.json().then(function (d) { if (!r.ok) throw new Error(d.detail || r.status); return d; }); });
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function section(parent, title, items) {
    parent.appendChild(el("div", "", title));
    var ul = el("ul");
    items.forEach(function (item) {
      var li = el("li", item.fail ? "fail" : "", item.text);
      ul.appendChild(li);
    });
    parent.appendChild(ul);
  }

  function fillDetails(box, turn) {
    call("GET", API + "/" + turn.id + "/explain").then(function (x) {
      box.textContent = "";
      section(box, "Inspected", x.evidence.map(function (e) { return { text: e.tool + " " + JSON.stringify(e.args) + " → " + e.summary }; }));
      section(box, "Selected actions", x.selected_actions.map(function (a) { return { text: JSON.stringify(a) }; }));
      section(box, "Checks", x.validation_checks.map(function (c) {
        return { text: (c.ok ? "✓ " : "✗ ") + c.check + (c.action_index === null ? "" : " #" + c.action_index) + (c.reason ? ": " + c.reason : ""), fail: !c.ok };
      }));
      section(box, "Result", x.details.actions.map(function (a) {
        var target = a.plan_id ? " plan " + a.plan_id : (a.interaction_id ? " ask " + a.interaction_id : "");
        return { text: (a.ok ? "✓ " : "✗ ") + a.type + target + (a.error ? ": " + a.error : ""), fail: !a.ok };
      }));
    }, function (err) { box.textContent = err.message; });
  }

  function turnNode(turn) {
    var li = el("li", "coord-turn");
    li.setAttribute("data-status", turn.status);
    li.appendChild(el("span", "coord-q", turn.message + " "));
    var status = el("span", "plan-status coord-status", turn.status);
    li.appendChild(status);
    li.appendChild(el("div", "coord-answer", turn.answer));
    var details = el("details", "coord-details");
    details.appendChild(el("summary", "", "details"));
    var box = el("div");
    details.appendChild(box);
    details.addEventListener("toggle", function () { if (details.open && !box.childNodes.length) fillDetails(box, turn); });
    li.appendChild(details);
    return li;
  }

  function load() {
    call("GET", API).then(function (turns) {
      list.textContent = "";
      turns.slice(0, 10).forEach(function (t) { list.appendChild(turnNode(t)); });
    }, function () {});
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var button = form.querySelector("button");
    button.disabled = true;
    call("POST", API, { message: form.message.value }).then(function (turn) {
      form.reset();
      list.insertBefore(turnNode(turn), list.firstChild);
    }, function (err) { window.alert(err.message); }).then(function () { button.disabled = false; });
  });
  load();
})();
