// Confirm destructive forms (data-confirm). No inline script anywhere: the
// Content-Security-Policy allows scripts from this origin's files only.
document.addEventListener("submit", function (ev) {
  var msg = ev.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) {
    ev.preventDefault();
  }
});
