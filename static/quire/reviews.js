// Keyboard shortcuts for reviewers. On the queue: j/k move between proposals, Enter opens
// one, a approves it (straight from the row when the row allows it), r opens the reason box.
// On a review page: j/k move between changes, a then a (or Enter) approves, r goes to the
// reason box.
(function () {
  "use strict";

  function typing(element) {
    var tag = element && element.tagName;
    return (tag === "INPUT" && element.type !== "checkbox") || tag === "TEXTAREA" || tag === "SELECT" || (element && element.isContentEditable);
  }

  function visible(element) {
    return !!(element.offsetWidth || element.offsetHeight || element.getClientRects().length);
  }

  function queue(table) {
    var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr.rv-row"));
    var current = -1;

    function select(index) {
      if (!rows.length) {
        return;
      }
      current = Math.max(0, Math.min(rows.length - 1, index));
      rows.forEach(function (row, i) {
        row.classList.toggle("rv-row-current", i === current);
        row.removeAttribute("aria-current");
      });
      rows[current].setAttribute("aria-current", "true");
      rows[current].querySelector("a.rv-queue-link").focus({ preventScroll: true });
      rows[current].scrollIntoView({ block: "nearest" });
    }

    table.addEventListener("focusin", function (event) {
      var row = event.target.closest("tr.rv-row");
      if (row && rows.indexOf(row) !== current) {
        current = rows.indexOf(row);
        rows.forEach(function (r, i) { r.classList.toggle("rv-row-current", i === current); });
      }
    });

    return function (key) {
      if (key === "j") {
        select(current + 1);
      } else if (key === "k") {
        select(current < 0 ? 0 : current - 1);
      } else if (current >= 0 && key === "a") {
        var approve = rows[current].querySelector(".rv-row-approve button");
        if (approve) {
          approve.click();
        } else {
          window.location.href = rows[current].querySelector("a.rv-queue-link").href + "#decide";
        }
      } else if (current >= 0 && key === "x") {
        var pick = rows[current].querySelector("input.rv-pick");
        if (pick) {
          pick.click();
        }
      } else if (current >= 0 && key === "r") {
        var box = rows[current].querySelector("details.rv-row-reject");
        if (box) {
          box.open = true;
          box.querySelector("input[name=comment]").focus();
        }
      } else {
        return false;
      }
      return true;
    };
  }

  // `a` on a review page asks first: the first press brings the Approve button into view
  // with the focus on it and says what a second press does; `a` again (or Enter) approves,
  // any other key lets it go.
  function armApproval(approve) {
    var note = document.getElementById("rv-approve-armed");
    if (note && approve.classList.contains("rv-armed")) {
      approve.click();
      return;
    }
    if (!note) {
      note = document.createElement("p");
      note.id = "rv-approve-armed";
      note.className = "rv-approve-armed";
      note.setAttribute("role", "status");
      approve.parentNode.insertBefore(note, approve.nextSibling);
    }
    note.textContent = "Press a again or Enter to approve; any other key cancels.";
    approve.classList.add("rv-armed");
    approve.scrollIntoView({ block: "center" });
    approve.focus({ preventScroll: true });
  }

  function disarmApproval() {
    var note = document.getElementById("rv-approve-armed");
    if (note) {
      note.parentNode.removeChild(note);
    }
    Array.prototype.forEach.call(document.querySelectorAll(".rv-armed"), function (b) {
      b.classList.remove("rv-armed");
    });
  }

  function review(marker) {
    var current = -1;
    function changes() {
      return Array.prototype.filter.call(
        document.querySelectorAll("#text .rv-changed, #text .rv-inserted, #text .rv-deleted"),
        visible
      );
    }
    return function (key) {
      if (key !== "a" && key !== "Enter") {
        disarmApproval();
      }
      if (key === "j" || key === "k") {
        var found = changes();
        if (!found.length) {
          return false;
        }
        current = key === "j" ? Math.min(found.length - 1, current + 1) : Math.max(0, current - 1);
        found.forEach(function (el) { el.classList.remove("rv-change-current"); });
        found[current].classList.add("rv-change-current");
        found[current].scrollIntoView({ block: "center" });
      } else if (key === "a") {
        var approve = document.querySelector("#approve-form button[type=submit]");
        if (!approve) {
          return false;
        }
        armApproval(approve);
        return true;
      } else if (key === "r") {
        var reason = document.getElementById("id_reject_comment");
        if (!reason) {
          return false;
        }
        reason.scrollIntoView({ block: "center" });
        reason.focus();
      } else if (key === "n" && marker.getAttribute("data-next")) {
        window.location.href = marker.getAttribute("data-next");
      } else {
        return false;
      }
      return true;
    };
  }

  // The review page says once it is shown that this reviewer is looking at it (presence,
  // "what changed since you last looked", what a batch counts as shown): a POST with the
  // page's digest of the change, since a GET never writes (reviews.views_review.review_seen).
  // The queue does the same for the rows it shows whole (reviews.views.queue_seen).
  function seen() {
    var form = document.getElementById("rv-seen");
    if (form && window.fetch && window.FormData) {
      fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin", keepalive: true })
        .catch(function () { /* presence is a hint: nothing to tell the reviewer */ });
    }
  }

  function start() {
    seen();
    var marker = document.querySelector("[data-shortcuts]");
    if (!marker) {
      return;
    }
    var handle = marker.getAttribute("data-shortcuts") === "queue" ? queue(marker) : review(marker);
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) {
        if (event.key === "Escape" && event.target.closest) {
          var box = event.target.closest("details.rv-row-reject");
          if (box) {
            box.open = false;
            box.closest("tr").querySelector("a.rv-queue-link").focus();
          }
        }
        return;
      }
      if (handle(event.key)) {
        event.preventDefault();
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
