/*
 * popover.js - shows a number's derivation beside it (plain JS, <script defer>).
 *
 * Each derivation is written once, in the page's 数字口径 list, and every use of the number points at it:
 *     <span class="num" tabindex="0" aria-describedby="num-anchor.total" id="use-anchor.total-1">27,781,427,952</span>
 *     ...
 *     <li id="num-anchor.total"><p><b>27,781,427,952</b> 锚点：总参数</p>
 *       <ul><li>= ...</li> ... <li class="sources">来源：...</li><li class="check ok">核对：...</li></ul></li>
 * so a screen reader announces the number, then its entry (value, label and derivation) as the description, with
 * or without this file. This file makes that derivation visible next to the number: it copies the label and rows
 * into one shared popover (aria-hidden: the description is already announced), each row a span of class drv-KIND
 * (drv-calc for a calculation line), as derivation.js builds a live number's rows. A number built in the browser
 * (derivation.js) carries its own hidden popover instead, and that one is shown as it is.
 * The popover opens on hover (mouse), on keyboard focus, and on tap/click (which pins it open until a second tap,
 * a tap elsewhere or Escape). One is open at a time. It is placed below the number, or above it when there is
 * more room there, never over the number it explains.
 *
 * Keyboard: a page has hundreds of numbers, so they are not each a Tab stop. The numbers of one paragraph (or
 * list item, heading, caption; of one table) form a group with a single Tab stop (a "roving tabindex"): Tab
 * reaches the group's current number, ← → move to its other numbers (the popover says so), Tab leaves. The build
 * writes tabindex="0" on every number (without this file each one is a Tab stop); this file keeps 0 on one
 * number per group and -1 on the rest, also for numbers added later (a widget's live number, derivation.js).
 */
