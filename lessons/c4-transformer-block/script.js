/*
 * script.js - behaviour of lesson C4's widgets: the three ledgers, the compute crossover, the data-flow
 * tracker with the baseline's numpy forward pass, and the bring-your-own-config box (plain JS, in the page's script file,
 * after widgets.js, whose helpers and conventions it uses).
 *
 * Every table and stage list arrives complete from the build (templates/c4_tables.html, tracker.html,
 * byo_config.html): the same Jinja macros write the build's rows and the <template>s widgets.js's walker (fill,
 * make, rows) clones and fills with the strings Python returns. No label is spelled here: the words around the numbers, a layer's label and a
 * stage's title come from the templates and from Python's answers; status words are the templates' data-*
 * attributes.
 *
 * The two ledgers of one model are declared (declare: the core binds the picker, keeps it in the URL, asks the
 * latest state, answers from the build's table first). The others keep a setup of their own, built from the same
 * primitives (latest, call, fill, rows): the side-by-side ledger keeps its columns in one URL key, the crossover's
 * log slider follows each model's own context length, the tracker is a list of stages picked by buttons with a
 * numpy run, the baseline a numpy run, and the config box reads, refuses or holds aside a pasted text. A built-in
 * model is sent as its id (W.model), never its config; a model's name is its picker's option, as the build wrote it.
 */
