// Progressive enhancement only: every page works without it.
(function () {
  "use strict";

  // Copy buttons: <button data-copy="text">.
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button || !navigator.clipboard) return;
    navigator.clipboard.writeText(button.getAttribute("data-copy")).then(function () {
      var label = button.textContent;
      button.textContent = button.getAttribute("data-copied") || "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  });

  // Live fee preview on the create-draft form: asks the server (the same fee calculator).
  var form = document.querySelector("form[data-fee-preview]");
  if (!form) return;
  var output = document.getElementById("fee-preview");
  var timer = null;
  function refresh() {
    var params = new URLSearchParams(new FormData(form));
    params.delete("csrfmiddlewaretoken");
    fetch(form.getAttribute("data-fee-preview") + "?" + params.toString(), {
      headers: { "Accept": "application/json" },
      credentials: "same-origin",
    })
      .then(function (response) { return response.json(); })
      .then(function (body) { output.textContent = body.text; })
      .catch(function () { /* keep the last preview */ });
  }
  form.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(refresh, 350);
  });
  var button = form.querySelector("[name=preview]");
  if (button) button.hidden = true;  // the live preview replaces the no-JS "Preview fee" button
})();
