"""The KVStore's host kernels (runtime/kvstore.py): the deterministic merge of the
row_sparse gradients that the ranks exchanged, and MXNet's 2-bit gradient compression.

``merge_blocks``: the ranks' packed blocks (each rank's sorted, unique int64 row ids,
then its rows) as one Allgatherv delivered them; one walk merges the blocks' ids like
the merge step of a merge sort and writes each id of the union with its row: zero plus
the ranks' rows in rank order, so every rank computes the same bits.  The same walk
checks that each block's ids strictly increase (the output is then not used).

``quantize_2bit``: residual += grad; every value of the residual at or above
``threshold`` sends +threshold (code 1) and loses it, every value at or below
-threshold sends -threshold (code 2) and gains it back, the others send 0 (code 0):
MXNet's 2-bit scheme with error feedback.  Four codes a byte, the first value in the
lowest two bits.  ``dequantize_2bit_add``: out += the values the codes stand for.
"""

cimport numpy as cnp
import numpy as np

from runtime._types cimport float32_t, float64_t, floating, int64_t, uint8_t

cnp.import_array()

__all__ = ["merge_blocks", "quantize_2bit", "dequantize_2bit_add"]


cdef struct _Blocks:
    # the ranks' packed blocks in one Allgatherv buffer: rank r's n[r] int64 ids start at
    # base + off[r], its n[r] rows right after them; head[r] is the next id to take
    const uint8_t* base
    const int64_t* n
    const int64_t* off
    Py_ssize_t* head
    Py_ssize_t ranks


cdef inline const int64_t* _ids(_Blocks* b, Py_ssize_t r) noexcept nogil:
    return <const int64_t*>(b.base + b.off[r])


cdef int64_t _next_id(_Blocks* b, Py_ssize_t* found) noexcept nogil:
    """The smallest id at the heads (found[0] = -1 when every block is consumed)."""
    cdef Py_ssize_t r
    cdef int64_t best = 0, v
    found[0] = -1
    for r in range(b.ranks):
        if b.head[r] < b.n[r]:
            v = _ids(b, r)[b.head[r]]
            if found[0] < 0 or v < best:
                best = v
                found[0] = r
    return best


cdef Py_ssize_t _merge(_Blocks* b, int64_t* union_ids, floating* out, Py_ssize_t width,
                       Py_ssize_t* bad_rank) noexcept nogil:
    """Walk the union once: each id's row is 0 plus the ranks' rows in rank order.
    Returns the number of union ids, or -1 with ``bad_rank[0]`` and the bad position
    in its head where a block's ids do not strictly increase."""
    cdef Py_ssize_t r, c, k = 0, found
    cdef int64_t v
    cdef const floating* src
    cdef floating* dst
    for r in range(b.ranks):
        b.head[r] = 0
    while True:
        v = _next_id(b, &found)
        if found < 0:
            return k
        union_ids[k] = v
        dst = out + k * width
        for c in range(width):
            dst[c] = 0
        for r in range(b.ranks):
            if b.head[r] < b.n[r] and _ids(b, r)[b.head[r]] == v:
                src = <const floating*>(b.base + b.off[r] + 8 * b.n[r]) + b.head[r] * width
                for c in range(width):
                    dst[c] = dst[c] + src[c]
                b.head[r] += 1
                # v was the smallest head: a next id not above it is out of order
                if b.head[r] < b.n[r] and _ids(b, r)[b.head[r]] <= v:
                    bad_rank[0] = r
                    return -1
        k += 1


cdef int _blocks(_Blocks* b, const uint8_t[::1] buf, const int64_t[::1] counts,
                 const int64_t[::1] offsets, Py_ssize_t row_bytes,
                 Py_ssize_t[::1] head) except -1:
    cdef Py_ssize_t r, ranks = counts.shape[0]
    if offsets.shape[0] != ranks or head.shape[0] != ranks:
        raise ValueError(f"merge_blocks: counts and offsets must have one entry a rank "
                         f"(got {ranks} and {offsets.shape[0]})")
    for r in range(ranks):
        if counts[r] < 0 or offsets[r] < 0 or offsets[r] % 8 or \
                offsets[r] + counts[r] * (8 + row_bytes) > buf.shape[0]:
            raise ValueError(f"merge_blocks: rank {r}'s block must lie 8-byte aligned in "
                             f"the {buf.shape[0]} bytes (got {counts[r]} rows at offset "
                             f"{offsets[r]})")
    b.base = &buf[0] if buf.shape[0] else NULL
    b.n = &counts[0]
    b.off = &offsets[0]
    b.head = &head[0]
    b.ranks = ranks
    return 0


def merge_blocks(const uint8_t[::1] buf, const int64_t[::1] counts,
                 const int64_t[::1] offsets, int64_t[::1] union_ids,
                 floating[:, ::1] out):
    """Write the sorted union of the ranks' ids into ``union_ids`` and each id's summed
    rows, added in rank order, into ``out`` (both with room for ``counts.sum()`` rows,
    the most there can be); returns (number of union ids, -1, -1), or (-1, rank,
    position) of the first id that is not above its predecessor in its block."""
    cdef _Blocks b
    cdef Py_ssize_t width = out.shape[1], n, bad = -1, total = 0, r
    head = np.zeros(counts.shape[0], np.intp)
    cdef Py_ssize_t[::1] h = head
    for r in range(counts.shape[0]):
        total += counts[r]
    if out.shape[0] < total or union_ids.shape[0] < total:
        raise ValueError(f"merge_blocks: union_ids and out must have room for the "
                         f"{total} rows of the blocks (got {union_ids.shape[0]} and "
                         f"{out.shape[0]})")
    if total == 0:
        return 0, -1, -1
    _blocks(&b, buf, counts, offsets, width * sizeof(floating), h)
    with nogil:
        n = _merge(&b, &union_ids[0], &out[0, 0], width, &bad)
    if n < 0:
        return -1, bad, h[bad]
    return n, -1, -1


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