(function () {
  "use strict";

  const W = window.courseWidgets;
  const { getState, setState, models, live, pickAlias, latest, chart, call, fill, make, rows } = W;
  const rt = window.courseRuntime;

  // a .layer-body (ledger_layer data): each layer type, then their difference or the one-type sentence
  function layerBody(body, ll) {
    rows(body.querySelector(".layer-columns"), ll.layers);
    const now = make(body.querySelector(ll.diff ? "template.layer-diff" : "template.layer-single"), ll.diff || ll);
    const old = body.querySelector(":scope > .layer-diff, :scope > p.diff");
    if (old) old.replaceWith(now); else body.querySelector(".layer-columns").after(now);
  }

  // a tracker stage as its template reads it: Python's stage plus what only says how to show it
  function stageView(s, prefix) {
    const links = (ls) => ls.map((c, i) => Object.assign({}, c, { sep: i > 0, unwritten: !c.href }));
    const mark = (cls) => cls + "check check-" + (s.check === "✓" ? "ok" : "bad");
    return Object.assign({}, s, {
      dom_id: prefix + "-" + s.id, li_class: "stage stage-" + s.status, badge_class: "badge badge-" + s.status,
      repeated: s.n_layers > 1, check_class: mark(""), stage_check_class: mark("stage-"), links: links(s.links || []),
      parts: s.parts.map((p) => Object.assign({}, p, { badge_class: "badge badge-" + p.status, links: links(p.links || []) })),
    });
  }

  // A model <select>: restores the URL's choice once Python is ready, records changes in the URL.
  function modelPicker(root, ns, onChange) {
    const picker = root.querySelector(".model-picker");
    const dflt = root.dataset.model;   // (the crossover widget updates data-model; the default is read once)
    picker.addEventListener("change", () => {
      setState(ns, "model", picker.value === dflt ? null : picker.value);
      onChange(picker.value);
    });
    return {
      picker: picker,
      restore() {   // true if the URL chose another model (onChange has been called)
        const wanted = pickAlias(picker, getState(ns, "model"));
        if (!wanted || wanted === dflt) return false;
        picker.value = wanted;
        onChange(wanted);
        return true;
      },
    };
  }

  // -- the ledger total: the denominator toggle (both columns are in the table) --------------------------------------
  function applyDen(root, den) {
    const share = root.querySelector(".ffn-share"), note = root.querySelector(".ffn-share-note");
    root.dataset.denominator = den;
    root.querySelectorAll("button.denominator").forEach((b) => {
      b.setAttribute("aria-pressed", String(b.dataset.denominator === den));
    });
    share.textContent = den === "backbone" ? share.dataset.backbone : share.dataset.total;
    note.textContent = den === "backbone" ? note.dataset.backbone : note.dataset.total;
  }

  function nameOf(picker) { return picker.selectedOptions[0].textContent; }   // (the model's name, as the build wrote it)

  W.declare({
    // the ledger total of any model, and its denominator (kept in the URL as <ns>.den)
    "ledger-total": {
      controls: { model: ".model-picker" },
      call: "total_view",
      args: (v, w) => [W.model(v.model), nameOf(w.c.model)],
      answer: null,
      show: (lt, w) => {
        const root = w.root, share = root.querySelector(".ffn-share");
        root.querySelector(".model-name").textContent = nameOf(w.c.model);
        root.querySelector(".den-total").textContent = lt.total;
        root.querySelector(".den-backbone").textContent = lt.text_backbone;
        share.dataset.total = lt.ffn_share_total;
        share.dataset.backbone = lt.ffn_share_backbone;
        rows(root.querySelector("tbody"), lt.rows);
        root.querySelector(".ledger-sum").textContent = lt.total;
        root.querySelector(".ledger-backbone").textContent = lt.text_backbone;
        applyDen(root, root.dataset.denominator);
        chart(root, lt.chart);
      },
      setup: (w) => {
        w.root.querySelectorAll("button.denominator").forEach((b) => b.addEventListener("click", () => {
          applyDen(w.root, b.dataset.denominator);
          setState(w.ns, "den", b.dataset.denominator === "total" ? null : b.dataset.denominator);
        }));
        if (getState(w.ns, "den") === "backbone") applyDen(w.root, "backbone");
      },
    },
    // -- one layer of each type, matrix by matrix, and their difference; any model ----------------------------------
    "ledger-layer": {
      controls: { model: ".model-picker" },
      call: "layer_view",
      args: (v) => [W.model(v.model)],
      answer: null,
      show: (ll, w) => {
        w.root.querySelector(".model-name").textContent = nameOf(w.c.model);
        layerBody(w.root.querySelector(".layer-body"), ll);
      },
    },
  });

  // -- the side-by-side ledger: any model from data/ in any column ----------------------------------------------------------------
  function ledgerCompare(root, ns) {
    const selects = Array.from(root.querySelectorAll("select.compare-model"));
    const dflt = root.dataset.models;
    const recompute = latest(root, "ledger-compare", (chosen) =>
      call("ledger_compare", [chosen.map((a, i) => [a, nameOf(selects[i]), W.model(a)])]).then((data) => {
        fill(root.querySelector("table"), data);
        chart(root, data.chart);
      }));
    function changed() {
      const chosen = selects.map((s) => s.value);
      setState(ns, "models", chosen.join(",") === dflt ? null : chosen.join(","));
      recompute(chosen);
    }
    selects.forEach((s) => s.addEventListener("change", changed));
    live(root, "select.compare-model");
    const wanted = (getState(ns, "models") || "").split(",");
    let any = false;
    selects.forEach((s, i) => {
      const a = pickAlias(s, wanted[i]);
      if (a && a !== s.value) { s.value = a; any = true; }
    });
    if (any) changed();
  }

  // -- parameters are not compute: a log slider over the context length T and a model picker --------------------------------------------
  function crossover(root, ns) {
    const slider = root.querySelector(".t-slider");
    const out = root.querySelector(".t-value");
    const fig = root.querySelector("figure.chart");
    let alias = root.dataset.model;
    let tMax = Number(root.dataset.tMax);
    let T = tMax;
    const toT = (v) => Math.max(1, Math.min(tMax, Math.round(Math.pow(tMax, Number(v) / 1000))));
    const toSlider = (t) => (tMax > 1 ? Math.round(1000 * Math.log(t) / Math.log(tMax)) : 1000);

    function readout(r) {   // crossover_at's strings
      root.querySelector(".ro-T").textContent = r.T;
      root.querySelector(".ro-ffn").textContent = r.ffn;
      root.querySelector(".ro-att").textContent = r.attention;
      root.querySelector(".ro-ratio").textContent = r.ratio;
      out.textContent = r.T;
      slider.setAttribute("aria-valuetext", r.T);
      root.dataset.attentionWins = String(r.attention_wins);
    }
    // one job for both inputs: the wanted {alias, T}; a new model first loads its series (t_max, crossover, chart)
    const want = { alias: alias, T: null };
    // (a new model: one call returns its series and the readout at the wanted T, clipped to its native context)
    const recompute = latest(root, "crossover", () => Promise.resolve().then(() => {
      const a = want.alias;
      const cfg = W.model(a);
      if (a === alias) {
        T = Math.min(want.T || tMax, tMax);
        return call("crossover_at", [cfg, T]);
      }
      const name = nameOf(root.querySelector(".model-picker"));
      return call("crossover_view", [cfg, name, want.T]).then((v) => {
        alias = a;
        tMax = v.t_max_raw;
        root.dataset.tMax = String(tMax);
        root.dataset.model = alias;
        root.querySelector(".model-name").textContent = name;
        root.querySelector(".crossover-point").textContent = v.crossover_point;
        root.querySelector(".native-ratio").textContent = v.native;
        chart(root, v.chart);
        T = Math.min(want.T || tMax, tMax);
        return v.at;
      });
    }).then((r) => {
      slider.value = String(toSlider(T));
      setState(ns, "T", T === tMax ? null : String(T));
      readout(r);
      if (window.courseCharts) window.courseCharts.mark(fig, T);
    }));
    slider.addEventListener("input", () => {
      want.T = toT(slider.value);
      recompute({ label: "T" });
    });
    const picker = modelPicker(root, ns, (a) => {
      want.alias = a;   // the context length stays (clipped to the new model's native context)
      recompute({ label: "model" });
    });
    live(root, ".t-slider, .model-picker");
    const t = parseInt(getState(ns, "T"), 10);
    if (t > 0) want.T = t;
    if (!picker.restore() && t > 0) recompute({ label: "T" });
  }

  // -- the data-flow tracker: stages, a model toggle, and for our baseline a real numpy forward pass --------------------
  function tracker(root, ns) {
    const data = JSON.parse(root.querySelector("script.tracker-data").textContent);
    const prefix = root.dataset.prefix;
    const ol = root.querySelector(".stages");
    const forward = root.querySelector(".forward");
    const status = root.querySelector(".forward-status");
    const dflt = root.dataset.model;
    let alias = dflt;

    function stageIds() {
      return Array.from(ol.querySelectorAll(".stage")).map((s) => s.dataset.stage);
    }
    function select(stage, record) {
      if (!stageIds().includes(stage)) stage = stageIds()[0];
      ol.querySelectorAll(".stage").forEach((li) => {
        const on = li.dataset.stage === stage;
        li.classList.toggle("selected", on);
        li.querySelector(".stage-button").setAttribute("aria-expanded", String(on));
        li.querySelector(".stage-detail").hidden = !on;
      });
      root.dataset.stage = stage;
      if (record) setState(ns, "stage", stage === stageIds()[0] ? null : stage);
    }
    ol.addEventListener("click", (e) => {
      const b = e.target.closest(".stage-button");
      if (b) select(b.closest(".stage").dataset.stage, true);
    });

    const setModel = latest(root, "tracker", (a) =>
      call("tracker", [W.model(a), data.settings, data.reference[a] || {}, data.course_titles.includes(a)]).then((stages) => {
        alias = a;
        root.dataset.model = a;
        root.querySelector(".model-name").textContent = root.querySelector(`button.tracker-model[data-model="${a}"]`).textContent;
        root.querySelectorAll("button.tracker-model").forEach((b) => {
          b.setAttribute("aria-pressed", String(b.dataset.model === a));
        });
        rows(ol, stages.map((s) => stageView(s, prefix)));
        select(root.dataset.stage, false);
        forward.hidden = a !== data.baseline;
        status.textContent = "";
      }));
    root.querySelectorAll("button.tracker-model").forEach((b) => b.addEventListener("click", () => {
      if (b.dataset.model === alias) return;
      setState(ns, "model", b.dataset.model === dflt ? null : b.dataset.model);
      setModel(b.dataset.model);
    }));

    const run = latest(root, "tracker-forward", () => {
      status.textContent = status.dataset.running;
      return call("baseline_forward", [0, data.settings]).then((r) => {
        ol.querySelectorAll(".stage").forEach((li) => {
          const a = r.actual[li.dataset.stage];
          const box = li.querySelector(".stage-actual");
          box.hidden = !a;
          if (!a) return;
          box.querySelector(".actual-shape").textContent = a.actual;
          const mark = box.querySelector(".actual-check");
          mark.textContent = a.match ? "✓" : "✗";
          mark.className = "actual-check check " + (a.match ? "check-ok" : "check-bad");
        });
        status.textContent = r.status;
      }, (e) => { status.textContent = status.dataset.failed + e.message; throw e; });
    });
    root.querySelector(".run-forward").addEventListener("click", () => run(null));

    live(root, "button.tracker-model, .run-forward");
    select(getState(ns, "stage") || stageIds()[0], false);
    const wanted = getState(ns, "model");
    const b = Array.from(root.querySelectorAll("button.tracker-model")).find((x) => x.dataset.model === wanted);
    if (b && wanted !== alias) setModel(wanted);
  }

  // -- our baseline: run the real numpy forward pass in the page ------------------------------------------------------
  function baseline(root) {
    const status = root.querySelector(".baseline-status");
    const run = latest(root, "baseline", () => {
      status.textContent = status.dataset.running;
      return call("baseline_forward", [0]).then((r) => {
        rows(root.querySelector(".baseline-stages"), r.stages);
        root.querySelector(".baseline-params").textContent = r.params;
        status.textContent = r.status;
      }, (e) => { status.textContent = status.dataset.failed + e.message; throw e; });
    });
    live(root, ".run-baseline");
    root.querySelector(".run-baseline").addEventListener("click", () => run(null));
    // initialise the 3.7M weights once the runtime is up (in the worker, off the page's thread), so that a press
    // of the button runs only the forward pass
    rt.ready.then(() => call("baseline_prepare", [0])).catch((e) => console.warn("baseline", e));
  }

  // -- bring your own config.json: its three ledgers and crossover, computed in the browser ----------------------------
  function byoConfig(root) {
    const input = root.querySelector(".byo-input");
    const error = root.querySelector(".byo-error");
    const total = root.querySelector(".byo-total");
    const ledgers = root.querySelector(".byo-ledgers");
    const empty = total.textContent;   // (the build's placeholder, shown again after a bad config)
    const compare = (root.dataset.compare || "").split(",").filter(Boolean);

    function fail(r) {
      error.hidden = false;
      error.querySelector(".byo-error-title").textContent = r.title;
      rows(error.querySelector(".byo-problems"), r.problems.map((p) => ({ text: p })));
      total.textContent = empty;
      ledgers.replaceChildren();
    }
    function show(v) {
      error.hidden = true;
      // the total explains itself like a build-time number (derivation.js), when Python sent its derivation
      const d = v.numbers && v.numbers["model.total"];
      if (d && window.courseNumbers) total.replaceChildren(window.courseNumbers.node("model.total", d));
      else total.textContent = v.total;
      ledgers.replaceChildren(root.querySelector("template.byo-view").content.cloneNode(true));
      fill(ledgers.querySelector(".byo-estimate"), v);
      fill(ledgers.querySelector(".byo-summary"), v.ledger_total);
      fill(ledgers.querySelector(".byo-total-table"), v.ledger_total);
      fill(ledgers.querySelector(".byo-denominators"), v.denominators);
      layerBody(ledgers.querySelector(".byo-layer"), v.ledger_layer);
      fill(ledgers.querySelector(".byo-compare"), v.compare);
      fill(ledgers.querySelector(".byo-crossover"), v.crossover);
      fill(ledgers.querySelector(".byo-native"), v.crossover);
      chart(ledgers, v.crossover.chart);
    }
    // A text over the size limit or nested too deeply is refused here, at once, with the line Python would give
    // (experiments/ledger/jsontext.py checks the same again): it is never sent to the worker, and one pasted or
    // picked is never put into the box, whose layout alone would hold up the page for seconds.
    const maxBytes = Number(root.dataset.maxBytes), maxDepth = Number(root.dataset.maxDepth);
    function refuse(line, n) {
      fail({ title: error.dataset.titleOne, problems: [line.replace("{n}", n.toLocaleString("en-US"))] });
      return true;
    }
    function tooBig(bytes) { return bytes > maxBytes && refuse(root.dataset.tooBig, bytes); }
    function utf8Bytes(text) {   // (a character is at least one byte: a text too long is too big without encoding it)
      return text.length > maxBytes ? text.length : new TextEncoder().encode(text).length;
    }
    function depth(text) {   // arrays and objects outside strings, in one pass (no recursion, no parse)
      let d = 0, deepest = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 34) {          // a string: skip to its closing quote
          for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
        } else if (c === 91 || c === 123) { if (++d > deepest) deepest = d; }
        else if (c === 93 || c === 125) d--;
      }
      return deepest;
    }
    function refused(text) {
      if (tooBig(utf8Bytes(text))) return true;
      const d = depth(text);
      return d > maxDepth && refuse(root.dataset.tooDeep, d);
    }
    // A text too long to lay out in the box (the box's layout of a 1 MB text takes over a second of the page's
    // thread) is held aside: the box shows its beginning, read-only, and 计算 uses the whole of it. Backspace or
    // Delete in the box, a new paste, a new file or the example replaces it.
    const showChars = 64000;   // (the largest published config.json is a few tens of kB: shown whole)
    let held = null;
    function placeText(text) {
      held = text.length > showChars ? text : null;
      input.readOnly = held !== null;
      input.value = held === null ? text : text.slice(0, 4000) + "\n" + input.dataset.held.replace("{n}",
        utf8Bytes(text).toLocaleString("en-US"));
    }
    const current = () => (held === null ? input.value : held);
    const run = latest(root, "byo-config", (text) => refused(text) ? null : models().then((ms) =>
      call("byo_views", [text, compare.filter((a) => ms[a]).map((a) => [a, ms[a].name, W.model(a)])])).then((r) => {
      if (r.ok) show(r); else fail(r);
    }));
    live(root, ".byo-run, .byo-example");
    root.querySelector(".byo-run").addEventListener("click", () => run(current()));
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && e.shiftKey) { e.preventDefault(); run(current()); }
      else if (held !== null && (e.key === "Backspace" || e.key === "Delete")) { e.preventDefault(); placeText(""); }
    });
    function arrived(e, text) {   // a paste or a drop of text: refused, held, or left to the browser
      if (tooBig(utf8Bytes(text))) e.preventDefault();
      else if (text.length > showChars || held !== null) { e.preventDefault(); placeText(text); }
    }
    input.addEventListener("paste", (e) => arrived(e, e.clipboardData ? e.clipboardData.getData("text/plain") : ""));
    input.addEventListener("drop", (e) => {
      const dt = e.dataTransfer;
      const file = dt && dt.files && dt.files[0];
      if (!file) { if (dt) arrived(e, dt.getData("text/plain") || ""); return; }
      e.preventDefault();
      if (!tooBig(file.size)) file.text().then((t) => { placeText(t); run(t); });
    });
    root.querySelector(".byo-file").addEventListener("change", (e) => {
      const file = e.target.files[0];
      if (file && !tooBig(file.size)) file.text().then((t) => { placeText(t); run(t); });
    });
    root.querySelector(".byo-example").addEventListener("click", () => models().then((ms) => {
      placeText(JSON.stringify(ms[root.dataset.example].config, null, 2));
      run(current());
    }, (e) => {   // (the reason, a file name and an HTTP status, is for a developer's console)
      console.warn("byo example:", e);
      fail({ title: error.dataset.exampleFailed, problems: [error.dataset.exampleRetry] });
    }));
  }

  W.mount({
    "ledger-compare": ledgerCompare, crossover: crossover, tracker: tracker, baseline: baseline, "byo-config": byoConfig,
  });
})();
