// A search-as-you-type page picker: <div class="picker" data-picker="URL"> holding a
// .picker-input (what the person types), a .picker-value (the chosen page id, sent with the
// form) and a .picker-options listbox. The URL answers {"pages": [{pageId, title, path}]}.
(function () {
  "use strict";

  function setUp(picker) {
    var input = picker.querySelector(".picker-input");
    var value = picker.querySelector(".picker-value");
    var list = picker.querySelector(".picker-options");
    var url = picker.getAttribute("data-picker");
    var timer = null;
    var active = -1;
    var asked = 0;

    function options() {
      return Array.prototype.slice.call(list.querySelectorAll("[role=option]"));
    }

    function close() {
      list.hidden = true;
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
      active = -1;
    }

    function highlight(index) {
      var all = options();
      if (!all.length) {
        return;
      }
      active = (index + all.length) % all.length;
      all.forEach(function (option, i) { option.setAttribute("aria-selected", i === active ? "true" : "false"); });
      input.setAttribute("aria-activedescendant", all[active].id);
      all[active].scrollIntoView({ block: "nearest" });
    }

    function choose(option) {
      // An answer still on its way must not reopen the list over the choice.
      window.clearTimeout(timer);
      asked++;
      value.value = option.getAttribute("data-page-id");
      input.value = option.getAttribute("data-label");
      close();
      picker.dispatchEvent(new CustomEvent("picked", { bubbles: true, detail: { pageId: value.value } }));
    }

    function show(pages) {
      list.textContent = "";
      pages.forEach(function (page, i) {
        var option = document.createElement("li");
        option.id = list.id + "-" + i;
        option.setAttribute("role", "option");
        option.setAttribute("aria-selected", "false");
        option.setAttribute("data-page-id", page.pageId);
        option.setAttribute("data-label", page.path + " — " + page.title);
        var title = document.createElement("span");
        title.className = "picker-title";
        title.textContent = page.title;
        var path = document.createElement("span");
        path.className = "picker-path";
        path.textContent = page.path;
        option.appendChild(title);
        option.appendChild(path);
        list.appendChild(option);
      });
      if (!pages.length) {
        var none = document.createElement("li");
        none.className = "picker-none";
        none.textContent = "No live page matches.";
        list.appendChild(none);
      }
      list.hidden = false;
      input.setAttribute("aria-expanded", "true");
      active = -1;
    }

    function ask() {
      var mine = ++asked;
      fetch(url + "?q=" + encodeURIComponent(input.value), { credentials: "same-origin" })
        .then(function (response) { return response.json(); })
        .then(function (data) {
          if (mine === asked) {
            show(data.pages || []);
          }
        });
    }

    input.addEventListener("input", function () {
      value.value = "";
      window.clearTimeout(timer);
      timer = window.setTimeout(ask, 150);
    });
    input.addEventListener("focus", function () {
      if (!value.value && list.hidden) {
        ask();
      }
    });
    input.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown") {
        highlight(active + 1);
      } else if (event.key === "ArrowUp") {
        highlight(active - 1);
      } else if (event.key === "Enter" && !list.hidden && options().length) {
        choose(options()[Math.max(active, 0)]);
      } else if (event.key === "Escape") {
        close();
      } else {
        return;
      }
      event.preventDefault();
    });
    list.addEventListener("mousedown", function (event) {
      var option = event.target.closest("[role=option]");
      if (option) {
        event.preventDefault();
        choose(option);
      }
    });
    input.addEventListener("blur", function () { window.setTimeout(close, 150); });
    // Someone who typed before this script ran still gets their answer.
    if (input.value && !value.value && document.activeElement === input) {
      ask();
    }
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll(".picker[data-picker]"), setUp);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
