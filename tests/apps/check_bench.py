#!/usr/bin/env python3
"""Checks that gpk-bench times every row of a case as often as it was asked to.

usage: check_bench.py APP JSON

  APP --backend host --quick --op gemm,reduce --variant all,auto --repeat 7 --json JSON
  must exit 0. Each turn runs a case's variants (here the host backend's and "auto") in
  an order of its own (apps/bench/harness.cpp): every row that ran must still have 7
  timed calls, a minimum no larger than its median, and the JSON must say how the calls
  were ordered.
"""

import json
import sys

from app_check import expect, run

REPEAT = 7


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    app, path = sys.argv[1:]
    command = [app, "--backend", "host", "--quick", "--op", "gemm,reduce", "--variant", "all,auto", "--repeat", str(REPEAT), "--json", path]
    run(command)
    with open(path) as f:
        doc = json.load(f)
    expect(doc.get("order") == "shuffled turns", 'the JSON says "order": "shuffled turns"')
    expect(doc.get("repeat") == REPEAT, f"the JSON says repeat {REPEAT}")
    rows = [r for r in doc.get("results", []) if r.get("status") == "ok"]
    cases = {}
    for r in rows:
        cases.setdefault((r["op"], r["dtype"], r.get("m"), r.get("n"), r.get("k")), []).append(r)
    expect(len(cases) >= 2 and all(len(v) >= 2 for v in cases.values()),
           f"{len(cases)} cases, each with at least two rows that ran")
    bad = [f"{r['op']} {r['dtype']} {r['variant']}: {r.get('repeats')}" for r in rows if r.get("repeats") != REPEAT]
    expect(not bad, f"every row timed {REPEAT} calls" + (f" (not: {', '.join(bad)})" if bad else ""))
    expect(all(0 < r["min_ms"] <= r["median_ms"] for r in rows), "every row's minimum is positive and at most its median")


if __name__ == "__main__":
    main()