(function () {
  "use strict";

  const GAP = 6;        // px between the number and its popover
  const MARGIN = 8;     // px kept free at the viewport edges
  const HIDE_DELAY = 120;

  let open = null;      // {num, pop, pinned}
  let hideTimer = 0;

  let shared = null;    // the popover for build-time numbers, filled with a copy of the 数字口径 entry

  function sharedPopover() {
    if (!shared) {
      shared = document.createElement("div");
      shared.className = "num-popover";
      shared.hidden = true;
      shared.setAttribute("aria-hidden", "true");
      document.body.append(shared);
    }
    return shared;
  }

  function row(cls, nodes) {   // a block span of the popover (our own DOM, cloned, no HTML strings)
    const span = document.createElement("span");
    span.className = cls;
    nodes.forEach((n) => span.append(n.cloneNode(true)));
    return span;
  }

  function copyEntry(entry) {   // 数字口径 <li>: its label (the head after the value) and its rows
    const head = entry.querySelector(":scope > p");
    const label = row("drv-label", Array.from(head.childNodes).filter((n) => n.nodeName !== "B"));
    label.normalize();
    if (label.firstChild) label.firstChild.textContent = label.firstChild.textContent.trimStart();
    const rows = Array.from(entry.querySelectorAll(":scope > ul > li"), (li) => row(
      li.className ? li.className.split(" ").map((c) => "drv-" + c).join(" ") : "drv-calc", Array.from(li.childNodes)));
    return [label, ...rows];
  }

  function popoverOf(num) {
    const entry = document.getElementById(num.getAttribute("aria-describedby") || "");
    if (!entry) return null;
    if (entry.classList.contains("num-popover")) return entry;   // a live number's own popover
    const pop = sharedPopover();
    if (!(open && open.num === num)) pop.replaceChildren(...copyEntry(entry));   // (keep its scroll)
    return pop;
  }

  function place(num, pop) {
    const r = num.getBoundingClientRect();
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    pop.style.maxWidth = Math.min(vw - 2 * MARGIN, 416) + "px";
    pop.style.maxHeight = "";
    const h = pop.offsetHeight;
    const w = pop.offsetWidth;
    const below = vh - r.bottom - GAP - MARGIN;
    const above = r.top - GAP - MARGIN;
    const goBelow = h <= below || below >= above;
    const room = goBelow ? below : above;
    if (h > room) pop.style.maxHeight = Math.max(room, 48) + "px";
    const height = Math.min(h, Math.max(room, 48));
    const top = goBelow ? r.bottom + GAP : r.top - GAP - height;
    const left = Math.max(MARGIN, Math.min(r.left, vw - w - MARGIN));
    pop.style.top = Math.round(top) + "px";
    pop.style.left = Math.round(left) + "px";
    pop.dataset.side = goBelow ? "below" : "above";
  }

  function show(num, pinned) {
    clearTimeout(hideTimer);
    const pop = popoverOf(num);
    if (!pop) return;
    if (open && open.num !== num) hide();
    pop.hidden = false;
    num.classList.add("num-active");
    open = { num: num, pop: pop, pinned: Boolean(pinned) || Boolean(open && open.pinned && open.num === num) };
    place(num, pop);
  }

  function hide() {
    clearTimeout(hideTimer);
    if (!open) return;
    open.pop.hidden = true;
    open.num.classList.remove("num-active");
    open = null;
  }

  function hideSoon() {
    if (!open || open.pinned) return;
    clearTimeout(hideTimer);
    hideTimer = setTimeout(hide, HIDE_DELAY);
  }

  // -- roving tabindex: one Tab stop per group of numbers --------------------------------------------------------
  const NUM = ".num[aria-describedby]";
  const BLOCK = "p, li, dd, dt, h1, h2, h3, h4, h5, h6, figcaption, blockquote, .headline";

  function groupOf(num) {   // the element whose numbers share one Tab stop
    return num.closest("table") || num.closest(BLOCK) || num.parentElement;
  }

  function numbersIn(group) {
    return Array.from(group.querySelectorAll(NUM)).filter((n) => groupOf(n) === group);
  }

  function settle(group, current) {   // tabindex 0 on the current number (kept, else the first), -1 on the others
    const nums = numbersIn(group);
    if (current) group._rovingCurrent = current;
    const keep = nums.includes(group._rovingCurrent) ? group._rovingCurrent : nums[0];
    nums.forEach((n) => { n.tabIndex = n === keep ? 0 : -1; });
  }

  function settleAll(root) {
    const groups = new Set();
    if (root.matches && root.matches(NUM)) groups.add(groupOf(root));
    root.querySelectorAll(NUM).forEach((n) => groups.add(groupOf(n)));
    groups.forEach((g) => settle(g));
  }

  settleAll(document);   // (a deferred script: the page is parsed)
  new MutationObserver((records) => records.forEach((r) => r.addedNodes.forEach((node) => {
    if (node instanceof Element) settleAll(node);
  }))).observe(document.body, { childList: true, subtree: true });

  const STEP = { ArrowRight: 1, ArrowLeft: -1 };

  function hint(num) {   // "← → 同段其他数字（2 / 5）" for a keyboard user, when the group has more than one
    const nums = numbersIn(groupOf(num));
    if (nums.length < 2) return null;
    const span = document.createElement("span");
    span.className = "drv-hint";
    const M = window.courseMessages, at = nums.indexOf(num) + 1, of = nums.length;   // (messages.js)
    span.textContent = groupOf(num).tagName === "TABLE" ? M.msg("popover.hint_table", { at: at, of: of })
      : M.msg("popover.hint_paragraph", { at: at, of: of });
    return span;
  }

  function numFrom(target) {
    return target instanceof Element ? target.closest(".num[aria-describedby]") : null;
  }

  function popFrom(target) {
    return target instanceof Element ? target.closest(".num-popover") : null;
  }

  // hover: mouse only (a tap also fires pointerover; the click handler decides what a tap does)
  document.addEventListener("pointerover", (e) => {
    if (e.pointerType !== "mouse") return;
    const num = numFrom(e.target);
    if (num) show(num, false);
    else if (open && popFrom(e.target) === open.pop) clearTimeout(hideTimer);
  });
  document.addEventListener("pointerout", (e) => {
    if (e.pointerType !== "mouse" || !open) return;
    const to = e.relatedTarget;
    if (to instanceof Node && (open.num.contains(to) || open.pop.contains(to))) return;
    if (numFrom(e.target) === open.num || popFrom(e.target) === open.pop) hideSoon();
  });

  // focus: keyboard users get the popover while the number has focus
  document.addEventListener("focusin", (e) => {
    const num = numFrom(e.target);
    if (!num) return;
    settle(groupOf(num), num);   // Tab comes back to the number last visited
    show(num, false);
    const pop = open && open.num === num ? open.pop : null;
    if (pop === shared && num.matches(":focus-visible")) {   // (a live number's popover is its description: as is)
      pop.querySelectorAll(".drv-hint").forEach((h) => h.remove());
      const line = hint(num);
      if (line) { pop.append(line); place(num, pop); }
    }
  });
  document.addEventListener("focusout", (e) => {
    if (open && numFrom(e.target) === open.num && !open.pinned) hide();
  });

  // click / tap toggles a pinned popover; a click elsewhere closes it
  document.addEventListener("click", (e) => {
    const num = numFrom(e.target);
    if (num) {
      if (open && open.num === num && open.pinned) hide();
      else show(num, true);
      return;
    }
    if (open && !popFrom(e.target)) hide();
  });

  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && open) {
      hide(); // focus stays on the number
      e.preventDefault();
      return;
    }
    const num = numFrom(e.target);
    if (num && e.key in STEP && !e.altKey && !e.ctrlKey && !e.metaKey && !e.shiftKey) {
      const nums = numbersIn(groupOf(num));
      const next = nums[nums.indexOf(num) + STEP[e.key]];
      e.preventDefault();
      if (next) next.focus();
      return;
    }
    if (num && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      if (open && open.num === num && open.pinned) hide();
      else show(num, true);
    }
  });

  // keep an open popover next to its number
  let frame = 0;
  function follow() {
    if (!open || frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      if (open) place(open.num, open.pop);
    });
  }
  window.addEventListener("scroll", follow, { passive: true });
  window.addEventListener("resize", follow);

  // before printing, close everything (print CSS also hides popovers)
  window.addEventListener("beforeprint", hide);
})();
