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

  // -- JSON that folds, with a copy button --------------------------------------------------------------
  // The pretty text is never parsed again (big integers, NaN, lone surrogates stay as recorded): a line
  // that ends in { or [ opens a block closed by the line at its indent that starts with } or ]. The fold
  // marks and the "…" are CSS generated content, so the text of an open block is the text as written.
  function indentOf(line) { return line.length - line.replace(/^ +/, "").length; }
  function jsonView(text, cls) {
    var pre = el("pre", { "class": "json " + cls });
    var lines = String(text).split("\n");
    var stack = [{ node: pre, indent: -1 }];
    var buf = [];
    function flush() {
      if (buf.length) { stack[stack.length - 1].node.appendChild(document.createTextNode(buf.join(""))); buf = []; }
    }
    lines.forEach(function (line, i) {
      var nl = i < lines.length - 1 ? "\n" : "";
      var top = stack[stack.length - 1];
      var trimmed = line.replace(/^ +/, "");
      if (stack.length > 1 && (trimmed.charAt(0) === "}" || trimmed.charAt(0) === "]") && indentOf(line) === top.indent) {
        buf.push(line.slice(0, top.indent)); flush(); stack.pop();
        var more = el("span", { "class": "more" });
        stack[stack.length - 1].node.appendChild(more);
        buf.push(trimmed + nl);
        return;
      }
      var last = line.charAt(line.length - 1);
      if ((last === "{" || last === "[") && nl) {
        buf.push(line.replace(/[^ ].*$/, "")); flush();
        var toggle = el("span", { "class": "fold", role: "button", tabindex: "0", "aria-expanded": "true", title: "fold" });
        var block = el("span", { "class": "block" });
        top.node.appendChild(toggle);
        top.node.appendChild(document.createTextNode(trimmed));
        top.node.appendChild(block);
        toggle._block = block;
        stack.push({ node: block, indent: indentOf(line) });
        buf.push(nl);
        return;
      }
      buf.push(line + nl);
    });
    flush();
    return pre;
  }
  function fold(toggle) {
    var open = toggle.getAttribute("aria-expanded") === "true";
    toggle.setAttribute("aria-expanded", open ? "false" : "true");
    toggle.setAttribute("title", open ? "unfold" : "fold");
    toggle._block.hidden = open;
  }
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (t && t.classList && t.classList.contains("fold") && t._block) { ev.stopPropagation(); fold(t); }
  }, true);
  document.addEventListener("keydown", function (ev) {
    var t = ev.target;
    if (t && t.classList && t.classList.contains("fold") && t._block && (ev.key === "Enter" || ev.key === " ")) {
      ev.preventDefault(); ev.stopPropagation(); fold(t);
    }
  }, true);
  function copyButton(text) {
    var b = el("button", { "class": "copy", type: "button", title: "copy this JSON to the clipboard" }, "copy");
    function said(word) { b.textContent = word; setTimeout(function () { b.textContent = "copy"; }, 1500); }
    function fallback() {
      var area = el("textarea", { "class": "copy-buffer", "aria-hidden": "true" });
      area.value = text;
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      area.remove();
      said(ok ? "copied" : "select and copy");
    }
    b.addEventListener("click", function (ev) {
      ev.stopPropagation();
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { said("copied"); }, fallback);
      } else fallback();
    });
    return b;
  }
  // a heading, a copy button and the folding JSON
  function jsonBox(title, text, cls) {
    var box = el("div");
    var h = el("h3", null, title);
    if (text !== null) h.appendChild(copyButton(text));
    box.appendChild(h);
    box.appendChild(text === null ? el("pre", { "class": "json " + cls }, "—") : jsonView(text, cls));
    return box;
  }
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
    // the filter reads the arguments and results too, and the server requests the call caused
    var kids = (c.children || []).map(function (ch) { return [ch.method, ch.status, ch.request, ch.response || ""].join(" "); });
    c._text = [c.n + 1, c.method, c.target || "", c.id || "", c.status, c.code === null ? "" : c.code,
               c.message || "", (c.tags || []).join(" "), c.dir === "out" ? "server" : "client",
               c.request || "", c.response || ""].concat(kids).join(" ").toLowerCase();
  });
  var byNumber = {};
  calls.forEach(function (c) { byNumber[c.n + 1] = c; });

  // a call's rows: its own (id call-N, N as the page numbers it), then the server requests it caused
  function callRows(c) {
    var tr = el("tr", { "class": "call" + (c._failed ? " failed" : ""), "data-n": c.n, "aria-expanded": "false", tabindex: "0",
                        id: "call-" + (c.n + 1) });
    var num = el("td", { "class": "num" });
    var link = el("a", { href: "#call-" + (c.n + 1), title: "a link to this call" }, c.n + 1);
    link.addEventListener("click", function (ev) {
      ev.stopPropagation();
      if (location.hash === "#call-" + (c.n + 1)) { ev.preventDefault(); openFromHash(); }
    });
    num.appendChild(link);
    tr.appendChild(num);
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
    var rows = [tr];
    (c.children || []).forEach(function (ch) {
      var r = el("tr", { "class": "child" + (FAILED[ch.status] ? " failed" : ""), "aria-expanded": "false", tabindex: "0",
                         title: "a request the server sent while answering call " + (c.n + 1) });
      r.appendChild(el("td", { "class": "num" }));
      r.appendChild(el("td", { "class": ch.dir === "out" ? "dir-out" : "dir-in", title: dirText(ch.dir) }, ch.dir === "out" ? "← client" : "→ server"));
      r.appendChild(el("td", { "class": "caused" }, "↳ " + ch.method));
      r.appendChild(el("td", { "class": "note" }, "caused by call " + (c.n + 1)));
      r.appendChild(el("td", null, ch.id === null ? "" : ch.id));
      r.appendChild(el("td", { "class": "num" }));
      r.appendChild(el("td", { "class": "num" }, ms(ch.latency)));
      r.appendChild(el("td", { "class": "status" }, ch.status));
      r.addEventListener("click", function () { toggleDetail(r, ch, "child-"); });
      r.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggleDetail(r, ch, "child-"); } });
      rows.push(r);
    });
    tr._last = rows[rows.length - 1];
    return rows;
  }

  // a row's JSON opens in the row after it (a call's after the requests it caused)
  function toggleDetail(tr, c, prefix) {
    if (tr._detail && tr._detail.isConnected) {
      tr._detail.remove();
      tr._detail = null;
      tr.setAttribute("aria-expanded", "false");
      return;
    }
    var detail = el("tr", { "class": "detail" + (prefix ? " child-detail" : "") });
    var td = el("td", { colspan: "8" });
    if (c.message) td.appendChild(el("p", { "class": "note" }, c.message));
    var pair = el("div", { "class": "json-pair" });
    pair.appendChild(jsonBox("request (record " + c.row + ")", c.request, prefix + "request"));
    pair.appendChild(jsonBox(c.response === null ? "no response" : "response (record " + c.response_row + ")",
                             c.response, prefix + "response"));
    td.appendChild(pair); detail.appendChild(td);
    (tr._last || tr).after(detail);
    tr._detail = detail;
    tr.setAttribute("aria-expanded", "true");
  }
  function toggleCall(tr, c) { toggleDetail(tr, c, ""); }

  // #call-N opens that call (the filter is cleared if it hid it) and brings it into view
  function openFromHash() {
    var m = /^#call-(\d+)$/.exec(location.hash);
    if (!m) return;
    var c = byNumber[m[1]];
    if (!c) {
      countBox.textContent = "call " + m[1] + " is not kept in this page's detail (see --detail)";
      return;
    }
    var tr = document.getElementById("call-" + m[1]);
    if (!tr) {
      filterBox.value = ""; statusBox.value = "all"; renderCalls();
      tr = document.getElementById("call-" + m[1]);
      if (!tr) return;
    }
    if (!(tr._detail && tr._detail.isConnected)) toggleCall(tr, c);
    tr.scrollIntoView({ block: "center" });
    tr.focus({ preventScroll: true });
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
    shown.forEach(function (c) { callRows(c).forEach(function (r) { frag.appendChild(r); }); });
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
  window.addEventListener("hashchange", openFromHash);

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
        c.appendChild(jsonBox("record " + e.i, e.json, "record"));
        d.appendChild(c); tr.after(d); tr.setAttribute("aria-expanded", "true");
      });
    }
    frag.appendChild(tr);
  });
  seqBody.appendChild(frag);
  openFromHash();
})();
