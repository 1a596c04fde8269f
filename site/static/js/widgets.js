/*
 * widgets.js - what every page's widgets share (plain JS, <script defer>); loaded before the lesson's own widget
 * files (widgets-c4.js, widgets-ffn.js), which the build adds only to the pages that use them.
 *
 * Every widget arrives complete from the build (site/templates/widgets/). The widget files only add behaviour.
 * Anything that needs a number calls the same Python the build used, through window.courseRuntime
 * (runtime-client.js) and experiments/api.py, and writes the strings Python returns: no number is formatted here.
 * Text from the learner or from Python is written with textContent, never innerHTML.
 *
 * A widget's state lives in the URL query (e.g. ?crossover.model=deepseek_v3&crossover.T=4096, sw_d=2048), so a
 * link reproduces what the learner saw. Defaults are left out of the URL. A second widget of the same kind on a
 * page is "<widget>-2".
 *
 * window.courseWidgets holds the helpers below and mount({name: setup}), which sets up every widget of those
 * names on the page. The editable code cells, which every lesson may use, are code-cell.js.
 *
 * For tests: window.courseWidgets.timings lists {widget, ms} for every recompute (input event -> DOM updated;
 * "crossover:T" for the slider, "crossover:model" for the picker);
 * each widget root gets data-busy while a recompute is pending and fires "course:updated" when done.
 */
(function () {
  "use strict";

  const rt = window.courseRuntime;
  const params = new URLSearchParams(location.search);
  const timings = [];
  let modelsPromise = null;

  // -- small helpers ---------------------------------------------------------------------------------------------
  function getState(ns, key) {
    return params.get(ns + "." + key);
  }

  function setParams(values) {   // {key: value}; null/"" removes the key (the default state). Reads the URL afresh:
    const now = new URLSearchParams(location.search);   // other widgets may have written their own keys meanwhile
    Object.entries(values).forEach(([k, v]) => {
      if (v === null || v === undefined || v === "") now.delete(k); else now.set(k, String(v));
    });
    const q = now.toString();
    history.replaceState(history.state, "", location.pathname + (q ? "?" + q : "") + location.hash);
  }

  function setState(ns, key, value) { setParams({ [ns + "." + key]: value }); }

  function models() {   // data/models.json: alias -> {id, name, config}; written by the build
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

  function whenReady(root, selector) {   // controls that need Python stay disabled until it is ready
    rt.ready.then(() => root.querySelectorAll(selector).forEach((b) => { b.disabled = false; }), () => {});
  }

  // The alias of a model named in the URL by alias or by file id (deepseek_v3 or deepseek-v3), if the picker has it.
  function pickAlias(select, wanted) {
    if (!wanted) return null;
    for (const o of select.options) if (o.value === wanted || o.dataset.id === wanted) return o.value;
    return null;
  }

  function showError(root, message) {
    const box = root.querySelector(":scope > .widget-error");
    if (!box) return;
    box.hidden = !message;
    box.textContent = message ? "计算失败：" + message : "";
  }

  // Runs job(arg) with at most one call in flight: while one runs, only the newest request waits (a slider drag
  // sends dozens of input events; the learner sees the last one). Records the time from the event to the DOM.
  function latest(root, name, job) {
    let running = false, next = null;
    function pump() {
      if (running || !next) return;
      const { arg, t0 } = next;
      next = null;
      running = true;
      root.dataset.busy = "true";
      Promise.resolve().then(() => job(arg)).then(() => {
        showError(root, "");
        timings.push({ widget: name + (arg && arg.label ? ":" + arg.label : ""), ms: performance.now() - t0 });
      }, (e) => showError(root, e.message)).finally(() => {
        running = false;
        if (next) pump(); else {
          delete root.dataset.busy;
          root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
        }
      });
    }
    return (arg) => {
      next = { arg: arg, t0: performance.now() };
      pump();
    };
  }

  // Redraw the widget's chart with a spec from Python; not awaited: numbers first, the drawing follows.
  function chart(root, spec) {
    if (!window.courseCharts) return;
    window.courseCharts.update(root.querySelector("figure.chart"), spec).catch((e) => console.warn("chart", e));
  }

  function call(fn, args) {
    return rt.call("experiments.api:" + fn, args);
  }

  const seen = {};
  function mount(table) {   // {widget name: setup(root, ns)}; one broken widget must not take the others down
    document.querySelectorAll(".widget[data-widget]").forEach((w) => {
      const name = w.dataset.widget;
      const setup = table[name];
      const inner = w.querySelector(".widget-static > *");
      if (!setup || !inner) return;
      seen[name] = (seen[name] || 0) + 1;
      const ns = seen[name] === 1 ? name : name + "-" + seen[name];
      try {
        setup(inner, ns);
      } catch (e) {   // its build-time content stays
        console.warn("widget " + ns + ": " + e.message);
      }
    });
  }

  window.courseWidgets = {
    timings: timings, mount: mount, getState: getState, setState: setState, setParams: setParams, models: models,
    el: el, whenReady: whenReady, pickAlias: pickAlias, showError: showError, latest: latest, chart: chart, call: call,
  };
})();
