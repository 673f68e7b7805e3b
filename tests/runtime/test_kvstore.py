"""KVStores in one process (``local``, ``device``) against NumPy, MXNet's refusals and
registry, and the compiled kernels of the dist path against NumPy transcriptions."""

import pickle

import numpy as np
import pytest

import runtime as mx
from runtime import _kvstore_kernels as kernels
from runtime import nd


def test_kv_is_kvstore_and_create_refuses_what_ndrt_lacks():
    assert mx.kv is mx.kvstore
    for name in ("dist_async", "horovod", "byteps", "nccl"):
        with pytest.raises(ValueError, match="use 'dist_sync'"):
            mx.kv.create(name)
    with pytest.raises(ValueError, match=r"create: name must be one of .* \(got 'bogus'\)"):
        mx.kv.create("bogus")
    with pytest.raises(TypeError, match="create: name must be a str"):
        mx.kv.create(3)
    kv = mx.kv.create("Local")
    assert (kv.type, kv.rank, kv.num_workers) == ("local", 0, 1)
    assert kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER)
    kv.barrier()
    kv._barrier()


def test_register_makes_create_find_the_class_and_warns_on_override():
    class TestStore(mx.kv.KVStoreBase):
        pass

    try:
        assert mx.kv.KVStoreBase.register(TestStore) is TestStore
        assert isinstance(mx.kv.create("teststore"), TestStore)
        with pytest.warns(UserWarning, match="overriding existing kvstore"):
            mx.kv.KVStoreBase.register(TestStore)
        with pytest.raises(TypeError, match="must be a subclass of KVStoreBase"):
            mx.kv.KVStoreBase.register(int)
    finally:
        mx.kv.KVStoreBase.kv_registry.pop("teststore", None)


@pytest.mark.parametrize("kind", ["local", "device"])
def test_two_contexts_give_the_one_context_sum(kind):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    kv = mx.kv.create(kind)
    kv.init(3, nd.zeros((4, 3)))
    kv.push(3, [nd.array(a, ctx=mx.cpu(0)), nd.array(b, ctx=mx.cpu(1))])
    outs = [nd.zeros((4, 3), ctx=mx.cpu(0)), nd.zeros((4, 3), ctx=mx.cpu(1))]
    kv.pull(3, out=outs)
    for o in outs:
        assert np.array_equal(o.asnumpy(), a + b)
    assert outs[1].context == mx.cpu(1)
    xs = [nd.array(a), nd.array(b, ctx=mx.cpu(1))]
    kv.pushpull(3, xs)                 # in place; the store keeps the sum, as MXNet's
    for x in xs:
        assert np.array_equal(x.asnumpy(), a + b)
    single = nd.array(2 * a)
    kv.pushpull(3, single)             # one context: the value itself
    assert np.array_equal(single.asnumpy(), 2 * a)
    kv.pull(3, out=outs[0])
    assert np.array_equal(outs[0].asnumpy(), 2 * a)
    with pytest.raises(KeyError, match="pushpull: key 7 has not been initialised"):
        kv.pushpull(7, single)


@pytest.mark.parametrize("kind", ["local", "device"])
def test_pushpull_keeps_no_copy_and_a_later_pull_refuses_a_rewritten_out(kind):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    kv = mx.kv.create(kind)
    kv.init(0, nd.zeros((4, 3)))
    g = nd.array(a)
    kv.pushpull(0, g)
    assert kv._store[0] is g               # the out holds the store's value: no copy
    out = nd.zeros((4, 3))
    kv.pull(0, out=out)
    assert np.array_equal(out.asnumpy(), a)
    g += 1                                 # the next backward would write it
    with pytest.raises(ValueError, match="pull: the value of key 0 is held by the out of "
                                         "its last pushpull, which must not be written"):
        kv.pull(0, out=out)
    assert np.array_equal(out.asnumpy(), a)      # the failed pull wrote nothing
    kv.push(0, nd.array(2 * a))            # a push gives the store its own copy again
    assert np.array_equal(g.asnumpy(), a + 1)
    kv.pull(0, out=out)
    assert np.array_equal(out.asnumpy(), 2 * a)
    # an optimizer set after a pushpull updates a copy, never the caller's out
    kv.pushpull(0, g)
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5))
    kv.push(0, nd.ones((4, 3)))
    kv.pull(0, out=out)
    assert np.array_equal(g.asnumpy(), a + 1)
    np.testing.assert_allclose(out.asnumpy(), a + 1 - 0.5, rtol=1e-6)


