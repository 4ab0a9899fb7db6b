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

  // Draft forms: the currency and method lists follow the network (the server renders every
  // option and disables the ones that do not fit; without JS "Update choices" does this).
  Array.prototype.forEach.call(document.querySelectorAll("[data-js-hide]"), function (el) { el.hidden = true; });
  function fit(select, test) {
    if (!select) return;
    Array.prototype.forEach.call(select.options, function (option) {
      var ok = !option.value || test(option);
      option.hidden = !ok;
      option.disabled = !ok;
    });
    if (select.selectedOptions.length && select.selectedOptions[0].disabled) {
      var first = Array.prototype.find.call(select.options, function (o) { return !o.disabled; });
      select.value = first ? first.value : "";
    }
  }
  function follow(scope) {
    var network = scope.querySelector("[name$=network]");
    var currency = scope.querySelector("[name$=currency]");
    var method = scope.querySelector("[name$=paymentMethod]");
    if (!network || !currency) return;
    function update() {
      // No network chosen yet (a pay-link option): every currency stays on offer.
      fit(currency, function (o) { return !network.value || (" " + (o.getAttribute("data-networks") || "") + " ").indexOf(" " + network.value + " ") >= 0; });
      var asset = currency.value + "@" + network.value;
      fit(method, function (o) { return (" " + (o.getAttribute("data-assets") || "") + " ").indexOf(" " + asset + " ") >= 0; });
      var lightning = method && method.value === "Lightning";
      var ln = scope.querySelector("[data-lightning-fields]");
      var onchain = scope.querySelector("[data-onchain-fields]");
      if (ln) ln.hidden = !lightning;
      if (onchain) onchain.hidden = lightning;
    }
    // Fiat or exact pricing: only the fields of the chosen one are shown.
    var pricing = scope.querySelectorAll("[name$=pricing]");
    function price() {
      var chosen = scope.querySelector("[name$=pricing]:checked");
      Array.prototype.forEach.call(scope.querySelectorAll("[data-pricing]"), function (el) {
        el.hidden = chosen && el.getAttribute("data-pricing") !== chosen.value;
      });
    }
    Array.prototype.forEach.call(pricing, function (radio) { radio.addEventListener("change", price); });
    price();
    network.addEventListener("change", update);
    currency.addEventListener("change", update);
    if (method) method.addEventListener("change", update);
    update();
  }
  Array.prototype.forEach.call(document.querySelectorAll("[data-draft-form]"), follow);

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
