"""Memory pools: one per device, four strategies, PyTorch-named statistics.

Thread safety: every pool operation runs with the GIL held and touches only C state
(no Python object is created or released in the middle of a structure update), so the
GIL is the pool lock.  Python code can run only at the upstream call and in
``gc.collect()``, and the pool is consistent at both points; a Buffer dying in a
destructor on any thread simply re-enters ``free``.  No lock, so nothing to deadlock
on and nothing to re-initialise after ``fork()``.  (The extension does not declare
free-threading support, so a free-threaded CPython re-enables the GIL on import.)
"""
import gc
import operator

cimport cython
from cpython.buffer cimport PyBUF_FORMAT
from cython.operator cimport dereference as deref, preincrement as inc
from libc.stdint cimport SIZE_MAX, int64_t, uintptr_t
from libc.stdlib cimport free as c_free, malloc as c_malloc
from libcpp.pair cimport pair
from libcpp.map cimport map as cmap
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from allocator._upstream cimport Upstream
from allocator.errors import OutOfMemoryError

# Larger requests are a caller's bug (a negative size cast to unsigned, a shape overflow).
MAX_ALLOC = 1 << 50
cdef size_t C_MAX_ALLOC = MAX_ALLOC

# bestfit geometry (after PyTorch's caching allocator): 512-byte granules; requests up
# to 1 MiB share 2 MiB segments, requests below max_split_size (10 MiB by default) share
# 20 MiB segments; larger ones get a segment of their own, rounded to 2 MiB and never
# split, that later serves only requests it fits within 1/4 of the request (at least
# 2 MiB).
cdef size_t MIN_BLOCK = 512
cdef size_t SMALL_SIZE = 1 << 20
cdef size_t SMALL_SEGMENT = 2 << 20
cdef size_t MEDIUM_SEGMENT = 20 << 20
cdef size_t SEGMENT_ROUND = 2 << 20
DEFAULT_MAX_SPLIT = 10 << 20
cdef size_t QUICK_MAX = 4096     # parked blocks at most (then they are all coalesced)
cdef enum SizeClass:
    CLS_SMALL = 0
    CLS_MEDIUM = 1
    CLS_LARGE = 2


cdef inline void stat_add(Stat* s, int64_t n) noexcept:
    s.current += n
    s.allocated += n
    if s.current > s.peak:
        s.peak = s.current


cdef inline void stat_sub(Stat* s, int64_t n) noexcept:
    s.current -= n
    s.freed += n


cdef inline size_t round_up(size_t n, size_t m) noexcept:
    return (n + m - 1) // m * m


cdef inline size_t next_pow2(size_t n) noexcept:
    cdef size_t p = 1
    while p < n:
        p <<= 1
    return p


def _fmt_bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024


