"""Iterators over other iterators (MXNet's ``PrefetchingIter`` and ``ResizeIter``)."""

import queue
import threading

from runtime.io._ndarray_iter import DataBatch, DataDesc, DataIter

__all__ = ["PrefetchingIter", "ResizeIter"]


class ResizeIter(DataIter):
    """Exactly ``size`` batches of ``data_iter`` per epoch: it is reset and read again
    when it ends early, and left where it stands when the epoch ends first
    (``reset_internal=False`` keeps it there across ``reset()`` too)."""

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__(data_iter.batch_size)
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"ResizeIter: size must be a positive integer (got {size!r})")
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self._provide_data = data_iter.provide_data
        self._provide_label = data_iter.provide_label

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def next(self):
        if self.cur == self.size:
            raise StopIteration
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return self.current_batch


def _fill(it, go, q, stop):
    """Read ``it`` one batch at a time into ``q``, each time ``go`` is set."""
    while True:
        go.wait()
        go.clear()
        if stop.is_set():
            return
        try:
            item = ("batch", it.next())
        except StopIteration:
            item = ("end", None)
        except BaseException as e:      # handed to the reader, raised there
            item = ("error", e)
        q.put(item)


def _renamed(descs, rename):
    if rename is None:
        return list(descs)
    return [DataDesc(rename.get(d.name, d.name), d.shape, d.dtype, d.layout) for d in descs]


class PrefetchingIter(DataIter):
    """The batches of ``iters`` (one iterator or a list), each read one batch ahead by
    its own thread; with several, a batch joins their data and labels in order.
    ``rename_data``/``rename_label`` (a dict per iterator) rename the descriptions."""

    def __init__(self, iters, rename_data=None, rename_label=None):
        iters = list(iters) if isinstance(iters, (list, tuple)) else [iters]
        if not iters:
            raise ValueError("PrefetchingIter: iters must hold at least one iterator")
        super().__init__(iters[0].batch_size)
        self.iters = iters
        self._provide_data = sum((_renamed(it.provide_data, (rename_data or [None] * len(
            iters))[i]) for i, it in enumerate(iters)), [])
        self._provide_label = sum((_renamed(it.provide_label, (rename_label or [None] * len(
            iters))[i]) for i, it in enumerate(iters)), [])
        self._queues = [queue.Queue(maxsize=1) for _ in iters]
        self._go = [threading.Event() for _ in iters]
        self._stop = threading.Event()
        self._ended = None
        # The threads hold the iterators and queues, not this object, so that dropping it
        # stops them (__del__).
        self._threads = [threading.Thread(target=_fill, daemon=True,
                                          args=(it, go, q, self._stop))
                         for it, go, q in zip(iters, self._go, self._queues)]
        for t, go in zip(self._threads, self._go):
            t.start()
            go.set()

    def next(self):
        items = [q.get() for q in self._queues]
        for kind, value in items:
            if kind == "error":
                raise value
        if any(kind == "end" for kind, _ in items):
            self._ended = items
            raise StopIteration
        for g in self._go:
            g.set()
        batches = [value for _, value in items]
        if len(batches) == 1:
            return batches[0]
        return DataBatch(sum((b.data for b in batches), []),
                         sum((b.label or [] for b in batches), []), pad=batches[0].pad,
                         index=batches[0].index, provide_data=self.provide_data,
                         provide_label=self.provide_label)

    def reset(self):
        """Reset every iterator (after the batches in flight are received)."""
        if self._ended is None:
            for q in self._queues:
                q.get()
        self._ended = None
        for it in self.iters:
            it.reset()
        for g in self._go:
            g.set()

    def __del__(self):
        if not hasattr(self, "_threads"):
            return
        self._stop.set()
        for g in self._go:
            g.set()
        for t, q in zip(self._threads, self._queues):
            t.join(timeout=5)
            while not q.empty():        # a batch read ahead: free it now
                q.get_nowait()
