// The pay page without this file still works: the picker is a form, the address, amount
// and QR are in the HTML. This adds copy buttons, countdowns and live status.
(function () {
  "use strict";

  var main = document.querySelector("main");
  if (!main) return;
  // Words come from the page (translated in its template), never from this file.
  function word(name, fallback) { return main.getAttribute("data-text-" + name) || fallback; }

  // --- Copy buttons --------------------------------------------------------------------
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "offscreen";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(area);
      if (ok) { resolve(); } else { reject(new Error("copy failed")); }
    });
  }

  var live = document.getElementById("live");
  Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      copyText(source.getAttribute("data-value") || source.textContent.trim()).then(function () {
        button.textContent = "\u2713 " + word("copied", "Copied");
        button.classList.add("copied");
        window.setTimeout(function () {
          button.textContent = label;
          button.classList.remove("copied");
        }, 2000);
      }, function () {
        // Leave the text selected so the payer can copy it by hand.
        var range = document.createRange();
        range.selectNodeContents(source);
        var selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
      });
    });
  });

  // --- Countdowns ----------------------------------------------------------------------
  var countdowns = Array.prototype.map.call(document.querySelectorAll("time[data-countdown]"), function (el) {
    return { el: el, at: Date.parse(el.getAttribute("datetime")), kind: el.getAttribute("data-countdown"), done: false };
  }).filter(function (c) { return !isNaN(c.at); });

  // Digits as the page's language writes them (Arabic-Indic in Arabic), like the server's.
  var numberLocale = document.documentElement.getAttribute("data-number-locale") || "en";
  var digits = null;
  try { digits = new Intl.NumberFormat(numberLocale, { useGrouping: false }); } catch (e) { digits = null; }
  function n(x) { return digits ? digits.format(x) : String(x); }

  function left(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    if (h >= 24) return n(Math.floor(h / 24)) + " " + word("days", "d") + " " + n(h % 24) + " " + word("hours", "h");
    if (h > 0) return n(h) + " " + word("hours", "h") + " " + n(m) + " " + word("minutes", "min");
    return n(m) + ":" + (sec < 10 ? n(0) : "") + n(sec);
  }

  function tick() {
    var now = Date.now();
    countdowns.forEach(function (c) {
      if (c.done) return;
      var remaining = c.at - now;
      if (remaining <= 0) {
        c.done = true;
        c.el.textContent = c.kind === "quote" ? word("quote-over", "(quote window over)") : word("expired", "(expired)");
        if (c.kind === "draft") { window.location.reload(); return; } // the page offers a new quote
        if (c.kind !== "quote") schedule(0); // the state changes: ask the server now
        return;
      }
      var prefix = c.el.getAttribute("data-prefix");
      c.el.textContent = (prefix ? prefix + " " : "") + left(remaining);
    });
  }
  if (countdowns.length) {
    tick();
    window.setInterval(tick, 1000);
  }

  // --- Live status ---------------------------------------------------------------------
  // A long poll (paylinks/live.py) answers the moment the payment is seen or confirmed; where
  // it is not served (or fails), poll the status endpoint, backing off from 3 s to 30 s while
  // nothing changes. Reload the page when the state changes, so it is always the server's
  // rendering.
  var url = main.getAttribute("data-status-url");
  var liveUrl = main.getAttribute("data-live-url");
  var liveState = main.getAttribute("data-live-state");
  var state = main.getAttribute("data-state");
  var polling = main.getAttribute("data-poll") === "on";
  var delay = 3000, timer = null, liveOn = false;
  var confirmations = document.querySelector("[data-confirmations]");

  function schedule(ms) {
    if (!url || (!polling && ms !== 0)) return;
    if (timer) window.clearTimeout(timer);
    timer = window.setTimeout(poll, ms);
  }

  // Shows a status document; false once the page is reloading.
  function show(body) {
    var now = body.status + ":" + (body.draftStatus || "");
    if (now !== state) {
      window.location.reload();
      return false;
    }
    if (confirmations && String(body.confirmations) !== confirmations.textContent) {
      confirmations.textContent = String(body.confirmations);
      delay = 3000;
    }
    liveState = now + ":" + body.confirmations;
    return true;
  }

  function parsed(request) {
    if (request.status !== 200) return null;
    try { return JSON.parse(request.responseText); } catch (e) { return null; }
  }

  function waitForChange() {
    var request = new XMLHttpRequest();
    request.open("GET", liveUrl + "?since=" + encodeURIComponent(liveState || ""));
    request.setRequestHeader("Accept", "application/json");
    request.timeout = 45000;
    request.onload = function () {
      var body = parsed(request);
      liveOn = !!body;
      if (!body) { schedule(delay); return; }  // not served here: poll instead
      if (show(body)) waitForChange();
    };
    request.onerror = request.ontimeout = function () { liveOn = false; schedule(delay); };
    request.send();
  }

  function poll() {
    timer = null;
    var request = new XMLHttpRequest();
    request.open("GET", url);
    request.setRequestHeader("Accept", "application/json");
    request.timeout = 10000;
    request.onload = function () {
      var body = parsed(request);
      if (body && !show(body)) return;
      if (liveOn) return;  // the long poll carries on
      if (request.status === 429) delay = 30000;
      delay = Math.min(Math.round(delay * 1.5), 30000);
      schedule(delay);
    };
    request.onerror = request.ontimeout = function () {
      delay = Math.min(delay * 2, 30000);
      schedule(delay);
    };
    request.send();
  }

  // A page brought back from the background catches up at once.
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") { delay = 3000; schedule(0); }
  });

  if (polling && liveUrl) { liveOn = true; waitForChange(); }
  else if (polling) schedule(delay);
})();
