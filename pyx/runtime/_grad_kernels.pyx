"""Gradient kernels that the backward plan calls at C level (see ``_grad_kernels.pxd``).

Each kernel honours the request of its output by one flag: ``add`` false writes (also in
place, where ``out`` is the out-grad it reads element by element), true accumulates;
there is no temporary.  Elementwise kernels read element ``i`` of every operand before
writing element ``i``, so ``out`` may alias ``g``.  (Matrix products are NumPy's matmul,
called by the executor: one BLAS in the process.)
"""

from libc.math cimport exp

from runtime._index_kernels cimport pick_column
from runtime._types cimport float32_t, float64_t, floating


cdef inline void _ew(int kind, floating* out, const floating* g, const floating* a,
                     const floating* b, double s, Py_ssize_t n, bint add) noexcept nogil:
    # one loop per kind and request, chosen once: each loop vectorises
    cdef Py_ssize_t i
    cdef floating c = <floating>s
    if kind == EW_COPY:
        if add:
            for i in range(n):
                out[i] += g[i]
        else:
            for i in range(n):
                out[i] = g[i]
    elif kind == EW_NEG:
        if add:
            for i in range(n):
                out[i] += -g[i]
        else:
            for i in range(n):
                out[i] = -g[i]
    elif kind == EW_SCALE:
        if add:
            for i in range(n):
                out[i] += g[i] * c
        else:
            for i in range(n):
                out[i] = g[i] * c
    elif kind == EW_DIV_SCALAR:
        if add:
            for i in range(n):
                out[i] += g[i] / c
        else:
            for i in range(n):
                out[i] = g[i] / c
    elif kind == EW_MUL:
        if add:
            for i in range(n):
                out[i] += g[i] * a[i]
        else:
            for i in range(n):
                out[i] = g[i] * a[i]
    elif kind == EW_DIV:
        if add:
            for i in range(n):
                out[i] += g[i] / a[i]
        else:
            for i in range(n):
                out[i] = g[i] / a[i]
    elif kind == EW_DIV_RHS:
        if add:
            for i in range(n):
                out[i] += -g[i] * a[i] / (b[i] * b[i])
        else:
            for i in range(n):
                out[i] = -g[i] * a[i] / (b[i] * b[i])
    elif kind == EW_RDIV_SCALAR:
        if add:
            for i in range(n):
                out[i] += -g[i] * a[i] / b[i]
        else:
            for i in range(n):
                out[i] = -g[i] * a[i] / b[i]
    elif kind == EW_TANH:
        if add:
            for i in range(n):
                out[i] += g[i] * (1 - a[i] * a[i])
        else:
            for i in range(n):
                out[i] = g[i] * (1 - a[i] * a[i])
    elif kind == EW_SIGMOID:
        if add:
            for i in range(n):
                out[i] += g[i] * a[i] * (1 - a[i])
        else:
            for i in range(n):
                out[i] = g[i] * a[i] * (1 - a[i])
    elif kind == EW_RELU:         # MXNet's relu_grad: 1 above 0, 0 else, NaN passes through
        if add:
            for i in range(n):
                out[i] += g[i] * (a[i] if a[i] != a[i] else <floating>(a[i] > 0))
        else:
            for i in range(n):
                out[i] = g[i] * (a[i] if a[i] != a[i] else <floating>(a[i] > 0))
    elif kind == EW_SQRT:
        if add:
            for i in range(n):
                out[i] += g[i] / (a[i] * 2)
        else:
            for i in range(n):
                out[i] = g[i] / (a[i] * 2)
    elif kind == EW_SQUARE:
        if add:
            for i in range(n):
                out[i] += g[i] * a[i] * 2
        else:
            for i in range(n):
                out[i] = g[i] * a[i] * 2
    else:                          # EW_ABS: NumPy's sign (0 at 0, NaN passes through)
        if add:
            for i in range(n):
                out[i] += g[i] * (1 if a[i] > 0 else (-1 if a[i] < 0 else (a[i] if a[i] != a[i] else 0)))
        else:
            for i in range(n):
                out[i] = g[i] * (1 if a[i] > 0 else (-1 if a[i] < 0 else (a[i] if a[i] != a[i] else 0)))


