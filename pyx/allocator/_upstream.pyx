"""Raw memory sources behind the pools.

An upstream hands out and takes back whole segments; it keeps no cache and no
statistics (the pool does).  ``alloc`` returns 0 for "out of memory" so that the pool
can run its free-cache / gc / retry ladder; any other failure raises.  Tests inject
Python subclasses that hand out fake addresses.
"""
import os

from libc.stdint cimport uintptr_t
from libc.stdlib cimport free as c_free


cdef extern from "stdlib.h" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)

cdef extern from "sys/mman.h" nogil:
    int madvise(void* addr, size_t length, int advice)
    int MADV_HUGEPAGE

# Transparent huge pages pay off only for blocks that span several of them.
cdef size_t HUGEPAGE = 2 << 20
cdef size_t HUGEPAGE_MIN_BLOCK = 4 << 20


cdef class Upstream:
    """Base upstream: subclass it and override ``alloc``, ``free`` and ``mem_info``."""

    def __init__(self, kind="cpu", device_id=0, host_accessible=True):
        self.kind = kind
        self.device_id = device_id
        self.host_accessible = host_accessible

    cpdef uintptr_t alloc(self, size_t nbytes) except? 0:
        """Return the address of ``nbytes`` fresh bytes, or 0 when out of memory."""
        raise NotImplementedError(f"{type(self).__name__} must implement alloc")

    cpdef int free(self, uintptr_t ptr, size_t nbytes) except -1:
        """Give back a segment that ``alloc`` returned."""
        raise NotImplementedError(f"{type(self).__name__} must implement free")

    cpdef tuple mem_info(self):
        """(free bytes, total bytes) of the device, or None where it is unknown."""
        return None

    def __repr__(self):
        return f"<{type(self).__name__} {self.kind}({self.device_id})>"


cdef class HostUpstream(Upstream):
    """64-byte aligned host memory from posix_memalign.

    Blocks of 4 MiB and more are aligned to 2 MiB and marked MADV_HUGEPAGE (when
    ``hugepages``) so that the kernel can back them with transparent huge pages.
    """

    def __init__(self, size_t alignment=64, bint hugepages=True):
        super().__init__("cpu", 0, True)
        if alignment == 0 or alignment & (alignment - 1) or alignment % sizeof(void*):
            raise ValueError(f"alignment must be a power of two multiple of {sizeof(void*)} "
                             f"(got {alignment})")
        self.alignment = alignment
        self.hugepages = hugepages

    cpdef uintptr_t alloc(self, size_t nbytes) except? 0:
        cdef void* p = NULL
        cdef size_t align = self.alignment
        cdef bint huge = self.hugepages and nbytes >= HUGEPAGE_MIN_BLOCK
        if huge and align < HUGEPAGE:
            align = HUGEPAGE
        if posix_memalign(&p, align, nbytes) != 0:
            return 0
        if huge:
            madvise(p, nbytes, MADV_HUGEPAGE)  # advice only: failure changes nothing
        return <uintptr_t>p

    cpdef int free(self, uintptr_t ptr, size_t nbytes) except -1:
        c_free(<void*>ptr)
        return 0

    cpdef tuple mem_info(self):
        try:
            pages = os.sysconf("SC_PHYS_PAGES")
            avail = os.sysconf("SC_AVPHYS_PAGES")
            size = os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            return None
        return (avail * size, pages * size)
