/*
 * script.js - behaviour of the FFN deep-read lesson's widgets (plain JS, in the page's script file after widgets.js,
 * in whose dialect it is written: call, wire (bind + latest), fill, rows, live).
 *
 * Every widget arrives complete from the build (lessons/c4-ffn-deep-read/templates/ffn_*.html, filled by the lesson's
 * widgets.py with calc.py). This file only makes the controls live: each change calls the same functions as
 * experiments.api:ffn_* (answered from the build's table when it has the state, else by Python) and fills the
 * template's data-f fields and <template class="row"> rows with the returned strings. Each widget keeps its
 * state in the URL as <widget>.<option> (ffn-memory.dtype=FP32), defaults left out.
 */
(function () {
  "use strict";

  const W = window.courseWidgets;
  const { call, fill, rows, models, live } = W;

  function configOf(alias) {
    return models().then((ms) => ms[alias].config);
  }

  // A widget's controls bound to the URL (wire), live at once (what the build did not answer waits for Python).
  function wired(root, ns, spec, job, hooks) {
    live(root, "input, select, textarea, button");
    return W.wire(root, ns, spec, job, hooks);
  }

  // -- SwiGLU budget explorer -----------------------------------------------------------------------------------
  function swiglu(root, ns) {
    const known = JSON.parse(root.dataset.known || "[]");
    wired(root, ns, { d: ".sw-d", ratio: ".sw-ratio", matrices: ".sw-matrices", align: ".sw-align" }, (v) =>
      Promise.all([call("ffn_swiglu_budget", [v.d, v.ratio, v.matrices, v.align, known]),
        call("ffn_config_family", [v.ratio, v.align])]).then(([b, fam]) => {
        fill(root.querySelector(".readout"), Object.assign({}, b, b.mine));
        rows(root.querySelector(".sw-refs tbody"), b.refs);
        root.querySelector(".sw-align-ratio").textContent = b.matrices === 3 ? b.ratio : "8/3";
        root.querySelector(".sw-align-to").textContent = String(b.align);
        rows(root.querySelector(".sw-alignment tbody"), b.alignment);
        rows(root.querySelector(".sw-family tbody"), fam.rows);
      }));
  }

  // -- memory and decode calculator -----------------------------------------------------------------------------
  function memory(root, ns) {
    const pasted = { config: null };
    const bw = root.querySelector(".mem-bw"), peak = root.querySelector(".mem-peak");
    const gpu = root.querySelector(".mem-gpu");
    const preset = () => gpu.selectedOptions[0] && gpu.selectedOptions[0].dataset.bw ? gpu.selectedOptions[0] : null;
    function usePreset() {   // a preset GPU brings its bandwidth and peak
      const p = preset();
      if (p) { bw.value = p.dataset.bw; peak.value = p.dataset.peak; }
    }
    function typed() {   // a typed bandwidth or peak that is not the preset's makes the GPU "custom"
      const p = preset();
      if (p && (bw.value.trim() !== p.dataset.bw || peak.value.trim() !== p.dataset.peak)) gpu.value = "custom";
    }
    const w = wired(root, ns, { model: ".mem-model", dtype: ".mem-dtype", gpu: ".mem-gpu", bw: ".mem-bw",
      peak: ".mem-peak", batch: ".mem-batch" }, (v) => {
      const config = v.model === "__pasted" ? (pasted.config ? Promise.resolve(pasted.config)
        : Promise.reject(new Error(W.msg("ffn.paste_first")))) : configOf(v.model);
      return config.then((cfg) => Promise.all([call("ffn_memory", [cfg, v.dtype, v.bw, v.batch, v.peak]),
        call("ffn_batch_series", [cfg, v.dtype, v.bw, v.peak])])).then(([r, series]) => {
        fill(root.querySelector(".mem-readout"), r);
        rows(root.querySelector(".mem-batches tbody"), series.rows);
      });
    }, {
      gpu: usePreset, bw: typed, peak: typed,
      restored(s) {   // a GPU from the URL brings its figures; a bandwidth or peak alone makes it custom
        if (s.values().gpu === "custom") return;
        if (W.getState(ns, "bw") !== null || W.getState(ns, "peak") !== null) typed(); else usePreset();
      },
      skip(s) {   // bandwidth and peak only for a custom GPU; a pasted config is not a link's to give
        const v = s.values();
        return (v.gpu === "custom" ? [] : ["bw", "peak"]).concat(v.model === "__pasted" ? ["model"] : []);
      },
    });
    // The pasted text goes to Python as it is: Python reads it (a {meta, config} data file too) and names what is
    // wrong in Chinese, bad JSON by line and column (calc._ledger).
    root.querySelector(".mem-use-config").addEventListener("click", () => {
      pasted.config = root.querySelector(".mem-config").value;
      w.s.c.model.value = "__pasted";
      w.s.record(["model"].concat(w.s.values().gpu === "custom" ? [] : ["bw", "peak"]));   // (as skip() says)
      w.update();
    });
  }

  // -- training memory ------------------------------------------------------------------------------------------
  function training(root, ns) {
    wired(root, ns, { model: ".tr-model", recipe: ".tr-recipe", batch: ".tr-batch", seq: ".tr-seq",
      checkpointing: ".tr-ckpt" }, (v) => configOf(v.model).then((cfg) => call("ffn_training_memory",
      [cfg, v.recipe, v.batch, v.seq, v.checkpointing])).then((t) => {
      fill(root.querySelector(".readout"), t);
      root.querySelector(".tr-recipe-zh").textContent = t.recipe_zh;
      rows(root.querySelector(".tr-parts tbody"), t.rows);
      rows(root.querySelector(".tr-recipes tbody"), t.recipes.map((r) => Object.assign({}, r,
        { class: r.selected ? "selected" : null })));
    }));
  }

  // -- FLOPs and GPU-days ---------------------------------------------------------------------------------------
  function flops(root, ns) {
    const chin = root.querySelector(".fl-readout").dataset.chinchilla;
    wired(root, ns, { model: ".fl-model", tokens_b: ".fl-tokens", tflops: ".fl-tflops", gpus: ".fl-gpus" }, (v) =>
      configOf(v.model).then((cfg) => call("ffn_flops", [cfg, v.tokens_b, v.tflops, v.gpus, chin])).then((f) => {
        fill(root.querySelector(".fl-readout"), f);
      }));
  }

  // -- MoE explorer ---------------------------------------------------------------------------------------------
  function moe(root, ns) {
    function own(s) {   // a new starting point: its own experts, top-k and width
      const opt = s.c.model.selectedOptions[0];
      s.c.experts.value = opt.dataset.experts;
      s.c.top_k.value = opt.dataset.topK;
      s.c.width.value = opt.dataset.width;
    }
    const spec = { model: ".moe-model", experts: ".moe-experts", top_k: ".moe-top-k", width: ".moe-width" };
    const ownKey = { experts: "experts", top_k: "topK", width: "width" };
    wired(root, ns, spec, (v) => configOf(v.model).then((cfg) => call("ffn_moe",
      [cfg, v.experts, v.top_k, v.width])).then((x) => fill(root.querySelector(".moe-compare tbody"), x)), {
      model: own,
      // the URL's model first brings its own shape; then any changed value from the URL applies on top
      restored(s) { own(s); s.restore(["experts", "top_k", "width"]); },
      // experts, top-k and width are left out of the URL while they are the chosen model's own
      skip: (s) => Object.keys(ownKey).filter((k) => s.c[k].value === s.c.model.selectedOptions[0].dataset[ownKey[k]]),
    });
  }

  // -- INT4 probe: real numpy in the page -----------------------------------------------------------------------
  function int4(root, ns) {
    const status = root.querySelector(".q-status");
    const w = wired(root, ns, { rows: ".q-rows", cols: ".q-cols", outlier_pct: ".q-pct", outlier_scale: ".q-scale",
      seed: ".q-seed" }, (v) => {
      status.textContent = W.msg("ffn.quantizing");
      return call("ffn_int4_probe", [v.rows, v.cols, v.outlier_pct, v.outlier_scale, v.seed]).then((p) => {
        fill(root.querySelector(".readout"), p);
        rows(root.querySelector(".q-table tbody"), p.groups.map((g) => Object.assign({}, g,
          { raw: JSON.stringify(g.raw) })));
        status.textContent = W.msg("ffn.quantized");
        W.chart(root, p.chart);
      }, (e) => { status.textContent = ""; throw e; });
    });
    root.querySelector(".q-run").addEventListener("click", () => w.update());
    // once the runtime is up, run a tiny probe (16 × 3 weights, result unused): the browser compiles the numpy
    // code it needs on first use, and this way that happens while the learner reads, not on their first change
    window.courseRuntime.ready.then(() => window.courseRuntime.call("experiments.api:ffn_int4_probe",
      [16, 3, "10", "10", 0])).catch(() => {});
  }

  W.mount({
    "ffn-swiglu-budget": swiglu, "ffn-memory": memory, "ffn-training-memory": training, "ffn-flops": flops,
    "ffn-moe": moe, "ffn-int4": int4,
  });
})();

/*
 * The FFN deep read's three added widgets (in the same dialect):
 * ffn-prefill-decode, ffn-share-formula, ffn-depth-width. Each arrives complete from the build
 * (templates/ffn_prefill_decode.html, ffn_share_formula.html, ffn_depth_width.html); a change of a
 * control asks the same Python (experiments.api:ffn_prefill_decode, ffn_share_chart, ffn_depth_width_table and
 * ffn_depth_width_now, i.e. this lesson's extra.py) and fill() writes the strings it
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
        slider.setAttribute("aria-valuetext", W.msg("ffn.layers", { L: n.L }));
      }), { quiet: ["L"] });
    slider.addEventListener("input", () => { out.textContent = slider.value; w.update({ label: "L" }); });
  }

  W.mount({ "ffn-prefill-decode": prefillDecode, "ffn-share-formula": shareFormula, "ffn-depth-width": depthWidth });
})();
