"""The graph-mode figures, measured in one process against their references, as one
markdown table.

    python asv_bench/run_graph_figures.py        # about a minute on 2 cores
    ALLOC_FIGURES_QUICK=1 python asv_bench/run_graph_figures.py   # smoke test

The cases are those of ``benchmarks/bench_graph.py`` (the same models and references):

1. A training step of the hybridized MLP 784-256-256-10 (``hybridize(static_alloc=True,
   static_shape=True)``, SoftmaxCrossEntropyLoss, SGD Trainer) against the handwritten
   NumPy step, batch 64 and 1024, and against ndrt's imperative step of the same MLP
   (``bench_autograd.ndrt_mlp``), and the pool calls of one steady-state step (the
   pools' counters: 1, the imperative loss's output); ``check_same_update`` runs first.
   Beside them, the NumPy step's 8 matrix products alone, timed in the same rounds
   (``run_autograd_figures.numpy_products``): the floor of any step that makes NumPy's
   BLAS calls (ndrt's products run on MKL where it is installed: the first line printed
   is ``_blas.blas_note()``).
2. Forward of a hybridized block of 50 one-element tanh against 50 ``np.tanh`` calls.
3. Inference through ``SymbolBlock.imports`` of MXNet's exported CNN against the same
   model's imperative forward (seven ``nd`` calls).

PyTorch is not in this table: the figures compare graph mode with NumPy and with ndrt's
own imperative path.  Timer: ``run_allocator_figures.bench`` (interleaved rounds, GC off,
0.2 s pause before each timed loop); a time is the median over rounds, a ratio the median
of the per-round ratios.
"""
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_autograd import mlp_data, ndrt_mlp, numpy_step  # noqa: E402
from benchmarks.bench_graph import (TanhChain, check_same_update, hybrid_mlp,  # noqa: E402
                                    imperative_cnn, imported_cnn, numpy_chain,
                                    step_pool_calls)
from run_allocator_figures import bench  # noqa: E402
from run_autograd_figures import line, numpy_products, paired  # noqa: E402

from runtime import _blas, nd  # noqa: E402

PAUSE = 0.2


def us(t):
    return f"{t * 1e6:.1f} us"


def main():
    check_same_update()
    print(f"ndrt's products: {_blas.blas_note()}")
    line("figure", "ndrt", "reference", "ratio", "target")
    line("---", "---", "---", "---", "---")
    for batch, target in ((64, "<= 0.90x"), (1024, "<= 0.95x")):
        X, Y, P0 = mlp_data(batch)
        step, _ = hybrid_mlp(P0, X, Y)
        imperative, _ = ndrt_mlp(P0, X, Y)
        P = [p.copy() for p in P0]
        step()
        imperative()
        t = bench({"nd": "step()", "np": "numpy_step(P, X, Y)", "imp": "imperative()",
                   "gemm": "products()"},
                  {"step": step, "numpy_step": numpy_step, "P": P, "X": X, "Y": Y,
                   "imperative": imperative, "products": numpy_products(P0, X, Y)},
                  pause=PAUSE)
        line(f"hybridized MLP step, batch {batch} / NumPy step",
             us(statistics.median(t["nd"])), us(statistics.median(t["np"])),
             f"{paired(t, 'nd', 'np'):.2f}x", target)
        line(f"the NumPy step's 8 matrix products alone, batch {batch} / NumPy step (the "
             "floor of any step making NumPy's BLAS calls)", us(statistics.median(t["gemm"])),
             us(statistics.median(t["np"])), f"{paired(t, 'gemm', 'np'):.2f}x", "-")
        line(f"hybridized MLP step, batch {batch} / ndrt's imperative step",
             us(statistics.median(t["nd"])), us(statistics.median(t["imp"])),
             f"{paired(t, 'nd', 'imp'):.2f}x", "-")
        line(f"hybridized MLP step, batch {batch}: pool calls per steady-state step",
             str(step_pool_calls(step)), "-", "-", "1 (the loss's output)")
    block = TanhChain()
    block.hybridize()
    x, p = nd.array([0.5]), np.array([0.5], np.float32)
    block(x)
    t = bench({"nd": "block(x)", "np": "numpy_chain(p)"},
              {"block": block, "x": x, "p": p, "numpy_chain": numpy_chain}, pause=PAUSE)
    line("hybridized 50 x tanh, 1 element / 50 np.tanh", us(statistics.median(t["nd"])),
         us(statistics.median(t["np"])), f"{paired(t, 'nd', 'np'):.2f}x", "<= 1.2x")
    cnn, x = imported_cnn()
    imperative = imperative_cnn(cnn)
    cnn(x)
    t = bench({"nd": "cnn(x)", "ref": "imperative(x)"},
              {"cnn": cnn, "imperative": imperative, "x": x}, pause=PAUSE)
    line("SymbolBlock.imports CNN inference / imperative", us(statistics.median(t["nd"])),
         us(statistics.median(t["ref"])), f"{paired(t, 'nd', 'ref'):.2f}x", "<= 1.05x")


if __name__ == "__main__":
    main()