cdef inline void _ew_in_place(int kind, floating* out, const floating* a, const floating* b,
                              double s, Py_ssize_t n) noexcept nogil:
    # ``_ew`` writing into the out-grad it reads: through one pointer, so that the
    # compiler's overlap check (out against g) does not send the loop to its scalar form
    cdef Py_ssize_t i
    cdef floating c = <floating>s
    if kind == EW_NEG:
        for i in range(n):
            out[i] = -out[i]
    elif kind == EW_SCALE:
        for i in range(n):
            out[i] = out[i] * c
    elif kind == EW_DIV_SCALAR:
        for i in range(n):
            out[i] = out[i] / c
    elif kind == EW_MUL:
        for i in range(n):
            out[i] = out[i] * a[i]
    elif kind == EW_DIV:
        for i in range(n):
            out[i] = out[i] / a[i]
    elif kind == EW_DIV_RHS:
        for i in range(n):
            out[i] = -out[i] * a[i] / (b[i] * b[i])
    elif kind == EW_RDIV_SCALAR:
        for i in range(n):
            out[i] = -out[i] * a[i] / b[i]
    elif kind == EW_TANH:
        for i in range(n):
            out[i] = out[i] * (1 - a[i] * a[i])
    elif kind == EW_SIGMOID:
        for i in range(n):
            out[i] = out[i] * a[i] * (1 - a[i])
    elif kind == EW_RELU:
        for i in range(n):
            out[i] = out[i] * (a[i] if a[i] != a[i] else <floating>(a[i] > 0))
    elif kind == EW_SQRT:
        for i in range(n):
            out[i] = out[i] / (a[i] * 2)
    elif kind == EW_SQUARE:
        for i in range(n):
            out[i] = out[i] * a[i] * 2
    else:                          # EW_ABS
        for i in range(n):
            out[i] = out[i] * (1 if a[i] > 0 else (-1 if a[i] < 0 else (a[i] if a[i] != a[i] else 0)))


cdef void ew_f32(int kind, float* out, const float* g, const float* a, const float* b,
                 double s, Py_ssize_t n, bint add) noexcept nogil:
    if out == g and not add:
        if kind != EW_COPY:
            _ew_in_place[float32_t](kind, out, a, b, s, n)
    else:
        _ew[float32_t](kind, out, g, a, b, s, n, add)


cdef void ew_f64(int kind, double* out, const double* g, const double* a, const double* b,
                 double s, Py_ssize_t n, bint add) noexcept nogil:
    if out == g and not add:
        if kind != EW_COPY:
            _ew_in_place[float64_t](kind, out, a, b, s, n)
    else:
        _ew[float64_t](kind, out, g, a, b, s, n, add)


cdef inline void _rowsum(floating* out, const floating* g, Py_ssize_t rows, Py_ssize_t cols,
                         double s, bint add) noexcept nogil:
    cdef Py_ssize_t m, k
    cdef const floating* row
    cdef floating c = <floating>s
    if not add:
        for k in range(cols):
            out[k] = 0
    if c == 1:
        for m in range(rows):
            row = g + m * cols
            for k in range(cols):
                out[k] += row[k]
    else:
        for m in range(rows):
            row = g + m * cols
            for k in range(cols):
                out[k] += row[k] * c


cdef void rowsum_f32(float* out, const float* g, Py_ssize_t rows, Py_ssize_t cols, double s,
                     bint add) noexcept nogil:
    _rowsum[float32_t](out, g, rows, cols, s, add)


cdef void rowsum_f64(double* out, const double* g, Py_ssize_t rows, Py_ssize_t cols,
                     double s, bint add) noexcept nogil:
    _rowsum[float64_t](out, g, rows, cols, s, add)


cdef inline void _relu_rowsum(floating* out, floating* g, const floating* a,
                              Py_ssize_t rows, Py_ssize_t cols, bint add) noexcept nogil:
    cdef Py_ssize_t m, k
    cdef floating* row
    cdef const floating* arow
    cdef floating v
    if out != NULL and not add:
        for k in range(cols):
            out[k] = 0
    for m in range(rows):
        row = g + m * cols
        arow = a + m * cols
        if out == NULL:
            for k in range(cols):
                row[k] = row[k] * (arow[k] if arow[k] != arow[k] else <floating>(arow[k] > 0))
        else:
            for k in range(cols):
                v = row[k] * (arow[k] if arow[k] != arow[k] else <floating>(arow[k] > 0))
                row[k] = v
                out[k] += v


cdef void relu_rowsum_f32(float* out, float* g, const float* a, Py_ssize_t rows,
                          Py_ssize_t cols, bint add) noexcept nogil:
    _relu_rowsum[float32_t](out, g, a, rows, cols, add)


cdef void relu_rowsum_f64(double* out, double* g, const double* a, Py_ssize_t rows,
                          Py_ssize_t cols, bint add) noexcept nogil:
    _relu_rowsum[float64_t](out, g, a, rows, cols, add)


