"""Operators: eager per-op overhead on tiny arrays, throughput on large ones — each beside
the NumPy call that does the same work, so that the ratio shows in one run."""

import numpy as np

from runtime import nd

IMPLS = ["ndrt", "numpy"]


def _pair(impl, n, seed=0):
    rng = np.random.default_rng(seed)
    a, b = [(rng.random(n, dtype=np.float32) + 0.5) for _ in range(2)]
    return (nd.array(a), nd.array(b)) if impl == "ndrt" else (a, b)


class EagerOverhead:
    """``a + b``, ``exp(a)``, ``a.sum()`` on 1 and 1,000 float32 elements."""
    params = [IMPLS, [1, 1000]]
    param_names = ["impl", "n"]

    def setup(self, impl, n):
        self.a, self.b = _pair(impl, n)
        self.exp = nd.exp if impl == "ndrt" else np.exp

    def time_add(self, impl, n):
        self.a + self.b

    def time_exp(self, impl, n):
        self.exp(self.a)

    def time_sum(self, impl, n):
        self.a.sum()


class GeneralPath:
    """Ops with attributes on 1 and 4 elements: the invoker's general path (checks,
    inference cached per signature, allocation, dispatch), the one recording takes."""
    params = [IMPLS]
    param_names = ["impl"]

    def setup(self, impl):
        rng = np.random.default_rng(0)
        a = rng.random(1, dtype=np.float32) + 0.5
        m = rng.random((2, 2), dtype=np.float32)
        self.a, self.m = (nd.array(a), nd.array(m)) if impl == "ndrt" else (a, m)
        self.dot = nd.dot if impl == "ndrt" else np.dot
        self.a * 2.5, self.a.sum(axis=0), self.dot(self.m, self.m)    # warm caches

    def time_mul_scalar(self, impl):
        self.a * 2.5

    def time_sum_axis(self, impl):
        self.a.sum(axis=0)

    def time_dot_2x2(self, impl):
        self.dot(self.m, self.m)


class LargeElementwise:
    """1,000,000-element float32 ops: memory bound, the kernels are NumPy's loops."""
    params = [IMPLS]
    param_names = ["impl"]

    def setup(self, impl):
        self.a, self.b = _pair(impl, 1_000_000)
        self.m = nd if impl == "ndrt" else np

    def time_add(self, impl):
        self.a + self.b

    def time_multiply(self, impl):
        self.a * self.b

    def time_exp(self, impl):
        self.m.exp(self.a)

    def time_tanh(self, impl):
        self.m.tanh(self.a)


class Dot:
    """1024 x 1024 float32 matrix product (BLAS either way)."""
    params = [IMPLS]
    param_names = ["impl"]

    def setup(self, impl):
        rng = np.random.default_rng(0)
        a = rng.random((1024, 1024), dtype=np.float32)
        b = rng.random((1024, 1024), dtype=np.float32)
        self.a, self.b = (nd.array(a), nd.array(b)) if impl == "ndrt" else (a, b)
        self.dot = nd.dot if impl == "ndrt" else np.dot

    def time_dot(self, impl):
        self.dot(self.a, self.b)
