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
    const [startB, pauseB, resetB] = ["start", "pause", "reset"].map((k) => root.querySelector(".c8-live-" + k));
    const out = (name) => root.querySelector('output[name="' + name + '"]');
    const stateText = root.querySelector(".c8-live-state");
    const metrics = charts.map((c) => c.dataset.metric);
    let live = null, drawTimer = 0;

    function setting() {
      const s = {};
      boxes.forEach((b) => { s[b.name] = b.checked ? 1 : 0; });
      return s;
    }
    function keyOf(s) { return toggles.map((t) => t + s[t]).join("-"); }

    function series(name, color, t) {
      return { name: name, color: color, x: t.x, y: t.y, text: t.x.map((x, i) => name + " 第 " + x + " 步：" + t.t[i]) };
    }
    function draw() {
      clearTimeout(drawTimer);
      drawTimer = 0;
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
    const panel = { start: startB, pause: pauseB, reset: resetB, locked: boxes, text: stateText };
    const setState = (s, note) => trainer.showState(root, panel, s, note);
    const readout = ["loss", "grad_norm", "max_attn_logit"];
    const runner = trainer.run({
      text: root.dataset.text,
      startCall: (t) => ["c8_train_start", [t, setting(), 0]],
      stepCall: "c8_train_step",
      state: setState,
      began: () => {
        live = {};
        metrics.forEach((m) => { live[m] = { name: "你的实时训练", color: "#d62728", x: [], y: [], text: [] }; });
      },
      steps: (rows) => {
        for (const s of rows) {
          metrics.forEach((m) => {
            live[m].x.push(s.step);
            live[m].y.push(s[m]);
            live[m].text.push("你的实时训练 第 " + s.step + " 步：" + s[m + "_text"]);
          });
          out("step").textContent = String(s.step);
          readout.forEach((k) => { out(k).textContent = s[k + "_text"]; });
        }
        if (!drawTimer) drawTimer = setTimeout(draw, 400);
      },
      done: (rows) => {
        const last = rows[rows.length - 1];
        setState("done", last && last.loss === null ? "（loss 变成了非有限值，训练发散了）" : "（已经训练完，和预先算好的蓝线对照看看）");
        draw();
      },
      failed: (e) => {
        W.showError(root, W.learnerMessage(e));
        setState("error", "（训练出错，已停止）");
      },
    });
    function reset() {
      runner.reset();
      live = null;
      out("step").textContent = "0";
      readout.forEach((k) => { out(k).textContent = "—"; });
      W.showError(root, "");
      setState("idle", "（尚未开始；训练在后台的独立线程里进行，红线会画在上面三张图里）");
      draw();
    }

    boxes.forEach((b) => {
      const saved = W.getState(ns, b.name);
      if (saved === "0" || saved === "1") b.checked = saved === "1";
      b.disabled = false;
      b.addEventListener("change", () => {
        W.setState(ns, b.name, b.checked === b.defaultChecked ? null : (b.checked ? "1" : "0"));
        if (runner.started()) reset();     // a live run keeps its setting: another one starts afresh
        show();
      });
    });
    if (boxes.some((b) => b.checked !== b.defaultChecked)) show();
    startB.addEventListener("click", () => { W.showError(root, ""); runner.start(); });
    pauseB.addEventListener("click", () => {
      runner.pause();
      setState("paused", "（已暂停；点开始继续）");
      draw();
    });
    resetB.addEventListener("click", reset);
    setState("idle", stateText.textContent);
  }

  W.mount({ "c8-break-fix": breakFix });
})();
