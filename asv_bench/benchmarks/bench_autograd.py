"""Autograd: recording cost, backward cost per node, an MLP training step and the peak
memory of a deep chain -- each beside the NumPy work it is compared with, so that the
ratio shows in one run.

The models and the NumPy references live here and are imported by
``asv_bench/run_autograd_figures.py``, which measures the same cases with ratios paired
per round (and PyTorch beside when it imports):

* ``RecordAdd``: a 1-element ``a + b`` with ``a.attach_grad()``, recording or not.
* ``BackwardChain``: ``y = x``, ``CHAIN`` times ``y = y + c``, then ``y.backward()``;
  backward per node = (time_forward_backward - time_forward) / CHAIN, against one NumPy
  add (time_chain_numpy / CHAIN).
* ``TanhChain``: ``CHAIN`` nested 1-element ``tanh`` recorded then differentiated;
  backward per node against one NumPy ``np.tanh`` call.
* ``MLPStep``: forward, backward and SGD update of an MLP 784-256-256-10 (ReLU, softmax
  cross-entropy averaged over the batch, float32) against a handwritten NumPy step, in
  two forms: ``FullyConnected``, the fused ``softmax_cross_entropy`` and ``sgd_update``
  (``fused``), and plain ``nd`` ops as a user writes them (``plain``: ``nd.dot(x, W) +
  b``, ``nd.relu``, ``-nd.pick(nd.log_softmax(z), y, axis=1).mean()``, ``p -= lr *
  p.grad``).
* ``TanhChainMemory``: peak pool bytes over forward+backward of 50 nested ``tanh`` on
  16 MiB arrays, in arrays (minimum 51); NumPy by hand, measured with tracemalloc.
"""
import gc
import tracemalloc

import numpy as np

import allocator
from runtime import autograd, nd

LAYERS = (784, 256, 256, 10)
LR = 0.01
CHAIN = 100                  # adds in the backward chain
DEPTH = 50                   # tanh layers of the memory chain
TANH_N = 4 << 20             # elements of one chain array: 16 MiB of float32
UNIT = TANH_N * 4            # bytes of one chain array


def operands(n, seed=0):
    """Two float32 arrays of ``n`` values in [0.5, 1.5) (chains stay finite)."""
    rng = np.random.default_rng(seed)
    return [(rng.random(n, dtype=np.float32) + 0.5) for _ in range(2)]


# -- MLP: data, the NumPy reference, ndrt's step -----------------------------------------

