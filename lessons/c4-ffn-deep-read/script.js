/*
 * script.js - the FFN deep-read lesson's widgets, declared in the one dialect of widgets.js (declare: the core binds
 * the controls, keeps them in the URL as <widget>.<option> (ffn-memory.dtype=FP32, defaults left out), asks the
 * latest state, answers from the build's table first, fills the answer).
 *
 * Every widget arrives complete from the build (templates/ffn_*.html, filled by the lesson's widgets.py with
 * calc.py and extra.py). Each change calls the same functions as experiments.api:ffn_* (answered from the build's
 * table when it has the state, else by Python) and fills the template's data-f fields and <template class="row">
 * rows with the returned strings. A built-in model is sent as its id (W.model), a pasted config as its text.
 * The INT4 probe runs numpy in the page with a status line of its own: it keeps a setup (mount).
 */
(function () {
  "use strict";

  const W = window.courseWidgets;
  const ALL = "input, select, textarea, button";   // the first widgets' controls are all live at once

  // -- memory and decode calculator: a preset GPU brings its bandwidth and peak ------------------------------------
  function preset(w) { const o = w.c.gpu.selectedOptions[0]; return o && o.dataset.bw ? o : null; }
  function usePreset(w) {
    const p = preset(w);
    if (p) { w.c.bw.value = p.dataset.bw; w.c.peak.value = p.dataset.peak; }
  }
  function typed(w) {   // a typed bandwidth or peak that is not the preset's makes the GPU "custom"
    const p = preset(w);
    if (p && (w.c.bw.value.trim() !== p.dataset.bw || w.c.peak.value.trim() !== p.dataset.peak)) w.c.gpu.value = "custom";
  }

  // -- MoE explorer: a new starting point brings its own experts, top-k and width -----------------------------------
  const OWN = { experts: "experts", top_k: "topK", width: "width" };
  function own(w) {
    const opt = w.c.model.selectedOptions[0];
    Object.keys(OWN).forEach((k) => { w.c[k].value = opt.dataset[OWN[k]]; });
  }

  W.declare({
    // -- SwiGLU budget explorer -------------------------------------------------------------------------------------
    "ffn-swiglu-budget": {
      controls: { d: ".sw-d", ratio: ".sw-ratio", matrices: ".sw-matrices", align: ".sw-align" },
      call: ["ffn_swiglu_budget", "ffn_config_family"],
      args: (v, w) => [[v.d, v.ratio, v.matrices, v.align, JSON.parse(w.root.dataset.known || "[]")], [v.ratio, v.align]],
      answer: null,
      show: ([b, fam], w) => {
        W.fill(w.root.querySelector(".readout"), Object.assign({}, b, b.mine));
        W.rows(w.root.querySelector(".sw-refs tbody"), b.refs);
        w.root.querySelector(".sw-align-ratio").textContent = b.matrices === 3 ? b.ratio : "8/3";
        w.root.querySelector(".sw-align-to").textContent = String(b.align);
        W.rows(w.root.querySelector(".sw-alignment tbody"), b.alignment);
        W.rows(w.root.querySelector(".sw-family tbody"), fam.rows);
      },
      live: ALL,
    },
    // -- memory and decode calculator ---------------------------------------------------------------------------------
    "ffn-memory": {
      controls: { model: ".mem-model", dtype: ".mem-dtype", gpu: ".mem-gpu", bw: ".mem-bw", peak: ".mem-peak",
        batch: ".mem-batch" },
      call: ["ffn_memory", "ffn_batch_series"],
      args: (v, w) => {   // a pasted config goes to Python as it is: Python reads it and names what is wrong in Chinese
        if (v.model === "__pasted" && !w.pasted) throw new Error(W.msg("ffn.paste_first"));
        const config = v.model === "__pasted" ? w.pasted : W.model(v.model);
        return [[config, v.dtype, v.bw, v.batch, v.peak], [config, v.dtype, v.bw, v.peak]];
      },
      answer: null,
      show: ([r, series], w) => {
        W.fill(w.root.querySelector(".mem-readout"), r);
        W.rows(w.root.querySelector(".mem-batches tbody"), series.rows);
      },
      live: ALL,
      on: { gpu: usePreset, bw: typed, peak: typed },
      restored: (w) => {   // a GPU from the URL brings its figures; a bandwidth or peak alone makes it custom
        if (w.values().gpu === "custom") return;
        if (W.getState(w.ns, "bw") !== null || W.getState(w.ns, "peak") !== null) typed(w); else usePreset(w);
      },
      skip: (w) => {   // bandwidth and peak only for a custom GPU; a pasted config is not a link's to give
        const v = w.values();
        return (v.gpu === "custom" ? [] : ["bw", "peak"]).concat(v.model === "__pasted" ? ["model"] : []);
      },
      setup: (w) => w.root.querySelector(".mem-use-config").addEventListener("click", () => {
        w.pasted = w.root.querySelector(".mem-config").value;
        w.c.model.value = "__pasted";
        w.record();
        w.update({ label: "pasted" });
      }),
    },
    // -- training memory ----------------------------------------------------------------------------------------------
    "ffn-training-memory": {
      controls: { model: ".tr-model", recipe: ".tr-recipe", batch: ".tr-batch", seq: ".tr-seq", checkpointing: ".tr-ckpt" },
      call: "ffn_training_memory",
      args: (v) => [W.model(v.model), v.recipe, v.batch, v.seq, v.checkpointing],
      answer: ".readout",
      show: (t, w) => {
        w.root.querySelector(".tr-recipe-zh").textContent = t.recipe_zh;
        W.rows(w.root.querySelector(".tr-parts tbody"), t.rows);
        W.rows(w.root.querySelector(".tr-recipes tbody"), t.recipes.map((r) => Object.assign({}, r,
          { class: r.selected ? "selected" : null })));
      },
      live: ALL,
    },
    // -- FLOPs and GPU-days -------------------------------------------------------------------------------------------
    "ffn-flops": {
      controls: { model: ".fl-model", tokens_b: ".fl-tokens", tflops: ".fl-tflops", gpus: ".fl-gpus" },
      call: "ffn_flops",
      args: (v, w) => [W.model(v.model), v.tokens_b, v.tflops, v.gpus, w.root.querySelector(".fl-readout").dataset.chinchilla],
      answer: ".fl-readout",
      live: ALL,
    },
    // -- MoE explorer -------------------------------------------------------------------------------------------------
    "ffn-moe": {
      controls: { model: ".moe-model", experts: ".moe-experts", top_k: ".moe-top-k", width: ".moe-width" },
      call: "ffn_moe",
      args: (v) => [W.model(v.model), v.experts, v.top_k, v.width],
      answer: ".moe-compare tbody",
      live: ALL,
      on: { model: own },
      // the URL's model first brings its own shape; then any changed value from the URL applies on top
      restored: (w) => { own(w); w.restore(Object.keys(OWN)); },
      // experts, top-k and width are left out of the URL while they are the chosen model's own
      skip: (w) => Object.keys(OWN).filter((k) => w.c[k].value === w.c.model.selectedOptions[0].dataset[OWN[k]]),
    },
    // -- prefill vs decode --------------------------------------------------------------------------------------------
    "ffn-prefill-decode": {
      controls: { model: ".pd-model", dtype: ".pd-dtype", gpu: ".pd-gpu", prompt: ".pd-prompt", batch: ".pd-batch" },
      call: "ffn_prefill_decode",
      args: (v, w) => {
        const opt = w.c.gpu.selectedOptions[0];
        return [W.model(v.model), v.dtype, opt.dataset.bw, opt.dataset.peak, v.prompt, v.batch];
      },
      whenReady: "select, input",
    },
    // -- the FFN share formula: a curve and the course's models as points ---------------------------------------------
    "ffn-share-formula": {
      controls: { m: ".sf-m", kv: ".sf-kv" },
      call: "ffn_share_chart",
      args: (v, w) => [Number(v.m), v.kv, JSON.parse(w.root.querySelector("script.sf-points").textContent)],
      show: (r, w) => W.chart(w.root, r.chart),
      whenReady: "select",
    },
    // -- depth vs width at a fixed budget: a slider over L --------------------------------------------------------------
    // two calls: the table (it does not move with the slider; the build answers it per budget at the built T) and
    // the slider's row (the build answers the built L; other values ask Python, which counts one config)
    "ffn-depth-width": {
      controls: { budget: ".dw-budget", L: ".dw-L", T: ".dw-T" },
      call: ["ffn_depth_width_table", "ffn_depth_width_now"],
      args: (v) => [[v.budget, v.T], [v.budget, Number(v.L), v.T]],
      answer: null,
      show: ([x, { now: n }], w) => {
        W.fill(w.root, { T: x.T, rows: x.rows, now: n });
        w.c.L.setAttribute("aria-valuetext", W.msg("ffn.layers", { L: n.L }));
      },
      live: "select",              // the build answered each budget at the built L and T
      whenReady: "input",
      on: { L: (w) => { w.root.querySelector(".dw-L-out").textContent = w.c.L.value; } },
    },
  });

  // -- INT4 probe: real numpy in the page, with a status line of its own (running, done, cleared on a failure) -------
  function int4(root, ns) {
    const status = root.querySelector(".q-status");
    const s = W.bind(root, ns, { rows: ".q-rows", cols: ".q-cols", outlier_pct: ".q-pct", outlier_scale: ".q-scale",
      seed: ".q-seed" });
    const run = W.latest(root, ns, () => {
      const v = s.values();
      status.textContent = W.msg("ffn.quantizing");
      return W.call("ffn_int4_probe", [v.rows, v.cols, v.outlier_pct, v.outlier_scale, v.seed]).then((p) => {
        W.fill(root.querySelector(".readout"), p);
        W.rows(root.querySelector(".q-table tbody"), p.groups.map((g) => Object.assign({}, g,
          { raw: JSON.stringify(g.raw) })));
        status.textContent = W.msg("ffn.quantized");
        W.chart(root, p.chart);
      }, (e) => { status.textContent = ""; throw e; });
    });
    W.live(root, ALL);
    s.onChange(() => { s.record(); run({ label: "input" }); });
    if (s.restore()) { s.record(); run({ label: "restore" }); }
    root.querySelector(".q-run").addEventListener("click", () => run({ label: "run" }));
    // once the runtime is up, run a tiny probe (16 × 3 weights, result unused): the browser compiles the numpy
    // code it needs on first use, and this way that happens while the learner reads, not on their first change
    window.courseRuntime.ready.then(() => window.courseRuntime.call("experiments.api:ffn_int4_probe",
      [16, 3, "10", "10", 0])).catch(() => {});
  }

  W.mount({ "ffn-int4": int4 });
})();
