from libc.stdint cimport int64_t, uint8_t, uintptr_t
from libcpp.pair cimport pair
from libcpp.map cimport map as cmap
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from allocator._upstream cimport Upstream


cdef enum BlockState:
    RELEASED = 0     # descriptor is spare, its memory went back upstream
    CACHED = 1       # free, kept in the pool
    ALLOCATED = 2    # handed out
    QUICK = 3        # bestfit: free, parked uncoalesced in a same-size list


cdef struct Block:
    uintptr_t ptr
    size_t size          # bytes this block spans (rounded)
    size_t requested     # bytes the caller asked for, while allocated
    Block* prev          # neighbours inside one upstream segment (bestfit)
    Block* next
    void* pool           # owning Pool, borrowed
    uint8_t state
    uint8_t cls          # bestfit: size class of its segment (small, medium, large)


cdef struct Stat:
    int64_t current
    int64_t peak
    int64_t allocated
    int64_t freed


cdef class Pool:
    cdef readonly Upstream upstream
    cdef readonly object device
    cdef readonly str strategy
    cdef readonly size_t limit
    cdef bint poisoned
    cdef str poison_reason
    cdef bint caching
    cdef vector[Block*] spare
    cdef Stat st_allocated, st_reserved, st_requested, st_allocation, st_segment
    cdef int64_t n_hits, n_misses, n_retries, n_ooms, n_upstream_alloc, n_upstream_free
    cdef int64_t window_peak      # allocated bytes' peak since mark_peak() (see there)

    cdef Block* malloc(self, size_t nbytes) except NULL
    cdef int free_block(self, Block* b) except -1
    cdef Buffer buffer(self, size_t nbytes, bint owned=*)

    # strategy interface
    cdef size_t round_size(self, size_t nbytes) except 0
    cdef size_t segment_size(self, size_t rounded) except 0
    cdef Block* take_cached(self, size_t rounded) except? NULL
    cdef Block* carve(self, Block* segment, size_t rounded) except NULL
    cdef int cache_block(self, Block* b) except -1
    cdef int pop_free_segments(self, vector[Block*]& out) except -1
    cdef size_t largest_free(self)
    cdef int before_grow(self, size_t seg) except -1
    cdef void init_segment(self, Block* b, size_t rounded) noexcept

    # shared machinery
    cdef Block* new_block(self, uintptr_t ptr, size_t size) except NULL
    cdef void recycle(self, Block* b)
    cdef size_t segment_within_limit(self, size_t rounded) except 0
    cdef Block* alloc_miss(self, size_t nbytes, size_t rounded) except NULL
    cdef uintptr_t upstream_alloc(self, size_t nbytes) except? 0
    cdef int release_segment(self, Block* b) except -1
    cdef int release_cache(self) except -1
    cdef void release_at_dealloc(self) noexcept


cdef class NaivePool(Pool):
    cdef size_t page_size
    cdef size_t large_round
    cdef unordered_map[size_t, vector[Block*]] free_lists
    cdef size_t n_cached


cdef class RoundPool(NaivePool):
    cdef size_t cutoff_bytes


cdef class BestFitPool(Pool):
    cdef size_t max_split
    # Free blocks of each size class keyed by (size, address): the best fit is the lower
    # bound, ties go to the lowest address, so a trace replays the same way every time.
    # (three fields, not an array: Cython constructs C++ members but not arrays of them)
    cdef cmap[pair[size_t, uintptr_t], Block*] free_small, free_medium, free_large
    cdef cmap[pair[size_t, uintptr_t], Block*]* index(self, int cls) noexcept
    # Deferred coalescing (glibc's tcache idea): small and medium blocks freed go to a
    # same-size list first; a hit there is one hash lookup, no split and no merge.
    cdef unordered_map[size_t, vector[Block*]] quick
    cdef size_t n_quick
    cdef int flush_quick(self) except -1
    cdef int coalesce(self, Block* b) except -1
    cdef int unlink(self, Block* b) except -1
    cdef void insert(self, Block* b) noexcept
    cdef int size_class(self, size_t rounded) noexcept


cdef class UnpooledPool(Pool):
    pass


cdef class Buffer:
    cdef Pool pool
    cdef Block* block
    cdef readonly uintptr_t ptr
    cdef readonly size_t size
    cdef Py_ssize_t view_shape[1]
    cdef Py_ssize_t view_strides[1]
    cdef int exports
    cdef bint owned                # held by a C-level owner: free() refused
    cpdef free(self)


cdef Pool pool_for(object device)
cdef Py_ssize_t pool_generation() noexcept
