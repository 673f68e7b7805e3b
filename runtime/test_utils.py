"""Helpers that test suites import from ``mxnet.test_utils`` (MXNet 1.x): tolerances and
comparisons, random shapes and arrays, the default context, gradient checks of
imperative functions against central differences, expected exceptions, retries,
environment variables.

Comparisons take NDArrays (read with ``asnumpy()``), NumPy arrays or numbers.  The
default tolerances depend on the dtypes compared (the looser of the two), as MXNet's:
float16 rtol 1e-2 / atol 1e-1, float32 1e-4 / 1e-3, float64 1e-5 / 1e-20, integers and
bool exact.
"""

import contextlib
import functools
import logging
import numbers
import os
import sys

import numpy as np
import numpy.random as rnd

import runtime as mx
from runtime import autograd
from runtime import context as _context
from runtime.context import Context
from runtime import nd
from runtime.symbol import Symbol
from runtime._ndarray import NDArray
from runtime.gluon import utils as _gluon_utils

__all__ = ["create_sparse_array", "create_sparse_array_zd", "assign_each", "assign_each2",
           "shuffle_csr_column_indices", "find_max_violation", "effective_dtype",
           "almost_equal_ignore_nan", "assert_almost_equal_with_err", "compare_ndarray_tuple",
           "mean_check", "var_check", "rand_coord_2d", "is_cd_run", "has_tvm_ops",
           "is_op_runnable", "EnvManager",
           "default_context", "set_default_context", "default_dtype", "default_rtols",
           "default_atols", "get_rtol", "get_atol", "almost_equal", "assert_almost_equal",
           "assert_allclose",
           "same", "rand_shape_2d", "rand_shape_3d", "rand_shape_nd", "rand_ndarray",
           "assert_exception", "environment", "check_numeric_gradient", "numeric_grad",
           "assert_almost_equal_ignore_nan", "same_array", "random_arrays",
           "random_uniform_arrays", "random_sample",
           "np_reduce", "rand_sparse_ndarray", "retry", "discard_stderr", "list_gpus",
           "set_env_var", "download", "simple_forward", "check_symbolic_forward",
           "check_symbolic_backward", "check_consistency", "gen_buckets_probs_with_ppf",
           "chi_square_check", "verify_generator", "np_softmax",
           # MXNet's test_utils has no __all__: its star import gives the modules and
           # names it imports, and 1.x test files use these from it without importing them
           "mx", "np", "rnd", "os", "sys", "logging", "numbers", "Symbol", "Context",
           "array"]

array = nd.array


def default_context():
    """The context tests run on: the current one."""
    return _context.current_context()


def set_default_context(ctx):
    """Make ``ctx`` the current context for the rest of the thread, or of the enclosing
    ``with`` block (as MXNet's, which replaces the default rather than entering a
    ``with`` block)."""
    if not isinstance(ctx, _context.Context):
        raise TypeError(f"set_default_context: ctx must be a Context (got {ctx!r})")
    _context.set_current_context(ctx)


def default_dtype():
    """float32, MXNet's default dtype."""
    return np.float32


def default_rtols():
    """Relative tolerance by dtype."""
    return {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4,
            np.dtype(np.float64): 1e-5}


def default_atols():
    """Absolute tolerance by dtype."""
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
            np.dtype(np.float64): 1e-20}


def _numpy(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    return np.asarray(x)


def _tolerance(arrays, tol, table):
    if isinstance(tol, numbers.Number):
        return float(tol)
    if tol is not None:
        raise TypeError(f"tolerance must be a number or None (got {tol!r})")
    return max(table.get(a.dtype, 0.0) for a in arrays)


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype``."""
    return _tolerance([np.empty(0, dtype)], rtol, default_rtols())


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype``."""
    return _tolerance([np.empty(0, dtype)], atol, default_atols())


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (shapes broadcast unless
    ``use_broadcast`` is False, then they must be equal)."""
    a, b = _numpy(a), _numpy(b)
    rtol = _tolerance([a, b], rtol, default_rtols())
    atol = _tolerance([a, b], atol, default_atols())
    if not use_broadcast and a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True):
    """AssertionError unless :func:`almost_equal`; the message names the arrays, the
    tolerances and the worst element."""
    an, bn = _numpy(a), _numpy(b)
    rtol_ = _tolerance([an, bn], rtol, default_rtols())
    atol_ = _tolerance([an, bn], atol, default_atols())
    if not use_broadcast and an.shape != bn.shape:
        raise AssertionError(f"{names[0]} and {names[1]} must have one shape (got "
                             f"{an.shape!r} and {bn.shape!r})")
    np.testing.assert_allclose(an, bn, rtol=rtol_, atol=atol_, equal_nan=equal_nan,
                               err_msg=f"{names[0]} and {names[1]} differ")


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """:func:`assert_almost_equal` with NumPy's ``assert_allclose`` defaults (tight
    rtol, no atol, NaNs equal); ``a`` and ``b`` may be NDArrays, NumPy arrays or lists."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def same(a, b):
    """Whether ``a`` and ``b`` hold exactly the same values and shape."""
    return np.array_equal(_numpy(a), _numpy(b))


