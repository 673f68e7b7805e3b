"""Demo of the runtime: ``python -m runtime`` builds dense and sparse arrays, runs a few
operators (with an autograd gradient checked against finite differences) and prints the CPU
pool's statistics before and after the arrays die."""

import numpy as np

import allocator
import runtime as rt
from runtime import _imperative, autograd, nd


def main():
    print(f"fast path: {_imperative.fast_path_note()}")
    rt.random.seed(0)
    x = nd.random.normal(shape=(256, 128))
    w = nd.random.uniform(-0.1, 0.1, shape=(64, 128))
    h = nd.relu(nd.FullyConnected(x, w, nd.zeros(64), num_hidden=64))
    p = nd.softmax(h)
    print(f"dense: x {x.shape} -> FullyConnected + relu + softmax -> {p.shape}; "
          f"row sums {p.sum(axis=1).asnumpy()[:3]}")

    dense = np.where(np.random.default_rng(0).random((1000, 500)) < 0.01, 1.0, 0.0)
    c = nd.sparse.csr_matrix(dense.astype(np.float32))
    y = nd.dot(c, nd.ones((500, 8)))
    yt = nd.dot(c, nd.ones((1000, 8)), transpose_a=True)
    print(f"sparse: csr {c.shape} with {c.nnz} stored values; dot(csr, dense) -> {y.stype} "
          f"{y.shape}; dot(csr.T, dense) -> {yt.stype} {yt.shape}")

    t = nd.array([0.5, 1.0, 2.0], dtype="float64")
    t.attach_grad()
    with autograd.record():
        z = (nd.tanh(t) * t).sum()
    z.backward()
    g = t.grad
    f = lambda v: np.tanh(v) * v    # noqa: E731
    eps = 1e-6
    fd = (f(t.asnumpy() + eps) - f(t.asnumpy() - eps)) / (2 * eps)
    print(f"autograd of sum(tanh(t) * t) vs central differences: max error "
          f"{np.abs(g.asnumpy() - fd).max():.1e}; backward: {autograd.last_backward_stats()}\n")

    print(allocator.memory_summary())
    del x, w, h, p, c, y, yt, t, g, z
    s = allocator.memory_stats()
    print(f"\nafter the arrays died: allocated {s['allocated_bytes.all.current']} B, "
          f"cached for reuse {s['cached_bytes']} B")


if __name__ == "__main__":
    main()
