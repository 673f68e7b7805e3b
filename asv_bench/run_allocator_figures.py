"""The allocator's figures as one markdown table, with ratios measured in one process.

    python asv_bench/run_allocator_figures.py          # about 100 s on 2 cores
    ALLOC_FIGURES_QUICK=1 python asv_bench/run_allocator_figures.py   # smoke test

The cases are those of ``benchmarks/bench_allocator.py`` (imported from there: the same
pools, fake upstream and trace).  Method of the peer anchors: every statement is compiled
into a ``for`` loop whose count doubles until one loop takes ``MIN_TIME``; the ``REPEAT``
loops of all cases of a section run round-robin, so a slow phase of a shared host hits
every case alike; GC is off while timing; a figure is the median over repeats, and a ratio
the median of the per-round ratios.  The random trace is one run per case and round, each
on a fresh pool (built outside the timed region), after one untimed warm-up trace.
"""
import contextlib
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_allocator import (CACHING, POOLS, SIZES, FakeUpstream,  # noqa: E402
                                        bench_alloc_free, crowded_pool, make_pool,
                                        overhead, random_trace, replay, replay_numpy,
                                        warm_pool)

QUICK = bool(os.environ.get("ALLOC_FIGURES_QUICK"))
REPEAT, MIN_TIME = (3, 0.005) if QUICK else (7, 0.2)
PAIRS_PER_CALL = 1000  # pairs per bench_alloc_free statement


def bench(cases, scope, repeat=None, min_time=None, pause=0.0):
    """{name: stmt} -> {name: [seconds per execution, one per round]}; the statements
    see the names in ``scope``.  Each statement is compiled into a loop whose count
    doubles until one loop takes ``min_time``; the ``repeat`` rounds run every case in
    turn (after ``pause`` seconds of sleep, for thread pools to go idle), GC off."""
    repeat = REPEAT if repeat is None else (3 if QUICK else repeat)
    min_time = MIN_TIME if min_time is None else (0.005 if QUICK else min_time)
    loops, n = {}, {}
    for name, stmt in cases.items():
        src = ("def _loop(_n, _clock=_clock):\n"
               "    _t0 = _clock()\n"
               "    for _ in range(_n):\n"
               f"        {stmt}\n"
               "    return _clock() - _t0\n")
        g = dict(scope, _clock=time.perf_counter)
        exec(src, g)
        loops[name] = g["_loop"]
        loops[name](1)
        n[name] = 1
        while loops[name](n[name]) < min_time:
            n[name] *= 2
    times = {name: [] for name in loops}
    with gc_off():
        for _ in range(repeat):
            for name, loop in loops.items():
                if pause and not QUICK:
                    time.sleep(pause)
                times[name].append(loop(n[name]) / n[name])
    return times


@contextlib.contextmanager
def gc_off():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def med(ts):
    return statistics.median(ts)


def ratio(a, b):
    return statistics.median(x / y for x, y in zip(a, b))


def ns(sec):
    return f"{sec * 1e9:,.0f}" if sec * 1e9 >= 100 else f"{sec * 1e9:.1f}"


def size_label(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB" if n >= 1 << 10 else f"{n} B"


ROWS = []       # (figure, case, {strategy: cell}, reference cell)
PROBLEMS = []   # statistics that contradict the operations (exit status 1)
NOTES = []      # observations that are not errors


def check(ok, msg):
    if not ok:
        PROBLEMS.append(msg)


def fx(r):
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.3f}x" if r >= 0.01 else f"{r:.4f}x"


