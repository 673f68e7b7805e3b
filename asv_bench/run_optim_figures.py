"""The optimizer-update figures, measured in one process against NumPy, as
one markdown table.

    python asv_bench/run_optim_figures.py              # about a minute on 2 cores
    ALLOC_FIGURES_QUICK=1 python asv_bench/run_optim_figures.py   # smoke test

The cases are those of ``benchmarks/bench_optim.py`` (imported from there: the same data
and NumPy references); before timing, one update of each case from the same state must
give NumPy's weights and states.  Timer: ``run_allocator_figures.bench`` (loops doubled
to a minimum time, rounds of ndrt and NumPy interleaved, GC off); a time is the median
over rounds and a ratio the median of the per-round ratios (below 1: ndrt is faster).
"""
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_optim import (OPS, DenseUpdate, RowSparseLazyUpdate,  # noqa: E402
                                    _data)
from run_allocator_figures import bench  # noqa: E402  (one timer for every figure)


def unit(t):
    return f"{t * 1e6:,.1f} us"


def _check(case, op):
    """One update of ndrt and of NumPy from the same state agree."""
    a, b = case(), case()
    a.setup(op, "ndrt")
    b.setup(op, "numpy")        # setup ran one update each, from equal starts
    np.testing.assert_allclose(np.asarray(a.w), b.w, rtol=2e-5, atol=1e-6,
                               err_msg=f"{case.__name__} {op}")
    for s, r in zip(a.states, b.states):
        np.testing.assert_allclose(np.asarray(s), r, rtol=2e-5, atol=1e-6)


def main():
    print("| update | ndrt | NumPy | ratio |")
    print("|---|---|---|---|")
    for case in (DenseUpdate, RowSparseLazyUpdate):
        for op in OPS:
            _check(case, op)
            impls = {}
            for impl in ("ndrt", "numpy"):
                c = case()
                c.setup(op, impl)
                impls[impl] = c
            times = bench({"ndrt": "a.run()", "numpy": "b.run()"},
                          {"a": impls["ndrt"], "b": impls["numpy"]})
            ratio = statistics.median(x / y for x, y in zip(times["ndrt"], times["numpy"]))
            kind = "dense 1024x1024" if case is DenseUpdate else \
                "row_sparse lazy 4096 of 200000x16"
            print(f"| {op} ({kind}) | {unit(statistics.median(times['ndrt']))} | "
                  f"{unit(statistics.median(times['numpy']))} | {ratio:.2f}x |")
            sys.stdout.flush()
    _data.cache_clear()


if __name__ == "__main__":
    main()
