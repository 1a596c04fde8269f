/*
 * training.js - the page's training worker, shared by the lessons that train a model in the page (C5, C8):
 * window.courseTrainer = {call(entryPoint, args), stop(), text(path), run(hooks), panel(root, options), stats,
 * showState(root, parts, s, note)}: run drives a live run; panel wires the one live-training panel
 * (site/templates/widgets/training_panel.html: 开始 / 暂停 / 重置, step counter, readout, speed, status line, the
 * live loss curve) that every lesson which trains uses, configured by the lesson's script; showState draws its
 * buttons and status line. Every text it shows is a key of the learner message table (messages.js).
 *
 * Training runs in the page's one Python runtime, the widgets' worker (courseRuntime.call): a lesson's script sends
 * one request per training step and the next only when the previous one has answered, so 暂停 takes effect after at
 * most one step and a widget's own call waits behind at most one step. Leaving the page (pagehide) stops the runs.
 * text(path) fetches a training text once per page.
 *
 * For tests and the bench: window.courseTraining = stats = {state, steps, busyMs, inflight} (the lesson scripts
 * count steps answered and time spent waiting; inflight: requests not answered yet).
 */
(function () {
  "use strict";
  const msg = window.courseMessages.msg;   // every text shown: the learner message table (messages.js)
  const stats = { state: "idle", steps: 0, busyMs: 0, inflight: 0 };
  window.courseTraining = stats;

  // Training runs in the page's one Python, the widgets' worker (courseRuntime.call, runtime-client.js), not in a
  // Pyodide of its own: a second one cost 150-200 MB more in the page and 10-20 s of start-up after 开始 (issue
  // #49, tests/bench_runtime.py). One request per step, so a widget's call waits at most one step behind a run.
  // stop() (and leaving the page, pagehide) ends the runs: the answers of calls made before it are dropped, and
  // the runs fail with train.stopped; the next 开始 begins a fresh run.
  const trainer = (function () {
    let generation = 0;
    function call(name, args) {
      const rt = window.courseRuntime;
      if (!rt) return Promise.reject(new Error(msg("runtime.no_location")));
      const gen = generation;
      stats.inflight += 1;
      if (rt.state === "loading") stats.state = "loading";
      return rt.call("experiments.api:" + name, args).then((r) => {
        if (gen !== generation) throw new Error(msg("train.stopped"));
        stats.state = "ready";
        return r;
      }).finally(() => { stats.inflight -= 1; });
    }
    function stop() {
      generation += 1;
      stats.state = "idle";
    }
    window.addEventListener("pagehide", stop);
    return { call: call, stop: stop };
  })();

  const texts = new Map();
  function text(path) {   // the course's training text, fetched once
    if (!texts.has(path)) {
      texts.set(path, fetch(new URL(path, document.baseURI)).then((r) => {
        if (!r.ok) throw new Error(msg("train.text_failed", { status: r.status }));
        return r.text();
      }));
      texts.get(path).catch(() => texts.delete(path));
    }
    return texts.get(path);
  }

  // A live run, one step per request (the next sent when the previous one has answered): run(h) drives the
  // worker and calls the lesson's hooks. h = {text: path, startCall: [entry point, args(text)], stepCall: entry
  // point, state(s, note), began(answer), steps(rows, running), done(rows), failed(error)}. pause() takes effect
  // after at most one step; reset() forgets the worker's run (the next start() begins a fresh one).
  function run(h) {
    let session = null, running = false, generation = 0;
    async function loop(gen) {
      while (running && gen === generation) {
        const t0 = performance.now();
        const r = await trainer.call(h.stepCall, [session, 1]);
        if (gen !== generation) return;
        stats.busyMs += performance.now() - t0;
        stats.steps += r.steps.length;
        h.steps(r.steps, running);
        if (r.done) {
          running = false;
          h.done(r.steps);
        }
      }
    }
    async function start() {
      running = true;
      const gen = generation;
      try {
        if (session === null) {
          h.state("loading", msg("train.loading"));
          const t = await text(h.text);
          if (gen !== generation) return;
          const [name, args] = h.startCall(t);
          const r = await trainer.call(name, args);
          if (gen !== generation) return;
          session = r.session;
          h.began(r);
        }
        if (!running) return;
        h.state("running", msg("train.running"));
        await loop(gen);
      } catch (e) {
        if (gen !== generation) return;
        running = false;
        session = null;              // the worker's run is gone (or never began): start() begins a fresh one
        h.failed(e);
      }
    }
    return {
      start: start,
      pause: () => { running = false; },
      reset: () => { generation += 1; running = false; session = null; },
      started: () => session !== null,
    };
  }

  // A live-training panel's look in each state (idle, loading, running, paused, done, error): the widget's
  // data-state; 开始 off while busy or done, 暂停 on only while busy, 重置 off while idle; the controls that choose
  // the run (parts.locked) off while busy; parts.text says what is going on (a state without a note keeps it). A
  // button that goes off while it has the focus hands it to the one that took over (暂停 -> 开始), so a keyboard
  // user's focus never drops to the page.
  function showState(root, parts, s, note) {
    const busy = s === "running" || s === "loading";
    const had = [parts.start, parts.pause, parts.reset].find((b) => b === document.activeElement);
    root.dataset.state = s;
    parts.start.disabled = busy || s === "done";
    parts.pause.disabled = !busy;
    parts.reset.disabled = s === "idle";
    (parts.locked || []).forEach((c) => { c.disabled = busy; });
    if (note !== undefined) parts.text.textContent = note;
    if (had && had.disabled) {
      const next = [parts.pause, parts.start, parts.reset].find((b) => !b.disabled);
      if (next) next.focus();
    }
  }

  // Steps per second and tokens per second over the last SPEED_WINDOW answers while running (a pause starts the
  // count afresh): measured here, in the page, so formatted here (one decimal below 10 steps/s; whole tokens with
  // thousands separators, as the course writes counts).
  const SPEED_WINDOW = 20;
  function speedometer() {
    let marks = [];   // [time, steps so far]
    let total = 0;
    return {
      restart() { marks = []; },
      add(steps) {
        total += steps;
        marks.push([performance.now(), total]);
        if (marks.length > SPEED_WINDOW) marks.shift();
      },
      rate() {   // steps per second, or null before two answers
        if (marks.length < 2) return null;
        const [t0, n0] = marks[0], [t1, n1] = marks[marks.length - 1];
        return t1 > t0 ? (n1 - n0) * 1000 / (t1 - t0) : null;
      },
    };
  }
  function speedText(perSecond, tokensPerStep, key) {
    if (perSecond === null) return "—";
    return msg(key || "train.speed", { steps: perSecond < 10 ? perSecond.toFixed(1) : String(Math.round(perSecond)),
      tokens: Math.round(perSecond * (tokensPerStep || 0)).toLocaleString("en-US") });
  }

  // The live-training panel (site/templates/widgets/training_panel.html, inside a widget's root): panel(root, o)
  // wires its 开始 / 暂停 / 重置, step counter, readout, speed, status line and live curves over run(). The lesson's
  // script says what to train and what to show beside the loss:
  //   o.startCall(text) -> [entry point, args]   the run's first request; its answer has the run's session and
  //                                              tokens_per_step (and whatever o.began reads)
  //   o.stepCall                                 each step's entry point: (session, 1) -> {steps: [row], done}
  //   o.fields(row) -> {output name: text}       the readout's outputs besides the step (default: loss)
  //   o.curves: [{figure, base, metric, name?, color?}]   charts that draw the live curve of row[metric]
  //                                              (row[metric + "_text"] in its hover; a row without the metric
  //                                              adds no point) with the base spec's series (default: loss, on the
  //                                              panel's own chart, else the widget's; [] for none); curves on one
  //                                              figure are drawn together; o.draw(live) draws instead
  //   o.speed                                    the speed's message key ({steps}, {tokens}; default train.speed)
  //   o.name(began answer) -> the live curve's name (default: the table's train.live)
  //   o.locked                                   controls that choose the run: off while it is busy; changing one
  //                                              resets a run that has begun
  //   o.notes: {paused, done, diverged, failed, reset}   status texts that differ from the table's train.*
  //   o.began(answer), o.step(row), o.done(rows), o.reset()   the lesson's own additions
  // -> {start(), pause(), reset(), started(), session(), state(s, note), note(text)}. The status line's first text
  // (the template's) is the idle note, shown again on reset unless o.notes.reset says otherwise.
  function panel(root, o) {
    const W = window.courseWidgets;
    const box = root.querySelector(".training-panel");
    const q = (name) => box.querySelector(".train-" + name);
    const out = (name) => box.querySelector('output[name="' + name + '"]');
    const parts = { start: q("start"), pause: q("pause"), reset: q("reset"), text: q("state"), locked: o.locked || [] };
    const idle = parts.text.textContent;
    const notes = Object.assign({ paused: msg("train.paused"), done: msg("train.done"),
      diverged: msg("train.diverged"), failed: msg("train.failed"), reset: idle }, o.notes || {});
    const fields = o.fields || ((row) => ({ loss: row.loss_text }));
    const blanks = Array.from(box.querySelectorAll(".train-readout output")).map((n) => [n, n.textContent]);
    const own = box.querySelector("figure.chart") ? box : root;   // the panel's loss chart, else the widget's
    const curves = o.curves || [{ figure: own, metric: "loss",
      base: JSON.parse(own.querySelector("figure.chart script.chart-spec").textContent) }];
    const speed = speedometer();
    let live = null, session = null, tokensPerStep = 0, drawTimer = 0;
    const state = (s, note) => showState(root, parts, s, note);

    function drawNow() {
      clearTimeout(drawTimer);
      drawTimer = 0;
      if (o.draw) { o.draw(live); return; }
      const charts = new Map();   // figure -> [its base spec, its live curves]: one chart per figure
      curves.forEach((c) => {
        if (!charts.has(c.figure)) charts.set(c.figure, [c.base, []]);
        if (live) charts.get(c.figure)[1].push(live[c.metric]);
      });
      charts.forEach(([base, lines], figure) => W.chart(figure, Object.assign({}, base,
        { series: lines.concat(base.series) })));   // (the live curves under the others)
    }
    function draw(now) {   // at most every 400 ms while running (a chart's redraw costs a frame or two)
      if (now) drawNow(); else if (!drawTimer) drawTimer = setTimeout(drawNow, 400);
    }

    const runner = run({
      text: o.text || root.dataset.text,
      startCall: o.startCall,
      stepCall: o.stepCall,
      state: (s, note) => { if (s === "running") speed.restart(); state(s, note); },
      began: (r) => {
        session = r.session;
        tokensPerStep = r.tokens_per_step;
        const name = o.name ? o.name(r) : msg("train.live");
        live = {};
        curves.forEach((c) => {
          live[c.metric] = { name: c.name || name, mode: "lines", color: c.color || "#d62728",
            x: [], y: [], text: [] };
        });
        if (o.began) o.began(r);
      },
      steps: (rows, running) => {
        speed.add(rows.length);
        for (const row of rows) {
          Object.entries(live).forEach(([metric, series]) => {
            if (row[metric] === undefined) return;
            series.x.push(row.step);
            series.y.push(row[metric]);
            series.text.push(msg("train.point", { name: series.name, step: row.step, value: row[metric + "_text"] }));
          });
          out("step").textContent = String(row.step);
          Object.entries(fields(row)).forEach(([k, v]) => {
            if (v !== undefined && v !== null) out(k).textContent = v;
          });
          if (o.step) o.step(row);
        }
        out("speed").textContent = speedText(speed.rate(), tokensPerStep, o.speed);
        draw(!running);               // (paused during this step: draw it now, the run stops here)
      },
      done: (rows) => {
        const last = rows[rows.length - 1];
        state("done", last && last.loss === null ? notes.diverged : notes.done);
        draw(true);
        if (o.done) o.done(rows);
      },
      failed: (e) => {
        W.showError(root, W.learnerMessage(e));
        state("error", notes.failed);
      },
    });

    function reset() {
      runner.reset();
      session = null;
      live = null;
      blanks.forEach(([n, text]) => { n.textContent = text; });
      W.showError(root, "");
      state("idle", notes.reset);
      draw(true);
      if (o.reset) o.reset();
    }
    parts.start.addEventListener("click", () => { W.showError(root, ""); runner.start(); });
    parts.pause.addEventListener("click", () => {
      runner.pause();
      state("paused", notes.paused);
      draw(true);
    });
    parts.reset.addEventListener("click", reset);
    parts.locked.forEach((c) => c.addEventListener("change", () => { if (runner.started()) reset(); }));
    state("idle");
    return { start: runner.start, pause: runner.pause, reset: reset, started: runner.started,
      session: () => session, state: state, note: (text) => { parts.text.textContent = text; } };
  }

  window.courseTrainer = { call: trainer.call, stop: trainer.stop, text: text, run: run, stats: stats,
    showState: showState, panel: panel };
})();
