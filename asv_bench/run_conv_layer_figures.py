"""The convolutions of a ResNet-18 training step (``run_gluon_figures.py``'s: batch 16,
3x64x64 images) one layer shape at a time, beside PyTorch's CPU kernels, as one markdown
table: the forward (``Convolution``), the data gradient (``Deconvolution``, as the
gradient rule calls it) and the weight gradient (``_conv_weight_grad``).

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        PYTHONPATH=$PWD $HOME/peers/tvenv/bin/python asv_bench/run_conv_layer_figures.py

Both libraries on one thread, and the time of a call is the CPU time of the calling
thread (``time.thread_time``), the median of the rounds: on a shared machine that counts
the work, not the waits for a core.  A row's times are one call's times the number of
such layers in the network; ndrt's results are checked against PyTorch's first.  Needs
torch.
"""
import os
import statistics
import time

import numpy as np
import torch

from runtime import nd

BATCH = 16
ROUNDS = 3 if os.environ.get("ALLOC_FIGURES_QUICK") else 9
# (in channels, out channels, kernel, stride, pad, input size, layers of this shape)
LAYERS = [(3, 64, 7, 2, 3, 64, 1), (64, 64, 3, 1, 1, 16, 4), (64, 128, 3, 2, 1, 16, 1),
          (128, 128, 3, 1, 1, 8, 3), (64, 128, 1, 2, 0, 16, 1), (128, 256, 3, 2, 1, 8, 1),
          (256, 256, 3, 1, 1, 4, 3), (128, 256, 1, 2, 0, 8, 1), (256, 512, 3, 2, 1, 4, 1),
          (512, 512, 3, 1, 1, 2, 3), (256, 512, 1, 2, 0, 4, 1)]


def thread_ms(fn):
    fn()
    times = []
    for _ in range(ROUNDS):
        t = time.thread_time()
        fn()
        times.append(time.thread_time() - t)
    return statistics.median(times) * 1e3


def layer_calls(cin, cout, k, s, p, size):
    """{(pass, library): a call}: ndrt's three ops and PyTorch's, checked to agree."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, cin, size, size)).astype(np.float32)
    w = (rng.standard_normal((cout, cin, k, k)) * 0.1).astype(np.float32)
    geo = dict(kernel=(k, k), stride=(s, s), pad=(p, p))
    xa, wa = nd.array(x), nd.array(w)
    y = nd.Convolution(xa, wa, num_filter=cout, no_bias=True, **geo)
    g = nd.array(rng.standard_normal(y.shape).astype(np.float32))
    adj = tuple((size + 2 * p - k) % s for _ in range(2))
    ours = {"forward": lambda: nd.Convolution(xa, wa, num_filter=cout, no_bias=True, **geo),
            "data gradient": lambda: nd.Deconvolution(g, wa, num_filter=cin, adj=adj, **geo),
            "weight gradient": lambda: nd._conv_weight_grad(xa, g, **geo)}
    tx, tw, tg = (torch.from_numpy(a) for a in (x, w, g.asnumpy()))

    def back(mask):
        return torch.ops.aten.convolution_backward(tg, tx, tw, None, [s, s], [p, p], [1, 1],
                                                   False, [0, 0], 1, mask)
    theirs = {"forward": lambda: torch.nn.functional.conv2d(tx, tw, None, s, p),
              "data gradient": lambda: back([True, False, False])[0],
              "weight gradient": lambda: back([False, True, False])[1]}
    for name in ours:
        if cin == 3 and name == "data gradient":
            continue                        # the images take no gradient
        np.testing.assert_allclose(ours[name]().asnumpy(), theirs[name]().numpy(),
                                   rtol=1e-3, atol=1e-3)
    return ours, theirs


def main():
    torch.set_num_threads(1)
    print(f"numpy {np.__version__}; torch {torch.__version__}; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs\n")
    passes = ("forward", "data gradient", "weight gradient")
    print("| layer (x count) | " + " | ".join(f"{p}: ndrt / PyTorch" for p in passes) + " |")
    print("|---" * 4 + "|")
    totals = np.zeros((3, 2))
    for cin, cout, k, s, p, size, count in LAYERS:
        ours, theirs = layer_calls(cin, cout, k, s, p, size)
        cells = []
        for i, name in enumerate(passes):
            if cin == 3 and name == "data gradient":
                cells.append("-")
                continue
            t = np.array([thread_ms(ours[name]), thread_ms(theirs[name])]) * count
            totals[i] += t
            cells.append(f"{t[0]:.2f} / {t[1]:.2f} ms")
        print(f"| {cin} -> {cout}, {k}x{k} stride {s}, {size}x{size} (x{count}) | "
              + " | ".join(cells) + " |")
    print("| all | " + " | ".join(f"{a:.1f} / {b:.1f} ms ({a / b:.2f}x)" for a, b in totals)
          + " |")
    print(f"\nsum: ndrt {totals[:, 0].sum():.1f} ms, PyTorch {totals[:, 1].sum():.1f} ms "
          f"({totals[:, 0].sum() / totals[:, 1].sum():.2f}x); load average after "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
