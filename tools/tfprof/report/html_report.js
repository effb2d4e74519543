document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.querySelectorAll("thead th");
  heads.forEach(function (th, column) {
    th.title = "sort";
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var down = th.getAttribute("aria-sort") !== "descending";
      heads.forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      rows.sort(function (a, b) {
        var x = a.cells[column], y = b.cells[column];
        var r = x.dataset.v !== undefined && y.dataset.v !== undefined ?
            Number(x.dataset.v) - Number(y.dataset.v) : x.textContent.localeCompare(y.textContent);
        return down ? -r : r;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
