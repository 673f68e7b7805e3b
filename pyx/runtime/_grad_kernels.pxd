# The C-level gradient kernels that the backward plan runs (runtime._executor): no Python
# object, no allocation; each writes its result (``add`` false) or adds it (``add`` true)
# into ``out``, which may be the out-grad ``g`` itself (request inplace).

# What an elementwise gradient kernel computes per element (g: out-grad, a and b: the
# saved values the op's rule reads, s: the op's scalar).
cdef enum EwKind:
    EW_COPY = 0        # g
    EW_NEG = 1         # -g
    EW_SCALE = 2       # g * s
    EW_MUL = 3         # g * a
    EW_DIV = 4         # g / a
    EW_DIV_RHS = 5     # -g * a / (b * b)       (divide's rhs: a the lhs, b the rhs)
    EW_RDIV_SCALAR = 6 # -g * a / b             (s / x: a the output, b the input)
    EW_TANH = 7        # g * (1 - a * a)        (a the output)
    EW_SIGMOID = 8     # g * a * (1 - a)        (a the output)
    EW_RELU = 9        # g * (a > 0), NaN where a is (a the output)
    EW_SQRT = 10       # g / (2 a)              (a the output)
    EW_SQUARE = 11     # 2 g a                  (a the input)
    EW_ABS = 12        # g * sign(a)            (a the input)
    EW_DIV_SCALAR = 13 # g / s

cdef void ew_f32(int kind, float* out, const float* g, const float* a, const float* b,
                 double s, Py_ssize_t n, bint add) noexcept nogil
cdef void ew_f64(int kind, double* out, const double* g, const double* a, const double* b,
                 double s, Py_ssize_t n, bint add) noexcept nogil

# out[k] (+)= s * sum over m of g[m, k]   (g is (rows, cols), out is (cols,))
cdef void rowsum_f32(float* out, const float* g, Py_ssize_t rows, Py_ssize_t cols, double s,
                     bint add) noexcept nogil
cdef void rowsum_f64(double* out, const double* g, Py_ssize_t rows, Py_ssize_t cols,
                     double s, bint add) noexcept nogil

# relu's gradient in place, g[m, k] *= (a[m, k] > 0) (NaN where a is; a the relu's output),
# and, unless ``out`` is NULL, out[k] (+)= sum over m of the new g[m, k] in the same pass:
# the gradient of a relu and the bias of the FullyConnected below it
cdef void relu_rowsum_f32(float* out, float* g, const float* a, Py_ssize_t rows,
                          Py_ssize_t cols, bint add) noexcept nogil
cdef void relu_rowsum_f64(double* out, double* g, const double* a, Py_ssize_t rows,
                          Py_ssize_t cols, bint add) noexcept nogil

# out[i] (+)= g[0] / d for i < n (the gradient of a full sum, d 1, or mean, d the count)
cdef void fill_f32(float* out, const float* g, double d, Py_ssize_t n, bint add) noexcept nogil
cdef void fill_f64(double* out, const double* g, double d, Py_ssize_t n, bint add) noexcept nogil

# The data gradient of the softmax cross-entropy (n, k): (softmax(x) - onehot(label)) * g
# per row (g[i * g_step]: 0 for the summed loss's one out-grad); ``prob``: the forward's
# softmax, or NULL to compute it from ``x``; ``label`` holds class indices (checked by the
# forward) of type ``ltype``.
cdef enum LabelType:
    LABEL_F32 = 0
    LABEL_F64 = 1
    LABEL_I32 = 2
    LABEL_I64 = 3

cdef void softmax_ce_f32(float* out, const float* x, const float* prob, const void* label,
                         int ltype, const float* g, Py_ssize_t g_step, Py_ssize_t n,
                         Py_ssize_t k, bint add) noexcept nogil
cdef void softmax_ce_f64(double* out, const double* x, const double* prob, const void* label,
                         int ltype, const double* g, Py_ssize_t g_step, Py_ssize_t n,
                         Py_ssize_t k, bint add) noexcept nogil

# log_softmax over the last axis of (rows, k): out (+)= g - exp(y) * sum(g) per row (y the
# output; out may be g)
cdef void log_softmax_f32(float* out, const float* g, const float* y, Py_ssize_t rows,
                          Py_ssize_t k, bint add) noexcept nogil
cdef void log_softmax_f64(double* out, const double* g, const double* y, Py_ssize_t rows,
                          Py_ssize_t k, bint add) noexcept nogil

# pick along the last axis of (rows, k): g[i] into out[i, index[i]] (clipped into [0, k),
# or wrapped with ``wrap``), 0 elsewhere (``add``: only added there)
cdef void pick_f32(float* out, const float* g, const void* index, int itype, bint wrap,
                   Py_ssize_t rows, Py_ssize_t k, bint add) noexcept nogil
cdef void pick_f64(double* out, const double* g, const void* index, int itype, bint wrap,
                   Py_ssize_t rows, Py_ssize_t k, bint add) noexcept nogil
