"""The figures of the NDArray and operator issues, measured in one process against NumPy
and SciPy (medians of interleaved repeats, paired ratios, the peers' method from
shared/bench/peers/anchor_util.py).  Prints a markdown table.

    python asv_bench/run_runtime_figures.py        # ~2 minutes on 2 cores
    ALLOC_FIGURES_QUICK=1 python asv_bench/run_runtime_figures.py   # smoke test
"""
import statistics
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from runtime import nd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_allocator_figures import bench  # noqa: E402  (one timer for every figure)


def row(label, times, ours, ref, target):
    r = statistics.median(a / b for a, b in zip(times[ours], times[ref]))
    t_o, t_r = statistics.median(times[ours]), statistics.median(times[ref])
    unit = lambda t: f"{t * 1e9:,.0f} ns" if t < 1e-5 else f"{t * 1e3:.2f} ms"
    print(f"| {label} | {unit(t_o)} | {unit(t_r)} | {r:.2f}x | {target} |")
    sys.stdout.flush()


def main():
    print("| figure | ndrt | reference | ratio | target |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    # -- NDArray
    a = np.arange(64, dtype=np.float32).reshape(16, 4)
    x = nd.array(a)
    big = rng.random(4 << 20, dtype=np.float32)
    xbig = nd.array(big)
    dense = rng.random((4096, 4096), dtype=np.float32)
    dense[dense > 0.01] = 0
    xdense = nd.array(dense)
    env = dict(np=np, nd=nd, sp=sp, a=a, x=x, big=big, xbig=xbig, dense=dense, xdense=xdense,
               f32=np.float32)
    t = bench({"nd_zeros": "nd.zeros((1,))", "np_zeros": "np.zeros((1,), f32)",
               "nd_slice": "x[1:3]", "np_slice": "a[1:3]",
               "nd_reshape": "x.reshape(8, 8)", "np_reshape": "a.reshape(8, 8)",
               "nd_asnumpy": "xbig.asnumpy()", "np_copy": "np.copy(big)"}, env)
    row("nd.zeros((1,)) / np.zeros((1,))", t, "nd_zeros", "np_zeros", "<= 2.0x")
    row("view x[1:3] / NumPy", t, "nd_slice", "np_slice", "<= 1.5x")
    row("view reshape / NumPy", t, "nd_reshape", "np_reshape", "<= 1.5x")
    row("asnumpy() 16 MiB / np.copy", t, "nd_asnumpy", "np_copy", "<= 1.2x")
    t = bench({"nd_csr": "xdense.tostype('csr')", "sp_csr": "sp.csr_matrix(dense)"}, env,
              repeat=5, min_time=0.3)
    row("tostype('csr') 4096^2 1% / sp.csr_matrix", t, "nd_csr", "sp_csr", "<= 1.0x")
    # -- operators; iadd is the in-place fast path with its overlap check
    for n in (1, 1000):
        p, q = (rng.random(n, dtype=np.float32) + 0.5 for _ in range(2))
        z = np.zeros(n, np.float32)       # the in-place add keeps its operand's values
        env = dict(np=np, nd=nd, p=p, q=q, u=nd.array(p), v=nd.array(q), z=z, w=nd.array(z))
        t = bench({"nd_add": "u + v", "np_add": "p + q", "nd_exp": "nd.exp(u)",
                   "np_exp": "np.exp(p)", "nd_sum": "u.sum()", "np_sum": "p.sum()",
                   "nd_iadd": "u.__iadd__(w)", "np_iadd": "p.__iadd__(z)"}, env)
        for op in ("add", "iadd", "exp", "sum"):
            row(f"eager {op}, {n} elem / NumPy", t, f"nd_{op}", f"np_{op}", "<= 2.0x")
    # -- the general path: an op with attributes, through inference (cached per
    # signature), allocation, dispatch and write-back; the path recording will take
    p = rng.random(1, dtype=np.float32) + 0.5
    m = rng.random((2, 2), dtype=np.float32)
    env = dict(np=np, nd=nd, p=p, u=nd.array(p), m=m, n=nd.array(m))
    t = bench({"nd_mul": "u * 2.5", "np_mul": "p * 2.5", "nd_sum": "u.sum(axis=0)",
               "np_sum": "p.sum(axis=0)", "nd_dot": "nd.dot(n, n)", "np_dot": "np.dot(m, m)"},
              env)
    row("general path x * 2.5, 1 elem / NumPy", t, "nd_mul", "np_mul", "<= 3.0x")
    row("general path x.sum(axis=0), 1 elem / NumPy", t, "nd_sum", "np_sum", "<= 3.0x")
    row("general path nd.dot 2x2 / np.dot", t, "nd_dot", "np_dot", "<= 3.0x")
    p, q = (rng.random(1_000_000, dtype=np.float32) + 0.5 for _ in range(2))
    env = dict(np=np, nd=nd, p=p, q=q, u=nd.array(p), v=nd.array(q))
    t = bench({"nd_add": "u + v", "np_add": "p + q", "nd_mul": "u * v", "np_mul": "p * q",
               "nd_exp": "nd.exp(u)", "np_exp": "np.exp(p)", "nd_tanh": "nd.tanh(u)",
               "np_tanh": "np.tanh(p)"}, env, repeat=7, min_time=0.3)
    for op in ("add", "mul", "exp", "tanh"):
        row(f"1M-element {op} / NumPy", t, f"nd_{op}", f"np_{op}", "<= 1.1x")
    m1, m2 = (rng.random((1024, 1024), dtype=np.float32) for _ in range(2))
    env = dict(np=np, nd=nd, m1=m1, m2=m2, n1=nd.array(m1), n2=nd.array(m2))
    t = bench({"nd_dot": "nd.dot(n1, n2)", "np_dot": "np.dot(m1, m2)"}, env, repeat=7,
              min_time=0.5, pause=0.3)
    row("dot 1024x1024 / np.dot", t, "nd_dot", "np_dot", "<= 1.1x")
    # -- sparse dot: CSR 20000^2 at 1e-3 with a 20000x64 dense operand; the
    # embedding-style gradient: 512 rows of 20 nonzeros, transposed, times 512x64
    n, d = 20000, 64
    A = sp.random(n, n, density=1e-3, format="csr", dtype=np.float32, random_state=rng)
    E = sp.random(512, n, density=1e-3, format="csr", dtype=np.float32, random_state=rng)
    B = rng.standard_normal((n, d), dtype=np.float32)
    G = rng.standard_normal((512, d), dtype=np.float32)
    env = dict(nd=nd, A=A, E=E, B=B, G=G, mA=nd.sparse.csr_matrix(A),
               mE=nd.sparse.csr_matrix(E), mB=nd.array(B), mG=nd.array(G))
    t = bench({"nd_ab": "nd.dot(mA, mB)", "sp_ab": "A @ B",
               "nd_atb": "nd.dot(mA, mB, transpose_a=True)", "sp_atb": "A.T @ B",
               "nd_etg": "nd.dot(mE, mG, transpose_a=True)", "sp_etg": "E.T @ G"}, env,
              repeat=9, min_time=0.3, pause=0.2)
    row("dot(csr, dense) -> dense / SciPy", t, "nd_ab", "sp_ab", "<= 0.6x")
    row("dot(csr.T, dense) -> row_sparse / SciPy", t, "nd_atb", "sp_atb", "<= 1.0x")
    row("dot(E.T, grad) embedding-style / SciPy", t, "nd_etg", "sp_etg", "<= 1.0x")


if __name__ == "__main__":
    main()
