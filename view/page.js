// dagmem view: the details panel. Record text reaches the page only through textContent, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("dagmem-data").textContent);
  var details = document.getElementById("details");
  var anchors = new Map(); // "src-<16 hex>" -> [session, node]
  var itemOf = []; // per session: node index -> item index
  var citing = new Map(); // anchor -> the topic blocks whose footnotes link to it
  var ROLES = { u: "user", a: "assistant", t: "tool", s: "system" };
  var STATES = { w: "written", o: "owed", x: "stranded", n: "other" };

  // Nodes travel compact (see _node_json): expand each one once.
  data.sessions.forEach(function (s) {
    s.nodes.forEach(function (n, ni) {
      var letter = n.r;
      n.r = ROLES[letter];
      n.s = STATES[n.s] || n.s;
      if (n.w === undefined) n.w = data.why[n.s === "written" ? "w" : "x"];
      if (!("p" in n)) n.p = ni ? s.nodes[ni - 1].i : null;
      if (n.k === undefined) n.k = 1;
      if (n.a) n.a = "src-" + n.a;
      if (n.f && n.f.n === undefined) n.f.n = 1;
      n.e = n.at;
      n.at = new Date(n.at * 1000).toISOString().replace(/\.\d+Z$/, "+00:00");
      var seq = String(n.q);
      n.h = "sessions/" + s.id + "/history/" + String(Math.floor(n.q / 256)).padStart(4, "0") + "/" +
        seq.padStart(6, "0") + "-" + letter + "-" + n.i + ".json";
    });
  });

  data.sessions.forEach(function (s, si) {
    var map = new Array(s.nodes.length);
    s.items.forEach(function (it, ii) { for (var k = 0; k < it[1]; k++) map[it[0] + k] = ii; });
    itemOf.push(map);
    s.nodes.forEach(function (n, ni) { if (n.a) anchors.set(n.a, [si, ni]); });
  });
  document.querySelectorAll("#topics a.src").forEach(function (a) {
    var key = a.getAttribute("href").slice(1);
    var block = a.closest(".block");
    var list = citing.get(key) || [];
    if (list.indexOf(block) < 0) list.push(block);
    citing.set(key, list);
  });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fact(dl, name, value) {
    dl.appendChild(el("dt", "", name));
    var dd = el("dd");
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
    dl.appendChild(dd);
  }
  function nodeButton(si, id, label) {
    var b = el("button", "link", label || id);
    b.type = "button";
    b.addEventListener("click", function () { selectById(si, id); });
    return b;
  }
  function findNode(si, id) {
    var nodes = data.sessions[si].nodes;
    for (var i = 0; i < nodes.length; i++) if (nodes[i].i === id) return i;
    return -1;
  }
  function selectById(si, id) { var ni = findNode(si, id); if (ni >= 0) select(si, ni, true); }

  function highlight(si, ii, scroll) {
    document.querySelectorAll("svg.dag .it.sel").forEach(function (g) { g.classList.remove("sel"); });
    var g = document.querySelector('svg.dag[data-s="' + si + '"] [data-i="' + ii + '"]');
    if (!g) return;
    g.classList.add("sel");
    if (scroll) g.scrollIntoView({ block: "center", inline: "nearest" });
  }

  function members(si, ii, current) {
    var s = data.sessions[si], it = s.items[ii];
    var box = el("div", "run-box");
    box.appendChild(el("h3", "", "Collapsed run of " + it[1] + " turns"));
    var ul = el("ul", "members");
    for (var k = 0; k < it[1]; k++) {
      var n = s.nodes[it[0] + k];
      var li = el("li", it[0] + k === current ? "cur" : "");
      li.appendChild(el("span", "dot st-" + n.s));
      li.appendChild(nodeButton(si, n.i, n.q + " " + n.r + ": " + n.t.slice(0, 70)));
      ul.appendChild(li);
    }
    box.appendChild(ul);
    return box;
  }

  function select(si, ni, scroll) {
    var s = data.sessions[si], n = s.nodes[ni], ii = itemOf[si][ni], it = s.items[ii];
    highlight(si, ii, scroll);
    details.textContent = "";
    details.appendChild(el("h2", "", "Details"));
    var title = el("h3", "node-title", s.id + " / " + n.i);
    details.appendChild(title);
    var state = el("p");
    state.appendChild(el("span", "state st-" + n.s, n.s === "other" ? "not a record" : n.s));
    state.appendChild(document.createTextNode(" " + n.w));
    details.appendChild(state);
    var dl = el("dl", "facts");
    fact(dl, "seq", n.q);
    fact(dl, "role", n.r);
    fact(dl, "time", n.at);
    fact(dl, "predecessor", n.p ? nodeButton(si, n.p) : "none (a root)");
    fact(dl, "children", n.k + (n.k > 1 ? " (a fork)" : n.k === 0 ? " (a tip)" : ""));
    if (s.head === n.i) fact(dl, "head", "yes");
    if (n.m !== undefined) fact(dl, "marker", JSON.stringify(n.m) + " (not this workspace's)");
    if (n.g !== undefined) {
      // Where in git it was said: the branch, the commit HEAD named then, the repository, an edit's file.
      fact(dl, "git branch", n.g.b === null ? "(detached HEAD)" : n.g.b);
      if (n.g.c !== null) fact(dl, "commit", n.g.c);
      fact(dl, "repository", n.g.r);
      if (n.g.f !== null) fact(dl, "file", n.g.f);
    }
    fact(dl, "file", n.h);
    details.appendChild(dl);
    details.appendChild(el("h3", "", "Text"));
    details.appendChild(el("pre", "panel-text", n.t));
    if (n.c !== undefined) {
      details.appendChild(el("p", "note-cut", "Shown: the first characters of " + n.c +
        " (the node is in a collapsed run, or very long); the whole text is in " + n.h + "."));
    }
    details.appendChild(el("h3", "", "Archive frame"));
    if (n.f) {
      details.appendChild(el("p", "frame-where", "memory/sources/" + s.id + ".md, bytes " + n.f.o + "–" +
        n.f.e + ", " + n.f.n + " record line" + (n.f.n === 1 ? "" : "s") + ", #" + n.a));
      if (n.f.x !== undefined) {
        details.appendChild(el("pre", "frame", n.f.x));
      } else {
        // A collapsed node carries the frame's parsed fields, not its bytes: show them as its lines.
        var meta = JSON.stringify({ created_at: n.e, role: n.r, seq: n.q });
        details.appendChild(el("pre", "frame", '<a id="' + n.a + '"></a>\n<!-- source-id: ' + s.id + "/" +
          n.i + " -->\n<!-- source-meta: " + meta + " (decoded) -->\n<!-- record-lines: " + n.f.n +
          " -->\n[" + n.at + "] " + n.r + ": " + n.t + (n.c !== undefined ? " [...]" : "")));
      }
    } else {
      details.appendChild(el("p", "empty no-frame", n.s === "other" ? "Not a record: never archived." :
        "Not archived yet."));
    }
    details.appendChild(el("h3", "", "Topic blocks citing it"));
    var blocks = n.a ? citing.get(n.a) || [] : [];
    document.querySelectorAll("#topics .block.hit").forEach(function (b) { b.classList.remove("hit"); });
    if (!blocks.length) details.appendChild(el("p", "empty no-cites", "None."));
    blocks.forEach(function (b) {
      b.classList.add("hit");
      var copy = b.cloneNode(true);
      copy.removeAttribute("id");
      copy.classList.remove("hit");
      copy.classList.add("cited");
      var where = el("p", "bid", b.getAttribute("data-topic"));
      copy.insertBefore(where, copy.firstChild);
      details.appendChild(copy);
    });
    if (it[1] > 1) details.insertBefore(members(si, ii, ni), title.nextSibling);
    details.scrollTop = 0;
  }

  function selectItem(si, ii) { select(si, data.sessions[si].items[ii][0], false); }

  document.querySelectorAll("svg.dag").forEach(function (svg) {
    var si = Number(svg.getAttribute("data-s"));
    function pick(event) {
      var g = event.target.closest("[data-i]");
      if (g) selectItem(si, Number(g.getAttribute("data-i")));
    }
    svg.addEventListener("click", pick);
    svg.addEventListener("keydown", function (event) { if (event.key === "Enter") pick(event); });
  });

  function followHash() {
    var key = decodeURIComponent(location.hash.slice(1));
    if (!/^src-[0-9a-f]{16}$/.test(key)) return;
    var hit = anchors.get(key);
    if (hit) { select(hit[0], hit[1], true); return; }
    details.textContent = "";
    details.appendChild(el("h2", "", "Details"));
    details.appendChild(el("p", "problem", "Evidence #" + key + " is not in the archive of the sessions shown."));
  }
  window.addEventListener("hashchange", followHash);
  document.addEventListener("click", function (event) {
    var a = event.target.closest("a.src"); // the same link twice changes no hash: follow it anyway
    if (a && a.getAttribute("href") === location.hash) followHash();
  });
  followHash();
})();
