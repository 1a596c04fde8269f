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

  // Plotly figure {data, layout} for a spec; hover texts come from Python ("%{text}").
  function figure(spec) {
    const fg = dark() ? "#ddd" : "#222";
    const layout = { margin: { l: 70, r: 20, t: 40, b: 60 }, title: { text: spec.title || "", font: { size: 14 } },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", font: { color: fg }, autosize: true };
    const hover = "%{text}<extra></extra>";
    if (spec.kind === "bar") {
      return { data: [{ type: "bar", x: spec.labels, y: spec.values, text: spec.hover, textposition: "none",
        hovertemplate: hover, marker: { color: "#3b7dd8" } }],
        layout: Object.assign(layout, { yaxis: { title: { text: "参数" } } }) };
    }
    if (spec.kind === "stacked") {
      const data = spec.labels.map((label, i) => ({ type: "bar", name: label, x: spec.series,
        y: spec.values.map((v) => v[i] * 100), text: spec.hover.map((h) => h[i]), textposition: "none",
        hovertemplate: hover }));
      return { data: data, layout: Object.assign(layout, { barmode: "stack", yaxis: { title: { text: "占全部参数 %" } } }) };
    }
    if (spec.kind === "crossover") {
      const data = [
        { type: "scatter", mode: "lines", name: "FFN", x: spec.T, y: spec.ffn, text: spec.hover_ffn, hovertemplate: hover },
        { type: "scatter", mode: "lines", name: "全注意力打分", x: spec.T, y: spec.attention,
          text: spec.hover_attention, hovertemplate: hover },
      ];
      // shapes use data coordinates on log axes; annotations use log10 of them
      const shapes = [], annotations = [];
      if (spec.crossover) {
        data.push({ type: "scatter", mode: "markers", name: "交叉点", x: [spec.crossover], y: [spec.ffn[0]],
          text: [spec.crossover_label], hovertemplate: hover, marker: { color: RED, size: 10 } });
        shapes.push({ type: "line", x0: spec.crossover, x1: spec.crossover, yref: "paper", y0: 0, y1: 1,
          line: { dash: "dot", color: RED } });
        annotations.push({ x: Math.log10(spec.crossover), yref: "paper", y: 1.02, text: spec.crossover_label,
          showarrow: false, font: { color: RED } });
      }
      const last = spec.T.length - 1;
      annotations.push({ x: Math.log10(spec.T[last]), y: Math.log10(spec.attention[last]), text: spec.ratio_label,
        showarrow: true, ax: -60, ay: 30, xanchor: "right" });
      const T = Math.min(spec.current || spec.t_max, spec.t_max);  // the slider's T (grey line, moved by mark())
      shapes.push({ type: "line", x0: T, x1: T, yref: "paper", y0: 0, y1: 1, line: { dash: "dash", color: "#888", width: 1 } });
      return { data: data, layout: Object.assign(layout, { shapes: shapes, annotations: annotations, showlegend: true,
        xaxis: { type: "log", title: { text: "上下文长度 T（对数）" } }, yaxis: { type: "log", title: { text: "每 token FLOPs" } } }) };
    }
    if (spec.kind === "lines") {   // several named series over one x axis: {x, series: [{name, y}], xlog, xtitle, ytitle}
      const data = spec.series.map((s) => ({ type: "scatter", mode: "lines+markers", name: s.name, x: spec.x, y: s.y }));
      const xaxis = { title: { text: spec.xtitle || "" } };
      if (spec.xlog) { xaxis.type = "log"; xaxis.tickvals = spec.x; xaxis.ticktext = spec.x.map(String); }
      return { data: data, layout: Object.assign(layout, { xaxis: xaxis, yaxis: { title: { text: spec.ytitle || "" }, rangemode: "tozero" } }) };
    }
    if (spec.kind === "xy") {   // named series, each with its own x: {series: [{name, mode, color, x, y, text}], xtitle, ytitle}
      const data = spec.series.map((s) => ({ type: "scatter", mode: s.mode || "lines", name: s.name, x: s.x, y: s.y,
        text: s.text, hovertemplate: hover, line: { color: s.color }, marker: { color: s.color, size: 9 } }));
      return { data: data, layout: Object.assign(layout, { showlegend: true, legend: { orientation: "h", y: -0.25 },
        xaxis: { title: { text: spec.xtitle || "" } }, yaxis: { title: { text: spec.ytitle || "" }, rangemode: "tozero" } }) };
    }
    throw new Error("unknown chart kind " + spec.kind);
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

  function draw(fig, spec) {
    return loadPlotly().then((P) => {
      const f = figure(Object.assign({}, spec, fig.dataset.current ? { current: Number(fig.dataset.current) } : {}));
      return P.react(plotOf(fig), f.data, f.layout, { responsive: true, displayModeBar: false });
    }).then(() => fig.classList.add("drawn"));
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
  document.querySelectorAll("figure.chart").forEach((fig) => seen.observe(fig));

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
      const first = fig._markT === undefined;
      fig._markT = T;
      if (first) requestAnimationFrame(() => moveMark(fig));
    },
  };
})();
