/*
 * derivation.js - builds a number with its derivation popover in the browser (plain JS, in the page's script file).
 *
 * The rows come from Python (experiments.numbers.derivation_rows, via experiments/api.py), exactly as the build
 * renders them in sitegen/markdown.py, so a number recomputed in the page explains itself the same way a
 * build-time number does. popover.js shows it (event delegation: no set-up needed). Text only, no innerHTML.
 */
(function () {
  "use strict";

  let seq = 0;

  function row(r) {
    const span = document.createElement("span");
    span.className = r.cls.split(" ").map((c) => "drv-" + c).join(" ");   // "check ok" -> "drv-check drv-ok"
    span.append(r.text);
    (r.code || []).forEach((c, i) => {
      if (i) span.append("；");
      const code = document.createElement("code");
      code.textContent = c;
      span.append(code);
    });
    (r.items || []).forEach(([text, key], i) => {
      if (i) span.append("，");
      span.append(text);
      if (key) {
        const code = document.createElement("code");
        code.textContent = key;
        span.append("（", code, "）");
      }
    });
    return span;
  }

  // name: the number's name; d: {display, rows} from experiments.api:number_derivations
  function node(name, d) {
    const id = "drv-live-" + (++seq);
    const num = document.createElement("span");
    num.className = "num";
    num.tabIndex = 0;
    num.dataset.num = name;
    num.setAttribute("aria-describedby", id);
    num.textContent = d.display;
    const pop = document.createElement("span");
    pop.className = "num-popover";
    pop.id = id;
    pop.setAttribute("role", "tooltip");
    pop.hidden = true;
    d.rows.forEach((r, i) => { if (i) pop.append(" "); pop.append(row(r)); });
    const frag = document.createDocumentFragment();
    frag.append(num, pop);
    return frag;
  }

  window.courseNumbers = { node: node };
})();
