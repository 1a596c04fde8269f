/*
 * widgets.js - makes the build-time widget markup interactive (plain JS, <script defer>).
 *
 * Every widget arrives complete from the build (site/templates/widgets/). This file only adds behaviour:
 * toggles, sliders, model pickers, the tracker's stages and numpy run, editable code cells and the
 * bring-your-own-config box. Anything that needs a number calls the same Python the build used, through
 * window.courseRuntime (runtime-client.js) and experiments/api.py, and writes the strings Python returns:
 * no number is formatted here. Text from the learner or from Python is written with textContent, never innerHTML.
 *
 * A widget's state lives in the URL query as "<widget>.<key>" (e.g. ?crossover.model=deepseek_v3&crossover.T=4096,
 * ledger-total.den=backbone, tracker.stage=embedding), so a link reproduces what the learner saw. Defaults are
 * left out of the URL. A second widget of the same kind on a page is "<widget>-2".
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
  window.courseWidgets = { timings: timings };
  let modelsPromise = null;

  // -- small helpers ---------------------------------------------------------------------------------------------
  function getState(ns, key) {
    return params.get(ns + "." + key);
  }

  function setState(ns, key, value) {   // null/"" removes the key (the default state)
    if (value === null || value === undefined || value === "") params.delete(ns + "." + key);
    else params.set(ns + "." + key, value);
    const q = params.toString();
    history.replaceState(history.state, "", location.pathname + (q ? "?" + q : "") + location.hash);
  }

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

  // -- shared renderers (mirror the templates in site/templates/widgets/) -------------------------------------------
  function totalRows(lt) {
    return lt.rows.map((r) => el("tr", { "data-part": r.key }, [el("td", { text: r.label }),
      el("td", { class: "r", text: r.count }), el("td", { class: "r col-total", text: r.share_total }),
      el("td", { class: "r col-backbone", text: r.share_backbone })]));
  }

  function layerSection(layer) {
    return el("section", { class: "layer", "data-layer": layer.type, "aria-label": layer.label }, [
      el("h4", { text: layer.label + " ×" + layer.n + "：每层 " + layer.per_layer }),
      el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "表格（可横向滚动）" }, [el("table", {}, [
        el("thead", {}, [el("tr", {}, [el("th", { scope: "col", text: "张量" }), el("th", { scope: "col", text: "形状" }),
          el("th", { scope: "col", class: "r", text: "参数" })])]),
        el("tbody", {}, layer.rows.map((r) => el("tr", {}, [el("td", {}, [el("code", { text: r.name })]),
          el("td", { text: r.shape }), el("td", { class: "r", text: r.count })]))),
        el("tfoot", {}, [
          el("tr", {}, [el("th", { scope: "row", colspan: "2", text: "token mixer 小计" }), el("td", { class: "r", text: layer.mixer })]),
          el("tr", {}, [el("th", { scope: "row", colspan: "2", text: "FFN 小计（占本层 " + layer.ffn_share + "）" }),
            el("td", { class: "r", text: layer.ffn })]),
          el("tr", {}, [el("th", { scope: "row", colspan: "2", text: "本层合计" }), el("td", { class: "r", text: layer.per_layer })]),
        ]),
      ])]),
    ]);
  }

  function layerBody(ll) {   // the contents of .layer-body for ledger_layer data
    const nodes = [el("div", { class: "layer-columns" }, ll.layers.map(layerSection))];
    if (ll.diff) {
      const d = ll.diff;
      nodes.push(el("div", { class: "layer-diff" }, [el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "表格（可横向滚动）" }, [el("table", {}, [
        el("thead", {}, [el("tr", {}, [el("th", { scope: "col", text: "一层里的部分" }), el("th", { scope: "col", class: "r", text: d.a }),
          el("th", { scope: "col", class: "r", text: d.b }), el("th", { scope: "col", class: "r", text: "差" })])]),
        el("tbody", {}, d.rows.map((r) => el("tr", {}, [el("th", { scope: "row", text: r.label }),
          el("td", { class: "r", text: r.a }), el("td", { class: "r", text: r.b }), el("td", { class: "r", text: r.diff })]))),
      ])]), el("p", { class: "diff", text: d.sentence })]));
    } else {
      nodes.push(el("p", { class: "diff", text: ll.single }));
    }
    return nodes;
  }

  function compareTable(data) {   // thead, tbody, tfoot of the side-by-side ledger
    const cell = (a, b) => el("td", { class: "r" }, [a, el("br"), el("span", { class: "share", text: b })]);
    return [
      el("thead", {}, [el("tr", {}, [el("th", { scope: "col", text: "部件" })].concat(data.cols.map((c) =>
        el("th", { scope: "col", class: "r", "data-alias": c.alias, text: c.name }))))]),
      el("tbody", {}, data.rows.map((r) => el("tr", { "data-part": r.key }, [el("td", { text: r.label })].concat(
        r.cells.map((c) => cell(c.count, c.share)))))),
      el("tfoot", {}, [el("tr", {}, [el("th", { scope: "row", text: "合计（FFN 占比）" })].concat(
        data.cols.map((c) => cell(c.total, "FFN " + c.ffn_share))))]),
    ];
  }

  function stageItem(s, prefix) {   // one <li> of the tracker (mirrors tracker.html)
    const id = prefix + "-" + s.id;
    const count = el("span", { class: "params" }, ["参数 ", el("span", { class: "stage-params", text: s.params })]);
    if (s.n_layers > 1) count.append("（每层）");
    if (s.check) count.append(" ", el("span", { class: "check check-" + (s.check === "✓" ? "ok" : "bad"),
      title: "与 transformers 实现逐张量计数比对", text: s.check }));
    const detail = el("div", { class: "stage-detail", id: id }, [
      el("span", { class: "shape" }, [s.in + " → ", el("span", { class: "stage-out", text: s.out })]), count,
      s.note ? el("span", { class: "note", text: s.note }) : null,
      s.parts.length ? el("ul", { class: "stage-parts" }, s.parts.map((p) => el("li", {}, [p.label + "：",
        el("span", { class: "part-params", text: p.params }),
        p.status_zh ? " " : null, p.status_zh ? el("span", { class: "badge badge-" + p.status, text: p.status_zh }) : null]))) : null,
      el("span", { class: "stage-actual", hidden: true }, ["numpy 实际输出 ", el("span", { class: "actual-shape" }), " ",
        el("span", { class: "actual-check check" })]),
    ]);
    return el("li", { class: "stage stage-" + s.status, "data-stage": s.id }, [
      el("button", { type: "button", class: "stage-button", "aria-expanded": "false", "aria-controls": id }, [
        el("span", { class: "stage-title", text: s.title + (s.n_layers > 1 ? " ×" + s.n_layers : "") }),
        el("span", { class: "stage-meta" }, [
          s.check ? el("span", { class: "stage-check check check-" + (s.check === "✓" ? "ok" : "bad"),
            title: "参数量与 transformers 实现逐张量计数比对", text: s.check }) : null, s.check ? " " : null,
          el("span", { class: "badge badge-" + s.status, text: s.status_zh + (s.chapter ? "（" + s.chapter + "）" : "") })])]),
      detail]);
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

  // -- 总账: the denominator toggle (both columns are in the table) and a model picker -----------------------------
  function ledgerTotal(root, ns) {
    const share = root.querySelector(".ffn-share");
    const note = root.querySelector(".ffn-share-note");
    function applyDen(den) {
      root.dataset.denominator = den;
      root.querySelectorAll("button.denominator").forEach((b) => {
        b.setAttribute("aria-pressed", String(b.dataset.denominator === den));
      });
      share.textContent = den === "backbone" ? share.dataset.backbone : share.dataset.total;
      note.textContent = den === "backbone" ? "（分母：文本主干）" : "（分母：整个 checkpoint）";
    }
    root.querySelectorAll("button.denominator").forEach((b) => b.addEventListener("click", () => {
      applyDen(b.dataset.denominator);
      setState(ns, "den", b.dataset.denominator === "total" ? null : b.dataset.denominator);
    }));
    const recompute = latest(root, "ledger-total", (alias) => models().then((ms) =>
      call("total_view", [ms[alias].config, ms[alias].name]).then((lt) => {
        root.querySelector(".model-name").textContent = ms[alias].name;
        root.querySelector(".den-total").textContent = lt.total;
        root.querySelector(".den-backbone").textContent = lt.text_backbone;
        share.dataset.total = lt.ffn_share_total;
        share.dataset.backbone = lt.ffn_share_backbone;
        root.querySelector("tbody").replaceChildren(...totalRows(lt));
        root.querySelector(".ledger-sum").textContent = lt.total;
        root.querySelector(".ledger-backbone").textContent = lt.text_backbone;
        applyDen(root.dataset.denominator);
        chart(root, lt.chart);
      })));
    const picker = modelPicker(root, ns, recompute);
    whenReady(root, ".model-picker");
    if (getState(ns, "den") === "backbone") applyDen("backbone");
    rt.ready.then(() => picker.restore(), () => {});
  }

  // -- 一层里: one layer of each type, matrix by matrix, and their difference; any model -----------------------------
  function ledgerLayer(root, ns) {
    const recompute = latest(root, "ledger-layer", (alias) => models().then((ms) =>
      call("layer_view", [ms[alias].config]).then((ll) => {
        root.querySelector(".model-name").textContent = ms[alias].name;
        root.querySelector(".layer-body").replaceChildren(...layerBody(ll));
      })));
    const picker = modelPicker(root, ns, recompute);
    whenReady(root, ".model-picker");
    rt.ready.then(() => picker.restore(), () => {});
  }

  // -- 三个模型并排: any model from data/ in any column ----------------------------------------------------------------
  function ledgerCompare(root, ns) {
    const selects = Array.from(root.querySelectorAll("select.compare-model"));
    const dflt = root.dataset.models;
    const recompute = latest(root, "ledger-compare", (chosen) => models().then((ms) =>
      call("ledger_compare", [chosen.map((a) => [a, ms[a].name, ms[a].config])]).then((data) => {
        root.querySelector("table").replaceChildren(...compareTable(data));
        chart(root, data.chart);
      })));
    function changed() {
      const chosen = selects.map((s) => s.value);
      setState(ns, "models", chosen.join(",") === dflt ? null : chosen.join(","));
      recompute(chosen);
    }
    selects.forEach((s) => s.addEventListener("change", changed));
    whenReady(root, "select.compare-model");
    const wanted = (getState(ns, "models") || "").split(",");
    rt.ready.then(() => {
      let any = false;
      selects.forEach((s, i) => {
        const a = pickAlias(s, wanted[i]);
        if (a && a !== s.value) { s.value = a; any = true; }
      });
      if (any) changed();
    }, () => {});
  }

  // -- 参数 ≠ 计算: a log slider over the context length T and a model picker --------------------------------------------
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
    const recompute = latest(root, "crossover", () => models().then((ms) => {
      const a = want.alias;
      const cfg = ms[a].config;
      const series = a === alias ? null : call("crossover_view", [cfg, ms[a].name]);
      return Promise.resolve(series).then((v) => {
        if (v) {
          alias = a;
          tMax = v.t_max_raw;
          root.dataset.tMax = String(tMax);
          root.dataset.model = alias;
          root.querySelector(".model-name").textContent = ms[alias].name;
          root.querySelector(".crossover-point").textContent = v.crossover_point;
          root.querySelector(".native-ratio").textContent = v.native;
          chart(root, v.chart);
        }
        T = Math.min(want.T || tMax, tMax);
        slider.value = String(toSlider(T));
        setState(ns, "T", T === tMax ? null : String(T));
        return call("crossover_at", [cfg, T]);
      }).then((r) => {
        readout(r);
        if (window.courseCharts) window.courseCharts.mark(fig, T);
      });
    }));
    slider.addEventListener("input", () => {
      want.T = toT(slider.value);
      recompute({ label: "T" });
    });
    const picker = modelPicker(root, ns, (a) => {
      want.alias = a;   // the context length stays (clipped to the new model's native context)
      recompute({ label: "model" });
    });
    whenReady(root, ".t-slider, .model-picker");
    rt.ready.then(() => {
      const t = parseInt(getState(ns, "T"), 10);
      if (t > 0) want.T = t;
      if (!picker.restore() && t > 0) recompute({ label: "T" });
    }, () => {});
  }

  // -- the data-flow tracker: stages, a model toggle, and for our baseline a real numpy forward pass --------------------
  function tracker(root, ns) {
    const data = JSON.parse(root.querySelector("script.tracker-data").textContent);
    const prefix = root.dataset.prefix;
    const list = root.querySelector(".stages");
    const forward = root.querySelector(".forward");
    const status = root.querySelector(".forward-status");
    const dflt = root.dataset.model;
    let alias = dflt;

    function stageIds() {
      return Array.from(list.querySelectorAll(".stage")).map((s) => s.dataset.stage);
    }
    function select(stage, record) {
      if (!stageIds().includes(stage)) stage = stageIds()[0];
      list.querySelectorAll(".stage").forEach((li) => {
        const on = li.dataset.stage === stage;
        li.classList.toggle("selected", on);
        li.querySelector(".stage-button").setAttribute("aria-expanded", String(on));
        li.querySelector(".stage-detail").hidden = !on;
      });
      root.dataset.stage = stage;
      if (record) setState(ns, "stage", stage === stageIds()[0] ? null : stage);
    }
    list.addEventListener("click", (e) => {
      const b = e.target.closest(".stage-button");
      if (b) select(b.closest(".stage").dataset.stage, true);
    });

    const setModel = latest(root, "tracker", (a) => models().then((ms) =>
      call("tracker", [ms[a].config, data.settings, data.reference[a] || {}, data.course_titles.includes(a)]).then((stages) => {
        alias = a;
        root.dataset.model = a;
        root.querySelector(".model-name").textContent = ms[a].name;
        root.querySelectorAll("button.tracker-model").forEach((b) => {
          b.setAttribute("aria-pressed", String(b.dataset.model === a));
        });
        list.replaceChildren(...stages.map((s) => stageItem(s, prefix)));
        select(root.dataset.stage, false);
        forward.hidden = a !== data.baseline;
        status.textContent = "";
      })));
    root.querySelectorAll("button.tracker-model").forEach((b) => b.addEventListener("click", () => {
      if (b.dataset.model === alias) return;
      setState(ns, "model", b.dataset.model === dflt ? null : b.dataset.model);
      setModel(b.dataset.model);
    }));

    const run = latest(root, "tracker-forward", () => {
      status.textContent = "正在浏览器里运行 numpy 前向…";
      return call("baseline_forward", [0, data.settings]).then((r) => {
        list.querySelectorAll(".stage").forEach((li) => {
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
      }, (e) => { status.textContent = "运行失败：" + e.message; throw e; });
    });
    root.querySelector(".run-forward").addEventListener("click", () => run(null));

    whenReady(root, "button.tracker-model, .run-forward");
    select(getState(ns, "stage") || stageIds()[0], false);
    rt.ready.then(() => {
      const wanted = getState(ns, "model");
      const b = Array.from(root.querySelectorAll("button.tracker-model")).find((x) => x.dataset.model === wanted);
      if (b && wanted !== alias) setModel(wanted);
    }, () => {});
  }

  // -- our baseline: run the real numpy forward pass in the page ------------------------------------------------------
  function baseline(root) {
    const status = root.querySelector(".baseline-status");
    const run = latest(root, "baseline", () => {
      status.textContent = "正在浏览器里运行 numpy 前向…";
      return call("baseline_forward", [0]).then((r) => {
        root.querySelector(".baseline-stages").replaceChildren(...r.stages.map((s) =>
          el("tr", {}, [el("td", { text: s.name }), el("td", { text: s.shape })])));
        root.querySelector(".baseline-params").textContent = r.params;
        status.textContent = r.status;
      }, (e) => { status.textContent = "运行失败：" + e.message; throw e; });
    });
    whenReady(root, ".run-baseline");
    root.querySelector(".run-baseline").addEventListener("click", () => run(null));
  }

  // -- editable code cells: run with the button or Shift+Enter; stdout and tracebacks shown and announced -------------
  function codeCell(root) {
    const src = root.querySelector(".code-source");
    const original = src.value;
    const button = root.querySelector(".code-run");
    const out = root.querySelector(".code-output");
    const status = root.querySelector(".code-status");
    whenReady(root, ".code-run, .code-reset");
    let running = false;
    function run() {
      if (running || button.disabled) return;
      running = true;
      root.dataset.busy = "true";
      const t0 = performance.now();
      out.textContent = "运行中…";
      out.classList.remove("has-error");
      status.textContent = "运行中…";
      rt.run(src.value).then((r) => {
        const text = (r.stdout || "") + (r.stderr || "") + (r.error || "");
        out.textContent = text || "（没有输出）";
        out.classList.toggle("has-error", Boolean(r.error));
        const last = (r.error || r.stdout || "").trim().split("\n").pop();
        status.textContent = r.error ? "运行出错：" + last : "运行完成" + (last ? "：" + last : "，没有输出");
        timings.push({ widget: "code", ms: performance.now() - t0 });
      }).finally(() => {
        running = false;
        delete root.dataset.busy;
        root.dispatchEvent(new CustomEvent("course:updated", { bubbles: true }));
      });
    }
    button.addEventListener("click", run);
    src.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && e.shiftKey) { e.preventDefault(); run(); }
    });
    root.querySelector(".code-reset").addEventListener("click", () => { src.value = original; src.focus(); });
  }

  // -- bring your own config.json: its three ledgers and crossover, computed in the browser ----------------------------
  function byoConfig(root) {
    const input = root.querySelector("[data-testid=byo-config-input]");
    const error = root.querySelector(".byo-error");
    const total = root.querySelector("[data-testid=byo-config-total]");
    const ledgers = root.querySelector(".byo-ledgers");
    const compare = (root.dataset.compare || "").split(",").filter(Boolean);

    function fail(r) {
      error.hidden = false;
      error.querySelector(".byo-error-title").textContent = r.title;
      error.querySelector(".byo-problems").replaceChildren(...r.problems.map((p) => el("li", { text: p })));
      total.textContent = "—";
      ledgers.replaceChildren();
    }
    function show(v) {
      error.hidden = true;
      // the total explains itself like a build-time number (derivation.js), when Python sent its derivation
      const d = v.numbers && v.numbers["model.total"];
      if (d && window.courseNumbers) total.replaceChildren(window.courseNumbers.node("model.total", d));
      else total.textContent = v.total;
      const lt = v.ledger_total, cross = v.crossover;
      const fig = el("figure", { class: "chart", "aria-label": "你的模型：FFN 与全注意力打分每 token FLOPs 对比上下文长度" }, [
        el("script", { type: "application/json", class: "chart-spec", text: "{}" })]);
      ledgers.replaceChildren(
        el("h4", { text: "总账" }),
        el("p", { text: "FFN 占整个 checkpoint " + lt.ffn_share_total + "，占文本主干 " + lt.ffn_share_backbone +
          "；文本主干 " + lt.text_backbone + "，每个 token 激活 " + lt.active_per_token + " 个参数。" }),
        el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "表格（可横向滚动）" }, [el("table", { class: "byo-total-table" }, [
          el("thead", {}, [el("tr", {}, [el("th", { scope: "col", text: "部件" }), el("th", { scope: "col", class: "r", text: "参数" }),
            el("th", { scope: "col", class: "r", text: "占整个 checkpoint" }), el("th", { scope: "col", class: "r", text: "占文本主干" })])]),
          el("tbody", {}, totalRows(lt))])]),
        el("h4", { text: "一层里" }),
        el("div", { class: "byo-layer" }, layerBody(v.ledger_layer)),
        el("h4", { text: "并排" }),
        el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "表格（可横向滚动）" }, [el("table", { class: "byo-compare" }, compareTable(v.compare))]),
        el("h4", { text: "参数 ≠ 计算" }),
        el("p", { class: "byo-crossover", text: cross.crossover_point }),
        el("p", { class: "byo-native", text: cross.native }),
        fig);
      chart(ledgers, cross.chart);
    }
    const run = latest(root, "byo-config", (text) => models().then((ms) =>
      call("byo_views", [text, compare.filter((a) => ms[a]).map((a) => [a, ms[a].name, ms[a].config])])).then((r) => {
      if (r.ok) show(r); else fail(r);
    }));
    whenReady(root, ".byo-run, .byo-example");
    root.querySelector("[data-testid=byo-config-run]").addEventListener("click", () => run(input.value));
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && e.shiftKey) { e.preventDefault(); run(input.value); }
    });
    root.querySelector(".byo-file").addEventListener("change", (e) => {
      const file = e.target.files[0];
      if (file) file.text().then((t) => { input.value = t; run(t); });
    });
    root.querySelector(".byo-example").addEventListener("click", () => models().then((ms) => {
      input.value = JSON.stringify(ms[root.dataset.example].config, null, 2);
      run(input.value);
    }, (e) => fail({ title: "无法读取示例：", problems: [e.message] })));
  }

  const WIDGETS = {
    "ledger-total": ledgerTotal, "ledger-layer": ledgerLayer, "ledger-compare": ledgerCompare, crossover: crossover,
    tracker: tracker, baseline: baseline, code: codeCell, "byo-config": byoConfig,
  };
  const seen = {};
  document.querySelectorAll(".widget[data-widget]").forEach((w) => {
    const name = w.dataset.widget;
    const setup = WIDGETS[name];
    const inner = w.querySelector(".widget-static > *");
    if (!setup || !inner) return;
    seen[name] = (seen[name] || 0) + 1;
    const ns = seen[name] === 1 ? name : name + "-" + seen[name];
    try {
      setup(inner, ns);
    } catch (e) {   // one broken widget must not take the others down; its build-time content stays
      console.warn("widget " + ns + ": " + e.message);
    }
  });
})();
