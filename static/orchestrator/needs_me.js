/* The "needs you" nav badge: the number of plans paused on the viewer's decision.
 * Markup (in the nav):  <a href="/plans/">Plans <span id="needs-me-badge" class="nav-badge" hidden></span></a>
 * Script (after aria/events.js):  <script src="{% static 'orchestrator/needs_me.js' %}" defer></script>
 * Counts come from GET /api/v1/aria/needs-me and refresh on plan_updated / interaction_needed /
 * interaction_closed events (an approver gets no plan_updated of another owner's plan). */
(() => {
  "use strict";
  const badge = document.getElementById("needs-me-badge");
  if (!badge) return;
  const url = badge.getAttribute("data-url") || "/api/v1/aria/needs-me";
  let timer = null;
  let latest = 0; // the first load and frame-driven refreshes may resolve out of order: newest wins

  const refresh = async () => {
    const mine = ++latest;
    try {
      const body = await window.Aria.api("GET", url);
      if (mine !== latest) return;
      badge.textContent = String(body.count);
      badge.hidden = body.count === 0;
      badge.setAttribute("title", `${body.count} plan(s) waiting for your decision`);
    } catch (err) { /* the badge keeps its last count */ }
  };

  const soon = () => {
    if (timer) return;
    timer = setTimeout(() => { timer = null; refresh(); }, 300);
  };

  refresh();
  if (window.AriaEvents) {
    window.AriaEvents.connect({ types: ["plan_updated", "interaction_needed", "interaction_closed"], onFrame: soon });
  } else {
    setInterval(refresh, 30000);
  }
})();