def mlp_data(batch, seed=0, dtype=np.float32):
    """(X, Y, P0): inputs (batch, 784), labels (batch,) int64, and the parameters
    [W1, b1, W2, b2, W3, b3] with W of shape (out, in) (FullyConnected's layout), He
    initialisation, zero biases."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((batch, LAYERS[0])).astype(dtype)
    Y = rng.integers(0, LAYERS[-1], batch)
    P = []
    for i, o in zip(LAYERS[:-1], LAYERS[1:]):
        P += [(rng.standard_normal((o, i)) * np.sqrt(2 / i)).astype(dtype), np.zeros(o, dtype)]
    return X, Y, P


def numpy_grads(P, X, Y):
    """(loss, [dW1, db1, dW2, db2, dW3, db3]) of the mean softmax cross-entropy, by hand.

    The peers' reference (shared/bench/peers/mlp_step.py) with W stored (out, in); works
    in the dtype of its inputs (float64 for the finite-difference check).  P is not
    modified."""
    W1, b1, W2, b2, W3, b3 = P
    n = X.shape[0]
    h1 = X @ W1.T + b1
    a1 = np.maximum(h1, 0)
    h2 = a1 @ W2.T + b2
    a2 = np.maximum(h2, 0)
    z = a2 @ W3.T + b3
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = -np.log(p[rows, Y]).mean()
    g = p                                     # dloss/dz = (softmax - onehot) / n
    g[rows, Y] -= 1
    g /= n
    gW3, gb3 = g.T @ a2, g.sum(0)
    g = g @ W3
    g *= h2 > 0
    gW2, gb2 = g.T @ a1, g.sum(0)
    g = g @ W2
    g *= h1 > 0
    gW1, gb1 = g.T @ X, g.sum(0)
    return loss, [gW1, gb1, gW2, gb2, gW3, gb3]


def numpy_step(P, X, Y):
    """One SGD step in place on the NumPy parameters P."""
    for p, g in zip(P, numpy_grads(P, X, Y)[1]):
        p -= LR * g


def ndrt_mlp(P0, X, Y, ctx=None):
    """(step, params): ``step()`` runs one SGD step of ndrt's MLP in place on ``params``
    (NDArrays with gradients attached, initialised from P0), on ``ctx`` (default: the
    current context), with FullyConnected, the fused softmax_cross_entropy and
    sgd_update."""
    Xn, Yn = nd.array(X, ctx=ctx), nd.array(Y, ctx=ctx)
    P = [nd.array(p, ctx=ctx) for p in P0]
    for p in P:
        p.attach_grad()
    n = X.shape[0]
    W1, b1, W2, b2, W3, b3 = P

    def step():
        with autograd.record():
            h = nd.relu(nd.FullyConnected(Xn, W1, b1, num_hidden=W1.shape[0]))
            h = nd.relu(nd.FullyConnected(h, W2, b2, num_hidden=W2.shape[0]))
            z = nd.FullyConnected(h, W3, b3, num_hidden=W3.shape[0])
            loss = nd.softmax_cross_entropy(z, Yn) / n    # summed over the batch: mean
        loss.backward()
        for p in P:
            nd.sgd_update(p, p.grad, lr=LR, out=p)
    return step, P


def ndrt_mlp_plain(P0, X, Y):
    """(step, params) as ``ndrt_mlp``, written with plain nd ops as a user writes them;
    the weights are stored (in, out) for ``nd.dot(x, W)`` (``params`` holds them so: the
    transposes of P0's)."""
    Xn, Yn = nd.array(X), nd.array(Y.astype(np.float32))
    P = [nd.array(np.ascontiguousarray(p.T)) for p in P0]
    for p in P:
        p.attach_grad()
    W1, b1, W2, b2, W3, b3 = P

    def step():
        with autograd.record():
            h = nd.relu(nd.dot(Xn, W1) + b1)
            h = nd.relu(nd.dot(h, W2) + b2)
            z = nd.dot(h, W3) + b3
            loss = -nd.pick(nd.log_softmax(z), Yn, axis=1).mean()
        loss.backward()
        for p in P:
            p -= LR * p.grad
    return step, P


def upstream_allocs(step, steps=10, warmup=3):
    """(upstream allocations, cache misses) of the CPU pool per call of ``step`` after
    ``warmup`` calls: 0 in a steady state."""
    for _ in range(warmup):
        step()
    pool = allocator.get_pool()
    s0 = pool.memory_stats()
    for _ in range(steps):
        step()
    s1 = pool.memory_stats()
    return tuple((s1[k] - s0[k]) / steps for k in ("num_device_alloc", "num_cache_misses"))


# -- chains ------------------------------------------------------------------------------

def ndrt_chain(a, c):
    """fwd(): records y = x, CHAIN times y = y + c, with x attached; returns y."""
    x, cn = nd.array(a), nd.array(c)
    x.attach_grad()

    def fwd():
        with autograd.record():
            y = x
            for _ in range(CHAIN):
                y = y + cn
        return y
    return fwd


def ndrt_tanh_chain(a):
    """fwd(): records ``CHAIN`` nested tanh of x (attached); returns the last."""
    x = nd.array(a)
    x.attach_grad()

    def fwd():
        with autograd.record():
            y = x
            for _ in range(CHAIN):
                y = nd.tanh(y)
        return y
    return fwd


def numpy_chain(p, q):
    y = p
    for _ in range(CHAIN):
        y = y + q
    return y


def tanh_input(seed=0):
    return np.random.default_rng(seed).standard_normal(TANH_N, dtype=np.float32)


def ndrt_tanh_peak():
    """(baseline, peak after forward, peak over forward+backward, last_backward_stats()),
    in arrays of 16 MiB.  The baseline is the pool's allocated bytes once x exists with its
    gradient attached (x and x.grad: 2 arrays; attach_grad allocates x.grad as in MXNet,
    so it exists before the work as a parameter's gradient does); the peaks count what
    the forward and the backward allocate above it: 50 outputs and one gradient buffer,
    the head gradient included, at the least."""
    w = nd.ones((8,))                       # warm-up: first-call allocations of the path
    w.attach_grad()
    with autograd.record():
        z = nd.tanh(nd.tanh(w))
    z.backward()
    del w, z
    autograd.clear_plan_cache()             # plans of earlier cases keep their buffers
    x = nd.array(tanh_input())
    x.attach_grad()
    gc.collect()                            # nothing else of ours is alive
    pool = allocator.get_pool()
    base = pool.memory_stats()["allocated_bytes.all.current"]
    pool.reset_peak_stats()
    with autograd.record():
        y = x
        for _ in range(DEPTH):
            y = nd.tanh(y)
    fwd = pool.memory_stats()["allocated_bytes.all.peak"]
    y.backward()
    peak = pool.memory_stats()["allocated_bytes.all.peak"]
    return (base / UNIT, (fwd - base) / UNIT, (peak - base) / UNIT,
            autograd.last_backward_stats())


def numpy_tanh_peak():
    """The same chain by hand in NumPy (forward list, backward in place into the saved
    outputs: 50 + 1 arrays), peak traced bytes above the baseline in arrays."""
    x = tanh_input()
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        ys, y = [], x
        for _ in range(DEPTH):
            y = np.tanh(y)
            ys.append(y)
        del y
        g = np.ones(TANH_N, np.float32)      # dL/dy_50
        while ys:
            t = ys.pop()
            np.multiply(t, t, out=t)         # t = 1 - y_i^2, in the saved output
            np.subtract(1, t, out=t)
            g *= t
            del t
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return (peak - base) / UNIT


# -- asv ---------------------------------------------------------------------------------

class RecordAdd:
    """1-element ``a + b`` with ``a.attach_grad()``: recording (the tape's cost per op),
    and not recording (the eager fast path must stay as it is)."""
    params = [[True, False]]
    param_names = ["recording"]

    def setup(self, recording):
        self.p, self.q = operands(1)
        self.a, self.b = nd.array(self.p), nd.array(self.q)
        self.a.attach_grad()
        self.prev = autograd.set_recording(recording)

    def teardown(self, recording):
        autograd.set_recording(self.prev)

    def time_add(self, recording):
        self.a + self.b

    def time_add_numpy(self, recording):
        self.p + self.q


class BackwardChain:
    """``CHAIN`` adds recorded then differentiated; per node: (forward_backward -
    forward) / CHAIN, against time_chain_numpy / CHAIN (one NumPy add)."""
    params = [[1, 1000]]
    param_names = ["n"]

    def setup(self, n):
        self.p, self.q = operands(n)
        self.fwd = ndrt_chain(self.p, self.q)

    def time_forward(self, n):
        self.fwd()

    def time_forward_backward(self, n):
        self.fwd().backward()

    def time_chain_numpy(self, n):
        numpy_chain(self.p, self.q)


class TanhChain:
    """``CHAIN`` nested 1-element tanh recorded then differentiated; per node:
    (forward_backward - forward) / CHAIN, against one NumPy ``np.tanh``."""

    def setup(self):
        self.p = operands(1)[0]
        self.fwd = ndrt_tanh_chain(self.p)

    def time_forward(self):
        self.fwd()

    def time_forward_backward(self):
        self.fwd().backward()

    def time_tanh_numpy(self):
        np.tanh(self.p)


class MLPStep:
    """One SGD step (forward, backward, update) of an MLP 784-256-256-10, float32:
    ``fused`` (FullyConnected, softmax_cross_entropy, sgd_update) or ``plain`` nd ops."""
    params = [[64, 1024], ["fused", "plain"]]
    param_names = ["batch", "form"]
    timeout = 120

    def setup(self, batch, form):
        self.X, self.Y, P0 = mlp_data(batch)
        self.P = [p.copy() for p in P0]
        make = ndrt_mlp if form == "fused" else ndrt_mlp_plain
        self.step, _ = make(P0, self.X, self.Y)
        self.step()                         # warm: gradients, pool blocks, the plan

    def time_step(self, batch, form):
        self.step()

    def time_step_numpy(self, batch, form):
        numpy_step(self.P, self.X, self.Y)

    def track_upstream_allocs_per_step(self, batch, form):
        return upstream_allocs(self.step)[0]
    track_upstream_allocs_per_step.unit = "allocations"


class TanhChainMemory:
    """Peak memory of forward+backward through 50 nested tanh on 16 MiB arrays, in arrays
    (the minimum is 51: 50 saved outputs and one gradient buffer)."""
    params = [[DEPTH]]
    param_names = ["depth"]
    timeout = 120

    def track_peak(self, depth):
        return ndrt_tanh_peak()[2]
    track_peak.unit = "arrays"

    def track_peak_numpy(self, depth):
        return numpy_tanh_peak()
    track_peak_numpy.unit = "arrays"
