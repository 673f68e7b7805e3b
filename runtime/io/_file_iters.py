"""MXNet's file iterators ``CSVIter``, ``LibSVMIter`` and ``MNISTIter``: a file (or
every file of a folder, in name order) read once into memory and served in batches by
:class:`~runtime.io.NDArrayIter`.

``CSVIter`` and ``LibSVMIter`` give every batch ``batch_size`` samples: the last one of an
epoch is completed with samples from the start of the data and ``batch.pad`` says how
many (MXNet's ``round_batch``; ndrt starts the next epoch at the first sample again, where
MXNet's ``round_batch=True`` goes on after the samples it borrowed).  ``MNISTIter`` serves
full batches only, as MXNet's.
"""

import os
import struct
import sys

import numpy as np

from runtime import nd
from runtime.io._ndarray_iter import NDArrayIter

__all__ = ["CSVIter", "LibSVMIter", "MNISTIter"]


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


def read_idx(who, f, path, magic, dims):
    """The uint8 array of shape ``dims`` values long held by the IDX file open as ``f``
    (MNIST's format: a big-endian magic number, the sizes, then the bytes); ``path``
    names it in errors."""
    head = f.read(4 + 4 * dims)
    if len(head) < 4 + 4 * dims or struct.unpack(">I", head[:4])[0] != magic:
        raise ValueError(f"{who}: {path!r} must be an IDX file with magic number {magic}")
    shape = struct.unpack(">" + "I" * dims, head[4:])
    values = np.frombuffer(f.read(), dtype=np.uint8)
    if values.size != int(np.prod(shape)):
        raise ValueError(f"{who}: {path!r} must hold {int(np.prod(shape))} values for its "
                         f"shape {shape} (got {values.size})")
    return values.reshape(shape)


def _read_idx_file(who, name, path, magic, dims):
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{who}: {name} must be an IDX file (no file at {path!r})")
    with open(path, "rb") as f:
        return read_idx(who, f, path, magic, dims)


class MNISTIter(_FileIter):
    """Batches of MNIST's IDX files (uncompressed), as MXNet's ``mx.io.MNISTIter``.

    Images come as float32 pixel values divided by 256 (MXNet's scaling), in batches of
    shape ``(batch_size, 1, rows, cols)``, or ``(batch_size, rows * cols)`` with
    ``flat=True``; labels as float32 of shape ``(batch_size,)`` named ``softmax_label``.
    Only full batches are served: the samples after the last full batch are never seen.

    Parameters
    ----------
    image, label : str
        Paths of the images (``*-images-idx3-ubyte``) and labels (``*-labels-idx1-ubyte``).
    batch_size : int
    shuffle : bool
        Shuffle the samples once, when the iterator is made; every epoch then visits
        them in that order (MXNet's).
    flat : bool
        Serve each image as one row of ``rows * cols`` values.
    seed : int
        The seed of that shuffle.
    silent : bool
        Without it, print the number of images and the batch shape to stderr.
    num_parts, part_index : int
        Serve the ``part_index``-th of ``num_parts`` contiguous parts of the files.
    dtype : str, optional
        The data's type; None keeps float32.

    Differences from MXNet: the shuffled order is NumPy's ``default_rng(seed)``
    permutation, not the one of MXNet's C++ engine; ``batch.index`` holds the source rows;
    ``prefetch_buffer`` and ``ctx`` are accepted and have no effect (the files are in
    memory).
    """

    def __init__(self, image="./train-images-idx3-ubyte", label="./train-labels-idx1-ubyte",
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False,
                 num_parts=1, part_index=0, prefetch_buffer=4, ctx="gpu", dtype=None,
                 **kwargs):
        who = "MNISTIter"
        for what, value in (("batch_size", batch_size), ("num_parts", num_parts)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{who}: {what} must be a positive int (got {value!r})")
        if isinstance(part_index, bool) or not isinstance(part_index, (int, np.integer)) \
                or not 0 <= part_index < num_parts:
            raise ValueError(f"{who}: part_index must be an int in [0, num_parts) (got "
                             f"part_index={part_index!r}, num_parts={num_parts})")
        images = _read_idx_file(who, "image", image, 2051, 3)
        labels = _read_idx_file(who, "label", label, 2049, 1)
        if images.shape[0] != labels.shape[0]:
            raise ValueError(f"{who}: image and label must hold as many samples ({image!r} "
                             f"holds {images.shape[0]}, {label!r} {labels.shape[0]})")
        n = images.shape[0]
        lo, hi = int(n / num_parts * part_index), int(n / num_parts * (part_index + 1))
        images, labels = images[lo:hi], labels[lo:hi]
        if hi - lo < batch_size:
            raise ValueError(f"{who}: batch_size must be at most the number of samples "
                             f"({hi - lo} in {image!r}) (got {batch_size})")
        if shuffle:
            order = np.random.default_rng(seed).permutation(hi - lo)
            images, labels = images[order], labels[order]
        rows, cols = images.shape[1:]
        shape = (rows * cols,) if flat else (1, rows, cols)
        data = (images.reshape((-1,) + shape) / np.float32(256)).astype(dtype or np.float32)
        if not silent:
            print(f"MNISTIter: load {hi - lo} images, shuffle={int(bool(shuffle))}, "
                  f"shape={(batch_size,) + shape}", file=sys.stderr)
        super().__init__(nd.array(data, dtype=data.dtype), nd.array(labels, dtype=np.float32),
                         batch_size, last_batch_handle="discard")
