/* devserver_reload.js - added by `make dev` (sitegen/devserver.py) to every page it serves; never in _site/.
 * Listens to /__dev/events: after a good build the page reloads; after a failed build it shows the build's
 * problems as an overlay over the page, which stays as it was (the last good build is still served). */
(function () {
  "use strict";
  var script = document.currentScript;
  var shown = Number(script && script.dataset.build);   // the build this page comes from
  var overlay = null;

  function loadStyle() {
    if (document.querySelector("link[data-dev-overlay]")) return;
    var link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = "/__dev/overlay.css";
    link.setAttribute("data-dev-overlay", "");
    document.head.appendChild(link);
  }

  function hide() {
    if (overlay) overlay.remove();
    overlay = null;
  }

  function show(lines) {
    loadStyle();
    hide();
    overlay = document.createElement("div");
    overlay.className = "dev-overlay";
    overlay.setAttribute("role", "alert");
    overlay.setAttribute("data-testid", "dev-overlay");
    var box = document.createElement("div");
    box.className = "dev-overlay-box";
    var title = document.createElement("h2");
    title.textContent = "构建失败：页面仍是上一次成功的构建";
    box.appendChild(title);
    var list = document.createElement("ol");
    lines.forEach(function (line) {
      if (/^build failed: /.test(line)) return;
      var item = document.createElement("li");
      var m = /^(\S+?:(?:\d+:)?) (.*)$/.exec(line);   // "lessons/x.md:15: message" or "data/...json: message"
      if (m) {
        var where = document.createElement("code");
        where.textContent = m[1];
        item.appendChild(where);
        item.appendChild(document.createTextNode(" " + m[2]));
      } else {
        item.textContent = line;
      }
      list.appendChild(item);
    });
    box.appendChild(list);
    var hint = document.createElement("p");
    hint.textContent = "改好文件并保存，页面会自动刷新。";
    box.appendChild(hint);
    overlay.appendChild(box);
    document.body.appendChild(overlay);
  }

  var events = new EventSource("/__dev/events");
  events.addEventListener("state", function (e) {
    var state = JSON.parse(e.data);
    if (state.error) show(state.error);
    else if (state.build !== shown) location.reload();
    else hide();
  });
})();
