"""The autograd figures, measured in one process against NumPy (and PyTorch beside, when
it imports), as one markdown table.

    python asv_bench/run_autograd_figures.py        # about a minute on 2 cores
    ALLOC_FIGURES_QUICK=1 python asv_bench/run_autograd_figures.py   # smoke test

The cases are those of ``benchmarks/bench_autograd.py`` (imported from there: the same
models and NumPy references).  Method of the peer anchors (shared/bench/peers/), with the
one timer of ``run_allocator_figures.py``: each statement is compiled into a loop whose
count doubles until one loop takes the minimum time, the rounds of all cases of a figure
run interleaved, GC off; a time is the median over rounds and a ratio the median of the
per-round ratios.

1. Recording a 1-element ``a + b`` (``a.attach_grad()``, inside ``autograd.record()``)
   against NumPy's ``p + q``; the same add outside ``record()`` is the eager fast path.
2. Backward per node: ``y = x``; ``CHAIN`` times ``y = y + c``; ``y.backward()``; per round
   (forward+backward - forward) / CHAIN, divided by that round's NumPy 1-element add;
   the same for ``CHAIN`` nested 1-element ``tanh`` against one ``np.tanh``.
3. An SGD step of an MLP 784-256-256-10 against a handwritten NumPy step, with
   FullyConnected, the fused softmax_cross_entropy and sgd_update, and with plain nd ops
   (``nd.dot(x, W) + b``, ``nd.relu``, ``-nd.pick(nd.log_softmax(z), y, axis=1).mean()``,
   ``p -= lr * p.grad``); before timing, one step of ndrt (and of PyTorch) from the same
   weights and data must give the NumPy step's updated weights.  Steady state: upstream
   (new) pool allocations per step, and the pool calls of the last backward.  Beside the
   plain step, the NumPy step's 8 matrix products alone on arrays of their shapes, timed
   in the same rounds: the floor of any step that makes NumPy's BLAS calls (ndrt's
   products run on MKL where it is installed: the header prints ``_blas.blas_note()``).
4. Peak pool bytes over forward+backward of 50 nested tanh on 16 MiB arrays, in arrays
   above x and its attached x.grad (50 saved outputs + one gradient buffer = 51 at the
   least); NumPy by hand (x, then 50 outputs and the gradient) traced with tracemalloc;
   PyTorch as growth of VmHWM in a child process (x.grad made by backward, so counted).

``_check_numpy_reference()`` runs first: the NumPy MLP gradient against float64 central
differences.  ``autograd.last_backward_stats()`` of the tanh chain and of the MLP steps
are printed after the table.
"""
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from runtime import _blas, autograd, nd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks.bench_autograd import (CHAIN, DEPTH, LR, TANH_N, UNIT,  # noqa: E402
                                       mlp_data, ndrt_chain, ndrt_mlp, ndrt_mlp_plain,
                                       ndrt_tanh_chain, ndrt_tanh_peak, numpy_grads,
                                       numpy_step, numpy_tanh_peak, operands,
                                       upstream_allocs)
from run_allocator_figures import QUICK, bench  # noqa: E402  (one timer for every figure)

try:
    import torch
except ImportError:
    torch = None

NOTES = []   # printed after the table


def line(*cells):
    print("| " + " | ".join(cells) + " |")
    sys.stdout.flush()


def unit(t):
    return f"{t * 1e9:,.0f} ns" if t < 1e-5 else f"{t * 1e3:.3f} ms"


def paired(times, ours, ref):
    return statistics.median(a / b for a, b in zip(times[ours], times[ref]))


def row(label, times, ours, ref, target, theirs=None):
    """One timed figure: medians, ratios paired per round; PyTorch in the last column."""
    peer = "-"
    if theirs is not None and theirs in times:
        peer = f"{unit(statistics.median(times[theirs]))} ({paired(times, theirs, ref):.2f}x)"
    line(label, unit(statistics.median(times[ours])), unit(statistics.median(times[ref])),
         f"{paired(times, ours, ref):.2f}x", target, peer)


