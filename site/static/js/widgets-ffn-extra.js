/*
 * widgets-ffn-extra.js - the FFN deep read's three added widgets (plain JS, in the page's script file after widgets.js):
 * ffn-prefill-decode, ffn-share-formula, ffn-depth-width. Each arrives complete from the build
 * (site/templates/widgets/ffn_prefill_decode.html, ffn_share_formula.html, ffn_depth_width.html); a change of a
 * control asks the same Python (experiments.api:ffn_prefill_decode, ffn_share_chart, ffn_depth_width_table and
 * ffn_depth_width_now, i.e. experiments/lessons/c4_ffn_deep_read/extra.py) and fill() writes the strings it
 * returns into the template's data-f fields and <template class="row"> rows.
 * In the one dialect of widgets.js: mount, call, wire (bind + latest: the state lives in the URL under the widget's
 * name), fill, models, whenReady, live, chart. The depth-width budget picker (at the built L and T) answers from the
 * build's answers (call() looks there first); the rest asks Python.
 */
(function () {
  "use strict";

  const W = window.courseWidgets;
  const { wire, fill, models, whenReady, live, chart, call } = W;

  // -- prefill vs decode ----------------------------------------------------------------------------------------
  function prefillDecode(root, ns) {
    const gpu = root.querySelector(".pd-gpu");
    whenReady(root, "select, input");
    wire(root, ns, { model: ".pd-model", dtype: ".pd-dtype", gpu: ".pd-gpu", prompt: ".pd-prompt", batch: ".pd-batch" },
      (v) => models().then((ms) => {
        const opt = gpu.selectedOptions[0];
        return call("ffn_prefill_decode", [ms[v.model].config, v.dtype, opt.dataset.bw, opt.dataset.peak, v.prompt, v.batch]);
      }).then((p) => fill(root, p)));
  }

  // -- the FFN share formula: a curve and the course's models as points -----------------------------------------
  function shareFormula(root, ns) {
    const points = JSON.parse(root.querySelector("script.sf-points").textContent);
    whenReady(root, "select");
    wire(root, ns, { m: ".sf-m", kv: ".sf-kv" }, (v) => call("ffn_share_chart", [Number(v.m), v.kv, points]).then((r) => {
      fill(root, r);
      chart(root, r.chart);
    }));
  }

  // -- depth vs width at a fixed budget: a slider over L ----------------------------------------------------------
  function depthWidth(root, ns) {
    const out = root.querySelector(".dw-L-out"), slider = root.querySelector(".dw-L");
    live(root, "select");              // the build answered each budget at the built L and T
    whenReady(root, "input");
    // two calls: the table (it does not move with the slider; the build answers it per budget at the built T) and
    // the slider's row (the build answers the built L; other values ask Python, which counts one config)
    const w = wire(root, ns, { budget: ".dw-budget", L: ".dw-L", T: ".dw-T" }, (v) => Promise.all([
      call("ffn_depth_width_table", [v.budget, v.T]), call("ffn_depth_width_now", [v.budget, Number(v.L), v.T])])
      .then(([x, { now: n }]) => {
        fill(root, { T: x.T, rows: x.rows, now: n });
        slider.setAttribute("aria-valuetext", n.L + " 层");
      }), { quiet: ["L"] });
    slider.addEventListener("input", () => { out.textContent = slider.value; w.update({ label: "L" }); });
  }

  W.mount({ "ffn-prefill-decode": prefillDecode, "ffn-share-formula": shareFormula, "ffn-depth-width": depthWidth });
})();
