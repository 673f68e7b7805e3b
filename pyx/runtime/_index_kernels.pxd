from libc.stdint cimport int64_t


# The column that position ``c`` picks on an axis of ``k`` >= 1 entries: wrapped around
# (``wrap``) or clipped into [0, k) -- pick's modes, forward and gradient.
cdef inline Py_ssize_t pick_column(int64_t c, Py_ssize_t k, bint wrap) noexcept nogil:
    if wrap:
        c = c % k
        if c < 0:
            c += k
    elif c < 0:
        c = 0
    elif c >= k:
        c = k - 1
    return <Py_ssize_t>c
