/*
 * popover.js - shows a number's derivation beside it (plain JS, loaded with <script defer>).
 *
 * Each derivation is written once, in the page's 数字口径 list, and every use of the number points at it:
 *     <span class="num" tabindex="0" aria-describedby="num-anchor.total-label num-anchor.total-rows">27,781,427,952</span>
 *     ...
 *     <li id="num-anchor.total"><p>... <span id="num-anchor.total-label">锚点：总参数</span> ...</p>
 *       <ul id="num-anchor.total-rows"><li class="drv-formula">= ...</li> ...</ul></li>
 * so a screen reader announces the number, then its label and derivation as the description, with or without
 * this file. This file makes that derivation visible next to the number: it copies the label and rows into one
 * shared popover (aria-hidden: the description is already announced). A number built in the browser
 * (derivation.js) carries its own hidden popover instead, and that one is shown as it is.
 * The popover opens on hover (mouse), on keyboard focus, and on tap/click (which pins it open until a second tap,
 * a tap elsewhere or Escape). One is open at a time. It is placed below the number, or above it when there is
 * more room there, never over the number it explains.
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

  function copyRows(source) {   // label span or derivation <ul> -> block spans (our own DOM, cloned, no HTML strings)
    const items = source.tagName === "UL" ? Array.from(source.children) : [source];
    return items.map((item) => {
      const span = document.createElement("span");
      span.className = item.tagName === "LI" ? item.className : "drv-label";
      item.childNodes.forEach((n) => span.append(n.cloneNode(true)));
      return span;
    });
  }

  function popoverOf(num) {
    const ids = (num.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
    const parts = ids.map((id) => document.getElementById(id)).filter(Boolean);
    if (!parts.length) return null;
    if (parts[0].classList.contains("num-popover")) return parts[0];   // a live number's own popover
    const pop = sharedPopover();
    if (!(open && open.num === num)) pop.replaceChildren(...parts.flatMap(copyRows));   // (keep its scroll)
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
    if (num) show(num, false);
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
