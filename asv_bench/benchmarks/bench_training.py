"""One training step of each ``ndrt train`` job's model, beside the same step written by
hand in NumPy/SciPy, so that the ratio shows in one run.

The models, batches and references live here and are imported by
``asv_bench/run_training_figures.py`` (which puts PyTorch beside when it imports):

* ``SparseStep``: the sparse job's model (``runtime.jobs.SparseCTR``: ``dot(csr, W)`` with
  W 1,000,000 x 8 and a row_sparse gradient, Dense(32, relu), Dense(1)), sigmoid binary
  cross-entropy, Adam with lazy updates through ``runtime.gluon.Trainer``, on CSR batches
  of 1,024 rows with 20 features each; reference: SciPy's CSR product, the MLP by hand
  and lazy Adam on the batch's rows in NumPy.
* ``WideCSRTransposeDot``: the sparse job's embedding gradient alone, ``dot(csr.T, g)``
  of a CSR batch of 1,024 rows x 1,000,000 columns (20 entries a row) and g (1,024, 8),
  a row_sparse result; reference: the used columns by ``np.unique`` and SciPy's product
  on them (the NumPy/SciPy step's way).  Its cost follows the stored entries, not the
  columns.
* ``MLPStep``: the mlp job's model (``runtime.jobs.digits_mlp``: 64-64-64-10, ReLU,
  softmax cross-entropy) with Adam, batch 64; reference: ``numpy_grads`` of
  bench_autograd and Adam in NumPy.

Before timing, ``check_same_update`` runs one step of each side from the same weights and
data and requires the same updated weights.
"""
import itertools
import math

import numpy as np
import scipy.sparse as sp

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn
from runtime.jobs import SparseCTR, digits, digits_mlp, synthetic_ctr

from .bench_autograd import numpy_grads, upstream_allocs

FEATURES, ACTIVE, EMBED, HIDDEN = 1_000_000, 20, 8, 32
SPARSE_BATCH, SPARSE_LR = 1024, 0.002
MLP_BATCH, MLP_HIDDEN, MLP_LR = 64, 64, 0.003
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


# -- data and initial weights ------------------------------------------------------------

def sparse_batches(n_batches=8, batch=SPARSE_BATCH, seed=0):
    """``n_batches`` (SciPy CSR (batch, FEATURES), float32 labels (batch,)) from the
    sparse job's data set."""
    d = synthetic_ctr(rows=n_batches * batch + 1, features=FEATURES, active=ACTIVE,
                      seed=seed, test_fraction=1 / (n_batches * batch + 1))
    return [(d.X_train[i * batch:(i + 1) * batch], d.y_train[i * batch:(i + 1) * batch])
            for i in range(n_batches)]


def sparse_params(seed=0):
    """[E (FEATURES, EMBED), W1 (HIDDEN, EMBED), b1, W2 (1, HIDDEN), b2] float32."""
    rng = np.random.default_rng(seed)
    f = np.float32
    return [(rng.standard_normal((FEATURES, EMBED)) * 0.01).astype(f),
            (rng.standard_normal((HIDDEN, EMBED)) * np.sqrt(2 / EMBED)).astype(f),
            np.zeros(HIDDEN, f),
            (rng.standard_normal((1, HIDDEN)) * np.sqrt(1 / HIDDEN)).astype(f),
            np.zeros(1, f)]


def mlp_batch(seed=0):
    X, y = digits(seed=seed)[:2]
    return X[:MLP_BATCH], y[:MLP_BATCH]


def mlp_params(seed=0):
    """[W1, b1, W2, b2, W3, b3] of 64-64-64-10, W as (out, in)."""
    rng = np.random.default_rng(seed)
    sizes = (64, MLP_HIDDEN, MLP_HIDDEN, 10)
    P = []
    for i, o in zip(sizes[:-1], sizes[1:]):
        P += [(rng.standard_normal((o, i)) * np.sqrt(2 / i)).astype(np.float32),
              np.zeros(o, np.float32)]
    return P


# -- NumPy references ----------------------------------------------------------------------

