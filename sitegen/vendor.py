"""Third-party browser files the site ships from its own origin: Plotly's basic bundle (bar + scatter).

plotly.js-basic-dist-min@4.1.1 is fetched with `npm pack` (like Pyodide, see sitegen/runtime.py), checked
against a pinned sha256 and cached in .cache/runtime/. The bundle injects CSS through <style> elements, which the
site's strict Content-Security-Policy forbids; it skips that when elements with known ids already exist (its
global rules: id "plotly.js-style-global" with class "no-inline-styles"; maplibre's rules: a hash id). The build
extracts those rules into static/vendor/plotly.css and lists the ids in static/vendor/plotly-boot.json;
charts.js creates the placeholder elements and links the CSS before it loads the bundle.
"""
from __future__ import annotations

import hashlib
import json
import re
import tempfile
from pathlib import Path

from .runtime import DEFAULT_CACHE_DIR, RuntimeFetchError, npm_pack_read

PLOTLY_SPEC = "plotly.js-basic-dist-min@4.1.1"
PLOTLY_FILE = "plotly-basic.min.js"
PLOTLY_SHA256 = "99784e3abfb07b142a15e521a439e6d9addceadb3f79553fd24c72774f0649ba"
_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)":(?:"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\')')
_INJECTED = re.compile(r'if\(!document\.getElementById\("([0-9a-f]{64})"\)\)\{var e=document\.createElement\("style"\);'
                       r'e\.id="\1",e\.textContent=\'((?:[^\'\\]|\\.)*)\'')


def ensure_plotly(cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """The cached, verified bundle; fetched with npm on first use."""
    path = Path(cache_dir) / PLOTLY_SPEC.replace("@", "-") / PLOTLY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            data = npm_pack_read(PLOTLY_SPEC, (PLOTLY_FILE,), Path(tmp))[PLOTLY_FILE]
        check(data, PLOTLY_SPEC)
        path.with_name(path.name + ".part").write_bytes(data)
        path.with_name(path.name + ".part").replace(path)
    check(path.read_bytes(), str(path))
    return path


def check(data: bytes, origin: str) -> None:
    got = hashlib.sha256(data).hexdigest()
    if got != PLOTLY_SHA256:
        raise RuntimeFetchError(f"{origin}: {PLOTLY_FILE} has sha256 {got}, expected the pinned {PLOTLY_SHA256}; "
                                f"delete the cache folder and run the build again")


def extract_css(bundle: str) -> tuple[str, list[str]]:
    """(CSS text, ids of the injected-style guards) from the bundle's built-in style rules."""
    start = bundle.find('{"X,X div"')
    if start < 0:
        raise RuntimeFetchError(f"{PLOTLY_FILE}: could not find plotly's global CSS rules")
    rules = []
    for m in _PAIR.finditer(bundle[start + 1:bundle.find("}", start)]):
        selector = m.group(1).replace("X", ".js-plotly-plot .plotly").replace("Y", ".plotly-notifier")
        rules.append(f"{selector}{{{m.group(2) if m.group(2) is not None else m.group(3)}}}")
    injected = _INJECTED.findall(bundle)
    css = "/* extracted from plotly.js by sitegen/vendor.py */\n" + "\n".join(rules) + "\n"
    css += "".join(text.replace("\\'", "'") + "\n" for _, text in injected)
    return css, [guard for guard, _ in injected]


def install_vendor(dest: Path, cache_dir: Path = DEFAULT_CACHE_DIR) -> None:
    """static/vendor/plotly.min.js, plotly.css and plotly-boot.json into the site being built."""
    vendor = dest / "static" / "vendor"
    vendor.mkdir(parents=True, exist_ok=True)
    bundle = ensure_plotly(cache_dir).read_bytes()
    css, guards = extract_css(bundle.decode("utf-8"))
    (vendor / "plotly.min.js").write_bytes(bundle)
    (vendor / "plotly.css").write_text(css, encoding="utf-8")
    (vendor / "plotly-boot.json").write_text(json.dumps({"css": "plotly.css", "guards": guards}), encoding="utf-8")
