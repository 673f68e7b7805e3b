"""Batches handed from a DataLoader worker to its parent through POSIX shared memory.

A worker writes every array of one batch into one file under ``/dev/shm`` (named
``<prefix><worker pid>_<count>``) and sends only the file's name, its size and a small
skeleton of the batch through the pool's pipe.  The parent maps the file, unlinks it at
once (the mapping stays valid until the last array over it dies) and wraps each array
as an NDArray that borrows the mapped memory, so a batch's values are copied once, by
the worker, into memory the parent then reads in place (MXNet's ``cpu_shared`` context
plays that part).  Files a parent never received (a worker stopped, an iterator dropped)
are removed by :func:`sweep`, by prefix.
"""

import glob
import mmap
import os

import numpy as np

from runtime import nd
from runtime.context import cpu

SHM_DIR = "/dev/shm"
_ALIGN = 64

# Skeleton leaves: ("nd", offset, shape, dtype) an NDArray, ("np", ...) a NumPy array,
# ("obj", value) any other object (pickled with the skeleton); lists stay lists.


class Stack:
    """The samples of one field of a batch, to be stacked along a new first axis straight
    into the shared file (the default batchify run in a worker: one copy per value).
    Array samples (NDArrays, NumPy arrays) are stacked as ``nd.stack`` would; other
    samples (numbers) become ``np.asarray(samples)``, as Gluon's default batchify does."""

    def __init__(self, samples):
        if isinstance(samples[0], (nd.NDArray, np.ndarray)):
            self.parts = [np.asarray(s) for s in samples]
            self.dtype = np.result_type(*self.parts)
            self.shape = (len(samples),) + self.parts[0].shape
        else:
            self.parts = None
            whole = np.asarray(samples)
            self.whole, self.dtype, self.shape = whole, whole.dtype, whole.shape

    def write(self, view):
        if self.parts is None:
            view[...] = self.whole
        else:
            np.stack(self.parts, out=view)


def _is_leaf(batch):
    return isinstance(batch, (Stack, np.ndarray)) or (isinstance(batch, nd.NDArray)
                                                     and batch.stype == "default")


def _leaf_arrays(batch):
    """The array leaves of ``batch`` (nested lists/tuples of NDArrays, NumPy arrays and
    Stacks) in the order :func:`_write` visits them."""
    if isinstance(batch, (list, tuple)):
        return [a for b in batch for a in _leaf_arrays(b)]
    return [batch] if _is_leaf(batch) else []


def _round_up(n):
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def pack(batch, path):
    """Write the arrays of ``batch`` into a new shared-memory file ``path``; returns
    ``(size, skeleton)``.  The arrays of ``batch`` may be :class:`Stack` fields, stacked
    straight into the file."""
    leaves = _leaf_arrays(batch)
    layout, size = [], 0
    for a in leaves:
        nbytes = int(np.prod(a.shape, dtype=np.int64)) * np.dtype(a.dtype).itemsize
        layout.append(size)
        size += _round_up(nbytes)
    size = max(size, 1)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.ftruncate(fd, size)
        mm = mmap.mmap(fd, size)
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)
    try:
        offsets = iter(layout)
        skeleton = _write(batch, mm, offsets)
    except BaseException:
        mm.close()
        os.unlink(path)
        raise
    mm.close()
    return size, skeleton


def _write(batch, mm, offsets):
    if isinstance(batch, (list, tuple)):
        return [_write(b, mm, offsets) for b in batch]
    if _is_leaf(batch):
        offset = next(offsets)
        kind = "np" if isinstance(batch, np.ndarray) else "nd"
        dtype = np.dtype(batch.dtype)
        view = np.frombuffer(mm, dtype, int(np.prod(batch.shape, dtype=np.int64)),
                             offset).reshape(batch.shape)
        if isinstance(batch, Stack):
            batch.write(view)
        else:
            view[...] = batch if kind == "np" else np.asarray(batch)
        del view
        return (kind, offset, tuple(batch.shape), dtype.str)
    return ("obj", batch)


def unpack(path, size, skeleton):
    """The batch written by :func:`pack` into ``path``, its arrays borrowing the mapped
    file; the file is unlinked before this returns."""
    try:
        fd = os.open(path, os.O_RDWR)
        try:
            mm = mmap.mmap(fd, size)
        finally:
            os.close(fd)
    finally:
        os.unlink(path)
    return _read(skeleton, mm)


def _read(skeleton, mm):
    if isinstance(skeleton, list):
        return [_read(s, mm) for s in skeleton]
    if skeleton[0] == "obj":
        return skeleton[1]
    kind, offset, shape, dtype = skeleton
    dtype = np.dtype(dtype)
    arr = np.frombuffer(mm, dtype, int(np.prod(shape, dtype=np.int64)), offset).reshape(shape)
    if kind == "np":
        return arr
    return nd.borrow(arr, arr.ctypes.data, shape, dtype, cpu())


def discard(path):
    """Remove a file a parent received but will not read."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def sweep(prefix):
    """Remove every shared-memory file whose name starts with ``prefix``."""
    for path in glob.glob(os.path.join(SHM_DIR, glob.escape(prefix) + "*")):
        discard(path)


def leftovers(prefix):
    """The shared-memory files whose name starts with ``prefix`` (tests check none
    outlive a loader)."""
    return sorted(glob.glob(os.path.join(SHM_DIR, glob.escape(prefix) + "*")))
