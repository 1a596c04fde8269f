/*
 * worker.js - the course's Python runtime, a classic Web Worker.
 *
 * Loads the self-hosted Pyodide 0.27.7 + numpy (bundled by sitegen/runtime.py, never a CDN), unpacks
 * experiments.zip and imports the `experiments` package. Paths are resolved against this file's own URL,
 * so the site works under any sub-path. Site layout (every folder named by its content's version or hash, so
 * browsers may cache these files forever):
 *     py/<hash>/worker.js          (this file, copied from site/static/js/ by the build)
 *     py/<hash>/experiments.zip
 *     pyodide/<PYODIDE_VERSION>/   (pyodide.js, pyodide.asm.*, python_stdlib.zip, pyodide-lock.json, numpy wheel)
 *
 * A page runs two of these (runtime-client.js): one answers the widgets' calls, the other (started as
 * worker.js#cells) runs the learner's code cells and is terminated when a run is stopped or takes too long.
 *
 * numpy: the cells' worker loads it before it says "ready" (learner code imports it freely). The widgets' worker
 * says "ready" once Python and the course's code are in, and loads numpy right after: nearly every entry point is
 * plain Python, and the few that import numpy are marked @uses("numpy") (experiments/widget.py), so only those
 * calls wait for it. On a phone's link numpy is a 3 MB download, so the widgets answer seconds sooner.
 *
 * Messages out:  {type: "status", state: "loading" | "ready" | "error", detail, timings?}
 *                {type: "packages", names, at, timings} | {type: "packages", names, error}   (the widgets' worker,
 *                  once its deferred packages have loaded or failed; at: performance.timeOrigin + now)
 *                {type: "progress", loaded}   (the widgets' worker, while loading: bytes of the runtime's files so far)
 *                {type: "trace", trace}   (the start-up trace, see below: at "ready", and again once numpy is in
 *                  and once the first call has been answered)
 * Requests in:   {id, fn: "experiments.api:name", args: [...]}
 *                  -> calls name(JSON.stringify(args)); the Python function returns a JSON string
 *                  -> {id, ok: true, result} | {id, ok: false, error: "<ExceptionType>: <message>"}
 *                {id, run: "<python source>"}   (the page's editable code cells)
 *                {id, run: "<python source>", models: true}   (an exercise's grading: the built-in models first)
 *                  -> {id, partial: true, stdout, stderr}*   (output so far, while it runs; see written())
 *                  -> {id, ok, stdout, stderr, error}   (error: the traceback text, null on success)
 *                {warm: [entry point names]}   (no reply: which modules to import ahead of the first call)
 * Requests that arrive before the runtime is ready are queued and answered in order (but a call that waits for a
 * package is answered once the package is in, after later calls that need none).
 *
 * A built-in model travels as its id, {"$model": alias}, in a call's args (experiments.widget.model_ref): the worker
 * fetches data/models.json once (the build writes it beside py/ and pyodide/) and hands it to Python
 * (experiments.api:use_models), which puts the config in the placeholder's place. A call that names a model waits
 * for that; the widgets' worker starts it once ready when its page has widgets (a {warm} list). So the page never
 * sends a built-in config, only a config the learner pasted.
 */
"use strict";

const PYODIDE_VERSION = "0.27.7";  // must be sitegen/runtime.py's PYODIDE_VERSION (the build checks)
const BASE = self.location.href;
const INDEX_URL = new URL("../../pyodide/" + PYODIDE_VERSION + "/", BASE).href;
const EXPERIMENTS_ZIP = new URL("experiments.zip", BASE).href;
const PY_DIR = "/course";  // where the experiments package is unpacked in Pyodide's file system
const CELLS = self.location.hash === "#cells";
const PACKAGES = ["numpy"];   // in the lock file; loaded before "ready" (cells) or right after it (widgets)
const MODELS_URL = new URL("../../data/models.json", BASE).href;   // the built-in models (build.py write_browser_models)

