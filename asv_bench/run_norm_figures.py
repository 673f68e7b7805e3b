"""BatchNorm's figures, measured in one process against a handwritten NumPy
BatchNorm (and PyTorch's ``batch_norm`` beside, when torch imports), as one markdown
table; then, with torch, the normalisation-side operators of the ResNet-18 training step
of ``run_gluon_figures.py`` (batch 16, 3x64x64) on that step's shapes against PyTorch's.

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

The ResNet-18 table: BatchNorm (training, fix_gamma=False) on each of the step's five
activation shapes, max pooling 3x3 stride 2 pad 1 on (16, 64, 32, 32) and relu
(Activation) on the two largest shapes, each recorded forward ("fwd": the tape kept, as
in the step) and recorded forward + backward; "bwd" is the difference of the two medians
(its ratio the median of the per-round differences' ratios).  The "per step" rows add
the BatchNorm cases weighted by how many layers of the step have their shape (20 in
all).  ndrt's outputs and data gradients are checked against PyTorch's first.  On a
machine that other work shares, PyTorch's two-thread times swing by 10x from run to run
(its threads wait for each other); ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1`` gives
both libraries one thread and figures that repeat.
"""
import os
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


# (shape, layers of ResNet-18 with it) for the step's 3x64x64 images, batch 16
RESNET_BN = [((16, 64, 32, 32), 1), ((16, 64, 16, 16), 4), ((16, 128, 8, 8), 5),
             ((16, 256, 4, 4), 5), ((16, 512, 2, 2), 5)]
RESNET_POOL = (16, 64, 32, 32)
RESNET_RELU = [(16, 64, 32, 32), (16, 64, 16, 16)]


def _layer_cases():
    """{name: (ndrt fwd, ndrt fwd+bwd, torch fwd, torch fwd+bwd, label)}, outputs and
    data gradients checked against PyTorch's."""
    from runtime import autograd, nd
    tF = torch.nn.functional
    cases = {}
    rng = np.random.default_rng(0)

    def pair(label, shape, ours, theirs, params=()):
        x = rng.standard_normal(shape, dtype=np.float32)
        h = rng.standard_normal(ours(nd.array(x)).shape, dtype=np.float32)
        xa, ha = nd.array(x), nd.array(h)
        xa.attach_grad()
        xt, ht = torch.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(h)

        def o_fwd():
            with autograd.record():
                return ours(xa)

        def o_fb():
            with autograd.record():
                y = ours(xa)
            y.backward(ha)

        def t_fb():
            xt.grad = None
            for p in params:
                p.grad = None
            theirs(xt).backward(ht)

        o_fb()
        t_fb()
        np.testing.assert_allclose(o_fwd().asnumpy(), theirs(xt).detach().numpy(),
                                   rtol=1e-4, atol=1e-4, err_msg=label)
        np.testing.assert_allclose(xa.grad.asnumpy(), xt.grad.numpy(), rtol=1e-3, atol=1e-3,
                                   err_msg=label)
        cases[label] = (o_fwd, o_fb, lambda: theirs(xt), t_fb)

    for shape, _ in RESNET_BN:
        c = shape[1]
        gamma = rng.uniform(0.5, 1.5, c).astype(np.float32)
        beta = rng.uniform(-0.5, 0.5, c).astype(np.float32)
        ps = [nd.array(gamma), nd.array(beta)]
        for a in ps:
            a.attach_grad()
        mm, mv = nd.zeros((c,)), nd.ones((c,))
        gt = torch.from_numpy(gamma.copy()).requires_grad_()
        bt = torch.from_numpy(beta.copy()).requires_grad_()
        rm, rv = torch.zeros(c), torch.ones(c)
        pair(f"BatchNorm {shape}", shape,
             lambda x, ps=ps, mm=mm, mv=mv: nd.BatchNorm(x, *ps, mm, mv, eps=1e-5,
                                                         fix_gamma=False),
             lambda x, gt=gt, bt=bt, rm=rm, rv=rv: tF.batch_norm(x, rm, rv, gt, bt,
                                                                 training=True, eps=1e-5),
             (gt, bt))
    pair(f"max Pooling 3x3 s2 p1 {RESNET_POOL}", RESNET_POOL,
         lambda x: nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),
         lambda x: tF.max_pool2d(x, 3, 2, 1))
    for shape in RESNET_RELU:
        pair(f"relu {shape}", shape, lambda x: nd.Activation(x, act_type="relu"), torch.relu)
    return cases


def resnet_layers():
    """The ResNet-18 step's BatchNorm, max pooling and relu against PyTorch's."""
    cases = _layer_cases()
    stmts, env = {}, {}
    for i, (o_fwd, o_fb, t_fwd, t_fb) in enumerate(cases.values()):
        for kind, fn in (("of", o_fwd), ("ob", o_fb), ("tf", t_fwd), ("tb", t_fb)):
            env[f"{kind}{i}"] = fn
            stmts[f"{kind}{i}"] = f"{kind}{i}()"
    times = bench(stmts, env, repeat=7 if not QUICK else 3, min_time=0.1)
    med = {k: statistics.median(v) for k, v in times.items()}
    back = {k: [b - f for b, f in zip(times[f"{k[0]}b{k[2:]}"], times[f"{k[0]}f{k[2:]}"])]
            for k in times if k[1] == "f"}
    print()
    line("ResNet-18 step operator", "ndrt fwd", "PyTorch fwd", "ratio", "ndrt bwd",
         "PyTorch bwd", "ratio")
    line(*["---"] * 7)
    for i, label in enumerate(cases):
        line(label, ms(med[f"of{i}"]), ms(med[f"tf{i}"]),
             f"{paired(times, f'of{i}', f'tf{i}'):.2f}x",
             ms(med[f"ob{i}"] - med[f"of{i}"]), ms(med[f"tb{i}"] - med[f"tf{i}"]),
             f"{statistics.median(a / b for a, b in zip(back[f'of{i}'], back[f'tf{i}'])):.2f}x")
    count = [n for _, n in RESNET_BN]
    rounds = range(len(times["of0"]))

    def total(kind, rnd):
        """A round's BatchNorm time of the step: forward ('of', 'tf') or backward ('ob',
        'tb': forward + backward less forward), weighted by the layers of each shape."""
        t = 0.0
        for i, n in enumerate(count):
            t += n * times[f"{kind}{i}"][rnd]
            if kind[1] == "b":
                t -= n * times[f"{kind[0]}f{i}"][rnd]
        return t

    for what, ours, theirs in (("forward", "of", "tf"), ("backward", "ob", "tb")):
        o = [total(ours, r) for r in rounds]
        t = [total(theirs, r) for r in rounds]
        cells = [ms(statistics.median(o)), ms(statistics.median(t)),
                 f"{statistics.median(a / b for a, b in zip(o, t)):.2f}x"]
        blank = ["", "", ""]
        line(f"BatchNorm {what}, per step (20 layers)",
             *(cells + blank if what == "forward" else blank + cells))


if __name__ == "__main__":
    main()
    if torch is not None:
        resnet_layers()
    print(f"\nload average: {os.getloadavg()[0]:.2f}")
