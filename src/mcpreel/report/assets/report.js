// mcpreel report: builds the calls table and the sequence view from the JSON in #report-data.
// Every text from the session goes in through textContent, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var FAILED = { error: 1, isError: 1, unanswered: 1 };

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function ms(v) {
    if (v === null || v === undefined) return "–";
    if (v < 1000) return v + " ms";
    if (v < 60000) return (v / 1000).toPrecision(3) + " s";
    return (v / 60000).toPrecision(3) + " min";
  }
  function offset(v) { return v === null || v === undefined ? "" : "+" + ms(v); }
  function dirText(d) { return d === "out" ? "server → client" : "client → server"; }

  // -- calls table -------------------------------------------------------------------------------
  var calls = data.calls || [];
  var tbody = document.querySelector("#calls-table tbody");
  var filterBox = document.getElementById("call-filter");
  var statusBox = document.getElementById("call-status");
  var countBox = document.getElementById("call-count");
  var sortKey = "n", sortDir = 1;
  // "first" and "slowest" say why a call is in the page: noise when every call is
  var allShown = calls.length >= (data.calls_total || 0);

  calls.forEach(function (c) {
    c._failed = !!FAILED[c.status];
    c._text = [c.n, c.method, c.target || "", c.id || "", c.status, c.code === null ? "" : c.code,
               c.message || "", (c.tags || []).join(" "), c.dir === "out" ? "server" : "client"].join(" ").toLowerCase();
  });

  function callRow(c) {
    var tr = el("tr", { "class": "call" + (c._failed ? " failed" : ""), "data-n": c.n, "aria-expanded": "false", tabindex: "0" });
    tr.appendChild(el("td", { "class": "num" }, c.n + 1));
    tr.appendChild(el("td", { "class": c.dir === "out" ? "dir-out" : "dir-in", title: dirText(c.dir) }, c.dir === "out" ? "← client" : "→ server"));
    tr.appendChild(el("td", null, c.method));
    tr.appendChild(el("td", null, c.target || ""));
    tr.appendChild(el("td", null, c.id === null ? "" : c.id));
    tr.appendChild(el("td", { "class": "num" }, offset(c.t)));
    tr.appendChild(el("td", { "class": "num" }, ms(c.latency)));
    var st = el("td", { "class": "status" }, c.status === "error" ? "error " + (c.code === null ? "" : c.code) : c.status);
    if (c.cancelled) st.appendChild(el("span", { "class": "tag" }, "cancelled"));
    if (c.dropped) st.appendChild(el("span", { "class": "tag" }, "dropped"));
    if (!allShown) (c.tags || []).forEach(function (t) { if (t !== "failed") st.appendChild(el("span", { "class": "tag" }, t)); });
    tr.appendChild(st);
    tr.addEventListener("click", function () { toggleCall(tr, c); });
    tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggleCall(tr, c); } });
    return tr;
  }

  function toggleCall(tr, c) {
    var next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) {
      next.remove();
      tr.setAttribute("aria-expanded", "false");
      return;
    }
    var detail = el("tr", { "class": "detail" });
    var td = el("td", { colspan: "8" });
    if (c.message) td.appendChild(el("p", { "class": "note" }, c.message));
    var pair = el("div", { "class": "json-pair" });
    var left = el("div"), right = el("div");
    left.appendChild(el("h3", null, "request (record " + c.row + ")"));
    left.appendChild(el("pre", { "class": "json request" }, c.request));
    right.appendChild(el("h3", null, c.response === null ? "no response" : "response (record " + c.response_row + ")"));
    right.appendChild(el("pre", { "class": "json response" }, c.response === null ? "—" : c.response));
    pair.appendChild(left); pair.appendChild(right); td.appendChild(pair); detail.appendChild(td);
    tr.after(detail);
    tr.setAttribute("aria-expanded", "true");
  }

  function compare(a, b) {
    var x = a[sortKey], y = b[sortKey];
    if (x === y) return a.n - b.n;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    if (typeof x === "number" && typeof y === "number") return (x - y) * sortDir;
    return String(x).localeCompare(String(y)) * sortDir;
  }

  function renderCalls() {
    var words = filterBox.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var status = statusBox.value;
    var shown = calls.filter(function (c) {
      if (status === "failed" && !c._failed) return false;
      if (status === "slowest" && (c.tags || []).indexOf("slowest") < 0) return false;
      if (status !== "all" && status !== "failed" && status !== "slowest" && c.status !== status) return false;
      for (var i = 0; i < words.length; i++) if (c._text.indexOf(words[i]) < 0) return false;
      return true;
    }).sort(compare);
    tbody.textContent = "";
    var frag = document.createDocumentFragment();
    shown.forEach(function (c) { frag.appendChild(callRow(c)); });
    tbody.appendChild(frag);
    countBox.textContent = shown.length + " of " + calls.length + (calls.length === 1 ? " call shown" : " calls shown");
  }

  document.querySelectorAll("#calls-table th[data-key]").forEach(function (th) {
    th.addEventListener("click", function () {
      var key = th.getAttribute("data-key");
      sortDir = key === sortKey ? -sortDir : (key === "latency" ? -1 : 1);
      sortKey = key;
      document.querySelectorAll("#calls-table th[data-key]").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      renderCalls();
    });
  });
  filterBox.addEventListener("input", renderCalls);
  statusBox.addEventListener("change", renderCalls);
  renderCalls();

  // -- sorting of the static tables (calls per tool) -------------------------------------------------
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("th");
    heads.forEach(function (th, col) {
      th.setAttribute("data-key", String(col));
      th.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        heads.forEach(function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
          var nx = parseFloat(x), ny = parseFloat(y);
          if (!isNaN(nx) && !isNaN(ny)) return (nx - ny) * dir;
          return String(x).localeCompare(String(y)) * dir;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });

  // -- the sequence view ---------------------------------------------------------------------------
  var seqBody = document.querySelector("#timeline tbody");
  var frag = document.createDocumentFragment();
  (data.timeline || []).forEach(function (e) {
    var failed = e.status === "error" || e.status === "isError" || e.status === "invalid";
    var cls = "seq";
    if (e.label === "stderr") cls += " stderr";
    else if (e.label === "invalid") cls += " invalid";
    else if (e.dir === null || e.dir === undefined) cls += " record";
    if (failed) cls += " failed";
    var tr = el("tr", { "class": cls, "data-i": e.i, "aria-expanded": "false" });
    tr.appendChild(el("td", { "class": "num" }, e.i));
    tr.appendChild(el("td", { "class": "num" }, offset(e.t)));
    var label = e.label;
    if (e.label === "(response)" && e.method) label = "↳ " + e.method;
    if (e.target) label += " " + e.target;
    if (e.id !== undefined && e.id !== null) label += "  #" + e.id;
    if (e.status && e.status !== "ok") label += "  [" + e.status + (e.code !== undefined ? " " + e.code : "") + "]";
    if (e.text) label += (e.label === "stderr" || e.label === "invalid" || e.label === "transport" ? ": " : "  ") + e.text;
    if (e.dropped) label += "  (dropped)";
    if (e.modified) label += "  (edited)";
    tr.appendChild(el("td", { "class": "lane" }, e.dir === "in" ? "sends" : (e.dir === "out" ? "receives" : "")));
    var td = el("td", { "class": "msg" });
    if (e.dir === "in" || e.dir === "out") {
      var isNote = e.label.indexOf("notifications/") === 0;
      var a = el("span", { "class": "arrow " + e.dir + (isNote ? " note" : "") }, label);
      if (e.latency !== undefined && e.latency !== null) a.appendChild(el("span", { "class": "lat" }, ms(e.latency)));
      td.appendChild(a);
    } else {
      td.textContent = label;
    }
    tr.appendChild(td);
    tr.appendChild(el("td", { "class": "lane" }, e.dir === "out" ? "sends" : (e.dir === "in" ? "receives" : (e.label === "stderr" ? "stderr" : ""))));
    if (e.json) {
      tr.addEventListener("click", function () {
        var next = tr.nextElementSibling;
        if (next && next.classList.contains("detail")) { next.remove(); tr.setAttribute("aria-expanded", "false"); return; }
        var d = el("tr", { "class": "detail" }), c = el("td", { colspan: "5" });
        c.appendChild(el("pre", { "class": "json" }, e.json));
        d.appendChild(c); tr.after(d); tr.setAttribute("aria-expanded", "true");
      });
    }
    frag.appendChild(tr);
  });
  seqBody.appendChild(frag);
})();
