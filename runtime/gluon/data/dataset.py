"""Datasets (Gluon's ``gluon.data``): indexable collections of samples."""

import os

from runtime import nd, recordio
from runtime.gluon.data.sampler import FilterSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """The base of every dataset: ``__getitem__(idx)`` gives one sample, ``__len__`` the
    number of samples (Gluon's ``gluon.data.Dataset``)."""

    def __getitem__(self, idx):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true (found once, now)."""
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Part ``index`` of ``num_shards`` contiguous parts of near-equal length (the
        first ``len % num_shards`` parts one sample longer)."""
        for name, value in (("num_shards", num_shards), ("index", index)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"shard: {name} must be an int (got {value!r})")
        if num_shards < 1 or not 0 <= index < num_shards:
            raise ValueError(f"shard: index must be in [0, num_shards) with num_shards >= 1 "
                             f"(got index={index}, num_shards={num_shards})")
        length, rest = divmod(len(self), num_shards)
        start = length * index + min(index, rest)
        return _SampledDataset(self, SequentialSampler(length + (index < rest), start))

    def take(self, count):
        """The first ``count`` samples (all of them for None or a larger count)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields, in its order."""
        if not isinstance(sampler, Sampler):
            raise TypeError(f"sample: sampler must be a Sampler (got {type(sampler).__name__})")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """A dataset whose samples are ``fn(*sample)`` (``fn(sample)`` for a sample that
        is not a tuple); ``lazy=False`` applies ``fn`` to every sample now."""
        if not callable(fn):
            raise TypeError(f"transform: fn must be callable (got {fn!r})")
        ds = _LazyTransform(self, fn)
        return ds if lazy else SimpleDataset([ds[i] for i in range(len(ds))])

    def transform_first(self, fn, lazy=True):
        """As :meth:`transform`, applying ``fn`` to the first element of each sample."""
        if not callable(fn):
            raise TypeError(f"transform_first: fn must be callable (got {fn!r})")

        def first(*sample):
            return (fn(sample[0]),) + sample[1:] if len(sample) > 1 else fn(sample[0])
        return self.transform(first, lazy)


class _SampledDataset(Dataset):
    """The samples of ``data`` at the indices of ``sampler`` (fixed when made)."""

    def __init__(self, data, sampler):
        self._data = data
        self._indices = list(sampler)

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._data[self._indices[idx]]


class _LazyTransform(Dataset):
    def __init__(self, data, fn):
        self._data, self._fn = data, fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        return self._fn(*item) if isinstance(item, tuple) else self._fn(item)


class SimpleDataset(Dataset):
    """A dataset over any sequence with ``len`` and integer indexing (a list, an array)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class ArrayDataset(Dataset):
    """Samples made of the ``idx``-th element of each of ``args`` (NDArrays, NumPy arrays
    or sequences of the same length): one element per sample when one array is given, a
    tuple otherwise.  A 1-D NDArray is read as NumPy, so its element is a NumPy scalar,
    as in Gluon."""

    def __init__(self, *args):
        if not args:
            raise ValueError("ArrayDataset: needs at least one array (got none)")
        n = len(args[0])
        for i, a in enumerate(args):
            if len(a) != n:
                raise ValueError(f"ArrayDataset: every array must have the same length "
                                 f"(got {n} for array 0 and {len(a)} for array {i})")
        self._length = n
        self._data = [a.asnumpy() if isinstance(a, nd.NDArray) and a.ndim == 1 else a
                      for a in args]

    def __len__(self):
        return self._length

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(a[idx] for a in self._data)


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (``.rec``, with the ``.idx`` index beside it of the
    same stem) as raw bytes, in index order (Gluon's ``gluon.data.RecordFileDataset``).
    Each worker process of a DataLoader reads through its own file handle."""

    def __init__(self, filename):
        self.filename = os.fspath(filename)
        self.idx_file = os.path.splitext(self.filename)[0] + ".idx"
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