// Start-up: the course's own zip is requested once Pyodide's wasm has been instantiated (fetchExperiments, called
// from watchWasm's callback, before Python's own start-up begins on this thread; or, failing that, once
// loadPyodide is done). By then the wasm and the stdlib, the bulk of the bytes, are in or nearly, so on a slow
// link the zip does not share the bandwidth with what Python's start-up waits for; it arrives during that
// start-up (seconds on a phone) instead. Loading numpy (the cells' worker, before the zip is unpacked) and
// importing our code are both CPU work on this one thread, and overlapping them measured slower than one after the
// other. In the widgets' worker the modules the widgets call are imported right after "ready", one per task so that
// an early request is not held up long, while numpy downloads (deferPackages).
let experimentsZip = null;
function fetchExperiments() {
  if (!experimentsZip) {
    experimentsZip = fetch(EXPERIMENTS_ZIP).then((resp) => {
      if (!resp.ok) throw new Error("无法获取 " + EXPERIMENTS_ZIP + "（HTTP " + resp.status + "）");
      return resp.arrayBuffer();
    });
    experimentsZip.catch(() => {});  // reported by init() when it awaits it, never as an unhandled rejection
  }
  return experimentsZip;
}
// The start-up trace (for the bench, tests/bench.py; costs a few timestamps): phase -> [start, end] in ms on the
// clock every page shares (performance.timeOrigin + now). "worker": the worker created -> this script running (its
// own download); "fetch <file>": each runtime file's request -> its last byte (the browser's resource timing);
// "pyodide.js": its importScripts; "wasm": Pyodide's WebAssembly.instantiateStreaming (or instantiate) call ->
// the module compiled and instantiated (a streaming compile runs while the bytes arrive); "loadPyodide": the
// whole call (Python's own start-up is the part after "wasm" and after the stdlib's last byte); "unpack":
// experiments.zip into the file system; "import": `import experiments`; "ready"; "numpy": loadPackage (the widgets'
// worker: after ready); "first call": the first request received -> answered (its lazy imports included).
const trace = {};
const clock = () => performance.timeOrigin + performance.now();
trace.worker = [performance.timeOrigin, clock()];
const TRACED_FILES = /\/(pyodide\.js|pyodide\.asm\.js|pyodide\.asm\.wasm|python_stdlib\.zip|pyodide-lock\.json|experiments\.zip|[^/]+\.whl)$/;

function sendTrace() {
  for (const e of performance.getEntriesByType("resource")) {
    const m = TRACED_FILES.exec(new URL(e.name).pathname);
    if (m) trace["fetch " + m[1]] = [performance.timeOrigin + e.startTime, performance.timeOrigin + e.responseEnd];
  }
  self.postMessage({ type: "trace", trace: trace });
}

// Download progress, for the page's "waiting for Python" status (runtime-client.js): {type: "progress", loaded}, the
// bytes of the runtime's files (TRACED_FILES) that have arrived so far, decoded, at most every PROGRESS_MS until
// "ready". A fetched file is counted as its body arrives, from a clone of the response (the response itself goes on
// untouched: its URL keys the browser's compiled-wasm cache); a file loaded by importScripts (pyodide.js,
// pyodide.asm.js) counts once it is in (its resource timing entry). worker.js itself arrived before this runs.
const PROGRESS_MS = 250;
const arrived = new Map();   // URL -> bytes so far
let progressSent = 0, progressTimer = 0;
function progress(url, bytes) {
  if (state !== "loading" || !TRACED_FILES.test(new URL(url).pathname)) return;
  arrived.set(url, Math.max(arrived.get(url) || 0, bytes));
  if (progressTimer) return;
  progressTimer = setTimeout(() => {
    progressTimer = 0;
    if (state !== "loading") return;
    let loaded = 0;
    arrived.forEach((n) => { loaded += n; });
    if (loaded !== progressSent) self.postMessage({ type: "progress", loaded: loaded });
    progressSent = loaded;
  }, progressSent ? PROGRESS_MS : 0);
}
if (!CELLS) {
  const fetchOriginal = self.fetch;
  self.fetch = function () {
    return fetchOriginal.apply(self, arguments).then((resp) => {
      if (resp.ok && resp.body && state === "loading" && TRACED_FILES.test(new URL(resp.url).pathname)) {
        const reader = resp.clone().body.getReader();
        let n = 0;
        const pump = () => reader.read().then((r) => {
          if (r.done) return;
          n += r.value.byteLength;
          progress(resp.url, n);
          if (state === "loading") pump(); else reader.cancel().catch(() => {});
        }, () => {});
        pump();
      }
      return resp;
    });
  };
  if (typeof PerformanceObserver === "function") {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.decodedBodySize) progress(e.name, e.decodedBodySize);
    }).observe({ type: "resource", buffered: true });
  }
}

