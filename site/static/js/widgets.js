/*
 * widgets.js - what every page's widgets share (plain JS, in the page's script file, sitegen/scripts.py), before
 * the lessons' own widget files (widgets-c4.js, widgets-ffn.js ...), which the build adds only to the pages that
 * use them: the one widget dialect.
 *
 * Every widget arrives complete from the build (site/templates/widgets/). The widget files only add behaviour.
 * Anything that needs a number calls the same Python the build used, through call(entryPoint, args), and writes
 * the strings Python returns: no number is formatted here. Text from the learner or from Python is written with
 * textContent, never innerHTML, by the one walker, fill(node, data) (data-f, data-attr, data-fmt, data-if,
 * data-each); a table's rows are clones of the <template class="row"> the build put in it, so every label and
 * cell's markup is spelled once, in the template. Lesson scripts use these helpers and define none of their own
 * (tests/test_widget_dialect.py).
 *
 * Answers before Python: the build answered what a widget's enumerable controls can ask (sitegen/widgets.py,
 * <script class="precomputed">, gzip+base64 JSON keyed by entry point + canonical args, a built-in model written
 * by its id {"$model": alias} as a script sends it (model()), a part of a data document {"$data": path}); call() answers from it at once
 * and asks Python (runtime-client.js) only for the rest. A request that needs Python before it is loaded waits in a queue; the widget says so beside its
 * controls (.widget-status), and a recompute that takes longer than BUSY_MS says 计算中…. A widget with controls that
 * need Python shows the runtime's progress on itself, then that it is ready (.widget-runtime, note()).
 *
 * A control that cannot change the answer in the current state either says so when it changes (a [data-why] line
 * or a note in the answer: the result is the same, and why) or, declared so (declare's disabled), is disabled with a
 * one-line reason beside it until the state changes back (moot(): issue #49, no silent controls).
 *
 * A widget's state lives in the URL query as <widget>.<key> (e.g. ?crossover.model=deepseek_v3,
 * ffn-memory.dtype=FP32), so a link reproduces what the learner saw. Defaults are left out of the URL: they are
 * the wrapper's data-options (the declaration's defaults overlaid with the lesson's options) or, for an option
 * whose default depends on others, the value the build put in the control. A second widget of the same kind on a
 * page is "<widget>-2". Moving through the page's history (Back after a table-of-contents link) keeps them.
 *
 * window.courseWidgets holds the helpers below and mount({name: setup}), which sets up every widget of those
 * names on the page. The editable code cells, which every lesson may use, are code-cell.js.
 *
 * For tests: window.courseWidgets.timings lists {widget, ms} for every recompute (input event -> DOM updated;
 * "crossover:T" for the slider, "crossover:model" for the picker); .answered counts {build, python} answers
 * and the precomputed scripts inflated so far (tables);
 * each widget root gets data-busy while a recompute is pending (data-pending="python" while it waits for the
 * runtime, data-stale after an error) and fires "course:updated" when done.
 */
