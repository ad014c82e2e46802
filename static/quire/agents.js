// Copy buttons on the agent token screen: <button data-copy-target="ELEMENT_ID">.
(function () {
  "use strict";

  function textOf(element) {
    return "value" in element && element.tagName !== "PRE" ? element.value : element.textContent;
  }

  function selectText(element) {
    if (typeof element.select === "function") {
      element.select();
      return;
    }
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function copied(button) {
    var label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    button.textContent = "Copied";
    button.classList.add("ag-copied");
    window.setTimeout(function () {
      button.textContent = label;
      button.classList.remove("ag-copied");
    }, 2000);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-copy-target]") : null;
    if (!button) {
      return;
    }
    var element = document.getElementById(button.getAttribute("data-copy-target"));
    if (!element) {
      return;
    }
    var text = textOf(element);
    // The Clipboard API needs a secure context (https or localhost); elsewhere fall back
    // to selecting the text and the older copy command.
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { copied(button); }, function () {
        selectText(element);
      });
      return;
    }
    selectText(element);
    try {
      if (document.execCommand("copy")) {
        copied(button);
      }
    } catch (error) {
      // Left selected: the admin can press Ctrl+C.
    }
  });
})();
