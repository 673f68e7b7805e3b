"""Samplers (Gluon's ``gluon.data.sampler``): iterables of dataset indices, and of
batches of them, that a :class:`~runtime.gluon.data.DataLoader` draws from."""

import numpy as np

from runtime import _rng as _random

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
           "IntervalSampler"]

LAST_BATCH = ("keep", "discard", "rollover")


def _length(who, name, value, minimum=0):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{who}: {name} must be an integer >= {minimum} (got {value!r})")
    return int(value)


class Sampler:
    """The base of every sampler: ``__iter__`` yields indices, ``__len__`` says how many."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")


class SequentialSampler(Sampler):
    """The indices ``start, start + 1, ..., start + length - 1`` in order."""

    def __init__(self, length, start=0):
        self._length = _length("SequentialSampler", "length", length)
        self._start = _length("SequentialSampler", "start", start)

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """The indices ``0 .. length - 1`` in a new random order on every pass, drawn from
    ``runtime.random``'s generator (``runtime.random.seed`` makes the order
    reproducible; MXNet draws from NumPy's global state)."""

    def __init__(self, length):
        self._length = _length("RandomSampler", "length", length)

    def __iter__(self):
        return iter(_random.generator().permutation(self._length).tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices ``i`` of ``dataset`` whose sample satisfies ``fn(dataset[i])``, found
    once at construction."""

    def __init__(self, fn, dataset):
        if not callable(fn):
            raise TypeError(f"FilterSampler: fn must be callable (got {fn!r})")
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices drawn from ``sampler``.

    Parameters
    ----------
    sampler : Sampler or iterable of int
    batch_size : int
    last_batch : {'keep', 'discard', 'rollover'}
        What becomes of the indices left after the last full batch: 'keep' yields them
        as a shorter batch, 'discard' drops them, 'rollover' puts them at the start of
        the next pass.
    """

    def __init__(self, sampler, batch_size, last_batch="keep"):
        self._batch_size = _length("BatchSampler", "batch_size", batch_size, 1)
        if last_batch not in LAST_BATCH:
            raise ValueError(f"BatchSampler: last_batch must be one of {LAST_BATCH} (got "
                             f"{last_batch!r})")
        self._sampler = sampler
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        n, bs = len(self._sampler), self._batch_size
        if self._last_batch == "keep":
            return (n + bs - 1) // bs
        if self._last_batch == "discard":
            return n // bs
        return (len(self._prev) + n) // bs


class IntervalSampler(Sampler):
    """Every ``interval``-th index of ``0 .. length - 1``: ``0, interval, 2 * interval,
    ...``, then (``rollover=True``) the same from 1, from 2, ... until every index has
    been visited once (Gluon's ``gluon.contrib.data.IntervalSampler``, which language
    models use to cut a corpus into parallel streams)."""

    def __init__(self, length, interval, rollover=True):
        self._length = _length("IntervalSampler", "length", length)
        self._interval = _length("IntervalSampler", "interval", interval, 1)
        if self._interval >= max(self._length, 1):
            raise ValueError(f"IntervalSampler: interval must be smaller than length "
                             f"{self._length} (got {interval!r})")
        self._rollover = bool(rollover)

    def __iter__(self):
        for i in range(self._interval if self._rollover else 1):
            yield from range(i, self._length, self._interval)

    def __len__(self):
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))
