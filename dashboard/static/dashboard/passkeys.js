// Passkeys through the account API with this browser session: add one (security page), sign in
// with one (sign-in page) and confirm it's you (step-up page). Buttons carry data-passkey="add",
// "sign-in" or "step-up", and what to say when it fails in the page's language (data-text-*,
// dashboard/_passkey_texts.html): the API's own words are English, the browser's its own.
(function () {
  "use strict";
  if (!window.PublicKeyCredential) return;

  function b64urlToBytes(text) {
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(b64 + "===".slice((b64.length + 3) % 4));
    return Uint8Array.from(raw, function (c) { return c.charCodeAt(0); });
  }
  function bytesToB64url(buffer) {
    var bytes = new Uint8Array(buffer), text = "";
    for (var i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function csrf() {
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify(body || {}),
    }).catch(function () {
      var offline = new Error("offline");
      offline.code = "offline";
      throw offline;
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          var error = new Error(data.detail || "");
          error.code = data.code || "failed";
          throw error;
        }
        return data;
      });
    });
  }
  function say(button, text) {
    var out = document.getElementById(button.getAttribute("aria-describedby"));
    if (out) out.textContent = text;
  }
  // What went wrong, in the page's words: the browser's prompt closed or timed out, the
  // passkey already added or not accepted, the challenge expired, no connection, or else.
  var WORDS = {
    NotAllowedError: "cancelled",
    AbortError: "cancelled",
    InvalidStateError: "exists",
    passkey_exists: "exists",
    invalid_credentials: "refused",
    challenge_expired: "expired",
    offline: "offline",
  };
  function wording(button, error) {
    var word = WORDS[error.code] || WORDS[error.name] || "failed";
    return button.getAttribute("data-text-" + word) || button.getAttribute("data-text-failed") || "";
  }

  function add(button) {
    var name = (document.getElementById("passkey-name") || {}).value || "";
    return post("/api/v1/auth/register/begin", {}).then(function (begin) {
      var options = begin.publicKey;
      options.challenge = b64urlToBytes(options.challenge);
      options.user.id = b64urlToBytes(options.user.id);
      (options.excludeCredentials || []).forEach(function (c) { c.id = b64urlToBytes(c.id); });
      return navigator.credentials.create({ publicKey: options });
    }).then(function (credential) {
      return post("/api/v1/auth/register/complete", {
        name: name,
        credential: {
          id: credential.id,
          rawId: bytesToB64url(credential.rawId),
          type: credential.type,
          response: {
            attestationObject: bytesToB64url(credential.response.attestationObject),
            clientDataJSON: bytesToB64url(credential.response.clientDataJSON),
            transports: credential.response.getTransports ? credential.response.getTransports() : [],
          },
          clientExtensionResults: credential.getClientExtensionResults(),
        },
      });
    }).then(function () { window.location.reload(); });
  }

  function assertionOf(credential) {
    return {
      id: credential.id,
      rawId: bytesToB64url(credential.rawId),
      type: credential.type,
      response: {
        authenticatorData: bytesToB64url(credential.response.authenticatorData),
        clientDataJSON: bytesToB64url(credential.response.clientDataJSON),
        signature: bytesToB64url(credential.response.signature),
        userHandle: credential.response.userHandle ? bytesToB64url(credential.response.userHandle) : null,
      },
      clientExtensionResults: credential.getClientExtensionResults(),
    };
  }

  function stepUp(button) {
    return post("/api/v1/auth/step-up/begin", {}).then(function (begin) {
      var options = begin.publicKey;
      options.challenge = b64urlToBytes(options.challenge);
      (options.allowCredentials || []).forEach(function (c) { c.id = b64urlToBytes(c.id); });
      return navigator.credentials.get({ publicKey: options });
    }).then(function (credential) {
      return post("/api/v1/auth/step-up", { credential: assertionOf(credential) });
    }).then(function () { window.location.assign(button.getAttribute("data-next") || "/dashboard/security/"); });
  }

  function signIn(button) {
    return post("/api/v1/auth/login/begin", {}).then(function (begin) {
      var options = begin.publicKey;
      options.challenge = b64urlToBytes(options.challenge);
      (options.allowCredentials || []).forEach(function (c) { c.id = b64urlToBytes(c.id); });
      return navigator.credentials.get({ publicKey: options });
    }).then(function (credential) {
      return post("/api/v1/auth/login/complete", {
        credential: {
          id: credential.id,
          rawId: bytesToB64url(credential.rawId),
          type: credential.type,
          response: {
            authenticatorData: bytesToB64url(credential.response.authenticatorData),
            clientDataJSON: bytesToB64url(credential.response.clientDataJSON),
            signature: bytesToB64url(credential.response.signature),
            userHandle: credential.response.userHandle ? bytesToB64url(credential.response.userHandle) : null,
          },
          clientExtensionResults: credential.getClientExtensionResults(),
        },
      });
    }).then(function () { window.location.assign(button.getAttribute("data-next") || "/dashboard/"); });
  }

  document.querySelectorAll("[data-passkey]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      button.disabled = true;
      say(button, "");
      var kind = button.getAttribute("data-passkey");
      var run = kind === "add" ? add : kind === "step-up" ? stepUp : signIn;
      run(button).catch(function (error) {
        if (error.code === "step_up_required") {
          window.location.assign("/dashboard/confirm?next=" + encodeURIComponent(window.location.pathname));
          return;
        }
        say(button, wording(button, error));
        button.disabled = false;
      });
    });
  });
})();
