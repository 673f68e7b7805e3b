cdef class ArrayDesc:
    cdef readonly tuple shape
    cdef readonly object dtype
    cdef readonly str stype
    cdef readonly object ctx

    cdef tuple _key(self)
    cdef tuple _key_of(self, other)
