"""One rank of the multi-process KVStore tests (tests/runtime/test_kvstore_dist.py runs
it under ``mpiexec -n 2``).  ``python kvstore_worker.py SCENARIO``; each rank checks its
results against NumPy and prints ``OK <rank> <digest>`` (the digest of every array it
ended with: the ranks' must agree bit for bit).

Scenarios: ``collectives`` (the contract), ``trainer`` (gluon's Trainer on the store
against one process), ``threads`` (the CPUs shared), ``raise`` / ``kill`` / ``hang`` (rank 1 fails
after printing ``FAILING`` while rank 0 goes on pushing).
"""

import hashlib
import os
import signal
import sys
import time

import numpy as np

import runtime as mx
from runtime import autograd, nd


def rank_data(rank, key, shape, dtype=np.float32):
    """The value that rank ``rank`` pushes for ``key`` (any rank can make any rank's)."""
    rng = np.random.default_rng(1000 * rank + key)
    return rng.standard_normal(shape).astype(dtype)


def rsp_batch(rank, rows, features, active, seed=7):
    """A CSR batch of ``rows`` rows from the data of rank ``rank``."""
    rng = np.random.default_rng(seed + rank)
    cols = np.sort(rng.choice(features, size=(rows, active)), axis=1)
    indptr = np.arange(0, rows * active + 1, active)
    vals = rng.random(rows * active).astype(np.float32)
    import scipy.sparse as sp
    return sp.csr_matrix((vals, cols.ravel(), indptr), shape=(rows, features))


def embedding_grad(X, W, coef):
    """The row_sparse gradient of sum(dot(X, W) * coef) with respect to W."""
    w = nd.array(W)
    w.attach_grad(stype="row_sparse")
    with autograd.record():
        loss = (nd.dot(nd.sparse.csr_matrix(X), w) * nd.array(coef)).sum()
    loss.backward()
    return w.grad


