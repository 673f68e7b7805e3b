"""op_samples entries for MXNet's contrib operators (runtime/ops/contrib.py); see
op_samples.py for the tables' meaning.  ``_contrib_boolean_mask`` takes the count of
selected entries as its ``size`` attribute here (nd.contrib.boolean_mask counts it)."""

import math

import numpy as np

from tests.runtime.op_samples import (FAILURES, I64, SAMPLES, ZERO_SIZE, Failure, Sample,
                                      ZeroSize, _add, _csr, ints, uniform, zeros)

_X = uniform((4, 3), seed=31)
_X3 = uniform((2, 4, 3), seed=32)


def _np_mask(x, index, axis=0):
    return np.take(x, np.flatnonzero(index), axis=axis)


# -- boolean_mask ------------------------------------------------------------------------------

_add(SAMPLES, "_contrib_boolean_mask",
     Sample([_X, ints(0, 1, 0, 1)], {"size": 2}),
     Sample([_X, np.array([0.0, 2.5, -1.0, 0.0])], {"size": 2}, wrt=[0]),
     Sample([_X3, np.array([True, False, True, True])], {"axis": 1, "size": 3}),
     Sample([_X3, ints(1, 0, 1)], {"axis": -1, "size": 2}),
     Sample([_X, ints(0, 0, 0, 0)], {"size": 0}),
     Sample([ints(5, 6, 7), ints(1, 1, 0)], {"size": 2}, grad=False))
_add(FAILURES, "_contrib_boolean_mask",
     Failure([_X, ints(0, 1, 0)], {"size": 1}, ValueError,
             r"^_contrib_boolean_mask: index must be 1-D with one entry per position of "
             r"data's axis 0 \(got index shape \(3,\) for data shape \(4, 3\)\)"),
     Failure([_X, ints(0, 1, 0, 1)], {}, ValueError,
             r"^_contrib_boolean_mask: size, the number of nonzero entries of index, must "
             r"be given"),
     Failure([_X, ints(0, 1, 0, 1)], {"size": 5}, ValueError,
             r"^_contrib_boolean_mask: size must be in \[0, 4\]"),
     Failure([_X, ints(0, 1, 0, 1)], {"axis": 2, "size": 2}, ValueError,
             r"^_contrib_boolean_mask: axis 2 is out of range"),
     Failure([_X, ints(0, 1, 0, 1)], {"size": 1}, ValueError,
             r"^_contrib_boolean_mask: size must equal the number of nonzero entries of "
             r"index \(2\) \(got 1\)", out=((1, 3), np.float64)))
_add(ZERO_SIZE, "_contrib_boolean_mask",
     ZeroSize([zeros(0, 3), ints()], {"size": 0}, _np_mask),
     ZeroSize([zeros(4, 0), ints(1, 0, 1, 1)], {"size": 3}, _np_mask))

_add(SAMPLES, "_backward_contrib_boolean_mask",
     Sample([uniform((2, 3), seed=33), ints(0, 1, 0, 1)], {"shape": (4, 3)}),
     Sample([uniform((2, 2, 3), seed=34), ints(1, 0, 0, 1)], {"axis": 1, "shape": (2, 4, 3)}))
_add(FAILURES, "_backward_contrib_boolean_mask",
     Failure([uniform((2, 3)), ints(0, 1, 0, 1)], {"shape": (4, 2)}, ValueError,
             r"^_backward_contrib_boolean_mask: data \(2, 3\) must match shape \(4, 2\) "
             r"except on axis 0"),
     Failure([uniform((2, 3)), ints(1, 1, 0, 1)], {"shape": (4, 3)}, ValueError,
             r"^_backward_contrib_boolean_mask: data's length on the axis must equal the "
             r"number of nonzero entries of index \(3\) \(got 2\)", out=((4, 3), np.float64)))
_add(ZERO_SIZE, "_backward_contrib_boolean_mask",
     ZeroSize([zeros(0, 3), ints(0, 0)], {"shape": (2, 3)}, lambda g, i: np.zeros((2, 3))))


# -- index_copy ----------------------------------------------------------------------------------

def _np_index_copy(old, index, new):
    res = old.copy()
    res[index.astype(np.int64)] = new
    return res


_add(SAMPLES, "_contrib_index_copy",
     Sample([_X, ints(0, 3), uniform((2, 3), seed=35)]),
     Sample([_X3, np.array([1.0]), uniform((1, 4, 3), seed=36)], wrt=[0, 2]),
     Sample([uniform((5,), seed=37), ints(4, 0, 2), uniform((3,), seed=38)]),
     Sample([ints(1, 2, 3), ints(2), ints(9)], grad=False))
