"""MXNet's ``NDArrayIter`` over NumPy arrays, NDArrays and SciPy CSR matrices.

What copies (and what does not):

- A NumPy source that is float32, C-contiguous and writeable is *borrowed*: batches read
  the caller's memory, nothing is copied at construction (so a later change to the
  NumPy array shows in the batches, and an in-place op on a batch changes the array).
  Any other NumPy source is copied once into a float32 NDArray (MXNet's ``nd.array``
  rule); an NDArray source is used as it is (its dtype is kept).
- A SciPy sparse source is copied once into a ``CSRNDArray`` (float32); a
  ``CSRNDArray`` is used as it is.
- Unshuffled dense batches that lie inside the data are views (``x[a:b]``, no copy);
  a CSR batch is a row slice (``x[a:b]``, which copies the rows' entries).
- Shuffled batches, the padded last batch and a batch that rolls over an epoch are
  gathered (one copy): NumPy's ``take`` into a new array that the batch borrows for
  dense sources on the host (``nd.take`` on a GPU), a vectorised row gather for CSR.
"""

from collections import namedtuple

import numpy as np

from runtime import _storage, nd
from runtime import _rng as _random
from runtime.context import cpu

HANDLES = ("pad", "discard", "roll_over", "keep")


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input (MXNet's ``DataDesc``)."""

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super().__new__(cls, name, tuple(shape))
        np.dtype(dtype)                 # refuses what is no dtype
        # kept as given, as MXNet keeps it (an iterator's NumPy scalar type prints as
        # <class 'numpy.float32'> in the repr)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"


class DataBatch:
    """One batch: ``data`` and ``label`` (lists of NDArrays, one per source), ``pad``
    (how many samples at the end repeat earlier ones to fill the batch), ``index``
    (the source rows of the batch, int64)."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError(f"DataBatch: data must be a list of NDArrays (got "
                            f"{type(data).__name__})")
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError(f"DataBatch: label must be a list of NDArrays (got "
                            f"{type(label).__name__})")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __repr__(self):
        shapes = [d.shape for d in self.data] if self.data else []
        # None without labels, as MXNet prints it
        lshapes = [d.shape for d in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {shapes} label shapes: {lshapes}"


class DataIter:
    """The iterator protocol of MXNet's data iterators: ``next()`` returns a
    :class:`DataBatch` or raises StopIteration at the end of an epoch; ``reset()``
    starts the next epoch."""

    _provide_data = ()
    _provide_label = ()

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    @property
    def provide_data(self):
        """``[DataDesc(name, (batch_size,) + shape, dtype)]`` of the data arrays of a
        batch.  A subclass may set it (MXNet's iterators written in Python assign
        ``self.provide_data = [...]`` in ``__init__``)."""
        return list(self._provide_data)

    @provide_data.setter
    def provide_data(self, descs):
        self._provide_data = list(descs)

    @property
    def provide_label(self):
        """The same for the label arrays (empty without labels); settable as well."""
        return list(self._provide_label)

    @provide_label.setter
    def provide_label(self, descs):
        self._provide_label = list(descs)

    def __next__(self):
        return self.next()

    def reset(self):
        """Start the next epoch; an iterator without state (MXNet's base) has nothing to
        rewind."""
        return None

    def next(self):
        raise NotImplementedError(f"{type(self).__name__}: a DataIter defines next() "
                                  "(return a DataBatch, raise StopIteration at the end)")


def _is_scipy_sparse(v):
    return type(v).__module__.startswith("scipy.sparse")


def _source(who, name, v):
    """``v`` as (NDArray, SciPy CSR or None) with the copy rules of the module doc."""
    if isinstance(v, nd.NDArray):
        if v.stype == "row_sparse":
            raise TypeError(f"{who}: {name} must be dense or csr (got a row_sparse array)")
        if v.ndim < 1:
            raise ValueError(f"{who}: {name} must have at least 1 dimension (got shape ())")
        return v, _host(v)
    if _is_scipy_sparse(v):
        m = v.tocsr()
        if m.ndim != 2:
            raise ValueError(f"{who}: {name} must be 2-D (got shape {m.shape!r})")
        arr = nd.sparse.array(m, dtype=np.float32)
        return arr, _host(arr)
    if isinstance(v, np.ndarray):
        if v.ndim < 1:
            raise ValueError(f"{who}: {name} must have at least 1 dimension (got shape ())")
        if v.dtype == np.float32 and v.flags.c_contiguous and v.flags.writeable:
            arr = nd.borrow(v, v.ctypes.data, v.shape, v.dtype, cpu())
        else:
            arr = nd.array(v, dtype=np.float32)
        return arr, _host(arr)
    raise TypeError(f"{who}: {name} must be a NumPy array, an NDArray or a SciPy CSR matrix "
                    f"(got {type(v).__name__})")


def _host(arr):
    """What batches are gathered from: (data, indptr, indices) of csr on the host (views
    of the storage; copies for a GPU array), the zero-copy NumPy view of a dense host
    array, None for a dense array on a GPU (gathered by ``take``)."""
    if arr.ctx.device_type == "gpu":
        return None if arr.stype != "csr" else tuple(
            part.asnumpy() for part in (arr.data, arr.indptr, arr.indices))
    if arr.stype == "csr":      # zero-copy views of the storage parts (int64 indices)
        return tuple(np.asarray(part) for part in (arr.data, arr.indptr, arr.indices))
    return np.asarray(arr)


def _csr_rows(arr, host, rows):
    """Rows ``rows`` of the csr ``arr`` as a new CSRNDArray: the entries gathered on the
    host in one vectorised pass and copied once into the pool (the source was checked
    when it was made, so its rows need no new check)."""
    data, indptr, indices = host
    starts = indptr[rows]
    counts = indptr[rows + 1] - starts
    ptr = np.zeros(rows.size + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    pos = np.repeat(starts - ptr[:-1], counts) + np.arange(ptr[-1])
    return _storage.from_parts("csr", (rows.size, arr.shape[1]), arr.dtype, arr.ctx,
                               data[pos], [ptr, indices[pos]], check=False)


def _sources(who, data, default_name, allow_empty):
    """MXNet's ``_init_data``: sorted ``[(name, NDArray, scipy or None)]``."""
    if data is None:
        if allow_empty:
            return []
        raise ValueError(f"{who}: data must be given")
    if isinstance(data, (np.ndarray, nd.NDArray)) or _is_scipy_sparse(data):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise ValueError(f"{who}: data must hold at least one array (got an empty list)")
        if len(data) == 1:
            data = {default_name: data[0]}
        else:
            data = {f"_{i}_{default_name}": d for i, d in enumerate(data)}
    if not isinstance(data, dict):
        raise TypeError(f"{who}: {default_name} must be an array, a list of arrays or a dict "
                        f"of them (got {type(data).__name__})")
    for k in data:
        if not isinstance(k, str):
            raise TypeError(f"{who}: names must be str (got {k!r})")
    return [(k,) + _source(who, k, v) for k, v in sorted(data.items())]


def _int(who, name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{who}: {name} must be an integer >= {minimum} (got {value!r})")
    return int(value)


class NDArrayIter(DataIter):
    """Batches of in-memory data (MXNet's ``mx.io.NDArrayIter``).

    Parameters
    ----------
    data : array, list of arrays or dict of them
        NumPy arrays, NDArrays (dense or csr) or SciPy CSR matrices, all with the same
        number of samples along axis 0.  A list gets the names ``data`` (one array) or
        ``_0_data``, ``_1_data``...; a dict is sorted by name (MXNet).
    label : same kinds, optional
    batch_size : int
    shuffle : bool
        Visit the samples in a new random order every epoch (at construction and at
        each ``reset``).
    last_batch_handle : {'pad', 'discard', 'roll_over', 'keep'}
        What to do with the samples left after the last full batch: 'pad' fills the
        batch with samples from the start of the epoch (``batch.pad`` says how many);
        'discard' drops them; 'roll_over' drops them from this epoch and puts them at
        the start of the next one (after ``reset()``); 'keep' (ndrt's addition)
        yields a shorter last batch.
    seed : int, optional
        Shuffle with ``numpy.random.default_rng(seed)``, own to this iterator; None
        draws from ``runtime.random``'s generator (``runtime.random.seed`` makes it
        reproducible).
    data_name, label_name : str
        The names of a single data / label array.

    Differences from MXNet: a roll-over batch has ``pad == 0`` (MXNet reports the number
    of rolled-over samples there, which are real samples, not padding); 'pad' wraps around
    as often as needed when there are fewer samples than ``batch_size``; ``batch.index``
    holds the source rows.  See the module doc for what copies.
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False,
                 last_batch_handle="pad", seed=None, data_name="data",
                 label_name="softmax_label"):
        who = "NDArrayIter"
        super().__init__(_int(who, "batch_size", batch_size, 1))
        if last_batch_handle not in HANDLES:
            raise ValueError(f"{who}: last_batch_handle must be one of {HANDLES} (got "
                             f"{last_batch_handle!r})")
        if not isinstance(shuffle, (bool, np.bool_)):
            raise TypeError(f"{who}: shuffle must be a bool (got {shuffle!r})")
        if seed is not None:
            seed = _int(who, "seed", seed, 0)
        for what, value in (("data_name", data_name), ("label_name", label_name)):
            if not isinstance(value, str):
                raise TypeError(f"{who}: {what} must be a str (got {value!r})")
        self.data = _sources(who, data, data_name, allow_empty=False)
        self.label = _sources(who, label, label_name, allow_empty=True)
        sizes = [(name, arr.shape[0]) for name, arr, _ in self.data + self.label]
        self.num_data = sizes[0][1]
        for name, n in sizes[1:]:
            if n != self.num_data:
                raise ValueError(f"{who}: every array must have the same number of samples "
                                 f"along axis 0 ({sizes[0][0]!r} has {self.num_data}, "
                                 f"{name!r} has {n})")
        if self.num_data == 0:
            raise ValueError(f"{who}: data must hold at least one sample (got 0)")
        self.shuffle = bool(shuffle)
        self.last_batch_handle = last_batch_handle
        self._provide_data = [DataDesc(k, (self.batch_size,) + v.shape[1:], v.dtype)
                              for k, v, _ in self.data]
        self._provide_label = [DataDesc(k, (self.batch_size,) + v.shape[1:], v.dtype)
                               for k, v, _ in self.label]
        self._rng = None if seed is None else np.random.default_rng(seed)
        self._leftover = np.empty(0, np.int64)
        self._new_epoch()

    # -- epochs --------------------------------------------------------------------------
    def _new_epoch(self):
        n = self.num_data
        if self.shuffle:
            rng = self._rng if self._rng is not None else _random.generator()
            order = rng.permutation(n).astype(np.int64)
        else:
            order = np.arange(n, dtype=np.int64)
        self._lead = self._leftover.size       # positions before this epoch's own order
        self._seq = np.concatenate([self._leftover, order]) if self._lead else order
        self._leftover = np.empty(0, np.int64)
        self._cursor = 0
        self._current = None          # start of the batch iter_next() moved to

    @property
    def idx(self):
        """The order in which this epoch serves the samples (MXNet's ``NDArrayIter.idx``:
        a permutation when ``shuffle``), without samples rolled over from the last one."""
        return self._seq[self._lead:]

    def reset(self):
        """Start the next epoch (reshuffled when ``shuffle``); with 'roll_over' the
        samples left over from this one come first."""
        if self.last_batch_handle == "roll_over":
            rest = self._seq.size % self.batch_size
            if rest and self._cursor >= self._seq.size - rest:
                self._leftover = self._seq[self._seq.size - rest:]
        self._new_epoch()

    def hard_reset(self):
        """Start the next epoch without rolled-over samples."""
        self._new_epoch()

    # -- batches -------------------------------------------------------------------------
    def _end(self):
        """Positions in this epoch's sequence that batches may start below."""
        n, bs = self._seq.size, self.batch_size
        if self.last_batch_handle in ("discard", "roll_over"):
            return n - n % bs
        return n

    def iter_next(self):
        """Move to the next batch and say whether there is one (MXNet's protocol: then
        :meth:`getdata`, :meth:`getlabel`, :meth:`getpad` and :meth:`getindex` describe
        it; ``next()`` is ``iter_next()`` and those in one call)."""
        start = self._cursor
        if start >= self._end():
            return False
        self._current = start
        self._cursor = start + self.batch_size
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data, label, pad, index = self._batch()
        return DataBatch(data, label, pad, index, None, self._provide_data,
                         self._provide_label)

    def _batch(self):
        """(data, label, pad, index) of the batch iter_next() moved to."""
        start = self._current
        if start is None:
            raise RuntimeError(f"{type(self).__name__}: call iter_next() (or next()) before "
                               "reading the current batch")
        bs, seq = self.batch_size, self._seq
        stop = min(start + bs, seq.size)
        pad = 0
        if not self.shuffle and start >= self._lead and (
                stop - start == bs or self.last_batch_handle != "pad"):
            a, b = start - self._lead, stop - self._lead      # contiguous rows: views
            data = [arr[a:b] for _, arr, _ in self.data]
            label = [arr[a:b] for _, arr, _ in self.label]
            index = seq[start:stop]
        else:
            index = seq[start:stop]
            if stop - start < bs and self.last_batch_handle == "pad":
                pad = bs - (stop - start)
                index = np.concatenate([index, seq[np.arange(pad) % seq.size]])
            data = [self._gather(arr, host, index) for _, arr, host in self.data]
            label = [self._gather(arr, host, index) for _, arr, host in self.label]
        return data, label, pad, index

    def getdata(self):
        """The data arrays of the current batch (a list, as MXNet's NDArrayIter)."""
        return self._batch()[0]

    def getlabel(self):
        """The label arrays of the current batch."""
        return self._batch()[1]

    def getindex(self):
        """The sample indices of the current batch."""
        return self._batch()[3]

    @staticmethod
    def _gather(arr, host, rows):
        if host is None:              # dense on a GPU
            return nd.take(arr, nd.array(rows, ctx=arr.ctx, dtype=np.int64), axis=0)
        if arr.stype == "csr":
            return _csr_rows(arr, host, rows)
        # NumPy's gather into a new array, which the batch borrows (one copy, no pool)
        values = np.take(host, rows, axis=0)
        return nd.borrow(values, values.ctypes.data, values.shape, values.dtype, arr.ctx)

    def getpad(self):
        """How many samples of the current batch pad it ('pad' repeats the first ones)."""
        if self._current is None:
            return 0
        left = self._seq.size - self._current
        if self.last_batch_handle == "pad" and 0 < left < self.batch_size:
            return self.batch_size - left
        return 0


__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter"]
