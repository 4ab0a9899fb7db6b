// Pays the draft from a wallet in the payer's browser, where there is one: EVM wallets found
// through EIP-6963 (or the older window.ethereum of EIP-1193), Lightning wallets through WebLN.
// The wallet is asked for exactly what the server rendered into #wallet-request (the draft's
// transfer, built from the registry: paylinks/views.py, payments/wallet_requests.py), never for
// anything else. Without this file, or without a wallet, the page is as before: QR, address, copy.
(function () {
  "use strict";

  var section = document.getElementById("wallet");
  if (!section) return;
  var buttons = document.getElementById("wallet-buttons");
  var message = document.getElementById("wallet-message");
  var data = document.getElementById("wallet-request");
  var request = null;
  if (data) {
    try { request = JSON.parse(data.textContent); } catch (e) { request = null; }
  }
  var invoice = section.getAttribute("data-invoice");
  var busy = false;
  var done = false;
  // A payment sent from this tab is not offered again before the page shows it (a reload).
  var sentKey = "wallet-sent:" + ((request && request.transaction.to + request.transaction.value +
    (request.transaction.data || "")) || invoice || "");

  function text(name) { return section.getAttribute("data-text-" + name) || ""; }

  function say(name, kind, hash) {
    message.textContent = text(name);
    message.className = "wallet-message" + (kind ? " " + kind : "");
    message.setAttribute("role", kind === "error" ? "alert" : "status");
    if (hash) {
      var code = document.createElement("code");
      code.id = "wallet-tx";
      code.className = "wrap small";
      code.textContent = hash;
      message.appendChild(document.createTextNode(" "));
      message.appendChild(code);
    }
    message.hidden = false;
  }

  function enable(on) {
    Array.prototype.forEach.call(buttons.querySelectorAll("button"), function (b) { b.disabled = !on; });
  }

  function remembered() {
    try { return window.sessionStorage.getItem(sentKey); } catch (e) { return null; }
  }

  function remember(value) {
    try { window.sessionStorage.setItem(sentKey, value); } catch (e) { /* private mode: nothing kept */ }
  }

  function finished(name, hash) {
    done = true;
    buttons.textContent = "";
    section.hidden = false;
    say(name, "ok", hash);
  }

  function addButton(label, onClick) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "wallet-pay";
    button.textContent = label;
    button.addEventListener("click", onClick);
    buttons.appendChild(button);
  }

  // Wallets put the code on the error, some nested in data.originalError (mobile MetaMask).
  function codeOf(error) {
    if (!error) return null;
    if (typeof error.code === "number") return error.code;
    var inner = error.data && (error.data.originalError || error.data);
    return inner && typeof inner.code === "number" ? inner.code : null;
  }

  function detailOf(error) {
    if (!error) return "";
    var parts = [error.message, error.data && error.data.message,
      error.data && error.data.originalError && error.data.originalError.message];
    return parts.filter(Boolean).join(" ");
  }

  function failed(error) {
    var code = codeOf(error);
    if (code === 4001) { say("rejected", "error"); return; }
    if (/insufficient funds|exceeds balance|insufficient balance/i.test(detailOf(error))) {
      say("funds", "error");
      return;
    }
    if (code === 4902) { say("wrong-network", "error"); return; }
    say("failed", "error");
  }

  // --- EVM (EIP-6963, EIP-1193, EIP-3326, EIP-3085) --------------------------------------
  var announced = {};  // uuid -> {name, provider}
  var order = [];

  function sameChain(a, b) {
    try { return BigInt(a) === BigInt(b); } catch (e) { return false; }
  }

  function switchChain(provider) {
    var target = [{ chainId: request.chainId }];
    return provider.request({ method: "wallet_switchEthereumChain", params: target }).catch(function (error) {
      if (codeOf(error) !== 4902 || !request.addChain) throw error;
      // The wallet does not know the chain: it asks the payer to add it, then to switch.
      return provider.request({ method: "wallet_addEthereumChain", params: [request.addChain] }).then(function () {
        return provider.request({ method: "wallet_switchEthereumChain", params: target });
      });
    });
  }

  function payEvm(provider) {
    if (busy || done) return;
    busy = true;
    enable(false);
    say("confirm");
    var from = null;
    provider.request({ method: "eth_requestAccounts" }).then(function (accounts) {
      if (!accounts || !accounts.length) throw { code: 4001 };
      from = accounts[0];
      return provider.request({ method: "eth_chainId" });
    }).then(function (chain) {
      if (sameChain(chain, request.chainId)) return chain;
      return switchChain(provider).then(function () { return provider.request({ method: "eth_chainId" }); });
    }).then(function (chain) {
      if (!sameChain(chain, request.chainId)) throw { code: 4902 };
      var transaction = { from: from };
      Object.keys(request.transaction).forEach(function (k) { transaction[k] = request.transaction[k]; });
      return provider.request({ method: "eth_sendTransaction", params: [transaction] });
    }).then(function (hash) {
      remember(String(hash));
      finished("sent", String(hash));
    }, failed).then(function () {
      busy = false;
      enable(true);
    });
  }

  function renderEvm() {
    if (done) return;
    var wallets = order.map(function (uuid) { return announced[uuid]; });
    if (!wallets.length && window.ethereum && typeof window.ethereum.request === "function") {
      wallets = [{ name: text("browser-wallet"), provider: window.ethereum }];
    }
    buttons.textContent = "";
    wallets.forEach(function (wallet) {
      addButton(text("pay-with").replace("{wallet}", wallet.name), function () { payEvm(wallet.provider); });
    });
    section.hidden = wallets.length === 0;
  }

  if (request) {
    window.addEventListener("eip6963:announceProvider", function (event) {
      var detail = event.detail;
      if (!detail || !detail.info || !detail.provider || typeof detail.provider.request !== "function") return;
      var uuid = String(detail.info.uuid || detail.info.rdns || detail.info.name);
      if (!announced[uuid]) order.push(uuid);
      // The name is the wallet's own text: shown as text, never as markup (textContent).
      announced[uuid] = { name: String(detail.info.name || text("browser-wallet")).slice(0, 40), provider: detail.provider };
      renderEvm();
    });
    window.dispatchEvent(new Event("eip6963:requestProvider"));
    var hash = remembered();
    if (hash) finished("sent", hash);
    else renderEvm();
  }

  // --- Lightning (WebLN) -------------------------------------------------------------------
  function payLightning() {
    if (busy || done) return;
    busy = true;
    enable(false);
    say("confirm");
    var webln = window.webln;
    Promise.resolve(webln.enable()).then(function () {
      return webln.sendPayment(invoice);
    }).then(function (answer) {
      if (!answer || !answer.preimage) throw new Error("no preimage");
      remember(String(answer.preimage));
      finished("ln-paid");
    }).catch(function () {
      say("ln-failed", "error");
    }).then(function () {
      busy = false;
      enable(true);
    });
  }

  function renderLightning() {
    if (done || buttons.childNodes.length || !window.webln) return;
    addButton(text("lightning-wallet"), payLightning);
    section.hidden = false;
  }

  if (invoice) {
    if (remembered()) finished("ln-paid");
    else {
      renderLightning();
      // Some extensions inject window.webln a moment after the page's scripts ran.
      window.setTimeout(renderLightning, 500);
    }
  }
})();
