"""NDArray storage: creation, views, host copies, storage casts — each beside its NumPy
(or SciPy) reference so that the ratio shows in one run."""

import numpy as np
import scipy.sparse as sp

from runtime import nd


class Creation:
    params = ["ndrt", "numpy"]
    param_names = ["impl"]

    def setup(self, impl):
        nd.zeros((1,))          # warm the pool

    def time_zeros_1(self, impl):
        if impl == "ndrt":
            nd.zeros((1,))
        else:
            np.zeros((1,), np.float32)

    def time_empty_1(self, impl):
        if impl == "ndrt":
            nd.empty((1,))
        else:
            np.empty((1,), np.float32)


class Views:
    params = ["ndrt", "numpy"]
    param_names = ["impl"]

    def setup(self, impl):
        a = np.arange(64, dtype=np.float32).reshape(16, 4)
        self.x = nd.array(a) if impl == "ndrt" else a

    def time_slice(self, impl):
        self.x[1:3]

    def time_int_index(self, impl):
        self.x[1]

    def time_reshape(self, impl):
        self.x.reshape(8, 8)


class HostCopy:
    """asnumpy() of 16 MiB against np.copy of the same bytes."""
    params = ["ndrt", "numpy"]
    param_names = ["impl"]

    def setup(self, impl):
        a = np.random.default_rng(0).random(4 << 20, dtype=np.float32)
        self.x = nd.array(a) if impl == "ndrt" else a

    def time_to_numpy_16MiB(self, impl):
        if impl == "ndrt":
            self.x.asnumpy()
        else:
            np.copy(self.x)


class CastCSR:
    """dense -> csr of a 4096x4096 float32 array at 1% density, against SciPy."""
    params = ["ndrt", "scipy"]
    param_names = ["impl"]

    def setup(self, impl):
        rng = np.random.default_rng(0)
        a = rng.random((4096, 4096), dtype=np.float32)
        a[a > 0.01] = 0
        self.a = a
        self.x = nd.array(a)
        self.c = nd.sparse.csr_matrix(a)
        self.s = sp.csr_matrix(a)

    def time_dense_to_csr(self, impl):
        if impl == "ndrt":
            self.x.tostype("csr")
        else:
            sp.csr_matrix(self.a)

    def time_csr_to_dense(self, impl):
        if impl == "ndrt":
            self.c.tostype("default")
        else:
            self.s.toarray()