(function () {
  "use strict";

  const rt = window.courseRuntime;
  const params = new URLSearchParams(location.search);
  const timings = [];
  const answered = { build: 0, python: 0, tables: 0 };   // tables: precomputed scripts inflated so far
  const BUSY_MS = 100;
  const msg = window.courseMessages.msg;   // every text shown is a key of the learner message table (messages.js)
  let modelsPromise = null;

  // -- URL state -------------------------------------------------------------------------------------------------
  const written = {};   // every key a widget wrote (null: removed), re-applied when the page's history moves
  function getState(ns, key) {
    return params.get(ns + "." + key);
  }

  function writeUrl(values) {
    const now = new URLSearchParams(location.search);   // other widgets may have written their own keys meanwhile
    Object.entries(values).forEach(([k, v]) => {
      if (v === null || v === undefined || v === "") now.delete(k); else now.set(k, String(v));
    });
    const q = now.toString();
    history.replaceState(history.state, "", location.pathname + (q ? "?" + q : "") + location.hash);
  }

  // {key: value}; null/"" removes the key (the default state). The keys set before the next microtask checkpoint are
  // written together, with one history.replaceState (a widget's change handler may set four keys). While the page
  // is still being parsed they wait for DOMContentLoaded: a replaceState makes the browser lay out everything parsed
  // so far (it saves the scroll position with the entry), 60-110 ms on a slow phone, ahead of the answer's frame.
  let unwritten = null;
  function setParams(values) {
    Object.entries(values).forEach(([k, v]) => { written[k] = v === undefined || v === "" ? null : v; });
    if (unwritten === null) {
      unwritten = {};
      const flush = () => { const v = unwritten; unwritten = null; writeUrl(v); };
      if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", flush, { once: true });
      else queueMicrotask(flush);
    }
    Object.assign(unwritten, values);
  }

  function setState(ns, key, value) { setParams({ [ns + "." + key]: value }); }

  // Back/forward between entries of this page (a table-of-contents link) restores an older URL, while the
  // widgets keep what the learner chose: write their keys into it again.
  ["popstate", "hashchange"].forEach((ev) => window.addEventListener(ev, () => writeUrl(written)));

  function options(root) {   // the wrapper's data-options: the declaration's defaults + the lesson's options
    const w = root.closest(".widget[data-options]");
    try { return w ? JSON.parse(w.dataset.options) : {}; } catch (e) { return {}; }
  }

  function builtValue(c) {   // what the build put in a control
    if (c.type === "checkbox") return c.defaultChecked;
    if (c.tagName === "SELECT") {
      const o = Array.from(c.options).find((x) => x.defaultSelected) || c.options[0];
      return o ? o.value : "";
    }
    return c.defaultValue;
  }

  function valueOf(c) { return c.type === "checkbox" ? c.checked : c.value.trim(); }

  // Controls kept in the URL as <ns>.<key>: {key: selector}, or {key: [selector, stops]} for a range input over a
  // list of values (position i stands for stops[i]: its value is stops[i], and the URL's that as text). A key's
  // default is the wrapper's option of that name (when set), else the control's build-time value. values() gives
  // each control's text (checkboxes: booleans), which is what Python gets: it parses and range-checks them itself.
  // A model picker restored from a URL that names the model by its folder's id (deepseek-v3) takes its alias.
  function bind(root, ns, spec) {
    const opts = options(root);
    const c = {}, dflt = {}, stops = {};
    Object.entries(spec).forEach(([key, sel]) => {
      if (Array.isArray(sel)) { stops[key] = sel[1]; sel = sel[0]; }
      c[key] = root.querySelector(sel);
      const o = opts[key];
      const x = c[key];
      const own = stops[key] || o === null || o === undefined || typeof o === "object" ||   // (a select whose
        (x.tagName === "SELECT" && !Array.from(x.options).some((op) => op.value === String(o)));   // values are
      dflt[key] = own ? read(key, builtValue(x)) : x.type === "checkbox" ? Boolean(o) : String(o);   // not the option's)
    });
    function read(key, raw) { return stops[key] ? stops[key][Number(raw)] : raw; }
    function value(key) { return read(key, valueOf(c[key])); }
    function text(key, v) { return c[key].type === "checkbox" ? (v ? "1" : "0") : String(v); }
    return {
      c: c,
      values() {
        const out = {};
        Object.keys(c).forEach((k) => { out[k] = value(k); });
        return out;
      },
      isDefault(key) { return value(key) === dflt[key]; },
      record(skip) {   // skip: keys not to keep (e.g. bandwidth while a preset GPU sets it)
        const out = {};
        Object.keys(c).forEach((k) => {
          out[ns + "." + k] = (skip && skip.includes(k)) || value(k) === dflt[k] ? null : text(k, value(k));
        });
        setParams(out);
      },
      // Sets the controls the URL names (a value a control cannot take is dropped from the URL); true if any
      // control changed.
      restore(keys) {
        let any = false;
        (keys || Object.keys(c)).forEach((k) => {
          let v = getState(ns, k);
          if (v === null) return;
          const x = c[k], before = valueOf(x);
          if (stops[k]) v = stops[k].map(String).includes(v) ? String(stops[k].map(String).indexOf(v)) : null;
          else if (x.tagName === "SELECT") v = pickAlias(x, v);
          if (v === null) { setState(ns, k, null); return; }
          if (x.type === "checkbox") x.checked = v === "1";
          else {
            x.value = v;
            if (x.value !== v || (x.validity && !x.validity.valid)) { x.value = before; setState(ns, k, null); return; }
          }
          if (valueOf(x) !== before) any = true;
        });
        return any;
      },
      onChange(fn) { Object.values(c).forEach((x) => x.addEventListener("change", fn)); },
    };
  }

  // -- widgets wired by declaration ------------------------------------------------------------------------------
  // declare({name: spec}) sets up every widget of that name (as mount does) from what its spec says; the core binds
  // its controls, keeps them in the URL (defaults left out) and restores the URL's state at once, asks again on each
  // change with the latest state only (latest: busy, waiting for Python, errors in Chinese, timings), answers from
  // the build's table before Python (call), and enables the controls. Fields (all optional but call):
  //   controls  {key: selector} or {key: [selector, stops]} (bind): a change records them all and asks again; a
  //             range input does both as it moves. (root) => {...} when it needs the widget's data (stops)
  //   call      the entry point that answers: "name"; ["a", "b"] for several (the answer is then [a's, b's]); or
  //             (v, w, arg) => "name" when the state decides
  //   args      (v, w, arg) => the call's args (several calls: one list each, null for one not asked; null alone:
  //             nothing is asked). v: each control's value. A built-in model is model(alias), never its config. It
  //             may throw an Error in Chinese: the widget shows it as it shows Python's
  //   answer    selector of the part the answer fills (fill; several calls: their answers merged); default the
  //             widget's root, null: nothing is filled
  //   show      (x, w, arg) => what else the answer draws, after the fill (chart(w.root, x.chart), another part)
  //   whenReady selector of controls that wait for Python, enabled once it is ready (the other bound controls are
  //             live at once: what the build did not answer waits for Python, visibly); live: more controls live at once
  //   on        {key: (w) => ...} when that control changes, before it is recorded (returning false: not asked)
  //   disabled  {key: {when: (v, w) => true while that control cannot change the answer, reason: "message.key"}}:
  //             while `when` holds, the control is disabled with the reason beside it (moot()); its value stays
  //             as it is, in the URL and in the call's args. For a choice the answer itself can explain (the same
  //             result, and why), or one whose value still matters elsewhere (a live run), say so in the answer
  //             instead
  //   skip      (w) => [keys] left out of the URL;  restored (w) => ... after the URL's state is set
  //   setup     (w) => ... anything else, last (a button: w.update({label: "run"}))
  // w = {root, ns, c: {key: control}, values(), update(arg), record(), restore(keys)}: update asks again (arg.label
  // names the recompute in timings; args and show get the same arg), record writes the URL, restore sets controls
  // from it again.
  function declared(spec) {
    return (root, ns) => {
      const controls = typeof spec.controls === "function" ? spec.controls(root) : spec.controls || {};
      const s = bind(root, ns, controls);
      const target = spec.answer === null ? null : spec.answer ? root.querySelector(spec.answer) : root;
      const w = { root: root, ns: ns, c: s.c, values: s.values, restore: s.restore,
                  record: () => s.record(spec.skip && spec.skip(w)) };
      const update = latest(root, ns, (arg) => ask(spec, w, arg), (x, arg) => {
        if (!x) return;   // (nothing was asked)
        if (target) fill(target, x.several ? Object.assign({}, ...x.answer.filter(Boolean)) : x.answer);
        if (spec.show) spec.show(x.answer, w, arg);
      });
      const waiting = (c) => Boolean(spec.whenReady) && c.matches(spec.whenReady);
      const recheck = spec.disabled ? moot(w, spec.disabled, waiting) : () => {};
      // (arg: the request's own object; args() may note on it what show needs). Any state asked for is one whose
      // moot controls are disabled: a script that sets a control itself and asks again needs nothing more
      w.update = (arg) => { recheck(); update(arg || {}); };
      const on = spec.on || {};
      Object.entries(s.c).forEach(([key, c]) => c.addEventListener(c.type === "range" ? "input" : "change", () => {
        const again = !on[key] || on[key](w) !== false;
        recheck();
        w.record();
        if (again) w.update({ label: key });
      }));
      enable(Object.values(s.c).concat(spec.live ? Array.from(root.querySelectorAll(spec.live)) : []).filter((c) => !waiting(c)));
      note(root);
      if (spec.whenReady) whenReady(root, spec.whenReady);
      if (s.restore()) {
        if (spec.restored) spec.restored(w);
        w.record();
        w.update({ label: "restore" });
      }
      if (spec.setup) spec.setup(w);
      recheck();
    };
  }

  // What a declared widget asks for its state: {answer, several} or null (its args said: nothing to ask).
  function ask(spec, w, arg) {
    const v = w.values();
    const name = typeof spec.call === "function" ? spec.call(v, w, arg) : spec.call;
    return Promise.resolve(spec.args ? spec.args(v, w, arg) : []).then((args) => {
      if (args === null) return null;
      if (!Array.isArray(name)) return call(name, args).then((x) => ({ answer: x, several: false }));
      return Promise.all(name.map((n, i) => (args[i] === null ? null : call(n, args[i]))))
        .then((xs) => ({ answer: xs, several: true }));
    });
  }

  // -- controls the state makes moot: disabled, with the reason beside them ---------------------------------------
  // moot(w, rules, waiting) for a declaration's disabled: {key: {when(v, w), reason}} sets a line after each such
  // control (after its <label> when the control is inside one): a .widget-why[data-why=disabled] holding the
  // reason's message, hidden until needed, on a row of its own in the controls' row (widgets.css), so it stays
  // beside the control at 375 px. It returns recheck(): for each rule whose `when` holds for the widget's current
  // values, the control is disabled (aria-disabled, data-moot: the disabled look; whenReady and enable leave it
  // alone), its line shown and named by the control's aria-describedby (a screen reader reads the reason with the
  // control); once it no longer holds, the control is enabled again (unless it still waits for Python: waiting(c)
  // before the runtime is ready), the line hidden and no longer named. The control's value is never changed.
  function moot(w, rules, waiting) {
    const lines = {};
    Object.entries(rules).forEach(([key, rule]) => {
      const c = w.c[key];
      if (!c) throw new Error("disabled." + key + ": no such control");
      lines[key] = el("span", { class: "widget-why", "data-why": "disabled", id: w.ns + "-why-" + key, hidden: true,
                                text: msg(rule.reason) });
      (c.parentElement.tagName === "LABEL" ? c.parentElement : c).after(lines[key]);
    });
    return () => {
      const v = w.values();
      Object.entries(rules).forEach(([key, rule]) => {
        const c = w.c[key], line = lines[key];
        const off = Boolean(rule.when(v, w));
        if (off === !line.hidden) return;
        line.hidden = !off;
        describedBy(c, line.id, off);
        if (off) {
          c.dataset.moot = "";
          c.setAttribute("aria-disabled", "true");
          c.disabled = true;
        } else {
          delete c.dataset.moot;
          c.removeAttribute("aria-disabled");
          c.disabled = waiting(c) && rt.state !== "ready";
        }
      });
    };
  }

  // Adds the element id to (on) or removes it from (off) what a control's aria-describedby names.
  function describedBy(c, id, on) {
    const ids = (c.getAttribute("aria-describedby") || "").split(" ").filter((x) => x && x !== id);
    if (on) ids.push(id);
    if (ids.length) c.setAttribute("aria-describedby", ids.join(" ")); else c.removeAttribute("aria-describedby");
  }

  function declare(table) {   // {widget name: spec}
    const setupsOf = {};
    Object.entries(table).forEach(([name, spec]) => { setupsOf[name] = declared(spec); });
    mount(setupsOf);
  }

  // A built-in model in a call's args: its id, never its config (experiments.widget.model_ref). The build keys its
  // answers by it and the browser's Python puts the config in its place (worker.js, experiments.api).
  function model(alias) { return { $model: alias }; }

  // -- small helpers ---------------------------------------------------------------------------------------------
  // data/models.json: alias -> {id, name, config}, written by the build, read only when a script asks (a model's
  // name where no picker shows it, a config the learner is shown): a call sends a model's id, never its config.
  function models() {
    if (!modelsPromise) {
      modelsPromise = fetch(new URL("data/models.json", document.baseURI)).then((r) => {
        if (!r.ok) throw new Error("data/models.json: HTTP " + r.status);
        return r.json();
      });
    }
    return modelsPromise;
  }

  function el(tag, attrs, children) {   // a DOM node; attrs.text sets textContent; children are nodes or strings
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") node.textContent = v; else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children || []) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  // -- the walker: a widget's markup filled from an answer -------------------------------------------------------
  // fill(node, data) writes data (Python's strings) into the build's markup, or into a clone of one of its
  // <template>s, by the attributes the templates put on it; a key may be a path ("prefill.tokens"):
  //   data-f="key"           textContent = data[key] ("" when absent; hidden when empty if data-hide-empty is set)
  //   data-attr="a:key,..."  attribute a = data[key] (removed when null, undefined or false)
  //   data-fmt="a,..."       {key} in attribute a replaced by data[key] (on a clone of a <template>: a name made of
  //                          fixed words and data)
  //   data-if="key"          the element removed unless data[key] is truthy (a part only some answers have)
  //   data-each="key"        what follows its <template> (the rows) replaced by one clone per item of data[key],
  //                          each filled with its item (elements before the template stay: a row's fixed cells)
  // The walk does not enter a <template> nor the rows of a data-each (filled with their own item). The same
  // Jinja macro writes the build's rows and (called with `blank`) the template, so every label is spelled once.
  function get(data, key) {
    let v = data;
    for (const k of key.split(".")) v = v === null || v === undefined ? undefined : v[k];
    return v;
  }
  const truthy = (v) => !(v === null || v === undefined || v === false || v === "" || v === 0 ||
    (Array.isArray(v) && !v.length));

  function fill(node, data) {
    data = data || {};
    (function visit(n, top) {
      const d = n.dataset;
      if (!top && d.if && !truthy(get(data, d.if))) { n.remove(); return; }
      if (d.f) {
        const v = get(data, d.f);
        n.textContent = v === null || v === undefined ? "" : String(v);
        if (n.hasAttribute("data-hide-empty")) n.hidden = !n.textContent;
      }
      if (d.attr) d.attr.split(",").forEach((pair) => {
        const [a, key] = pair.split(":");
        const v = get(data, key);
        if (v === null || v === undefined || v === false) n.removeAttribute(a); else n.setAttribute(a, String(v));
      });
      if (d.fmt) d.fmt.split(",").forEach((a) => n.setAttribute(a, (n.getAttribute(a) || "").replace(/\{([\w.]+)\}/g,
        (_, k) => { const v = get(data, k); return v === null || v === undefined ? "" : String(v); })));
      const hasRows = d.each !== undefined;
      if (!hasRows || n.querySelector(":scope > template")) {
        for (const c of Array.from(n.children)) {
          if (c.tagName === "TEMPLATE") { if (hasRows) break; continue; }
          visit(c, false);
        }
      }
      if (hasRows) each(n, get(data, d.each));
    })(node, true);
    return node;
  }

  // A clone of a <template>'s element, filled with data.
  function make(template, data) {
    return fill(template.content.firstElementChild.cloneNode(true), data);
  }

  // The rows of a container (a tbody, a list, a row's cells ...): what follows its <template> (or, with the
  // template beside the container, all its children) replaced by one make() per item.
  function each(container, items) {
    let t = container.querySelector(":scope > template");
    const own = Boolean(t);
    if (!t && container.parentElement) t = container.parentElement.querySelector(":scope > template.row");
    if (!t) throw new Error("no <template> for the rows of " + container.className);
    if (own) while (t.nextSibling) t.nextSibling.remove(); else container.replaceChildren();
    container.append(...(items || []).map((item) => make(t, item)));
  }
  const rows = each;

  function whenReady(root, selector) {   // controls that need Python stay disabled until it is ready
    note(root, selector);
    rt.ready.then(() => enable(root.querySelectorAll(selector)), () => {});
  }

  // Controls work at once: what the build did not answer waits for Python, and the widget says so.
  function live(root, selector) {
    enable(root.querySelectorAll(selector));
    note(root);
  }
  // (a control the state makes moot, data-moot, stays disabled: moot())
  function enable(controls) { controls.forEach((b) => { if (b.dataset.moot === undefined) b.disabled = false; }); }
  // A widget with controls that need Python ([data-needs-python], or the selector of those that wait for it,
  // whenReady) says, on itself, where the runtime is: its .widget-runtime line, just after its controls, reads
  // "waiting, 3.1 / 13.9 MB" while the runtime loads (runtime-client.js's course:runtime events), then ready (or
  // failed); the .widget wrapper's data-runtime is waiting | ready | error. Those controls' aria-describedby names
  // the line; it is no live region (the header's status is: one announcement, not one per widget). The busy and
  // queued texts stay in .widget-status (status()).
  function note(root, waiting) {
    const needs = "[data-needs-python]" + (waiting ? ", " + waiting : "");
    if (root.dataset.runtimeNoted !== undefined || !root.querySelector(needs)) return;
    root.dataset.runtimeNoted = "";
    const wrapper = root.closest(".widget") || root;
    const line = el("p", { class: "widget-runtime", id: "wr-" + Math.random().toString(36).slice(2) });
    const controls = root.querySelector(".controls, .pickers, .byo-actions");
    if (controls) controls.after(line); else root.prepend(line);
    root.querySelectorAll(needs).forEach((c) => describedBy(c, line.id, true));
    function show() {
      const s = rt.state === "loading" ? "waiting" : rt.state;
      wrapper.dataset.runtime = line.dataset.state = s;
      const got = s === "waiting" && rt.bytes ? rt.bytes() : null;
      line.textContent = s === "ready" ? msg("widget.ready") : s === "error" ? msg("widget.failed")
        : got ? msg("widget.loading_bytes", { detail: got }) : msg("widget.loading");
      if (s !== "waiting") document.removeEventListener("course:runtime", show);
    }
    document.addEventListener("course:runtime", show);
    show();
  }

  // The widget's status line, just after its controls: why it waits (the runtime) or that it is busy.
  function status(root, kind, text) {
    let box = root.querySelector(":scope .widget-status");
    if (!box && !text) return;
    if (!box) {
      box = el("p", { class: "widget-status", role: "status", "aria-live": "polite", hidden: true });
      const controls = root.querySelector(".controls, .pickers, .byo-actions");
      if (controls) controls.after(box); else root.prepend(box);
      box.id = "ws-" + Math.random().toString(36).slice(2);
      root.querySelectorAll("[data-needs-python]").forEach((c) => describedBy(c, box.id, true));
    }
    if (text) box.dataset[kind] = text; else delete box.dataset[kind];   // an empty data-busy would read as busy
    const shown = box.dataset.busy || "";
    box.textContent = shown;
    box.hidden = !shown;
  }

  // The alias of a model named in the URL by alias or by file id (deepseek_v3 or deepseek-v3), if the picker has it.
  function pickAlias(select, wanted) {
    if (!wanted) return null;
    for (const o of select.options) if (o.value === wanted || o.dataset.id === wanted) return o.value;
    return null;
  }

  // Shows an error (or clears it: message ""). The results still on screen are from the last good state: the
  // message says so and the root gets data-stale until the next success.
  function showError(root, message) {
    const box = root.querySelector(".widget-error");
    if (message) root.dataset.stale = "true"; else delete root.dataset.stale;
    if (!box) return;
    box.hidden = !message;
    box.textContent = message ? msg("widget.error", { message: message }) : "";
  }

  // A Python error as the learner reads it: the course's messages are Chinese after the exception's class name
  // ("ValueError: 批大小：…"); anything else is an internal error (logged for a developer, not shown).
  function learnerMessage(e) {
    const text = String((e && e.message) || e || "");
    const m = /^[A-Za-z_][\w.]*(?:Error|Exception|Warning)?: ([\s\S]*)$/.exec(text);
    const rest = (m ? m[1] : text).trim();
    if (/[\u4e00-\u9fff]/.test(rest)) return rest;
    console.warn("widget call:", text);
    return msg("widget.internal");
  }

  // Runs job(arg) with at most one call in flight: while one runs, only the newest request waits (a slider drag
  // sends dozens of input events; the learner sees the last one). Records the time from the event to the DOM.
  // With show: job(arg) only computes (its answer: call()'s, say) and show(answer) writes it. Then a request
  // made while the running job waits for the runtime to load does not wait behind it (the build may answer it
  // at once): it runs, and the older job's answer, when it comes, is dropped.
  function latest(root, name, job, show) {
    let running = false, next = null, seq = 0;
    function pump() {
      if (running || !next) return;
      const { arg, t0 } = next;
      next = null;
      running = true;
      const id = ++seq;
      root.dataset.busy = "true";
      const slow = setTimeout(() => {   // (the build's answers take a few ms: a wait this long is Python's)
        if (id !== seq) return;
        if (rt.state !== "ready") root.dataset.pending = "python";
        status(root, "busy", root.dataset.pending ? msg("widget.queued") : msg("widget.busy"));
      }, BUSY_MS);
      Promise.resolve().then(() => job(arg)).then((answer) => {
        if (id !== seq) return;
        if (show) show(answer, arg);
        showError(root, "");
        timings.push({ widget: name + (arg && arg.label ? ":" + arg.label : ""), ms: performance.now() - t0 });
      }, (e) => { if (id === seq) showError(root, learnerMessage(e)); }).finally(() => {
        clearTimeout(slow);
        if (id !== seq) return;   // (superseded: the newer job ends the busy state)
        running = false;
        if (next) pump(); else {
          status(root, "busy", "");
          delete root.dataset.busy;
          delete root.dataset.pending;
          root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
        }
      });
    }
    return (arg) => {
      next = { arg: arg, t0: performance.now() };
      if (show && running && rt.state !== "ready") running = false;   // the running job waits for the runtime
      pump();
    };
  }

  // Redraw the widget's chart with a spec from Python; not awaited: numbers first, the drawing follows.
  function chart(root, spec) {
    if (!window.courseCharts) return;
    window.courseCharts.update(root.querySelector("figure.chart"), spec).catch((e) => console.warn("chart", e));
  }

  // -- answers: the build's, else Python's ---------------------------------------------------------------------------
  // Each script.precomputed (at the end of its widget) names the entry points it answers (data-calls). A widget's
  // own answers start inflating when it is set up (mount), a few ms each; a call inflates any other script that
  // can answer it; the rest inflate one at a time in idle moments after the page has loaded.
  const tables = new Map();   // script element -> Promise of its {key: answer}, or null
  const canInflate = typeof DecompressionStream !== "undefined";

  function answersIn(script) {
    if (!tables.has(script)) {
      answered.tables += 1;
      tables.set(script, inflate(script.textContent).catch((e) => { console.warn("precomputed answers", e); return null; }));
    }
    return tables.get(script);
  }

  function precomputed(fn) {   // [{key: answer}, ...] that may hold fn's answers, or null
    const scripts = canInflate ? Array.from(document.querySelectorAll("script.precomputed"))
      .filter((s) => (s.dataset.calls || "").split(" ").includes(fn)) : [];
    if (!scripts.length) return Promise.resolve(null);
    return Promise.all(scripts.map(answersIn)).then((parts) => parts.filter(Boolean))
      .catch((e) => { console.warn("precomputed answers", e); return null; });
  }

  function inflateLater() {   // the rest, each in an idle moment of its own
    const idle = window.requestIdleCallback || ((f) => setTimeout(f, 50));
    const rest = Array.from(document.querySelectorAll("script.precomputed")).filter((s) => !tables.has(s));
    const next = () => {
      const script = rest.shift();
      if (script) answersIn(script).then(() => idle(next, { timeout: 2000 }));
    };
    idle(next, { timeout: 2000 });
  }

  // gzip+base64 -> the JSON value. async: a table that is not base64, gzip or JSON rejects (answersIn makes that null,
  // and the call asks Python) instead of throwing out of the caller.
  async function inflate(b64) {
    let bytes;
    if (Uint8Array.fromBase64) {
      bytes = Uint8Array.fromBase64(b64.trim());
    } else {
      const bin = atob(b64.trim());
      bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    }
    // Written to and read from directly: each step is a microtask, so a table inflates in one go. (Read through
    // new Response(...).json(), every chunk was a task of its own, queued behind the parser's: while the page
    // was still being parsed on a slow phone, a 3 kB table took 80 ms to come out.) A bad stream rejects the
    // reads; the write and close reject too, and are only that failure said again.
    const gunzip = new DecompressionStream("gzip");
    const writer = gunzip.writable.getWriter();
    writer.write(bytes).catch(() => {});
    writer.close().catch(() => {});
    const reader = gunzip.readable.getReader(), decoder = new TextDecoder();
    let text = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
    return JSON.parse(text + decoder.decode());
  }

  // The key of a call's args, as sitegen/widgets.py canonical() writes it: sorted keys, no spaces (a built-in
  // model is its id, {"$model": alias}, on both sides).
  function canon(v) {
    if (v && typeof v === "object") {
      if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
      return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
    }
    return JSON.stringify(v === undefined ? null : v);
  }

  function call(fn, args) {
    const early = document.readyState === "loading";   // (answers in scripts not parsed yet are not looked at)
    return precomputed(fn).then((t) => {
      const key = t && fn + " " + canon(args || []);
      const table = t && t.find((part) => Object.prototype.hasOwnProperty.call(part, key));
      if (table) {
        answered.build += 1;
        return JSON.parse(JSON.stringify(table[key]));   // a copy: callers may keep what they get
      }
      if (early) return parsed.then(() => call(fn, args));   // look again once the whole page is parsed
      return python(fn, args);
    });
  }

  function python(fn, args) {
    return rt.ready.then(() => withData(args || []).then((a) => rt.call("experiments.api:" + fn, a)),
      () => { throw new Error(msg("widget.failed")); })
      .then((r) => { answered.python += 1; return r; }, (e) => { throw new Error(learnerMessage(e)); });
  }

  // {"$data": "document/key/..."} in a call's args (experiments.widget.data_ref, e.g. C5's stored runs): the build
  // answered the call by the placeholder; when Python must answer, it is sent that part of data/<document>.json
  // (which the build publishes), fetched once.
  const documents = new Map();
  function withData(v) {
    if (!v || typeof v !== "object") return Promise.resolve(v);
    if (Array.isArray(v)) return Promise.all(v.map(withData));
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === "$data" && typeof v.$data === "string") {
      const [name, ...path] = v.$data.split("/");
      if (!documents.has(name)) {
        documents.set(name, fetch(new URL("data/" + name + ".json", document.baseURI)).then((r) => {
          if (!r.ok) throw new Error("data/" + name + ".json: HTTP " + r.status);
          return r.json();
        }));
        documents.get(name).catch(() => documents.delete(name));
      }
      return documents.get(name).then((d) => path.reduce((x, k) => x[k], d));
    }
    return Promise.all(keys.map((k) => withData(v[k]))).then((vs) => Object.fromEntries(keys.map((k, i) => [k, vs[i]])));
  }

  // -- setting widgets up as the page is parsed -----------------------------------------------------------------
  // The page's script file (sitegen/scripts.py) runs before the page's body is parsed (site/templates/base.html).
  // mount() sets up every widget the parser has already passed (the widget and the precomputed
  // answers at its end are complete), then each later one as the parser passes it, and the rest at
  // DOMContentLoaded; each gets data-mounted. whenParsed(fn) runs fn once the whole page is parsed and mounted.
  const setups = {};   // widget name -> setup(root, ns), from every mount() call
  let inflating = Promise.resolve();   // the mounted widgets' answers, inflated one after another
  const seen = {};
  let watching = null;

  function passed(w) {   // has the parser finished w (its precomputed answers, at its end, included)?
    if (document.readyState !== "loading") return true;
    for (let n = w; n && n !== document; n = n.parentNode) if (n.nextSibling) return true;
    return false;
  }

  function mountOne(w) {   // one broken widget must not take the others down
    const name = w.dataset.widget;
    const inner = w.querySelector(".widget-static > *");
    if (!setups[name] || !inner) return;
    w.dataset.mounted = "";
    seen[name] = (seen[name] || 0) + 1;
    const ns = seen[name] === 1 ? name : name + "-" + seen[name];
    const answers = w.querySelector("script.precomputed");
    if (canInflate && answers) {   // its answers, ready before its first use (in page order: the first widget's first)
      inflating = inflating.then(() => answersIn(answers));
    }
    try {
      setups[name](inner, ns);
    } catch (e) {   // its build-time content stays
      console.warn("widget " + ns + ": " + e.message);
    }
  }

  function mountParsed() {
    for (const w of document.querySelectorAll(".widget[data-widget]:not([data-mounted])")) {
      if (!passed(w)) break;   // (document order: the ones after it are not finished either)
      mountOne(w);
    }
  }

  const parsed = new Promise((resolve) => {
    const done = () => { if (watching) watching.disconnect(); mountParsed(); resolve(); };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", done, { once: true });
    else resolve();
  });

  function mount(table) {   // {widget name: setup(root, ns)}
    Object.assign(setups, table);
    mountParsed();
    if (document.readyState === "loading" && !watching) {
      watching = new MutationObserver(mountParsed);
      watching.observe(document.documentElement, { childList: true, subtree: true });
    }
  }

  function whenParsed(fn) { parsed.then(fn); }

  window.courseWidgets = {
    timings: timings, answered: answered, mount: mount, getState: getState, setState: setState, setParams: setParams,
    whenParsed: whenParsed, models: models, el: el, whenReady: whenReady, live: live, pickAlias: pickAlias, showError: showError,
    latest: latest, chart: chart, call: call, bind: bind, fill: fill, make: make, rows: rows,
    options: options, learnerMessage: learnerMessage, msg: msg,
    declare: declare, model: model,
  };
  if (canInflate) {
    const later = () => { if (document.querySelector("script.precomputed")) inflateLater(); };
    if (document.readyState === "complete") later();
    else window.addEventListener("load", later, { once: true });
  }
})();