def collectives(kv, digest):
    size, rank = kv.num_workers, kv.rank
    assert (kv.type, size) == ("dist_sync", 2), (kv.type, size)

    # pushpull sums, in place and into another out, float32 and float64
    for key, dtype in (("0", np.float32), ("1", np.float64)):
        x = nd.array(rank_data(rank, int(key), (5, 3), dtype), dtype=dtype)
        want = sum(rank_data(r, int(key), (5, 3), dtype) for r in range(size))
        out = nd.zeros((5, 3), dtype=dtype)
        kv.init(key, nd.zeros((5, 3), dtype=dtype))
        kv.pushpull(key, x, out=out)
        assert np.array_equal(out.asnumpy(), want)
        assert np.array_equal(x.asnumpy(), rank_data(rank, int(key), (5, 3), dtype))
        kv.pushpull(key, x)
        assert np.array_equal(x.asnumpy(), want)
        kv.pull(key, out=out)              # the store holds the sum too
        assert np.array_equal(out.asnumpy(), want)
        digest.update(x.asnumpy().tobytes())

    # many keys of one call: buckets (a first small one, a large array alone)
    shapes = [(3,), (1000,), (300, 100), (7, 7), (600, 700), (2,), (50, 40)]
    keys = [str(k) for k in range(10, 10 + len(shapes))]
    vals = [nd.array(rank_data(rank, int(k), s)) for k, s in zip(keys, shapes)]
    kv.init(keys, [nd.zeros(s) for s in shapes])
    kv.pushpull(keys, vals, out=vals)
    for k, s, v in zip(keys, shapes, vals):
        assert np.array_equal(v.asnumpy(), sum(rank_data(r, int(k), s) for r in range(size))), k
        digest.update(v.asnumpy().tobytes())

    # init and broadcast: rank 0's value on every rank
    kv.init("w", nd.array(rank_data(rank, 50, (4, 2))))
    out = nd.zeros((4, 2))
    kv.pull("w", out=out)
    assert np.array_equal(out.asnumpy(), rank_data(0, 50, (4, 2)))
    outs = [nd.zeros((6,)), nd.zeros((6,), ctx=mx.cpu(1))]
    kv.broadcast("b", nd.array(rank_data(rank, 51, (6,))), out=outs)
    for o in outs:
        assert np.array_equal(o.asnumpy(), rank_data(0, 51, (6,)))

    # row_sparse: the merged gradient is the gradient of the concatenated batch
    features, embed = 5000, 4
    W = rank_data(0, 60, (features, embed))
    Xs = [rsp_batch(r, 64, features, 5) for r in range(size)]
    coefs = [rank_data(r, 61, (64, embed)) for r in range(size)]
    g = embedding_grad(Xs[rank], W, coefs[rank])
    assert g.stype == "row_sparse"
    import scipy.sparse as sp
    whole = embedding_grad(sp.vstack(Xs).tocsr(), W, np.concatenate(coefs))
    kv.init("emb", nd.zeros((features, embed), stype="row_sparse"))
    kv.pushpull("emb", g, out=g)
    assert g.stype == "row_sparse"
    assert np.array_equal(g.indices.asnumpy(), whole.indices.asnumpy())
    np.testing.assert_allclose(g.asnumpy(), whole.asnumpy(), rtol=1e-5, atol=1e-6)
    digest.update(g.indices.asnumpy().tobytes() + g.data.asnumpy().tobytes())
    # later calls: fewer rows (the fixed-size blocks of one Allgather), then more rows
    # than the blocks hold (every rank turns to the exact exchange), then fewer again
    for step, rows_a_rank in enumerate((32, 200, 16)):
        Xs = [rsp_batch(r, rows_a_rank, features, 5, seed=20 + step) for r in range(size)]
        coefs = [rank_data(r, 62 + step, (rows_a_rank, embed)) for r in range(size)]
        g = embedding_grad(Xs[rank], W, coefs[rank])
        whole = embedding_grad(sp.vstack(Xs).tocsr(), W, np.concatenate(coefs))
        calls = kv.comm_stats()["calls"]
        kv.pushpull("emb", g, out=g)
        assert kv.comm_stats()["calls"] - calls == (2 if rows_a_rank == 200 else 1), step
        assert np.array_equal(g.indices.asnumpy(), whole.indices.asnumpy()), step
        np.testing.assert_allclose(g.asnumpy(), whole.asnumpy(), rtol=1e-5, atol=1e-6)
        digest.update(g.indices.asnumpy().tobytes() + g.data.asnumpy().tobytes())
    calls = kv.comm_stats()["calls"]
    kv.pushpull("emb", g, out=g)                 # in its room: one collective
    assert kv.comm_stats()["calls"] == calls + 1
    # small dense values in the same call ride in that collective, summed in place
    shapes, dtypes = [(3, 4), (5,), (2, 2)], [np.float32, np.float64, np.float32]
    dkeys = ["d0", "d1", "d2"]
    kv.init(dkeys, [nd.zeros(s, dtype=t) for s, t in zip(shapes, dtypes)])
    dvals = [nd.array(rank_data(rank, 80 + j, s, t), dtype=t)
             for j, (s, t) in enumerate(zip(shapes, dtypes))]
    calls = kv.comm_stats()["calls"]
    kv.pushpull(["emb"] + dkeys, [g] + dvals)
    assert kv.comm_stats()["calls"] == calls + 1
    for j, (v, s, t) in enumerate(zip(dvals, shapes, dtypes)):
        assert v.dtype == t
        np.testing.assert_allclose(v.asnumpy(), sum(rank_data(r, 80 + j, s, t)
                                                    for r in range(size)), rtol=1e-6)
        digest.update(v.asnumpy().tobytes())

    # row_sparse densified: together the ranks hold more rows than the array has
    ids = np.arange(rank, 10, 1)
    small = nd.sparse.row_sparse_array((rank_data(rank, 70, (ids.size, 3)), ids),
                                       shape=(12, 3))
    want = np.zeros((12, 3), np.float32)
    for r in range(size):
        want[np.arange(r, 10)] += rank_data(r, 70, (10 - r, 3))
    kv.init("small", nd.zeros((12, 3), stype="row_sparse"))
    kv.pushpull("small", small, out=small)
    assert np.array_equal(small.indices.asnumpy(), np.arange(10))
    assert np.array_equal(small.asnumpy(), want)

    # the optimizer in the store: every rank applies SGD with momentum to its replica
    kv = mx.kv.create("dist_sync")
    kv.init(90, nd.array(rank_data(rank, 90, (8,))))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01))
    w_ref, mom = rank_data(0, 90, (8,)).astype(np.float32), np.zeros(8, np.float32)
    w = nd.zeros((8,))
    for step in range(20):
        grads = [rank_data(r, 100 + step, (8,)) for r in range(size)]
        kv.push(90, nd.array(grads[rank]))
        gsum = grads[0] + grads[1]
        mom = np.float32(0.9) * mom - np.float32(0.1) * (gsum + np.float32(0.01) * w_ref)
        w_ref = w_ref + mom
    kv.pull(90, out=w)
    np.testing.assert_allclose(w.asnumpy(), w_ref, rtol=1e-5, atol=1e-6)
    digest.update(w.asnumpy().tobytes())

    # 2-bit compression with error feedback against a NumPy transcription
    kv2 = mx.kv.create("dist_sync")
    kv2.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    res = [np.zeros(40, np.float32) for _ in range(size)]
    kv2.init("c", nd.zeros((40,)))
    for step in range(3):
        x = nd.array(rank_data(rank, 200 + step, (40,)))
        kv2.pushpull("c", x)
        want = np.zeros(40, np.float32)
        for r in range(size):
            res[r] += rank_data(r, 200 + step, (40,))
            q = np.where(res[r] >= 0.5, 0.5, np.where(res[r] <= -0.5, -0.5, 0)).astype(np.float32)
            res[r] -= q
            want += q
        assert np.array_equal(x.asnumpy(), want), step

    kv.barrier()
    kv._barrier()


