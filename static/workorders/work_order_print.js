/* The printable work order's Print button (no inline scripts: CSP). */
(() => {
  "use strict";
  const button = document.getElementById("print-button");
  if (button) button.addEventListener("click", () => { window.print(); });
})();
