// mcpreel corpus report: a click on a heading sorts its table; a filter box keeps the rows that hold
// every word typed. The page reads the same without it. It only moves and hides rows: it writes no text
// from the index anywhere.
(function () {
  "use strict";
  function value(row, col) {
    var cell = row.cells[col];
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    return v !== null ? v : cell.textContent.replace(/[,%]/g, "");
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.setAttribute("data-key", String(col));
      th.setAttribute("title", "sort");
      th.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        heads.forEach(function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = value(a, col), y = value(b, col);
          var nx = parseFloat(x), ny = parseFloat(y);
          if (x === "" || x === "\u2013") return 1;
          if (y === "" || y === "\u2013") return -1;
          if (!isNaN(nx) && !isNaN(ny) && /^-?[\d.]+$/.test(x) && /^-?[\d.]+$/.test(y)) return (nx - ny) * dir;
          return x.localeCompare(y) * dir;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  function filter(id) {
    var table = document.getElementById(id);
    var box = document.querySelector('input.table-filter[data-table="' + id + '"]');
    var status = document.querySelector('select.table-status[data-table="' + id + '"]');
    var count = document.querySelector('.table-count[data-table="' + id + '"]');
    var words = box ? box.value.trim().toLowerCase().split(/\s+/).filter(Boolean) : [];
    var failedOnly = status && status.value === "failed";
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var text = rows[i].textContent.toLowerCase();
      var keep = !(failedOnly && !rows[i].classList.contains("failed"));
      for (var j = 0; keep && j < words.length; j++) if (text.indexOf(words[j]) < 0) keep = false;
      rows[i].hidden = !keep;
      if (keep) shown++;
    }
    if (count) count.textContent = shown + " of " + rows.length + " shown";
  }
  document.querySelectorAll("input.table-filter, select.table-status").forEach(function (input) {
    var id = input.getAttribute("data-table");
    input.addEventListener(input.tagName === "SELECT" ? "change" : "input", function () { filter(id); });
    filter(id);
  });
})();
