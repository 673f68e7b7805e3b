from libc.stdint cimport uintptr_t


cdef enum StorageType:
    STYPE_DEFAULT = 0
    STYPE_ROW_SPARSE = 1
    STYPE_CSR = 2


cdef class Chunk:
    """One allocation: data (and aux for sparse) memory, its context and write version."""
    cdef readonly object ctx
    cdef readonly tuple storage_shape
    cdef readonly list aux_shapes
    cdef readonly bint delay_alloc
    cdef readonly bint borrowed
    cdef readonly bint host
    cdef readonly Py_ssize_t version
    cdef object data_mem           # allocator Buffer, or the foreign owner when borrowed
    cdef uintptr_t data_ptr
    cdef size_t data_nbytes
    cdef list aux_mem              # sparse: Buffers of the aux arrays (int64)
    cdef list aux_ptrs
    cdef bint plan_slot            # a backward plan's buffer (runtime._executor)
    cdef object __weakref__        # gluon's Trainer remembers the chunk of each .grad

    cdef uintptr_t ptr(self) except? 0
    cdef void bump(self) noexcept
    cdef int _alloc_data(self) except -1
    cdef int _zero(self) except -1


cdef class NDArray:
    cdef Chunk _chunk
    cdef tuple _shape
    cdef Py_ssize_t _offset        # bytes from the chunk's data pointer
    cdef object _dtype             # numpy dtype instance
    cdef int _stype
    cdef public object _entry      # autograd tape entry (None when not recorded)
    cdef public bint _donated      # backward: the next elementwise op may write into it
    cdef Py_ssize_t _exports       # buffer-protocol views alive (they hold the NDArray)
    cdef object __weakref__

    cdef Py_ssize_t _size(self) noexcept
    cdef int _fill(self, object val) except -1
    cdef int _adopt(self, NDArray src) except -1


cdef class CSRNDArray(NDArray):
    pass


cdef class RowSparseNDArray(NDArray):
    pass


cdef NDArray new_dense(tuple shape, object dtype, object ctx, int init)
cdef object np_view(NDArray x)
cdef object dense_from_numpy(object src, object ctx)
cdef int assign(NDArray dst, NDArray src) except -1


# The Python operators of NDArray, by the name of their registry operator ("add").
ctypedef object (*binary_impl_t)(str op, object a, object b, int flags)
ctypedef object (*unary_impl_t)(str op, object a)
# The reductions x.sum(**kwargs) ...: None when the method must take the nd function.
ctypedef object (*reduce_impl_t)(str op, object a, dict kwargs)
cdef void set_operator_impl(binary_impl_t binary, unary_impl_t unary,
                            reduce_impl_t reduce) noexcept
