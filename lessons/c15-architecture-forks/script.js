/*
 * script.js - lesson C15's widgets (分歧：2026 年的架构岔路), in the one dialect of widgets.js: mount, call,
 * latest, fill, getState / setState, pickAlias, models, whenReady, live.
 *
 *   c15-fork-map   the order picker: every order answered by the build (states), the rows filled by fill()
 *   c15-context    the context slider: every stop answered by the build
 *   c15-what-if    model x swap: every model with each of its swaps answered by the build at the built T and KV
 *                  heads; another T or KV-head count asks Python
 * Every string shown comes from Python (this lesson's calc.py, experiments/ledger/forks.py).
 */
(function () {
  "use strict";
  const W = window.courseWidgets;

  function pairs(root) {   // [[name, config], ...] of the widget's models, from data/models.json
    const aliases = JSON.parse(root.dataset.models);
    return W.models().then((ms) => aliases.map((a) => [ms[a].name, ms[a].config]));
  }

  function forkMap(root, ns) {
    const sort = root.querySelector(".c15-sort");
    const built = sort.value;
    const recompute = W.latest(root, "c15-fork-map", () => pairs(root).then((ps) => W.call("c15_fork_map",
      [ps, sort.value])), (x) => W.fill(root, x));
    sort.addEventListener("change", () => {
      W.setState(ns, "sort", sort.value === built ? null : sort.value);
      recompute({ label: "sort" });
    });
    const wanted = W.getState(ns, "sort");
    if (wanted && wanted !== built && Array.from(sort.options).some((o) => o.value === wanted)) {
      sort.value = wanted;
      recompute({ label: "sort" });
    }
    W.live(root, ".c15-sort");
  }

  function context(root, ns) {
    const slider = root.querySelector(".c15-t");
    const stops = JSON.parse(root.dataset.stops);
    const built = slider.defaultValue;
    const recompute = W.latest(root, "c15-context", () => pairs(root).then((ps) => W.call("c15_context",
      [ps, stops[Number(slider.value)]])), (x) => {
      W.fill(root, x);
      slider.setAttribute("aria-valuetext", W.msg("c15.context.tokens", { T: x.T }));
    });
    function update() {
      W.setState(ns, "T", slider.value === built ? null : String(stops[Number(slider.value)]));
      recompute({ label: "T" });
    }
    slider.addEventListener("input", update);
    const wanted = W.getState(ns, "T");
    if (wanted !== null) {
      const i = stops.indexOf(Number(wanted));
      if (i >= 0 && String(i) !== slider.value) { slider.value = String(i); update(); }
      else if (i < 0) W.setState(ns, "T", null);
    }
    W.live(root, ".c15-t");
  }

  function whatIf(root, ns) {
    const model = root.querySelector(".c15-model");
    const swap = root.querySelector(".c15-swap");
    const T = root.querySelector(".c15-wt");
    const heads = root.querySelector(".c15-kvh");
    const first = { model: model.value, swap: swap.value, T: T.value, heads: heads.value };

    function allowed() { return model.selectedOptions[0].dataset.swaps.split(" "); }
    function mark() {   // the swaps this model has stay choosable; the others are greyed out
      const ok = allowed();
      Array.from(swap.options).forEach((o) => { o.disabled = !ok.includes(o.value); });
      if (!ok.includes(swap.value)) swap.value = ok[1] || ok[0];
    }
    const recompute = W.latest(root, "c15-what-if", () => W.models().then((ms) => W.call("c15_what_if",
      [ms[model.value].config, swap.value, T.value, heads.value])), (x) => W.fill(root, x));
    function update() {
      W.setState(ns, "model", model.value === first.model ? null : model.value);
      W.setState(ns, "swap", swap.value === first.swap ? null : swap.value);
      W.setState(ns, "T", T.value === first.T ? null : T.value);
      W.setState(ns, "kv", heads.value === first.heads ? null : heads.value);
      recompute({ label: "input" });
    }
    model.addEventListener("change", () => { mark(); update(); });
    [swap, T, heads].forEach((c) => c.addEventListener("change", update));

    const m = W.pickAlias(model, W.getState(ns, "model"));
    if (m) model.value = m;
    mark();
    const s = W.getState(ns, "swap");
    if (s && allowed().includes(s)) swap.value = s;
    const t = W.getState(ns, "T");
    if (t && Array.from(T.options).some((o) => o.value === t)) T.value = t;
    const h = W.getState(ns, "kv");
    if (h) heads.value = h;
    if (m || s || t || h) update();
    W.live(root, ".c15-model, .c15-swap");
    W.whenReady(root, ".c15-wt, .c15-kvh");
  }

  W.mount({ "c15-fork-map": forkMap, "c15-context": context, "c15-what-if": whatIf });
})();
