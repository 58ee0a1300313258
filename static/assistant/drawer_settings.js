/* Ask ARIA drawer settings: engine, model, reasoning and disabled intents (PATCH /config), and
   the readiness of agent_review / full_autonomy. Text only via textContent. */
(() => {
  "use strict";
  const drawer = document.getElementById("aria-drawer");
  if (!drawer || !window.AriaRender) return;
  const { el } = window.Aria;
  const API = drawer.dataset.assistantApi;
  const $ = (id) => document.getElementById(id);

  const api = (method, path, body) => window.Aria.api(method, API + path, body);
  if (!$("aria-settings-toggle")) return;  // drawn for operators only (drawer.html)

  $("aria-settings-toggle").addEventListener("click", async () => {
    const panel = $("aria-settings");
    panel.hidden = !panel.hidden;
    $("aria-settings-toggle").setAttribute("aria-expanded", String(!panel.hidden));
    if (panel.hidden) return;
    try {
      const cfg = await api("GET", "/config");
      const form = $("aria-settings-form");
      form.engine.value = cfg.settings.engine || "";
      form.model.value = cfg.settings.model || "";
      form.reasoning.checked = !!cfg.reasoning;
      form.disabled_intents.value = (cfg.disabled_intents || []).join(", ");
      // Governance settings are the admin's: everyone else reads them (the server refuses a save too).
      $("aria-settings-fields").disabled = !cfg.editable;
      $("aria-settings-status").textContent = cfg.editable ? "" : "Read-only: only an admin can change these settings.";
      const dl = $("aria-readiness");
      dl.replaceChildren();
      [["engine", `${cfg.engine} (${cfg.provider})`], ["model", cfg.model],
       ["reasoning", cfg.reasoning ? "on" : "off"], ["approval", cfg.approval_policy],
       ["agent_review", cfg.agent_review.ready ? "ready" : cfg.agent_review.problems.join(" ")],
       ["full_autonomy", cfg.full_autonomy.ready ? "ready" : cfg.full_autonomy.problems.join(" ")]].forEach(([k, v]) => {
        dl.appendChild(el("dt", null, k));
        dl.appendChild(el("dd", null, v));
      });
    } catch (e) { $("aria-settings-status").textContent = e.message; }
  });
  $("aria-settings-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.target;
    const body = {
      engine: form.engine.value.trim(),
      model: form.model.value.trim(),
      reasoning: form.reasoning.checked,
      disabled_intents: form.disabled_intents.value.split(",").map((s) => s.trim()).filter(Boolean),
    };
    try { await api("PATCH", "/config", body); $("aria-settings-status").textContent = "Saved."; }
    catch (e) { $("aria-settings-status").textContent = e.message; }
  });
})();