def _integer(name, value):
    """``value`` as an int: any integral (``operator.index``); bool, float and str raise."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{name} must be an integer (got {type(value).__name__} {value!r})")
    return operator.index(value)


cdef dict _stat_dict(str name, Stat s):
    return {f"{name}.all.current": s.current, f"{name}.all.peak": s.peak,
            f"{name}.all.allocated": s.allocated, f"{name}.all.freed": s.freed}


cdef void _reset_peak(Stat* s) noexcept:
    s.peak = s.current


@cython.no_gc_clear  # __dealloc__ still needs the upstream
cdef class Pool:
    """A caching pool over one upstream.  Use a strategy subclass.

    Parameters
    ----------
    upstream : Upstream
        Source of raw memory.
    device : object, optional
        Label of the device (shown in messages and ``Buffer.device``).
    limit : int, optional
        Most bytes the pool may reserve from the upstream; 0 means no limit.
    """

    def __cinit__(self, *args, **kwargs):
        # Pool leaves the strategy interface empty: a bare one would fail on its first
        # free, inside a Buffer's __dealloc__, where the error is lost and the block leaks.
        if not isinstance(self, (NaivePool, BestFitPool, UnpooledPool)):
            raise TypeError(f"{type(self).__name__} is abstract: a pool must be a NaivePool, "
                            "RoundPool, BestFitPool or UnpooledPool (or a subclass of one)")

    def __init__(self, Upstream upstream not None, device=None, limit=0):
        self.upstream = upstream
        self.device = device if device is not None else f"{upstream.kind}({upstream.device_id})"
        self.set_limit(limit)
        self.caching = True

    def __dealloc__(self):
        # Strategies release their cache in their own __dealloc__: by the time this
        # base one runs, Cython has already destroyed the subclass's C++ containers.
        cdef Block* b
        for b in self.spare:
            c_free(b)
        self.spare.clear()

    def __repr__(self):
        return f"<{type(self).__name__} {self.device}>"

    cdef void release_at_dealloc(self) noexcept:
        try:
            if not self.poisoned:
                self.release_cache()
        except BaseException:
            pass  # interpreter shutdown: the process gives the memory back

    # -- the C-level API the array runtime calls -------------------------------------

    cdef Block* malloc(self, size_t nbytes) except NULL:
        """Allocate ``nbytes`` (> 0); the returned block belongs to the caller until ``free``."""
        cdef size_t r
        cdef Block* b
        if self.poisoned:
            raise RuntimeError(self.poison_reason)
        if nbytes == 0 or nbytes > C_MAX_ALLOC:
            raise ValueError(f"nbytes must be in [1, 2**50] for a pool block (got {nbytes})")
        r = self.round_size(nbytes)
        b = self.take_cached(r)
        if b == NULL:
            b = self.alloc_miss(nbytes, r)
        else:
            self.n_hits += 1
        b.state = ALLOCATED
        b.requested = nbytes
        stat_add(&self.st_allocated, b.size)
        if self.st_allocated.current > self.window_peak:
            self.window_peak = self.st_allocated.current
        stat_add(&self.st_requested, nbytes)
        stat_add(&self.st_allocation, 1)
        return b

    cdef int free_block(self, Block* b) except -1:
        """Return a block that ``malloc`` of this pool handed out (double frees raise)."""
        if b == NULL:
            raise ValueError("cannot free a NULL block")
        if b.pool != <void*>self:
            raise ValueError(f"block at 0x{b.ptr:x} belongs to another pool, not {self!r}")
        if b.state != ALLOCATED:
            raise ValueError(f"double free of the block at 0x{b.ptr:x} ({b.size} bytes) "
                             f"in {self!r}")
        stat_sub(&self.st_allocated, b.size)
        stat_sub(&self.st_requested, b.requested)
        stat_sub(&self.st_allocation, 1)
        b.requested = 0
        if self.poisoned:
            # Forked child: the memory belongs to the parent's context; forget it.
            stat_sub(&self.st_reserved, b.size)
            stat_sub(&self.st_segment, 1)
            self.recycle(b)
        elif self.caching:
            self.cache_block(b)
        else:
            self.release_segment(b)
        return 0

    cdef Buffer buffer(self, size_t nbytes, bint owned=True):
        """A Buffer of ``nbytes``.  An ``owned`` one is for a C-level holder (an array's
        chunk) that frees it by dying: its free() is refused, so that nobody who reaches it
        (through gc.get_referents, say) can hand the holder's memory to someone else."""
        cdef Buffer buf = Buffer.__new__(Buffer)
        buf.pool = self
        buf.owned = owned
        if nbytes:
            buf.block = self.malloc(nbytes)
            buf.ptr = buf.block.ptr
            buf.size = nbytes
        return buf

    # -- strategy interface (overridden by subclasses) --------------------------------

    cdef size_t round_size(self, size_t nbytes) except 0:
        return nbytes

    cdef size_t segment_size(self, size_t rounded) except 0:
        return rounded

    cdef Block* take_cached(self, size_t rounded) except? NULL:
        return NULL

    cdef Block* carve(self, Block* segment, size_t rounded) except NULL:
        return segment

    cdef int cache_block(self, Block* b) except -1:
        raise NotImplementedError

    cdef int pop_free_segments(self, vector[Block*]& out) except -1:
        return 0

    cdef size_t largest_free(self):
        return 0

    cdef int before_grow(self, size_t seg) except -1:
        """Called on a miss before the pool asks the upstream for ``seg`` more bytes;
        returns 1 when the cache changed so that it is worth searching again."""
        return 0

    cdef void init_segment(self, Block* b, size_t rounded) noexcept:
        """Called on a fresh segment taken for a request of ``rounded`` bytes."""

    # -- shared machinery ----------------------------------------------------------

    cdef Block* new_block(self, uintptr_t ptr, size_t size) except NULL:
        cdef Block* b
        if self.spare.empty():
            b = <Block*>c_malloc(sizeof(Block))
            if b == NULL:
                raise MemoryError("no memory left for a pool block descriptor")
        else:
            b = self.spare.back()
            self.spare.pop_back()
        b.ptr = ptr
        b.size = size
        b.requested = 0
        b.prev = NULL
        b.next = NULL
        b.pool = <void*>self
        b.state = CACHED
        b.cls = 0
        return b

    cdef void recycle(self, Block* b):
        b.state = RELEASED
        b.prev = NULL
        b.next = NULL
        self.spare.push_back(b)

    cdef uintptr_t upstream_alloc(self, size_t nbytes) except? 0:
        cdef uintptr_t p
        if self.limit and <size_t>self.st_reserved.current + nbytes > self.limit:
            return 0
        p = self.upstream.alloc(nbytes)
        if p:
            self.n_upstream_alloc += 1
        return p

    cdef size_t segment_within_limit(self, size_t rounded) except 0:
        """The strategy's segment for a request of ``rounded`` bytes, shrunk to the room the
        limit leaves when the request fits there but the usual segment does not."""
        cdef size_t seg = self.segment_size(rounded)
        cdef size_t reserved = self.st_reserved.current
        cdef size_t room
        if not self.limit or seg == rounded or reserved + seg <= self.limit:
            return seg
        room = self.limit - reserved if self.limit > reserved else 0
        if rounded > room:
            return seg   # fits neither way: the ladder may make room, or it raises
        room = room // MIN_BLOCK * MIN_BLOCK   # whole granules, never below the request
        return room if room > rounded else rounded

    cdef Block* alloc_miss(self, size_t nbytes, size_t rounded) except NULL:
        cdef size_t seg = self.segment_within_limit(rounded)
        cdef uintptr_t p
        cdef Block* b
        self.n_misses += 1
        if self.before_grow(seg):
            b = self.take_cached(rounded)   # the strategy reorganised its cache
            if b != NULL:
                return b
        p = self.upstream_alloc(seg)
        if p == 0:
            # The ladder: give back the cache, let Python drop dead arrays, retry.
            self.n_retries += 1
            self.release_cache()
            gc.collect()
            if self.poisoned:
                raise RuntimeError(self.poison_reason)
            b = self.take_cached(rounded)
            if b != NULL:
                return b
            seg = self.segment_within_limit(rounded)   # the cache gone, more room may fit
            p = self.upstream_alloc(seg)
            if p == 0:
                self.n_ooms += 1
                raise OutOfMemoryError(self._oom_message(nbytes, rounded, seg))
        try:
            b = self.new_block(p, seg)
        except BaseException:
            self.upstream.free(p, seg)
            raise
        stat_add(&self.st_reserved, seg)
        stat_add(&self.st_segment, 1)
        self.init_segment(b, rounded)
        return self.carve(b, rounded)

    cdef int release_segment(self, Block* b) except -1:
        cdef uintptr_t p = b.ptr
        cdef size_t size = b.size
        stat_sub(&self.st_reserved, size)
        stat_sub(&self.st_segment, 1)
        self.recycle(b)
        self.n_upstream_free += 1
        self.upstream.free(p, size)
        return 0

    cdef int release_cache(self) except -1:
        cdef vector[Block*] segs
        cdef Block* b
        error = None
        self.pop_free_segments(segs)
        for b in segs:
            try:
                self.release_segment(b)
            except BaseException as e:  # keep going: the rest must not leak
                error = e
        if error is not None:
            raise error
        return 0

    def _oom_message(self, nbytes, rounded, seg):
        # Called after the ladder: the cache already went back, so the remedy never says
        # to empty it.
        fb = _fmt_bytes
        allocated = self.st_allocated.current
        cached = self.st_reserved.current - allocated
        limited = self.limit and self.st_reserved.current + seg > self.limit
        raise_limit = f"allocator.set_limit(..., device={str(self.device)!r})"
        if not allocated:
            if limited:
                remedy = (f"the limit of {fb(self.limit)} is too small for this request: "
                          f"raise it with {raise_limit}")
            else:
                remedy = (f"{self.device} could not provide {fb(seg)} with nothing allocated "
                          "from this pool: free memory held elsewhere (other pools, other "
                          "processes) or use a device with more memory")
                if self.upstream.kind == "gpu":
                    remedy += " (NDRT_GPU_MEM_POOL_RESERVE keeps a share of it free)"
        else:
            remedy = "free arrays you no longer need (del them) or " + (
                f"raise the limit with {raise_limit}" if limited else
                "make the request smaller")
            if cached:
                remedy += (f"; the pool already emptied its cache: the {fb(cached)} still "
                           "cached are gaps between live blocks")
        return (f"out of memory on {self.device}: tried to allocate {fb(nbytes)} "
                f"({nbytes} bytes requested, {rounded} rounded, {seg} from the upstream); "
                f"allocated {fb(self.st_allocated.current)}, reserved "
                f"{fb(self.st_reserved.current)}, cached {fb(cached)}, largest free block "
                f"{fb(self.largest_free())}, limit "
                f"{fb(self.limit) if self.limit else 'none'} ({self.strategy} pool). "
                f"Remedy: {remedy}.")

    # -- Python API ---------------------------------------------------------------------

    def alloc(self, nbytes):
        """Allocate ``nbytes`` bytes and return a :class:`Buffer` owning them.

        Raises
        ------
        TypeError
            ``nbytes`` is not an integer.
        ValueError
            ``nbytes`` is negative or larger than 2**50.
        OutOfMemoryError
            The upstream or the limit refused even after the cache was emptied.
        """
        cdef Py_ssize_t n
        if type(nbytes) is not int:
            nbytes = _integer("nbytes", nbytes)
        if nbytes < 0 or nbytes > MAX_ALLOC:
            raise ValueError(f"nbytes must be in [0, 2**50] (got {nbytes})")
        n = nbytes
        return self.buffer(<size_t>n, False)

    def free(self, Buffer buf not None):
        """Free ``buf`` now; it must come from this pool and not be freed already."""
        if buf.pool is not None and buf.pool is not self:
            raise ValueError(f"buffer {buf!r} belongs to {buf.pool!r}, not {self!r}")
        buf.free()

    def empty_cache(self):
        """Return every fully free cached segment to the upstream."""
        if not self.poisoned:
            self.release_cache()

    def set_limit(self, limit):
        """Cap the bytes reserved from the upstream.  Takes effect on the next miss.

        ``limit`` is any integral number of bytes in [0, 2**64 - 1]; 0 means no limit.
        Larger values raise ValueError rather than meaning "no limit": 0 already says that.
        """
        limit = _integer("limit", limit)
        if not 0 <= limit <= SIZE_MAX:
            raise ValueError(f"limit must be >= 0 and <= 2**{8 * sizeof(size_t)} - 1 bytes, "
                             f"0 meaning no limit (got {limit})")
        self.limit = limit

    def memory_stats(self):
        """Statistics under PyTorch's key names (``allocated_bytes.all.current`` ...)."""
        d = {}
        d.update(_stat_dict("allocated_bytes", self.st_allocated))
        d.update(_stat_dict("active_bytes", self.st_allocated))
        d.update(_stat_dict("reserved_bytes", self.st_reserved))
        d.update(_stat_dict("requested_bytes", self.st_requested))
        d.update(_stat_dict("allocation", self.st_allocation))
        d.update(_stat_dict("active", self.st_allocation))
        d.update(_stat_dict("segment", self.st_segment))
        d["num_alloc_retries"] = self.n_retries
        d["num_ooms"] = self.n_ooms
        d["num_cache_hits"] = self.n_hits
        d["num_cache_misses"] = self.n_misses
        d["num_device_alloc"] = self.n_upstream_alloc
        d["num_device_free"] = self.n_upstream_free
        d["cached_bytes"] = self.st_reserved.current - self.st_allocated.current
        d["largest_free_block"] = self.largest_free()
        d["limit"] = self.limit
        return d

    def reset_peak_stats(self):
        """Set every peak to its current value."""
        _reset_peak(&self.st_allocated)
        _reset_peak(&self.st_reserved)
        _reset_peak(&self.st_requested)
        _reset_peak(&self.st_allocation)
        _reset_peak(&self.st_segment)

    def mark_peak(self):
        """Start a window for ``peak_since_mark``; returns the allocated bytes now.

        A second peak that leaves the user's ``reset_peak_stats`` figures alone: the
        backward executor reports its own peak with it.  One window at a time per pool.
        """
        self.window_peak = self.st_allocated.current
        return self.window_peak

    def peak_since_mark(self):
        """The most allocated bytes since the last ``mark_peak`` (or since creation)."""
        return max(self.window_peak, self.st_allocated.current)

    def memory_summary(self):
        """A human-readable table of the statistics."""
        s = self.memory_stats()
        rows = [("allocated", "allocated_bytes"), ("requested", "requested_bytes"),
                ("reserved", "reserved_bytes")]
        out = [f"ndrt memory summary: {self.device} ({self.strategy} pool, limit "
               f"{_fmt_bytes(self.limit) if self.limit else 'none'})",
               f"{'':<12}{'current':>14}{'peak':>14}{'total alloc':>14}{'total freed':>14}"]
        for label, key in rows:
            out.append(f"{label:<12}" + "".join(
                f"{_fmt_bytes(s[f'{key}.all.{k}']):>14}"
                for k in ("current", "peak", "allocated", "freed")))
        for label, key in (("allocations", "allocation"), ("segments", "segment")):
            out.append(f"{label:<12}" + "".join(
                f"{s[f'{key}.all.{k}']:>14,}" for k in ("current", "peak", "allocated", "freed")))
        out.append(f"cached {_fmt_bytes(s['cached_bytes'])}, largest free block "
                   f"{_fmt_bytes(s['largest_free_block'])}; cache hits {s['num_cache_hits']:,}, "
                   f"misses {s['num_cache_misses']:,}, retries {s['num_alloc_retries']}, "
                   f"OOMs {s['num_ooms']}")
        return "\n".join(out)

    def _poison(self, reason):
        """Forget every cached block without freeing it and refuse new allocations.

        Used in a forked child for device pools whose memory the child cannot touch.
        """
        cdef vector[Block*] segs
        self.poison_reason = reason
        self.poisoned = True
        self.pop_free_segments(segs)
        for b in segs:
            stat_sub(&self.st_reserved, b.size)
            stat_sub(&self.st_segment, 1)
            self.recycle(b)