// Pyodide's one compile + instantiate of its wasm: WebAssembly's two entry points wrapped while loadPyodide runs
// (numpy's own modules, loaded later, go to the originals); once it is instantiated, instantiated(t) runs (t: when
// the call was made), before Pyodide's own continuation (registered after ours). Returns the function that puts
// them back.
function watchWasm(instantiated) {
  const originals = {};
  let done = false;
  for (const name of ["instantiateStreaming", "instantiate"]) {
    const f = WebAssembly[name];
    if (typeof f !== "function") continue;
    originals[name] = f;
    WebAssembly[name] = function () {
      const t = clock();
      const p = f.apply(WebAssembly, arguments);
      p.then(() => { if (!done) { done = true; instantiated(t); } }, () => {});
      return p;
    };
  }
  return () => Object.assign(WebAssembly, originals);
}

// A speed hint, not a contract: the page sends {warm: [entry point names its widgets call]} (the build lists them);
// once ready, experiments.api:warm_modules turns them into the modules they live in, imported one per task.
let warmCalls = [];

let pyodide = null;
let state = "loading";
let loadError = "";
const queue = [];          // requests received before ready
const modules = new Map(); // module name -> PyProxy of the imported module
let getattr = null;        // Python's builtin getattr: raises a real AttributeError naming a missing function
let packages = null;       // the widgets' worker: a Promise while PACKAGES load, or after they failed; null once in

function status(s, detail, extra) {
  state = s;
  self.postMessage(Object.assign({ type: "status", state: s, detail: detail }, extra || {}));
}

// stdout/stderr of user code: `write` handlers keep the exact bytes (a batched handler drops the
// newline, so "a\n" and "a" would look the same). Each `run` resets the buffers. The streams are ttys, so Python
// writes each line as it is printed, and during a run what was written is also sent on as {id, partial: true,
// stdout, stderr} (the new text): a run that is stopped or loops forever still shows what it printed. The first
// PARTIAL_FREE writes of a run are sent at once; after that at most every PARTIAL_MS, so a flood of prints cannot
// flood the page (only the last moments of a flood may be missing if it is then stopped). A run keeps at most
// OUTPUT_LIMIT characters; the rest is dropped and said so at the end.
let out = "", err = "";
const decOut = new TextDecoder(), decErr = new TextDecoder();
const OUTPUT_LIMIT = 100000, PARTIAL_MS = 100, PARTIAL_FREE = 50;
let running = null, sentOut = 0, sentErr = 0, lastPartial = 0, partials = 0, dropped = false;

function written(text, isErr) {
  if (out.length + err.length + text.length > OUTPUT_LIMIT) {
    text = text.slice(0, Math.max(0, OUTPUT_LIMIT - out.length - err.length));
    dropped = true;
  }
  if (isErr) err += text; else out += text;
  const now = performance.now();
  if (running === null || (out.length === sentOut && err.length === sentErr)) return;
  if (partials >= PARTIAL_FREE && now - lastPartial < PARTIAL_MS) return;
  lastPartial = now;
  partials++;
  self.postMessage({ id: running, partial: true, stdout: out.slice(sentOut), stderr: err.slice(sentErr) });
  sentOut = out.length; sentErr = err.length;
}

