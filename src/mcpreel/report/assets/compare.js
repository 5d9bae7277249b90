// mcpreel diff / replay page: the calls table (filter, kind, expansion to A and B side by side) from #report-data.
// Every text from the sessions goes in through textContent (or a text node), never as markup. The lines of the
// JSON that a difference changed (their numbers come with the data: *_marks) are drawn inside <mark>.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var calls = data.calls || [];
  var tbody = document.querySelector("#diff-table tbody");
  var filterBox = document.getElementById("call-filter");
  var kindBox = document.getElementById("call-kind");
  var countBox = document.getElementById("call-count");

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function ms(v) { return v === null || v === undefined ? "–" : v + " ms"; }

  calls.forEach(function (c) {
    c._text = [c.label, c.kind, c.status_a || "", c.status_b || ""].concat(c.diffs.map(function (d) { return d.path; }))
      .join(" ").toLowerCase();
  });

  function json(cls, text, marks) {
    // the JSON as text nodes, a changed line inside <mark class="changed">
    var pre = el("pre", { "class": "json " + cls });
    if (!marks || !marks.length) { pre.textContent = text; return pre; }
    var marked = {};
    marks.forEach(function (n) { marked[n] = true; });
    var lines = String(text).split("\n");
    lines.forEach(function (line, n) {
      if (n) pre.appendChild(document.createTextNode("\n"));
      if (marked[n]) pre.appendChild(el("mark", { "class": "changed" }, line));
      else pre.appendChild(document.createTextNode(line));
    });
    return pre;
  }

  function pane(title, request, response, requestMarks, responseMarks) {
    var d = el("div");
    d.appendChild(el("h3", null, title));
    if (request === null || request === undefined) {
      d.appendChild(el("pre", { "class": "json request" }, "— not in this recording"));
      return d;
    }
    d.appendChild(json("request", request, requestMarks));
    if (response === null || response === undefined) d.appendChild(el("pre", { "class": "json response" }, "— no response"));
    else d.appendChild(json("response", response, responseMarks));
    return d;
  }

  function path(text) { return el("code", { "class": "path" }, text); }

  function toggle(tr, c) {
    var next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) { next.remove(); tr.setAttribute("aria-expanded", "false"); return; }
    var detail = el("tr", { "class": "detail" }), td = el("td", { colspan: "6" });
    if (c.diffs.length) {
      var t = el("table", { "class": "paths" }), head = el("tr");
      ["path", "difference", "A (recorded)", "B (new)"].forEach(function (h) { head.appendChild(el("th", null, h)); });
      t.appendChild(head);
      c.diffs.forEach(function (d) {
        var r = el("tr", { "class": "path" });
        var cell = el("td"); cell.appendChild(path(d.path));
        r.appendChild(cell); r.appendChild(el("td", null, d.kind));
        r.appendChild(el("td", null, d.recorded === undefined ? "" : d.recorded));
        r.appendChild(el("td", null, d.new === undefined ? "" : d.new));
        t.appendChild(r);
      });
      td.appendChild(t);
    }
    if (c.json) {
      var pair = el("div", { "class": "json-pair" });
      pair.appendChild(pane(c.a_title || ("A: " + (c.a_line === null ? "absent" : "record " + c.a_line)), c.a_request, c.a_response,
                            c.a_request_marks, c.a_response_marks));
      pair.appendChild(pane(c.b_title || ("B: " + (c.b_line === null ? "absent" : "record " + c.b_line)), c.b_request, c.b_response,
                            c.b_request_marks, c.b_response_marks));
      td.appendChild(pair);
    } else {
      td.appendChild(el("p", { "class": "note" }, "The same in both; its JSON is not kept in this page."));
    }
    detail.appendChild(td); tr.after(detail); tr.setAttribute("aria-expanded", "true");
  }

  function render() {
    var words = filterBox.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var kind = kindBox.value;
    var shown = calls.filter(function (c) {
      if (kind === "differs" && c.kind === "same") return false;
      if (kind === "latency" && !c.latency_shift) return false;
      if (kind !== "all" && kind !== "differs" && kind !== "latency" && c.kind !== kind) return false;
      for (var i = 0; i < words.length; i++) if (c._text.indexOf(words[i]) < 0) return false;
      return true;
    });
    tbody.textContent = "";
    var frag = document.createDocumentFragment();
    shown.forEach(function (c) {
      var tr = el("tr", { "class": "call kind-" + c.kind + (c.kind !== "same" ? " failed" : ""), "aria-expanded": "false", tabindex: "0" });
      tr.appendChild(el("td", null, c.label));
      tr.appendChild(el("td", { "class": "status" }, c.kind));
      tr.appendChild(el("td", null, (c.status_a || "–") + " → " + (c.status_b || "–")));
      tr.appendChild(el("td", { "class": "num" }, ms(c.latency_a)));
      tr.appendChild(el("td", { "class": "num" + (c.latency_shift ? " shift" : "") }, ms(c.latency_b)));
      tr.appendChild(el("td", { "class": "num" }, c.diffs.length));
      tr.addEventListener("click", function () { toggle(tr, c); });
      tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(tr, c); } });
      frag.appendChild(tr);
    });
    tbody.appendChild(frag);
    countBox.textContent = shown.length + " of " + calls.length + (calls.length === 1 ? " call shown" : " calls shown");
  }
  filterBox.addEventListener("input", render);
  kindBox.addEventListener("change", render);
  render();
})();
