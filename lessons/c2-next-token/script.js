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
    const [startB, pauseB, resetB] = ["start", "pause", "reset"].map(q);
    const log = q("log"), stateText = q("state");
    const out = (name) => root.querySelector('output[name="' + name + '"]');
    const model = JSON.parse(root.dataset.model);
    const every = Number(root.dataset.every);
    let session = null;   // the live run's, once it has begun: its model speaks instead of the stored one
    root.dataset.spoken = "0";

    const args = () => ["prompt", "temperature", "top_k", "top_p", "seed"].map((k) => fields[k].value);
    function show(x) {
      W.fill(root.querySelector(".c2-out"), x);
      W.chart(root, x.chart);
    }
    const recompute = W.latest(root, "c2-speak", () => (session === null
      ? W.call("c2_speak", args().concat([model]))
      : trainer.call("c2_train_speak", [session].concat(args()))), show);

    const panel = { start: startB, pause: pauseB, reset: resetB, text: stateText };
    const setState = (s, note) => trainer.showState(root, panel, s, note);
    const lines = [];   // the live run's continuations, newest last, drawn as the template's rows
    function logLine(x) {
      lines.push({ line: "第 " + x.step + " 步：" + x.prompt + x.text });
      W.rows(log, lines);
      root.dataset.spoken = String(lines.length);
      root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
    }
    function clearLog() { lines.length = 0; W.rows(log, lines); root.dataset.spoken = "0"; }

    const runner = trainer.run({
      text: root.dataset.text,
      startCall: (t) => ["c2_train_start", [t, 0]],
      stepCall: "c2_train_step",
      state: setState,
      began: (r) => { session = r.session; clearLog(); },
      steps: (rows) => {
        for (const s of rows) {
          out("step").textContent = String(s.step);
          out("loss").textContent = s.loss_text;
          if (s.step === 1 || s.step % every === 0) {   // speak now (the worker answers after this step)
            trainer.call("c2_train_speak", [session].concat(args())).then((x) => { logLine(x); show(x); },
              (e) => W.showError(root, W.learnerMessage(e)));
          }
        }
      },
      done: (rows) => {
        const last = rows[rows.length - 1];
        setState("done", last && last.loss === null ? "（loss 变成了非有限值，训练停止）" : "（已经训练到上限步数）");
      },
      failed: (e) => { W.showError(root, W.learnerMessage(e)); setState("error", "（训练出错，已停止）"); },
    });

    startB.addEventListener("click", () => { W.showError(root, ""); runner.start(); });
    pauseB.addEventListener("click", () => { runner.pause(); setState("paused", "（已暂停；点开始继续）"); });
    resetB.addEventListener("click", () => {
      runner.reset();
      session = null;
      out("step").textContent = "0";
      out("loss").textContent = "—";
      clearLog();
      setState("idle", "（已重置：续写又交给构建时训练好的模型）");
      recompute({ label: "reset" });
    });
    const b = W.bind(root, ns, { prompt: ".c2-prompt", temperature: ".c2-temp", top_k: ".c2-topk", top_p: ".c2-topp",
      seed: ".c2-seed" });
    if (b.restore()) recompute({ label: "restore" });
    b.onChange(() => { b.record(); recompute({ label: "input" }); });
    W.live(root, ".c2-prompt, .c2-temp, .c2-topk, .c2-topp, .c2-seed, .c2-start");
    setState("idle");
  }

  W.mount({ "c2-speak": speak });
})();
