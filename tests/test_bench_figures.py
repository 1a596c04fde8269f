"""The bench's own arithmetic (tests/bench.py), on made-up requests and summaries: the bytes and round trips before
"ready", the wire limit, and the targets it reports as met or not. (The bench's figures themselves are measured by
`make bench`, never asserted here.)"""
from __future__ import annotations

import pytest

from tests import bench


def requests(*items):
    reqs = bench.Requests.__new__(bench.Requests)
    reqs.items = [{"path": p, "phase": "load", "kind": "runtime", "prefetch": False, "sw": False, "external": False,
                   "encoded": n, "body": n, "bytes": n, "start": s, "end": e} for p, n, s, e in items]
    reqs.failed = []
    return reqs


def test_bytes_and_round_trips_before_ready_follow_the_chain_of_requests():
    origin = 1_000_000.0
    reqs = requests(("page.html", 10_000, origin + 0, origin + 100),          # 1
                    ("style.css", 2_000, origin + 110, origin + 200),         # 2 (after the page)
                    ("script.js", 3_000, origin + 120, origin + 300),         # 2 (in parallel with the css)
                    ("worker.js", 1_000, origin + 310, origin + 400),         # 3 (after the script)
                    ("pyodide.asm.wasm", 2_000_000, origin + 410, origin + 2_000),   # 4
                    ("late.json", 50_000, origin + 2_100, origin + 2_600))    # after ready: not counted
    nbytes, trips = reqs.before(origin, 2_050)
    assert (nbytes, trips) == (2_016_000, 4)
    assert reqs.before(origin, None) == (0, 0)


def test_the_wire_limit_is_the_bytes_at_the_rate_plus_the_round_trips_at_the_latency():
    phone = bench.PROFILES["phone"]
    assert bench.wire_limit_ms(phone, 2_500_000, 4) == pytest.approx(2_500_000 / 1.25e6 * 1000 + 4 * 150)
    assert bench.wire_limit_ms(bench.PROFILES["desktop"], 2_500_000, 4) is None


def row(**figures):
    base = {"lcp_ms": 500, "live_ms": 10_000, "cls": 0.0, "page_kb": 300, "transfer_kb": 5_000, "ready_kb": 5_000,
            "wire_limit_ms": 5_000, "served_runtime_max": 0, "sw_served": 1, "n": 1, "served_max": 0,
            "failed_max": 0, "not_ready": 0}
    return {**base, **figures}


def summary(first, cached, offline):
    return {"bare_pyodide_ms": {"first": 20_000, "cached": 20_000}, "reference_py_ms": 40.0,
            "pages": {"c4.html": {"first": first, "cached": cached, "offline": offline}},
            "first_interaction": {}, "widgets": {"c4.html ledger": {"first": {"recompute_ms_p95": 90.0},
                                                                    "cached": {"recompute_ms_p95": 70.0}}}}


def met(results, key):
    return [r["met"] for r in results if r["key"] == key]


def test_the_phone_targets_say_met_or_not_met():
    good = bench.check_targets(summary(row(live_ms=9_000), row(live_ms=4_000), row(live_ms=3_000)),
                               bench.PROFILES["phone"])   # 9,000 = the wire limit 5,000 + cached 4,000
    assert met(good, "ready_bytes") == [True] and met(good, "wire") == [True]
    assert met(good, "sw_repeat") == [True] and met(good, "offline") == [True]
    assert met(good, "recompute") == []                          # the phone's recompute is for information

    over = 6_000_000 / 1024 + 1                                  # one kB over 6 MB; live beyond wire + cached
    bad = bench.check_targets(summary(row(ready_kb=over, live_ms=9_001), row(live_ms=4_000, served_runtime_max=1),
                                      row(served_max=2, failed_max=1)), bench.PROFILES["phone"])
    assert met(bad, "ready_bytes") == [False] and met(bad, "wire") == [False]
    assert met(bad, "sw_repeat") == [False] and met(bad, "offline") == [False]


def test_the_recompute_target_is_relative_to_this_runs_reference_call():
    results = bench.check_targets(summary(row(), row(live_ms=4_000), row()), bench.PROFILES["desktop"])
    limit = bench.LIMITS["recompute_x_ref"] * 40.0
    assert [(r["value"], r["limit"], r["met"]) for r in results if r["key"] == "recompute"] == [
        (90.0, limit, 90.0 <= limit), (70.0, limit, 70.0 <= limit)]
    assert met(results, "ready_bytes") == [] and met(results, "wire") == []   # phone only
