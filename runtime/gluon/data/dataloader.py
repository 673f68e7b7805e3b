"""DataLoader (Gluon's ``gluon.data.DataLoader``): batches of a dataset, loaded in the
calling process, in worker threads, or in worker processes that hand batches back
through shared memory."""

import itertools
import multiprocessing
import multiprocessing.pool
import os
import signal
import weakref
from collections import deque

import numpy as np

from runtime import nd
from runtime import _rng as _random
from runtime.context import Context, num_gpus
from runtime.gluon.data import _shared_batch
from runtime.gluon.data.sampler import (BatchSampler, RandomSampler, Sampler,
                                        SequentialSampler)

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]


def default_batchify_fn(data):
    """One batch from a list of samples: NDArray samples stacked with ``nd.stack``,
    tuple samples batched field by field (a list of batches), anything else through
    ``np.asarray`` into an NDArray of the same dtype (Gluon's rule)."""
    if isinstance(data[0], nd.NDArray):
        return nd.stack(*data)
    if isinstance(data[0], tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    data = np.asarray(data)
    return nd.array(data, dtype=data.dtype)


def default_mp_batchify_fn(data):
    """:func:`default_batchify_fn` for worker processes: the same batch, made of
    ``Stack`` fields that the worker stacks straight into the shared-memory file the
    parent reads (so each value is copied once)."""
    if isinstance(data[0], tuple):
        return [default_mp_batchify_fn(list(field)) for field in zip(*data)]
    return _shared_batch.Stack(data)


def _as_in_context(data, ctx):
    if isinstance(data, nd.NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


# -- worker processes ----------------------------------------------------------------------
# The state a forked worker reads: set once by the pool initializer (fork passes the
# dataset and batchify function without pickling them).
_worker = {}
_loader_ids = itertools.count()


def _worker_init(dataset, batchify_fn, prefix, seed):
    # Ctrl-C goes to the parent, which stops the workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker.update(dataset=dataset, batchify_fn=batchify_fn, prefix=prefix,
                   count=itertools.count())
    # Forked workers would otherwise share the parent's random stream (identical random
    # augmentations in every worker).
    _random.seed((seed + os.getpid()) % 2 ** 32)


def _worker_fn(indices):
    """One batch in a worker: the path of its shared-memory file, its size, its skeleton."""
    dataset = _worker["dataset"]
    batch = _worker["batchify_fn"]([dataset[i] for i in indices])
    path = os.path.join(_shared_batch.SHM_DIR,
                        f"{_worker['prefix']}{os.getpid()}_{next(_worker['count'])}")
    size, skeleton = _shared_batch.pack(batch, path)
    return path, size, skeleton


def _stop_pool(pool, prefix):
    pool.terminate()
    pool.join()
    _shared_batch.sweep(prefix)


class _WorkerPool:
    """The worker processes of one DataLoader, kept across epochs.  ``stop`` (also run
    when the pool is collected and at interpreter exit) kills them, then removes every
    shared-memory file they left."""

    def __init__(self, dataset, batchify_fn, num_workers):
        self.prefix = f"ndrt_dl_{os.getpid()}_{next(_loader_ids)}_"
        seed = int(_random.generator().integers(2 ** 31))
        self.pool = multiprocessing.get_context("fork").Pool(
            num_workers, initializer=_worker_init,
            initargs=(dataset, batchify_fn, self.prefix, seed))
        self._stop = weakref.finalize(self, _stop_pool, self.pool, self.prefix)

    @property
    def running(self):
        return self._stop.alive

    def submit(self, indices):
        return self.pool.apply_async(_worker_fn, (indices,))

    def stop(self):
        self._stop()


class _MultiWorkerIter:
    """One pass over the batches computed by a :class:`_WorkerPool`, in order, with up to
    ``prefetch`` batches in flight."""

    def __init__(self, loader, workers):
        self._loader = loader
        self._workers = workers
        self._batches = iter(loader._batch_sampler)
        self._pending = deque()
        self._left = len(loader._batch_sampler)
        for _ in range(max(1, loader._prefetch)):
            self._push()

    def _push(self):
        indices = next(self._batches, None)
        if indices is not None:
            self._pending.append(self._workers.submit(indices))

    def __len__(self):
        return self._left

    def __iter__(self):
        return self

    def __next__(self):
        if not self._pending:
            raise StopIteration
        result = self._pending.popleft()
        self._push()
        try:
            path, size, skeleton = result.get(self._loader._timeout)
        except multiprocessing.TimeoutError:
            self._abandon()
            raise multiprocessing.TimeoutError(
                f"DataLoader: a worker took longer than timeout={self._loader._timeout}s "
                "for one batch (a slow transform, or a worker that died); the workers were "
                "stopped") from None
        except BaseException:
            # The worker's exception (re-raised here with its traceback as the cause):
            # stop every worker, so that no batch in flight is left behind.
            self._abandon()
            raise
        self._left -= 1
        batch = _shared_batch.unpack(path, size, skeleton)
        if self._loader._pin_memory:
            batch = self._loader._pin(batch)
        return batch

    def _abandon(self):
        self._pending.clear()
        self._loader._stop_workers()

    def close(self):
        """Receive the batches still in flight and remove their files (a pass left
        before its end); a worker that does not answer in time stops them all."""
        while self._pending:
            if not self._workers.running:      # stopped: its files are gone with it
                self._pending.clear()
                return
            result = self._pending.popleft()
            try:
                path, _, _ = result.get(self._loader._timeout)
            except BaseException:
                self._abandon()
                return
            _shared_batch.discard(path)

    def __del__(self):
        self.close()


def _positive_number(who, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                         np.floating)) or not value > 0:
        raise ValueError(f"{who}: {name} must be a positive number (got {value!r})")
    return value


