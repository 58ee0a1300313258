/* The coordinator box on the Plans page: send a message, show each turn's answer, and expand a
 * turn to see what it inspected, which actions it chose and which checks passed (GET …/explain,
 * rendered by turn_details.js, which the Ask ARIA drawer shares). */
(function () {
  "use strict";
  var list = document.getElementById("coord-turns");
  var form = document.getElementById("coord-form");
  if (!list || !form || !window.AriaTurnDetails) return;
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

  function turnNode(turn) {
    var li = el("li", "coord-turn");
    li.setAttribute("data-status", turn.status);
    li.appendChild(el("span", "coord-q", turn.message + " "));
    var status = el("span", "plan-status coord-status", turn.status);
    li.appendChild(status);
    li.appendChild(el("div", "coord-answer", turn.answer));
    window.AriaTurnDetails.confirmCards(li, turn.id, window.AriaTurnDetails.proposals(turn));  // unasked actions
    li.appendChild(window.AriaTurnDetails.details(turn.id, "coord-details"));  // turn_details.js
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
