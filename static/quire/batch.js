// The queue's batch selection: shift-click ticks a range, "Select the low-risk ones" ticks the
// rows marked low-risk, and the bar counts what is ticked. Without this script the ticks and
// buttons still work (each tick box belongs to the batch form).
(function () {
  "use strict";

  function start() {
    var form = document.getElementById("rv-batch");
    if (!form) {
      return;
    }
    var boxes = Array.prototype.slice.call(document.querySelectorAll("input.rv-pick"));
    var count = form.querySelector(".rv-batch-count");
    var lowRisk = form.querySelector(".rv-pick-low-risk");
    var none = form.querySelector(".rv-pick-none");
    var last = null;

    function update() {
      var ticked = boxes.filter(function (box) { return box.checked; }).length;
      count.textContent = ticked ? ticked + " selected" : "None selected";
      boxes.forEach(function (box) {
        box.closest("tr").classList.toggle("rv-row-picked", box.checked);
      });
      none.hidden = !ticked;
    }

    boxes.forEach(function (box) {
      box.addEventListener("click", function (event) {
        if (event.shiftKey && last !== null && last !== box) {
          var from = boxes.indexOf(last);
          var to = boxes.indexOf(box);
          var lo = Math.min(from, to);
          var hi = Math.max(from, to);
          for (var i = lo; i <= hi; i++) {
            boxes[i].checked = box.checked;
          }
        }
        last = box;
        update();
      });
    });
    lowRisk.hidden = !boxes.some(function (box) { return box.hasAttribute("data-low-risk"); });
    lowRisk.addEventListener("click", function () {
      boxes.forEach(function (box) { box.checked = box.hasAttribute("data-low-risk"); });
      update();
    });
    none.addEventListener("click", function () {
      boxes.forEach(function (box) { box.checked = false; });
      update();
    });
    update();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