_add(FAILURES, "_contrib_index_copy",
     Failure([_X, ints(0, 3), uniform((2, 2))], {}, ValueError,
             r"^_contrib_index_copy: new_tensor must have shape \(2, 3\)"),
     Failure([_X, ints(0, 3).reshape(1, 2), uniform((2, 3))], {}, ValueError,
             r"^_contrib_index_copy: index_vector must be 1-D"),
     Failure([_X, ints(0, 1), uniform((2, 3)).astype(np.float32)], {}, TypeError,
             r"^_contrib_index_copy: old_tensor and new_tensor must have one dtype"),
     Failure([_X, ints(0, 4), uniform((2, 3))], {}, IndexError,
             r"^_contrib_index_copy: index 4"))
_add(ZERO_SIZE, "_contrib_index_copy",
     ZeroSize([zeros(3, 0), ints(1, 2), zeros(2, 0)], {}, _np_index_copy),
     ZeroSize([_X, ints(), zeros(0, 3)], {}, _np_index_copy))


# -- index_array ---------------------------------------------------------------------------------

def _np_index_array(x, axes=None):
    grids = np.indices(x.shape)
    axes = range(x.ndim) if axes is None else axes
    return np.stack([grids[a] for a in axes], axis=-1)


_add(SAMPLES, "_contrib_index_array",
     Sample([_X], grad=False), Sample([_X3], {"axes": (1, 0)}, grad=False),
     Sample([_X3], {"axes": -1}, grad=False), Sample([ints(3, 4)], grad=False))
_add(FAILURES, "_contrib_index_array",
     Failure([_X], {"axes": (0, 2)}, ValueError,
             r"^_contrib_index_array: axis 2 is out of range", out=((4, 3, 2), I64)))
_add(ZERO_SIZE, "_contrib_index_array",
     ZeroSize([zeros(0, 3)], {}, _np_index_array),
     ZeroSize([zeros(2, 0)], {"axes": (1,)}, lambda x: _np_index_array(x, (1,))))


# -- arange_like ---------------------------------------------------------------------------------

