"""MXNet's file iterators ``CSVIter`` and ``LibSVMIter``: a file (or every file of a
folder, in name order) read once into memory and served in batches by
:class:`~runtime.io.NDArrayIter`.

Every batch has ``batch_size`` samples: the last one of an epoch is completed with
samples from the start of the data and ``batch.pad`` says how many (MXNet's
``round_batch``; ndrt starts the next epoch at the first sample again, where MXNet's
``round_batch=True`` goes on after the samples it borrowed).
"""

import os

import numpy as np

from runtime import nd
from runtime.io._ndarray_iter import NDArrayIter

__all__ = ["CSVIter", "LibSVMIter"]


def _files(who, name, path):
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if os.path.isfile(os.path.join(path, f)))
        if not files:
            raise FileNotFoundError(f"{who}: {name} folder {path!r} holds no file")
        return files
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{who}: {name} must be a file or a folder (no file at "
                                f"{path!r})")
    return [path]


def _shape(who, name, shape):
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{who}: {name} must be a tuple of ints (got {shape!r})") from None
    if not shape or any(s < 1 for s in shape):
        raise ValueError(f"{who}: {name} must be a non-empty tuple of positive ints (got "
                         f"{shape!r})")
    return shape


def _read_csv(who, name, path, shape, dtype):
    rows = []
    for f in _files(who, name, path):
        values = np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)
        rows.append(values)
    values = np.concatenate(rows) if rows else np.empty((0, int(np.prod(shape))), dtype)
    if values.shape[1] != int(np.prod(shape)):
        raise ValueError(f"{who}: every row of {path!r} must hold {int(np.prod(shape))} "
                         f"values for shape {shape} (got {values.shape[1]})")
    return values.reshape((-1,) + shape)


def _batch_shape(shape):
    """A label shape of (1,) gives batches of shape (batch_size,), as MXNet's."""
    return () if shape == (1,) else shape


class _FileIter(NDArrayIter):
    """The iterators that MXNet implements in C++ (its MXDataIter): one data and one
    label array, which getdata() and getlabel() return as such, not in a list."""

    def getdata(self):
        """The data array of the current batch."""
        return super().getdata()[0]

    def getlabel(self):
        """The label array of the current batch."""
        return super().getlabel()[0]


class CSVIter(_FileIter):
    """Batches of the rows of CSV files, each row reshaped to ``data_shape``; labels from
    ``label_csv`` (rows reshaped to ``label_shape``) or 0 without one.  ``dtype``
    'float32' (default), 'int32' or 'int64'."""

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=1,
                 round_batch=True, dtype="float32", data_name="data",
                 label_name="softmax_label", **kwargs):
        who = "CSVIter"
        dtype = np.dtype(dtype or "float32")
        if dtype not in (np.float32, np.int32, np.int64):
            raise ValueError(f"{who}: dtype must be 'float32', 'int32' or 'int64' (got "
                             f"{dtype})")
        data_shape = _shape(who, "data_shape", data_shape)
        label_shape = _shape(who, "label_shape", label_shape)
        data = _read_csv(who, "data_csv", data_csv, data_shape, dtype)
        if label_csv is None:
            label = np.zeros((len(data),) + _batch_shape(label_shape), np.float32)
        else:
            label = _read_csv(who, "label_csv", label_csv, label_shape, np.float32)
            label = label.reshape((len(label),) + _batch_shape(label_shape))
        super().__init__(nd.array(data, dtype=dtype), nd.array(label), batch_size,
                         last_batch_handle="pad", data_name=data_name, label_name=label_name)
        self.round_batch = round_batch


def _read_libsvm(who, name, path, width):
    """(labels, scipy CSR of ``width`` columns) of LibSVM lines ``label i:v i:v ...``
    with zero-based, ascending column indices."""
    import scipy.sparse     # noqa: PLC0415  (LAZY in test_layering: scipy.sparse)
    labels, indptr, indices, values = [], [0], [], []
    for f in _files(who, name, path):
        with open(f) as fin:
            for n, line in enumerate(fin):
                fields = line.split()
                if not fields:
                    continue
                try:
                    labels.append(float(fields[0]))
                    cols = [(int(c), float(v)) for c, v in (t.split(":") for t in fields[1:])]
                except ValueError:
                    raise ValueError(f"{who}: line {n + 1} of {f!r} must be 'label index:value "
                                     f"...' (got {line.strip()!r})") from None
                prev = -1
                for c, v in cols:
                    if not prev < c < width:
                        raise ValueError(f"{who}: line {n + 1} of {f!r}: column indices must be "
                                         f"zero-based, ascending and below {width} (got {c})")
                    prev = c
                    indices.append(c)
                    values.append(v)
                indptr.append(len(indices))
    m = scipy.sparse.csr_matrix((np.asarray(values, np.float32), np.asarray(indices, np.int64),
                                 np.asarray(indptr, np.int64)), shape=(len(labels), width))
    return np.asarray(labels, np.float32), m


class LibSVMIter(_FileIter):
    """Batches of LibSVM lines (zero-based, ascending column indices) as CSR data of
    ``data_shape = (width,)``, with the lines' first column as dense labels, or, given
    ``label_libsvm``, that file's entries as CSR labels of ``label_shape``.
    ``num_parts``/``part_index`` serve one contiguous part of the lines."""

    def __init__(self, data_libsvm, data_shape, label_libsvm=None, label_shape=(1,),
                 batch_size=1, round_batch=True, num_parts=1, part_index=0,
                 data_name="data", label_name="softmax_label", **kwargs):
        who = "LibSVMIter"
        data_shape = _shape(who, "data_shape", data_shape)
        label_shape = _shape(who, "label_shape", label_shape)
        if len(data_shape) != 1 or len(label_shape) != 1:
            raise ValueError(f"{who}: data_shape and label_shape must be 1-D (got "
                             f"{data_shape} and {label_shape})")
        if not 0 <= part_index < num_parts:
            raise ValueError(f"{who}: part_index must be in [0, num_parts) (got part_index="
                             f"{part_index}, num_parts={num_parts})")
        labels, data = _read_libsvm(who, "data_libsvm", data_libsvm, data_shape[0])
        if label_libsvm is not None:
            _, labels = _read_libsvm(who, "label_libsvm", label_libsvm, label_shape[0])
            if labels.shape[0] != data.shape[0]:
                raise ValueError(f"{who}: label_libsvm must have as many lines as "
                                 f"data_libsvm ({labels.shape[0]} and {data.shape[0]})")
        n = data.shape[0]
        lo, hi = n * part_index // num_parts, n * (part_index + 1) // num_parts
        super().__init__(data[lo:hi], labels[lo:hi], batch_size, last_batch_handle="pad",
                         data_name=data_name, label_name=label_name)
        self.round_batch = round_batch