cdef class NaivePool(Pool):
    """MXNet's exact-size pool: sizes rounded up to the page (above
    ``large_alloc_round_size`` to its multiples); a block is reused only by a request
    of the same rounded size."""

    def __init__(self, Upstream upstream not None, device=None, limit=0, *,
                 page_size=4096, large_alloc_round_size=2 << 20):
        super().__init__(upstream, device, limit)
        page_size = _check_pow2("page_size", page_size, 64)
        large_alloc_round_size = _integer("large_alloc_round_size", large_alloc_round_size)
        if large_alloc_round_size <= 0 or large_alloc_round_size % page_size:
            raise ValueError(f"large_alloc_round_size must be a positive multiple of "
                             f"page_size={page_size} (got {large_alloc_round_size})")
        self.page_size = page_size
        self.large_round = large_alloc_round_size
        self.strategy = "naive"

    def __dealloc__(self):
        self.release_at_dealloc()

    cdef size_t round_size(self, size_t nbytes) except 0:
        if nbytes <= self.large_round:
            return round_up(nbytes, self.page_size)
        return round_up(nbytes, self.large_round)

    cdef Block* take_cached(self, size_t rounded) except? NULL:
        cdef Block* b
        it = self.free_lists.find(rounded)
        if it == self.free_lists.end() or deref(it).second.empty():
            return NULL
        b = deref(it).second.back()
        deref(it).second.pop_back()
        self.n_cached -= 1
        return b

    cdef int cache_block(self, Block* b) except -1:
        b.state = CACHED
        self.free_lists[b.size].push_back(b)
        self.n_cached += 1
        return 0

    cdef int pop_free_segments(self, vector[Block*]& out) except -1:
        it = self.free_lists.begin()
        while it != self.free_lists.end():
            for b in deref(it).second:
                out.push_back(b)
            inc(it)
        self.free_lists.clear()
        self.n_cached = 0
        return 0

    cdef size_t largest_free(self):
        cdef size_t best = 0
        it = self.free_lists.begin()
        while it != self.free_lists.end():
            if not deref(it).second.empty() and deref(it).first > best:
                best = deref(it).first
            inc(it)
        return best