class NumpyAdam:
    """MXNet's Adam (bias corrections folded into the learning rate) in NumPy; ``rows``
    updates only those rows of weight and state (lazy_update)."""

    def __init__(self, P, lr):
        self.lr, self.t = lr, 0
        self.state = [(np.zeros_like(p), np.zeros_like(p)) for p in P]

    def lr_t(self):
        return self.lr * math.sqrt(1 - BETA2 ** self.t) / (1 - BETA1 ** self.t)

    def update(self, i, p, g, rows=None):
        m, v = self.state[i]
        lr = self.lr_t()
        if rows is None:
            m *= BETA1
            m += (1 - BETA1) * g
            v *= BETA2
            v += (1 - BETA2) * g * g
            p -= lr * m / (np.sqrt(v) + EPS)
        else:
            mr = BETA1 * m[rows] + (1 - BETA1) * g
            vr = BETA2 * v[rows] + (1 - BETA2) * g * g
            m[rows], v[rows] = mr, vr
            p[rows] -= lr * mr / (np.sqrt(vr) + EPS)


def numpy_sparse_step(P, opt, X, y):
    """One step of the sparse model by hand: E rows of the batch only (SciPy products on
    the batch's columns), mean sigmoid binary cross-entropy, lazy Adam.  Returns the loss."""
    E, W1, b1, W2, b2 = P
    n = X.shape[0]
    rows, inv = np.unique(X.indices, return_inverse=True)
    Xc = sp.csr_matrix((X.data, inv.ravel(), X.indptr), shape=(n, rows.size))
    e = Xc @ E[rows]                                  # (n, EMBED)
    h = e @ W1.T + b1
    a = np.maximum(h, 0)
    z = (a @ W2.T + b2).ravel()
    loss = (np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).mean()
    dz = ((1 / (1 + np.exp(-z)) - y) / n).astype(np.float32)[:, None]
    gW2, gb2 = dz.T @ a, dz.sum(0)
    dh = (dz @ W2) * (h > 0)
    gW1, gb1 = dh.T @ e, dh.sum(0)
    gE = Xc.T @ (dh @ W1)                             # (rows, EMBED): row_sparse
    opt.t += 1
    opt.update(0, E, gE, rows)
    for i, (p, g) in enumerate(((W1, gW1), (b1, gb1), (W2, gW2), (b2, gb2)), 1):
        opt.update(i, p, g)
    return loss


def numpy_mlp_step(P, opt, X, Y):
    """One Adam step of the digits MLP by hand (``numpy_grads``: mean softmax CE)."""
    loss, G = numpy_grads(P, X, Y)
    opt.t += 1
    for i, (p, g) in enumerate(zip(P, G)):
        opt.update(i, p, g)
    return loss


# -- ndrt, as the jobs run it ------------------------------------------------------------

def _set(params, values):
    for p, v in zip(params, values):
        p.set_data(nd.array(v))


def ndrt_sparse(P0, batches):
    """(step, net): ``step()`` trains the job's SparseCTR on the next batch (cycling)."""
    net = SparseCTR(FEATURES, embed=EMBED, hidden=HIDDEN)
    net.initialize()
    _set([net.embed_weight, net.mlp[0].weight, net.mlp[0].bias, net.mlp[1].weight,
          net.mlp[1].bias], P0)
    trainer = mx.gluon.Trainer(net.collect_params(), "adam",
                            {"learning_rate": SPARSE_LR, "lazy_update": True})
    loss_fn = mx.gluon.loss.SigmoidBinaryCrossEntropyLoss()
    data = itertools.cycle([(nd.sparse.csr_matrix(X), nd.array(y.reshape(-1, 1)))
                            for X, y in batches])

    def step():
        x, y = next(data)
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
    return step, net


def ndrt_mlp(P0, X, Y):
    """(step, net): one Adam step of the job's digits MLP on (X, Y)."""
    net = digits_mlp(MLP_HIDDEN)
    net.initialize()
    _set([p for layer in net for p in (layer.weight, layer.bias)], P0)
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": MLP_LR})
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = nd.array(X), nd.array(Y.astype(np.float32))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
    return step, net


def sparse_values(net):
    return [net.embed_weight.data().asnumpy(), *(p.data().asnumpy() for layer in net.mlp
                                                 for p in (layer.weight, layer.bias))]


