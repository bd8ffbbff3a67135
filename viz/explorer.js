// The pass explorer's script: highlights, tabs and folding, in plain JS.
(function () {
  "use strict";
  var colours = 8;
  var colourOf = {}; // "var w1" or "op main:3" -> its colour, 0..colours-1
  var order = []; // the highlighted keys, oldest first

  // nodes returns the spans of the texts and the nodes of the drawings
  // that show a var or an op.
  function nodes(kind, key) {
    var out = Array.prototype.slice.call(
      document.querySelectorAll("[data-" + kind + '="' + CSS.escape(key) + '"]'));
    var opText = kind === "op" && key.indexOf("main:") === 0 ? "op " + key.slice(5) + " " : null;
    document.querySelectorAll(".graph g.node").forEach(function (g) {
      var t = g.querySelector("text");
      var s = t ? t.textContent : "";
      if (kind === "var" ? s === key : opText !== null && s.indexOf(opText) === 0) {
        out.push(g);
      }
    });
    return out;
  }

  // toggle highlights a var or an op everywhere in the next free colour,
  // or clears it. When every colour is taken, the oldest gives its up.
  function toggle(kind, key) {
    var id = kind + " " + key;
    var c = colourOf[id];
    if (c !== undefined) {
      nodes(kind, key).forEach(function (el) { el.classList.remove("hl", "hl" + c); });
      delete colourOf[id];
      order.splice(order.indexOf(id), 1);
      return;
    }
    if (order.length === colours) {
      var old = order[0], sp = old.indexOf(" ");
      toggle(old.slice(0, sp), old.slice(sp + 1));
    }
    var used = {};
    order.forEach(function (k) { used[colourOf[k]] = true; });
    for (c = 0; used[c]; c++) {}
    colourOf[id] = c;
    order.push(id);
    nodes(kind, key).forEach(function (el) { el.classList.add("hl", "hl" + c); });
  }

  function showRun(tab) {
    document.querySelectorAll(".tab").forEach(function (t) {
      var on = t === tab;
      t.setAttribute("aria-selected", on ? "true" : "false");
      document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
    });
  }

  document.addEventListener("click", function (ev) {
    var el = ev.target.closest(".var, .op, .tab, .head > h2, .graph g.node");
    if (!el) {
      return;
    }
    if (el.classList.contains("var")) {
      toggle("var", el.dataset.var);
      // A declaration in the complete pass's column: show or hide where
      // the var's mapping came from, below the line.
      var line = el.closest(".l.orig");
      var origin = line && line.nextElementSibling;
      if (origin && origin.classList.contains("origin")) {
        origin.hidden = !origin.hidden;
      }
    } else if (el.classList.contains("op")) {
      toggle("op", el.dataset.op);
    } else if (el.classList.contains("tab")) {
      showRun(el);
    } else if (el.tagName === "H2") {
      el.closest(".col").classList.toggle("folded");
    } else { // a node of a drawing: "op 3 relu" or a var's name
      var t = el.querySelector("text");
      var m = t && /^op (\d+) /.exec(t.textContent);
      if (m) {
        toggle("op", "main:" + m[1]);
      } else if (t) {
        toggle("var", t.textContent);
      }
    }
  });
})();
