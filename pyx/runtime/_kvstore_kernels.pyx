"""The KVStore's host kernels (runtime/kvstore.py): the deterministic merge of the
row_sparse gradients that the ranks exchanged, and MXNet's 2-bit gradient compression.

``merge_rows``: adds one rank's (sorted, unique) row ids' rows into the rows of the
sorted union of every rank's ids; called for each rank in rank order, each id's rows are
added in rank order, so that every rank computes the same bits.  A block whose ids are
not strictly increasing (or not in the union) stops the kernel before anything is
written: it returns the position of the offending id (-1 when the block is good).

``quantize_2bit``: residual += grad; every value of the residual at or above
``threshold`` sends +threshold (code 1) and loses it, every value at or below
-threshold sends -threshold (code 2) and gains it back, the others send 0 (code 0):
MXNet's 2-bit scheme with error feedback.  Four codes a byte, the first value in the
lowest two bits.  ``dequantize_2bit_add``: out += the values the codes stand for.
"""

cimport numpy as cnp

from runtime._types cimport float32_t, float64_t, floating, int64_t, uint8_t

cnp.import_array()

__all__ = ["merge_rows", "quantize_2bit", "dequantize_2bit_add"]


cdef Py_ssize_t _merge(const int64_t* ids, const floating* rows, Py_ssize_t n,
                       const int64_t* union_ids, Py_ssize_t n_union, floating* out,
                       Py_ssize_t width) noexcept nogil:
    """Check the block, then add its rows; returns -1 or the first bad position."""
    cdef Py_ssize_t j, p = 0, c
    cdef const floating* src
    cdef floating* dst
    for j in range(n):
        if j and ids[j] <= ids[j - 1]:
            return j
        while p < n_union and union_ids[p] < ids[j]:
            p += 1
        if p == n_union or union_ids[p] != ids[j]:
            return j
    p = 0
    for j in range(n):
        while union_ids[p] < ids[j]:        # both sorted: one walk per block
            p += 1
        src = rows + j * width
        dst = out + p * width
        for c in range(width):
            dst[c] = dst[c] + src[c]
    return -1


def merge_rows(const int64_t[::1] ids, const floating[:, ::1] rows,
               const int64_t[::1] union_ids, floating[:, ::1] out):
    """Add one rank's rows into ``out`` (one row per id of ``union_ids``); the caller
    calls it for each rank in rank order.  Returns -1, or the position of the first id
    that is not above its predecessor or not in ``union_ids`` (then nothing is written)."""
    cdef Py_ssize_t bad = -1, n = ids.shape[0]
    if rows.shape[0] != n or out.shape[0] != union_ids.shape[0] or rows.shape[1] != out.shape[1]:
        raise ValueError(f"merge_rows: shapes must agree (got ids {n}, rows "
                         f"({rows.shape[0]}, {rows.shape[1]}), union {union_ids.shape[0]}, out "
                         f"({out.shape[0]}, {out.shape[1]}))")
    if n == 0 or out.shape[1] == 0:
        return -1
    with nogil:
        bad = _merge(&ids[0], &rows[0, 0], n, &union_ids[0], union_ids.shape[0],
                     &out[0, 0], out.shape[1])
    return bad


def quantize_2bit(const floating[::1] grad, floating[::1] residual, double threshold,
                  uint8_t[::1] codes):
    """Fold ``grad`` into ``residual`` and write the 2-bit codes (module docstring);
    ``codes`` holds ceil(n / 4) bytes."""
    cdef Py_ssize_t i, n = grad.shape[0]
    cdef floating t = <floating>threshold, v
    cdef uint8_t code
    with nogil:
        for i in range((n + 3) // 4):
            codes[i] = 0
        for i in range(n):
            v = residual[i] + grad[i]
            code = 0
            if v >= t:
                code = 1
                v = v - t
            elif v <= -t:
                code = 2
                v = v + t
            residual[i] = v
            codes[i >> 2] |= code << ((i & 3) * 2)


def dequantize_2bit_add(const uint8_t[::1] codes, double threshold, floating[::1] out):
    """out += the values of ``codes`` (+threshold, -threshold or 0 each)."""
    cdef Py_ssize_t i, n = out.shape[0]
    cdef floating t = <floating>threshold
    cdef uint8_t code
    with nogil:
        for i in range(n):
            code = (codes[i >> 2] >> ((i & 3) * 2)) & 3
            if code == 1:
                out[i] = out[i] + t
            elif code == 2:
                out[i] = out[i] - t
