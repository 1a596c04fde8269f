/*
 * widgets-ffn-extra.js - the FFN deep read's three added widgets (plain JS, in the page's script file after widgets.js):
 * ffn-prefill-decode, ffn-share-formula, ffn-depth-width. Each arrives complete from the build
 * (site/templates/widgets/ffn_prefill_decode.html, ffn_share_formula.html, ffn_depth_width.html); a change of a
 * control asks the same Python (experiments.api:ffn_prefill_decode, ffn_share_chart, ffn_depth_width_table and
 * ffn_depth_width_now, i.e. experiments/lessons/c4_ffn_deep_read/extra.py) and fill() writes the strings it
 * returns into the template's data-f fields and <template class="row"> rows.
 * In the one dialect of widgets.js: mount, call, latest, bind (the state lives in the URL under the widget's name),
 * fill, models, whenReady, live, chart. The depth-width budget picker (at the built L and T) answers from the
 * build's answers (call() looks there first); the rest asks Python.
 */
(function () {
  "use strict";

  const W = window.courseWidgets;
  const { bind, fill, models, whenReady, live, latest, chart, call } = W;

  // The controls bound to the URL; a change records them and recomputes (but for the keys in `quiet`, which
  // recompute as they move); the URL's state is restored at once.
  function wire(root, ns, spec, recompute, quiet) {
    const s = bind(root, ns, spec);
    Object.entries(s.c).forEach(([key, c]) => c.addEventListener("change", () => {
      s.record();
      if (!(quiet || []).includes(key)) recompute({ label: key });
    }));
    if (s.restore()) { s.record(); recompute({}); }
    return s;
  }

  // -- prefill vs decode ----------------------------------------------------------------------------------------
  function prefillDecode(root, ns) {
    let s = null;
    const recompute = latest(root, "ffn-prefill-decode", () => models().then((ms) => {
      const v = s.values(), opt = s.c.gpu.selectedOptions[0];
      return call("ffn_prefill_decode", [ms[v.model].config, v.dtype, opt.dataset.bw, opt.dataset.peak, v.prompt, v.batch]);
    }).then((p) => fill(root, p)));
    whenReady(root, "select, input");
    s = wire(root, ns, { model: ".pd-model", dtype: ".pd-dtype", gpu: ".pd-gpu", prompt: ".pd-prompt",
      batch: ".pd-batch" }, recompute);
  }

  // -- the FFN share formula: a curve and the course's models as points -----------------------------------------
  function shareFormula(root, ns) {
    const points = JSON.parse(root.querySelector("script.sf-points").textContent);
    let s = null;
    const recompute = latest(root, "ffn-share-formula", () => {
      const v = s.values();
      return call("ffn_share_chart", [Number(v.m), v.kv, points]).then((r) => {
        fill(root, r);
        chart(root, r.chart);
      });
    });
    whenReady(root, "select");
    s = wire(root, ns, { m: ".sf-m", kv: ".sf-kv" }, recompute);
  }

  // -- depth vs width at a fixed budget: a slider over L ----------------------------------------------------------
  function depthWidth(root, ns) {
    const out = root.querySelector(".dw-L-out");
    let s = null;
    // two calls: the table (it does not move with the slider; the build answers it per budget at the built T) and
    // the slider's row (the build answers the built L; other values ask Python, which counts one config)
    const recompute = latest(root, "ffn-depth-width", () => {
      const v = s.values();
      return Promise.all([call("ffn_depth_width_table", [v.budget, v.T]),
        call("ffn_depth_width_now", [v.budget, Number(v.L), v.T])]).then(([x, { now: n }]) => {
        fill(root, { T: x.T, rows: x.rows, now: n });
        s.c.L.setAttribute("aria-valuetext", n.L + " 层");
      });
    });
    live(root, "select");              // the build answered each budget at the built L and T
    whenReady(root, "input");
    s = wire(root, ns, { budget: ".dw-budget", L: ".dw-L", T: ".dw-T" }, recompute, ["L"]);
    s.c.L.addEventListener("input", () => { out.textContent = s.c.L.value; recompute({ label: "L" }); });
  }

  W.mount({ "ffn-prefill-decode": prefillDecode, "ffn-share-formula": shareFormula, "ffn-depth-width": depthWidth });
})();
