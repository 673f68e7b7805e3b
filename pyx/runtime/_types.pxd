"""C types shared by the runtime's compiled kernels (cimport them from here, nowhere else)."""

from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, intptr_t,
                          uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t)

ctypedef float float32_t
ctypedef double float64_t

# Write requests, MXNet's OpReqType and its numbering: how a kernel's result reaches an
# output (skipped, written, written over an input it aliases, added).  runtime._imperative
# maps the names 'null', 'write', 'inplace', 'add' to these.
cdef enum:
    REQ_NULL = 0
    REQ_WRITE = 1
    REQ_INPLACE = 2
    REQ_ADD = 3

# Row pointers, column and row indices of every sparse storage (MXNet uses int64 too).
ctypedef int64_t index_t

# Element types the storage kernels are instantiated for.  float16 is handled as uint16
# bit patterns, with -0.0 (0x8000) counted as zero; bool is handled as uint8.
ctypedef fused numeric:
    float32_t
    float64_t
    int8_t
    uint8_t
    int16_t
    uint16_t
    int32_t
    int64_t

# Element types of the arithmetic kernels.
ctypedef fused floating:
    float32_t
    float64_t
