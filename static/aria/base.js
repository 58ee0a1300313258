/* Fills the header's access badge from GET /api/v1/me: user, scopes, service-account flag. */
(function () {
  "use strict";
  var badge = document.getElementById("access-badge");
  if (!badge || !window.fetch) return;

  function part(role) { return badge.querySelector('[data-role="' + role + '"]'); }

  fetch(badge.getAttribute("data-me-url") || "/api/v1/me", {
    credentials: "same-origin",
    headers: { Accept: "application/json" }
  })
    .then(function (response) { return response.ok ? response.json() : null; })
    .then(function (me) {
      if (!me) return;
      part("user").textContent = me.display_name || me.username;
      var scopes = part("scopes");
      scopes.textContent = "";
      (me.scopes || []).forEach(function (scope) {
        var chip = document.createElement("span");
        chip.className = "scope scope-" + String(scope).replace(/[^a-z_-]/gi, "");
        chip.textContent = scope;
        scopes.appendChild(chip);
      });
      if (!me.scopes || me.scopes.length === 0) {
        var none = document.createElement("span");
        none.className = "scope scope-none";
        none.textContent = "no scopes";
        scopes.appendChild(none);
      }
      part("service").hidden = !me.is_service_account;
      badge.setAttribute("data-loaded", "true");
    })
    .catch(function () { /* the badge keeps the server-rendered username */ });
})();