cdef class RoundPool(NaivePool):
    """MXNet's bucketed pool: powers of two from one page up to ``2**round_cutoff``,
    multiples of ``2**round_cutoff`` above; reuse within a bucket."""

    def __init__(self, Upstream upstream not None, device=None, limit=0, *,
                 page_size=4096, round_cutoff=24):
        round_cutoff = _integer("round_cutoff", round_cutoff)
        if not 12 <= round_cutoff <= 40:
            raise ValueError(f"round_cutoff must be an integer in [12, 40] (got {round_cutoff!r})")
        if (1 << round_cutoff) < page_size:
            raise ValueError(f"2**round_cutoff must be >= page_size={page_size} "
                             f"(got round_cutoff={round_cutoff})")
        super().__init__(upstream, device, limit, page_size=page_size,
                         large_alloc_round_size=1 << round_cutoff)
        self.cutoff_bytes = 1 << round_cutoff
        self.strategy = "round"

    cdef size_t round_size(self, size_t nbytes) except 0:
        if nbytes <= self.page_size:
            return self.page_size
        if nbytes <= self.cutoff_bytes:
            return next_pow2(nbytes)
        return round_up(nbytes, self.cutoff_bytes)


cdef class BestFitPool(Pool):
    """Segments split on allocation and coalesced on free (after PyTorch's caching
    allocator), with three size classes so that small blocks never pin large memory:

    - requests up to 1 MiB are carved from 2 MiB segments;
    - requests below ``max_split_size`` (default 10 MiB) from 20 MiB segments;
    - larger requests get a segment of their own, never split, reused only by requests
      it fits within 1/4 (at least 2 MiB): large blocks are not carved up.

    Free blocks sit in one ordered index per class keyed by (size, address), so the best
    fit is one ``lower_bound``.  On a miss, when the cache holds at least the bytes
    asked for but no block fits, the segments that are entirely free go back to the
    upstream first, so reserved memory follows use instead of ratcheting up.
    """

    def __init__(self, Upstream upstream not None, device=None, limit=0, *,
                 max_split_size=DEFAULT_MAX_SPLIT):
        super().__init__(upstream, device, limit)
        max_split_size = _integer("max_split_size", max_split_size)
        if max_split_size <= SMALL_SIZE or max_split_size > MEDIUM_SEGMENT:
            raise ValueError(f"max_split_size must be an integer in (1 MiB, 20 MiB] bytes "
                             f"(got {max_split_size!r})")
        self.max_split = max_split_size
        self.strategy = "bestfit"

    def __dealloc__(self):
        self.release_at_dealloc()

    cdef cmap[pair[size_t, uintptr_t], Block*]* index(self, int cls) noexcept:
        if cls == CLS_SMALL:
            return &self.free_small
        if cls == CLS_MEDIUM:
            return &self.free_medium
        return &self.free_large

    cdef int size_class(self, size_t rounded) noexcept:
        if rounded <= SMALL_SIZE:
            return CLS_SMALL
        if rounded < self.max_split:
            return CLS_MEDIUM
        return CLS_LARGE

    cdef size_t round_size(self, size_t nbytes) except 0:
        return round_up(nbytes, MIN_BLOCK)

    cdef size_t segment_size(self, size_t rounded) except 0:
        cdef int c = self.size_class(rounded)
        if c == CLS_SMALL:
            return SMALL_SEGMENT
        if c == CLS_MEDIUM:
            return MEDIUM_SEGMENT
        return round_up(rounded, SEGMENT_ROUND)

    cdef void init_segment(self, Block* b, size_t rounded) noexcept:
        b.cls = self.size_class(rounded)

    cdef Block* take_cached(self, size_t rounded) except? NULL:
        cdef int c = self.size_class(rounded)
        cdef cmap[pair[size_t, uintptr_t], Block*]* idx = self.index(c)
        cdef Block* b
        cdef size_t slack
        if self.n_quick and c != CLS_LARGE:
            q = self.quick.find(rounded)
            if q != self.quick.end() and not deref(q).second.empty():
                b = deref(q).second.back()
                deref(q).second.pop_back()
                self.n_quick -= 1
                return b
        it = idx.lower_bound(pair[size_t, uintptr_t](rounded, 0))
        if it == idx.end():
            return NULL
        b = deref(it).second
        if c == CLS_LARGE:
            slack = rounded // 4 if rounded // 4 > SEGMENT_ROUND else SEGMENT_ROUND
            if b.size > rounded + slack:
                return NULL
        idx.erase(it)
        return self.carve(b, rounded)

    cdef Block* carve(self, Block* b, size_t rounded) except NULL:
        cdef size_t rest = b.size - rounded
        cdef Block* nb
        if b.cls == CLS_LARGE or rest < MIN_BLOCK or (b.cls == CLS_MEDIUM
                                                      and rest <= SMALL_SIZE):
            return b
        nb = self.new_block(b.ptr + rounded, rest)
        nb.cls = b.cls
        nb.prev = b
        nb.next = b.next
        if b.next != NULL:
            b.next.prev = nb
        b.next = nb
        b.size = rounded
        self.insert(nb)
        return b

    cdef void insert(self, Block* b) noexcept:
        b.state = CACHED
        deref(self.index(b.cls))[pair[size_t, uintptr_t](b.size, b.ptr)] = b

    cdef int unlink(self, Block* b) except -1:
        self.index(b.cls).erase(pair[size_t, uintptr_t](b.size, b.ptr))
        return 0

    cdef int cache_block(self, Block* b) except -1:
        if b.cls != CLS_LARGE:
            if self.n_quick >= QUICK_MAX:   # budget spent: coalesce the parked ones
                self.flush_quick()
            b.state = QUICK
            self.quick[b.size].push_back(b)
            self.n_quick += 1
            return 0
        return self.coalesce(b)

    cdef int flush_quick(self) except -1:
        """Coalesce every parked block into the ordered indexes."""
        cdef Block* b
        if not self.n_quick:
            return 0
        it = self.quick.begin()
        while it != self.quick.end():
            for b in deref(it).second:
                self.coalesce(b)
            inc(it)
        self.quick.clear()
        self.n_quick = 0
        return 0

    cdef int coalesce(self, Block* b) except -1:
        cdef Block* p = b.prev
        cdef Block* n = b.next
        if p != NULL and p.state == CACHED:
            self.unlink(p)
            p.size += b.size
            p.next = n
            if n != NULL:
                n.prev = p
            self.recycle(b)
            b = p
        n = b.next
        if n != NULL and n.state == CACHED:
            self.unlink(n)
            b.size += n.size
            b.next = n.next
            if n.next != NULL:
                n.next.prev = b
            self.recycle(n)
        self.insert(b)
        return 0

    cdef int before_grow(self, size_t seg) except -1:
        # Release whole free segments, largest first, until the cache holds less than
        # the segment about to be taken.
        cdef vector[Block*] segs
        cdef Block* b
        cdef Py_ssize_t i
        cdef int c
        cdef size_t cached = self.st_reserved.current - self.st_allocated.current
        cdef bint flushed = self.n_quick != 0
        self.flush_quick()
        if cached < seg:
            return flushed
        for c in range(2, -1, -1):
            _pop_whole_segments(deref(self.index(c)), segs)
        # segs: whole free segments; release the largest first
        sort_by_size(segs)
        i = <Py_ssize_t>segs.size() - 1
        while i >= 0 and cached >= seg:
            b = segs[i]
            cached -= b.size
            segs.pop_back()
            self.release_segment(b)
            i -= 1
        for b in segs:           # the rest go back into the cache
            self.insert(b)
        return 1

    cdef int pop_free_segments(self, vector[Block*]& out) except -1:
        cdef int c
        self.flush_quick()
        for c in range(3):
            _pop_whole_segments(deref(self.index(c)), out)
        return 0

    cdef size_t largest_free(self):
        cdef size_t best = 0
        cdef int c
        cdef cmap[pair[size_t, uintptr_t], Block*]* idx
        for c in range(3):
            idx = self.index(c)
            if not idx.empty() and deref(idx.rbegin()).first.first > best:
                best = deref(idx.rbegin()).first.first
        it = self.quick.begin()
        while it != self.quick.end():
            if not deref(it).second.empty() and deref(it).first > best:
                best = deref(it).first
            inc(it)
        return best