# -- the NumPy reference, checked against finite differences -------------------------------

def _check_numpy_reference():
    """numpy_grads against float64 central differences of its loss along random unit
    directions: one per parameter and one through all of them; and numpy_step = P - LR g."""
    X, Y, P = mlp_data(8, seed=1, dtype=np.float64)
    rng = np.random.default_rng(2)
    P = [p + 0.1 * rng.standard_normal(p.shape) if p.ndim == 1 else p for p in P]
    loss, G = numpy_grads(P, X, Y)
    eps = 1e-6
    for k in [*range(len(P)), None]:
        V = [rng.standard_normal(p.shape) if k in (None, i) else np.zeros_like(p)
             for i, p in enumerate(P)]
        norm = np.sqrt(sum((v * v).sum() for v in V))
        V = [v / norm for v in V]
        lp = numpy_grads([p + eps * v for p, v in zip(P, V)], X, Y)[0]
        lm = numpy_grads([p - eps * v for p, v in zip(P, V)], X, Y)[0]
        fd = (lp - lm) / (2 * eps)
        an = sum((g * v).sum() for g, v in zip(G, V))
        assert abs(fd - an) <= 1e-7 + 1e-5 * abs(an), \
            f"numpy reference: gradient along direction {k}: {an!r} != finite difference {fd!r}"
    Q = [p.copy() for p in P]
    numpy_step(Q, X, Y)
    for q, p, g in zip(Q, P, G):
        np.testing.assert_allclose(q, p - LR * g, rtol=1e-12, atol=0)


def _check_same_update(name, P0, ref, ours):
    """The updated weights agree with NumPy's, and so do the updates themselves (a wrong
    gradient of a tiny update would hide in the weights' tolerance)."""
    for i, (p0, r, o) in enumerate(zip(P0, ref, ours)):
        assert np.allclose(o, r, rtol=1e-5, atol=1e-6), f"{name}: parameter {i} differs"
        d_ref, d = r - p0, o - p0
        err = np.abs(d - d_ref).max() / np.abs(d_ref).max()
        assert err < 1e-3, f"{name}: update of parameter {i} differs (rel err {err:.1e})"


def numpy_products(P0, X, Y):
    """A function making the 8 matrix products of ``numpy_step`` (3 forward, 5 backward:
    no data gradient of the first layer) on arrays of their shapes and dtype, and nothing
    else."""
    _, b1, _, b2, _, b3 = P0
    W1, W2, W3 = P0[0], P0[2], P0[4]
    a1 = np.maximum(X @ W1.T + b1, 0)
    a2 = np.maximum(a1 @ W2.T + b2, 0)
    g3 = a2 @ W3.T + b3
    g2 = np.ones_like(a2)

    def products():
        X @ W1.T, a1 @ W2.T, a2 @ W3.T
        g3.T @ a2, g3 @ W3, g2.T @ a1, g2 @ W2, g2.T @ X
    return products


# -- PyTorch, when it imports --------------------------------------------------------------

def torch_mlp(P0, X, Y):
    """(step, params) as ndrt_mlp: F.linear with (out, in) weights, F.cross_entropy
    (mean), p.add_(p.grad, alpha=-LR) under no_grad, gradients set to None."""
    F = torch.nn.functional
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y.astype(np.int64))
    P = [torch.from_numpy(p.copy()).requires_grad_() for p in P0]
    W1, b1, W2, b2, W3, b3 = P

    def step():
        h = torch.relu(F.linear(Xt, W1, b1))
        h = torch.relu(F.linear(h, W2, b2))
        F.cross_entropy(F.linear(h, W3, b3), Yt).backward()
        with torch.no_grad():
            for p in P:
                p.add_(p.grad, alpha=-LR)
                p.grad = None
    return step, P


def torch_chain(a, c):
    x, ct = torch.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(c.copy())

    def fwd():
        y = x
        for _ in range(CHAIN):
            y = y + ct
        return y
    return fwd, torch.ones_like(x)


