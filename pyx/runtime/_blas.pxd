# The dense products' BLAS and the thread team of large elementwise loops (see _blas.pyx).

# c (+)= a @ b for 2-D NumPy arrays: a (m, k), b (k, n), c (m, n); on MKL where it is
# used and the layouts allow, else NumPy's matmul.  With the GIL.
cdef int matmul_into(object a, object b, object c, bint add) except -1

# Threads for an elementwise loop over n elements (1: run it on the calling thread).
# With the GIL.
cdef int loop_threads(Py_ssize_t n) noexcept

# Whether the products run on MKL on ndrt's OpenMP team (large loops may then use it).
cdef bint pooled() noexcept
