"""Sparse operators against SciPy, each ndrt case beside its SciPy reference so that the
ratio shows in one run (the figures of /work/shared/bench/peers/sparse_dot.py).

A: CSR 20000 x 20000 at density 1e-3 (400k entries), float32; B: dense 20000 x 64.
E: CSR 512 x 20000 at density 1e-3 (about 20 entries per row, an embedding batch); G:
dense 512 x 64 (the gradient of the looked-up rows).  ndrt times the whole operator call
(``nd.dot``: inference, pool allocation, the kernel); dot(csr.T, dense) gives a
row_sparse result in ndrt (MXNet's rule) and a dense one in SciPy.
"""

import functools

import numpy as np
import scipy.sparse as sp

from runtime import nd

N, D, DENSITY, BATCH = 20000, 64, 1e-3, 512


@functools.lru_cache(maxsize=1)
def _data():
    rng = np.random.default_rng(0)
    a = sp.random(N, N, density=DENSITY, format="csr", dtype=np.float32, random_state=rng)
    e = sp.random(BATCH, N, density=DENSITY, format="csr", dtype=np.float32,
                  random_state=rng)
    b = rng.standard_normal((N, D), dtype=np.float32)
    g = rng.standard_normal((BATCH, D), dtype=np.float32)
    return a, e, b, g


class _Dot:
    params = ["ndrt", "scipy"]
    param_names = ["impl"]

    def setup(self, impl):
        a, e, b, g = _data()
        if impl == "ndrt":
            self.a, self.e = nd.sparse.csr_matrix(a), nd.sparse.csr_matrix(e)
            self.b, self.g = nd.array(b), nd.array(g)
        else:
            self.a, self.e, self.b, self.g = a, e, b, g
        self.run(impl)                       # touch the data, warm the pool


class DotCSRDense(_Dot):
    """dot(csr, dense) -> dense: A @ B."""

    def run(self, impl):
        if impl == "ndrt":
            return nd.dot(self.a, self.b)
        return self.a @ self.b

    def time_dot(self, impl):
        self.run(impl)


class DotCSRTransposeDense(_Dot):
    """dot(csr.T, dense) -> row_sparse: A.T @ B (every row of the result is used)."""

    def run(self, impl):
        if impl == "ndrt":
            return nd.dot(self.a, self.b, transpose_a=True)
        return self.a.T @ self.b

    def time_dot(self, impl):
        self.run(impl)


class DotEmbeddingGrad(_Dot):
    """dot(E.T, G) -> row_sparse: the gradient of an embedding lookup (8k of 20k rows)."""

    def run(self, impl):
        if impl == "ndrt":
            return nd.dot(self.e, self.g, transpose_a=True)
        return self.e.T @ self.g

    def time_dot(self, impl):
        self.run(impl)


class ElemwiseCSR:
    """csr + csr and csr * csr (2000 x 2000 at density 1e-2), sum of a csr along axis 0."""
    params = ["ndrt", "scipy"]
    param_names = ["impl"]

    def setup(self, impl):
        rng = np.random.default_rng(1)
        x = sp.random(2000, 2000, density=1e-2, format="csr", dtype=np.float32,
                      random_state=rng)
        y = sp.random(2000, 2000, density=1e-2, format="csr", dtype=np.float32,
                      random_state=rng)
        if impl == "ndrt":
            x, y = nd.sparse.csr_matrix(x), nd.sparse.csr_matrix(y)
        self.x, self.y = x, y

    def time_add(self, impl):
        self.x + self.y

    def time_multiply(self, impl):
        if impl == "ndrt":
            self.x * self.y
        else:
            self.x.multiply(self.y)

    def time_sum_axis0(self, impl):
        self.x.sum(axis=0)
