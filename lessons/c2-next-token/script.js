/*
 * script.js - lesson C2's widget: the model continues the learner's prompt (c2_speak: the model the build
 * trained, its first state answered by the build, other settings by the widgets' Python), and the same architecture
 * trained from scratch in the page's training worker (training.js's courseTrainer.run: c2_train_start /
 * c2_train_step), which continues the prompt every data-every steps (c2_train_speak), so the learner sees noise
 * turn into text. Only window.courseWidgets' public API and window.courseTrainer.
 *
 * For tests and the bench: the root carries data-state = idle | loading | running | paused | done | error, and
 * data-spoken = how many continuations the live run has shown.
 */
(function () {
  "use strict";
  const W = window.courseWidgets;
  const trainer = window.courseTrainer;

  function speak(root, ns) {
    const q = (c) => root.querySelector(".c2-" + c);
    const fields = { prompt: q("prompt"), temperature: q("temp"), top_k: q("topk"), top_p: q("topp"), seed: q("seed") };
    const log = q("log");
    const model = JSON.parse(root.dataset.model);
    const every = Number(root.dataset.every);
    root.dataset.spoken = "0";

    const args = () => ["prompt", "temperature", "top_k", "top_p", "seed"].map((k) => fields[k].value);
    function show(x) {
      W.fill(root.querySelector(".c2-out"), x);
      W.chart(root, x.chart);
    }
    // once the live run has begun (panel, below), its model speaks instead of the stored one
    const recompute = W.latest(root, "c2-speak", () => (panel.session() === null
      ? W.call("c2_speak", args().concat([model]))
      : trainer.call("c2_train_speak", [panel.session()].concat(args()))), show);

    const lines = [];   // the live run's continuations, newest last, drawn as the template's rows
    function logLine(x) {
      lines.push({ line: W.msg("c2.live.line", { step: x.step, prompt: x.prompt, text: x.text }) });
      W.rows(log, lines);
      root.dataset.spoken = String(lines.length);
      root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
    }
    function clearLog() { lines.length = 0; W.rows(log, lines); root.dataset.spoken = "0"; }

    // the live run: the one live-training panel (training.js; training_panel.html), its loss on the panel's chart
    const panel = trainer.panel(root, {
      startCall: (t) => ["c2_train_start", [t, 0]],
      stepCall: "c2_train_step",
      notes: { reset: W.msg("c2.live.reset") },
      began: clearLog,
      step: (s) => {
        if (s.step === 1 || s.step % every === 0) {   // speak now (the worker answers after this step)
          trainer.call("c2_train_speak", [panel.session()].concat(args())).then((x) => { logLine(x); show(x); },
            (e) => W.showError(root, W.learnerMessage(e)));
        }
      },
      reset: () => { clearLog(); recompute({ label: "reset" }); },
    });

    const b = W.bind(root, ns, { prompt: ".c2-prompt", temperature: ".c2-temp", top_k: ".c2-topk", top_p: ".c2-topp",
      seed: ".c2-seed" });
    if (b.restore()) recompute({ label: "restore" });
    b.onChange(() => { b.record(); recompute({ label: "input" }); });
    W.live(root, ".c2-prompt, .c2-temp, .c2-topk, .c2-topp, .c2-seed");
  }

  W.mount({ "c2-speak": speak });
})();
