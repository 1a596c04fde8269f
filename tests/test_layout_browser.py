"""Phone-first layout, print, and reaching the numbers' derivations by keyboard (issue #13, items 5 and 7).

Headless Chromium on a build of the real course (every written lesson):
- at 375 px (a phone: 375×812, touch): every widget control is at least 24 px tall with 16 px text (a phone zooms in
  on a focused field with smaller text); loading the lesson and drawing every chart shifts the layout by less
  than 0.05 in all; nothing in the lesson is wider than the screen except inside a
  .table-scroll region, and a region that does scroll shows a scroll cue; the 总账's share column is on screen
  without scrolling; every chart's legend is under its plot and its annotations inside the chart, and no tick or
  legend label is smaller than 11 px; every table that scrolls sideways keeps its first column (the row's name:
  a model, a part) on screen and uncovered when scrolled to its right end; no select cuts off an option; the crossover
  chart's x axis ends at its last data point (also after another model is picked);
- at 1280 px the per-layer tables print every tensor name on one line (also DeepSeek-V3's MoE layers) and hide no
  digit;
- in print every chart is a static image no wider than an A4 column, and no table is wider than the paper;
- keyboard: the numbers of a paragraph share one Tab stop (popover.js); → ← move between them and each shows its
  derivation; Tab leaves the paragraph and Shift+Tab comes back to the number last visited.
"""
from __future__ import annotations

import json
import math

import pytest

from browser_fixtures import scroll_through, wait_runtime_ready
from build_fixtures import REPO

