/* The coordinator box on the Plans page: send a message, show each turn's answer, and expand a
 * turn to see what it inspected, which actions it chose and which checks passed (GET …/explain,
 * rendered by turn_details.js, which the Ask ARIA drawer shares). */
(() => {
  "use strict";
  const list = document.getElementById("coord-turns");
  const form = document.getElementById("coord-form");
  if (!list || !form || !window.AriaTurnDetails) return;
  const { el, api } = window.Aria;
  const details = window.AriaTurnDetails;
  const API = list.getAttribute("data-api");

  const turnNode = (turn) => {
    const li = el("li", "coord-turn");
    li.setAttribute("data-status", turn.status);
    li.appendChild(el("span", "coord-q", `${turn.message} `));
    li.appendChild(el("span", "plan-status coord-status", turn.status));
    li.appendChild(el("div", "coord-answer", turn.answer));
    details.confirmCards(li, turn.id, details.proposals(turn));  // unasked actions
    li.appendChild(details.details(turn.id, "coord-details"));  // turn_details.js
    return li;
  };

  const load = async () => {
    try {
      const turns = await api("GET", API);
      list.textContent = "";
      turns.slice(0, 10).forEach((t) => list.appendChild(turnNode(t)));
    } catch (err) { /* the box stays as rendered */ }
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const turn = await api("POST", API, { message: form.message.value });
      form.reset();
      list.insertBefore(turnNode(turn), list.firstChild);
    } catch (err) {
      window.alert(err.message);
    }
    button.disabled = false;
  });
  load();
})();
