/*
 * sw.js - the course's service worker (written by sitegen/offline.py at the site root; plain JS). After one visit to
 * any page it keeps one whole build of the course, every page and the whole Python runtime, so every page and every
 * widget and code cell work with no network.
 *
 * - Two caches per scope: "<scope> <VERSION>" holds one build's pages and other files whose URL does not name their
 *   content (VERSION is a hash of every file the build lists, so a changed sentence is a new VERSION and a new
 *   sw.js, which the browser finds on the next online visit); "<scope> runtime" holds the content-named files
 *   (pyodide/<version>/, py/<hash>/, make dist's v/<hash>/), whose bytes never change under their URL, so a new
 *   build fetches only what it changed. install fills both; a version is used only once complete (any failed file
 *   fails the install, its cache is dropped, and the previous version stays in charge, whole). Once complete, every
 *   other version's cache and every runtime file the new version does not list are deleted.
 * - Pages and everything not named by its content (data/, static/ in _site, the manifest) are network first: online,
 *   a learner always gets the current build (no stale course, however old the cache); offline, the cached copy.
 *   The content-named files are cache first: a repeat visit downloads none of the runtime.
 * - The whole course is fetched ahead (install) only on a fast connection: navigator.connection says 4g and no
 *   Save-Data (as the outline's prefetch, prefetch-runtime.js). Elsewhere (a slower link, Save-Data, a browser that
 *   does not say) only what the pages fetch anyway is kept, and the course is not announced as available offline,
 *   until the learner asks from the outline (offline.js posts {type: "keep-offline"}: the same fetch ahead, now).
 * - To the pages (offline.js): {type: "offline-status", offline, version} on request, once a version is ready, and
 *   after a "keep-offline" (with failed: true if it could not be completed).
 */
"use strict";

const VERSION = "@@VERSION@@";
const FILES = @@FILES@@;          // relative to this file's folder, the site root
const CONTENT_NAMED = /^(?:pyodide|py|v)\//;
const CACHE_PREFIX = "course ";
const SCOPE = self.registration.scope;
const CACHE = CACHE_PREFIX + SCOPE + " " + VERSION;
const RUNTIME = CACHE_PREFIX + SCOPE + " runtime";
const COMPLETE = new URL("__offline-complete__", SCOPE).href;   // present once every file is in
const PARALLEL = 4;
const LISTED = new Set(FILES.map((f) => new URL(f, SCOPE).href));

function fastConnection() {
  const conn = self.navigator.connection;
  return !!(conn && !conn.saveData && conn.effectiveType === "4g");
}

function relative(url) {
  return url.href.startsWith(SCOPE) ? url.href.slice(SCOPE.length).split(/[?#]/)[0] : null;
}

function cacheFor(rel) {
  return CONTENT_NAMED.test(rel) ? caches.open(RUNTIME) : versionCache();
}

async function precache(asked) {
  const cache = await caches.open(CACHE);
  const runtime = await caches.open(RUNTIME);
  if (!asked && !fastConnection()) return;
  const queue = FILES.slice();
  async function next() {
    while (queue.length) {
      const file = queue.shift();
      const url = new URL(file, SCOPE);
      const named = CONTENT_NAMED.test(file);
      if (named && await runtime.match(url)) continue;   // kept by an earlier version: the same bytes
      // content-named files may come from the HTTP cache (the visit that registered this just fetched them);
      // the others are revalidated, so the cache never holds an older build's copy
      const response = await fetch(url, { cache: named ? "default" : "no-cache", credentials: "same-origin" });
      if (!response.ok) throw new Error(file + ": HTTP " + response.status);
      await (named ? runtime : cache).put(url, response);
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, next));
  await cache.put(COMPLETE, new Response(VERSION));
  await cleanUp();
}

// Only this version is kept: every other version's cache, and every runtime file this version does not list, go.
// Done once this version is complete (and again on activate): a browser may keep the previous worker in charge a
// while longer (Chromium waits for its work in progress), and that worker then answers from this cache (below).
async function cleanUp() {
  const mine = CACHE_PREFIX + SCOPE + " ";
  for (const key of await caches.keys()) {
    if (key.startsWith(mine) && key !== CACHE && key !== RUNTIME) await caches.delete(key);
  }
  const runtime = await caches.open(RUNTIME);
  for (const request of await runtime.keys()) {
    if (!LISTED.has(request.url)) await runtime.delete(request);
  }
}

// This version's cache; if a newer version has replaced it (see cleanUp), that one: one whole build either way.
async function versionCache() {
  if (await caches.has(CACHE)) return caches.open(CACHE);
  const mine = CACHE_PREFIX + SCOPE + " ";
  for (const key of await caches.keys()) {
    if (key.startsWith(mine) && key !== RUNTIME) {
      const cache = await caches.open(key);
      if (await cache.match(COMPLETE)) return cache;
    }
  }
  return NO_CACHE;   // (never re-created here: a deleted version stays deleted)
}
const NO_CACHE = { match: async () => undefined, put: async () => undefined };

async function status() {
  const done = await (await versionCache()).match(COMPLETE);
  return { type: "offline-status", offline: !!done, version: done ? await done.text() : VERSION };
}

async function tell(clients) {
  const message = await status();
  for (const client of clients) client.postMessage(message);
}

self.addEventListener("install", (event) => {
  self.skipWaiting();
  // a version that cannot be kept whole is not kept at all: the previous one stays in charge, and its cache
  event.waitUntil(precache().catch(async (error) => {
    await caches.delete(CACHE);
    console.warn("course offline copy: " + error.message);
    throw error;
  }));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    if (await (await caches.open(CACHE)).match(COMPLETE)) await cleanUp();
    await self.clients.claim();
    await tell(await self.clients.matchAll({ includeUncontrolled: true }));
  })());
});