TORCH_TANH = r"""
import sys, torch
N, DEPTH = int(sys.argv[1]), int(sys.argv[2])
def status(field):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(field + ":"))
torch.tanh(torch.ones(8, requires_grad=True)).sum().backward()
x = torch.randn(N).requires_grad_()
base = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")                               # VmHWM := VmRSS
y = x
for _ in range(DEPTH):
    y = torch.tanh(y)
y.sum().backward()                             # the peers' form (52 in the issue)
print(status("VmHWM") - base)
"""


def torch_tanh_peak():
    p = subprocess.run([sys.executable, "-c", TORCH_TANH, str(TANH_N), str(DEPTH)],
                       capture_output=True, text=True)
    if p.returncode:
        NOTES.append(f"PyTorch tanh chain failed: {p.stderr.strip().splitlines()[-1:]}")
        return None
    return int(p.stdout.split()[-1]) / UNIT


# -- the figures ---------------------------------------------------------------------------

def record_add():
    p, q = operands(1)
    u, v = nd.array(p), nd.array(q)
    a, b = nd.array(p), nd.array(q)
    a.attach_grad()
    env = dict(p=p, q=q, u=u, v=v, a=a, b=b)
    t = bench({"np": "p + q", "nd_plain": "u + v", "nd": "a + b"}, env)
    row("eager a + b, 1 elem, nothing attached / NumPy", t, "nd_plain", "np", "<= 1.0x")
    row("eager a + b, 1 elem, a attached, not recording / NumPy", t, "nd", "np", "<= 1.0x")
    cases = {"np": "p + q", "nd": "a + b"}
    if torch is not None:
        env.update(ta=torch.from_numpy(p.copy()).requires_grad_(), tb=torch.from_numpy(q.copy()))
        cases["torch"] = "ta + tb"
    with autograd.record():
        t = bench(cases, env)
    row("recording a + b, 1 elem, a attached / NumPy", t, "nd", "np", "<= 2.5x", "torch")


def backward_chain():
    p, q = operands(1)
    env = dict(p=p, q=q, fwd=ndrt_chain(p, q))
    cases = {"np": "p + q", "nd_f": "fwd()", "nd_fb": "fwd().backward()"}
    if torch is not None:
        env["tfwd"], env["seed"] = torch_chain(p, q)
        cases.update(t_f="tfwd()", t_fb="tfwd().backward(seed)")
    t = bench(cases, env)
    for k in ("nd", "t"):
        if k + "_f" in t:
            t[k + "_fwd"] = [f / CHAIN for f in t[k + "_f"]]
            t[k + "_bwd"] = [(fb - f) / CHAIN for f, fb in zip(t[k + "_f"], t[k + "_fb"])]
    row(f"chain of {CHAIN} adds, 1 elem: forward (recording) per node / NumPy add", t,
        "nd_fwd", "np", "-", "t_fwd")
    row(f"chain of {CHAIN} adds, 1 elem: backward per node / NumPy add", t,
        "nd_bwd", "np", "<= 3x", "t_bwd")


def tanh_chain():
    p = operands(1)[0]
    env = dict(p=p, np=np, fwd=ndrt_tanh_chain(p))
    cases = {"np": "np.tanh(p)", "nd_f": "fwd()", "nd_fb": "fwd().backward()"}
    if torch is not None:
        x = torch.from_numpy(p.copy()).requires_grad_()

        def tfwd():
            y = x
            for _ in range(CHAIN):
                y = torch.tanh(y)
            return y
        env["tfwd"], env["seed"] = tfwd, torch.ones_like(x)
        cases.update(t_f="tfwd()", t_fb="tfwd().backward(seed)")
    t = bench(cases, env)
    for k in ("nd", "t"):
        if k + "_f" in t:
            t[k + "_bwd"] = [(fb - f) / CHAIN for f, fb in zip(t[k + "_f"], t[k + "_fb"])]
    row(f"chain of {CHAIN} tanh, 1 elem: backward per node / np.tanh", t, "nd_bwd", "np",
        "<= 3x", "t_bwd")
    NOTES.append(f"last_backward_stats() tanh chain: {autograd.last_backward_stats()}")


