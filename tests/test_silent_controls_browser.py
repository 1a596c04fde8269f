"""No silent controls (issue #49): on every lesson page, every widget control that the learner can change either
changes what the widget shows, or shows why it does not.

Headless Chromium on a build of the real course, once the page's Python is ready and its charts are drawn. Every
visible, enabled control inside a widget (selects, checkboxes, radio buttons, sliders, number and text fields; not
buttons, code cells or exercises, whose runs are tested elsewhere) is changed once, in page order, with the changes
left in place: a select to its next option, a box ticked or unticked, a slider one stop on, a numeric field by one
step. After the widget is idle again (no data-busy: set in the same task as the event), the change counts as
answered if the widget's visible text (its controls' own labels and options left out) differs from before, or if
the widget shows a reason: its error line (an out-of-range value's Chinese message) or a [data-why] line beside a
control that the current state makes moot. A change that does neither is a silent control, named in the failure.
A numeric field is also given a value below its range (its min less one, or -1), which must bring the widget's
error line in Chinese, and then its value back.

A control the state makes moot may instead be disabled, with its reason beside it (widgets.js moot(): a visible
[data-why=disabled] line that the control's aria-describedby names). Such a line explains that control only, not a
change of another. Every widget control that is disabled once the page is ready, or after any change, must have
such a reason: one disabled without a reason is named in the failure (test_the_check_... below shows the check
refusing one, on C15's KV-head field with its reason taken away).

Bounded: one change per control, one page load per lesson.
"""
from __future__ import annotations

import json

import pytest

from browser_fixtures import scroll_through, wait_runtime_ready, wait_widgets_idle
from build_fixtures import REPO

COURSE = json.loads((REPO / "data" / "course.json").read_text(encoding="utf-8"))
LESSONS = [f"{ch['lesson']}.html" for ch in COURSE["chapters"] if ch.get("status") == "written" and ch.get("lesson")]


@pytest.fixture(scope="module")
def base(repo_site, http_serve) -> str:
    return http_serve(repo_site.out)


# the widgets' controls: selects and inputs, not in a code cell, an exercise, a chart or a training panel, shown
CONTROL = """(el) => !el.closest(".code-cell, .exercise, figure.chart, .training-panel")
  && el.getClientRects().length && el.checkVisibility({ visibilityProperty: true })"""
CONTROLS = ".widget select, .widget input:not([type=file], [type=hidden], [type=button], [type=submit])"

# the controls to change, each tagged data-probe=i (a stable handle while the page redraws around it); a disabled
# one too (a later change may enable it)
CONTROLS_JS = """() => {
  const control = """ + CONTROL + """;
  const all = Array.from(document.querySelectorAll('""" + CONTROLS + """')).filter(control);
  return all.map((el, i) => {
    el.dataset.probe = String(i);
    const w = el.closest(".widget");
    return { i: i, what: w.dataset.widget + " " + el.tagName.toLowerCase() + "." + (el.className || "")
                         + (el.type ? "[" + el.type + "]" : "") + (el.name ? " " + el.name : "") };
  });
}"""

# the widget's visible text without its controls' own text (a select's options), and whether it shows a reason
STATE_JS = """(i) => {
  const el = document.querySelector('[data-probe="' + i + '"]');
  if (!el) return null;
  const w = el.closest(".widget");
  const shown = (n) => n.getClientRects().length && n.checkVisibility({ visibilityProperty: true });
  const parts = [];
  const walk = document.createTreeWalker(w, NodeFilter.SHOW_TEXT, { acceptNode: (t) =>
    t.parentElement.closest("select, option, script, template, textarea") ? NodeFilter.FILTER_REJECT
      : NodeFilter.FILTER_ACCEPT });
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    if (t.data.trim() && shown(t.parentElement)) parts.push(t.data.trim());
  }
  w.querySelectorAll("svg [x], svg [width], svg [x1]").forEach((n) =>   // a bar or a line that moved
    parts.push(["x", "width", "x1"].map((a) => n.getAttribute(a)).join(",")));
  const says = (sel) => Array.from(w.querySelectorAll(sel)).some((e) => !e.hidden && e.textContent.trim() && shown(e));
  return { text: parts.join("|"), reason: says(".widget-error") || says("[data-why]:not([data-why=disabled])"),
           disabled: el.disabled };
}"""

# every widget control that is disabled without a reason: no visible [data-why] line with text that its
# aria-describedby names (what it is, as CONTROLS_JS says it)
UNEXPLAINED_JS = """() => {
  const control = """ + CONTROL + """;
  const shown = (n) => n.getClientRects().length && n.checkVisibility({ visibilityProperty: true });
  const reason = (el) => (el.getAttribute("aria-describedby") || "").split(" ").map((id) => document.getElementById(id))
    .some((n) => n && n.hasAttribute("data-why") && n.textContent.trim() && shown(n));
  return Array.from(document.querySelectorAll('""" + CONTROLS + """'))
    .filter((el) => control(el) && el.disabled && !reason(el))
    .map((el) => el.closest(".widget").dataset.widget + " " + el.tagName.toLowerCase() + "." + el.className
                 + (el.name ? " " + el.name : ""));
}"""