class DataLoader:
    """Batches of a dataset (Gluon's ``gluon.data.DataLoader``).

    Parameters
    ----------
    dataset : Dataset
        Anything with ``__getitem__`` and ``__len__``.
    batch_size : int, optional
        Samples per batch; required unless ``batch_sampler`` is given.
    shuffle : bool
        Visit the samples in a new random order every pass (a :class:`RandomSampler`).
    sampler : Sampler, optional
        The order of the samples (not with ``shuffle``).
    last_batch : {'keep', 'discard', 'rollover'}, optional
        What becomes of an incomplete last batch (default 'keep'); see
        :class:`~runtime.gluon.data.BatchSampler`.
    batch_sampler : Sampler, optional
        Yields the list of indices of each batch; excludes ``batch_size``, ``shuffle``,
        ``sampler`` and ``last_batch``.
    batchify_fn : callable, optional
        Makes a batch of a list of samples; default :func:`default_batchify_fn` (in
        worker processes :func:`default_mp_batchify_fn`, which gives the same batches).
    num_workers : int
        0 loads batches in the calling process; more starts that many worker processes
        (forked, kept for the loader's life), which write each batch into a shared-memory
        file that the parent maps: the batch's NDArrays borrow that memory, outside the
        pool.  A negative value counts as 0.
    pin_memory : bool
        Return batches in page-locked host memory (``cpu_pinned(pin_device_id)``) for
        faster copies to a GPU.  Without an NVIDIA driver there is no page-locked memory
        to use and batches stay in ordinary host memory.
    pin_device_id : int
    prefetch : int, optional
        Batches computed ahead by the workers (default ``2 * num_workers``, at least 1).
    thread_pool : bool
        Use ``num_workers`` threads instead of processes (batches then come from
        :func:`default_batchify_fn` or ``batchify_fn`` unchanged).
    timeout : float
        Seconds to wait for one batch from a worker before stopping the workers and
        raising ``multiprocessing.TimeoutError`` (default 120).

    A worker's exception is raised by the iteration that reaches its batch, after every
    worker is stopped (they start again on the next pass).
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None, num_workers=0,
                 pin_memory=False, pin_device_id=0, prefetch=None, thread_pool=False,
                 timeout=120):
        who = "DataLoader"
        self._workers = None
        self._threads = None
        self._dataset = dataset
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError(f"{who}: batch_size must be given unless batch_sampler is")
            if sampler is None:
                sampler = RandomSampler(len(dataset)) if shuffle else \
                    SequentialSampler(len(dataset))
            elif shuffle:
                raise ValueError(f"{who}: shuffle must not be given with a sampler (got "
                                 f"shuffle={shuffle!r} and sampler={sampler!r})")
            batch_sampler = BatchSampler(sampler, batch_size,
                                         last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise ValueError(f"{who}: batch_size, shuffle, sampler and last_batch must not "
                             "be given with a batch_sampler")
        if not isinstance(batch_sampler, Sampler) and not hasattr(batch_sampler, "__len__"):
            raise TypeError(f"{who}: batch_sampler must be a Sampler (got "
                            f"{type(batch_sampler).__name__})")
        if isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer)):
            raise TypeError(f"{who}: num_workers must be an int (got {num_workers!r})")
        self._batch_sampler = batch_sampler
        self._num_workers = max(0, int(num_workers))
        self._pin_memory = bool(pin_memory)
        self._pin_device_id = pin_device_id
        self._thread_pool = bool(thread_pool)
        self._timeout = _positive_number(who, "timeout", timeout)
        if prefetch is not None and (isinstance(prefetch, bool) or not isinstance(
                prefetch, (int, np.integer)) or prefetch < 0):
            raise ValueError(f"{who}: prefetch must be an integer >= 0 (got {prefetch!r})")
        self._prefetch = int(prefetch) if prefetch is not None else 2 * self._num_workers
        if batchify_fn is not None and not callable(batchify_fn):
            raise TypeError(f"{who}: batchify_fn must be callable (got {batchify_fn!r})")
        self._batchify_fn = batchify_fn or default_batchify_fn
        self._mp_batchify_fn = batchify_fn or default_mp_batchify_fn

    def __len__(self):
        return len(self._batch_sampler)

    def _pin(self, batch):
        if num_gpus() == 0:
            return batch
        return _as_in_context(batch, Context("cpu_pinned", self._pin_device_id))

    def _load(self, indices):
        batch = self._batchify_fn([self._dataset[i] for i in indices])
        return self._pin(batch) if self._pin_memory else batch

    def __iter__(self):
        if self._num_workers == 0:
            return (self._load(indices) for indices in self._batch_sampler)
        if self._thread_pool:
            return self._thread_iter()
        if self._workers is None:
            self._workers = _WorkerPool(self._dataset, self._mp_batchify_fn,
                                        self._num_workers)
        return _MultiWorkerIter(self, self._workers)

    def _thread_iter(self):
        if self._threads is None:
            self._threads = multiprocessing.pool.ThreadPool(self._num_workers)
        pending = deque()
        batches = iter(self._batch_sampler)
        for indices in itertools.islice(batches, max(1, self._prefetch)):
            pending.append(self._threads.apply_async(self._load, (indices,)))
        while pending:
            result = pending.popleft()
            indices = next(batches, None)
            if indices is not None:
                pending.append(self._threads.apply_async(self._load, (indices,)))
            yield result.get(self._timeout)

    def _stop_workers(self):
        if self._workers is not None:
            self._workers.stop()
            self._workers = None

    def close(self):
        """Stop the worker processes or threads (they start again on the next pass)."""
        self._stop_workers()
        if self._threads is not None:
            self._threads.terminate()
            self._threads.join()
            self._threads = None

    def __del__(self):
        self.close()