def trainer(kv, digest):
    """gluon's Trainer on the store, each rank on its half of every batch, against a
    one-process Trainer on the whole batches: the embedding's row_sparse gradient and
    the MLP's dense ones go in one pushpull (the dense ones ride in the rows'
    collective); after 20 steps of lazy Adam the weights and the optimizer states are
    the one-process run's."""
    import scipy.sparse as sp

    from runtime import gluon
    from runtime import random as rt_random
    from runtime.jobs.train import SparseCTR
    size, rank = kv.num_workers, kv.rank
    features, rows = 3000, 32

    def make(store):
        rt_random.seed(11)
        net = SparseCTR(features, embed=4, hidden=8)
        net.initialize(mx.init.Xavier())
        opts = {"learning_rate": 0.01, "lazy_update": True, "wd": 1e-3}
        extra = {} if store is None else {"kvstore": store, "update_on_kvstore": False}
        return net, gluon.Trainer(net.collect_params(), "adam", opts, **extra)

    net, tr = make(kv)
    ref, ref_tr = make(None)
    loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    for step in range(20):
        Xs = [rsp_batch(r, rows, features, 5, seed=300 + step) for r in range(size)]
        ys = [(rank_data(r, 400 + step, (rows, 1)) > 0).astype(np.float32) for r in range(size)]
        for model, trn, X, y, n in ((net, tr, Xs[rank], ys[rank], rows * size),
                                    (ref, ref_tr, sp.vstack(Xs).tocsr(), np.concatenate(ys),
                                     rows * size)):
            with autograd.record():
                loss = loss_fn(model(nd.sparse.csr_matrix(X)), nd.array(y))
            loss.backward()
            trn.step(n)
    for (name, p), q in zip(net.collect_params().items(), ref.collect_params().values()):
        np.testing.assert_allclose(p.data().asnumpy(), q.data().asnumpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=name)
        digest.update(p.data().asnumpy().tobytes())
    emb = list(net.collect_params()).index(net.embed_weight.name)
    for state, want in zip(tr._states[emb], ref_tr._states[emb]):
        assert want.asnumpy().any()
        np.testing.assert_allclose(state.asnumpy(), want.asnumpy(), rtol=1e-4, atol=1e-7)
        digest.update(state.asnumpy().tobytes())


def threads(digest):
    """The store gave this rank its share of the CPUs: every OpenMP/BLAS pool and ndrt's
    kernels run at most cpus // ranks-on-this-node threads (launched without
    OMP_NUM_THREADS)."""
    from threadpoolctl import threadpool_info

    from runtime import _sparse_common
    share = max(1, len(os.sched_getaffinity(0)) // 2)
    pools = [p for p in threadpool_info() if p["user_api"] in ("blas", "openmp")]
    assert any(p["internal_api"] == "openblas" for p in pools), pools
    assert all(p["num_threads"] <= share for p in pools), (share, pools)
    assert _sparse_common.get_num_threads() <= share
    digest.update(str(share).encode())


def main():
    scenario = sys.argv[1]
    kv = mx.kv.create("dist_sync")
    digest = hashlib.sha256()
    if scenario == "collectives":
        collectives(kv, digest)
    elif scenario == "threads":
        threads(digest)
    elif scenario == "trainer":
        trainer(kv, digest)
    else:
        x = nd.ones((1000,))
        kv.init(0, nd.zeros((1000,)))
        kv.pushpull(0, x)
        if kv.rank == 1:
            print("FAILING", flush=True)
            if scenario == "raise":
                raise RuntimeError("rank 1 gives up")
            if scenario == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if scenario == "hang":
                time.sleep(120)
        for _ in range(3):
            kv.pushpull(0, x)
    print(f"OK {kv.rank} {digest.hexdigest()}", flush=True)


if __name__ == "__main__":
    main()