cdef extern from "<algorithm>" namespace "std" nogil:
    void sort[It, Cmp](It first, It last, Cmp comp) except +


cdef bint _smaller(Block* a, Block* b) noexcept nogil:
    return a.size < b.size


cdef void sort_by_size(vector[Block*]& v) noexcept:
    sort(v.begin(), v.end(), _smaller)


cdef void _pop_whole_segments(cmap[pair[size_t, uintptr_t], Block*]& idx,
                              vector[Block*]& out):
    cdef Block* b
    it = idx.begin()
    while it != idx.end():
        b = deref(it).second
        if b.prev == NULL and b.next == NULL:
            out.push_back(b)
            it = idx.erase(it)
        else:
            inc(it)


cdef class UnpooledPool(Pool):
    """No cache: every allocation goes to the upstream and every free straight back."""

    def __init__(self, Upstream upstream not None, device=None, limit=0):
        super().__init__(upstream, device, limit)
        self.caching = False
        self.strategy = "unpooled"


def _check_pow2(name, value, minimum):
    value = _integer(name, value)
    if value < minimum or value & (value - 1):
        raise ValueError(f"{name} must be a power of two >= {minimum} (got {value!r})")
    return value


@cython.freelist(256)
@cython.no_gc_clear  # a Buffer in a garbage cycle still needs its pool to free into
cdef class Buffer:
    """Memory from a pool; it goes back to the pool when the Buffer dies (or on ``free()``).

    Host buffers (CPU and pinned) export the buffer protocol, so
    ``np.frombuffer(buf, np.float32)`` is a zero-copy view that keeps the Buffer alive;
    device buffers export ``__cuda_array_interface__``.
    """

    def __dealloc__(self):
        if self.block != NULL:
            self.pool.free_block(self.block)  # cannot fail: the block is ours and allocated
            self.block = NULL

    cpdef free(self):
        """Return the memory to the pool now.  Freeing twice raises ValueError, and so does
        freeing the Buffer of an array (it goes back when the array dies)."""
        if self.pool is None:
            raise ValueError(f"double free: this buffer was already freed")
        if self.owned:
            raise ValueError("Buffer.free: this buffer belongs to an array and is freed when "
                             "the array dies")
        if self.exports:
            raise BufferError(f"cannot free a buffer while {self.exports} view(s) of it exist")
        if self.block != NULL:
            self.pool.free_block(self.block)
            self.block = NULL
        self.pool = None
        self.ptr = 0
        self.size = 0

    @property
    def device(self):
        """The device label of the pool this buffer came from (None once freed)."""
        return None if self.pool is None else self.pool.device

    @property
    def nbytes_reserved(self):
        """Bytes of pool memory this buffer holds (its size after rounding)."""
        return 0 if self.block == NULL else self.block.size

    @property
    def freed(self):
        return self.pool is None

    def __repr__(self):
        where = "freed" if self.pool is None else f"at 0x{self.ptr:x} on {self.pool.device}"
        return f"<Buffer {self.size} bytes {where}>"

    def __getbuffer__(self, Py_buffer* view, int flags):
        if self.pool is None:
            raise BufferError("cannot export a freed buffer")
        if not self.pool.upstream.host_accessible:
            raise BufferError(f"a {self.pool.device} buffer is device memory: use "
                              "__cuda_array_interface__ (or CuPy), not the buffer protocol")
        self.view_shape[0] = self.size
        self.view_strides[0] = 1
        view.buf = <void*>self.ptr
        view.obj = self
        view.len = self.size
        view.readonly = 0
        view.itemsize = 1
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = "B"
        view.ndim = 1
        view.shape = self.view_shape
        view.strides = self.view_strides
        view.suboffsets = NULL
        view.internal = NULL
        self.exports += 1

    def __releasebuffer__(self, Py_buffer* view):
        self.exports -= 1

    @property
    def __cuda_array_interface__(self):
        if self.pool is None:
            raise AttributeError("a freed buffer has no __cuda_array_interface__")
        if self.pool.upstream.host_accessible:
            raise AttributeError(f"a {self.pool.device} buffer is host memory: use the "
                                 "buffer protocol")
        return {"shape": (self.size,), "typestr": "|u1", "data": (self.ptr, False),
                "strides": None, "version": 3}


