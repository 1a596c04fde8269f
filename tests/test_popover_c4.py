"""On the real C4 page: a number's derivation opens on hover and by keyboard (Tab to its paragraph, then → ←), and is
announced as its description."""
from browser_fixtures import wait_runtime_ready
from experiments.expr import to_python


def test_c4_popover_by_hover_and_by_tab(repo_site, http_serve, guarded_page):
    page = guarded_page
    page.goto(http_serve(repo_site.out) + "c4-transformer-block.html")
    total = page.locator('.lesson-body .num[aria-describedby="num-anchor.total"]').first
    popover = page.locator(".num-popover")   # build-time numbers share one popover, filled from 数字口径
    assert total.inner_text() == "27,781,427,952"
    assert total.get_attribute("id") == "use-anchor.total-1"   # described by its 数字口径 entry (one id)
    entry = page.locator("[id='num-anchor.total']")
    assert entry.evaluate("e => e.matches('.ledger-list > li')") and "27,356,728,560 ✓" in entry.text_content()
    assert popover.count() == 0

    total.hover()
    assert popover.is_visible()
    text = popover.inner_text()
    assert "26,895,998,464 + 424,699,392 + 460,730,096" in text       # the substituted form
    assert "27,356,728,560" in text and "✓" in text                     # the transformers cross-check
    page.mouse.move(1, 1)
    popover.wait_for(state="hidden")

    # by keyboard: Tab from just before the number's paragraph lands on its paragraph's one Tab stop (popover.js),
    # → moves along that paragraph's numbers to it, and its derivation opens
    steps = page.evaluate("""() => {
        const n = document.querySelector('.lesson-body .num[aria-describedby="num-anchor.crossover_T"]');
        const p = n.closest('p, li'); const s = document.createElement('span');
        s.tabIndex = -1; p.before(s); s.focus();
        return [...p.querySelectorAll('.num')].indexOf(n); }""")
    page.keyboard.press("Tab")
    for _ in range(steps):
        page.keyboard.press("ArrowRight")
    focused = page.evaluate("document.activeElement.getAttribute('aria-describedby')")
    assert focused == "num-anchor.crossover_T"
    cross_pop = page.locator(".num-popover")
    assert cross_pop.is_visible()
    head = page.locator("[id='num-anchor.crossover_T'] > p")   # the entry's head: <b>value</b> label
    label = cross_pop.locator(".drv-label").text_content()
    assert label and head.text_content() == head.locator("b").text_content() + " " + label
    subst = "2 × 3 × 5,120 × 17,408 × 64 / (16 × 2 × 2 × 24 × 256)"
    assert subst in cross_pop.inner_text() and eval(to_python(subst)) == 87_040
    page.keyboard.press("Escape")
    assert not cross_pop.is_visible()
    wait_runtime_ready(page)


def test_a_number_recomputed_in_the_browser_explains_itself_like_the_build(repo_site, http_serve, guarded_page):
    """Paste the anchor's config: the browser's total carries the same derivation rows as the build's."""
    import json
    from pathlib import Path
    page = guarded_page
    page.goto(http_serve(repo_site.out) + "c4-transformer-block.html")
    wait_runtime_ready(page)
    config = json.loads((Path(__file__).parent.parent / "data/models/qwen3.8-27b/config.json").read_text())
    root = page.locator('.widget[data-widget="byo-config"]')
    root.locator('[data-testid="byo-config-input"]').fill(json.dumps(config))
    root.locator('[data-testid="byo-config-run"]').click()
    live = root.locator('[data-testid="byo-config-total"] .num')
    live.wait_for()
    assert live.inner_text() == "27,781,427,952"
    live.focus()
    live_pop = page.locator("#" + live.get_attribute("aria-describedby"))
    assert live_pop.is_visible()

    def rows(pop, classes):
        return pop.locator(classes).all_inner_texts()
    built = page.locator('.lesson-body .num[aria-describedby="num-anchor.total"]').first
    page.mouse.move(0, 0)   # (the pointer, left over the Run button, would hover whatever scrolls under it)
    built.focus()
    built_pop = page.locator(".num-popover:not([id])")
    assert built_pop.is_visible()
    # the build's calculation lines (plain rows in 数字口径) are drv-calc in the popover, the live ones keep their kind
    assert rows(live_pop, ".drv-formula, .drv-subst, .drv-value") == rows(built_pop, ".drv-calc") == [
        "= 文本主干 + MTP + 视觉塔", "= 26,895,998,464 + 424,699,392 + 460,730,096", "= 27,781,427,952"]
    assert rows(built_pop, ".drv-sources") == ["来源：Qwen3.8-27B 的 config.json（由课程的账本引擎逐张量现算）"]
    # styled as in the 数字口径 list: calculation lines in the monospace font, the check in the "ok" colour
    style = "e => [getComputedStyle(e).fontFamily, getComputedStyle(e).color]"
    entry_rows = page.locator("[id='num-anchor.total'] > ul > li")
    assert built_pop.locator(".drv-calc").first.evaluate(style) == entry_rows.first.evaluate(style)
    assert built_pop.locator(".drv-check.drv-ok").evaluate(style) == entry_rows.last.evaluate(style)
    assert entry_rows.last.evaluate(style) != entry_rows.first.evaluate(style)
    assert "粘贴的 config.json" in live_pop.inner_text()