PHONE = {"viewport": {"width": 375, "height": 812}, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
A4_COLUMN = 718   # px: A4's 210 mm at 96 dpi less Chromium's default print margins (about 10 mm a side)
C4 = "c4-transformer-block.html"

COURSE = json.loads((REPO / "data" / "course.json").read_text(encoding="utf-8"))
LESSONS = [f"{ch['lesson']}.html" for ch in COURSE["chapters"] if ch.get("status") == "written" and ch.get("lesson")]


@pytest.fixture(scope="module")
def base(repo_site, http_serve) -> str:
    return http_serve(repo_site.out)


# every layout shift the page makes without input (PerformanceObserver "layout-shift"), with what moved
SHIFTS_JS = """
window.__shifts = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shifts.push({ value: e.value,
    moved: (e.sources || []).map((s) => s.node && s.node.nodeType === 1
      ? s.node.tagName.toLowerCase() + "." + s.node.className + " " + (s.node.textContent || "").slice(0, 30) : "") });
}).observe({ type: "layout-shift", buffered: true });
"""


def open_lesson(guarded_pages, url: str, **context):
    page = guarded_pages(**context)
    page.add_init_script(SHIFTS_JS)
    page.goto(url)
    wait_runtime_ready(page)
    scroll_through(page)
    return page


# -- a phone -------------------------------------------------------------------------------------------------------
CONTROLS_JS = """() => Array.from(document.querySelectorAll(
    ".widget input, .widget select, .widget button, .widget textarea")).filter((el) =>
  !el.closest("figure.chart") && el.getClientRects().length && el.checkVisibility({ visibilityProperty: true })
).map((el) => ({ what: el.closest(".widget").dataset.widget + " " + el.tagName.toLowerCase() + "." + el.className
                       + (el.type ? "[" + el.type + "]" : ""),
                 height: el.getBoundingClientRect().height, font: parseFloat(getComputedStyle(el).fontSize) }))"""

TOO_WIDE_JS = """() => {
  const width = document.documentElement.clientWidth;
  return Array.from(document.querySelectorAll(".lesson-body *")).filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width && (r.right > width + 1 || r.left < -1) && !e.closest(".table-scroll");
  }).slice(0, 8).map((e) => e.tagName.toLowerCase() + "." + e.className + " "
                             + Math.round(e.getBoundingClientRect().left)
                             + ".." + Math.round(e.getBoundingClientRect().right));
}"""

SCROLL_CUES_JS = """() => Array.from(document.querySelectorAll(".lesson-body .table-scroll"))
  .filter((r) => r.scrollWidth > r.clientWidth + 1 && r.getClientRects().length)
  .map((r) => ({ label: r.getAttribute("aria-label"), cue: getComputedStyle(r).backgroundImage }))"""

CHARTS_JS = """() => Array.from(document.querySelectorAll("figure.chart")).map((f) => {
  const box = (el) => el && el.getBoundingClientRect();
  const plot = box(f.querySelector(".chart-plot")), area = box(f.querySelector(".nsewdrag"));
  const legend = f.querySelector(".legend") ? box(f.querySelector(".legend")) : null;
  const inside = (r) => r.left >= plot.left - 1 && r.right <= plot.right + 1 && r.top >= plot.top - 1
                        && r.bottom <= plot.bottom + 1;
  return { label: f.getAttribute("aria-label"), drawn: f.classList.contains("drawn"),
           legend: legend && { below: legend.top >= area.bottom, inside: inside(legend) },
           small: Array.from(f.querySelectorAll(".xtick text, .ytick text, .legendtext"))
             .filter((t) => t.getBoundingClientRect().width && parseFloat(getComputedStyle(t).fontSize) < 11)
             .map((t) => t.textContent + " " + getComputedStyle(t).fontSize),
           outside: Array.from(f.querySelectorAll(".annotation, .g-xtitle, .g-ytitle, .xtick, .ytick"))
             .filter((a) => a.getBoundingClientRect().width && !inside(a.getBoundingClientRect()))
             .map((a) => a.textContent) };
})"""


# every table that scrolls sideways, scrolled to its right end: each row's first cell (what names the row) lies
# inside the screen and its box, and is what the screen shows at its middle (the columns scrolled under it do not
# cover it); the box scrolled back after
FIRST_COLUMN_JS = """() => {
  const width = document.documentElement.clientWidth;
  return Array.from(document.querySelectorAll(".lesson-body .table-scroll")).filter((r) => r.getClientRects().length
      && r.scrollWidth > r.clientWidth + 1 && r.querySelector("table")).map((r) => {
    r.scrollIntoView({ block: "start" });
    r.scrollLeft = r.scrollWidth;
    const box = r.getBoundingClientRect();
    const cells = Array.from(r.querySelector("table").rows).map((row) => row.cells[0]).filter(Boolean);
    const off = cells.filter((c) => {
      const b = c.getBoundingClientRect();
      if (b.left < Math.max(0, box.left) - 1 || b.right > Math.min(width, box.right) + 1) return true;
      if (b.bottom < 0 || b.top > window.innerHeight) return false;   // below the screen: its place is checked
      const y = (Math.max(b.top, 0) + Math.min(b.bottom, window.innerHeight)) / 2;
      const seen = document.elementFromPoint((b.left + b.right) / 2, y);
      return !(seen && c.contains(seen));
    }).map((c) => c.textContent.trim().slice(0, 20));
    const scrolled = r.scrollLeft;
    r.scrollLeft = 0;
    return { label: r.getAttribute("aria-label") || r.querySelector("th").textContent, rows: cells.length,
             scrolled: scrolled, off: off };
  });
}"""

# every option of every select, shown whole when chosen: a customizable select (appearance: base-select) wraps
# its label and must not scroll; a native one shows one line in its content box less the ~20 px of its arrow
# (Chromium's native select sized to its widest option leaves exactly that)
SELECT_CUT_JS = """() => {
  const ctx = document.createElement("canvas").getContext("2d");
  return Array.from(document.querySelectorAll(".lesson-body select")).filter((s) => s.getClientRects().length)
    .flatMap((s) => {
      const st = getComputedStyle(s), was = s.value;
      ctx.font = st.font;
      const room = s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight) - 20;
      const cut = Array.from(s.options).filter((o) => {
        if (st.appearance !== "base-select") return ctx.measureText(o.text).width > room + 1;
        s.value = o.value;
        return s.scrollWidth > s.clientWidth + 1;
      }).map((o) => s.className + ": " + o.text);
      s.value = was;
      return cut;
    });
}"""


@pytest.mark.parametrize("name", LESSONS)
def test_a_phone_gets_big_controls_and_nothing_cut_off(name, base, guarded_pages):
    page = open_lesson(guarded_pages, base + name, **PHONE)
    controls = page.evaluate(CONTROLS_JS)
    assert controls, "the lesson has widget controls"
    small = [c for c in controls if c["height"] < 24 or c["font"] < 16]
    assert not small, small

    assert page.evaluate(TOO_WIDE_JS) == []
    cues = page.evaluate(SCROLL_CUES_JS)
    assert all("radial-gradient" in c["cue"] for c in cues), cues   # a region that scrolls shows its shadow

    charts = page.evaluate(CHARTS_JS)           # (a lesson may have none: C10's and C14's widgets are tables)
    assert all(c["drawn"] for c in charts), charts
    # loading and drawing every chart moves nothing on the page (each plot's box is there from the start)
    shifts = page.evaluate("window.__shifts")
    assert sum(x["value"] for x in shifts) < 0.05, [x for x in shifts if x["value"] > 0.005]
    for chart in charts:
        if chart["legend"]:
            assert chart["legend"] == {"below": True, "inside": True}, chart
        assert chart["outside"] == [], chart   # no label or annotation sticks out of its chart
        assert chart["small"] == [], chart     # tick and legend labels at least 11 px

    assert page.evaluate(SELECT_CUT_JS) == []
    tables = page.evaluate(FIRST_COLUMN_JS)
    for table in tables:
        assert table["scrolled"] > 0 and table["rows"] >= 2 and table["off"] == [], table


# the outline on a phone: each chapter's title (its every line) starts right of its id's column, and a reading time
# or exercise count is on one line
OUTLINE_JS = """() => Array.from(document.querySelectorAll(".chapter-list .chapter")).map((li) => {
  const id = li.querySelector(".chapter-id").getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(li.querySelector(".chapter-title"));
  const lines = Array.from(range.getClientRects()).filter((r) => r.width);   // each line's boxes
  const metas = Array.from(li.querySelectorAll(".chapter-meta")).map((m) => m.getClientRects().length);
  return { id: li.querySelector(".chapter-id").textContent, lines: new Set(lines.map((r) => Math.round(r.top))).size,
           under_id: lines.filter((r) => r.left < id.right).length, split_meta: metas.filter((n) => n > 1).length };
})"""


def test_a_phone_reads_the_outline_with_titles_beside_their_ids(base, guarded_pages):
    page = guarded_pages(**PHONE)
    page.goto(base + "index.html")
    chapters = page.evaluate(OUTLINE_JS)
    assert len(chapters) == len(COURSE["chapters"]) and any(c["lines"] > 1 for c in chapters), chapters
    assert [c for c in chapters if c["under_id"] or c["split_meta"]] == []


def test_a_phone_sees_the_ledgers_share_column_without_scrolling(base, guarded_pages):
    page = open_lesson(guarded_pages, base + C4, **PHONE)
    total = page.locator(".widget[data-widget=ledger-total]").first
    region = total.locator(".table-scroll")
    width = page.evaluate("document.documentElement.clientWidth")
    for denominator, column in (("total", "col-total"), ("backbone", "col-backbone")):
        total.locator(f'button[data-denominator="{denominator}"]').tap()
        page.wait_for_function(f"() => document.querySelector('.ledger-total').dataset.denominator === '{denominator}'")
        assert region.evaluate("r => r.scrollWidth <= r.clientWidth"), f"the 总账 scrolls sideways ({denominator})"
        rights = total.locator(f"th.{column}, td.{column}").evaluate_all(
            "cells => cells.map((c) => c.getBoundingClientRect().right)")
        assert len(rights) >= 3 and max(rights) <= width, (denominator, rights, width)


CROSSOVER_JS = """() => {
  const f = document.querySelector(".widget[data-widget=crossover] figure.chart");
  const spec = JSON.parse(f.querySelector("script.chart-spec").textContent);
  const plot = f.querySelector(".chart-plot");
  return { last: spec.T[spec.T.length - 1], first: spec.T[0], range: plot.layout.xaxis.range,
           full: plot._fullLayout.xaxis.range };
}"""


def test_the_crossover_x_axis_ends_at_the_last_data_point(base, guarded_pages):
    page = open_lesson(guarded_pages, base + C4, **PHONE)
    first = page.evaluate(CROSSOVER_JS)
    picker = page.locator(".widget[data-widget=crossover] select.model-picker")
    other = picker.evaluate("s => Array.from(s.options).map((o) => o.value).find((v) => v !== s.value)")
    picker.select_option(other)
    page.wait_for_function("""(last) => {
        const f = document.querySelector(".widget[data-widget=crossover] figure.chart");
        const spec = JSON.parse(f.querySelector("script.chart-spec").textContent);
        const plot = f.querySelector(".chart-plot");
        return spec.T[spec.T.length - 1] !== last && Math.abs(plot.layout.xaxis.range[1]
               - Math.log10(spec.T[spec.T.length - 1])) < 1e-9; }""", arg=first["last"], timeout=60_000)
    second = page.evaluate(CROSSOVER_JS)
    for state in (first, second):
        for rng in (state["range"], state["full"]):   # as asked, and as Plotly drew it
            assert rng[0] == pytest.approx(math.log10(state["first"]), abs=1e-9), state
            assert rng[1] == pytest.approx(math.log10(state["last"]), abs=1e-9), state
    assert first["last"] != second["last"]


# -- the tracker's "为什么需要它" lines, on a phone and on a desktop -----------------------------------------------
SOLVES_LAYOUT_JS = """() => {
  const w = document.querySelector(".widget[data-widget=tracker]");
  const width = document.documentElement.clientWidth;
  return Array.from(w.querySelectorAll(".stage:not([hidden]) .stage-detail:not([hidden]) .solves")).map((s) => {
    const r = s.getBoundingClientRect(), box = s.parentElement.getBoundingClientRect();
    const before = s.previousElementSibling && s.previousElementSibling.getBoundingClientRect();
    const links = Array.from(s.querySelectorAll("a.chapter-link")).map((a) => a.getBoundingClientRect());
    return { display: getComputedStyle(s).display, font: parseFloat(getComputedStyle(s).fontSize),
             own_line: !before || r.top >= before.bottom - 1, left: Math.abs(r.left - (box.left +
               parseFloat(getComputedStyle(s.parentElement).paddingLeft))) <= 1,
             inside: r.left >= -1 && r.right <= width + 1 && links.every((a) => a.left >= -1 && a.right <= width + 1),
             links: links.length };
  });
}"""


@pytest.mark.parametrize("device", ["phone", "desktop"])
def test_the_trackers_solves_lines_sit_on_their_own_lines_and_fit(device, base, guarded_pages):
    page = open_lesson(guarded_pages, base + C4, **(PHONE if device == "phone" else DESKTOP))
    tracker = page.locator(".widget[data-widget=tracker]")
    seen = []
    for stage in tracker.locator(".stage").evaluate_all("(lis) => lis.map((li) => li.dataset.stage)"):
        tracker.locator(f'.stage[data-stage="{stage}"] .stage-button').click()
        seen += page.evaluate(SOLVES_LAYOUT_JS)
    assert len(seen) >= 8 and sum(s["links"] for s in seen) >= 5, seen
    for s in seen:
        assert s["display"] == "block" and s["own_line"] and s["left"] and s["inside"] and s["font"] >= 14, (device, s)


# -- the per-layer tables on a desktop -----------------------------------------------------------------------------
LAYER_JS = """() => {
  const w = document.querySelector(".widget[data-widget=ledger-layer]");
  const names = Array.from(w.querySelectorAll(".layer tbody td:first-child")).map((td) => {
    const s = getComputedStyle(td);
    const inner = td.clientHeight - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom);
    return { name: td.textContent, lines: inner / parseFloat(getComputedStyle(td.querySelector("code")).lineHeight) };
  });
  const clipped = Array.from(w.querySelectorAll("td, th")).filter((c) => c.scrollWidth > c.clientWidth + 1)
    .map((c) => c.textContent);
  const scrolled = Array.from(w.querySelectorAll(".layer .table-scroll"))
    .filter((r) => r.scrollWidth > r.clientWidth + 1).map((r) => r.getAttribute("aria-label"));
  return { model: w.querySelector(".model-name").textContent, names: names, clipped: clipped, scrolled: scrolled };
}"""


def test_per_layer_tables_on_a_desktop_keep_each_tensor_name_on_one_line(base, guarded_pages):
    page = open_lesson(guarded_pages, base + C4, **DESKTOP)
    picker = page.locator(".widget[data-widget=ledger-layer] select.model-picker")
    deepseek = picker.evaluate("s => Array.from(s.options).find((o) => o.text === 'DeepSeek-V3').value")
    states = [page.evaluate(LAYER_JS)]
    picker.select_option(deepseek)
    page.wait_for_function("""() => { const w = document.querySelector(".widget[data-widget=ledger-layer]");
        return w.querySelector(".model-name").textContent === "DeepSeek-V3" && !w.querySelector("[data-busy]")
               && w.textContent.includes("mlp.experts."); }""", timeout=60_000)
    states.append(page.evaluate(LAYER_JS))
    assert [s["model"] for s in states] == ["Qwen3.8-27B", "DeepSeek-V3"]
    for state in states:
        assert len(state["names"]) > 10, state
        wrapped = [n for n in state["names"] if n["lines"] > 1.5]
        assert not wrapped, (state["model"], wrapped)
        assert state["clipped"] == [] and state["scrolled"] == [], state
    assert any("mlp.shared_experts.down_proj.weight" == n["name"] for n in states[1]["names"])


# -- print ---------------------------------------------------------------------------------------------------------
PRINTED_JS = """() => {
  const width = document.documentElement.clientWidth;
  return { width: width,
    charts: Array.from(document.querySelectorAll("figure.chart")).map((f) => {
      const img = f.querySelector("img.chart-print");
      const r = img ? img.getBoundingClientRect() : null;
      return { label: f.getAttribute("aria-label"), image: Boolean(img && img.complete && img.naturalWidth > 0),
               svg: Boolean(img && img.src.startsWith("data:image/svg+xml")), width: r ? r.width : 0,
               height: r ? r.height : 0, right: r ? r.right : 0,
               plot: f.querySelector(".chart-plot") ? getComputedStyle(f.querySelector(".chart-plot")).display
                                                    : "none" };
    }),
    tables: Array.from(document.querySelectorAll("table")).filter((t) => t.getClientRects().length)
      .map((t) => ({ right: t.getBoundingClientRect().right, head: t.querySelector("th").textContent })) };
}"""


@pytest.mark.parametrize("name", LESSONS)
def test_print_shows_every_chart_as_an_image_and_fits_tables_on_a4(name, base, guarded_pages):
    page = guarded_pages(viewport={"width": A4_COLUMN, "height": 1000}, color_scheme="dark")
    page.goto(base + name)
    wait_runtime_ready(page)
    has_charts = page.locator("figure.chart").count() > 0         # (C10's and C14's widgets are tables only)
    if has_charts:
        page.locator("figure.chart").first.scroll_into_view_if_needed()   # one chart seen: the rest follow, in idle
        page.wait_for_function("""() => Array.from(document.querySelectorAll("figure.chart")).every((f) => {
            const img = f.querySelector("img.chart-print"); return img && img.complete && img.naturalWidth > 0; })""",
                               timeout=60_000)
    page.emulate_media(media="print")
    state = page.evaluate(PRINTED_JS)
    assert bool(state["charts"]) == has_charts, state
    for chart in state["charts"]:
        assert chart["image"] and chart["svg"] and chart["plot"] == "none", chart
        assert 300 <= chart["width"] <= A4_COLUMN and chart["height"] > 150 and chart["right"] <= state["width"], chart
    wide = [t for t in state["tables"] if t["right"] > state["width"] + 1]
    assert not wide, wide
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and len(pdf) > 50_000


# -- numbers by keyboard -------------------------------------------------------------------------------------------
TAB_STOPS_JS = """async () => {   // press-free count: what the browser's sequential focus order would visit
  const all = Array.from(document.querySelectorAll("a[href], button, input, select, textarea, summary, [tabindex]"));
  const stops = all.filter((e) => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length
                                  && e.checkVisibility({ visibilityProperty: true }));
  return { stops: stops.length, numbers: stops.filter((e) => e.matches(".num")).length,
           allNumbers: document.querySelectorAll(".lesson-body .num").length };
}"""

ACTIVE_JS = """() => { const a = document.activeElement;
  const pop = Array.from(document.querySelectorAll(".num-popover")).find((p) => !p.hidden);
  const d = a.getAttribute("aria-describedby") || "";
  return { num: d.startsWith("num-") ? d.slice(4) : null, inPara: Boolean(window.__para && window.__para.contains(a)),
           label: pop ? (pop.querySelector(".drv-label") || {}).textContent : null,
           hint: pop && pop.querySelector(".drv-hint") ? pop.querySelector(".drv-hint").textContent : null,
           described: a.getAttribute("aria-describedby") }; }"""


def test_numbers_share_one_tab_stop_per_paragraph(base, guarded_pages):
    page = guarded_pages()
    page.goto(base + C4)
    wait_runtime_ready(page)
    counts = page.evaluate(TAB_STOPS_JS)
    # walk the page with the real Tab key and count the stops (a number counts once per paragraph)
    page.evaluate("() => { document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); }")
    seen, numbers = [], 0
    for _ in range(400):
        if page.evaluate("() => document.activeElement.matches('textarea.code-source')"):
            page.keyboard.press("Escape")       # a code box keeps Tab for indenting: Esc, then Tab leaves it
        page.keyboard.press("Tab")
        here = page.evaluate("() => { const a = document.activeElement; if (a === document.body) return null;"
                             " a.dataset.stop = a.dataset.stop || String(Math.random()); return [a.dataset.stop,"
                             " a.matches('.num')]; }")
        if here is None or (seen and here[0] == seen[0]):
            break
        seen.append(here[0])
        numbers += here[1]
    assert counts["allNumbers"] > 150                       # the page has that many numbers in its text ...
    assert numbers == counts["numbers"] < counts["allNumbers"] / 3   # ... but one Tab stop per paragraph of them
    # every stop counted: the walk with the real Tab key meets exactly the page's focusable stops. The stops that are
    # not numbers are links and controls, which grow as chapters are written and widgets added (C4 links to each
    # written chapter; 120 stops, then 126, then 137 with C3 and the runtime status), so they are not bounded by
    # the count of numbers; the numbers' own stops are, above.
    assert len(seen) == counts["stops"], (len(seen), counts)
    assert page.locator(".lesson-body .num:not([aria-describedby])").count() == 0   # each still describes itself


def test_a_keyboard_user_opens_each_numbers_derivation(base, guarded_pages):
    page = guarded_pages()
    page.goto(base + C4)
    wait_runtime_ready(page)
    # the first paragraph of the lesson with at least three numbers; focus lands just before it
    names = page.evaluate("""() => {
      const p = Array.from(document.querySelectorAll(".lesson-body p"))
        .find((p) => p.querySelectorAll(".num").length >= 3 && !p.closest(".widget"));
      window.__para = p;
      const s = document.createElement("span"); s.tabIndex = -1; p.before(s); s.focus();
      return Array.from(p.querySelectorAll(".num")).map((n) => n.getAttribute("aria-describedby").slice(4)); }""")

    def label(n):   # its 数字口径 entry's head, <b>value</b> label, without the value
        head = page.locator(f"[id='num-{n}'] > p")
        return head.text_content().removeprefix(head.locator("b").text_content() + " ")

    page.keyboard.press("Tab")
    state = page.evaluate(ACTIVE_JS)
    assert state["num"] == names[0] and state["label"] == label(names[0]), state
    assert state["hint"] == f"← → 同段其他数字（1 / {len(names)}）"
    assert state["described"] == f"num-{names[0]}"
    page.keyboard.press("ArrowRight")
    state = page.evaluate(ACTIVE_JS)
    assert state["num"] == names[1] and state["label"] == label(names[1]), state
    assert state["hint"] == f"← → 同段其他数字（2 / {len(names)}）"
    for _ in names:
        page.keyboard.press("ArrowRight")
    assert page.evaluate(ACTIVE_JS)["num"] == names[-1]           # stops at the paragraph's last number
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(ACTIVE_JS)["num"] == names[-2]
    page.keyboard.press("Enter")                                   # pinned: stays open ...
    page.keyboard.press("Escape")                                  # ... until Escape
    assert page.evaluate(ACTIVE_JS)["label"] is None and page.evaluate(ACTIVE_JS)["num"] == names[-2]

    page.keyboard.press("Tab")                                     # Tab leaves the paragraph
    assert not page.evaluate(ACTIVE_JS)["inPara"]
    page.keyboard.press("Shift+Tab")                               # and comes back to the number last visited
    state = page.evaluate(ACTIVE_JS)
    assert state["num"] == names[-2] and state["label"] == label(names[-2]), state
