/*
 * widgets-ffn-extra.js - the FFN deep read's three added widgets (plain JS, in the page's script file after widgets.js):
 * ffn-prefill-decode, ffn-share-formula, ffn-depth-width. Each arrives complete from the build
 * (site/templates/widgets/ffn_prefill_decode.html, ffn_share_formula.html, ffn_depth_width.html); a change of a
 * control asks the same Python (experiments.api:ffn_prefill_decode, ffn_share_chart, ffn_depth_width_table and
 * ffn_depth_width_now, i.e. experiments/lessons/c4_ffn_deep_read/extra.py) and writes the strings it returns with
 * textContent.
 * Only window.courseWidgets' helpers are used: mount, call, latest (one recompute at a time, "course:updated"
 * when done), getState/setState (the state lives in the URL under the widget's name), models, el, whenReady, live,
 * chart. The depth-width budget picker (at the built L and T) answers from the build's table (call() looks there
 * first); the rest asks Python.
 */
(function () {
  "use strict";

  const W = window.courseWidgets;
  const { getState, setState, models, el, whenReady, live, latest, chart, call } = W;
  const rt = window.courseRuntime;

  function q(root, testid) { return root.querySelector('[data-testid="' + testid + '"]'); }

  function put(root, values) {   // {data-testid: text}
    Object.entries(values).forEach(([k, v]) => { const n = q(root, k); if (n) n.textContent = v; });
  }

  function rows(table, data) {   // data: arrays of cells; class "r" on all but the cells given as [text, false]
    table.querySelector("tbody").replaceChildren(...data.map((cells) => el("tr", {}, cells.map((c) =>
      Array.isArray(c) ? el("td", { text: c[0] }) : el("td", { class: "r", text: c })))));
  }

  // controls: {key: element}; restores the URL's values (keys "<ns>.<key>"), records changes, skips defaults
  function persist(ns, controls, onChange) {
    const defaults = {};
    Object.entries(controls).forEach(([k, c]) => {
      defaults[k] = c.value;
      c.addEventListener("change", () => { setState(ns, k, c.value === defaults[k] ? null : c.value); onChange(k); });
    });
    return function restore() {
      let any = false;
      Object.entries(controls).forEach(([k, c]) => {
        const v = getState(ns, k);
        if (v === null) return;
        if (c.tagName === "SELECT" && !Array.from(c.options).some((o) => o.value === v)) return;
        c.value = v;
        any = true;
      });
      return any;
    };
  }

  // -- prefill vs decode ----------------------------------------------------------------------------------------
  function prefillDecode(root, ns) {
    const c = { model: q(root, "pd-model"), dtype: q(root, "pd-dtype"), gpu: q(root, "pd-gpu"),
      prompt: q(root, "pd-prompt"), batch: q(root, "pd-batch") };
    const recompute = latest(root, "ffn-prefill-decode", () => models().then((ms) => {
      const opt = c.gpu.selectedOptions[0];
      return call("ffn_prefill_decode", [ms[c.model.value].config, c.dtype.value, opt.dataset.bw, opt.dataset.peak,
        c.prompt.value.trim(), c.batch.value.trim()]);
    }).then((p) => {
      const side = (prefix, r) => ({ [prefix + "-tokens"]: r.tokens, [prefix + "-read"]: r.read,
        [prefix + "-flops"]: r.flops, [prefix + "-intensity"]: r.intensity, [prefix + "-tmem"]: r.t_mem,
        [prefix + "-tcmp"]: r.t_compute, [prefix + "-bound"]: r.bound, [prefix + "-use"]: r.use, [prefix + "-tps"]: r.tok_s });
      put(root, Object.assign({ "pd-ridge": p.ridge, "pd-crossover": p.crossover, "pd-speedup": p.speedup },
        side("pd-pre", p.prefill), side("pd-dec", p.decode)));
      rows(q(root, "pd-rows"), p.rows.map((r) => [r.tokens, r.intensity, r.t_mem, r.t_compute, r.tok_s, [r.bound, false]]));
    }));
    const restore = persist(ns, c, () => recompute({}));
    whenReady(root, "select, input");
    rt.ready.then(() => { if (restore()) recompute({}); }, () => {});
  }

  // -- the FFN share formula: a curve and the course's models as points -----------------------------------------
  function shareFormula(root, ns) {
    const points = JSON.parse(root.querySelector("script.sf-points").textContent);
    const c = { m: q(root, "sf-m"), kv: q(root, "sf-kv") };
    const recompute = latest(root, "ffn-share-formula", () =>
      call("ffn_share_chart", [Number(c.m.value), c.kv.value, points]).then((r) => {
        put(root, { "sf-attn": r.attn_d2, "sf-r23": r.r_two_thirds, "sf-r50": r.r_half, "sf-on": r.on_curve });
        chart(root, r.chart);
      }));
    const restore = persist(ns, c, () => recompute({}));
    whenReady(root, "select");
    rt.ready.then(() => { if (restore()) recompute({}); }, () => {});
  }

  // -- depth vs width at a fixed budget: a slider over L ----------------------------------------------------------
  function depthWidth(root, ns) {
    const c = { budget: q(root, "dw-budget"), L: q(root, "dw-L"), T: q(root, "dw-T") };
    const out = q(root, "dw-L-out");
    // two calls: the table (it does not move with the slider; the build answers it per budget at the built T) and
    // the slider's row (the build answers the built L; other values ask Python, which counts one config)
    const recompute = latest(root, "ffn-depth-width", () => {
      const budget = c.budget.value, T = c.T.value.trim();
      return Promise.all([call("ffn_depth_width_table", [budget, T]),
        call("ffn_depth_width_now", [budget, Number(c.L.value), T])]).then(([x, { now: n }]) => {
        put(root, { "dw-L-out": n.L, "dw-d": n.d, "dw-heads": n.heads, "dw-dff": n.d_ff, "dw-total": n.total,
          "dw-off": n.off, "dw-share-layer": n.share_layer, "dw-share-total": n.share_total, "dw-emb": n.emb_share,
          "dw-ffn-flops": n.ffn_flops, "dw-score": n.score, "dw-score-ratio": n.score_vs_ffn, "dw-cross": n.crossover,
          "dw-kv": n.kv, "dw-kv-T": n.kv_T });
        root.querySelector(".dw-T-out").textContent = x.T;
        c.L.setAttribute("aria-valuetext", n.L + " 层");
        rows(q(root, "dw-rows"), x.rows.map((r) => [r.L, r.d, r.d_ff, r.total, r.share_total, r.score_vs_ffn,
          r.crossover, r.kv]));
      });
    });
    c.L.addEventListener("input", () => { out.textContent = c.L.value; recompute({ label: "L" }); });
    const restore = persist(ns, c, (k) => { if (k !== "L") recompute({ label: k }); });
    live(root, "select");              // the build answered each budget at the built L and T
    whenReady(root, "input");
    rt.ready.then(() => { if (restore()) recompute({}); }, () => {});
  }

  W.mount({ "ffn-prefill-decode": prefillDecode, "ffn-share-formula": shareFormula, "ffn-depth-width": depthWidth });
})();