cdef inline void _fill(floating* out, const floating* g, double d, Py_ssize_t n,
                       bint add) noexcept nogil:
    cdef Py_ssize_t i
    cdef floating v = g[0] / <floating>d
    if add:
        for i in range(n):
            out[i] += v
    else:
        for i in range(n):
            out[i] = v


cdef void fill_f32(float* out, const float* g, double d, Py_ssize_t n, bint add) noexcept nogil:
    _fill[float32_t](out, g, d, n, add)


cdef void fill_f64(double* out, const double* g, double d, Py_ssize_t n,
                   bint add) noexcept nogil:
    _fill[float64_t](out, g, d, n, add)


cdef inline Py_ssize_t _label(const void* label, int ltype, Py_ssize_t i) noexcept nogil:
    if ltype == LABEL_F32:
        return <Py_ssize_t>(<const float*>label)[i]
    if ltype == LABEL_F64:
        return <Py_ssize_t>(<const double*>label)[i]
    if ltype == LABEL_I32:
        return (<const int*>label)[i]
    return <Py_ssize_t>(<const long long*>label)[i]


cdef inline void _softmax_ce(floating* out, const floating* x, const floating* prob,
                             const void* label, int ltype, const floating* g,
                             Py_ssize_t g_step, Py_ssize_t n, Py_ssize_t k,
                             bint add) noexcept nogil:
    # the Python rule's steps: p = exp(x - max) / sum, p[label] -= 1, p *= g
    cdef Py_ssize_t i, j, y
    cdef const floating* row
    cdef floating* o
    cdef floating mx, total, p, gi
    for i in range(n):
        o = out + i * k
        gi = g[i * g_step]
        y = _label(label, ltype, i)
        if prob != NULL:
            row = prob + i * k
            total = 1
            mx = 0
        else:
            row = x + i * k
            mx = row[0]
            for j in range(1, k):
                if row[j] > mx:
                    mx = row[j]
            total = 0
            for j in range(k):
                total += <floating>exp(row[j] - mx)
        for j in range(k):
            p = row[j] if prob != NULL else <floating>exp(row[j] - mx) / total
            if j == y:
                p -= 1
            p *= gi
            if add:
                o[j] += p
            else:
                o[j] = p


cdef void softmax_ce_f32(float* out, const float* x, const float* prob, const void* label,
                         int ltype, const float* g, Py_ssize_t g_step, Py_ssize_t n,
                         Py_ssize_t k, bint add) noexcept nogil:
    _softmax_ce[float32_t](out, x, prob, label, ltype, g, g_step, n, k, add)


cdef void softmax_ce_f64(double* out, const double* x, const double* prob, const void* label,
                         int ltype, const double* g, Py_ssize_t g_step, Py_ssize_t n,
                         Py_ssize_t k, bint add) noexcept nogil:
    _softmax_ce[float64_t](out, x, prob, label, ltype, g, g_step, n, k, add)


cdef inline void _log_softmax(floating* out, const floating* g, const floating* y,
                              Py_ssize_t rows, Py_ssize_t k, bint add) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef floating total, v
    for i in range(rows):
        total = 0
        for j in range(k):
            total += g[i * k + j]
        for j in range(k):
            v = g[i * k + j] - <floating>exp(y[i * k + j]) * total
            if add:
                out[i * k + j] += v
            else:
                out[i * k + j] = v


cdef void log_softmax_f32(float* out, const float* g, const float* y, Py_ssize_t rows,
                          Py_ssize_t k, bint add) noexcept nogil:
    _log_softmax[float32_t](out, g, y, rows, k, add)


cdef void log_softmax_f64(double* out, const double* g, const double* y, Py_ssize_t rows,
                          Py_ssize_t k, bint add) noexcept nogil:
    _log_softmax[float64_t](out, g, y, rows, k, add)


cdef inline void _pick(floating* out, const floating* g, const void* index, int itype,
                       bint wrap, Py_ssize_t rows, Py_ssize_t k, bint add) noexcept nogil:
    cdef Py_ssize_t i
    if not add:
        for i in range(rows * k):
            out[i] = 0
    if k == 0:
        return
    for i in range(rows):
        out[i * k + pick_column(_label(index, itype, i), k, wrap)] += g[i]


cdef void pick_f32(float* out, const float* g, const void* index, int itype, bint wrap,
                   Py_ssize_t rows, Py_ssize_t k, bint add) noexcept nogil:
    _pick[float32_t](out, g, index, itype, wrap, rows, k, add)


cdef void pick_f64(double* out, const double* g, const void* index, int itype, bint wrap,
                   Py_ssize_t rows, Py_ssize_t k, bint add) noexcept nogil:
    _pick[float64_t](out, g, index, itype, wrap, rows, k, add)
