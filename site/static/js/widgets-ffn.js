/*
 * widgets-ffn.js - behaviour of the FFN deep-read lesson's widgets (plain JS, <script defer>, after widgets.js,
 * whose helpers and conventions it uses).
 *
 * Every widget arrives complete from the build (site/templates/widgets/ffn_*.html, filled by
 * sitegen/widgets_ffn.py with experiments.ffn). This file only makes the controls live: each change calls the
 * same Python through window.courseRuntime.call("experiments.api:ffn_*", [...]) and writes the returned display
 * strings with textContent (never innerHTML). Controls stay disabled until the runtime is ready. Each widget keeps
 * its state in the URL query under its own keys (sw_*, mem_*, tr_*, fl_*, moe_*, q_*), so a link reproduces it.
 * After every successful update the widget's root dispatches "course:updated" (the browser tests wait for it).
 */
(function () {
  "use strict";

  const rt = window.courseRuntime;
  const W = window.courseWidgets;   // widgets.js: the helpers every lesson's widgets share
  const { setParams, models, el, whenReady } = W;

  // -- helpers of this lesson's widgets ---------------------------------------------------------------------------
  function query() { return new URLSearchParams(location.search); }

  function td(text, right) { return el("td", right === false ? { text: text } : { class: "r", text: text }); }

  function setText(root, testid, text) {
    const node = root.querySelector('[data-testid="' + testid + '"]');
    if (node) node.textContent = text;
  }

  function fill(root, selector, rows) {   // rows: arrays of cells (text, or [text, alignRight])
    const body = root.querySelector(selector + " tbody");
    body.replaceChildren(...rows.map((cells) => el("tr", {}, cells.map((c) =>
      Array.isArray(c) ? td(c[0], c[1]) : td(c)))));
  }

  function showError(root, selector, e) {
    const box = root.querySelector(selector);
    if (!box) return;
    if (e) { box.hidden = false; box.textContent = "计算失败：" + (e.message || e); } else { box.hidden = true; box.textContent = ""; }
  }

  function done(root) { root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true })); }

  function latest() {   // drop answers to requests that a newer one has overtaken
    let seq = 0;
    return (promise, apply) => {
      const mine = ++seq;
      return promise.then((v) => { if (mine === seq) apply(v); });
    };
  }

  function restore(root, params, map) {   // map: URL key -> control selector; returns true if any was set
    let any = false;
    Object.entries(map).forEach(([key, sel]) => {
      const v = params.get(key);
      const c = root.querySelector(sel);
      if (v === null || !c) return;
      if (c.type === "checkbox") c.checked = v === "1";
      else if (c.tagName === "SELECT" && !c.querySelector('option[value="' + CSS.escape(v) + '"]')) return;
      else c.value = v;
      any = true;
    });
    return any;
  }

  function configOf(alias) {
    return models().then((ms) => {
      if (!ms[alias]) throw new Error("未知模型 " + alias);
      return ms[alias].config;
    });
  }

  // -- SwiGLU budget explorer -----------------------------------------------------------------------------------
  function swiglu(root) {
    const c = {
      d: root.querySelector(".sw-d"), ratio: root.querySelector(".sw-ratio"),
      m: root.querySelector(".sw-matrices"), align: root.querySelector(".sw-align"),
    };
    const known = JSON.parse(root.dataset.known || "[]");
    const guard = latest();
    function update() {
      const args = [Number(c.d.value), c.ratio.value.trim(), Number(c.m.value), Number(c.align.value)];
      setParams({ sw_d: args[0], sw_ratio: args[1], sw_m: args[2], sw_align: args[3] });
      const both = Promise.all([
        rt.call("experiments.api:ffn_swiglu_budget", args.concat([known])),
        rt.call("experiments.api:ffn_config_family", [args[1], args[3]]),
      ]);
      return guard(both, ([b, fam]) => {
        showError(root, ".sw-error", null);
        setText(root, "sw-dff", b.mine.d_ff);
        setText(root, "sw-nominal", b.mine.nominal);
        setText(root, "sw-ffn", b.mine.ffn);
        setText(root, "sw-8d2", b.eight_d2);
        setText(root, "sw-vs", b.mine.vs_8d2);
        setText(root, "sw-over", b.mine.over_8d2);
        setText(root, "sw-attn", b.attn);
        setText(root, "sw-share", b.mine.layer_share);
        fill(root, ".sw-refs", b.refs.map((r) => [[r.label, false], String(r.matrices), r.d_ff, r.ffn, r.vs_8d2,
          r.over_8d2, r.layer_share]));
        root.querySelector(".sw-align-ratio").textContent = b.matrices === 3 ? b.ratio : "8/3";
        root.querySelector(".sw-align-to").textContent = String(b.align);
        fill(root, ".sw-alignment", b.alignment.map((r) => [r.d, r.nominal, r.d_ff, r.added, r.error, [r.models, false]]));
        fill(root, ".sw-family", fam.rows.map((r) => [String(r.L), r.d, r.d_ff, r.width, r.share_layer, r.share_total,
          r.total]));
        done(root);
      }).catch((e) => showError(root, ".sw-error", e));
    }
    whenReady(root, "input, select");
    Object.values(c).forEach((x) => x.addEventListener("change", update));
    rt.ready.then(() => {
      if (restore(root, query(), { sw_d: ".sw-d", sw_ratio: ".sw-ratio", sw_m: ".sw-matrices", sw_align: ".sw-align" })) update();
    }, () => {});
  }

  // -- memory and decode calculator -----------------------------------------------------------------------------
  const MEMORY_READOUT = {   // data-testid -> key of experiments.api:ffn_memory's answer
    "mem-params": "params", "mem-weights-gb": "weights", "mem-ffn-gb": "ffn_weights", "mem-ffn-share": "ffn_share",
    "mem-read": "read", "mem-read-ffn": "read_ffn_share", "mem-tmem": "t_mem", "mem-tcmp": "t_compute",
    "mem-tstep": "t_step", "mem-bound": "bound", "mem-tps": "tok_s_stream", "mem-tps-total": "tok_s_total",
    "mem-takeover": "takeover",
  };

  function memory(root) {
    const c = {
      model: root.querySelector(".mem-model"), dtype: root.querySelector(".mem-dtype"),
      gpu: root.querySelector(".mem-gpu"), bw: root.querySelector(".mem-bw"),
      peak: root.querySelector(".mem-peak"), batch: root.querySelector(".mem-batch"),
    };
    const pasted = root.querySelector(".mem-config");
    const guard = latest();
    let pastedConfig = null;
    function currentConfig() {
      if (c.model.value === "__pasted") {
        if (!pastedConfig) return Promise.reject(new Error("先在下面粘贴一份 config.json"));
        return Promise.resolve(pastedConfig);
      }
      return configOf(c.model.value);
    }
    function update() {
      setParams({ mem_model: c.model.value === "__pasted" ? null : c.model.value, mem_dtype: c.dtype.value,
        mem_gpu: c.gpu.value, mem_bw: c.bw.value, mem_peak: c.peak.value, mem_batch: c.batch.value });
      const work = currentConfig().then((config) => Promise.all([
        rt.call("experiments.api:ffn_memory", [config, c.dtype.value, c.bw.value.trim(), Number(c.batch.value), c.peak.value.trim()]),
        rt.call("experiments.api:ffn_batch_series", [config, c.dtype.value, c.bw.value.trim(), c.peak.value.trim()]),
      ]));
      return guard(work, ([r, s]) => {
        showError(root, ".mem-error", null);
        Object.entries(MEMORY_READOUT).forEach(([testid, key]) => setText(root, testid, r[key]));
        fill(root, ".mem-batches", s.rows.map((x) => [x.batch, x.t_step, x.tok_s_stream, x.tok_s_total, [x.bound, false]]));
        done(root);
      }).catch((e) => showError(root, ".mem-error", e));
    }
    c.gpu.addEventListener("change", () => {
      const opt = c.gpu.selectedOptions[0];
      if (opt && opt.dataset.bw) { c.bw.value = opt.dataset.bw; c.peak.value = opt.dataset.peak; }
      update();
    });
    [c.bw, c.peak].forEach((x) => x.addEventListener("change", () => {
      const opt = c.gpu.selectedOptions[0];
      if (opt && opt.dataset.bw && (c.bw.value !== opt.dataset.bw || c.peak.value !== opt.dataset.peak)) c.gpu.value = "custom";
      update();
    }));
    [c.model, c.dtype, c.batch].forEach((x) => x.addEventListener("change", update));
    root.querySelector(".mem-use-config").addEventListener("click", () => {
      try {
        const doc = JSON.parse(pasted.value);
        pastedConfig = doc && doc.config && doc.meta && !doc.model_type ? doc.config : doc;
      } catch (e) {
        showError(root, ".mem-error", new Error("不是合法的 JSON：" + e.message));
        return;
      }
      c.model.value = "__pasted";
      update();
    });
    whenReady(root, "input, select, textarea, button");
    rt.ready.then(() => {
      if (restore(root, query(), { mem_model: ".mem-model", mem_dtype: ".mem-dtype", mem_gpu: ".mem-gpu",
        mem_bw: ".mem-bw", mem_peak: ".mem-peak", mem_batch: ".mem-batch" })) update();
    }, () => {});
  }

  // -- training memory ------------------------------------------------------------------------------------------
  function training(root) {
    const c = {
      model: root.querySelector(".tr-model"), recipe: root.querySelector(".tr-recipe"),
      batch: root.querySelector(".tr-batch"), seq: root.querySelector(".tr-seq"), ckpt: root.querySelector(".tr-ckpt"),
    };
    const guard = latest();
    function update() {
      setParams({ tr_model: c.model.value, tr_recipe: c.recipe.value, tr_batch: c.batch.value, tr_seq: c.seq.value,
        tr_ckpt: c.ckpt.checked ? "1" : null });
      const work = configOf(c.model.value).then((config) => rt.call("experiments.api:ffn_training_memory",
        [config, c.recipe.value, Number(c.batch.value), Number(c.seq.value), c.ckpt.checked]));
      return guard(work, (t) => {
        showError(root, ".tr-error", null);
        ["params", "per_param", "states", "ffn_states", "ffn_share", "tokens", "act_full", "act_ckpt", "total"].forEach((k) =>
          setText(root, "tr-" + k.replace(/_/g, "-"), t[k]));
        setText(root, "tr-act", t.activations);
        root.querySelector(".tr-recipe-zh").textContent = t.recipe_zh;
        fill(root, ".tr-parts", t.rows.map((r) => [[r.label, false], r.bytes, r.total]));
        fill(root, ".tr-recipes", t.recipes.map((r) => [[r.label, false], r.bytes, r.total]));
        root.querySelectorAll(".tr-recipes tbody tr").forEach((tr, i) => tr.classList.toggle("selected", t.recipes[i].selected));
        done(root);
      }).catch((e) => showError(root, ".tr-error", e));
    }
    Object.values(c).forEach((x) => x.addEventListener("change", update));
    whenReady(root, "input, select");
    rt.ready.then(() => {
      if (restore(root, query(), { tr_model: ".tr-model", tr_recipe: ".tr-recipe", tr_batch: ".tr-batch",
        tr_seq: ".tr-seq", tr_ckpt: ".tr-ckpt" })) update();
    }, () => {});
  }

  // -- FLOPs and GPU-days ---------------------------------------------------------------------------------------
  function flops(root) {
    const c = {
      model: root.querySelector(".fl-model"), tokens: root.querySelector(".fl-tokens"),
      tflops: root.querySelector(".fl-tflops"), gpus: root.querySelector(".fl-gpus"),
    };
    const chin = root.querySelector(".fl-readout").dataset.chinchilla;
    const guard = latest();
    function update() {
      setParams({ fl_model: c.model.value, fl_tokens: c.tokens.value, fl_tflops: c.tflops.value, fl_gpus: c.gpus.value });
      const work = configOf(c.model.value).then((config) => rt.call("experiments.api:ffn_flops",
        [config, c.tokens.value.trim(), c.tflops.value.trim(), Number(c.gpus.value), chin]));
      return guard(work, (f) => {
        showError(root, ".fl-error", null);
        const map = { "fl-params": f.params, "fl-active": f.active, "fl-fwd": f.fwd, "fl-fwd-matmul": f.fwd_matmul,
          "fl-ffn-share": f.ffn_flops_share, "fl-train": f.train, "fl-D": f.tokens, "fl-gpu-days": f.gpu_days,
          "fl-gpus-out": f.gpus, "fl-wall": f.wall_days, "fl-tpp": f.tokens_per_param, "fl-chin-tokens": f.chinchilla_tokens };
        Object.entries(map).forEach(([k, v]) => setText(root, k, v));
        done(root);
      }).catch((e) => showError(root, ".fl-error", e));
    }
    Object.values(c).forEach((x) => x.addEventListener("change", update));
    whenReady(root, "input, select");
    rt.ready.then(() => {
      if (restore(root, query(), { fl_model: ".fl-model", fl_tokens: ".fl-tokens", fl_tflops: ".fl-tflops",
        fl_gpus: ".fl-gpus" })) update();
    }, () => {});
  }

  // -- MoE explorer ---------------------------------------------------------------------------------------------
  function moe(root) {
    const c = {
      model: root.querySelector(".moe-model"), experts: root.querySelector(".moe-experts"),
      topk: root.querySelector(".moe-top-k"), width: root.querySelector(".moe-width"),
    };
    const guard = latest();
    function update() {
      setParams({ moe_model: c.model.value, moe_e: c.experts.value, moe_k: c.topk.value, moe_w: c.width.value });
      const work = configOf(c.model.value).then((config) => rt.call("experiments.api:ffn_moe",
        [config, Number(c.experts.value), Number(c.topk.value), Number(c.width.value)]));
      return guard(work, (x) => {
        showError(root, ".moe-error", null);
        const rows = root.querySelectorAll(".moe-compare tbody tr");
        const lines = [
          [x.base.experts + " / " + x.base.top_k + " / " + x.base.width, x.now.experts + " / " + x.now.top_k + " / " + x.now.width],
          [x.base.total, x.now.total], [x.base.active, x.now.active], [x.base.ratio, x.now.ratio],
          [x.base.ffn_share_total, x.now.ffn_share_total], [x.base.ffn_share_active, x.now.ffn_share_active],
          [x.base.weights_bf16, x.now.weights_bf16], [x.base.active_bf16, x.now.active_bf16],
        ];
        rows.forEach((tr, i) => {
          const cells = tr.querySelectorAll("td");
          cells[0].textContent = lines[i][0];
          cells[1].textContent = lines[i][1];
        });
        done(root);
      }).catch((e) => showError(root, ".moe-error", e));
    }
    c.model.addEventListener("change", () => {   // a new starting point: its own experts, top-k and width
      const opt = c.model.selectedOptions[0];
      c.experts.value = opt.dataset.experts;
      c.topk.value = opt.dataset.topK;
      c.width.value = opt.dataset.width;
      update();
    });
    [c.experts, c.topk, c.width].forEach((x) => x.addEventListener("change", update));
    whenReady(root, "input, select");
    rt.ready.then(() => {
      const params = query();
      const picked = restore(root, params, { moe_model: ".moe-model" });
      if (picked) {   // start from the chosen model's own shape, then apply any changed value from the URL
        const opt = c.model.selectedOptions[0];
        c.experts.value = opt.dataset.experts;
        c.topk.value = opt.dataset.topK;
        c.width.value = opt.dataset.width;
      }
      if (restore(root, params, { moe_e: ".moe-experts", moe_k: ".moe-top-k", moe_w: ".moe-width" }) || picked) update();
    }, () => {});
  }

  // -- INT4 probe: real numpy in the page -----------------------------------------------------------------------
  function int4(root) {
    const c = {
      rows: root.querySelector(".q-rows"), cols: root.querySelector(".q-cols"), pct: root.querySelector(".q-pct"),
      scale: root.querySelector(".q-scale"), seed: root.querySelector(".q-seed"),
    };
    const run = root.querySelector(".q-run");
    const status = root.querySelector(".q-status");
    const guard = latest();
    function update() {
      setParams({ q_rows: c.rows.value, q_cols: c.cols.value, q_pct: c.pct.value, q_scale: c.scale.value, q_seed: c.seed.value });
      status.textContent = "正在浏览器里用 numpy 量化…";
      const args = [Number(c.rows.value), Number(c.cols.value), c.pct.value.trim(), c.scale.value.trim(), Number(c.seed.value)];
      return guard(rt.call("experiments.api:ffn_int4_probe", args), (p) => {
        showError(root, ".q-error", null);
        setText(root, "q-shape", p.rows + " × " + p.cols);
        setText(root, "q-weights", p.weights);
        setText(root, "q-outliers", p.outliers);
        setText(root, "q-scale-out", p.outlier_scale);
        setText(root, "q-rms-w", p.rms_w);
        setText(root, "q-seed-out", String(p.seed));
        setText(root, "q-checksum", p.checksum);
        const body = root.querySelector(".q-table tbody");
        body.replaceChildren(...p.groups.map((g) => el("tr", { "data-group": String(g.group), "data-raw": JSON.stringify(g.raw) },
          [td(g.group_label), td(g.bits), td(g.rms), td(g.rel), td(g.rel_normal), td(g.rel_plain)])));
        status.textContent = "以下是刚才在浏览器里算出的结果。";
        if (window.courseCharts) window.courseCharts.update(root.querySelector(".chart"), p.chart);
        done(root);
      }).catch((e) => { status.textContent = ""; showError(root, ".q-error", e); });
    }
    run.addEventListener("click", update);
    Object.values(c).forEach((x) => x.addEventListener("change", update));
    whenReady(root, "input, select, button");
    // once the runtime is up, run a tiny probe (16 × 3 weights, result unused): the browser compiles the numpy
    // code it needs on first use, and this way that happens while the learner reads, not on their first change
    rt.ready.then(() => rt.call("experiments.api:ffn_int4_probe", [16, 3, "10", "10", 0])).catch(() => {});
    rt.ready.then(() => {
      if (restore(root, query(), { q_rows: ".q-rows", q_cols: ".q-cols", q_pct: ".q-pct", q_scale: ".q-scale",
        q_seed: ".q-seed" })) update();
    }, () => {});
  }

  W.mount({
    "ffn-swiglu-budget": swiglu, "ffn-memory": memory, "ffn-training-memory": training, "ffn-flops": flops,
    "ffn-moe": moe, "ffn-int4": int4,
  });
})();
