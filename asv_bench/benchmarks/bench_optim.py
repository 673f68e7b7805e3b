"""Optimizer updates (runtime/ops/optimizer_op.py) beside NumPy references, so that the ratio
shows in one run (``asv_bench/run_optim_figures.py`` prints the ratios).

Dense: a float32 weight of DENSE_SHAPE (4 MiB) and its dense gradient; ndrt calls the
update operator with ``out=weight`` (inference, the kernel: one pass, no temporaries);
NumPy runs the same rule in place with ufunc ``out=`` into one preallocated scratch
array (the best a NumPy user writes).  Row-sparse: a float32 embedding table of
SPARSE_ROWS x SPARSE_DIM (12.8 MB) and a row_sparse gradient of SPARSE_NNZ sorted unique
rows; ndrt's lazy update touches those rows only; NumPy gathers the rows (fancy
indexing), updates them and scatters them back.  Both sides start each update from the
same state and apply MXNet's rule (Adam: the operator, without bias correction).
"""

import functools

import numpy as np

from runtime import nd

DENSE_SHAPE = (1024, 1024)
SPARSE_ROWS, SPARSE_DIM, SPARSE_NNZ = 200_000, 16, 4096
LR, WD, MOMENTUM, BETA1, BETA2, EPS = 0.01, 1e-4, 0.9, 0.9, 0.999, 1e-8
OPS = ["sgd_update", "sgd_mom_update", "adam_update", "adagrad_update"]
N_STATES = {"sgd_update": 0, "sgd_mom_update": 1, "adam_update": 2, "adagrad_update": 1}
ATTRS = {"sgd_update": {"lr": LR, "wd": WD},
         "sgd_mom_update": {"lr": LR, "momentum": MOMENTUM, "wd": WD},
         "adam_update": {"lr": LR, "beta1": BETA1, "beta2": BETA2, "epsilon": EPS, "wd": WD},
         "adagrad_update": {"lr": LR, "epsilon": EPS, "wd": WD}}


@functools.lru_cache(maxsize=2)
def _data(sparse):
    rng = np.random.default_rng(0)
    if sparse:
        shape = (SPARSE_ROWS, SPARSE_DIM)
        rows = np.sort(rng.choice(SPARSE_ROWS, SPARSE_NNZ, replace=False)).astype(np.int64)
        grad = rng.standard_normal((SPARSE_NNZ, SPARSE_DIM), dtype=np.float32)
    else:
        shape, rows = DENSE_SHAPE, None
        grad = rng.standard_normal(shape, dtype=np.float32)
    weight = rng.standard_normal(shape, dtype=np.float32)
    return weight, grad, rows


def numpy_update(name, w, g, states, tmp):
    """MXNet's rule ``name`` in place on NumPy arrays, ``tmp`` a scratch array of g's
    shape (no other temporaries)."""
    if name == "sgd_update":
        np.multiply(g, LR, out=tmp)
        w *= 1 - LR * WD
        w -= tmp
    elif name == "sgd_mom_update":
        mom = states[0]
        mom *= MOMENTUM
        np.multiply(w, LR * WD, out=tmp)
        mom -= tmp
        np.multiply(g, LR, out=tmp)
        mom -= tmp
        w += mom
    elif name == "adam_update":
        mean, var = states
        np.multiply(w, WD, out=tmp)
        tmp += g
        mean *= BETA1
        mean += (1 - BETA1) * tmp          # one temporary NumPy cannot avoid cheaply
        np.square(tmp, out=tmp)
        var *= BETA2
        tmp *= 1 - BETA2
        var += tmp
        np.sqrt(var, out=tmp)
        tmp += EPS
        np.divide(mean, tmp, out=tmp)
        tmp *= LR
        w -= tmp
    else:
        hist = states[0]
        np.square(g, out=tmp)
        hist += tmp
        np.sqrt(hist, out=tmp)
        tmp += EPS
        np.divide(g, tmp, out=tmp)
        tmp += WD * w
        tmp *= LR
        w -= tmp


def numpy_lazy_update(name, w, rows, g, states, tmp):
    """The lazy update in NumPy: gather the rows, update them, scatter them back."""
    wr = w[rows]
    sr = [s[rows] for s in states]
    numpy_update(name, wr, g, sr, tmp)
    w[rows] = wr
    for s, r in zip(states, sr):
        s[rows] = r


class _Update:
    params = [OPS, ["ndrt", "numpy"]]
    param_names = ["op", "impl"]
    sparse = False

    def setup(self, op, impl):
        weight, grad, rows = _data(self.sparse)
        n = N_STATES[op]
        if impl == "ndrt":
            self.w = nd.array(weight)
            self.g = (nd.sparse.row_sparse_array((grad, rows), shape=weight.shape)
                      if self.sparse else nd.array(grad))
            self.states = [nd.zeros(weight.shape) for _ in range(n)]
            fn, attrs = getattr(nd, op), ATTRS[op]
            w, g, states = self.w, self.g, self.states
            self.run = lambda: fn(w, g, *states, out=w, **attrs)
        else:
            self.w, self.g, self.rows = weight.copy(), grad, rows
            self.states = [np.zeros_like(weight) for _ in range(n)]
            self.tmp = np.empty_like(grad)
            if self.sparse:
                self.run = lambda: numpy_lazy_update(op, self.w, self.rows, self.g,
                                                     self.states, self.tmp)
            else:
                self.run = lambda: numpy_update(op, self.w, self.g, self.states, self.tmp)
        self.run()                           # touch the data, warm the pool

    def time_update(self, op, impl):
        self.run()


class DenseUpdate(_Update):
    """One update of a 1024 x 1024 float32 weight by a dense gradient."""


class RowSparseLazyUpdate(_Update):
    """One lazy update of a 200000 x 16 float32 table by a row_sparse gradient of 4096
    rows."""
    sparse = True
