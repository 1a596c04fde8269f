/*
 * exercise-progress.js - the outline's count of solved exercises (index.html; sitegen/pages.py outline lists each
 * lesson's exercises in data-exercises). Each lesson's line says how many of its exercises this browser has solved,
 * read from what exercise.js keeps in localStorage ("course.exercise.<name>" = {code, solved}); nothing leaves the
 * machine. Without storage the build's line (how many there are) stays.
 */
(function () {
  "use strict";
  const msg = window.courseMessages.msg;

  function solved(name) {
    try { return Boolean((JSON.parse(localStorage.getItem("course.exercise." + name) || "null") || {}).solved); }
    catch (e) { return false; }
  }

  function count() {
    document.querySelectorAll(".chapter-exercises[data-exercises]").forEach((el) => {
      const names = JSON.parse(el.dataset.exercises);
      const done = names.filter(solved).length;
      el.textContent = msg("exercise.outline", { solved: done, total: names.length });
      el.dataset.solved = String(done);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", count);
  else count();
  window.addEventListener("pageshow", count);   // back from a lesson (the page may come from the back/forward cache)
})();
