from libc.stdint cimport uintptr_t


cdef class Upstream:
    """Where a pool gets raw memory.  alloc returns 0 when the source is out of memory."""
    cdef readonly str kind            # 'cpu', 'gpu' or 'cpu_pinned'
    cdef readonly int device_id
    cdef readonly bint host_accessible
    cpdef uintptr_t alloc(self, size_t nbytes) except? 0
    cpdef int free(self, uintptr_t ptr, size_t nbytes) except -1
    cpdef tuple mem_info(self)


cdef class HostUpstream(Upstream):
    cdef readonly size_t alignment
    cdef readonly bint hugepages
