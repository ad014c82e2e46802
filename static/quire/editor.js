// The page editor: a live preview rendered by the server (the page view's own renderer and
// sanitiser, so it cannot differ), and the text kept in this browser until it is saved, so
// a refused save, an expired session or a closed tab loses nothing.
(function () {
  "use strict";
  var FIELDS = ["title", "body", "tags", "instructions", "change_summary"];

  function setUp(form) {
    var body = form.querySelector("textarea[name=body]");
    var output = form.querySelector(".preview-output");
    var url = form.getAttribute("data-preview");
    var key = "quire-draft:" + form.getAttribute("data-draft");
    var timer = null;

    function field(name) {
      return form.querySelector("[name=" + name + "]");
    }

    function refresh() {
      if (!output || !url) {
        return;
      }
      var data = new FormData();
      data.append("csrfmiddlewaretoken", field("csrfmiddlewaretoken").value);
      data.append("body", body.value);
      data.append("title", field("title") ? field("title").value : "");
      fetch(url, { method: "POST", body: data, credentials: "same-origin" })
        .then(function (response) { return response.text(); })
        .then(function (html) { output.innerHTML = html; });
    }

    function save() {
      var draft = {};
      FIELDS.forEach(function (name) {
        if (field(name)) {
          draft[name] = field(name).value;
        }
      });
      try {
        window.localStorage.setItem(key, JSON.stringify(draft));
      } catch (error) {
        // Storage full or switched off: nothing to keep the text in.
      }
    }

    function stored() {
      try {
        return JSON.parse(window.localStorage.getItem(key) || "null");
      } catch (error) {
        return null;
      }
    }

    function forget() {
      try {
        window.localStorage.removeItem(key);
      } catch (error) {
        // Nothing to forget.
      }
    }

    form.addEventListener("input", function (event) {
      save();
      if (event.target === body || event.target === field("title")) {
        window.clearTimeout(timer);
        timer = window.setTimeout(refresh, 250);
      }
    });
    form.addEventListener("submit", save);

    var draft = stored();
    var banner = form.querySelector(".draft-restore");
    if (draft && body && draft.body !== undefined && draft.body !== body.value && banner) {
      banner.hidden = false;
      banner.querySelector(".draft-restore-button").addEventListener("click", function () {
        FIELDS.forEach(function (name) {
          if (field(name) && draft[name] !== undefined) {
            field(name).value = draft[name];
          }
        });
        banner.hidden = true;
        refresh();
      });
      banner.querySelector(".draft-discard-button").addEventListener("click", function () {
        forget();
        banner.hidden = true;
      });
    } else if (draft) {
      // The form already holds this text (saved, or sent back after a refusal).
      forget();
    }
    if (body && body.value) {
      refresh();
    }
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll("form[data-draft]"), setUp);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