def mlp_step(batch, target, form="fused"):
    X, Y, P0 = mlp_data(batch)
    ref = [p.copy() for p in P0]
    numpy_step(ref, X, Y)
    step, P = (ndrt_mlp if form == "fused" else ndrt_mlp_plain)(P0, X, Y)
    step()
    got = [p.asnumpy() for p in P]
    if form == "plain":
        got = [g.T for g in got]
    _check_same_update(f"ndrt MLP ({form}) batch {batch}", P0, ref, got)
    NOTES.append(f"last_backward_stats() MLP ({form}) batch {batch}, first step: "
                 f"{autograd.last_backward_stats()}")
    env = dict(numpy_step=numpy_step, P=[p.copy() for p in P0], X=X, Y=Y, step=step)
    cases = {"np": "numpy_step(P, X, Y)", "nd": "step()"}
    if torch is not None:
        tstep, TP = torch_mlp(P0, X, Y)
        tstep()
        _check_same_update(f"torch MLP batch {batch}", P0, ref, [p.detach().numpy() for p in TP])
        env["tstep"] = tstep
        cases["torch"] = "tstep()"
    if form == "plain":
        env["products"] = numpy_products(P0, X, Y)
        cases["gemm"] = "products()"
    t = bench(cases, env, repeat=7, min_time=0.3, pause=0.2)
    what = ("FullyConnected + fused loss + sgd_update" if form == "fused" else
            "plain nd ops")
    row(f"MLP 784-256-256-10 SGD step ({what}), batch {batch} / NumPy by hand", t, "nd",
        "np", f"<= {target:.2f}x", "torch")
    if form == "plain":
        row(f"the NumPy step's 8 matrix products alone, batch {batch} / NumPy step (the "
            "floor of any step making NumPy's BLAS calls)", t, "gemm", "np", "-")
    allocs, misses = upstream_allocs(step)
    calls = autograd.last_backward_stats()["pool_calls"]
    line(f"MLP ({form}) batch {batch}, steady state: upstream allocations per step; pool "
         "calls in backward", f"{allocs:g} ({misses:g} cache misses); {calls}", "-", "-",
         "0; 0", "-")
    NOTES.append(f"last_backward_stats() MLP ({form}) batch {batch}, steady state: "
                 f"{autograd.last_backward_stats()}")


def tanh_memory():
    ref = numpy_tanh_peak()
    base, fwd, peak, stats = ndrt_tanh_peak()
    peer = "-"
    if torch is not None:
        tp = torch_tanh_peak()
        peer = "-" if tp is None else f"{tp:.2f} (VmHWM)"
    line(f"tanh chain {DEPTH} deep, 16 MiB arrays: peak fwd+bwd in arrays (after fwd)",
         f"{peak:.2f} ({fwd:.2f})", f"{ref:.2f} (NumPy by hand)", f"{peak / ref:.2f}x",
         f"<= {DEPTH + 1}", peer)
    NOTES.append(f"tanh chain: baseline {base:.2f} arrays (x and x.grad: 2 expected); "
                 f"last_backward_stats(): {stats}")


def main():
    _check_numpy_reference()
    print(f"## autograd figures: medians of interleaved rounds, paired ratios"
          f"{' (QUICK: numbers meaningless)' if QUICK else ''}")
    print(f"numpy {np.__version__}"
          + (f"  torch {torch.__version__} threads={torch.get_num_threads()}" if torch else
             "  (torch not importable: no PyTorch column)"))
    print(f"ndrt's products: {_blas.blas_note()}")
    print()
    line("figure", "ndrt", "reference", "ratio", "target", "pytorch (ratio)")
    line(*["---"] * 6)
    record_add()
    backward_chain()
    tanh_chain()
    mlp_step(64, 1.00, "fused")
    mlp_step(64, 1.10, "plain")
    mlp_step(1024, 0.90, "plain")
    tanh_memory()
    print()
    for n in NOTES:
        print(n)


if __name__ == "__main__":
    main()
