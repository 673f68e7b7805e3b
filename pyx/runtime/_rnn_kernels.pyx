"""The per-time-step passes of the fused recurrent operator (runtime/ops/rnn.py).

Between two of them the caller runs the step's recurrent GEMM in NumPy (BLAS); the
input projections of all steps and the weight gradients are GEMMs over all steps.  Each
pass here is one sweep over a (batch, gates * state_size) block, C-contiguous, float32
or float64, gates laid out as MXNet's (LSTM: i, f, g, o; GRU: r, z, n).

The LSTM's forward leaves its tanh to NumPy, whose tanh is vectorised (SIMD) where a
scalar libm call per element would cost more than the step's GEMM: ``lstm_preact`` adds
the recurrent part and the bias and halves the sigmoid gates' pre-activations
(``sigmoid(v) = (1 + tanh(v / 2)) / 2``), NumPy takes the tanh of the block,
``lstm_cell`` finishes the gates and writes the new cell, NumPy takes tanh of the cell
and multiplies by the output gate.  The backward passes need no transcendental: they
read the gates and ``tanh(c)`` the forward kept.

``dy`` arguments are a layer's whole output gradient (T, N, D*H); a pass reads time step
``s`` and columns ``off .. off + H`` of it (the direction's half).
"""

from libc.math cimport exp, expf, tanh, tanhf

from runtime._types cimport float32_t, floating

__all__ = ["lstm_preact", "lstm_cell", "lstm_backward", "gru_forward", "gru_backward",
           "rnn_preact", "rnn_backward"]


cdef inline floating _sigmoid(floating v) noexcept nogil:
    if floating is float32_t:
        return 1.0 / (1.0 + expf(-v))
    else:
        return 1.0 / (1.0 + exp(-v))


cdef inline floating _tanh(floating v) noexcept nogil:
    if floating is float32_t:
        return tanhf(v)
    else:
        return tanh(v)


def lstm_preact(floating[:, ::1] gates, const floating[:, ::1] rec,
                const floating[::1] bias):
    """``gates = (gates + rec + bias) * scale`` in place, ``scale`` 1/2 on the sigmoid
    gates (i, f, o) and 1 on g: what NumPy's tanh turns into the gates."""
    cdef Py_ssize_t n = gates.shape[0], w = gates.shape[1], h = w // 4, a, j
    with nogil:
        for a in range(n):
            for j in range(2 * h):
                gates[a, j] = 0.5 * (gates[a, j] + rec[a, j] + bias[j])
            for j in range(2 * h, 3 * h):
                gates[a, j] = gates[a, j] + rec[a, j] + bias[j]
            for j in range(3 * h, w):
                gates[a, j] = 0.5 * (gates[a, j] + rec[a, j] + bias[j])


def lstm_cell(floating[:, ::1] gates, const floating[:, ::1] cprev, floating[:, ::1] c):
    """From ``gates`` holding tanh of :func:`lstm_preact`'s values: the sigmoid gates
    ``(1 + t) / 2`` written back in place, and ``c = f * cprev + i * g``."""
    cdef Py_ssize_t n = c.shape[0], h = c.shape[1], a, j
    cdef floating gi, gf
    with nogil:
        for a in range(n):
            for j in range(h):
                gi = 0.5 + 0.5 * gates[a, j]
                gf = 0.5 + 0.5 * gates[a, h + j]
                gates[a, j] = gi
                gates[a, h + j] = gf
                gates[a, 3 * h + j] = 0.5 + 0.5 * gates[a, 3 * h + j]
                c[a, j] = gf * cprev[a, j] + gi * gates[a, 2 * h + j]


def lstm_backward(const floating[:, ::1] gates, const floating[:, ::1] tc,
                  const floating[:, ::1] cprev, const floating[:, :, ::1] dy, Py_ssize_t s,
                  Py_ssize_t off, const floating[:, ::1] dhrec, floating[:, ::1] dc,
                  floating[:, ::1] dg, const floating[:, ::1] keep=None):
    """One LSTM step backward.  ``gates`` (i, f, g, o after their nonlinearities),
    ``tc = tanh(c)`` and ``cprev`` are the forward's; the step's hidden gradient is
    ``dy[s, :, off:off+H] + dhrec`` (``dhrec``: the next step's gates' gradient times
    W_hh).  ``dc`` holds the gradient of this step's cell and leaves with the previous
    one's; ``dg`` receives the gradient of the gates' pre-activations.  ``keep`` (with
    state clipping): 1 where the cell was inside the clipping range, else 0, the
    clip's derivative."""
    cdef Py_ssize_t n = dc.shape[0], h = dc.shape[1], a, j
    cdef floating gi, gf, gg, go, t, dh, dcc
    cdef bint clipped = keep is not None
    with nogil:
        for a in range(n):
            for j in range(h):
                gi = gates[a, j]
                gf = gates[a, h + j]
                gg = gates[a, 2 * h + j]
                go = gates[a, 3 * h + j]
                t = tc[a, j]
                dh = dy[s, a, off + j] + dhrec[a, j]
                dcc = dc[a, j] + dh * go * (1 - t * t)
                if clipped:
                    dcc = dcc * keep[a, j]
                dg[a, j] = dcc * gg * gi * (1 - gi)
                dg[a, h + j] = dcc * cprev[a, j] * gf * (1 - gf)
                dg[a, 2 * h + j] = dcc * gi * (1 - gg * gg)
                dg[a, 3 * h + j] = dh * t * go * (1 - go)
                dc[a, j] = dcc * gf


