"""io.CSVIter, io.LibSVMIter, io.PrefetchingIter, io.ResizeIter on files written here,
against the rows NumPy/SciPy read from the same files (MXNet's documented examples)."""

import numpy as np
import pytest
import scipy.sparse

from runtime import io, nd
from tests.runtime.conftest import free_failing_tests


def test_csv_iter_rows_labels_and_padding(tmp_path):
    (tmp_path / "data.csv").write_text("1,2,3\n2,3,4\n3,4,5\n4,5,6\n")
    it = io.CSVIter(data_csv=str(tmp_path / "data.csv"), data_shape=(3,), batch_size=3)
    b1, b2 = list(it)
    np.testing.assert_array_equal(b1.data[0].asnumpy(), [[1, 2, 3], [2, 3, 4], [3, 4, 5]])
    np.testing.assert_array_equal(b2.data[0].asnumpy(), [[4, 5, 6], [1, 2, 3], [2, 3, 4]])
    assert b2.pad == 2 and b1.label[0].shape == (3,) and b1.label[0].asnumpy().sum() == 0
    (tmp_path / "label.csv").write_text("7\n8\n9\n10\n")
    it = io.CSVIter(data_csv=str(tmp_path / "data.csv"), data_shape=(3, 1),
                    label_csv=str(tmp_path / "label.csv"), batch_size=2, dtype="int64")
    b = next(it)
    assert b.data[0].shape == (2, 3, 1) and b.data[0].dtype == np.int64
    np.testing.assert_array_equal(b.label[0].asnumpy(), [7, 8])
    assert it.provide_data[0].shape == (2, 3, 1)
    with pytest.raises(ValueError, match=r"every row of .* must hold 4 values"):
        io.CSVIter(data_csv=str(tmp_path / "data.csv"), data_shape=(4,))
    with pytest.raises(FileNotFoundError, match="no file at"):
        io.CSVIter(data_csv=str(tmp_path / "none.csv"), data_shape=(3,))


def test_libsvm_iter_gives_csr_batches(tmp_path):
    (tmp_path / "data.t").write_text("1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n")
    it = io.LibSVMIter(data_libsvm=str(tmp_path / "data.t"), data_shape=(3,), batch_size=3)
    b1, b2 = list(it)
    assert b1.data[0].stype == "csr"
    ref = np.array([[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2], [0, 0, -1.2]], np.float32)
    np.testing.assert_array_equal(b1.data[0].asnumpy(), ref[:3])
    np.testing.assert_array_equal(b2.data[0].asnumpy(), ref[[3, 0, 1]])
    np.testing.assert_array_equal(b1.label[0].asnumpy(), [1, -2, -3])
    assert b2.pad == 2
    (tmp_path / "bad.t").write_text("1 2:1 1:3\n")
    with pytest.raises(ValueError, match="zero-based, ascending and below 3"):
        io.LibSVMIter(data_libsvm=str(tmp_path / "bad.t"), data_shape=(3,))
    half = io.LibSVMIter(data_libsvm=str(tmp_path / "data.t"), data_shape=(3,), batch_size=2,
                         num_parts=2, part_index=1)
    np.testing.assert_array_equal(next(half).data[0].asnumpy(), ref[2:])


def test_resize_iter_repeats_or_cuts():
    base = io.NDArrayIter(np.arange(6, dtype=np.float32), batch_size=2)
    r = io.ResizeIter(base, 5)
    got = [b.data[0].asnumpy().tolist() for b in r]
    assert got == [[0, 1], [2, 3], [4, 5], [0, 1], [2, 3]]
    r.reset()
    assert next(r).data[0].asnumpy().tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"size must be a positive integer \(got 0\)"):
        io.ResizeIter(base, 0)


def test_prefetching_iter_joins_and_resets():
    a = io.NDArrayIter(np.arange(8, dtype=np.float32).reshape(4, 2), np.arange(4), 2)
    b = io.NDArrayIter(-np.arange(4, dtype=np.float32), None, 2, data_name="other")
    p = io.PrefetchingIter([a, b], rename_data=[{"data": "x"}, {"other": "y"}])
    assert [d.name for d in p.provide_data] == ["x", "y"]
    for _ in range(2):
        batches = list(p)
        assert len(batches) == 2
        np.testing.assert_array_equal(batches[1].data[0].asnumpy(), [[4, 5], [6, 7]])
        np.testing.assert_array_equal(batches[1].data[1].asnumpy(), [-2, -3])
        np.testing.assert_array_equal(batches[0].label[0].asnumpy(), [0, 1])
        p.reset()
    single = io.PrefetchingIter(io.NDArrayIter(np.ones((3, 1), np.float32), batch_size=3))
    assert next(single).data[0].shape == (3, 1)
    single.reset()
    assert next(single).data[0].shape == (3, 1)


free_failing_tests(globals())
