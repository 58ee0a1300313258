/* Fills the header's access badge from GET /api/v1/me: user, scopes, service-account flag. */
(() => {
  "use strict";
  const badge = document.getElementById("access-badge");
  if (!badge) return;
  const { el, api } = window.Aria;
  const part = (role) => badge.querySelector(`[data-role="${role}"]`);

  const show = (me) => {
    part("user").textContent = me.display_name || me.username;
    const scopes = part("scopes");
    scopes.textContent = "";
    (me.scopes || []).forEach((scope) => {
      scopes.appendChild(el("span", `scope scope-${String(scope).replace(/[^a-z_-]/gi, "")}`, scope));
    });
    if (!me.scopes || me.scopes.length === 0) scopes.appendChild(el("span", "scope scope-none", "no scopes"));
    part("service").hidden = !me.is_service_account;
    badge.setAttribute("data-loaded", "true");
  };

  (async () => {
    try {
      show(await api("GET", badge.getAttribute("data-me-url") || "/api/v1/me"));
    } catch (err) { /* the badge keeps the server-rendered username */ }
  })();

})();
