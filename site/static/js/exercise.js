/*
 * exercise.js - exercises graded in the page (issue #48; declared by experiments/exercise.py, markup
 * site/templates/widgets/exercise.html; after code-cell.js in the page's script file, whose editor keys it uses).
 *
 * 检查 (or Shift+Enter) grades the learner's function in the code cells' worker (courseRuntime.cells, with the
 * built-in models handed to Python first): experiments.api:grade_exercise runs the course's own reference on the
 * exercise's cases, the ones the page shows and others drawn with a fresh random seed from the course's models, and
 * answers with a message key and its values, which this script words through the message table (exercise.*). A
 * grading that does not answer in cells.timeLimitMs is stopped (the worker is terminated and a fresh one started:
 * runtime-client.js), so a learner's endless loop never freezes the page.
 * 提示 shows the next hint; 看答案 shows the solution; 重新开始 puts the starting code back and forgets the exercise.
 * Progress stays in the browser: localStorage "course.exercise.<name>" = {code, solved}; the outline counts it
 * (exercise-progress.js). The root has data-busy while grading and data-solved once solved, and fires
 * "course:updated" when a grading ends; courseWidgets.timings gets {widget: <name>, ms} for each completed one.
 */
(function () {
  "use strict";

  const rt = window.courseRuntime;
  const cw = window.courseWidgets;
  const msg = cw.msg;
  const STORE = "course.exercise.";

  // The grader's answer (experiments/exercise.py: key + values) in the learner's words.
  const FEEDBACK = {
    solved: (v) => msg("exercise.solved", { total: v.total }),
    number: (v) => msg("exercise.number", { case: v.case, expected: v.expected, got: v.got }),
    ledger: (v) => msg("exercise.ledger", { case: v.case, tensor: v.tensor, expected: v.expected, got: v.got }),
    ledger_missing: (v) => msg("exercise.ledger_missing", { case: v.case, tensor: v.tensor, expected: v.expected }),
    ledger_extra: (v) => msg("exercise.ledger_extra", { case: v.case, tensor: v.tensor }),
    shape: (v) => msg("exercise.shape", { case: v.case, item: v.item, expected: v.expected, got: v.got }),
    arrays: (v) => msg("exercise.arrays", { case: v.case, item: v.item, shape: v.shape, largest: v.largest,
                                            tolerance: v.tolerance, at: v.at, expected: v.expected, got: v.got }),
    sequences_count: (v) => msg("exercise.sequences_count", { case: v.case, expected: v.expected, got: v.got }),
    sequence: (v) => msg("exercise.sequence", { case: v.case, item: v.item, expected: v.expected, got: v.got }),
    impossible: (v) => msg("exercise.impossible", { case: v.case, token: v.token }),
    distribution: (v) => msg("exercise.distribution", { case: v.case, draws: v.draws, statistic: v.statistic, df: v.df,
                                                        p_value: v.p_value, tolerance: v.tolerance, token: v.token,
                                                        expected: v.expected, got: v.got }),
    range: (v) => msg("exercise.range", { case: v.case, got: v.got, size: v.size }),
    type: (v) => msg("exercise.type", { case: v.case, expected: v.expected, got: v.got }),
    empty: (v) => msg("exercise.empty", { expected: v.expected }),
    syntax: (v) => msg("exercise.syntax", { line: v.line, detail: v.detail, expected: v.expected }),
    missing: (v) => msg("exercise.missing", { name: v.name, expected: v.expected }),
    signature: (v) => msg("exercise.signature", { expected: v.expected, got: v.got }),
    raised: (v) => msg("exercise.raised", { case: v.case, error: v.error }),
    raised_top: (v) => msg("exercise.raised_top", { error: v.error }),
    recursion: (v) => msg("exercise.recursion", { case: v.case }),
    memory: (v) => msg("exercise.memory", { limit: v.limit }),
    too_big: (v) => msg("exercise.too_big", { case: v.case, limit: v.limit }),
  };

  function load(name) {
    try { return JSON.parse(localStorage.getItem(STORE + name) || "null") || {}; } catch (e) { return {}; }
  }

  function save(name, record) {
    try { localStorage.setItem(STORE + name, JSON.stringify(record)); } catch (e) { /* storage off: not kept */ }
  }

  function seed() {
    const a = new Uint32Array(1);
    (window.crypto || {}).getRandomValues ? window.crypto.getRandomValues(a) : (a[0] = Date.now() % 4294967296);
    return a[0];
  }

  // The grading program the cells' worker runs: one call, its JSON answer printed as the last line.
  function program(spec, source) {
    const args = JSON.stringify([spec, source, seed()]);
    return "import experiments.api as _api\nprint(_api.grade_exercise(" + JSON.stringify(args) + "))\n";
  }

  function exercise(root) {
    const spec = JSON.parse(root.dataset.spec);
    const src = root.querySelector(".exercise-source");
    const starter = src.dataset.starter;
    const check = root.querySelector(".exercise-check");
    const hintButton = root.querySelector(".exercise-hint");
    const solutionButton = root.querySelector(".exercise-show-solution");
    const reset = root.querySelector(".exercise-reset");
    const feedback = root.querySelector(".exercise-feedback");
    const printed = root.querySelector(".exercise-printed");
    const hints = Array.from(root.querySelectorAll(".exercise-hints li"));
    let record = load(spec.name);
    let job = null;

    function say(text, state) {
      feedback.textContent = text;
      feedback.dataset.state = state;
    }

    function mark(solved) {
      if (solved) root.dataset.solved = "true";
      else delete root.dataset.solved;
    }

    if (typeof record.code === "string" && record.code.trim()) src.value = record.code;
    mark(record.solved);
    if (record.solved) say(msg("exercise.solved_before"), "solved");

    function keep() {
      record = Object.assign({}, record, { code: src.value });
      save(spec.name, record);
    }

    function grade() {
      if (job) return;
      keep();
      root.dataset.busy = "true";
      printed.textContent = "";
      const t0 = performance.now();
      job = rt.cells.submit(program(spec, src.value), (state) => {
        say(state === "pending" ? msg("exercise.waiting") : msg("exercise.checking"), "busy");
      }, null, { models: true });
      job.done.then((r) => {
        if (r.stopped) {
          say(r.stopped === "timeout" ? msg("exercise.timeout", { seconds: String(Math.round(rt.cells.timeLimitMs / 1000)) })
            : r.error, "bad");
          return;
        }
        const last = (r.stdout || "").trim().split("\n").pop();
        let answer = null;
        try { answer = r.error ? null : JSON.parse(last); } catch (e) { answer = null; }
        if (!answer || !FEEDBACK[answer.key]) {
          say(msg("exercise.failed", { error: (r.error || "").trim().split("\n").pop() }), "bad");
          return;
        }
        cw.timings.push({ widget: spec.name, ms: performance.now() - t0 });
        let text = FEEDBACK[answer.key](answer.values || {});
        if (answer.status === "wrong" && answer.passed) {
          text += msg("exercise.progress", { passed: answer.passed, total: answer.total });
        }
        say(text, answer.status);
        printed.textContent = answer.printed || "";
        if (answer.status === "solved") {
          record = Object.assign({}, record, { solved: true });
          save(spec.name, record);
          mark(true);
        }
      }).finally(() => {
        job = null;
        delete root.dataset.busy;
        root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
      });
    }

    check.addEventListener("click", grade);
    cw.editorKeys(src, grade);
    src.addEventListener("change", keep);
    hintButton.addEventListener("click", () => {
      const next = hints.find((li) => li.hidden);
      if (next) next.hidden = false;
      if (!hints.some((li) => li.hidden)) hintButton.disabled = true;
    });
    solutionButton.addEventListener("click", () => {
      root.querySelector(".exercise-solution").hidden = false;
      solutionButton.disabled = true;
    });
    reset.addEventListener("click", () => {
      if (job) job.stop();
      src.value = starter;
      record = {};
      try { localStorage.removeItem(STORE + spec.name); } catch (e) { /* storage off */ }
      mark(false);
      say(msg("exercise.reset_done"), "idle");
      printed.textContent = "";
      src.focus();
    });
    root.addEventListener("focusin", () => rt.cells.start());
    [check, solutionButton, reset].forEach((b) => { b.disabled = false; });
    hintButton.disabled = !hints.length;
    root.dataset.ready = "true";
    return root;
  }

  // Each exercise is a widget of its own name (its declaration's), all of this one kind: once the page is parsed,
  // mount every widget that holds an exercise.
  cw.whenParsed(() => {
    const table = {};
    document.querySelectorAll(".widget[data-widget] .exercise").forEach((el) => {
      table[el.closest(".widget[data-widget]").dataset.widget] = exercise;
    });
    cw.mount(table);
  });
})();