def test_pushpull_of_row_sparse_into_a_dense_key_keeps_pull_dense():
    kv = mx.kv.create("local")
    kv.init("e", nd.zeros((6, 2)))
    g = nd.sparse.row_sparse_array((np.ones((2, 2), np.float32), np.array([1, 4])),
                                   shape=(6, 2))
    kv.pushpull("e", g)
    out = nd.zeros((6, 2))
    kv.pull("e", out=out)                  # the key was dense: pull densifies
    want = np.zeros((6, 2), np.float32)
    want[[1, 4]] = 1
    assert np.array_equal(out.asnumpy(), want)


def test_lists_of_keys_and_row_sparse_sum():
    kv = mx.kv.create("device")
    dense = np.arange(6, dtype=np.float32).reshape(3, 2)
    r1 = nd.sparse.row_sparse_array((np.ones((2, 2), np.float32), np.array([0, 4])), shape=(5, 2))
    r2 = nd.sparse.row_sparse_array((np.full((1, 2), 2, np.float32), np.array([4])), shape=(5, 2),
                                    ctx=mx.cpu(1))
    kv.init(["d", "r"], [nd.zeros((3, 2)), nd.zeros((5, 2), stype="row_sparse")])
    kv.push(["d", "r"], [[nd.array(dense), nd.array(dense)], [r1, r2]])
    d = nd.zeros((3, 2))
    kv.pull("d", out=d)
    assert np.array_equal(d.asnumpy(), 2 * dense)
    r = nd.zeros((5, 2), stype="row_sparse")
    kv.pull("r", out=r)               # ignore_sparse: left to row_sparse_pull
    assert r.indices.asnumpy().size == 0
    kv.pull("r", out=r, ignore_sparse=False)
    want = np.zeros((5, 2), np.float32)
    want[0] += 1
    want[4] += 3
    assert np.array_equal(r.asnumpy(), want)
    assert np.array_equal(r.indices.asnumpy(), [0, 4])
    dense_out = nd.ones((5, 2))       # ignore_sparse skips sparse outs only (MXNet's rule)
    kv.pull("r", out=dense_out)
    assert np.array_equal(dense_out.asnumpy(), want)
    kept = nd.array(dense * 7).tostype("row_sparse")
    kv.pull("d", out=kept)            # a sparse out of a dense key: left as it was
    assert np.array_equal(kept.asnumpy(), dense * 7)


def test_mxnets_one_process_type_names_are_the_local_store():
    for name in ("local_update_cpu", "local_allreduce_cpu", "local_allreduce_device"):
        kv = mx.kv.create(name)
        assert kv.type == name
        kv.init(3, nd.zeros((2,)))
        kv.push(3, [nd.ones((2,)), nd.ones((2,), ctx=mx.cpu(1))])
        out = nd.zeros((2,))
        kv.pull(3, out=out)
        assert np.array_equal(out.asnumpy(), [2, 2])
    mx.kv.create("local_allreduce_device").set_gradient_compression({"type": "2bit"})
    with pytest.raises(ValueError, match="must be 'device' or 'dist_\\*' \\(got "
                       "'local_allreduce_cpu'\\)"):
        mx.kv.create("local_allreduce_cpu").set_gradient_compression({"type": "2bit"})


@pytest.mark.parametrize("stored_stype", ["default", "row_sparse"])
def test_row_sparse_pull_takes_unsorted_repeated_ids(stored_stype):
    w = np.arange(12, dtype=np.float32).reshape(6, 2)
    w[2] = 0
    kv = mx.kv.create("local")
    kv.init("w", nd.array(w).tostype(stored_stype))
    out = nd.zeros((6, 2), stype="row_sparse")
    kv.row_sparse_pull("w", out=out, row_ids=nd.array([5, 1, 5, 2], dtype="int64"))
    assert np.array_equal(out.indices.asnumpy(), [1, 2, 5])
    assert np.array_equal(out.data.asnumpy(), w[[1, 2, 5]])
    with pytest.raises(IndexError, match=r"row_ids of key 'w' must be in \[0, 6\) \(got 6\)"):
        kv.row_sparse_pull("w", out=out, row_ids=nd.array([6], dtype="int64"))
    with pytest.raises(ValueError, match="out of key 'w' must be row_sparse"):
        kv.row_sparse_pull("w", out=nd.zeros((6, 2)), row_ids=nd.array([1], dtype="int64"))
    assert np.array_equal(out.indices.asnumpy(), [1, 2, 5])      # the failed calls changed nothing