self.addEventListener("message", (event) => {
  const type = event.data && event.data.type;
  if (type === "offline-status" && event.source) event.waitUntil(tell([event.source]));
  if (type === "keep-offline") {   // the learner asked (the outline): fetch the whole course now, whatever the link
    event.waitUntil(precache(true).then(async () => tell(await self.clients.matchAll({ includeUncontrolled: true })),
      (error) => {
        console.warn("course offline copy: " + error.message);
        if (event.source) event.source.postMessage({ type: "offline-status", offline: false, failed: true });
      }));
  }
});

async function fromCache(request, rel) {
  const cache = await cacheFor(rel);
  const options = { ignoreSearch: true, ignoreVary: true };
  return (await cache.match(request, options))
    || (rel === "" || rel.endsWith("/") ? await cache.match(new URL(rel + "index.html", SCOPE), options) : undefined);
}

async function keep(request, response) {
  // a complete cache is one build, exactly: only what is named by its content, or (nothing fetched ahead: a slow
  // link, not asked) what the pages fetch anyway, is added afterwards
  if (!response.ok || response.type !== "basic") return;
  const rel = relative(new URL(request.url));
  if (CONTENT_NAMED.test(rel) || !(await (await versionCache()).match(COMPLETE))) {
    await (await cacheFor(rel)).put(request, response);
  }
}

const OFFLINE_PAGE = '<!doctype html><html lang="zh-CN"><head><meta charset="utf-8">'
  + '<meta name="viewport" content="width=device-width, initial-scale=1"><title>离线</title></head>'
  + "<body><p>现在没有网络，这一页也还没有存在本机上。联网后再打开一次，之后断网也能读。</p></body></html>";

async function networkFirst(event, rel) {
  try {
    const response = await fetch(event.request);
    if (response.ok && LISTED.has(new URL(rel, SCOPE).href)) event.waitUntil(keep(event.request, response.clone()));
    return response;
  } catch (error) {
    const cached = await fromCache(event.request, rel);
    if (cached) return cached;
    if (event.request.mode === "navigate") {
      return new Response(OFFLINE_PAGE, { status: 503, headers: { "Content-Type": "text/html; charset=utf-8" } });
    }
    throw error;
  }
}

async function cacheFirst(event, rel) {
  const cached = await fromCache(event.request, rel);
  if (cached) return cached;
  const response = await fetch(event.request);
  event.waitUntil(keep(event.request, response.clone()));
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || request.headers.has("range")) return;
  const rel = relative(new URL(request.url));
  if (rel === null || rel.startsWith("__")) return;   // another origin or path; the dev server's own files
  event.respondWith(CONTENT_NAMED.test(rel) ? cacheFirst(event, rel) : networkFirst(event, rel));
});
