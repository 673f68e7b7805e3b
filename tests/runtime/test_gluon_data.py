"""gluon.data datasets against plain Python/NumPy indexing."""

import numpy as np
import pytest

from runtime import nd
from runtime.gluon import data


def test_array_dataset_pairs_and_single():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = nd.array([0, 1, 2, 3])
    ds = data.ArrayDataset(x, y)
    assert len(ds) == 4
    sx, sy = ds[2]
    np.testing.assert_array_equal(sx, x[2])
    assert isinstance(sy, np.float32) and sy == 2
    single = data.ArrayDataset([5, 6, 7])
    assert [single[i] for i in range(3)] == [5, 6, 7]


def test_array_dataset_lengths_must_agree():
    with pytest.raises(ValueError, match=r"same length \(got 3 for array 0 and 2 for array 1\)"):
        data.ArrayDataset(np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match="at least one array"):
        data.ArrayDataset()


def test_simple_dataset_and_transforms():
    ds = data.SimpleDataset([(1, 10), (2, 20)])
    assert ds.transform(lambda a, b: a + b)[1] == 22
    assert ds.transform_first(lambda a: -a)[0] == (-1, 10)
    eager = data.SimpleDataset([1, 2, 3]).transform(lambda v: v * v, lazy=False)
    assert isinstance(eager, data.SimpleDataset) and [eager[i] for i in range(3)] == [1, 4, 9]
    with pytest.raises(TypeError, match="fn must be callable"):
        ds.transform(3)


def test_dataset_base_needs_its_methods():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        data.Dataset()[0]
