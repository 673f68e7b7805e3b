"""Pool benchmarks: warm hits, the C-level path, a crowded cache, and RMM's random trace.

Each class puts a NumPy reference beside our pools, as the ``"numpy"`` value of its ``pool``
parameter, so one ``asv run`` table shows the ratio.

asv_runner re-runs ``setup`` before every timed call here (asv#966), so one call is timed
on its own: the sub-microsecond cases run ``BATCH`` = 1000 pairs per call, and asv's
microseconds per call read as nanoseconds per pair.  Pool-only figures that a clock or
RSS cannot see (reserved/requested) are ``track_*`` methods.

``FakeUpstream`` hands out addresses without memory, so the crowded-cache and trace cases
can hold terabytes "reserved" at no cost; nothing ever reads or writes those buffers (its
``host_accessible=False`` makes the buffer protocol refuse them).
"""
import functools
import statistics
import time

import numpy as np

from allocator import BestFitPool, HostUpstream, NaivePool, RoundPool, UnpooledPool, Upstream
from allocator._pool import bench_alloc_free

POOLS = {"naive": NaivePool, "round": RoundPool, "bestfit": BestFitPool,
         "unpooled": UnpooledPool}
CACHING = ("naive", "round", "bestfit")
SIZES = [256, 64 << 10, 16 << 20]
BATCH = 1000          # pairs per timed call of the sub-microsecond cases
C_PAIRS = 10_000      # pairs per bench_alloc_free call
TRACE_OPS = 20_000    # random operations of the trace (plus the final frees)
MiB, GiB = 1 << 20, 1 << 30


class FakeUpstream(Upstream):
    """Addresses from a counter, no memory behind them; 4 KiB gaps between segments."""

    def __init__(self):
        super().__init__("fake", 0, False)
        self.next = 1 << 20

    def alloc(self, nbytes):
        p = self.next
        self.next += nbytes + 4096
        return p

    def free(self, ptr, nbytes):
        return 0


def make_pool(kind, upstream=None):
    return POOLS[kind](HostUpstream() if upstream is None else upstream)


def per_call_ns(fn, calls_per_run, repeat=5, target_s=0.1, max_runs=None):
    """Median over ``repeat`` runs of perf_counter time per call of ``fn(k)``, where ``fn(k)``
    makes ``k`` calls; ``k`` is chosen so one run takes about ``target_s``."""
    fn(1)
    k, t = 1, 0.0
    while t < target_s / 10 and (max_runs is None or k < max_runs):
        k = k * 10 if max_runs is None else min(k * 10, max_runs)
        t0 = time.perf_counter()
        fn(k)
        t = time.perf_counter() - t0
    k = max(1, int(k * target_s / max(t, 1e-9)))
    if max_runs is not None:
        k = min(k, max_runs)
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(k)
        runs.append((time.perf_counter() - t0) / k)
    return statistics.median(runs) * 1e9 / calls_per_run


# -- warm hits -----------------------------------------------------------------------------

def warm_pool(kind, nbytes, upstream=None):
    pool = make_pool(kind, upstream)
    pool.alloc(nbytes)  # miss, then cached: the timed allocations are hits
    return pool