def warm_hits():
    for nbytes in SIZES:
        pools = {k: warm_pool(k, nbytes) for k in POOLS}
        cases = {"numpy": "np.empty(n, np.float32)"}
        cases.update({k: f"{k}.alloc(nbytes)" for k in POOLS})
        t = bench(cases, {"np": np, "n": nbytes // 4, "nbytes": nbytes, **pools})
        ROWS.append(("warm hit from Python, ns per alloc+free (/ np.empty)", size_label(nbytes),
                     {k: f"{ns(med(t[k]))} ({fx(ratio(t[k], t['numpy']))})" for k in POOLS},
                     f"np.empty {ns(med(t['numpy']))}"))
        for k, pool in pools.items():
            s = pool.memory_stats()
            check(s["allocated_bytes.all.current"] == 0 and s["requested_bytes.all.current"] == 0,
                  f"warm hit {k} {nbytes}: allocated/requested bytes not back to 0")
            if k != "unpooled":
                check(s["num_cache_misses"] == 1, f"warm hit {k} {nbytes}: "
                      f"{s['num_cache_misses']} misses, expected 1 (every later alloc a hit)")


def c_level():
    for nbytes in SIZES:
        pools = {k: warm_pool(k, nbytes) for k in POOLS}
        scope = {"baf": bench_alloc_free, "nbytes": nbytes, "K": PAIRS_PER_CALL, **pools}
        t = bench({k: f"baf({k}, nbytes, K)" for k in POOLS}, scope)
        ROWS.append(("C-level pair (bench_alloc_free), ns", size_label(nbytes),
                     {k: ns(med(t[k]) / PAIRS_PER_CALL) for k in POOLS}, ""))


def crowded():
    cells = {}
    for k in CACHING:
        pools = {n: crowded_pool(k, n) for n in (100, 100_000)}
        scope = {"p100": pools[100][0], "p100k": pools[100_000][0]}
        t = bench({"100": "p100.alloc(256)", "100k": "p100k.alloc(256)"}, scope)
        cells[k] = (f"{fx(ratio(t['100k'], t['100']))} ({ns(med(t['100k']))} / "
                    f"{ns(med(t['100']))})")
        for n, (p, _) in pools.items():
            s = p.memory_stats()
            check(s["allocation.all.current"] == (0 if k != "bestfit" else n + 1),
                  f"crowded {k} {n}: {s['allocation.all.current']} blocks allocated")
    ROWS.append(("warm hit, 100,000 / 100 other cached blocks (ns / ns)", "256 B", cells, ""))


def trace():
    ops = random_trace()
    kinds = ["numpy", *POOLS]
    times = {k: [] for k in kinds}
    ratios = {k: [] for k in POOLS}
    for rnd in range(REPEAT + 1):  # round 0: untimed warm-up (NumPy's first trace faults)
        for k in kinds:
            pool = None if k == "numpy" else make_pool(k, FakeUpstream())
            if pool is not None:
                pool.reset_peak_stats()
            with gc_off():
                t0 = time.perf_counter()
                if pool is None:
                    replay_numpy(ops)
                else:
                    replay(ops, pool.alloc)
                t = time.perf_counter() - t0
            if rnd:
                times[k].append(t / len(ops))
            if pool is not None:
                s = pool.memory_stats()
                ratios[k].append(overhead(s))
                check(s["allocated_bytes.all.current"] == 0 and s["requested_bytes.all.current"] == 0,
                      f"trace {k}: allocated/requested bytes not back to 0 after freeing all")
                check(s["requested_bytes.all.peak"] <= 4 << 30,
                      f"trace {k}: requested peak {s['requested_bytes.all.peak']} over the cap")
            del pool
    case = f"{len(ops):,} ops"
    ROWS.append(("random trace (RMM), ns per op (/ np.empty)", case,
                 {k: f"{ns(med(times[k]))} ({fx(ratio(times[k], times['numpy']))})" for k in POOLS},
                 f"np.empty {ns(med(times['numpy']))}"))
    cells = {}
    for k in POOLS:
        lo, hi = min(ratios[k]), max(ratios[k])
        cells[k] = f"{med(ratios[k]):.3f}" + (f" ({lo:.3f}-{hi:.3f})" if hi > lo else "")
        if hi > lo:
            NOTES.append(f"{k}: the same trace on fresh pools gave different overheads "
                         f"({sorted(set(round(r, 4) for r in ratios[k]))})")
    check(set(ratios["unpooled"]) == {1.0}, f"trace unpooled: overhead {ratios['unpooled']} != 1")
    ROWS.append(("random trace, peak reserved / peak requested", case, cells, ""))


def table(rows):
    cols = ("figure", "case", *POOLS, "reference")
    cells = [list(cols)] + [[f, c, *(d.get(k, "") for k in POOLS), r] for f, c, d, r in rows]
    w = [max(len(r[i]) for r in cells) for i in range(len(cols))]
    line = lambda r: "| " + " | ".join(  # noqa: E731
        c.ljust(w[i]) if i < 2 else c.rjust(w[i]) for i, c in enumerate(r)) + " |"
    print(line(cells[0]))
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for r in cells[1:]:
        print(line(r))


def main():
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    print(f"## allocator figures: medians of {REPEAT} interleaved rounds"
          f"{' (QUICK: numbers meaningless)' if QUICK else ''}")
    print(f"python {platform.python_version()}  numpy {np.__version__}  "
          f"os.cpu_count {os.cpu_count()}  THP {thp.read_text().strip() if thp.exists() else '?'}")
    print()
    t0 = time.perf_counter()
    for section in (warm_hits, c_level, crowded, trace):
        section()
    table(ROWS)
    print(f"\n{time.perf_counter() - t0:.0f} s")
    for n in NOTES:
        print("NOTE:", n)
    for p in PROBLEMS:
        print("PROBLEM:", p)
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
