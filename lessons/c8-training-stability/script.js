/*
 * script.js - lesson C8's "break it, then fix it" widget. The toggles pick one of the precomputed runs the build
 * embedded (every setting, so they answer before Python is ready); 开始 trains the same setting live in the
 * page's training worker (training.js), one step per request, and draws it in red over the stored curves.
 * Numbers a learner reads are formatted by Python (this lesson's widgets.py).
 * Each widget root carries data-state = idle | loading | running | paused | done | error.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const trainer = window.courseTrainer;

  function breakFix(root, ns) {
    const { tables, toggles } = JSON.parse(root.querySelector("script.c8-break-fix-table").textContent);
    const boxes = Array.from(root.querySelectorAll(".c8-toggle"));
    const charts = Array.from(root.querySelectorAll(".c8-chart"));
    const bases = charts.map((c) => JSON.parse(c.querySelector("figure.chart script.chart-spec").textContent));
    const metrics = charts.map((c) => c.dataset.metric);
    let live = null;   // the live run's curves, metric -> series (the panel's), or null

    function setting() {
      const s = {};
      boxes.forEach((b) => { s[b.name] = b.checked ? 1 : 0; });
      return s;
    }
    function keyOf(s) { return toggles.map((t) => t + s[t]).join("-"); }

    function series(name, color, t) {
      return { name: name, color: color, x: t.x, y: t.y,
        text: t.x.map((x, i) => W.msg("train.point", { name: name, step: x, value: t.t[i] })) };
    }
    function draw() {
      const now = tables[keyOf(setting())], off = tables[root.dataset.off];
      charts.forEach((c, i) => {
        const s = [series(bases[i].series[0].name, "#7f7f7f", off.series[metrics[i]]),
                   series(bases[i].series[1].name, "#1f77b4", now.series[metrics[i]])];
        if (live && live[metrics[i]].x.length) s.push(live[metrics[i]]);
        W.chart(c, Object.assign({}, bases[i], { series: s }));
      });
    }
    function show() {
      const now = tables[keyOf(setting())].summary;
      W.fill(root.querySelector(".c8-summary"), now);
      W.fill(root.querySelector(".c8-spike"), now);
      draw();
      root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
    }
    // the live run: the one live-training panel (training.js; training_panel.html), drawn in red over the stored
    // curves of the three charts; the toggles choose it (a change resets a run that has begun)
    trainer.panel(root, {
      startCall: (t) => ["c8_train_start", [t, setting(), 0]],
      stepCall: "c8_train_step",
      locked: boxes,
      fields: (s) => ({ loss: s.loss_text, grad_norm: s.grad_norm_text, max_attn_logit: s.max_attn_logit_text }),
      curves: charts.map((c, i) => ({ figure: c, metric: metrics[i], base: bases[i] })),
      draw: (curves) => { live = curves; draw(); },
      notes: { done: W.msg("c8.live.done"), diverged: W.msg("c8.live.diverged") },
    });

    boxes.forEach((b) => {
      const saved = W.getState(ns, b.name);
      if (saved === "0" || saved === "1") b.checked = saved === "1";
      b.disabled = false;
      b.addEventListener("change", () => {
        W.setState(ns, b.name, b.checked === b.defaultChecked ? null : (b.checked ? "1" : "0"));
        show();
      });
    });
    if (boxes.some((b) => b.checked !== b.defaultChecked)) show();
  }

  W.mount({ "c8-break-fix": breakFix });
})();