class WarmHit:
    """``pool.alloc(nbytes)`` dropped at once: one alloc+free from Python of a cached block
    (an eager runtime's steady state).  Reference: ``np.empty(nbytes // 4, np.float32)``
    dropped.  ``BATCH`` pairs per call: microseconds per call = nanoseconds per pair."""

    params = [SIZES, ["numpy", *POOLS]]
    param_names = ["nbytes", "pool"]

    def setup(self, nbytes, pool):
        if pool == "numpy":
            self.pool = None
            np.empty(nbytes // 4, np.float32)
        else:
            self.pool = warm_pool(pool, nbytes)

    def time_alloc_free(self, nbytes, pool):
        if self.pool is None:
            n, f32, empty = nbytes // 4, np.float32, np.empty
            for _ in range(BATCH):
                empty(n, f32)
        else:
            alloc = self.pool.alloc
            for _ in range(BATCH):
                alloc(nbytes)


class CythonHit:
    """``bench_alloc_free``: ``C_PAIRS`` malloc+free_block pairs through the C-level API the
    array runtime calls (no Python object per pair; microseconds per call / 10 = ns per
    pair).  The ``numpy`` row is the same number
    of ``np.empty`` calls from a Python loop (its floor includes the interpreter).
    ``track_ns_per_pair``: nanoseconds per pair, median of 5 perf_counter runs."""

    params = [SIZES, ["numpy", *POOLS]]
    param_names = ["nbytes", "pool"]

    def setup(self, nbytes, pool):
        if pool == "numpy":
            self.pool = None
            np.empty(nbytes // 4, np.float32)
        else:
            self.pool = warm_pool(pool, nbytes)
            bench_alloc_free(self.pool, nbytes, 1)

    def _pairs(self, nbytes, n):
        if self.pool is None:
            m, f32, empty = nbytes // 4, np.float32, np.empty
            for _ in range(n):
                empty(m, f32)
        else:
            bench_alloc_free(self.pool, nbytes, n)

    def time_alloc_free(self, nbytes, pool):
        self._pairs(nbytes, C_PAIRS)

    def track_ns_per_pair(self, nbytes, pool):
        # Up to 10**6 pairs per run; fewer where one pair is slow (unpooled 16 MiB).
        return per_call_ns(lambda k: self._pairs(nbytes, k), 1, max_runs=10**6)
    track_ns_per_pair.unit = "ns"


# -- a crowded cache -------------------------------------------------------------------------

def distinct_sizes(kind, n):
    """``n`` request sizes whose rounded sizes differ from each other and from 256's."""
    if kind == "naive":  # pages up to 2 MiB, then multiples of 2 MiB
        head, step = [4096 * k for k in range(2, 513)], 2 * MiB
    else:  # round: powers of two up to 16 MiB, then multiples of 16 MiB
        head, step = [1 << p for p in range(13, 25)], 16 * MiB
    head = head[:n]
    return head + [step * k for k in range(2, 2 + n - len(head))]


def crowded_pool(kind, n_cached):
    """A pool whose cache holds the warm 256-byte block plus ``n_cached`` free blocks of
    other sizes.  naive/round: one block per distinct rounded size.  bestfit: 512 KiB
    cells of a free hole of 1..1023 granules of 512 B (sizes cycle) followed by an
    allocated keeper, four cells per 2 MiB segment, so no hole coalesces and all sit in
    the small-block index; the warm block is a 512-byte hole of its own."""
    pool = make_pool(kind, FakeUpstream())
    keep = []
    if kind == "bestfit":
        granule, cell = 512, 1024
        hot = pool.alloc(granule)
        keep.append(pool.alloc((cell - 1) * granule))
        holes = []
        for i in range(n_cached):
            h = 2 + i % (cell - 2)  # 2..1023 granules: never the hot block's 512 B
            holes.append(pool.alloc(h * granule))
            keep.append(pool.alloc((cell - h) * granule))
        del holes, hot
    else:
        bufs = [pool.alloc(s) for s in distinct_sizes(kind, n_cached)]
        del bufs
    pool.alloc(256)  # warm
    return pool, keep


class ManyCached:
    """The warm 256-byte hit of ``WarmHit`` while the cache also holds 100 or 100,000
    free blocks of other sizes (fake upstream, no memory).  ``BATCH`` pairs per call.
    Reference: ``np.empty(64, np.float32)`` dropped (NumPy has no such cache)."""

    params = [[100, 100_000], ["numpy", *CACHING]]
    param_names = ["n_cached", "pool"]
    timeout = 120

    def setup(self, n_cached, pool):
        if pool == "numpy":
            self.pool, self.keep = None, []
            np.empty(64, np.float32)
        else:
            self.pool, self.keep = crowded_pool(pool, n_cached)

    def time_alloc_free(self, n_cached, pool):
        if self.pool is None:
            f32, empty = np.float32, np.empty
            for _ in range(BATCH):
                empty(64, f32)
        else:
            alloc = self.pool.alloc
            for _ in range(BATCH):
                alloc(256)


# -- RMM's random_allocations --------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def random_trace(n_ops=TRACE_OPS, seed=42, p_alloc=0.73, max_size=64 * MiB, cap=4 * GiB):
    """RMM's ``random_allocations`` as a tuple of ops: ``op > 0`` allocates ``op`` bytes
    (uniform in [1, max_size]) with probability ``p_alloc``; ``op <= 0`` frees live slot
    ``-op`` (a uniform pick; the last slot moves into the hole).  An allocation that would
    take the live requested bytes over ``cap`` becomes a free; whatever is live after
    ``n_ops`` operations is freed at the end, as RMM does."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size, size=n_ops, endpoint=True).tolist()
    coins = rng.random(n_ops).tolist()
    picks = rng.random(n_ops).tolist()
    live, used, ops = [], 0, []
    for size, coin, pick in zip(sizes, coins, picks):
        if not live or (coin < p_alloc and used + size <= cap):
            ops.append(size)
            live.append(size)
            used += size
        else:
            j = int(pick * len(live))
            ops.append(-j)
            used -= live[j]
            live[j] = live[-1]
            live.pop()
    ops.extend(-j for j in range(len(live) - 1, -1, -1))
    return tuple(ops)


def replay(ops, alloc):
    """Run the trace: ``alloc(nbytes)`` returns an object whose death frees it."""
    live = []
    push, pop = live.append, live.pop
    for op in ops:
        if op > 0:
            push(alloc(op))
        else:
            live[-op] = live[-1]
            pop()
    assert not live


def replay_numpy(ops):
    """The trace with ``np.empty(n, np.uint8)``.  Untouched memory, yet not fault-free:
    NumPy marks blocks of 4 MiB and more MADV_HUGEPAGE, and with transparent huge pages
    in madvise mode glibc's chunk headers fault in whole 2 MiB pages.  Measured on the
    2-core box: the first trace of a process ~80-180 us/op and ~3 GiB RSS, later ones
    ~17-25 us/op (~2 us/op with NumPy's hugepage advice off)."""
    live = []
    push, pop, empty, u8 = live.append, live.pop, np.empty, np.uint8
    for op in ops:
        if op > 0:
            push(empty(op, u8))
        else:
            live[-op] = live[-1]
            pop()
    assert not live


def numpy_trace_seconds(ops):
    t0 = time.perf_counter()
    replay_numpy(ops)
    return time.perf_counter() - t0


def trace_stats(kind, ops):
    """Replay on a fresh pool over the fake upstream; return (seconds, memory_stats)."""
    pool = make_pool(kind, FakeUpstream())
    pool.reset_peak_stats()
    t0 = time.perf_counter()
    replay(ops, pool.alloc)
    t = time.perf_counter() - t0
    s = pool.memory_stats()
    if s["allocated_bytes.all.current"] or s["requested_bytes.all.current"]:
        raise AssertionError(f"{kind}: the trace freed everything but the pool still counts "
                             f"{s['allocated_bytes.all.current']} allocated and "
                             f"{s['requested_bytes.all.current']} requested bytes")
    return t, s


def overhead(stats):
    return stats["reserved_bytes.all.peak"] / stats["requested_bytes.all.peak"]


class RandomTrace:
    """RMM's random_allocations: ``TRACE_OPS`` operations, 73% allocations of 1 B..64 MiB,
    4 GiB cap on live requested bytes, each timed trace on a fresh pool over the fake
    upstream.  Reference: the ``numpy`` row replays the same trace with
    ``np.empty(n, np.uint8)`` (real, untouched memory; see ``replay_numpy``).
    ``track_overhead``: peak reserved / peak requested bytes (n/a for NumPy, which does not
    report what malloc keeps)."""

    params = [["numpy", *POOLS]]
    param_names = ["pool"]
    number = 1  # every timed trace starts from a fresh pool
    timeout = 300

    def setup(self, pool):
        self.ops = random_trace()
        self.pool = None if pool == "numpy" else make_pool(pool, FakeUpstream())

    def time_trace(self, pool):
        if self.pool is None:
            replay_numpy(self.ops)
        else:
            replay(self.ops, self.pool.alloc)

    def track_ns_per_op(self, pool):
        if pool == "numpy":
            replay_numpy(self.ops)  # the first trace of a process faults its heap in
            runs = [numpy_trace_seconds(self.ops) for _ in range(3)]
        else:
            runs = [trace_stats(pool, self.ops)[0] for _ in range(3)]
        return statistics.median(runs) * 1e9 / len(self.ops)
    track_ns_per_op.unit = "ns"

    def track_overhead(self, pool):
        if pool == "numpy":
            return float("nan")
        return overhead(trace_stats(pool, self.ops)[1])
    track_overhead.unit = "reserved/requested"
