/*
 * script.js - lesson C1's widget c1-bpe: byte-level BPE trained in the page's training worker on the shared training
 * panel (training.js's courseTrainer.panel: c1_bpe_start, then c1_bpe_step, a few merges per message, so the page
 * never waits for it; its step counter counts merges, its chart the training text's tokens), and
 * drawn at the merge count the learner picks (c1_bpe_show): the newest merges, the vocabulary, characters and bytes
 * per token on the training text, and the learner's sentence cut into coloured tokens. Any change asks for what it
 * shows: more merges than learned train on (c1_bpe_target), fewer are drawn at once from the merges learned; a new
 * text or pre-tokenisation starts a fresh run. Bad input (an empty text, one over the bound, a merge count past the
 * cap, a lone surrogate) is Python's one Chinese line, shown in the widget. Only window.courseWidgets' public API
 * and window.courseTrainer.
 *
 * c1-fair reruns the stored comparison of characters and BPE tokens on the shared training panel (below).
 *
 * For tests and the bench: the root carries data-state = idle | loading | running | paused | done | error
 * (the panel's) and data-merged = the merge count drawn last.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const trainer = window.courseTrainer;

  function bpe(root, ns) {
    const q = (c) => root.querySelector(".c1-" + c);
    const [source, own, scheme, range, num, sentence] = ["source", "own", "scheme", "k", "kn", "sentence"].map(q);
    const out = q("out");
    const base = JSON.parse(root.querySelector("figure.chart script.chart-spec").textContent);
    let learned = 0;      // merges the worker's trainer has made

    function draw(x) {
      W.fill(out, x);
      root.dataset.merged = String(x.k);
      root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
    }
    const shown = () => String(Math.min(Number(num.value) || 0, learned));
    const redraw = W.latest(root, "c1-bpe", () => (!panel.started() ? Promise.resolve(null)
      : trainer.call("c1_bpe_show", [panel.session(), shown(), sentence.value])), (x) => { if (x) draw(x); });

    const busy = () => root.dataset.state === "running" || root.dataset.state === "loading";
    function failed(e) {   // a call beside the run's steps failed: its message; the merges learned stay
      if (!panel.started() && root.dataset.state === "idle") return;   // (a reset run's late answer)
      W.showError(root, W.learnerMessage(e));
      if (panel.started()) panel.state("paused"); else panel.state("error", W.msg("c1.bpe.blocked"));
    }
    const current = (sid) => panel.started() && panel.session() === sid;   // (not reset since sid was asked)
    function finish() {   // the run reached its target: train on if the learner asked for more meanwhile
      const sid = panel.session();
      trainer.call("c1_bpe_target", [sid, num.value]).then((r) => {
        if (!current(sid)) return;
        if (!r.done) { panel.start(); return; }
        redraw({ label: "done" });
        panel.state("done", r.learned < Number(num.value)
          ? W.msg("c1.bpe.exhausted", { learned: r.learned })
          : W.msg("c1.bpe.done", { learned: r.learned }));
      }, failed);
    }
    // the one live-training panel (training.js; training_panel.html): its step counter counts merges, its chart
    // the training text's tokens after each merge, under the build's curve; the text and pre-tokenisation choose
    // the run (a change starts a fresh one)
    const panel = trainer.panel(root, {
      startCall: (t) => ["c1_bpe_start", [source.value === "own" ? own.value : t, scheme.value, num.value]],
      stepCall: "c1_bpe_step",
      locked: [source, scheme],
      curves: [{ figure: root, metric: "tokens", base: base }],
      fields: () => ({}),
      speed: "c1.bpe.speed",
      notes: { paused: W.msg("c1.bpe.paused"), reset: W.msg("c1.bpe.reset"), failed: W.msg("c1.bpe.blocked") },
      began: () => { learned = 0; },
      step: (row) => { learned = row.step; redraw({ label: "step" }); },
      done: finish,
      reset: () => { learned = 0; },
    });
    function train() {   // show the merge count asked for, training on when it is past the merges learned
      W.showError(root, "");
      if (!panel.started()) { if (!busy()) panel.start(); return; }   // (a starting run finishes, then looks again)
      const sid = panel.session();
      trainer.call("c1_bpe_target", [sid, num.value]).then((r) => {
        if (busy() || !current(sid)) return;   // the running loop picks the new target up
        if (!r.done) panel.start(); else finish();
      }, failed);
    }

    const b = W.bind(root, ns, { source: ".c1-source", scheme: ".c1-scheme", merges: ".c1-kn",
      sentence: ".c1-sentence" });
    range.addEventListener("input", () => { num.value = range.value; });
    range.addEventListener("change", () => { num.dispatchEvent(new Event("change")); });
    num.addEventListener("change", () => {
      if (num.validity.valid && num.value !== "") range.value = num.value;
      b.record();
      train();
    });
    sentence.addEventListener("input", () => {
      b.record();
      if (!panel.started()) train(); else { W.showError(root, ""); redraw({ label: "sentence" }); }
    });
    // (the panel resets a begun run when a locked control changes, before these listeners run)
    [source, scheme].forEach((c) => c.addEventListener("change", () => { b.record(); train(); }));
    own.addEventListener("change", () => { if (source.value === "own") { panel.reset(); train(); } });
    W.live(root, ".c1-source, .c1-own, .c1-scheme, .c1-k, .c1-kn, .c1-sentence");
    if (b.restore()) train();
  }

  // c1-fair: the build drew the stored comparison (characters against BPE tokens, bits per character on the
  // held-out passages); 重跑 trains its seed 0 again in the worker (c1_fair_start, then c1_fair_step: one step of
  // each model per row, each model's held-out bits per character at the evaluation steps), the two live curves on
  // the build's chart. Both curves' names and colours come from the build (data-names, data-colours).
  function fair(root) {
    const names = JSON.parse(root.dataset.names);
    const colours = JSON.parse(root.dataset.colours);
    const base = JSON.parse(root.querySelector("figure.chart script.chart-spec").textContent);
    trainer.panel(root, {
      startCall: (t) => ["c1_fair_start", [t]],
      stepCall: "c1_fair_step",
      curves: ["char", "bpe"].map((k) => ({ figure: root, base: base, metric: k, color: colours[k],
        name: W.msg("c1.fair.live", { name: names[k] }) })),
      fields: (row) => ({ char: row.char_text, bpe: row.bpe_text }),
      notes: { done: W.msg("c1.fair.done") },
    });
  }

  W.mount({ "c1-bpe": bpe, "c1-fair": fair });
})();
