/*
 * code-cell.js - the editable Python code cells (plain JS, in the page's script file after widgets.js; the build
 * adds it to the pages that have a ```{widget} code block; the cell's HTML is site/templates/widgets/code.html).
 *
 * A cell runs in the code cells' own worker (courseRuntime.cells, runtime-client.js), never in the widgets' one, so
 * a slow or endless program leaves every widget answering, and stopping it (terminating that worker) loses nothing
 * else. That worker is a second Python in the page (about 150-200 MB, tests/bench_runtime.py), so it starts only
 * when a learner uses a cell: its first focus or run (not when a cell merely scrolls into view).
 *   - 运行 / Shift+Enter runs at once, even before Python is ready: the run waits, visibly (pending), and starts by
 *     itself. 停止 ends a waiting or running program; a program running longer than cells.timeLimitMs is stopped
 *     with a Chinese message. The next run works (a fresh worker).
 *   - Keys, as in the editors learners know: Tab indents (to the next multiple of 4 spaces; every line of a
 *     multi-line selection by 4), Shift+Tab removes up to 4 leading spaces from each line touched; Esc then Tab
 *     (or Shift+Tab) leaves the box, so a keyboard user is never trapped. Undo works (insertText).
 * What the program prints shows while it runs (and stays when it is stopped); stdout and tracebacks are written
 * with textContent, and the outcome is announced in the cell's role=status line. The cell's root
 * has data-busy while a run waits or runs and fires "course:updated" when it ends; courseWidgets.timings gets
 * {widget: "code", ms} for each completed run. courseWidgets.editorKeys(textarea, run) gives another code box the
 * same keys (an exercise's, exercise.js).
 */
(function () {
  "use strict";

  const rt = window.courseRuntime;
  const cw = window.courseWidgets;
  const msg = cw.msg;   // the learner message table (messages.js)
  const INDENT = "    ";

  // Replace value[from, to) by text as if typed (keeps the browser's undo history), then select [selA, selB).
  function replace(src, from, to, text, selA, selB) {
    src.setSelectionRange(from, to);
    if (!document.execCommand("insertText", false, text)) src.setRangeText(text, from, to, "end");
    src.setSelectionRange(selA, selB);
  }

  function indent(src, dedent) {
    const v = src.value, a = src.selectionStart, b = src.selectionEnd;
    const first = v.lastIndexOf("\n", a - 1) + 1;
    const multiLine = v.slice(a, b).includes("\n");
    if (!dedent && !multiLine) {   // spaces to the next tab stop, replacing any selection on the line
      const spaces = INDENT.slice((a - first) % INDENT.length);
      replace(src, a, b, spaces, a + spaces.length, a + spaces.length);
      return;
    }
    const endsAtLineStart = multiLine && v[b - 1] === "\n";   // a selection of whole lines stops before the next one
    let last = v.indexOf("\n", endsAtLineStart ? b - 1 : b);
    if (last < 0) last = v.length;
    const lines = v.slice(first, last).split("\n");
    let shiftA = 0, shiftB = 0;
    const changed = lines.map((line, i) => {
      const delta = dedent ? -line.match(/^ {0,4}/)[0].length : INDENT.length;
      if (i === 0) shiftA = Math.max(delta, first - a);   // never move the caret before its line's start
      shiftB += delta;
      return dedent ? line.slice(-delta) : INDENT + line;
    }).join("\n");
    if (changed === lines.join("\n")) return;
    replace(src, first, last, changed, a + shiftA, Math.max(first, b + shiftB));
  }

  // The editor's keys on a code box (a cell's, an exercise's: exercise.js): Tab / Shift+Tab indent, Esc then Tab
  // leaves the box, Shift+Enter calls run().
  function editorKeys(src, run) {
    let escaped = false;   // Esc was the last key: the next Tab leaves the box
    src.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { escaped = true; return; }
      if (e.key === "Tab" && !e.ctrlKey && !e.altKey && !e.metaKey) {
        if (escaped) { escaped = false; return; }   // the browser moves the focus on
        e.preventDefault();
        indent(src, e.shiftKey);
        return;
      }
      if (e.key !== "Shift") escaped = false;
      if (e.key === "Enter" && e.shiftKey) { e.preventDefault(); run(); }
    });
    src.addEventListener("blur", () => { escaped = false; });
  }
  cw.editorKeys = editorKeys;

  function afterOutput(printed, line) {   // a line after what the program printed, on a line of its own
    return printed + (printed && !printed.endsWith("\n") ? "\n" : "") + line;
  }

  function codeCell(root) {
    const src = root.querySelector(".code-source");
    const original = src.value;
    const runButton = root.querySelector(".code-run");
    const stopButton = root.querySelector(".code-stop");
    const out = root.querySelector(".code-output");
    const status = root.querySelector(".code-status");
    let job = null;        // the run waiting or running, if any
    let printed = "", frame = 0;

    function show(text, isError, announce) {
      out.textContent = text;
      out.classList.toggle("has-error", Boolean(isError));
      status.textContent = announce;
    }

    function run() {
      if (job) return;
      root.dataset.busy = "true";
      stopButton.disabled = false;
      const t0 = performance.now();
      const mine = rt.cells.submit(src.value, (state) => {
        root.dataset.run = state;
        if (state === "pending") show(msg("cell.waiting"), false, msg("cell.waiting_status"));
        else show(msg("cell.running"), false, msg("cell.running"));
      }, (stdout, stderr) => {   // output so far: drawn at most once a frame
        printed = afterOutput(stdout + stderr, msg("cell.running"));
        if (!frame) frame = requestAnimationFrame(() => {
          frame = 0;
          if (root.dataset.run === "running") out.textContent = printed;
        });
      });
      job = mine;
      mine.done.then((r) => {
        if (r.stopped) {
          const text = afterOutput((r.stdout || "") + (r.stderr || ""), r.error);
          show(text, r.stopped === "timeout", r.stopped === "timeout" ? msg("cell.timeout_status") : r.error);
        } else {
          const text = (r.stdout || "") + (r.stderr || "") + (r.error || "");
          const last = (r.error || r.stdout || "").trim().split("\n").pop();
          show(text || msg("cell.no_output"), r.error, r.error ? msg("cell.failed_status", { last: last })
            : last ? msg("cell.done_status", { last: last }) : msg("cell.done_silent_status"));
          cw.timings.push({ widget: "code", ms: performance.now() - t0 });
        }
      }).finally(() => {
        job = null;
        if (document.activeElement === stopButton) runButton.focus();   // a disabled button would drop the focus
        stopButton.disabled = true;
        delete root.dataset.run;
        delete root.dataset.busy;
        root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
      });
    }

    runButton.addEventListener("click", run);
    stopButton.addEventListener("click", () => { if (job) job.stop(); });
    root.querySelector(".code-reset").addEventListener("click", () => { src.value = original; src.focus(); });
    editorKeys(src, run);
    root.addEventListener("focusin", () => rt.cells.start());
    runButton.disabled = false;
    root.querySelector(".code-reset").disabled = false;
    return root;
  }

  cw.mount({ code: codeCell });
})();