# one change: the next option, the other state of a box, one stop or step on (back one at the top end)
CHANGE_JS = """(i) => {
  const el = document.querySelector('[data-probe="' + i + '"]');
  if (el.tagName === "SELECT") {
    const n = el.options.length;
    for (let k = 1; k < n; k++) {
      const o = el.options[(el.selectedIndex + k) % n];
      if (!o.disabled) { el.value = o.value; break; }
    }
  } else if (el.type === "checkbox" || el.type === "radio") {
    el.checked = el.type === "radio" ? true : !el.checked;
  } else {
    const step = Number(el.step) > 0 ? Number(el.step) : 1;
    const v = Number(el.value);
    if (el.value.trim() === "" || !isFinite(v)) el.value = el.min || "1";
    else {
      const max = el.max === "" ? Infinity : Number(el.max);
      const next = v + step <= max ? v + step : v - step;
      el.value = String(next !== v ? next : v * 2);   // (one step is lost in a large float: 5.76e23 + 1)
    }
  }
  el.dispatchEvent(new Event("input", { bubbles: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return el.value + (el.type === "checkbox" ? (el.checked ? " on" : " off") : "");
}"""


# a change's answer is drawn: no widget busy, and the changed control's widget not loading or running a training
# run it started (C1's BPE trains on to a new merge count in the training worker; courseTrainer.showState)
SETTLED_JS = """(i) => {
  const el = document.querySelector('[data-probe="' + i + '"]');
  const w = el && el.closest(".widget");
  const trains = w && w.querySelector("[data-state=loading], [data-state=running]");
  return !document.querySelector(".widget[data-busy], .widget [data-busy]") && !trains;
}"""


def settle(page, i: int) -> None:
    """Two animation frames (a handler may start its work in a promise), then the widget's answer drawn."""
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.wait_for_function(SETTLED_JS, arg=i, timeout=120_000)


# a numeric field given a value below its range (its min less one; -1 where it names none), for the widget's
# Chinese message; returns the value it held, to put back, or null for a control that is not a numeric field
OUT_OF_RANGE_JS = """(i) => {
  const el = document.querySelector('[data-probe="' + i + '"]');
  if (!el || el.disabled || !(el.type === "number" || el.inputMode === "numeric")) return null;
  const was = el.value;
  el.value = String(el.min !== "" ? Number(el.min) - 1 : -1);
  el.dispatchEvent(new Event("input", { bubbles: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
  return was;
}"""

PUT_BACK_JS = """([i, v]) => {
  const el = document.querySelector('[data-probe="' + i + '"]');
  el.value = v;
  el.dispatchEvent(new Event("input", { bubbles: true }));
  el.dispatchEvent(new Event("change", { bubbles: true }));
}"""

ERROR_SHOWN_JS = """(i) => {
  const box = document.querySelector('[data-probe="' + i + '"]').closest(".widget").querySelector(".widget-error");
  return Boolean(box && !box.hidden && /[\u4e00-\u9fff]/.test(box.textContent));
}"""


@pytest.mark.slow
@pytest.mark.parametrize("name", LESSONS)
def test_every_control_changes_the_answer_or_says_why_not(name, base, guarded_pages):
    page = guarded_pages(viewport={"width": 1280, "height": 900})
    page.goto(base + name)
    wait_runtime_ready(page)
    scroll_through(page)
    wait_widgets_idle(page)
    controls = page.evaluate(CONTROLS_JS)
    silent, unrefused = [], []
    unexplained = {what: "as the page is ready" for what in page.evaluate(UNEXPLAINED_JS)}
    for c in controls:
        before = page.evaluate(STATE_JS, c["i"])
        if before is None or before["disabled"]:   # a redraw replaced it, or the state makes it moot (its reason:
            continue                                # unexplained)
        value = page.evaluate(CHANGE_JS, c["i"])
        settle(page, c["i"])
        after = page.evaluate(STATE_JS, c["i"])
        if after is not None and after["text"] == before["text"] and not after["reason"]:
            silent.append(f"{c['what']} -> {value}")
        for what in page.evaluate(UNEXPLAINED_JS):
            unexplained.setdefault(what, f"after {c['what']} -> {value}")
        was = page.evaluate(OUT_OF_RANGE_JS, c["i"])   # out of range: the widget's message in Chinese
        if was is not None:
            settle(page, c["i"])
            if not page.evaluate(ERROR_SHOWN_JS, c["i"]):
                unrefused.append(c["what"])
            page.evaluate(PUT_BACK_JS, [c["i"], was])
            settle(page, c["i"])
    assert controls, "the lesson has widget controls"
    assert silent == [], f"{name}: controls whose change neither changed the widget nor said why:\n" + "\n".join(silent)
    assert unexplained == {}, f"{name}: controls disabled without a reason beside them:\n" + "\n".join(
        f"{what} ({when})" for what, when in unexplained.items())
    assert unrefused == [], f"{name}: numeric fields that took a value below their range without a message: {unrefused}"


def test_the_check_refuses_a_control_disabled_without_a_reason(base, guarded_pages):
    """On C15 (whose KV-head field is disabled, with its reason, under every swap but MLA -> GQA): the check finds
    nothing; with the reason line taken away, or no longer named by the field, it names the field."""
    page = guarded_pages(viewport={"width": 1280, "height": 900})
    page.goto(base + "c15-architecture-forks.html")
    wait_runtime_ready(page)
    wait_widgets_idle(page)
    field = ".c15-what-if .c15-kvh"
    assert page.eval_on_selector(field, "el => el.disabled")
    assert page.evaluate(UNEXPLAINED_JS) == []
    page.eval_on_selector(field, "el => el.removeAttribute('aria-describedby')")
    named = page.evaluate(UNEXPLAINED_JS)
    assert len(named) == 1 and named[0].startswith("c15-what-if input.c15-kvh")
    page.reload()
    wait_runtime_ready(page)
    wait_widgets_idle(page)
    page.eval_on_selector(".c15-what-if .widget-why[data-why=disabled]", "el => { el.hidden = true; }")
    assert [w.split(" ")[1] for w in page.evaluate(UNEXPLAINED_JS)] == ["input.c15-kvh"]