# -- module-level fast path: alloc(nbytes, device) -------------------------------------

cdef dict _pool_cache = {}
cdef Py_ssize_t _generation = 0   # bumped whenever cached pools may have been replaced
_resolver = None


cdef Py_ssize_t pool_generation() noexcept:
    return _generation


def _set_resolver(fn):
    """The Python face installs the function that maps a device spec to its Pool."""
    global _resolver, _generation
    _resolver = fn
    _pool_cache.clear()
    _generation += 1


def _clear_pool_cache():
    global _generation
    _pool_cache.clear()
    _generation += 1


cdef Pool pool_for(object device):
    """The pool of ``device`` (any spec allocator.as_device takes), cached per spec."""
    try:
        pool = _pool_cache.get(device)
    except TypeError:   # unhashable: never cached; the resolver says what is wrong with it
        return <Pool>_resolver(device)
    if pool is None:
        pool = _pool_cache[device] = _resolver(device)
    return <Pool>pool


def alloc(nbytes, device=None):
    """Allocate ``nbytes`` bytes on ``device`` (default: the CPU pool) as a :class:`Buffer`."""
    return pool_for(device).alloc(nbytes)


def bench_alloc_free(Pool pool not None, size_t nbytes, Py_ssize_t n):
    """Run ``n`` alloc+free pairs of ``nbytes`` through the C-level API (for benchmarks)."""
    cdef Py_ssize_t i
    cdef Block* b
    for i in range(n):
        b = pool.malloc(nbytes)
        pool.free_block(b)