def _np_arange_like(x, start=0.0, step=1.0, repeat=1, axis=None):
    n = x.size if axis is None else x.shape[axis]
    vals = start + (np.arange(n) // repeat) * step
    return vals.reshape(x.shape if axis is None else (n,)).astype(x.dtype)


_add(SAMPLES, "_contrib_arange_like",
     Sample([_X], grad=False),
     Sample([_X3], {"start": 1.5, "step": -0.5, "repeat": 2}, grad=False),
     Sample([_X3], {"axis": -2, "start": 3.0}, grad=False),
     Sample([ints(4, 5, 6)], {"start": 2.0, "step": 3.0}, grad=False))
_add(FAILURES, "_contrib_arange_like",
     Failure([_X], {"repeat": 0}, ValueError,
             r"^_contrib_arange_like: repeat must be >= 1 \(got repeat=0\)"),
     Failure([_X], {"axis": 2}, ValueError, r"^_contrib_arange_like: axis 2 is out of range"),
     Failure([np.array([True])], {}, TypeError, r"^_contrib_arange_like: bool input"))
_add(ZERO_SIZE, "_contrib_arange_like",
     ZeroSize([zeros(0, 3)], {"step": 2.0}, lambda x: _np_arange_like(x, step=2.0)),
     ZeroSize([zeros(0, 3)], {"axis": 1}, lambda x: _np_arange_like(x, axis=1)))


# -- div_sqrt_dim, quadratic, gradientmultiplier -------------------------------------------------

_add(SAMPLES, "_contrib_div_sqrt_dim",
     Sample([_X]), Sample([_X3]), Sample([_X.astype(np.float32)], grad=False))
_add(FAILURES, "_contrib_div_sqrt_dim",
     Failure([ints(1, 2)], {}, TypeError,
             r"^_contrib_div_sqrt_dim: needs a floating-point input \(got int64\)"),
     Failure([np.float64(2.0)], {}, ValueError,
             r"^_contrib_div_sqrt_dim: data must have at least one dimension", out=False))
_add(ZERO_SIZE, "_contrib_div_sqrt_dim",
     ZeroSize([zeros(0, 4)], {}, lambda x: x / 2.0), ZeroSize([zeros(3, 0)], {}, lambda x: x))

_add(SAMPLES, "_contrib_quadratic",
     Sample([_X], {"a": 1.5, "b": -2.0, "c": 0.5}),
     Sample([_X3], {"a": -0.5}),
     Sample([_X], {}),
     Sample([ints(1, -2, 3)], {"a": 2.7, "b": 1.0, "c": -3.0}, grad=False))
_add(FAILURES, "_contrib_quadratic",
     Failure([np.array([True])], {"a": 1.0}, TypeError, r"^_contrib_quadratic: bool input"))
_add(ZERO_SIZE, "_contrib_quadratic",
     ZeroSize([zeros(0, 3)], {"a": 1.0, "c": 2.0}, lambda x: x * x + 2.0))

_add(SAMPLES, "_contrib_gradientmultiplier",
     Sample([_X], {"scalar": 0.5}, grad_ref=lambda ins, heads: [0.5 * heads[0]]),
     Sample([_X3], {"scalar": -1.0}, grad_ref=lambda ins, heads: [-heads[0]]),
     Sample([ints(1, 2)], {"scalar": 2.0}, grad=False))
_add(FAILURES, "_contrib_gradientmultiplier",
     Failure([_X], {"scalar": "x"}, TypeError,
             r"^_contrib_gradientmultiplier: scalar must be a number \(got 'x'\)"))
_add(ZERO_SIZE, "_contrib_gradientmultiplier",
     ZeroSize([zeros(0, 3)], {"scalar": 3.0}, lambda x: x))


# -- allclose ------------------------------------------------------------------------------------

_add(SAMPLES, "_contrib_allclose",
     Sample([_X, _X + 1e-9], grad=False),
     Sample([_X, _X + 1e-3], {"rtol": 0.0, "atol": 1e-4}, grad=False),
     Sample([np.array([np.nan, 1.0]), np.array([np.nan, 1.0])], {"equal_nan": False},
            grad=False),
     Sample([ints(1, 2), ints(1, 3)], {"atol": 1}, grad=False))
_add(FAILURES, "_contrib_allclose",
     Failure([_X, _X[:2]], {}, ValueError,
             r"^_contrib_allclose: a and b must have one shape", out=((), np.uint8)),
     Failure([_X, _X.astype(np.float32)], {}, TypeError,
             r"^_contrib_allclose: a and b must have one dtype", out=((), np.uint8)),
     Failure([_X, _X], {"rtol": -1.0}, ValueError,
             r"^_contrib_allclose: rtol must be finite and >= 0 \(got -1.0\)",
             out=((), np.uint8)),
     Failure([_X, _X], {"atol": math.nan}, ValueError,
             r"^_contrib_allclose: atol must be finite and >= 0 \(got nan\)",
             out=((), np.uint8)),
     Failure([_X, _X], {"atol": "x"}, TypeError,
             r"^_contrib_allclose: atol must be a number", out=((), np.uint8)))
_add(ZERO_SIZE, "_contrib_allclose",
     ZeroSize([zeros(0, 3), zeros(0, 3)], {},
              lambda a, b: np.array(int(np.allclose(a, b)), np.uint8)))


# -- fft, ifft, count_sketch -----------------------------------------------------------------------

def np_fft(x):
    """MXNet's fft layout: the complex DFT of the last axis, interleaved (re, im)."""
    out = np.zeros(x.shape[:-1] + (2 * x.shape[-1],))
    if not x.shape[-1]:
        return out
    c = np.fft.fft(x, axis=-1)
    out[..., 0::2], out[..., 1::2] = c.real, c.imag
    return out


def np_ifft(x):
    """MXNet's ifft: the real part of the unnormalised inverse DFT of interleaved pairs."""
    d = x.shape[-1] // 2
    c = x[..., 0::2] + 1j * x[..., 1::2]
    return (np.fft.ifft(c, axis=-1) * d).real if d else np.zeros(x.shape[:-1] + (0,))


_add(SAMPLES, "_contrib_fft",
     Sample([uniform((3, 5), seed=40)]), Sample([uniform((2, 1, 3, 4), seed=41)]),
     Sample([uniform((2, 8), seed=42).astype(np.float32)], grad=False))
_add(FAILURES, "_contrib_fft",
     Failure([uniform((6,))], {}, ValueError,
             r"^_contrib_fft: data must have 2 or 4 dimensions", out=False),
     Failure([ints(1, 2).reshape(1, 2)], {}, TypeError,
             r"^_contrib_fft: needs a floating-point input", out=False),
     Failure([uniform((2, 3))], {"compute_size": 0}, ValueError,
             r"^_contrib_fft: compute_size must be >= 1", out=((2, 6), np.float64)))
_add(ZERO_SIZE, "_contrib_fft",
     ZeroSize([zeros(0, 4)], {}, np_fft), ZeroSize([zeros(3, 0)], {}, np_fft))

_add(SAMPLES, "_contrib_ifft",
     Sample([uniform((3, 10), seed=43)]), Sample([uniform((2, 2, 1, 6), seed=44)]),
     Sample([uniform((2, 4), seed=45).astype(np.float32)], grad=False))
_add(FAILURES, "_contrib_ifft",
     Failure([uniform((2, 5))], {}, ValueError,
             r"^_contrib_ifft: the last axis must be even", out=False),
     Failure([uniform((2, 2, 4))], {}, ValueError,
             r"^_contrib_ifft: data must have 2 or 4 dimensions", out=False))
_add(ZERO_SIZE, "_contrib_ifft",
     ZeroSize([zeros(0, 4)], {}, np_ifft), ZeroSize([zeros(3, 0)], {}, np_ifft))


def np_count_sketch(x, h, s, out_dim=None):
    out = np.zeros((x.shape[0], out_dim))
    for i, b in enumerate(h.ravel().astype(np.int64)):
        out[:, b] += s.ravel()[i] * x[:, i]
    return out


_H = np.array([[0.0, 3.0, 4.0, 3.0]])
_S = np.array([[1.0, -1.0, 1.0, 1.0]])
_add(SAMPLES, "_contrib_count_sketch",
     Sample([uniform((3, 4), seed=46), _H, _S], {"out_dim": 5}, wrt=[0]),
     Sample([uniform((2, 4), seed=47), _H + 0.5, -_S], {"out_dim": 6}, wrt=[0]))
_add(FAILURES, "_contrib_count_sketch",
     Failure([uniform((3, 4)), _H, _S], {}, TypeError,
             r"^_contrib_count_sketch: attribute 'out_dim' is required", out=False),
     Failure([uniform((3, 4)), _H[:, :3], _S], {"out_dim": 5}, ValueError,
             r"^_contrib_count_sketch: data must be \(N, in_dim\) and h, s \(1, in_dim\)",
             out=False),
     Failure([uniform((3, 4)), _H, _S.astype(np.float32)], {"out_dim": 5}, TypeError,
             r"^_contrib_count_sketch: data, h and s must have one floating-point dtype",
             out=False),
     Failure([uniform((3, 4)), _H, _S], {"out_dim": 0}, ValueError,
             r"^_contrib_count_sketch: out_dim and processing_batch_size must be >= 1",
             out=False),
     Failure([uniform((3, 4)), _H, _S], {"out_dim": 4}, IndexError,
             r"^_contrib_count_sketch: h must hold buckets in \[0, 4\) \(got 4.0\)",
             out=((3, 4), np.float64)))
_add(ZERO_SIZE, "_contrib_count_sketch",
     ZeroSize([zeros(0, 4), _H, _S], {"out_dim": 5},
              lambda x, h, s: np_count_sketch(x, h, s, 5)),
     ZeroSize([zeros(2, 0), zeros(1, 0), zeros(1, 0)], {"out_dim": 3},
              lambda x, h, s: np.zeros((2, 3))))


# -- getnnz (runtime/ops/sparse.py): csr data only -------------------------------------------

_add(SAMPLES, "_contrib_getnnz",
     Sample([_csr(np.array([[1.0, 0, 2], [0, 0, 0], [0, 3, 4]]))], grad=False),
     Sample([_csr(np.array([[1.0, 0, 2], [0, 0, 0], [0, 3, 4]]))], {"axis": 0}, grad=False),
     Sample([_csr(np.array([[1.0, 0, 2], [0, 0, 0], [0, 3, 4]]))], {"axis": 1}, grad=False))
_add(FAILURES, "_contrib_getnnz",
     Failure([np.ones((2, 2))], {}, NotImplementedError,
             r"^_contrib_getnnz: data must have storage type 'csr' \(got 'default'\)",
             out=False),
     Failure([_csr(np.ones((2, 2)))], {"axis": 2}, ValueError,
             r"^_contrib_getnnz: axis must be None, 0 or 1 \(got 2\)", out=False))
