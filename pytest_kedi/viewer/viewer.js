/* pytest-kedi HTML report: sorting, drill-down, filters, paging. User data is only ever
   inserted with textContent; nothing is fetched. */
(function () {
  "use strict";
  var PAGE = 100;
  var CLIP = 160;
  var FLAGS = { errored: 1, below: 2, flaky: 4, regressed: 8 };
  var data = { suites: [] };
  var holder = document.getElementById("kedi-data");

  // The rows data: JSON, or for a large report gzip + base64 (data-encoding="gzip").
  function loadData() {
    if (holder.getAttribute("data-encoding") !== "gzip") {
      return Promise.resolve(JSON.parse(holder.textContent));
    }
    var binary = atob(holder.textContent.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  var numberFormat = new Intl.NumberFormat("en");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function button(text, cls) {
    var node = el("button", cls, text);
    node.type = "button";
    return node;
  }

  /* A value, clipped to CLIP characters with a more/less toggle when longer. */
  function clipped(text, cls) {
    var wrap = el("span", "value" + (cls ? " " + cls : ""));
    if (text === null || text === undefined || text === "") {
      wrap.textContent = "—";
      wrap.classList.add("none");
      return wrap;
    }
    text = String(text);
    if (text.length <= CLIP) {
      wrap.textContent = text;
      return wrap;
    }
    var shown = el("span", "text", text.slice(0, CLIP) + "…");
    var toggle = button("more", "expand");
    toggle.setAttribute("aria-expanded", "false");
    toggle.setAttribute("aria-label", "show the whole value");
    toggle.addEventListener("click", function () {
      var open = toggle.getAttribute("aria-expanded") === "true";
      shown.textContent = open ? text.slice(0, CLIP) + "…" : text;
      toggle.textContent = open ? "more" : "less";
      toggle.setAttribute("aria-expanded", open ? "false" : "true");
    });
    wrap.appendChild(shown);
    wrap.appendChild(document.createTextNode(" "));
    wrap.appendChild(toggle);
    return wrap;
  }

  function enhanceLong(root) {
    root.querySelectorAll("[data-long]").forEach(function (node) {
      var text = node.textContent;
      node.removeAttribute("data-long");
      if (text.length > CLIP) {
        node.textContent = "";
        node.appendChild(clipped(text));
      }
    });
  }

  /* ------------------------------------------------------------ suites table sorting */
  function cellValue(row, col, kind) {
    var raw = row.cells[col] ? row.cells[col].getAttribute("data-v") : "";
    if (kind === "num") {
      var number = parseFloat(raw);
      return isNaN(number) ? null : number;
    }
    return (raw || "").toLowerCase();
  }

  function setupSorting(table) {
    var body = table.tBodies[0];
    table.querySelectorAll("button.sort").forEach(function (btn) {
      btn.addEventListener("click", function () {
        var th = btn.parentNode;
        var col = Number(btn.getAttribute("data-col"));
        var kind = btn.getAttribute("data-kind");
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("th[aria-sort]").forEach(function (other) {
          other.setAttribute("aria-sort", "none");
        });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, col, kind);
          var y = cellValue(b, col, kind);
          if (x === y) return 0;
          if (x === null) return 1; /* missing values last either way */
          if (y === null) return -1;
          var order = x < y ? -1 : 1;
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  /* ------------------------------------------------------------ drill-down */
  function callsBlock(calls) {
    var box = el("div", "calls");
    calls.forEach(function (call, i) {
      var item = el("div", "call");
      var head = ["call " + (i + 1), call[0] || "model not recorded"];
      if (call[4]) head.push("tokens: " + call[4]);
      if (call[5] !== null && call[5] !== undefined) head.push(call[5].toFixed(2) + " s");
      item.appendChild(el("div", "call-head", head.join(" · ")));
      [["Instructions", call[2]], ["Prompt", call[1]], ["Answer", call[3]]].forEach(function (part) {
        if (part[1] === null || part[1] === undefined) return;
        item.appendChild(el("div", "call-label", part[0]));
        item.appendChild(el("pre", "call-text", part[1]));
      });
      box.appendChild(item);
    });
    return box;
  }

  function rowElements(suite, row, width) {
    var tr = el("tr", row[8] & FLAGS.errored ? "errored" : "");
    var index = el("td", "n", row[0]);
    if (row[11]) index.appendChild(el("div", "sub", row[11]));
    tr.appendChild(index);
    tr.appendChild(cell(clipped(row[1])));
    tr.appendChild(cell(clipped(row[2])));
    if (suite.output) tr.appendChild(cell(clipped(row[3])));
    var score = el("td", "n row-score " + (row[4] >= 1 ? "full" : row[4] <= 0 ? "zero" : "part"),
      row[4].toFixed(4));
    if (row[8] & FLAGS.flaky) score.appendChild(el("span", "tag", "flaky"));
    tr.appendChild(score);
    tr.appendChild(cell(clipped(row[5])));
    var error = el("td", "error");
    if (row[6]) {
      error.appendChild(el("span", "tag err", row[6]));
      error.appendChild(document.createTextNode(" "));
      error.appendChild(clipped(row[7]));
    } else {
      error.appendChild(clipped(null));
    }
    tr.appendChild(error);
    if (suite.delta) {
      var delta = row[9];
      var text = delta === null ? "—" : (delta > 0 ? "+" : "") + delta.toFixed(4);
      tr.appendChild(el("td", "n delta" + (delta < 0 ? " down" : delta > 0 ? " up" : ""), text));
    }
    var extra = null;
    if (suite.calls) {
      var td = el("td", "calls-cell");
      if (row[10]) {
        var count = row[10].length;
        var toggle = button(count + (count === 1 ? " call" : " calls"), "expand");
        toggle.setAttribute("aria-expanded", "false");
        extra = el("tr", "calls-row");
        extra.hidden = true;
        var holder = el("td");
        holder.colSpan = width;
        extra.appendChild(holder);
        toggle.addEventListener("click", function () {
          var open = toggle.getAttribute("aria-expanded") === "true";
          if (!holder.firstChild) holder.appendChild(callsBlock(row[10]));
          extra.hidden = open;
          toggle.setAttribute("aria-expanded", open ? "false" : "true");
        });
        td.appendChild(toggle);
      } else {
        td.appendChild(clipped(null));
      }
      tr.appendChild(td);
    }
    return extra ? [tr, extra] : [tr];
  }

  function cell(child) {
    var td = el("td");
    td.appendChild(child);
    return td;
  }

  function haystack(row) {
    if (row.search === undefined) {
      row.search = [row[0], row[1], row[2], row[3], row[5], row[6], row[7]]
        .filter(function (v) { return v !== null && v !== undefined; })
        .join("\n").toLowerCase();
    }
    return row.search;
  }

  function setupSuite(details) {
    var suite = data.suites[Number(details.getAttribute("data-suite"))];
    var body = details.querySelector("table.rows tbody");
    if (!suite || !body) return;
    var width = details.querySelectorAll("table.rows thead th").length;
    var status = details.querySelector(".status");
    var info = details.querySelector(".page-info");
    var prev = details.querySelector('[data-page="prev"]');
    var next = details.querySelector('[data-page="next"]');
    var search = details.querySelector("[data-search]");
    var boxes = details.querySelectorAll("[data-filter]");
    var state = { page: 0, matches: [] };

    function refilter() {
      var mask = 0;
      boxes.forEach(function (box) { if (box.checked) mask |= FLAGS[box.getAttribute("data-filter")]; });
      var query = search.value.trim().toLowerCase();
      state.matches = [];
      for (var i = 0; i < suite.rows.length; i++) {
        var row = suite.rows[i];
        if ((row[8] & mask) !== mask) continue;
        if (query && haystack(row).indexOf(query) < 0) continue;
        state.matches.push(i);
      }
      state.page = 0;
      render();
    }

    function render() {
      var total = state.matches.length;
      var pages = Math.max(1, Math.ceil(total / PAGE));
      state.page = Math.min(state.page, pages - 1);
      var start = state.page * PAGE;
      var end = Math.min(start + PAGE, total);
      var fragment = document.createDocumentFragment();
      for (var i = start; i < end; i++) {
        rowElements(suite, suite.rows[state.matches[i]], width).forEach(function (node) {
          fragment.appendChild(node);
        });
      }
      body.replaceChildren(fragment);
      var all = suite.rows.length;
      status.textContent = total === 0
        ? "No row matches (" + numberFormat.format(all) + " rows in total)."
        : "Showing rows " + numberFormat.format(start + 1) + " to " + numberFormat.format(end) +
          " of " + numberFormat.format(total) +
          (total === all ? "" : " matching (" + numberFormat.format(all) + " in total)") + ".";
      info.textContent = "page " + (state.page + 1) + " of " + pages;
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
    }

    boxes.forEach(function (box) { box.addEventListener("change", refilter); });
    search.addEventListener("input", refilter);
    prev.addEventListener("click", function () { state.page -= 1; render(); });
    next.addEventListener("click", function () { state.page += 1; render(); });
    refilter();
  }

  function openSuite(details) {
    if (!details.open) details.open = true;
  }

  var loaded = loadData().then(function (value) { data = value; });

  document.querySelectorAll("details[data-suite]").forEach(function (details) {
    details.addEventListener("toggle", function () {
      if (details.open && !details.hasAttribute("data-ready")) {
        details.setAttribute("data-ready", "1");
        enhanceLong(details);
        loaded.then(function () { setupSuite(details); });
      }
    });
  });

  document.querySelectorAll("a.suite-link").forEach(function (link) {
    link.addEventListener("click", function () {
      var target = document.getElementById("suite-" + link.getAttribute("data-suite"));
      if (target) openSuite(target.querySelector("details"));
    });
  });

  var table = document.getElementById("suites-table");
  if (table) setupSorting(table);
  enhanceLong(document.getElementById("history") || document.createElement("div"));

  var match = /^#suite-(\d+)$/.exec(window.location.hash);
  if (match) {
    var section = document.getElementById("suite-" + match[1]);
    if (section) openSuite(section.querySelector("details"));
  }
  loaded.then(function () {
    document.documentElement.setAttribute("data-kedi-ready", "1");
  });
})();
