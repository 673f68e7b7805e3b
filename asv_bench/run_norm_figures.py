"""BatchNorm's figures, measured in one process against a handwritten NumPy
BatchNorm (and PyTorch's ``batch_norm`` beside, when torch imports), as one markdown
table.

    python asv_bench/run_norm_figures.py        # about a minute on 2 cores
    ALLOC_FIGURES_QUICK=1 python asv_bench/run_norm_figures.py   # smoke test

Runs with ndrt alone; to put PyTorch beside it, run it with an interpreter that has torch
(e.g. ``$HOME/peers/tvenv/bin/python`` with ``PYTHONPATH`` set to this tree).

The cases are those of ``benchmarks/bench_norm.py`` (imported from there): BatchNorm in
training, float32, on (32, 64, 56, 56) (a ResNet stage) and a small tensor, forward and
forward + backward (data, gamma and beta gradients).  Target: at most 1.5x PyTorch's
time.  Before timing, ndrt's output and gradients (and PyTorch's) must match the NumPy
reference, which is itself checked against the definition in float64.  The timer is
``run_allocator_figures.bench``: each statement in a loop whose count doubles until one
loop takes the minimum time, the rounds of all cases run interleaved, GC off; a time is
the median over rounds, a ratio the median of the per-round ratios.
"""
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_norm import EPS, SHAPES, bn_data, ndrt_bn, numpy_bn  # noqa: E402
from run_allocator_figures import QUICK, bench  # noqa: E402  (one timer for every figure)

try:
    import torch
except ImportError:
    torch = None


def line(*cells):
    print("| " + " | ".join(cells) + " |")
    sys.stdout.flush()


def ms(t):
    return f"{t * 1e3:.2f} ms"


def paired(times, ours, ref):
    return statistics.median(a / b for a, b in zip(times[ours], times[ref]))


def _check_reference():
    """numpy_bn in float64 against the definition: y by its formula, the gradients by
    central differences along a random direction."""
    x, gamma, beta, head = (a.astype(np.float64) for a in bn_data((4, 3, 2, 2), 1))
    axes = (0, 2, 3)
    y, dx, dgamma, dbeta = numpy_bn(x, gamma, beta, head)
    want = ((x - x.mean(axis=axes, keepdims=True))
            / np.sqrt(x.var(axis=axes, keepdims=True) + EPS) * gamma.reshape(1, -1, 1, 1)
            + beta.reshape(1, -1, 1, 1))
    np.testing.assert_allclose(y, want, rtol=1e-12)
    rng = np.random.default_rng(2)
    for i, g in enumerate((dx, dgamma, dbeta)):
        args = [x, gamma, beta]
        d = rng.standard_normal(args[i].shape)
        plus, minus = list(args), list(args)
        plus[i], minus[i] = args[i] + 1e-6 * d, args[i] - 1e-6 * d
        numeric = np.sum((numpy_bn(*plus) - numpy_bn(*minus)) * head) / 2e-6
        assert np.isclose(np.sum(g * d), numeric, rtol=1e-6), ("numpy_bn gradient", i)


def torch_bn(x, gamma, beta, head):
    F = torch.nn.functional
    xt = torch.from_numpy(x.copy()).requires_grad_()
    gt = torch.from_numpy(gamma.copy()).requires_grad_()
    bt = torch.from_numpy(beta.copy()).requires_grad_()
    rm, rv = torch.zeros(x.shape[1]), torch.ones(x.shape[1])
    ht = torch.from_numpy(head)

    def forward():
        return F.batch_norm(xt, rm, rv, gt, bt, training=True, momentum=0.1, eps=EPS)

    def forward_backward():
        xt.grad = gt.grad = bt.grad = None
        forward().backward(ht)

    return forward, forward_backward, (xt, gt, bt)


def _check_same(shape, name, y, grads, want):
    np.testing.assert_allclose(y, want[0], rtol=1e-3, atol=1e-4,
                               err_msg=f"{name} {shape}: output")
    for i, (g, w) in enumerate(zip(grads, want[1:])):
        scale = max(float(np.abs(w).max()), 1.0)
        np.testing.assert_allclose(g / scale, w / scale, rtol=1e-3, atol=1e-3,
                                   err_msg=f"{name} {shape}: gradient {i}")


def main():
    _check_reference()
    print(f"NumPy {np.__version__}" + (f", PyTorch {torch.__version__} ({torch.get_num_threads()}"
                                        " threads)" if torch is not None else
                                        ", PyTorch not importable"))
    print()
    line("case", "ndrt", "NumPy by hand", "ndrt / NumPy", "PyTorch (ndrt / PyTorch)", "target")
    line(*["---"] * 6)
    names = ["resnet"] if not QUICK else ["small"]
    if not QUICK:
        names.append("small")
    for name in names:
        shape = SHAPES[name]
        x, gamma, beta, head = bn_data(shape)
        want = numpy_bn(x, gamma, beta, head)
        fwd, fwd_bwd, arrays = ndrt_bn(x, gamma, beta, head)
        fwd_bwd()
        _check_same(shape, "ndrt", fwd().asnumpy(), [a.grad.asnumpy() for a in arrays[:3]],
                    want)
        env = {"fwd": fwd, "fwd_bwd": fwd_bwd, "numpy_bn": numpy_bn, "x": x, "gamma": gamma,
               "beta": beta, "head": head}
        cases = {"fwd": "fwd()", "np_fwd": "numpy_bn(x, gamma, beta)",
                 "fwd_bwd": "fwd_bwd()", "np_fwd_bwd": "numpy_bn(x, gamma, beta, head)"}
        if torch is not None:
            tf, tfb, targs = torch_bn(x, gamma, beta, head)
            tfb()
            _check_same(shape, "PyTorch", tf().detach().numpy(),
                        [a.grad.numpy() for a in targs], want)
            env.update(tf=tf, tfb=tfb)
            cases.update(torch_fwd="tf()", torch_fwd_bwd="tfb()")
        times = bench(cases, env, repeat=5, min_time=0.3)
        for what, ours, ref, peer in (("forward", "fwd", "np_fwd", "torch_fwd"),
                                      ("forward + backward", "fwd_bwd", "np_fwd_bwd",
                                       "torch_fwd_bwd")):
            theirs = "-"
            if peer in times:
                theirs = (f"{ms(statistics.median(times[peer]))} "
                          f"({paired(times, ours, peer):.2f}x)")
            line(f"BatchNorm {what}, {shape} float32", ms(statistics.median(times[ours])),
                 ms(statistics.median(times[ref])), f"{paired(times, ours, ref):.2f}x",
                 theirs, "<= 1.5x PyTorch")


if __name__ == "__main__":
    main()
