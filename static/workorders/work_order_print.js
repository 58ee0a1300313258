/* The printable work order's Print button (no inline scripts: CSP). */
(function () {
  "use strict";
  var button = document.getElementById("print-button");
  if (button) button.addEventListener("click", function () { window.print(); });
})();
