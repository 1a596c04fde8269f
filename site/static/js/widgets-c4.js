/*
 * widgets-c4.js - behaviour of lesson C4's widgets: the three ledgers, the compute crossover, the data-flow
 * tracker with the baseline's numpy forward pass, and the bring-your-own-config box (plain JS, <script defer>,
 * after widgets.js, whose helpers and conventions it uses).
 */
(function () {
  "use strict";

  const W = window.courseWidgets;
  const { getState, setState, models, el, live, pickAlias, latest, chart, call } = W;
  const rt = window.courseRuntime;

  // -- shared renderers (mirror the templates in site/templates/widgets/) -------------------------------------------
  function totalRows(lt) {
    return lt.rows.map((r) => el("tr", { "data-part": r.key }, [el("td", { text: r.label }),
      el("td", { class: "r", text: r.count }), el("td", { class: "r col-total", text: r.share_total }),
      el("td", { class: "r col-backbone", text: r.share_backbone })]));
  }

  // a table that may scroll sideways: a focusable region, named after what it shows (as the templates name it)
  function scrollTable(label, table) {
    return el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": "表格：" + label + "（可横向滚动）" }, [table]);
  }

  function layerSection(layer, who) {
    return el("section", { class: "layer", "data-layer": layer.type, "aria-label": who + layer.label }, [
      el(who ? "h4" : "h3", { text: layer.label + " ×" + layer.n + "：每层 " + layer.per_layer }),   // (under byo's h3)
      scrollTable(who + layer.label + "逐矩阵的参数", el("table", {}, [
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
      ])),
    ]);
  }

  // the contents of .layer-body for ledger_layer data; who: "" or a prefix naming another model ("你的模型：")
  function layerBody(ll, who) {
    who = who || "";
    const nodes = [el("div", { class: "layer-columns" }, ll.layers.map((layer) => layerSection(layer, who)))];
    if (ll.diff) {
      const d = ll.diff;
      nodes.push(el("div", { class: "layer-diff" }, [scrollTable(who + "两种层的差别", el("table", {}, [
        el("thead", {}, [el("tr", {}, [el("th", { scope: "col", text: "一层里的部分" }), el("th", { scope: "col", class: "r", text: d.a }),
          el("th", { scope: "col", class: "r", text: d.b }), el("th", { scope: "col", class: "r", text: "差" })])]),
        el("tbody", {}, d.rows.map((r) => el("tr", {}, [el("th", { scope: "row", text: r.label }),
          el("td", { class: "r", text: r.a }), el("td", { class: "r", text: r.b }), el("td", { class: "r", text: r.diff })]))),
      ])), el("p", { class: "diff", text: d.sentence })]));
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
    live(root, ".model-picker");
    if (getState(ns, "den") === "backbone") applyDen("backbone");
    picker.restore();
  }

  // -- 一层里: one layer of each type, matrix by matrix, and their difference; any model -----------------------------
  function ledgerLayer(root, ns) {
    const recompute = latest(root, "ledger-layer", (alias) => models().then((ms) =>
      call("layer_view", [ms[alias].config]).then((ll) => {
        root.querySelector(".model-name").textContent = ms[alias].name;
        root.querySelector(".layer-body").replaceChildren(...layerBody(ll));
      })));
    const picker = modelPicker(root, ns, recompute);
    live(root, ".model-picker");
    picker.restore();
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
    live(root, "select.compare-model");
    const wanted = (getState(ns, "models") || "").split(",");
    let any = false;
    selects.forEach((s, i) => {
      const a = pickAlias(s, wanted[i]);
      if (a && a !== s.value) { s.value = a; any = true; }
    });
    if (any) changed();
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
    // (a new model: one call returns its series and the readout at the wanted T, clipped to its native context)
    const recompute = latest(root, "crossover", () => models().then((ms) => {
      const a = want.alias;
      const cfg = ms[a].config;
      if (a === alias) {
        T = Math.min(want.T || tMax, tMax);
        return call("crossover_at", [cfg, T]);
      }
      return call("crossover_view", [cfg, ms[a].name, want.T]).then((v) => {
        alias = a;
        tMax = v.t_max_raw;
        root.dataset.tMax = String(tMax);
        root.dataset.model = alias;
        root.querySelector(".model-name").textContent = ms[alias].name;
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
      status.textContent = "正在浏览器里运行 numpy 前向…";
      return call("baseline_forward", [0]).then((r) => {
        root.querySelector(".baseline-stages").replaceChildren(...r.stages.map((s) =>
          el("tr", {}, [el("td", { text: s.name }), el("td", { text: s.shape })])));
        root.querySelector(".baseline-params").textContent = r.params;
        status.textContent = r.status;
      }, (e) => { status.textContent = "运行失败：" + e.message; throw e; });
    });
    live(root, ".run-baseline");
    root.querySelector(".run-baseline").addEventListener("click", () => run(null));
    // initialise the 3.7M weights once the runtime is up (in the worker, off the page's thread), so that a press
    // of the button runs only the forward pass
    rt.ready.then(() => call("baseline_prepare", [0])).catch((e) => console.warn("baseline", e));
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
        el("h3", { text: "总账" }),
        el("p", { text: "FFN 占整个 checkpoint " + lt.ffn_share_total + "，占文本主干 " + lt.ffn_share_backbone +
          "；文本主干 " + lt.text_backbone + "，每个 token 激活 " + lt.active_per_token + " 个参数。" }),
        scrollTable("你的模型：各部件的参数与占比", el("table", { class: "byo-total-table" }, [
          el("thead", {}, [el("tr", {}, [el("th", { scope: "col", text: "部件" }), el("th", { scope: "col", class: "r", text: "参数" }),
            el("th", { scope: "col", class: "r", text: "占整个 checkpoint" }), el("th", { scope: "col", class: "r", text: "占文本主干" })])]),
          el("tbody", {}, totalRows(lt))])),
        el("h3", { text: "一层里" }),
        el("div", { class: "byo-layer" }, layerBody(v.ledger_layer, "你的模型：")),
        el("h3", { text: "并排" }),
        scrollTable("你的模型与对照模型并排的账本", el("table", { class: "byo-compare" }, compareTable(v.compare))),
        el("h3", { text: "参数 ≠ 计算" }),
        el("p", { class: "byo-crossover", text: cross.crossover_point }),
        el("p", { class: "byo-native", text: cross.native }),
        fig);
      chart(ledgers, cross.chart);
    }
    const run = latest(root, "byo-config", (text) => models().then((ms) =>
      call("byo_views", [text, compare.filter((a) => ms[a]).map((a) => [a, ms[a].name, ms[a].config])])).then((r) => {
      if (r.ok) show(r); else fail(r);
    }));
    live(root, ".byo-run, .byo-example");
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
    }, (e) => {   // (the reason, a file name and an HTTP status, is for a developer's console)
      console.warn("byo example:", e);
      fail({ title: "无法读取示例：", problems: ["示例模型的数据没有加载成功，请刷新页面再试"] });
    }));
  }

  W.mount({
    "ledger-total": ledgerTotal, "ledger-layer": ledgerLayer, "ledger-compare": ledgerCompare, crossover: crossover,
    tracker: tracker, baseline: baseline, "byo-config": byoConfig,
  });
})();
