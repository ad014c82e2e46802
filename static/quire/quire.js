// Quire's shared behaviour, on every screen: confirmations, the folding top bar and page
// tree on small screens, and the diffs' layout and folded unchanged lines.
(function () {
  "use strict";
  var narrow = window.matchMedia("(max-width: 800px)");

  // Forms marked data-confirm ask before they are sent (archive, remove, revoke...).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  });

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!target.closest) {
      return;
    }
    // The top bar's menu button (small screens only: the menu is always shown on wide ones).
    var toggle = target.closest(".menu-toggle");
    if (toggle) {
      var open = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      document.body.classList.toggle("menu-open", open);
      return;
    }
    // "⋯ 12 unchanged lines": show them in place.
    var fold = target.closest("[data-unfold]");
    if (fold) {
      var diff = fold.closest(".rv-diff");
      var id = fold.getAttribute("data-unfold");
      Array.prototype.forEach.call(
        diff.querySelectorAll('[data-fold="' + id + '"]'),
        function (row) { row.hidden = false; }
      );
      var row = fold.closest("tr, .rv-skip");
      row.parentNode.removeChild(row);
    }
  });

  // A form saves once: its one-time token (input form_token) is claimed by the save. A form
  // reopened with Back is fetched again with a new token while the browser puts the typed
  // text back, so the token it was sent with is kept for this tab and put back too: saving
  // it again is then recognised and shows what the first save made.
  var TOKEN_KEY = "quire-form-token:";
  document.addEventListener("submit", function (event) {
    var token = event.target.querySelector && event.target.querySelector("input[name=form_token]");
    if (token && !event.defaultPrevented) {
      try {
        window.sessionStorage.setItem(TOKEN_KEY + window.location.pathname, token.value);
      } catch (e) { /* storage off: the server's duplicate-title question still holds */ }
    }
  });

  function restoreFormTokens() {
    var navigation = window.performance && performance.getEntriesByType
      ? performance.getEntriesByType("navigation")[0] : null;
    if (!navigation || navigation.type !== "back_forward") {
      return;
    }
    var sent = null;
    try {
      sent = window.sessionStorage.getItem(TOKEN_KEY + window.location.pathname);
    } catch (e) { return; }
    if (sent) {
      Array.prototype.forEach.call(document.querySelectorAll("input[name=form_token]"), function (t) {
        t.value = sent;
      });
    }
  }

  function settle() {
    document.documentElement.classList.add("js");
    restoreFormTokens();
    if (narrow.matches) {
      // The tree would push the content below the fold: start folded.
      Array.prototype.forEach.call(document.querySelectorAll(".sidebar-fold"), function (d) {
        d.open = false;
      });
      // Long forms that are not in use fold too (the queue's filters).
      Array.prototype.forEach.call(document.querySelectorAll("details[data-fold-narrow]"), function (d) {
        d.open = false;
      });
      // Side-by-side columns do not fit a phone: start inline.
      Array.prototype.forEach.call(document.querySelectorAll(".rv-layout-inline"), function (r) {
        r.checked = true;
      });
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", settle);
  } else {
    settle();
  }
})();
