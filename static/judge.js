// The judging page's keys: a digit gives the scale value marked by data-digit, "u" is
// "can't tell", "s" skips and "b" goes back. Each key presses the same button or link a
// click would, so the page works the same without JavaScript.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var selector = /^[0-9]$/.test(event.key)
      ? '#judge-form button[data-digit="' + event.key + '"]'
      : '[data-key="' + event.key + '"]';
    var control = document.querySelector(selector);
    if (!control) return;
    event.preventDefault();
    control.click();
  });
})();