def rand_shape_2d(dim0=10, dim1=10):
    """A random 2-d shape, each size in [1, dim]."""
    return tuple(int(d) for d in np.random.randint(1, (dim0 + 1, dim1 + 1)))


def rand_shape_3d(dim0=10, dim1=10, dim2=10):
    """A random 3-d shape, each size in [1, dim]."""
    return tuple(int(d) for d in np.random.randint(1, (dim0 + 1, dim1 + 1, dim2 + 1)))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random ``num_dim``-d shape, each size in [1, dim] ([0, dim] with
    ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A random NDArray of ``shape`` (MXNet's ``test_utils.rand_ndarray``): uniform in
    [0, 1) for 'default'; for 'row_sparse' and 'csr', each row (row_sparse) or element
    (csr) stored with probability ``density`` (random in [0, 1) when None).

    ``modifier_func`` maps each value (each stored value of a sparse array) through a
    Python function of one number.  ``distribution`` may be None or 'uniform' (MXNet's
    'powerlaw' is not provided).  ``shuffle_csr_indices`` is taken for MXNet's
    signature and changes nothing: ndrt's csr arrays keep each row's column indices
    sorted, and the values an array holds do not depend on their order."""
    if distribution not in (None, "uniform"):
        raise ValueError(f"rand_ndarray: distribution must be None or 'uniform' (got "
                         f"{distribution!r})")
    dtype = np.dtype(dtype or default_dtype())
    ctx = ctx or default_context()

    def values(size):
        out = np.random.uniform(size=size)
        if modifier_func is not None:
            out = np.vectorize(modifier_func, otypes=[np.float64])(out) if out.size else out
        return out.astype(dtype)

    if stype == "default":
        return nd.array(values(shape), ctx=ctx, dtype=dtype)
    density = np.random.rand() if density is None else float(density)
    if not 0.0 <= density <= 1.0:
        raise ValueError(f"rand_ndarray: density must be in [0, 1] (got {density!r})")
    if stype == "row_sparse":
        rows = np.flatnonzero(np.random.rand(shape[0]) < density)
        data = values((rows.size,) + tuple(shape[1:]))
        return nd.sparse.row_sparse_array((data, rows), shape=shape, ctx=ctx, dtype=dtype)
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"rand_ndarray: a csr array must be 2-d (got shape {shape!r})")
        stored = np.random.rand(*shape) < density
        dense = np.zeros(shape, dtype)
        dense[stored] = values(int(stored.sum()))
        return nd.array(dense, ctx=ctx, dtype=dtype).tostype("csr")
    raise ValueError(f"rand_ndarray: stype must be 'default', 'row_sparse' or 'csr' (got "
                     f"{stype!r})")


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=0.5, shuffle_csr_indices=False):
    """A random sparse NDArray: :func:`rand_sparse_ndarray`'s array alone."""
    if stype not in ("row_sparse", "csr"):
        raise AssertionError(f"create_sparse_array: stype must be 'row_sparse' or 'csr' "
                             f"(got {stype!r})")
    return rand_sparse_ndarray(shape, stype, density=density, dtype=dtype,
                               data_init=data_init,
                               rsp_indices=rsp_indices if stype == "row_sparse" else None,
                               modifier_func=modifier_func,
                               shuffle_csr_indices=shuffle_csr_indices)[0]


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """:func:`create_sparse_array` where a row_sparse array stores exactly the rows
    ``rsp_indices`` (none when None: ``density`` is not used for it)."""
    if stype == "row_sparse":
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise AssertionError(f"create_sparse_array_zd: rsp_indices must name at most "
                                 f"{shape[0]} rows (got {len(rsp_indices)})")
        density = 0.0
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def assign_each(the_input, function):
    """``function`` of each element of ``the_input`` as a new float64 NumPy array (a
    copy of the input when ``function`` is None)."""
    the_input = np.asarray(the_input)
    if function is None:
        return np.array(the_input)
    out = np.zeros(the_input.shape)
    for i, v in np.ndenumerate(the_input):
        out[i] = function(v)
    return out


def assign_each2(input1, input2, function):
    """``function(a, b)`` of each pair of elements of two arrays of one shape, as a new
    float64 NumPy array (a copy of ``input1`` when ``function`` is None)."""
    input1, input2 = np.asarray(input1), np.asarray(input2)
    if input1.shape != input2.shape:
        raise AssertionError(f"assign_each2: the inputs must have one shape (got "
                             f"{input1.shape!r} and {input2.shape!r})")
    if function is None:
        return np.array(input1)
    out = np.zeros(input1.shape)
    for i, v in np.ndenumerate(input1):
        out[i] = function(v, input2[i])
    return out


def shuffle_csr_column_indices(csr):
    """A copy of ``csr`` (an NDArray).  MXNet's helper shuffles the column indices within
    each row; ndrt's csr arrays keep them sorted (construction validates it), and the
    values an array holds do not depend on their order, so the copy is as given (as
    :func:`rand_ndarray`'s ``shuffle_csr_indices``)."""
    return csr.copy()


def find_max_violation(a, b, rtol=None, atol=None):
    """(index, violation) of the element of ``a`` farthest outside ``atol + rtol * |b|``
    of ``b``, the violation being ``|a - b| / (atol + rtol * |b|)``."""
    a, b = _numpy(a), _numpy(b)
    rtol = get_rtol(rtol)
    atol = get_atol(atol)
    diff = np.abs(a - b)
    tol = atol + rtol * np.abs(b)
    violation = diff / (tol + 1e-20)
    loc = np.unravel_index(np.argmax(violation), violation.shape) if violation.size else ()
    return loc, float(np.max(violation)) if violation.size else 0.0


def effective_dtype(dat):
    """The dtype whose precision a computation on ``dat`` has: its own on the CPU."""
    return np.dtype(dat.dtype)


def almost_equal_ignore_nan(a, b, rtol=None, atol=None):
    """:func:`almost_equal` on the positions where neither ``a`` nor ``b`` is NaN."""
    a, b = np.copy(_numpy(a)), np.copy(_numpy(b))
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    return almost_equal(a, b, rtol, atol)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False):
    """AssertionError unless at most a fraction ``etol`` (default 0) of the elements lie
    outside ``atol + rtol * |b|`` of ``b``."""
    an, bn = _numpy(a), _numpy(b)
    rtol_ = _tolerance([an, bn], rtol, default_rtols())
    atol_ = _tolerance([an, bn], atol, default_atols())
    etol = 0.0 if etol is None else float(etol)
    close = np.isclose(an, bn, rtol=rtol_, atol=atol_, equal_nan=equal_nan)
    bad = float(np.mean(~close)) if close.size else 0.0
    if bad > etol:
        loc, violation = find_max_violation(an, bn, rtol_, atol_)
        raise AssertionError(f"{names[0]} and {names[1]}: {bad:.2%} of the elements differ "
                             f"beyond rtol={rtol_}, atol={atol_} (etol={etol}); the worst "
                             f"at {loc}, {violation:.3g} times the tolerance")


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """:func:`assert_almost_equal` of two NDArrays or of two (nested) tuples of them,
    None matching None."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of ``generator(nsamples)`` lies within three standard errors of
    ``mu`` (``sigma`` the distribution's standard deviation)."""
    samples = np.asarray(generator(nsamples))
    bound = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - bound < samples.mean() < mu + bound)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance of ``generator(nsamples)`` lies within three of its
    standard errors of ``sigma ** 2`` (a normal distribution's)."""
    samples = np.asarray(generator(nsamples))
    spread = 3 * np.sqrt(2.0 / (nsamples - 1))
    return bool(sigma ** 2 * (1 - spread) < samples.var(ddof=1) < sigma ** 2 * (1 + spread))


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random integer point (x, y) with ``x_low <= x < x_high``, ``y_low <= y < y_high``."""
    return np.random.randint(x_low, x_high), np.random.randint(y_low, y_high)


def is_cd_run():
    """Whether the tests run in MXNet's release pipeline (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", "0") == "1"


def has_tvm_ops():
    """Whether TVM-generated operators are built in: never in ndrt."""
    return False


def is_op_runnable():
    """Whether the operators under test can run here: ndrt's run on every context it has."""
    return True


class EnvManager:
    """Set environment variable ``key`` to ``val`` for a ``with`` block (MXNet's older
    form of :func:`environment`)."""

    def __init__(self, key, val):
        self._key, self._val, self._prev = key, val, None

    def __enter__(self):
        self._prev = os.environ.get(self._key)
        os.environ[self._key] = str(self._val)

    def __exit__(self, *exc):
        if self._prev is None:
            os.environ.pop(self._key, None)
        else:
            os.environ[self._key] = self._prev


def assert_exception(f, exception_type, *args, **kwargs):
    """AssertionError unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)} did not raise "
                         f"{exception_type.__name__}")


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the ``with`` block and restore them after:
    ``environment('NAME', 'value')`` or ``environment({'A': '1', 'B': None})`` (None
    unsets)."""
    if len(args) == 2:
        changes = {args[0]: args[1]}
    elif len(args) == 1 and isinstance(args[0], dict):
        changes = dict(args[0])
    else:
        raise TypeError("environment: give a name and a value, or a dict (got "
                        f"{len(args)} arguments)")
    saved = {k: os.environ.get(k) for k in changes}
    try:
        for k, v in changes.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """:func:`assert_almost_equal` on the positions where neither ``a`` nor ``b`` is
    NaN (MXNet's: NaNs are set to 0 on both sides first)."""
    an, bn = np.copy(_numpy(a)), np.copy(_numpy(b))
    nan = np.isnan(an) | np.isnan(bn)
    an[nan] = 0
    bn[nan] = 0
    assert_almost_equal(an, bn, rtol, atol, names)


def same_array(array1, array2):
    """Whether two NDArrays share their memory: a write through one shows in the
    other (MXNet's test, which adds 1 to ``array1`` and takes it back)."""
    array1[:] += 1
    shared = same(array1, array2)
    array1[:] -= 1
    return shared


def random_arrays(*shapes):
    """NumPy arrays of standard normal values in the default dtype, one per shape (a
    shape () gives a float); a single shape gives the array itself."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0 else
              np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """NumPy arrays of values drawn uniformly from ``[low, high)``, one per shape, in
    ``dtype`` (the default dtype if None); always a list, also for a single shape."""
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k):
    """``k`` distinct elements of the list ``population`` in random order."""
    if not 0 <= k <= len(population):
        raise ValueError(f"random_sample: k must be in [0, {len(population)}] (got {k!r})")
    chosen = list(population)
    np.random.shuffle(chosen)
    return chosen[:k]


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """``numpy_reduce_func`` applied over ``axis`` (None, an int or a tuple, one axis at
    a time from the last), keeping the reduced axes with ``keepdims``."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else list(range(len(dat.shape)))
    ret = dat
    for i in reversed(sorted(a % dat.ndim for a in axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i % dat.ndim] = 1
        ret = ret.reshape(tuple(shape))
    return ret


def np_softmax(x, axis=-1, temperature=1.0):
    """Softmax of ``x`` along ``axis`` in NumPy, ``exp(x / temperature)`` normalised; the
    maximum is subtracted first so large inputs do not overflow."""
    e = np.exp((x - np.max(x, axis=axis, keepdims=True)) / temperature)
    return e / np.sum(e, axis=axis, keepdims=True)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random sparse NDArray (as :func:`rand_ndarray`) and its parts as NumPy arrays:
    ``(arr, (data, indices, indptr))`` for csr, ``(arr, (data, indices))`` for
    row_sparse (MXNet's return form).

    ``rsp_indices`` (row_sparse only) gives the stored rows instead of drawing them by
    ``density``; ``data_init`` sets every stored value before ``modifier_func`` maps it."""
    if stype not in ("csr", "row_sparse"):
        raise ValueError(f"rand_sparse_ndarray: stype must be 'csr' or 'row_sparse' (got "
                         f"{stype!r})")
    if rsp_indices is not None and stype != "row_sparse":
        raise ValueError(f"rand_sparse_ndarray: rsp_indices needs stype 'row_sparse' (got "
                         f"{stype!r})")
    arr = rand_ndarray(shape, stype, density=density, dtype=dtype, distribution=distribution,
                       ctx=ctx)
    if rsp_indices is not None or data_init is not None or modifier_func is not None:
        if rsp_indices is not None:
            rows = np.sort(np.asarray(rsp_indices).astype(np.int64).reshape(-1))
            data = np.random.uniform(size=(rows.size,) + tuple(shape[1:]))
        else:
            data = arr.data.asnumpy().astype(np.float64)
        if data_init is not None:
            data[...] = data_init
        if modifier_func is not None and data.size:
            data = np.vectorize(modifier_func, otypes=[np.float64])(data)
        dtype = arr.dtype
        if stype == "row_sparse":
            rows = rows if rsp_indices is not None else arr.indices.asnumpy()
            arr = nd.sparse.row_sparse_array((data.astype(dtype), rows), shape=shape,
                                             ctx=arr.context, dtype=dtype)
        else:
            arr = nd.sparse.csr_matrix((data.astype(dtype), arr.indices.asnumpy(),
                                        arr.indptr.asnumpy()), shape=shape,
                                       ctx=arr.context, dtype=dtype)
    if stype == "csr":
        return arr, (arr.data.asnumpy(), arr.indices.asnumpy(), arr.indptr.asnumpy())
    return arr, (arr.data.asnumpy(), arr.indices.asnumpy())


def _as_inputs(location, dtype, ctx):
    if isinstance(location, dict):
        names = list(location)
        values = [location[k] for k in names]
    elif isinstance(location, (list, tuple)):
        names, values = None, list(location)
    else:
        raise TypeError(f"check_numeric_gradient: location must be a list or a dict of "
                        f"arrays (got {type(location).__name__})")
    arrays = [np.array(_numpy(v), dtype=dtype) for v in values]
    return names, arrays, ctx or default_context()


def _call(fn, names, arrays, ctx):
    inputs = [nd.array(a, ctx=ctx, dtype=a.dtype) for a in arrays]
    out = fn(**dict(zip(names, inputs))) if names is not None else fn(*inputs)
    return out if isinstance(out, (list, tuple)) else [out]


def numeric_grad(fn, location, heads, eps=1e-4, dtype=np.float64, ctx=None):
    """Central differences of ``sum_i sum(fn(*location)[i] * heads[i])`` with respect to
    each input (a list of NumPy arrays of the inputs' shapes, in ``location``'s order).
    ``fn`` takes NDArrays (positionally for a list ``location``, by name for a dict)
    and returns an NDArray or a list of them."""
    names, arrays, ctx = _as_inputs(location, dtype, ctx)

    def objective():
        outs = _call(fn, names, arrays, ctx)
        return sum(float(np.sum(o.asnumpy().astype(np.float64) * h))
                   for o, h in zip(outs, heads))
    grads = []
    for a in arrays:
        g = np.zeros(a.shape, np.float64)
        flat, gflat = a.reshape(-1), g.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            plus = objective()
            flat[i] = old - eps
            minus = objective()
            flat[i] = old
            gflat[i] = (plus - minus) / (2 * eps)
        grads.append(g)
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=None):
    """Check gradients against central differences (MXNet's ``check_numeric_gradient``):
    of a :class:`~runtime.symbol.Symbol` through a bound executor, as MXNet does, or of
    a Python function of NDArrays through autograd.  Defaults as MXNet's for a Symbol
    (step 1e-3, rtol 1e-2, float32 inputs); see the two paths' notes for a function."""
    if isinstance(sym, Symbol):
        return _check_symbolic_gradient(
            sym, location, aux_states, 1e-3 if numeric_eps is None else numeric_eps,
            1e-2 if rtol is None else rtol, atol, grad_nodes, use_forward_train, ctx,
            grad_stype_dict, np.float32 if dtype is None else dtype)
    if not callable(sym):
        raise TypeError(f"check_numeric_gradient: sym must be a Symbol or a function of "
                        f"NDArrays (got {type(sym).__name__})")
    return _check_imperative_gradient(sym, location, aux_states, numeric_eps, rtol, atol,
                                      grad_nodes, use_forward_train, ctx, grad_stype_dict,
                                      dtype)


def _check_imperative_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=None):
    """:func:`check_numeric_gradient` of a Python function ``sym`` through autograd.

    ``sym(*inputs)`` (``location`` a list) or ``sym(**inputs)`` (a dict) returns an
    NDArray or a list of them; the inputs are ``location``'s arrays (NumPy or NDArray)
    cast to ``dtype`` (default float64: the differences are then accurate; MXNet's
    default is float32).  As MXNet, the scalar differentiated is the sum of the outputs
    times fixed random projections, the step is ``numeric_eps`` (1e-3 for float16 and
    float32, 1e-6 for float64) and ``grad_nodes`` (names or positions) selects the inputs
    checked (default: all).  ``use_forward_train`` runs the forward under
    ``autograd.train_mode`` (else predict mode).  AssertionError names the input whose
    gradient differs beyond ``rtol`` (default 1e-2) / ``atol`` (default: the dtype's).
    """
    if aux_states is not None or grad_stype_dict is not None:
        raise NotImplementedError("check_numeric_gradient: aux_states and grad_stype_dict "
                                  "need a Symbol (got a function)")
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    eps = numeric_eps if numeric_eps is not None else (1e-6 if dtype == np.float64
                                                       else 1e-3)
    names, arrays, ctx = _as_inputs(location, dtype, ctx)
    labels = names if names is not None else [str(i) for i in range(len(arrays))]
    if grad_nodes is None:
        checked = list(range(len(arrays)))
    else:
        checked = [labels.index(str(g)) if str(g) in labels else g for g in grad_nodes]
        bad = [g for g in checked if not isinstance(g, int) or not 0 <= g < len(arrays)]
        if bad:
            raise ValueError(f"check_numeric_gradient: grad_nodes must name inputs among "
                             f"{labels!r} (got {grad_nodes!r})")
    inputs = [nd.array(a, ctx=ctx, dtype=dtype) for a in arrays]
    for i in checked:
        inputs[i].attach_grad()
    mode = autograd.train_mode if use_forward_train else autograd.predict_mode
    with mode():
        with autograd.record(train_mode=use_forward_train):
            outs = sym(**dict(zip(names, inputs))) if names is not None else sym(*inputs)
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            heads = [np.random.normal(0, 0.01, size=o.shape) for o in outs]
            total = sum((o * nd.array(h, ctx=ctx, dtype=o.dtype)).sum()
                        for o, h in zip(outs, heads))
        total.backward()
        numeric = numeric_grad(sym, location, heads, eps=eps, dtype=dtype, ctx=ctx)
    for i in checked:
        assert_almost_equal(numeric[i], inputs[i].grad.asnumpy(),
                            rtol=1e-2 if rtol is None else rtol, atol=atol,
                            names=(f"NUMERICAL_{labels[i]}", f"BACKWARD_{labels[i]}"))


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``(buckets, probs)``: ``nbuckets`` intervals of equal probability of the
    distribution whose inverse CDF is ``ppf`` (``buckets[i] = (ppf(i/n), ppf((i+1)/n))``),
    each of probability ``1/n`` (MXNet's helper for :func:`verify_generator`)."""
    if not isinstance(nbuckets, numbers.Integral) or nbuckets < 1:
        raise ValueError(f"gen_buckets_probs_with_ppf: nbuckets must be an integer >= 1 "
                         f"(got {nbuckets!r})")
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / nbuckets), ppf((i + 1) / nbuckets)) for i in range(nbuckets)]
    return buckets, probs


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of ``generator(nsamples)`` (1-D samples) against the
    bucket probabilities ``probs``.  ``buckets`` are ``(low, high)`` intervals for a
    continuous distribution, or the values themselves for a discrete one.  Returns
    ``(p_value, observed counts, expected counts)``."""
    import scipy.stats   # costly to import, and only test suites call this
    if len(buckets) != len(probs):
        raise ValueError(f"chi_square_check: buckets and probs must have one length (got "
                         f"{len(buckets)} and {len(probs)})")
    samples = generator(nsamples)
    samples = samples.asnumpy() if isinstance(samples, NDArray) else np.asarray(samples)
    samples = samples.reshape(-1)
    if samples.size != nsamples:
        raise ValueError(f"chi_square_check: the generator must return {nsamples} samples "
                         f"(got {samples.size})")
    if isinstance(buckets[0], (list, tuple)):
        lows = np.array([b[0] for b in buckets], np.float64)
        highs = np.array([b[1] for b in buckets], np.float64)
        observed = np.array([((samples >= lo) & (samples < hi)).sum()
                             for lo, hi in zip(lows, highs)], np.float64)
    else:
        observed = np.array([(samples == b).sum() for b in buckets], np.float64)
    expected = np.asarray(probs, np.float64) * nsamples
    # the test compares shares: samples outside every bucket (the open ends of a ppf's
    # first and last interval) count toward none, so both sides are scaled to one total
    expected = expected * (observed.sum() / expected.sum()) if observed.sum() else expected
    _, p = scipy.stats.chisquare(f_obs=observed, f_exp=expected)
    return float(p), observed, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5,
                     success_rate=0.2, alpha=0.05):
    """Run :func:`chi_square_check` ``nrepeat`` times and raise AssertionError unless at
    least ``success_rate`` of the runs have a p-value above ``alpha`` (MXNet's test of a
    random generator).  Returns the p-values."""
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    pvalues = [r[0] for r in results]
    if sum(p > alpha for p in pvalues) < nrepeat * success_rate:
        raise AssertionError(f"generator test failed: chi-square p-values {pvalues} (alpha "
                             f"{alpha}); observed {results[0][1].tolist()}, expected "
                             f"{results[0][2].tolist()}")
    return pvalues


def retry(n):
    """Decorator running a (flaky, random) test up to ``n`` times until it passes
    (MXNet's ``retry``); the last AssertionError is raised."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"retry: n must be an integer >= 1 (got {n!r})")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


@contextlib.contextmanager
def discard_stderr():
    """Send what is written to the process's stderr (file descriptor 2, C code included)
    to /dev/null for the ``with`` block."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def list_gpus():
    """The ids of the visible GPUs: ``range(num_gpus())``, as MXNet returns them."""
    return range(_context.num_gpus())


def set_env_var(key, val, default_val=""):
    """Set environment variable ``key`` to ``val``; returns its previous value
    (``default_val`` when it was unset)."""
    prev = os.environ.get(key, default_val)
    os.environ[key] = str(val)
    return prev



def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Fetch ``url`` into ``dirname/fname`` (``fname`` defaults to the URL's last part)
    and return that path; an existing file is kept unless ``overwrite`` (MXNet's
    test_utils.download, which programs call to fetch data they then find on disk).
    The fetching is :func:`runtime.gluon.utils.download`'s."""
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    if not overwrite and os.path.exists(fname):
        logging.info("%s exists, skipping download", fname)
        return fname
    return _gluon_utils.download(url, path=fname, overwrite=True, retries=retries)

# -- symbols (MXNet's symbolic checks) ---------------------------------------------------

def _arg_values(sym, location, what):
    """``location`` (a list in ``list_arguments()`` order or a dict by name) as a dict of
    float arrays."""
    names = sym.list_arguments()
    if isinstance(location, dict):
        missing = [k for k in names if k not in location]
        if missing:
            raise ValueError(f"{what}: location lacks argument {missing[0]!r} (arguments: "
                             f"{', '.join(names)})")
        return {k: _numpy(location[k]) for k in names}
    location = list(location)
    if len(location) != len(names):
        raise ValueError(f"{what}: location must hold one array per argument of "
                         f"{', '.join(names)} (got {len(location)})")
    return {k: _numpy(v) for k, v in zip(names, location)}


def _arg_stypes(sym, location):
    """The storage types of ``location``'s sparse NDArrays, by argument name: the
    checks bind those arguments with the same storage, as MXNet's do."""
    names = sym.list_arguments()
    pairs = location.items() if isinstance(location, dict) else zip(names, location)
    return {k: v.stype for k, v in pairs
            if isinstance(v, NDArray) and v.stype != "default"}


def _bind_dtype(dtype):
    """None (each argument keeps its own dtype) for MXNet's ``dtype='asnumpy'``."""
    return None if isinstance(dtype, str) and dtype == "asnumpy" else dtype


def _array(value, ctx, dtype, stype):
    arr = nd.array(value, ctx=ctx, dtype=dtype or value.dtype)
    return arr if stype in (None, "default") else arr.tostype(stype)


def _aux_values(sym, aux_states):
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        return {k: nd.array(aux_states[k]) for k in names}
    return {k: nd.array(v) for k, v in zip(names, aux_states)}


def _bind(sym, ctx, values, dtype, aux_states, grad_req="null", stypes=None,
          grad_stypes=None):
    ctx = ctx or default_context()
    stypes, grad_stypes = stypes or {}, grad_stypes or {}
    args = {k: _array(v, ctx, dtype, stypes.get(k)) for k, v in values.items()}
    grads = None
    if grad_req != "null":
        grads = {k: _array(np.zeros(a.shape, a.dtype), ctx, a.dtype, grad_stypes.get(k))
                 for k, a in args.items()}
    return sym.bind(ctx, args, args_grad=grads, grad_req=grad_req,
                    aux_states=_aux_values(sym, aux_states))


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """The outputs of ``sym`` on NumPy ``inputs`` (by argument name), as NumPy arrays (one
    array for a single output)."""
    values = {k: _numpy(v) for k, v in inputs.items()}
    exe = _bind(sym, ctx, values, None, None)
    outs = [o.asnumpy() for o in exe.forward(is_train=is_train)]
    return outs[0] if len(outs) == 1 else outs


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """Assert that ``sym``'s outputs on ``location`` are ``expected`` (a list, or a dict
    by output name); returns the executor's outputs (NDArrays, in their storage types, as
    MXNet's check returns them).  The arguments are bound as ``dtype``, or each as its
    own dtype with ``dtype='asnumpy'`` (MXNet's spelling)."""
    if not isinstance(sym, Symbol):
        raise TypeError(f"check_symbolic_forward: sym must be a Symbol (got "
                        f"{type(sym).__name__})")
    dtype = _bind_dtype(dtype)
    exe = _bind(sym, ctx, _arg_values(sym, location, "check_symbolic_forward"), dtype,
                aux_states, stypes=_arg_stypes(sym, location))
    outputs = exe.forward(is_train=False)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    for name, out, want in zip(sym.list_outputs(), outputs, expected):
        assert_almost_equal(out.asnumpy(), want, rtol, atol,
                            names=(f"output {name}", "expected"), equal_nan=equal_nan)
    return list(outputs)


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """Assert that the gradients of ``sym`` at ``location`` for the head gradients
    ``out_grads`` are ``expected`` (a list in argument order, or a dict by name).

    As in MXNet's check, every gradient buffer starts from random normal values: a
    ``'write'`` gradient must equal ``expected``, an ``'add'`` gradient must have grown
    by ``expected``, and a ``'null'`` gradient must still hold its starting values.
    Returns the gradient buffers by argument name (NDArrays, in their storage types, as
    MXNet's check returns them).  ``dtype`` is as in
    :func:`check_symbolic_forward`; ``grad_stypes`` gives gradient buffers a sparse
    storage type by argument name."""
    dtype = _bind_dtype(dtype)
    values = _arg_values(sym, location, "check_symbolic_backward")
    names = sym.list_arguments()
    if not isinstance(expected, dict):
        expected = dict(zip(names, expected))
    reqs = grad_req if isinstance(grad_req, dict) else {k: grad_req for k in names}
    ctx = ctx or default_context()
    stypes, grad_stypes = _arg_stypes(sym, location), grad_stypes or {}
    args = {k: _array(v, ctx, dtype, stypes.get(k)) for k, v in values.items()}
    start = {k: np.random.normal(size=a.shape).astype(a.dtype) for k, a in args.items()}
    grads = {k: _array(v, ctx, v.dtype, grad_stypes.get(k)) for k, v in start.items()}
    exe = sym.bind(ctx, args, args_grad=grads, grad_req=reqs,
                   aux_states=_aux_values(sym, aux_states))
    exe.forward(is_train=True)
    if out_grads is not None:
        if isinstance(out_grads, dict):
            out_grads = [out_grads[k] for k in sym.list_outputs()]
        out_grads = [nd.array(g, ctx=exe.outputs[0].ctx, dtype=dtype) for g in out_grads]
    exe.backward(out_grads)
    got = {k: g.asnumpy() for k, g in grads.items()}
    for k, want in expected.items():
        if want is None:
            continue
        req = reqs.get(k, "null")
        if req == "add":
            got_k, want = got[k] - start[k], want
        elif req == "null":
            got_k, want = got[k], start[k]
        else:
            got_k = got[k]
        assert_almost_equal(got_k, want, rtol, atol,
                            names=(f"gradient of {k} (grad_req {req!r})", "expected"),
                            equal_nan=equal_nan)
    return grads


def _check_symbolic_gradient(sym, location, aux_states=None, numeric_eps=1e-3, rtol=1e-2,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float32):
    """Assert that the gradients ``backward`` computes for ``sum(out * r)`` (``r``
    random) match float64 central differences of the forward, for the arguments
    ``grad_nodes`` (default: all)."""
    values = {k: v.astype(np.float64)
              for k, v in _arg_values(sym, location, "check_numeric_gradient").items()}
    names = grad_nodes if grad_nodes is not None else sym.list_arguments()
    if isinstance(names, dict):
        names = list(names)
    rng = np.random.RandomState(0)
    exe = _bind(sym, ctx, values, np.float64, aux_states,
                grad_req={k: ("write" if k in names else "null")
                          for k in sym.list_arguments()},
                stypes=_arg_stypes(sym, location), grad_stypes=grad_stype_dict)
    outs = exe.forward(is_train=use_forward_train)
    heads = [rng.normal(size=o.shape) for o in outs]
    exe.backward([nd.array(h, dtype=np.float64) for h in heads])
    symbolic = {k: exe.grad_dict[k].asnumpy() for k in names}

    def loss():
        outs = exe.forward(is_train=use_forward_train)
        return sum(float((o.asnumpy() * h).sum()) for o, h in zip(outs, heads))

    for k in names:
        x = exe.arg_dict[k]
        base = x.asnumpy().copy()
        numeric = np.zeros_like(base)
        flat = numeric.reshape(-1)
        for i in range(base.size):
            for sign in (1, -1):
                moved = base.copy().reshape(-1)
                moved[i] += sign * numeric_eps / 2
                x[:] = moved.reshape(base.shape)
                flat[i] += sign * loss() / numeric_eps
        x[:] = base
        assert_almost_equal(symbolic[k], numeric, rtol=rtol,
                            atol=atol if atol is not None else 1e-4,
                            names=(f"symbolic gradient of {k}", "numeric"))


_CONSISTENCY_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
                    np.dtype(np.float64): 1e-5, np.dtype(np.uint8): 0, np.dtype(np.int32): 0,
                    np.dtype(np.int64): 0}


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, tol=None, raise_on_err=True, ground_truth=None,
                      equal_nan=False, use_uniform=False, rand_type=np.float64):
    """Run ``sym`` (or one symbol per entry) once per entry of ``ctx_list`` (dicts with
    ``ctx``, the argument shapes and an optional ``type_dict``) on the same random
    arguments, forward in training mode and backward with the outputs as head
    gradients, and assert that the outputs and gradients agree with those of the
    entry of the widest dtype (tolerance by dtype, ``tol``); returns each entry's
    [outputs..., gradients...] as NumPy arrays."""
    syms = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    exes = []
    for s, spec in zip(syms, ctx_list):
        spec = dict(spec)
        ctx = spec.pop("ctx", None)
        types = spec.pop("type_dict", {})
        spec.pop("group2ctx", None)
        exes.append(s.simple_bind(ctx, grad_req=grad_req, type_dict=types, **spec))
    rng = np.random.RandomState(0)
    draw = (lambda shape: rng.uniform(-scale, scale, shape)) if use_uniform else \
        (lambda shape: rng.normal(0, scale, shape))
    args = {k: draw(a.shape).astype(rand_type) for k, a in exes[0].arg_dict.items()}
    args.update({k: _numpy(v) for k, v in (arg_params or {}).items()})
    aux = {k: draw(a.shape).astype(rand_type) for k, a in exes[0].aux_dict.items()}
    aux.update({k: _numpy(v) for k, v in (aux_params or {}).items()})
    results = []
    for exe in exes:
        for k, a in exe.arg_dict.items():
            a[:] = args[k].astype(a.dtype)
        for k, a in exe.aux_dict.items():
            a[:] = aux[k].astype(a.dtype)
        outs = exe.forward(is_train=True)
        grads = []
        if grad_req != "null":
            exe.backward([o.copy() for o in outs])
            grads = [g.asnumpy() for g in exe.grad_arrays if g is not None]
        results.append([o.asnumpy() for o in outs] + grads)
    widest = max(range(len(exes)), key=lambda i: max(
        np.dtype(a.dtype).itemsize for a in exes[i].arg_arrays))
    truth = ground_truth if ground_truth is not None else results[widest]
    table = dict(_CONSISTENCY_TOL)
    if isinstance(tol, dict):
        table.update({np.dtype(k): v for k, v in tol.items()})
    for i, res in enumerate(results):
        for j, (got, want) in enumerate(zip(res, truth)):
            t = tol if isinstance(tol, (int, float)) else table.get(got.dtype, 1e-3)
            try:
                assert_almost_equal(got, want.astype(got.dtype, copy=False), rtol=t,
                                    atol=t, names=(f"entry {i} value {j}", "ground truth"),
                                    equal_nan=equal_nan)
            except AssertionError:
                if raise_on_err:
                    raise
    return results
