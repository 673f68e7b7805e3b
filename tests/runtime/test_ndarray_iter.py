"""runtime.io.NDArrayIter: batching for each last_batch_handle against a NumPy
reference, shuffle reproducibility, CSR batches against SciPy row slices, what is a view
and what a copy, names and descriptors, bad arguments."""

import numpy as np
import pytest
import scipy.sparse as sp

from runtime import io, nd
from runtime import random as rt_random
from runtime.io import DataBatch, DataDesc, NDArrayIter
from tests.runtime.conftest import free_failing_tests

CSR_CONTAINERS = [sp.csr_matrix] + ([sp.csr_array] if hasattr(sp, "csr_array") else [])


def expected_rows(n, bs, handle, epochs):
    """Reference: the source rows of every batch of ``epochs`` unshuffled epochs."""
    out, carry = [], []
    for _ in range(epochs):
        seq = carry + list(range(n))
        carry = []
        batches = []
        for s in range(0, len(seq), bs):
            b = seq[s:s + bs]
            if len(b) < bs:
                if handle == "pad":
                    b = b + [seq[i % len(seq)] for i in range(bs - len(b))]
                elif handle == "roll_over":
                    carry = b
                    continue
                elif handle == "discard":
                    continue
            batches.append(b)
        out.append(batches)
    return out


def epochs_of(it, epochs):
    got = []
    for _ in range(epochs):
        got.append([b for b in it])
        it.reset()
    return got


@pytest.mark.parametrize("handle", ["pad", "discard", "roll_over", "keep"])
@pytest.mark.parametrize("n,bs", [(10, 3), (9, 3), (2, 5), (7, 1)])
def test_batches_for_each_last_batch_handle(handle, n, bs):
    x = np.arange(n * 2, dtype=np.float64).reshape(n, 2)
    y = np.arange(n)
    it = NDArrayIter(x, y, batch_size=bs, last_batch_handle=handle)
    want = expected_rows(n, bs, handle, 3)
    got = epochs_of(it, 3)
    for batches, rows in zip(got, want):
        assert len(batches) == len(rows)
        for b, r in zip(batches, rows):
            np.testing.assert_array_equal(b.data[0].asnumpy(), x[r].astype(np.float32))
            np.testing.assert_array_equal(b.label[0].asnumpy(), y[r].astype(np.float32))
            np.testing.assert_array_equal(b.index, r)
            pad = bs - (n % bs) if handle == "pad" and r is rows[-1] and n % bs else 0
            assert b.pad == pad


def test_roll_over_hard_reset_drops_the_carry():
    it = NDArrayIter(np.arange(5, dtype=np.float32), batch_size=2,
                     last_batch_handle="roll_over")
    assert [b.index.tolist() for b in it] == [[0, 1], [2, 3]]
    it.hard_reset()
    assert [b.index.tolist() for b in it] == [[0, 1], [2, 3]]
    it.reset()
    assert [b.index.tolist() for b in it] == [[4, 0], [1, 2], [3, 4]]


def test_shuffle_reproducible_and_complete():
    x = np.arange(23, dtype=np.float32)

    def run(seed=None):
        it = NDArrayIter(x, batch_size=5, shuffle=True, seed=seed, last_batch_handle="keep")
        return [np.concatenate([b.data[0].asnumpy() for b in epoch])
                for epoch in epochs_of(it, 2)]

    a, b = run(7), run(7)
    for ea, eb in zip(a, b):
        np.testing.assert_array_equal(ea, eb)
        np.testing.assert_array_equal(np.sort(ea), x)      # every sample once an epoch
    assert (a[0] != a[1]).any()                              # reshuffled at reset
    assert (a[0] != x).any()
    rt_random.seed(3)
    c = run()
    rt_random.seed(3)
    d = run()
    np.testing.assert_array_equal(c[0], d[0])
    np.testing.assert_array_equal(c[1], d[1])


def test_idx_is_the_order_the_epoch_serves():
    # MXNet's test_io.py reads it: with shuffle, batch i (size 1) is sample idx[i]
    x = np.arange(7, dtype=np.float32)
    it = NDArrayIter(x, batch_size=1, shuffle=True, seed=5)
    order = it.idx.copy()
    np.testing.assert_array_equal(np.sort(order), np.arange(7))
    np.testing.assert_array_equal([b.data[0].asnumpy()[0] for b in it], x[order])
    it.reset()
    assert (it.idx != order).any()
    np.testing.assert_array_equal(NDArrayIter(x, batch_size=2).idx, np.arange(7))


def test_shuffled_pad_and_discard():
    x = np.arange(10, dtype=np.float32)
    it = NDArrayIter(x, batch_size=4, shuffle=True, seed=0, last_batch_handle="pad")
    batches = list(it)
    seq = np.concatenate([b.data[0].asnumpy() for b in batches])
    assert len(batches) == 3 and batches[-1].pad == 2
    np.testing.assert_array_equal(np.sort(seq[:10]), x)
    np.testing.assert_array_equal(seq[10:], seq[:2])        # padded from the epoch's start
    it = NDArrayIter(x, batch_size=4, shuffle=True, seed=0, last_batch_handle="discard")
    assert [b.data[0].shape for b in it] == [(4,), (4,)]