async function init() {
  const t0 = performance.now();
  const timings = {};
  status("loading", "下载 Python 运行时");
  let t = clock();
  importScripts(INDEX_URL + "pyodide.js");
  trace["pyodide.js"] = [t, clock()];
  t = clock();
  const unwatch = watchWasm((at) => {
    trace.wasm = [at, clock()];
    fetchExperiments();
  });
  try {
    pyodide = await loadPyodide({ indexURL: INDEX_URL });
  } finally {
    unwatch();
  }
  trace.loadPyodide = [t, clock()];
  timings.loadPyodide = Math.round(performance.now() - t0);

  if (CELLS) {
    status("loading", "加载 numpy");
    timings.numpy = await loadPackages();
  }

  status("loading", "加载课程代码");
  const t1 = performance.now();
  const zip = await fetchExperiments();
  t = clock();
  pyodide.unpackArchive(zip, "zip", { extractDir: PY_DIR });
  experimentsZip = Promise.resolve(null);   // (its bytes are in the file system now: not kept twice)
  trace.unpack = [t, clock()];
  const sys = pyodide.pyimport("sys"), path = sys.path;
  path.insert(0, PY_DIR);
  path.destroy(); sys.destroy();
  t = clock();
  modules.set("experiments", pyodide.pyimport("experiments"));
  trace.import = [t, clock()];
  getattr = pyodide.globals.get("getattr");
  timings.experiments = Math.round(performance.now() - t1);

  pyodide.setStdout({ isatty: true, write: (buf) => { written(decOut.decode(buf, { stream: true }), false); return buf.length; } });
  pyodide.setStderr({ isatty: true, write: (buf) => { written(decErr.decode(buf, { stream: true }), true); return buf.length; } });
  timings.total = Math.round(performance.now() - t0);
  status("ready", "Python " + pyodide.version + (CELLS ? " / numpy" : ""), { timings: timings });
  trace.ready = [trace.worker[0], clock()];
  sendTrace();
}

// PACKAGES, from Pyodide's lock file (which lists each wheel's file name and sha256; the wheel is fetched from
// INDEX_URL and checked): resolves to the milliseconds it took.
async function loadPackages() {
  const t = performance.now(), at = clock();
  await pyodide.loadPackage(PACKAGES, { messageCallback: () => {}, errorCallback: (m) => console.warn(m) });
  const missing = PACKAGES.filter((name) => !pyodide.loadedPackages[name]);
  if (missing.length) throw new Error(missing.join("、") + " 未能加载");
  trace.numpy = [at, clock()];
  releaseInstalled();
  return Math.round(performance.now() - t);
}

// What loading PACKAGES leaves in Pyodide's in-memory file system that nothing needs to read again (issue #49: the
// renderer's memory, the budget of tests/bench_runtime.py). Each dynamic library Pyodide has loaded (all of a
// package's, in loadPackage) is emptied: importing its module later still works, since the library is taken from
// those Pyodide keeps by path (Pyodide 0.27's LDSO.loadedLibsByName), but Python's extension loader
// (_imp.create_dynamic) first reads the whole file into Python's heap, the wasm memory, which never shrinks: numpy's
// core (2.6 MB) and linalg (1.9 MB) grew it by one step, 7 MB. The files Python never reads at run time (type stubs,
// C headers and sources, static libraries, Cython declarations) are removed. numpy: 7.1 MB of libraries and 1.1 MB
// of such files out of this worker's memory. An emptied library keeps its path, so Python's finder still finds its
// module. Measured: about 16 MB less renderer on C5 and C8 once trained (README, "Measured"); tests/test_worker.py
// checks numpy's modules still import and answer.
const NOT_READ = /\.(pyi|pxd|pyx|h|c|a)$/;
function releaseInstalled() {
  const FS = pyodide.FS, loaded = pyodide._module.LDSO.loadedLibsByName;
  const site = pyodide.runPython("import site; site.getsitepackages()[0]");
  (function walk(dir) {
    for (const name of FS.readdir(dir)) {
      if (name === "." || name === "..") continue;
      const path = dir + "/" + name, mode = FS.stat(path).mode;
      if (FS.isDir(mode)) walk(path);
      else if (loaded[path]) FS.truncate(path, 0);
      else if (NOT_READ.test(name)) FS.unlink(path);
    }
  })(site);
}

// The widgets' worker, once ready: load PACKAGES and say so (with when, on the clock every page shares:
// performance.timeOrigin + now), then import them in a task of their own, ahead of the first call that needs them.
function deferPackages() {
  packages = loadPackages();
  packages.then((ms) => {
    packages = null;
    self.postMessage({ type: "packages", names: PACKAGES, at: performance.timeOrigin + performance.now(),
                       timings: { numpy: ms } });
    sendTrace();
    setTimeout(() => PACKAGES.forEach(warmImport), 0);
  }, (e) => {
    self.postMessage({ type: "packages", names: PACKAGES, error: String((e && e.message) || e) });
  });
}

// What a call must wait for: the packages its function is marked with (experiments.widget.uses), while they load
// (or their failure, once they have failed).
function waitFor(f) {
  if (!packages) return null;
  const marked = getattr(f, "packages", null);
  if (!marked) return null;
  const names = typeof marked.toJs === "function" ? marked.toJs() : [];
  if (marked.destroy) marked.destroy();
  return names.length ? packages : null;
}

