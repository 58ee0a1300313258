/*
 * AriaNewWorkOrder — the Control Room's "New work order" form (templates/workorders/control_room.html,
 * rendered for operators only): a problem found in the field (a leak, a noise, a loose guard) raised
 * on a cell by hand, POST /api/v1/workorders (workorders.services.manual_intake).
 *
 *   AriaNewWorkOrder.attach(formElement, { url, onRaised })
 *
 * What is wrong is said in words beside its field (a missing cell or title before anything is sent;
 * the server's 422 under the field it names), anything else above the button. One fill of the form
 * carries one Idempotency-Key and the button is disabled while a request is out: a double click or a
 * retry after a lost answer raises one order, not two. On success the form empties, says "Work order
 * #N raised" with a link to its page, and onRaised(order) lets the page show it in the list at once.
 * Text is only ever put in the page with textContent.
 */
((global) => {
  "use strict";

  const FIELDS = ["cell", "title", "description", "priority"];
  const MISSING = {
    cell: "Choose the cell (equipment) where you found the problem.",
    title: "Say in a few words what you found, e.g. “Seal leak at the drive end”.",
  };

  function newKey() {
    const bytes = new Uint8Array(16);
    global.crypto.getRandomValues(bytes);  // also on plain http, unlike crypto.randomUUID
    return `wo-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  }

  async function post(url, body, key) {
    const { csrf, ApiError } = global.Aria;
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrf(), "Idempotency-Key": key },
      body: JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new ApiError(response, data);
    return data;
  }

  function attach(form, { url, onRaised }) {
    const { el } = global.Aria;
    const errorOf = (name) => form.querySelector(`.wo-new-error[data-field="${name}"]`);
    const general = form.querySelector("#wo-new-error");
    const submit = form.querySelector("button[type=submit]");
    const done = document.getElementById("wo-new-done");
    let key = newKey();
    let sending = false;

    function say(node, text) {
      node.textContent = text || "";
      node.hidden = !text;
    }
    function clearErrors() {
      FIELDS.forEach((name) => { say(errorOf(name), ""); form.elements[name].removeAttribute("aria-invalid"); });
      say(general, "");
    }
    function fieldError(name, text) {
      say(errorOf(name), text);
      form.elements[name].setAttribute("aria-invalid", "true");
    }
    // A changed form is another request: it gets its own key (a retry of the same one keeps it).
    form.addEventListener("input", () => { if (!sending) key = newKey(); });

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (sending) return;
      clearErrors();
      const body = {
        cell: Number(form.elements.cell.value) || null,
        title: form.elements.title.value.trim(),
        description: form.elements.description.value.trim(),
        priority: form.elements.priority.value,
      };
      const missing = ["cell", "title"].filter((name) => !body[name]);
      if (missing.length) {
        missing.forEach((name) => fieldError(name, MISSING[name]));
        form.elements[missing[0]].focus();
        return;
      }
      sending = true;
      submit.disabled = true;
      try {
        const order = await post(url, body, key);
        form.reset();
        key = newKey();
        done.textContent = "";
        done.appendChild(document.createTextNode(`Work order #${order.id} raised on ${order.cell_tag}: `));
        const link = el("a", "wo-new-link", order.title);
        link.href = `/workorders/${encodeURIComponent(String(order.id))}/`;
        done.appendChild(link);
        done.hidden = false;
        if (onRaised) onRaised(order);
      } catch (err) {
        if (err.field && FIELDS.indexOf(err.field) >= 0) fieldError(err.field, err.message);
        else if (err.status === 403) say(general, "Raising a work order needs the operator scope.");
        else say(general, `The work order was not raised: ${err.message}`);
      } finally {
        sending = false;
        submit.disabled = false;
      }
    });
  }

  global.AriaNewWorkOrder = { attach };
})(window);