@pytest.mark.parametrize("container", CSR_CONTAINERS)
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("handle", ["pad", "roll_over", "keep"])
def test_csr_batches_match_scipy_rows(container, shuffle, handle):
    m = container(sp.random(11, 6, density=0.3, format="csr", random_state=1))
    labels = np.arange(11, dtype=np.float32)
    it = NDArrayIter(m, labels, batch_size=4, shuffle=shuffle, seed=2,
                     last_batch_handle=handle)
    dense = m.toarray().astype(np.float32)
    for epoch in epochs_of(it, 2):
        assert epoch
        for b in epoch:
            d = b.data[0]
            assert d.stype == "csr" and d.dtype == np.float32
            np.testing.assert_array_equal(d.asscipy().toarray(), dense[b.index])
            if not shuffle and b.pad == 0 and b.index.size and \
                    (np.diff(b.index) == 1).all():
                np.testing.assert_array_equal(
                    d.asscipy().toarray(),
                    m[b.index[0]:b.index[-1] + 1].toarray().astype(np.float32))
            np.testing.assert_array_equal(b.label[0].asnumpy(), labels[b.index])


def test_csr_ndarray_source_is_used_as_is():
    c = nd.sparse.csr_matrix(np.eye(5, dtype=np.float64), dtype="float64")
    it = NDArrayIter(c, batch_size=2, last_batch_handle="discard")
    got = [b.data[0] for b in it]
    assert [g.dtype for g in got] == [np.float64, np.float64]
    np.testing.assert_array_equal(got[1].asscipy().toarray(), np.eye(5)[2:4])
    values = np.zeros((6, 4))
    values[[1, 4], [2, 0]] = [3.0, -1.0]          # rows 0, 2, 3, 5 empty
    c = nd.sparse.csr_matrix(values, dtype="float64")
    for b in NDArrayIter(c, batch_size=4, shuffle=True, seed=5, last_batch_handle="pad"):
        assert b.data[0].dtype == np.float64 and b.data[0].stype == "csr"
        np.testing.assert_array_equal(b.data[0].asscipy().toarray(), values[b.index])


def test_views_and_copies():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    it = NDArrayIter(x, batch_size=2)
    b = next(it)
    x[0, 0] = 100.0                       # float32 C-contiguous: borrowed, batches are views
    assert b.data[0].asnumpy()[0, 0] == 100.0
    x64 = np.arange(12.0).reshape(6, 2)
    b = next(NDArrayIter(x64, batch_size=2))
    x64[0, 0] = 100.0                     # copied once into float32 (MXNet's nd.array rule)
    assert b.data[0].dtype == np.float32 and b.data[0].asnumpy()[0, 0] == 0.0
    strided = np.arange(24, dtype=np.float32).reshape(6, 4)[:, ::2]
    b = next(NDArrayIter(strided, batch_size=3))
    np.testing.assert_array_equal(b.data[0].asnumpy(), strided[:3])
    src = nd.array(np.arange(6.0), dtype="float64")
    b = next(NDArrayIter(src, batch_size=4))
    assert b.data[0].dtype == np.float64
    src[1] = 7.0                          # an NDArray source: unshuffled batches are views
    assert b.data[0].asnumpy()[1] == 7.0


def test_names_descriptors_and_batch():
    it = NDArrayIter({"b": np.zeros((4, 3)), "a": np.ones((4, 2, 2))},
                     [np.zeros(4), np.ones(4)], batch_size=3)
    assert [d.name for d in it.provide_data] == ["a", "b"]
    assert it.provide_data[0] == DataDesc("a", (3, 2, 2)) and it.provide_data[0].shape == \
        (3, 2, 2)
    assert [(d.name, d.shape) for d in it.provide_label] == [("_0_softmax_label", (3,)),
                                                            ("_1_softmax_label", (3,))]
    b = next(it)
    assert isinstance(b, DataBatch) and len(b.data) == 2 and len(b.label) == 2
    np.testing.assert_array_equal(b.data[0].asnumpy(), np.ones((3, 2, 2)))
    assert NDArrayIter(np.zeros((2, 1)), data_name="x").provide_data[0].name == "x"
    assert NDArrayIter(np.zeros((2, 1))).provide_label == []
    assert it.getpad() == 0                # MXNet's: the pad of the current batch
    next(it)
    assert it.getpad() == 2                # the last one is padded by 2
    # MXNet's text, None for the label shapes of a batch without labels
    assert str(b) == "DataBatch: data shapes: [(3, 2, 2), (3, 3)] label shapes: [(3,), (3,)]"
    assert str(DataBatch([nd.ones((2, 3))])) == \
        "DataBatch: data shapes: [(2, 3)] label shapes: None"