def test_bad_calls_name_the_rule_and_change_nothing():
    kv = mx.kv.create("local")
    kv.init(0, nd.ones((2, 2)))
    with pytest.raises(ValueError, match="key 0 is already initialised"):
        kv.init(0, nd.zeros((2, 2)))
    with pytest.raises(KeyError, match="key 5 has not been initialised"):
        kv.push(5, nd.ones((2, 2)))
    with pytest.raises(ValueError,
                       match=r"value of key 0 must have shape \(2, 2\) \(got \(3,\)\)"):
        kv.push(0, nd.ones((3,)))
    with pytest.raises(TypeError, match="keys must be all ints or all strs"):
        kv.init("a", nd.ones((1,)))
    with pytest.raises(ValueError, match="must be a list as long as the 2 keys"):
        kv.push([0, 1], nd.ones((2, 2)))
    with pytest.raises(TypeError, match="must be an NDArray or a list of NDArrays"):
        kv.push(0, np.ones((2, 2)))
    out = nd.zeros((2, 2))
    kv.pull(0, out=out)
    assert np.array_equal(out.asnumpy(), np.ones((2, 2)))


def test_set_optimizer_updates_the_stored_value_and_states_round_trip(tmp_path):
    kv = mx.kv.create("local")
    w0 = np.linspace(-1, 1, 6).astype(np.float32)
    kv.init(0, nd.array(w0))
    with pytest.raises(RuntimeError, match="call set_optimizer first"):
        kv.save_optimizer_states(str(tmp_path / "s"))
    with pytest.raises(TypeError, match="optimizer must be an Optimizer"):
        kv.set_optimizer("sgd")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.5))
    g = np.full(6, 0.25, np.float32)
    kv.push(0, [nd.array(g), nd.array(g, ctx=mx.cpu(1))])
    w = nd.zeros(6)
    kv.pull(0, out=w)
    mom = -0.5 * (2 * g)
    assert np.allclose(w.asnumpy(), w0 + mom)
    path = tmp_path / "states"
    kv.save_optimizer_states(str(path), dump_optimizer=True)
    states, opt = pickle.loads(path.read_bytes())
    assert np.allclose(states[0].asnumpy(), mom) and opt.momentum == 0.5
    kv.push(0, nd.array(g))                     # step 2: momentum m2
    m2 = 0.5 * mom - 0.5 * g
    kv.load_optimizer_states(str(path))         # back to the momentum of step 1
    kv.pushpull(0, nd.array(g), out=w)          # step 3 starts from it again: m2 again
    assert np.allclose(w.asnumpy(), w0 + mom + 2 * m2)
    with pytest.raises(ValueError, match="must hold states written by save_optimizer_states"):
        (tmp_path / "bad").write_bytes(b"not a pickle")
        kv.load_optimizer_states(str(tmp_path / "bad"))


