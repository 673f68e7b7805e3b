"""The CNN figures, measured in one process beside PyTorch's CPU operators
(when torch imports), as one markdown table.

    PYTHONPATH=. python asv_bench/run_cnn_figures.py          # a few minutes on 2 cores
    ALLOC_FIGURES_QUICK=1 PYTHONPATH=. python asv_bench/run_cnn_figures.py   # smoke test

The layer is that of ``benchmarks/bench_conv.py`` (imported from there): a ResNet-style
3x3 convolution, 64 -> 64 channels, 56x56, batch 32, float32, forward and forward +
backward (data, weight and bias gradients); Pooling of the same tensor (max 3x3 stride 2
pad 1, avg 2x2 stride 2) forward and forward + backward; BatchNorm of the same tensor when
the registry has it (another area's operator; its training forward and forward +
backward are in ``run_norm_figures.py``).  Targets (2 cores): convolution at
most 2x PyTorch's time, Pooling and BatchNorm at most 1.5x.

Method of ``run_allocator_figures.py`` (its timer): the rounds of all implementations of
a case run interleaved, GC off; a time is the median over rounds and a ratio the median of
the per-round ratios.  Before timing, ndrt's results are checked: against PyTorch's when
it imports, else against a NumPy reference (an einsum over sliding windows for the
convolution, a reshape for the pooling) on a slice of the batch.
"""
import statistics
import sys
from pathlib import Path

import numpy as np

from runtime import nd
from runtime.ops import registry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_conv import (BATCH, CHANNELS, POOLS, SIZE, layer_data,  # noqa: E402
                                   make_layer, torch)
from run_allocator_figures import QUICK, bench  # noqa: E402  (one timer for every figure)

TARGETS = {"conv": 2.0, "pool": 1.5, "batchnorm": 1.5}


def line(*cells):
    print("| " + " | ".join(cells) + " |")
    sys.stdout.flush()


def ms(t):
    return f"{t * 1e3:.1f} ms"


def numpy_conv(x, w, b):
    """3x3 pad 1 convolution by an einsum over sliding windows (the reference)."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    return np.einsum("nchwij,fcij->nfhw", win, w, optimize=True) + b[:, None, None]


def check(layers):
    """ndrt's forward and gradients against PyTorch (or NumPy on 2 samples)."""
    ours = layers["ndrt"]
    y = ours.conv().asnumpy()
    dx, dw, db = (a.asnumpy() for a in ours.conv_backward())
    if "torch" in layers:
        ref = layers["torch"]
        np.testing.assert_allclose(y, ref.conv().numpy(), rtol=1e-3, atol=1e-3)
        for a, r in zip((dx, dw, db), ref.conv_backward()):
            np.testing.assert_allclose(a, r.numpy(), rtol=1e-3, atol=1e-2)
        for kind in POOLS:
            np.testing.assert_allclose(ours.pool(kind).asnumpy(), ref.pool(kind).numpy(),
                                       rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(ours.pool_backward(kind).asnumpy(),
                                       ref.pool_backward(kind).numpy(), rtol=1e-6, atol=1e-6)
        return "PyTorch"
    x, w, b, g = layer_data()
    np.testing.assert_allclose(y[:2], numpy_conv(x[:2], w, b), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(db, g.sum(axis=(0, 2, 3)), rtol=1e-3, atol=1e-2)
    avg = x.reshape(BATCH, CHANNELS, SIZE // 2, 2, SIZE // 2, 2).mean(axis=(3, 5))
    np.testing.assert_allclose(ours.pool("avg").asnumpy(), avg, rtol=1e-5, atol=1e-6)
    return "NumPy"


def figure(name, stmts, layers, target):
    times = bench({impl: stmt for impl, stmt in stmts.items() if impl in layers},
                  {"layers": layers}, repeat=5, min_time=0.3)
    ours = statistics.median(times["ndrt"])
    if "torch" in times:
        theirs = statistics.median(times["torch"])
        ratio = statistics.median(a / b for a, b in zip(times["ndrt"], times["torch"]))
        verdict = "met" if ratio <= target else "MISSED"
        line(name, ms(ours), ms(theirs), f"{ratio:.2f}x", f"<= {target}x: {verdict}")
    else:
        line(name, ms(ours), "(no torch)", "-", f"<= {target}x")


def main():
    layers = {"ndrt": make_layer("ndrt")}
    if torch is not None:
        torch.set_num_threads(2)
        layers["torch"] = make_layer("torch")
    checked = check(layers)
    print(f"ndrt results checked against {checked}; torch "
          f"{getattr(torch, '__version__', 'not installed')}, NumPy {np.__version__}\n")
    line("case (batch 32, 64 ch, 56x56, float32)", "ndrt", "PyTorch CPU", "ratio", "target")
    line(*["---"] * 5)
    both = lambda s: {"ndrt": f"layers['ndrt'].{s}", "torch": f"layers['torch'].{s}"}  # noqa
    figure("Convolution 3x3 pad 1, forward", both("conv()"), layers, TARGETS["conv"])
    figure("Convolution 3x3 pad 1, forward + backward", both("conv_backward()"), layers,
           TARGETS["conv"])
    for kind in POOLS:
        p = POOLS[kind]
        label = f"Pooling {kind} {p['kernel'][0]}x{p['kernel'][1]} stride {p['stride'][0]}"
        figure(f"{label}, forward", both(f"pool({kind!r})"), layers, TARGETS["pool"])
        figure(f"{label}, forward + backward", both(f"pool_backward({kind!r})"), layers,
               TARGETS["pool"])
    if "BatchNorm" in registry.OPS:
        batchnorm(layers)
    else:
        print("\nBatchNorm: not in the registry of this tree (another area's operator).")


def batchnorm(layers):
    x = layers["ndrt"].x
    c = x.shape[1]
    gamma, beta = nd.ones((c,)), nd.zeros((c,))
    mean, var = nd.zeros((c,)), nd.ones((c,))
    scope = {"nd": nd, "x": x, "gamma": gamma, "beta": beta, "mean": mean, "var": var}
    stmts = {"ndrt": "nd.BatchNorm(x, gamma, beta, mean, var)"}
    if "torch" in layers:
        scope.update(torch=torch, tx=layers["torch"].x.detach(), tg=torch.ones(c),
                     tb=torch.zeros(c), tm=torch.zeros(c), tv=torch.ones(c))
        stmts["torch"] = ("torch.nn.functional.batch_norm(tx, tm, tv, tg, tb, "
                          "training=False)")
    times = bench(stmts, scope, repeat=5, min_time=0.3)
    ours = statistics.median(times["ndrt"])
    if "torch" in times:
        ratio = statistics.median(a / b for a, b in zip(times["ndrt"], times["torch"]))
        verdict = "met" if ratio <= TARGETS["batchnorm"] else "MISSED"
        line("BatchNorm (inference), forward", ms(ours), ms(statistics.median(times["torch"])),
             f"{ratio:.2f}x", f"<= {TARGETS['batchnorm']}x: {verdict}")
    else:
        line("BatchNorm (inference), forward", ms(ours), "(no torch)", "-",
             f"<= {TARGETS['batchnorm']}x")


if __name__ == "__main__":
    if QUICK:
        print("(quick: 3 rounds of short loops)")
    main()
