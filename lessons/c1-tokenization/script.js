/*
 * script.js - lesson C1's widget c1-bpe: byte-level BPE trained in the page's training worker (training.js's
 * courseTrainer.run: c1_bpe_start, then c1_bpe_step, a few merges per message, so the page never waits for it), and
 * drawn at the merge count the learner picks (c1_bpe_show): the newest merges, the vocabulary, characters and bytes
 * per token on the training text, and the learner's sentence cut into coloured tokens. Any change asks for what it
 * shows: more merges than learned train on (c1_bpe_target), fewer are drawn at once from the merges learned; a new
 * text or pre-tokenisation starts a fresh run. Bad input (an empty text, one over the bound, a merge count past the
 * cap, a lone surrogate) is Python's one Chinese line, shown in the widget. Only window.courseWidgets' public API
 * and window.courseTrainer.
 *
 * For tests and the bench: the root carries data-state = idle | loading | running | paused | done | error
 * (courseTrainer.showState) and data-merged = the merge count drawn last.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const trainer = window.courseTrainer;

  function bpe(root, ns) {
    const q = (c) => root.querySelector(".c1-" + c);
    const [source, own, scheme, range, num, sentence] = ["source", "own", "scheme", "k", "kn", "sentence"].map(q);
    const [startB, pauseB, resetB] = ["start", "pause", "reset"].map(q);
    const out = q("out");
    let session = null;   // the worker's trainer, once a run has begun
    let learned = 0;      // merges it has made
    const panel = { start: startB, pause: pauseB, reset: resetB, text: q("state"), locked: [source, own, scheme] };
    const setState = (s, note) => trainer.showState(root, panel, s, note);

    function draw(x) {
      W.fill(out, x);
      root.dataset.merged = String(x.k);
      root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
    }
    const shown = () => String(Math.min(Number(num.value) || 0, learned));
    const redraw = W.latest(root, "c1-bpe", () => (session === null ? Promise.resolve(null)
      : trainer.call("c1_bpe_show", [session, shown(), sentence.value])), (x) => { if (x) draw(x); });

    const busy = () => root.dataset.state === "running" || root.dataset.state === "loading";
    function finish() {   // the run reached its target: train on if the learner asked for more meanwhile
      trainer.call("c1_bpe_target", [session, num.value]).then((r) => {
        if (!r.done) { runner.start(); return; }
        redraw({ label: "done" });
        setState("done", r.learned < Number(num.value)
          ? W.msg("c1.bpe.exhausted", { learned: r.learned })
          : W.msg("c1.bpe.done", { learned: r.learned }));
      }, failed);
    }
    function failed(e) {
      W.showError(root, W.learnerMessage(e));
      setState(session === null ? "error" : "paused", session === null ? W.msg("c1.bpe.blocked") : undefined);
    }
    const runner = trainer.run({
      text: root.dataset.text,
      startCall: (t) => ["c1_bpe_start", [source.value === "own" ? own.value : t, scheme.value, num.value]],
      stepCall: "c1_bpe_step",
      state: setState,
      began: (r) => { session = r.session; learned = 0; },
      steps: (rows) => { learned += rows.length; redraw({ label: "step" }); },
      done: finish,
      failed: (e) => { session = null; learned = 0; failed(e); },   // (the worker's run is gone)
    });

    function fresh() {   // a new text or pre-tokenisation: forget the worker's run (one starting is dropped too)
      runner.reset();
      session = null;
      learned = 0;
      setState("idle");
    }
    function train() {   // show the merge count asked for, training on when it is past the merges learned
      W.showError(root, "");
      if (session === null) { if (!busy()) runner.start(); return; }   // (a starting run finishes, then looks again)
      trainer.call("c1_bpe_target", [session, num.value]).then((r) => {
        if (busy()) return;                  // the running loop picks the new target up
        if (!r.done) runner.start(); else finish();
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
      if (session === null) train(); else { W.showError(root, ""); redraw({ label: "sentence" }); }
    });
    [source, scheme].forEach((c) => c.addEventListener("change", () => { b.record(); fresh(); train(); }));
    own.addEventListener("change", () => { if (source.value === "own") { fresh(); train(); } });
    startB.addEventListener("click", train);
    pauseB.addEventListener("click", () => { runner.pause(); setState("paused", W.msg("c1.bpe.paused")); });
    resetB.addEventListener("click", () => {
      fresh();
      W.showError(root, "");
      setState("idle", W.msg("c1.bpe.reset"));
    });
    W.live(root, ".c1-source, .c1-own, .c1-scheme, .c1-k, .c1-kn, .c1-sentence, .c1-start");
    setState("idle");
    if (b.restore()) train();
  }

  W.mount({ "c1-bpe": bpe });
})();