def gru_forward(floating[:, ::1] gates, const floating[:, ::1] rec,
                const floating[::1] bx, const floating[::1] bh,
                const floating[:, ::1] hprev, floating[:, ::1] hn, floating[:, ::1] h):
    """One GRU step: ``gates`` holds ``W_ih x`` (r, z, n) and leaves with r, z, n after
    their nonlinearities; ``rec = W_hh h_prev``; ``hn`` receives ``W_hn h_prev + b_hn``
    (which the gradient of r reads) and ``h`` the new state
    ``(1 - z) * n + z * h_prev``, ``n = tanh(W_in x + b_in + r * hn)``."""
    cdef Py_ssize_t n = h.shape[0], w = h.shape[1], a, j
    cdef floating r, z, m, q
    with nogil:
        for a in range(n):
            for j in range(w):
                r = _sigmoid(gates[a, j] + bx[j] + rec[a, j] + bh[j])
                z = _sigmoid(gates[a, w + j] + bx[w + j] + rec[a, w + j] + bh[w + j])
                q = rec[a, 2 * w + j] + bh[2 * w + j]
                m = _tanh(gates[a, 2 * w + j] + bx[2 * w + j] + r * q)
                gates[a, j] = r
                gates[a, w + j] = z
                gates[a, 2 * w + j] = m
                hn[a, j] = q
                h[a, j] = (1 - z) * m + z * hprev[a, j]


def gru_backward(const floating[:, ::1] gates, const floating[:, ::1] hn,
                 const floating[:, ::1] hprev, const floating[:, :, ::1] dy, Py_ssize_t s,
                 Py_ssize_t off, const floating[:, ::1] dhrec, floating[:, ::1] carry,
                 floating[:, ::1] dgx, floating[:, ::1] dgh):
    """One GRU step backward.  The step's hidden gradient is ``dy[s, :, off:off+H] +
    dhrec + carry`` (``carry``: the direct path ``z * dh`` of the next step, which it
    leaves with for this one); ``dgx`` and ``dgh`` receive the gradients of the input and
    recurrent pre-activations (they differ on n: ``dn`` and ``dn * r``)."""
    cdef Py_ssize_t n = carry.shape[0], w = carry.shape[1], a, j
    cdef floating r, z, m, dh, dn, dr, dz
    with nogil:
        for a in range(n):
            for j in range(w):
                r = gates[a, j]
                z = gates[a, w + j]
                m = gates[a, 2 * w + j]
                dh = dy[s, a, off + j] + dhrec[a, j] + carry[a, j]
                dn = dh * (1 - z) * (1 - m * m)
                dz = dh * (hprev[a, j] - m) * z * (1 - z)
                dr = dn * hn[a, j] * r * (1 - r)
                carry[a, j] = dh * z
                dgx[a, j] = dr
                dgx[a, w + j] = dz
                dgx[a, 2 * w + j] = dn
                dgh[a, j] = dr
                dgh[a, w + j] = dz
                dgh[a, 2 * w + j] = dn * r


def rnn_preact(const floating[:, ::1] pre, const floating[:, ::1] rec,
               const floating[::1] bias, floating[:, ::1] h, bint relu):
    """``h = pre + rec + bias``, then max(., 0) with ``relu`` (tanh is NumPy's)."""
    cdef Py_ssize_t n = h.shape[0], w = h.shape[1], a, j
    cdef floating v
    with nogil:
        for a in range(n):
            for j in range(w):
                v = pre[a, j] + rec[a, j] + bias[j]
                h[a, j] = (v if v > 0 else 0) if relu else v


def rnn_backward(const floating[:, ::1] h, const floating[:, :, ::1] dy, Py_ssize_t s,
                 Py_ssize_t off, const floating[:, ::1] dhrec, floating[:, ::1] dg,
                 bint relu):
    """One vanilla step backward: ``dg = (dy[s, :, off:off+H] + dhrec) * act'``, the
    derivative read from the step's output ``h`` (tanh: ``1 - h^2``; relu: ``h > 0``)."""
    cdef Py_ssize_t n = h.shape[0], w = h.shape[1], a, j
    cdef floating dh, v
    with nogil:
        for a in range(n):
            for j in range(w):
                dh = dy[s, a, off + j] + dhrec[a, j]
                v = h[a, j]
                if relu:
                    dg[a, j] = dh if v > 0 else 0
                else:
                    dg[a, j] = dh * (1 - v * v)