// Import one module a widget's first call needs, so that call does not pay for it; a module that does not exist
// or fails is skipped (its first call reports any problem).
function warmImport(name) {
  try {
    pyodide.pyimport(name).destroy();
  } catch (e) {
    // skipped: the first real call reports any problem with this module
  }
}

function warmUp(names) {
  if (!names.length || state !== "ready") return;
  warmImport(names[0]);
  setTimeout(() => warmUp(names.slice(1)), 0);
}

// "<ExceptionType>: <message>" from a Pyodide PythonError: its .type is the bare class name, its .message the
// whole traceback, whose last line names the class with its module for non-builtins ("tomllib.TOMLDecodeError: ...").
function pyErrorText(e) {
  if (!e || !e.type) return String(e && e.message ? e.message : e);
  const lines = String(e.message).trimEnd().split("\n");
  const head = new RegExp("^(?:[A-Za-z_][\\w]*\\.)*" + e.type + "(?=:|$)");
  for (let i = lines.length - 1; i >= 0; i--) {
    if (head.test(lines[i])) return [lines[i].replace(head, e.type)].concat(lines.slice(i + 1)).join("\n");
  }
  return e.type + ": " + lines[lines.length - 1];
}

function getModule(name) {
  if (!modules.has(name)) modules.set(name, pyodide.pyimport(name));
  return modules.get(name);
}

// {id, ok, result} | {id, ok: false, error} for a call, or a Promise of it: a call to a function marked with
// packages the widgets' worker is still loading waits for them (experiments.widget.uses); an unmarked call that
// fails only because an import was not there yet (ModuleNotFoundError) runs once more after they are in.
function callFunction(req) {
  const spec = String(req.fn);
  const colon = spec.indexOf(":");
  if (colon < 1) return { id: req.id, ok: false, error: "ValueError: fn must be 'module:function', got '" + spec + "'" };
  let f = null;
  try {
    f = getattr(getModule(spec.slice(0, colon)), spec.slice(colon + 1));
  } catch (e) {   // (an entry point's module is imported here: one that needs numpy waits for it, as below)
    const failed = { id: req.id, ok: false, error: pyErrorText(e) };
    if (packages && /^ModuleNotFoundError: /.test(failed.error)) return packages.then(() => callFunction(req), () => failed);
    return failed;
  }
  const done = (reply) => { if (f.destroy) f.destroy(); return reply; };
  const wait = waitFor(f);
  if (wait) {
    return wait.then(() => done(invoke(req, spec, f)),
      () => done({ id: req.id, ok: false, error: "RuntimeError: 这一项要用 " + PACKAGES.join("、") + "，但它未能加载。" }));
  }
  const reply = invoke(req, spec, f);
  if (!reply.ok && packages && /^ModuleNotFoundError: /.test(reply.error)) {
    return packages.then(() => done(invoke(req, spec, f)), () => done(reply));
  }
  return done(reply);
}

function invoke(req, spec, f) {
  try {
    const ret = f(JSON.stringify(req.args || []));
    if (typeof ret !== "string") {
      if (ret && ret.destroy) ret.destroy();
      return { id: req.id, ok: false, error: "TypeError: " + spec + " must return a JSON string" };
    }
    let result;
    try {
      result = JSON.parse(ret);
    } catch (e) {
      return { id: req.id, ok: false, error: "ValueError: " + spec + " returned invalid JSON (" + e.message + ")" };
    }
    return { id: req.id, ok: true, result: result };
  } catch (e) {
    return { id: req.id, ok: false, error: pyErrorText(e) };
  }
}

// PythonError.message is the formatted traceback; drop Pyodide's own frames (_pyodide/_base.py) above the
// learner's code so the traceback starts at the cell.
const CELL = "<cell>";
function userTraceback(tb) {
  const lines = tb.split("\n");
  const first = lines.findIndex((l) => l.startsWith('  File "' + CELL + '"'));
  if (first < 0) return tb;
  return "Traceback (most recent call last):\n" + lines.slice(first).join("\n");
}

