/* The coordinator box on the Plans page: send a message, follow its live states while it runs,
 * show each turn's answer (with the offline demo engine mark when that engine answered), and
 * expand a turn to see what it inspected, which actions it chose and which checks passed
 * (GET …/explain, rendered by turn_details.js, which the Ask ARIA drawer shares). */
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
    li.setAttribute("data-turn", String(turn.id));
    li.appendChild(el("span", "coord-q", `${turn.message} `));
    li.appendChild(el("span", "plan-status coord-status", turn.status));
    const answer = li.appendChild(el("div", "coord-answer", turn.answer));
    details.offlineMark(answer, turn.id);  // "offline demo engine" when the offline engine answered
    details.confirmCards(li, turn.id, details.proposals(turn));  // unasked actions
    li.appendChild(details.details(turn.id, "coord-details", turn.conversation));  // turn_details.js
    return li;
  };

  // The first load can return after the user has sent a message: the turns sent on this page
  // (pending or answered) stay on top, and a loaded turn already shown is not shown twice.
  const load = async () => {
    try {
      const turns = await api("GET", API);
      const shown = new Set([...list.querySelectorAll("li[data-turn]")].map((li) => li.dataset.turn));
      turns.slice(0, 10).filter((t) => !shown.has(String(t.id)))
        .forEach((t) => list.appendChild(turnNode(t)));
    } catch (err) { /* the box stays as rendered */ }
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    const pending = list.insertBefore(el("li", "coord-turn"), list.firstChild);
    pending.appendChild(el("span", "coord-q", form.message.value));
    const live = details.live(pending);  // inspecting → validating → executing → … while it runs
    await live.ready;
    try {
      const turn = await api("POST", API, { message: form.message.value });
      form.reset();
      live.finish(turn);
      const node = turnNode(turn);
      node.insertBefore(live.node, node.querySelector(".coord-answer"));
      list.querySelectorAll(`li[data-turn="${turn.id}"]`).forEach((li) => li.remove());  // loaded meanwhile
      list.replaceChild(node, pending);
    } catch (err) {
      live.finish(null);
      pending.remove();
      window.alert(err.message);
    }
    button.disabled = false;
  });
  load();
})();
