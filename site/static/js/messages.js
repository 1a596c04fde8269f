/*
 * messages.js - the one way a script writes a message a learner reads: window.courseMessages.msg(key, values) is
 * the text of `key` in the course's message table (data/messages_zh.json) with each {name} replaced by
 * values[name]. The build puts the table (window.courseMessageTable) and this file at the head of every page's
 * script file (sitegen/messages.py, sitegen/scripts.py), before runtime-client.js, so every part and the deferred
 * popover.js can use it; widgets.js re-exports msg as courseWidgets.msg.
 *
 * Scripts hold no Chinese string literal (tests/test_messages.py) and a key the table lacks fails the build at
 * the script's file and line (sitegen/jscheck.py), so an unknown key here is a script the build did not check:
 * it is logged and shows nothing.
 */
(function () {
  "use strict";
  const table = window.courseMessageTable || {};

  function msg(key, values) {
    const text = table[key];
    if (text === undefined) {
      console.warn("message: no key " + key);
      return "";
    }
    if (!values) return text;
    return text.replace(/\{(\w+)\}/g, (all, name) => (name in values ? String(values[name]) : all));
  }

  window.courseMessages = { msg: msg };
})();