def test_gradient_compression_on_device_against_numpy():
    kv = mx.kv.create("device")
    with pytest.raises(ValueError, match="type must be '2bit' or 'none'"):
        kv.set_gradient_compression({"type": "1bit"})
    with pytest.raises(ValueError, match="threshold must be a finite number > 0"):
        kv.set_gradient_compression({"type": "2bit", "threshold": 0})
    with pytest.raises(ValueError, match="must be 'device' or 'dist_"):
        mx.kv.create("local").set_gradient_compression({"type": "2bit"})
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.4})
    kv.init("g", nd.zeros(11))
    rng = np.random.default_rng(3)
    res = [np.zeros(11, np.float32), np.zeros(11, np.float32)]
    for step in range(4):
        vals = [rng.standard_normal(11).astype(np.float32) for _ in range(2)]
        xs = [nd.array(vals[0]), nd.array(vals[1], ctx=mx.cpu(1))]
        kv.pushpull("g", xs)
        want = np.zeros(11, np.float32)
        for j in range(2):
            res[j] += vals[j]
            q = np.where(res[j] >= 0.4, 0.4, np.where(res[j] <= -0.4, -0.4, 0)).astype(np.float32)
            res[j] -= q
            want += q
        for x in xs:
            assert np.array_equal(x.asnumpy(), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_2bit_kernels_against_numpy(dtype):
    rng = np.random.default_rng(1)
    grad = rng.standard_normal(13).astype(dtype)
    res = rng.standard_normal(13).astype(dtype) * 0.3
    want_res = res + grad
    sent = np.where(want_res >= 0.5, 0.5, np.where(want_res <= -0.5, -0.5, 0.0)).astype(dtype)
    want_res -= sent
    codes = np.empty(4, np.uint8)
    kernels.quantize_2bit(grad, res, 0.5, codes)
    assert np.array_equal(res, want_res)
    out = np.ones(13, dtype)
    kernels.dequantize_2bit_add(codes, 0.5, out)
    assert np.array_equal(out, 1 + sent)


def _packed(blocks):
    """The ranks' (ids, rows) packed as the dist store's Allgatherv delivers them."""
    parts, counts, offsets, at = [], [], [], 0
    for ids, rows in blocks:
        raw = np.asarray(ids, np.int64).tobytes() + np.ascontiguousarray(rows).tobytes()
        raw += bytes(-len(raw) % 8)
        parts.append(raw)
        counts.append(len(ids))
        offsets.append(at)
        at += len(raw)
    return (np.frombuffer(b"".join(parts), np.uint8), np.array(counts, np.int64),
            np.array(offsets, np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_merge_blocks_adds_in_rank_order_and_refuses_unsorted_ids(dtype):
    rng = np.random.default_rng(3)
    ids = [np.array([1, 4, 9]), np.array([], np.int64), np.array([0, 4, 12]), np.array([9])]
    rows = [rng.standard_normal((len(i), 3)).astype(dtype) for i in ids]
    buf, counts, offsets = _packed(zip(ids, rows))
    union = np.unique(np.concatenate(ids))
    total = sum(i.size for i in ids)
    got_ids = np.empty(total, np.int64)
    got = np.empty((total, 3), dtype)
    assert kernels.merge_blocks(buf, counts, offsets, got_ids, got) == (union.size, -1, -1)
    dense = np.zeros((13, 3), dtype)
    for i, r in zip(ids, rows):          # rank order, from zero
        dense[i] += r
    assert np.array_equal(got_ids[:union.size], union)
    assert np.array_equal(got[:union.size], dense[union])
    for block in ([(np.array([0, 2]), rows[0][:2]), (np.array([5, 5, 7]), rows[0])],
                  [(np.array([0, 2]), rows[0][:2]), (np.array([7, 5, 9]), rows[0])]):
        bad = _packed(block)
        assert kernels.merge_blocks(*bad, got_ids, got) == (-1, 1, 1)
    with pytest.raises(ValueError, match="merge_blocks: rank 3.s block must lie"):
        kernels.merge_blocks(buf, counts, offsets + np.array([0, 0, 0, 800]), got_ids, got)
    with pytest.raises(ValueError, match="must have room for the 7 rows"):
        kernels.merge_blocks(buf, counts, offsets, got_ids[:5], got[:5])


def test_refusals_of_the_store_are_mxnet_errors():
    kv = mx.kv.create()
    kv.init(3, nd.zeros((2, 2)))
    for call in (lambda: kv.init("a", nd.zeros((2, 2))), lambda: kv.push("a", nd.ones((2, 2))),
                 lambda: kv.pull("a", out=nd.zeros((2, 2)))):
        with pytest.raises(mx.MXNetError, match="keys must be all ints or all strs"):
            call()
    dense = nd.ones((2, 2))
    with pytest.raises(mx.MXNetError, match="row_sparse_pull: out of key 3 must be "
                       "row_sparse \\(got default\\)"):
        kv.row_sparse_pull(3, out=dense, row_ids=nd.array([1]))
    assert np.array_equal(dense.asnumpy(), np.ones((2, 2)))
    with pytest.raises(KeyError, match="key 5 has not been initialised"):
        kv.push(5, nd.ones((2, 2)))