def test_iter_next_and_getdata_walk_the_batches_as_mxnets():
    # MXNet 1.x's protocol: iter_next() moves to the next batch, getdata()/getlabel()/
    # getpad()/getindex() describe it; a loop on iter_next() ends with the epoch
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    y = np.arange(5, dtype=np.float32)
    it = NDArrayIter(x, y, batch_size=2, last_batch_handle="pad")
    with pytest.raises(RuntimeError, match=r"NDArrayIter: call iter_next\(\) \(or next\(\)\) "
                                           r"before reading the current batch"):
        it.getdata()
    seen = []
    while it.iter_next():
        (data,), (label,) = it.getdata(), it.getlabel()
        seen.append((data.asnumpy(), label.asnumpy(), it.getpad(), list(it.getindex())))
    assert [s[2] for s in seen] == [0, 0, 1]
    np.testing.assert_array_equal(seen[2][0], x[[4, 0]])           # padded with the first
    np.testing.assert_array_equal(seen[1][1], y[2:4])
    assert seen[2][3] == [4, 0]
    assert not it.iter_next()
    it.reset()
    assert it.iter_next() and it.getpad() == 0
    np.testing.assert_array_equal(next(it).data[0].asnumpy(), x[2:4])


def test_bad_arguments():
    x = np.zeros((4, 2))
    with pytest.raises(ValueError, match=r"NDArrayIter: batch_size must be an integer >= 1 "
                                         r"\(got 0\)"):
        NDArrayIter(x, batch_size=0)
    with pytest.raises(ValueError, match=r"NDArrayIter: last_batch_handle must be one of .* "
                                         r"\(got 'wrap'\)"):
        NDArrayIter(x, last_batch_handle="wrap")
    with pytest.raises(ValueError, match=r"NDArrayIter: every array must have the same number "
                                         r"of samples along axis 0 \('data' has 4, "
                                         r"'softmax_label' has 3\)"):
        NDArrayIter(x, np.zeros(3))
    with pytest.raises(ValueError, match=r"NDArrayIter: data must hold at least one sample"):
        NDArrayIter(np.zeros((0, 2)))
    with pytest.raises(ValueError, match=r"NDArrayIter: data must hold at least one array"):
        NDArrayIter([])
    with pytest.raises(TypeError, match=r"NDArrayIter: data must be a NumPy array, an NDArray "
                                        r"or a SciPy CSR matrix \(got str\)"):
        NDArrayIter({"data": "abc"})
    with pytest.raises(ValueError, match=r"NDArrayIter: seed must be an integer >= 0 "
                                         r"\(got -1\)"):
        NDArrayIter(x, shuffle=True, seed=-1)
    with pytest.raises(TypeError, match=r"NDArrayIter: shuffle must be a bool"):
        NDArrayIter(x, shuffle="yes")
    with pytest.raises(ValueError, match=r"NDArrayIter: data must have at least 1 dimension"):
        NDArrayIter(np.array(3.0, dtype=np.float32))
    with pytest.raises(TypeError, match=r"NDArrayIter: data must be dense or csr"):
        NDArrayIter(nd.sparse.row_sparse_array(np.eye(3, dtype=np.float32)))
    it = NDArrayIter(x, batch_size=4)
    next(it)
    with pytest.raises(StopIteration):
        next(it)


free_failing_tests(globals())


def test_data_iter_base_says_what_a_subclass_defines():
    """MXNet's DataIter protocol: a subclass defines next(); iteration and reset() come
    from the base."""
    class Twice(io.DataIter):
        def __init__(self):
            super().__init__(batch_size=1)
            self.n = 0

        def next(self):
            if self.n == 2:
                raise StopIteration
            self.n += 1
            return io.DataBatch([nd.array([self.n])])

    assert [int(b.data[0].asnumpy()[0]) for b in Twice()] == [1, 2]
    with pytest.raises(NotImplementedError, match="DataIter: a DataIter defines next()"):
        next(io.DataIter())
    assert io.DataIter().reset() is None


def test_a_python_iterator_may_assign_its_descriptors():
    # MXNet's iterators written in Python (mx.rnn.BucketSentenceIter, the examples' own)
    # set provide_data/provide_label as plain attributes in __init__
    class Pairs(io.DataIter):
        def __init__(self):
            super().__init__(2)
            self.provide_data = [DataDesc("data", (2, 3))]
            self.provide_label = (DataDesc("label", (2,)),)

    it = Pairs()
    assert it.provide_data == [DataDesc("data", (2, 3))]
    assert it.provide_label == [DataDesc("label", (2,))]
    assert io.DataIter().provide_data == []


def test_data_desc_keeps_the_dtype_it_was_given():
    # MXNet 1.9.1 prints an NDArrayIter's provide_data so (programs log it)
    it = io.NDArrayIter(data={"x": np.zeros((5, 2))}, label={"y": np.zeros(5)},
                           batch_size=2)
    assert repr(it.provide_data) == "[DataDesc[x,(2, 2),<class 'numpy.float32'>,NCHW]]"
    assert it.provide_label[0].dtype == np.float32
    desc = io.DataDesc("d", (1, 3), "float16", "NC")
    assert desc.dtype == "float16" and repr(desc) == "DataDesc[d,(1, 3),float16,NC]"
    with pytest.raises(TypeError):
        io.DataDesc("d", (1,), "no-such-type")