def mlp_values(net):
    return [p.data().asnumpy() for layer in net for p in (layer.weight, layer.bias)]


def check_same_update(name, P0, ref, ours, rtol=1e-4, atol=1e-6):
    """After one step from P0, ndrt's weights equal the reference's, and so do the
    updates themselves relative to their size."""
    for i, (p0, r, o) in enumerate(zip(P0, ref, ours)):
        assert np.allclose(o, r, rtol=rtol, atol=atol), f"{name}: parameter {i} differs"
        d_ref, d = r - p0, o - p0
        scale = np.abs(d_ref).max()
        if scale > 0:
            err = np.abs(d - d_ref).max() / scale
            assert err < 1e-2, f"{name}: update of parameter {i} differs (rel err {err:.1e})"


def checked_sparse(batches):
    """(ndrt step, NumPy step) of the sparse model after checking one step of each."""
    P0 = sparse_params()
    step, net = ndrt_sparse(P0, batches[:1])
    step()
    P = [p.copy() for p in P0]
    numpy_sparse_step(P, NumpyAdam(P, SPARSE_LR), *batches[0])
    check_same_update("sparse step", P0, P, sparse_values(net))
    step, _ = ndrt_sparse(P0, batches)
    P = [p.copy() for p in P0]
    opt = NumpyAdam(P, SPARSE_LR)
    cycle = itertools.cycle(batches)
    return step, lambda: numpy_sparse_step(P, opt, *next(cycle))


def checked_mlp():
    """(ndrt step, NumPy step) of the digits MLP after checking one step of each."""
    X, Y = mlp_batch()
    P0 = mlp_params()
    step, net = ndrt_mlp(P0, X, Y)
    step()
    P = [p.copy() for p in P0]
    numpy_mlp_step(P, NumpyAdam(P, MLP_LR), X, Y)
    check_same_update("mlp step", P0, P, mlp_values(net))
    step, _ = ndrt_mlp(P0, X, Y)
    P = [p.copy() for p in P0]
    opt = NumpyAdam(P, MLP_LR)
    return step, lambda: numpy_mlp_step(P, opt, X, Y)


# -- asv -----------------------------------------------------------------------------------

class _Step:
    """A training step (``time_step``) beside its NumPy reference (``time_step_numpy``),
    both made by ``make()`` after the same-update check, warmed by three steps."""
    make = None

    def setup(self):
        self.step, self.step_numpy = type(self).make()
        for _ in range(3):                  # warm: state, gradients and pool blocks exist
            self.step()
            self.step_numpy()

    def time_step(self):
        self.step()

    def time_step_numpy(self):
        self.step_numpy()

    def track_upstream_allocs_per_step(self):
        return upstream_allocs(self.step)[0]
    track_upstream_allocs_per_step.unit = "allocations"


class SparseStep(_Step):
    """One step of the sparse job's model (batch 1,024 CSR rows) and the NumPy/SciPy step."""
    timeout = 300

    @staticmethod
    def make():
        return checked_sparse(sparse_batches())


class MLPStep(_Step):
    """One Adam step of the digits MLP (batch 64) and the handwritten NumPy step."""
    timeout = 120
    make = staticmethod(checked_mlp)


class WideCSRTransposeDot:
    """dot(csr.T, g) of one sparse-job batch (module docstring) beside NumPy/SciPy."""
    params = ["ndrt", "numpy"]
    param_names = ["impl"]

    def setup(self, impl):
        X, _ = sparse_batches(n_batches=1)[0]
        g = np.random.default_rng(1).standard_normal((X.shape[0], EMBED)).astype(np.float32)
        self.X, self.g = X, g
        self.x, self.gn = nd.sparse.csr_matrix(X), nd.array(g)

    def time_dot(self, impl):
        if impl == "ndrt":
            nd.dot(self.x, self.gn, transpose_a=True)
        else:
            X = self.X
            rows, inv = np.unique(X.indices, return_inverse=True)
            Xc = sp.csr_matrix((X.data, inv.ravel(), X.indptr), shape=(X.shape[0], rows.size))
            Xc.T @ self.g