function runSource(req) {
  out = ""; err = "";
  running = req.id; sentOut = sentErr = partials = 0; dropped = false;
  const globals = pyodide.globals.get("dict")();  // a fresh namespace for every run
  let ok = true, error = null;
  try {
    const ret = pyodide.runPython(String(req.run), { globals: globals, filename: CELL });
    if (ret && ret.destroy) ret.destroy();
  } catch (e) {
    ok = false;
    error = e && e.type ? userTraceback(String(e.message)) : String(e);
  } finally {
    globals.destroy();
  }
  running = null;
  const sys = pyodide.pyimport("sys");  // flush anything still buffered in sys.stdout / sys.stderr
  for (const name of ["stdout", "stderr"]) {
    const stream = sys[name];
    try { stream.flush(); } catch (e) { /* the cell replaced the stream with something odd: nothing to flush */ }
    if (stream && stream.destroy) stream.destroy();
  }
  sys.destroy();
  out += decOut.decode(); err += decErr.decode();  // and any incomplete UTF-8 tail
  if (dropped) out += "\n……（输出超过 " + OUTPUT_LIMIT.toLocaleString("en-US") + " 个字符，其余未显示）\n";
  return { id: req.id, ok: ok, stdout: out, stderr: err, error: error };
}

let firstCall = null;   // the first request received and when (the trace's "first call"), until it is answered

function answer(req, msg) {
  self.postMessage(msg);
  if (firstCall && firstCall.req === req) {
    trace["first call"] = [firstCall.at, clock()];
    firstCall = false;
    sendTrace();
  }
}

// The built-in models handed to Python once (experiments.api:use_models): a Promise, dropped again if it failed
// (a later call tries once more). The reason of a failure (an address, an HTTP status) is for the console.
let builtIn = null;
function builtInModels() {
  if (!builtIn) {
    builtIn = fetch(MODELS_URL).then((resp) => {
      if (!resp.ok) throw new Error(MODELS_URL + ": HTTP " + resp.status);
      return resp.text();
    }).then((text) => callFunction({ id: 0, fn: "experiments.api:use_models", args: [text] })).then((reply) => {
      if (!reply.ok) throw new Error(reply.error);
    });
    builtIn.catch((e) => { console.warn("built-in models:", e); builtIn = null; });
  }
  return builtIn;
}

function namesModel(req) {   // does the call name a built-in model by its id ({"$model": alias})?
  return JSON.stringify(req.args || []).includes('"$model"');
}

function handle(req) {
  if (state === "error") {
    const e = "RuntimeError: Python 运行时加载失败：" + loadError;
    answer(req, req.run !== undefined ? { id: req.id, ok: false, stdout: "", stderr: "", error: e } : { id: req.id, ok: false, error: e });
  } else if (req.run !== undefined) {   // (runs go to the cells' worker, which has its packages from "ready" on)
    // an exercise's grading run ({run, models: true}) reads the built-in models: hand them to Python first
    Promise.resolve(packages && packages.catch(() => {}))
      .then(() => req.models ? builtInModels().catch(() => {}) : null)
      .then(() => answer(req, runSource(req)));
  } else if (namesModel(req)) {
    builtInModels().then(() => callFunction(req),
      () => ({ id: req.id, ok: false, error: "RuntimeError: 课程内置模型的配置未能载入，请刷新页面再试" }))
      .then((msg) => answer(req, msg));
  } else {
    Promise.resolve(callFunction(req)).then((msg) => answer(req, msg));
  }
}

self.onmessage = (event) => {
  const req = event.data || {};
  if (Array.isArray(req.warm)) { warmCalls = req.warm; return; }
  if (firstCall === null) firstCall = { req: req, at: clock() };
  if (state === "loading") queue.push(req);
  else handle(req);
};

init().then(
  () => {
    if (!CELLS) deferPackages();
    while (queue.length) handle(queue.shift());
    setTimeout(() => {
      if (!warmCalls.length) return;
      builtInModels().catch(() => {});   // (a page with widgets: its first call naming a model need not wait)
      Promise.resolve(callFunction({ id: 0, fn: "experiments.api:warm_modules", args: [warmCalls] })).then((names) => {
        if (names.ok) warmUp(["experiments.api"].concat(names.result));
      });
    }, 0);
  },
  (e) => {
    loadError = e && e.message ? e.message : String(e);
    status("error", loadError);
    while (queue.length) handle(queue.shift());
  }
);
