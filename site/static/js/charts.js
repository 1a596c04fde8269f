/*
 * charts.js - draws chart specs with Plotly, loading Plotly only when a chart scrolls into view.
 *
 * Each <figure class="chart"> carries its spec in <script type="application/json" class="chart-spec">, computed
 * in Python (the lessons' widget modules) by the build, or by the same code in the browser. Specs hold raw numbers
 * to plot and the hover texts already formatted in Python. The figure's height is reserved by CSS, so drawing
 * never shifts the page.
 *
 *   window.courseCharts.update(figure, spec)   replace a figure's spec; redraw now if drawn, else when visible
 *   window.courseCharts.mark(figure, T)        move the crossover chart's "current T" line
 */
(function () {
  "use strict";
  const msg = window.courseMessages.msg;   // axis titles and trace names it writes: the learner message table

  const script = document.currentScript;
  const plotlyUrl = new URL("../vendor/plotly.min.js", script.src);
  let plotly = null;

  function loadPlotly() {   // CSS first (as files: the CSP forbids the bundle's own <style> elements), then JS
    if (!plotly) {
      plotly = fetch(new URL("plotly-boot.json", plotlyUrl)).then((r) => r.json()).then((boot) => {
        const link = document.createElement("link");
        link.rel = "stylesheet";
        link.href = new URL(boot.css, plotlyUrl);
        link.id = "plotly.js-style-global";
        link.className = "no-inline-styles";
        document.head.append(link);
        boot.guards.forEach((id) => {
          const guard = document.createElement("template");
          guard.id = id;
          document.head.append(guard);
        });
      }).then(() => new Promise((resolve, reject) => {
        const tag = document.createElement("script");
        tag.src = plotlyUrl;
        tag.onload = () => resolve(window.Plotly);
        tag.onerror = () => reject(new Error("plotly.min.js failed to load"));
        document.head.append(tag);
      }));
    }
    return plotly;
  }

  const dark = () => window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  const RED = "#d33";
  const log10 = Math.log10;

  // A long category label on two lines: before a bracket, or at the one space of "嵌入 embedding".
  function wrap(label) {
    const s = String(label);
    if (/\s*[\uff08(]/.test(s.slice(1))) return s.replace(/(.)\s*([\uff08(])/, "$1<br>$2");
    const words = s.split(" ");
    return words.length === 2 && s.length > 8 ? words.join("<br>") : s;
  }

  // Plotly figure {data, layout} for a spec; hover texts come from Python ("%{text}"). Phone first: the legend
  // sits below the plot (a legend beside it takes a third of a phone's width), category labels are on the y axis
  // of horizontal bars (never rotated and cut), axes make room for their labels (automargin). print: dark text
  // on white whatever the theme.
  function figure(spec, print, width) {
    const narrow = (width || 0) < 560;
    const fg = !print && dark() ? "#ddd" : "#222";
    const layout = { margin: { l: 8, r: 16, t: 40, b: 8 }, title: { text: spec.title || "", font: { size: 14 } },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", font: { color: fg }, autosize: true,
      legend: { orientation: "h", x: 0, xanchor: "left", y: 0, yanchor: "bottom", yref: "container",
        traceorder: "normal" } };
    const axis = (extra) => Object.assign({ automargin: true }, extra);
    const hover = "%{text}<extra></extra>";
    if (spec.kind === "bar") {   // horizontal: one bar per part, in the table's order, labels on the left (xtitle: the axis, default 参数)
      return { data: [{ type: "bar", orientation: "h", y: spec.labels.map(wrap), x: spec.values, text: spec.hover,
        textposition: "none", hovertemplate: hover, marker: { color: "#3b7dd8" } }],
        layout: Object.assign(layout, { showlegend: false, xaxis: axis({ title: { text: spec.xtitle || msg("chart.params") } }),
          yaxis: axis({ autorange: "reversed" }) }) };
    }
    if (spec.kind === "stacked") {   // one horizontal bar per model, its parts stacked to 100 %
      layout.legend.entrywidth = Math.floor(((width || 600) - 24) / (narrow ? 2 : 3));   // a grid of 2 or 3 columns
      layout.legend.entrywidthmode = "pixels";
      const data = spec.labels.map((label, i) => ({ type: "bar", orientation: "h", name: wrap(label),
        y: spec.series.map(wrap), x: spec.values.map((v) => v[i] * 100), text: spec.hover.map((h) => h[i]),
        textposition: "none", hovertemplate: hover }));
      return { data: data, layout: Object.assign(layout, { barmode: "stack", showlegend: true,
        xaxis: axis({ title: { text: msg("chart.params_share") }, range: [0, 100] }), yaxis: axis({ autorange: "reversed" }) }) };
    }
    if (spec.kind === "crossover") {
      const last = spec.T.length - 1;
      const data = [
        { type: "scatter", mode: "lines", name: "FFN", x: spec.T, y: spec.ffn, text: spec.hover_ffn, hovertemplate: hover },
        { type: "scatter", mode: "lines", name: msg("chart.attention_scores"), x: spec.T, y: spec.attention,
          text: spec.hover_attention, hovertemplate: hover },
      ];
      // shapes use data coordinates on log axes; annotations use log10 of them. The x axis ends at the last
      // point; the y axis has half a decade of headroom above the highest, where the ratio's label sits.
      const shapes = [], annotations = [];
      const top = Math.max(spec.ffn[last], spec.attention[last], spec.ffn[0]);
      const bottom = Math.min(spec.attention[0], spec.ffn[0]);
      if (spec.crossover) {
        const right = log10(spec.crossover) > (log10(spec.T[0]) + log10(spec.T[last])) / 2;
        data.push({ type: "scatter", mode: "markers", name: msg("chart.crossover"), x: [spec.crossover], y: [spec.ffn[0]],
          text: [spec.crossover_label], hovertemplate: hover, marker: { color: RED, size: 10 } });
        shapes.push({ type: "line", x0: spec.crossover, x1: spec.crossover, yref: "paper", y0: 0, y1: 1,
          line: { dash: "dot", color: RED } });
        // at the foot of its line, on the side with more room (the lines are up at the crossover's height)
        annotations.push({ x: log10(spec.crossover), yref: "paper", y: 0.02, yanchor: "bottom",
          xanchor: right ? "right" : "left", xshift: right ? -4 : 4, text: spec.crossover_label, showarrow: false,
          font: { color: RED } });
      }
      annotations.push({ x: log10(spec.T[last]), y: log10(spec.attention[last]), text: spec.ratio_label,
        showarrow: true, ax: -24, ay: -22, xanchor: "right", yanchor: "bottom" });
      const T = Math.min(spec.current || spec.t_max, spec.t_max);  // the slider's T (grey line, moved by mark())
      shapes.push({ type: "line", x0: T, x1: T, yref: "paper", y0: 0, y1: 1, line: { dash: "dash", color: "#888", width: 1 } });
      return { data: data, layout: Object.assign(layout, { shapes: shapes, annotations: annotations, showlegend: true,
        xaxis: axis({ type: "log", range: [log10(spec.T[0]), log10(spec.T[last])], title: { text: msg("chart.context_log") } }),
        yaxis: axis({ type: "log", range: [log10(bottom) - 0.2, log10(top) + 0.7], title: { text: msg("chart.flops_per_token") } }) }) };
    }
    if (spec.kind === "lines") {   // several named series over one x axis: {x, series: [{name, y}], xlog, xtitle, ytitle}
      const data = spec.series.map((s) => ({ type: "scatter", mode: "lines+markers", name: s.name, x: spec.x, y: s.y }));
      const xaxis = axis({ title: { text: narrow ? wrap(spec.xtitle || "") : spec.xtitle || "" } });
      if (spec.xlog) { xaxis.type = "log"; xaxis.tickvals = spec.x; xaxis.ticktext = spec.x.map(String); }
      return { data: data, layout: Object.assign(layout, { showlegend: true, xaxis: xaxis,
        yaxis: axis({ title: { text: spec.ytitle || "" }, rangemode: "tozero" }) }) };
    }
    if (spec.kind === "xy") {   // named series, each with its own x: {series: [{name, mode, color, x, y, text}], xtitle, ytitle}
      // optional: xlog / ylog (log axes), xrange / yrange ([low, high] in data units; a log axis's range is its log10);
      // a series' marker size (default 9) and symbol ("circle", "diamond", ...)
      const data = spec.series.map((s) => ({ type: "scatter", mode: s.mode || "lines", name: s.name, x: s.x, y: s.y,
        text: s.text, hovertemplate: hover, line: { color: s.color },
        marker: { color: s.color, size: s.size || 9, symbol: s.symbol || "circle" } }));
      const xaxis = axis({ title: { text: narrow ? wrap(spec.xtitle || "") : spec.xtitle || "" } });
      if (spec.xlog) xaxis.type = "log";
      if (spec.xrange) xaxis.range = spec.xlog ? spec.xrange.map(log10) : spec.xrange;
      const yaxis = axis({ title: { text: narrow ? wrap(spec.ytitle || "") : spec.ytitle || "" } });
      if (spec.ylog) yaxis.type = "log";
      if (spec.yrange) yaxis.range = spec.yrange; else if (!spec.ylog) yaxis.rangemode = "tozero";
      return { data: data, layout: Object.assign(layout, { showlegend: true,   // the legend below, as every chart's
        xaxis: xaxis, yaxis: yaxis }) };
    }
    if (spec.kind === "heatmap") {   // a matrix {x, y, z (rows of numbers in 0..1), hover}: z[i][j] a square at
      // column x[j], row y[i] (top down), its colour from white (0) to dark blue (1). Squares of a scatter trace:
      // the page's Plotly bundle (plotly-basic) has no heatmap trace; their size follows the plot's box
      const n = Math.max(spec.x.length, 1), idx = spec.x.map((_, i) => i);
      const side = Math.max(3, Math.floor(Math.min((width || 600) - 90, 420 - 90) / n));
      const xs = [], ys = [], cs = [], ts = [];
      spec.z.forEach((row, i) => row.forEach((v, j) => { xs.push(j); ys.push(i); cs.push(v); ts.push(spec.hover[i][j]); }));
      const ticks = (labels) => ({ tickvals: idx, ticktext: labels, showgrid: false, zeroline: false, range: [-0.5, n - 0.5] });
      return { data: [{ type: "scatter", mode: "markers", x: xs, y: ys, text: ts, hovertemplate: hover,
        marker: { symbol: "square", size: side, color: cs, cmin: 0, cmax: 1, colorscale: "Blues", reversescale: true,
          line: { width: 0 } } }],
        layout: Object.assign(layout, { showlegend: false, xaxis: axis(Object.assign(ticks(spec.x), { side: "top", tickangle: 0 })),
          yaxis: axis(Object.assign(ticks(spec.y), { range: [n - 0.5, -0.5] })) }) };
    }
    throw new Error("unknown chart kind " + spec.kind);
  }

  const GIGA = {};   // d3's "10G" shown as Plotly's (and model sizes') "10B" (legible, below)
  for (let m = 1; m < 1000; m++) GIGA[m + "G"] = m + "B";

  // Every tick label of a log axis at the axis' font size (12 px): Plotly writes the minor ticks between powers
  // of ten (2, 5, or 0.3, 0.4, ...) in small digits at 3/4 of it, 9 px, too small on a phone, unless the axis has
  // a tickformat. Numbers up to 10⁴ are written plainly (0.3, 200), larger ones with SI prefixes (50k, 2M), as
  // Plotly's own labels for powers of ten (1B for 10⁹).
  //
  // On a phone, series drawn in one colour (a budget's points, its parabola and its minimum) share one legend entry
  // named by what their names have in common ("C = 2 × 10¹⁰"); clicking it shows or hides them together (the
  // caption says what points, lines and symbols are). Nine entries under a 340 px plot would take its height.
  function legible(f, width) {
    const byColor = new Map();
    f.data.forEach((t) => {
      const c = t.line && t.line.color;
      if (c && t.name && (width || 0) < 560) byColor.set(c, (byColor.get(c) || []).concat([t]));
    });
    byColor.forEach((traces) => {
      let common = traces[0].name;
      traces.forEach((t) => { while (!t.name.startsWith(common)) common = common.slice(0, -1); });
      common = common.replace(/[\s\uff08(\u00b7:\uff1a\uff0c,]+$/, "");
      if (traces.length < 2 || common.length < 2) return;
      traces.forEach((t, i) => Object.assign(t, { legendgroup: common, showlegend: i === 0 }));
      traces[0].name = common;
    });
    Object.keys(f.layout).filter((k) => /^[xy]axis\d*$/.test(k)).forEach((k) => {
      const ax = f.layout[k], c = k.charAt(0), id = c + k.slice(5);   // "xaxis2": its traces' xaxis is "x2"
      if (ax.type !== "log" || ax.tickvals || ax.tickformat) return;
      const values = f.data.filter((t) => (t[c + "axis"] || c) === id).flatMap((t) => t[c] || []);
      ax.tickformat = values.some((v) => Math.abs(v) >= 1e4) ? "~s" : "~g";
      ax.labelalias = GIGA;   // d3's 10G read as Plotly's (and model sizes') 10B
    });
    return f;
  }

  function plotOf(fig) {
    let plot = fig.querySelector(".chart-plot");
    if (!plot) {
      plot = document.createElement("div");
      plot.className = "chart-plot";
      fig.prepend(plot);
    }
    return plot;
  }

  const withMark = (fig, spec) => Object.assign({}, spec, fig.dataset.current ? { current: Number(fig.dataset.current) } : {});

  function draw(fig, spec) {
    return loadPlotly().then((P) => {
      const f = legible(figure(withMark(fig, spec), false, fig.clientWidth), fig.clientWidth);
      return P.react(plotOf(fig), f.data, f.layout, { responsive: true, displayModeBar: false });
    }).then(() => {
      fig.classList.add("drawn");
      printSoon(fig);
    });
  }

  // Paper: each chart also gets a static SVG image (<img class="chart-print">, shown by the print stylesheet
  // only), drawn for an A4 column in dark on white. Plotly is loaded only once a chart is seen, so the images are
  // made then, in idle time: the chart just drawn, then every other chart of the page (printing must not wait).
  const PRINT = { width: 680, height: 400 };
  const idle = (fn) => (window.requestIdleCallback ? requestIdleCallback(fn, { timeout: 3000 }) : setTimeout(fn, 200));

  function printImage(fig) {
    return loadPlotly().then((P) => {
      const f = legible(figure(withMark(fig, specOf(fig)), true, PRINT.width), PRINT.width);
      const height = PRINT.height + (fig.classList.contains("chart-stacked") ? 100 : 0);
      return P.toImage({ data: f.data, layout: Object.assign(f.layout, { width: PRINT.width, height: height }) },
        { format: "svg", width: PRINT.width, height: height });
    }).then((url) => {
      let img = fig.querySelector("img.chart-print");
      if (!img) {
        img = document.createElement("img");
        img.className = "chart-print";
        img.alt = fig.getAttribute("aria-label") || "";
        fig.querySelector("figcaption").before(img);
      }
      img.src = url;
    });
  }

  function printSoon(fig) {   // (re)make fig's image once it has stopped changing; then the charts not drawn yet
    clearTimeout(fig._print);
    fig._print = setTimeout(() => idle(() => printImage(fig).then(printRest, (err) => console.warn("chart", err))),
      fig.querySelector("img.chart-print") ? 800 : 0);
  }

  function printRest() {
    const next = Array.from(document.querySelectorAll("figure.chart")).find((f) =>
      !f.querySelector("img.chart-print") && !f.classList.contains("drawn") && !f._print);
    if (next) { next._print = -1; idle(() => printImage(next).then(printRest, (err) => console.warn("chart", err))); }
  }

  function specOf(fig) {
    return JSON.parse(fig.querySelector("script.chart-spec").textContent);
  }

  const seen = new IntersectionObserver((entries) => {
    entries.forEach((e) => {
      if (e.isIntersecting) {
        seen.unobserve(e.target);
        draw(e.target, specOf(e.target)).catch((err) => console.warn("chart", err));
      }
    });
  }, { rootMargin: "200px" });
  function watch() {   // every chart of the page, once it is parsed (this file may run before it is); the build wrote
    // each one's chart-<kind> class, which reserves its height (widgets.css)
    document.querySelectorAll("figure.chart:not(.drawn)").forEach((fig) => seen.observe(fig));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch, { once: true });
  else watch();

  // Move the "current T" line to fig._markT (the last shape); runs again if T changed while Plotly worked.
  function moveMark(fig) {
    const T = fig._markT;
    const plot = fig.querySelector(".chart-plot");
    const shapes = plot && plot.layout && plot.layout.shapes;
    if (!fig.classList.contains("drawn") || !shapes || !shapes.length) { delete fig._markT; return; }
    const i = shapes.length - 1;
    window.Plotly.relayout(plot, { ["shapes[" + i + "].x0"]: T, ["shapes[" + i + "].x1"]: T }).then(() => {
      if (fig._markT !== T) requestAnimationFrame(() => moveMark(fig)); else delete fig._markT;
    }, () => { delete fig._markT; });
  }

  window.courseCharts = {
    update(fig, spec) {
      if (!fig) return Promise.resolve();
      fig.querySelector("script.chart-spec").textContent = JSON.stringify(spec);
      if (!fig.classList.contains("drawn")) {
        seen.observe(fig);   // (again) drawn once it is visible; harmless if already observed
        return Promise.resolve();
      }
      // redraw in the next frame, so the numbers beside the chart are painted first; the newest spec wins
      if (!fig._redraw) {
        fig._redraw = new Promise((resolve) => requestAnimationFrame(resolve)).then(() => {
          delete fig._redraw;
          return draw(fig, specOf(fig));
        });
      }
      return fig._redraw;
    },
    mark(fig, T) {   // coalesced: at most one relayout in flight per figure, the newest T wins
      if (!fig) return;
      fig.dataset.current = String(T);   // kept beside the spec: a redraw keeps the line where the slider is
      if (fig.classList.contains("drawn")) printSoon(fig);
      const first = fig._markT === undefined;
      fig._markT = T;
      if (first) requestAnimationFrame(() => moveMark(fig));
    },
  };
})();
