"""Random arrays (MXNet's ``mx.nd.random``), drawn from :mod:`runtime.random`'s generator:
uniform, normal, randn, randint, exponential, gamma, poisson, negative_binomial,
generalized_negative_binomial, multinomial and shuffle."""

import numpy as np

from runtime import _rng as _random
from runtime._ndarray import NDArray, as_dtype, empty, from_numpy
from runtime.errors import MXNetTypeError, MXNetValueError
from runtime.ops._call import F

_FLOATS = ("float16", "float32", "float64")


def _target(name, shape, dtype, ctx, out, default):
    if out is not None:
        if not isinstance(out, NDArray):
            raise MXNetTypeError(f"{name}: out must be an NDArray (got {type(out).__name__})")
        return out, np.dtype(out.dtype)
    d = as_dtype(dtype if dtype is not None else default)
    shape = (1,) if shape is None else shape
    return empty(shape, ctx, d), d      # checks shape and ctx; its memory is never taken


def _check_float(name, d):
    if d.name not in _FLOATS:
        raise MXNetTypeError(f"{name}: dtype must be one of {', '.join(_FLOATS)} (got {d})")


def _fill(out, values, given):
    """``values`` written into ``out=`` when the caller ``given`` it, else in a new array
    (``out`` is then _target's unallocated placeholder)."""
    if not given:
        return from_numpy(values.astype(out.dtype, copy=False), out.ctx)
    out[...] = values
    return out


def _per_element(name, names, a, b, shape, dtype, out, draw):
    """MXNet's ``_sample_<name>``: NDArray parameters ``a``, ``b`` of one shape give, per
    element, ``shape`` samples (the result has shape ``a.shape + shape``), drawn by
    ``draw(a, b, size)`` in float64 and cast to ``dtype`` (default: a's dtype)."""
    for n, v in zip(names, (a, b)):
        if not isinstance(v, NDArray):
            raise MXNetTypeError(f"{name}: {names[0]} and {names[1]} must both be NDArrays or "
                                 f"both numbers (got {n}={type(v).__name__})")
    if a.shape != b.shape:
        raise MXNetValueError(f"{name}: {names[0]} and {names[1]} must have one shape (got "
                              f"{a.shape} and {b.shape})")
    if a.ctx != b.ctx:
        raise MXNetValueError(f"{name}: {names[0]} is on {a.ctx}, {names[1]} on {b.ctx}")
    extra = () if shape is None else (tuple(shape) if isinstance(shape, (tuple, list))
                                      else (shape,))
    given = out is not None
    d = as_dtype(dtype if dtype is not None else a.dtype)
    if not given:
        out = empty(a.shape + extra, a.ctx, d)      # checks the shape
    elif not isinstance(out, NDArray):
        raise MXNetTypeError(f"{name}: out must be an NDArray (got {type(out).__name__})")
    elif out.shape != a.shape + extra:
        raise MXNetValueError(f"{name}: out has shape {out.shape}, the samples "
                              f"{a.shape + extra}")
    _check_float(name, np.dtype(out.dtype))
    av = a.asnumpy().astype(np.float64).reshape(a.shape + (1,) * len(extra))
    bv = b.asnumpy().astype(np.float64).reshape(a.shape + (1,) * len(extra))
    return _fill(out, draw(av, bv, a.shape + extra), given)


def _uniform_draw(low, high, size):
    if not np.all(low <= high):
        raise MXNetValueError("uniform: low must be <= high elementwise")
    return _random.generator().random(size) * (high - low) + low


def _normal_draw(loc, scale, size):
    if not np.all(scale >= 0):
        raise MXNetValueError("normal: scale must be >= 0 elementwise")
    return _random.generator().standard_normal(size) * scale + loc


def uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the uniform distribution on [low, high); shape (1,) by default.

    As MXNet: with NDArrays ``low`` and ``high`` (of one shape) each element pair gets
    ``shape`` samples of its own, and the result has shape ``low.shape + shape``
    (MXNet's ``_sample_uniform``), on their context."""
    if isinstance(low, NDArray) or isinstance(high, NDArray):
        return _per_element("uniform", ("low", "high"), low, high, shape, dtype, out,
                            _uniform_draw)
    if not low <= high:
        raise MXNetValueError(f"uniform: low must be <= high (got low={low}, high={high})")
    given = out is not None
    out, d = _target("uniform", shape, dtype, ctx, out, "float32")
    _check_float("uniform", d)
    rng = _random.generator()
    v = rng.random(out.shape, dtype=np.float64 if d == np.float16 else d)
    return _fill(out, v * (high - low) + low, given)


def normal(loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2); shape (1,) by default.  NDArrays ``loc`` and
    ``scale`` draw per element, as ``uniform`` (MXNet's ``_sample_normal``)."""
    if isinstance(loc, NDArray) or isinstance(scale, NDArray):
        return _per_element("normal", ("loc", "scale"), loc, scale, shape, dtype, out,
                            _normal_draw)
    if not scale >= 0:
        raise MXNetValueError(f"normal: scale must be >= 0 (got {scale})")
    given = out is not None
    out, d = _target("normal", shape, dtype, ctx, out, "float32")
    _check_float("normal", d)
    rng = _random.generator()
    v = rng.standard_normal(out.shape, dtype=np.float64 if d == np.float16 else d)
    return _fill(out, v * scale + loc, given)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None):
    """Integers uniform on [low, high); int32 by default, as MXNet."""
    for n, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise MXNetTypeError(f"randint: {n} must be an integer (got {v!r})")
    if not low < high:
        raise MXNetValueError(f"randint: low must be < high (got low={low}, high={high})")
    given = out is not None
    out, d = _target("randint", shape, dtype, ctx, out, "int32")
    if d.kind not in "iu":
        raise MXNetTypeError(f"randint: dtype must be an integer type (got {d})")
    info = np.iinfo(d)
    if low < info.min or high - 1 > info.max:
        raise MXNetValueError(f"randint: [low, high) = [{low}, {high}) does not fit {d}")
    return _fill(out, _random.generator().integers(low, high, out.shape, dtype=d), given)


def randn(*shape, loc=0.0, scale=1.0, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2) of shape ``shape``, given as separate integers
    (MXNet's ``randn(2, 3)``); shape (1,) without any."""
    return normal(loc, scale, shape or None, dtype, ctx, out)


def _params(name, given, checks):
    """The distribution parameters ``given`` ({name: value}) as float64 NumPy arrays, and
    the shape they add in front of the samples' (MXNet's ``sample_*`` operators: with
    NDArray parameters, all of one shape, each element parametrises ``shape`` draws)."""
    arrays = {k: v for k, v in given.items() if isinstance(v, NDArray)}
    if arrays and len(arrays) != len(given):
        raise MXNetTypeError(f"{name}: parameters must be all numbers or all NDArrays (got "
                             f"{', '.join(f'{k}={type(v).__name__}' for k, v in given.items())})")
    shapes = {v.shape for v in arrays.values()}
    if len(shapes) > 1:
        raise MXNetValueError(f"{name}: NDArray parameters must have one shape (got "
                              f"{', '.join(f'{k} {v.shape!r}' for k, v in arrays.items())})")
    values, lead = {}, (shapes.pop() if shapes else ())
    for k, v in given.items():
        if isinstance(v, NDArray):
            a = v.asnumpy().astype(np.float64)
        elif isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise MXNetTypeError(f"{name}: {k} must be a number or an NDArray (got {v!r})")
        else:
            a = np.float64(v)
        rule, ok = checks[k]
        if not bool(np.all(ok(a))):
            bad = a if a.ndim == 0 else a[~ok(a)].ravel()[0]
            raise MXNetValueError(f"{name}: {k} must be {rule} (got {float(bad)!r})")
        values[k] = a
    return values, lead, (next(iter(arrays.values())) if arrays else None)


def _draw(name, given, checks, sample, shape, dtype, ctx, out, floats=True):
    """Draws ``sample(rng, **params, size)`` into a new array or ``out``; the dtype is
    ``dtype``, else the NDArray parameters', else float32."""
    values, lead, like = _params(name, given, checks)
    if shape is None:       # as many draws as out= holds, else one (per parameter)
        tail = tuple(out.shape[len(lead):]) if isinstance(out, NDArray) else \
            (() if like is not None else (1,))
    else:
        tail = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype is None and like is not None and np.dtype(like.dtype).kind == "f":
        dtype = like.dtype
    given_out = out is not None
    if ctx is None and like is not None:
        ctx = like.ctx
    out, d = _target(name, lead + tail, dtype, ctx, out, "float32")
    if floats:
        _check_float(name, d)
    if out.shape != lead + tail:
        raise MXNetValueError(f"{name}: out has shape {out.shape!r}, the samples {lead + tail!r}")
    size = lead + tail
    params = {k: v.reshape(v.shape + (1,) * len(tail)) for k, v in values.items()}
    v = sample(_random.generator(), size=size, **params)
    return _fill(out, np.asarray(v), given_out)


_POSITIVE = ("> 0", lambda a: a > 0)
_NONNEG = (">= 0", lambda a: a >= 0)


def exponential(scale=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the exponential distribution with mean ``scale`` (1 / lambda), as
    MXNet's; ``scale`` may be an NDArray (then one draw per element, or ``shape`` draws
    each: shape scale.shape + shape)."""
    return _draw("exponential", {"scale": scale}, {"scale": _POSITIVE},
                 lambda g, size, scale: g.exponential(scale, size), shape, dtype, ctx, out)


def gamma(alpha=1.0, beta=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the gamma distribution of shape ``alpha`` and scale ``beta`` (mean
    alpha * beta), as MXNet's; parameters may be NDArrays of one shape.  ``alpha = 0``
    gives zeros, the limit MXNet's sampler reaches."""
    return _draw("gamma", {"alpha": alpha, "beta": beta},
                 {"alpha": _NONNEG, "beta": _POSITIVE},
                 lambda g, size, alpha, beta: g.gamma(alpha, beta, size), shape, dtype, ctx,
                 out)


def poisson(lam=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the Poisson distribution of mean ``lam`` (float32 by default, as
    MXNet; integer dtypes too); ``lam`` may be an NDArray."""
    return _draw("poisson", {"lam": lam}, {"lam": _NONNEG},
                 lambda g, size, lam: g.poisson(lam, size), shape, dtype, ctx, out,
                 floats=False)


def negative_binomial(k=1, p=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the negative binomial distribution: the number of failures before
    ``k`` successes of probability ``p`` (MXNet's; float32 by default, integer dtypes
    too); parameters may be NDArrays of one shape."""
    return _draw("negative_binomial", {"k": k, "p": p},
                 {"k": _POSITIVE, "p": ("in (0, 1]", lambda a: (a > 0) & (a <= 1))},
                 lambda g, size, k, p: g.negative_binomial(k, p, size), shape, dtype, ctx,
                 out, floats=False)


def _gamma_poisson(g, size, mu, alpha):
    """Poisson draws whose means are gamma draws of mean ``mu`` and variance
    ``mu**2 * alpha`` (alpha 0: Poisson of mean mu)."""
    mu, alpha = np.broadcast_arrays(mu, alpha)
    zero = alpha == 0
    shape = np.where(zero, 1.0, 1.0 / np.where(zero, 1.0, alpha))
    lam = g.gamma(shape, np.where(zero, 1.0, mu * alpha), size)
    return g.poisson(np.where(zero, mu, lam), size)


def generalized_negative_binomial(mu=1.0, alpha=1.0, shape=None, dtype=None, ctx=None,
                                  out=None):
    """Samples from the generalized negative binomial distribution of mean ``mu`` and
    dispersion ``alpha`` (variance mu + alpha * mu**2; alpha 0 is Poisson of mean mu), as
    MXNet's: a Poisson draw whose mean is a gamma draw of shape 1 / alpha and scale
    mu * alpha.  float32 by default, integer dtypes too; parameters may be NDArrays of one
    shape."""
    return _draw("generalized_negative_binomial", {"mu": mu, "alpha": alpha},
                 {"mu": _NONNEG, "alpha": _NONNEG}, _gamma_poisson, shape, dtype, ctx, out,
                 floats=False)


def shuffle(data, out=None):
    """A copy of ``data`` with its rows (the first axis) in random order (MXNet's
    shuffle); ``out=`` may be ``data`` itself."""
    if not isinstance(data, NDArray):
        raise MXNetTypeError(f"shuffle: data must be an NDArray (got {type(data).__name__})")
    if data.stype != "default":
        raise NotImplementedError(f"shuffle: data must be dense (got {data.stype}); "
                                  "convert with tostype('default')")
    if not data.shape:
        raise MXNetValueError("shuffle: data must have at least one dimension (got shape ())")
    x = data.asnumpy()
    rows = x[_random.generator().permutation(x.shape[0])]
    if out is None:
        return from_numpy(rows, data.ctx)
    if not isinstance(out, NDArray) or out.shape != data.shape or out.dtype != data.dtype:
        raise MXNetValueError(f"shuffle: out must be an NDArray of shape {data.shape} and dtype "
                              f"{np.dtype(data.dtype).name}")
    out[...] = rows
    return out


_MULTINOMIAL_DTYPES = ("float16", "float32", "float64", "int32", "uint8")


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32"):
    """Category indices drawn from the distributions in the last axis of ``data``
    (probabilities: non-negative, summing to 1), as MXNet's: shape data.shape[:-1] +
    ``shape`` ((1,) for one distribution without ``shape``), ``dtype`` int32 by default.
    With ``get_prob`` also the log-probability
    of each draw, [samples, log_prob], computed with registry operators so that it
    records (MXNet's way of differentiating through the draw).

    Refused arguments raise MXNet's error classes (``MXNetValueError``,
    ``MXNetTypeError``: also ``ValueError``/``TypeError``), as MXNet's operator does; a
    distribution that does not sum to 1 is refused where MXNet's kernel silently draws
    the last category for the missing mass."""
    if not isinstance(data, NDArray):
        raise MXNetTypeError(f"multinomial: data must be an NDArray (got {type(data).__name__})")
    d = as_dtype(dtype)
    if d.name not in _MULTINOMIAL_DTYPES:
        raise MXNetTypeError(f"multinomial: dtype must be one of {', '.join(_MULTINOMIAL_DTYPES)} "
                             f"(got {d})")
    if not data.shape or data.shape[-1] == 0:
        raise MXNetValueError(f"multinomial: data must hold distributions along a non-empty last "
                              f"axis (got shape {data.shape!r})")
    k = data.shape[-1]
    if k - 1 > {"float16": 2048, "uint8": 255}.get(d.name, 2 ** 24):
        raise MXNetValueError(f"multinomial: dtype {d} cannot hold the category indices up to "
                              f"{k - 1}")
    tail = () if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    p = data.asnumpy().astype(np.float64)
    if not bool(np.all(p >= 0)):
        raise MXNetValueError("multinomial: data must hold probabilities >= 0 (got "
                              f"{float(p[~(p >= 0)].ravel()[0])!r})")
    total = p.sum(-1)
    if not np.allclose(total, 1.0, rtol=0, atol=1e-4 if data.dtype != np.float64 else 1e-8):
        bad = total[~np.isclose(total, 1.0, rtol=0, atol=1e-4)].ravel()
        raise MXNetValueError(f"multinomial: each distribution in data must sum to 1 (got "
                              f"{float(bad[0]) if bad.size else float(total.ravel()[0])!r})")
    lead = data.shape[:-1]
    cdf = np.cumsum(p, -1) / total[..., None]
    cdf = cdf.reshape(lead + (1,) * len(tail) + (k,))
    u = _random.generator().random(lead + tail)
    idx = np.minimum(np.sum(cdf <= u[..., None], axis=-1), k - 1)
    if not lead + tail:         # one distribution, one draw: shape (1,), as MXNet
        idx = idx.reshape(1)
    if out is not None:
        if not isinstance(out, NDArray):
            raise MXNetTypeError(f"multinomial: out must be an NDArray (got {type(out).__name__})")
        if out.shape != idx.shape:
            raise MXNetValueError(f"multinomial: out has shape {out.shape!r}, the samples "
                                  f"{idx.shape!r}")
        out[...] = idx.astype(np.dtype(out.dtype))
        samples = out
    else:
        samples = from_numpy(idx.astype(d), data.ctx)
    if not get_prob:
        return samples
    dist = data.reshape(lead + (1,) * len(tail) + (k,)) if tail else data
    if tail:
        dist = F.broadcast_to(dist, shape=lead + tail + (k,))
    picks = from_numpy(idx.astype(np.dtype(data.dtype)), data.ctx)
    return [samples, F.log(F.pick(dist, picks, axis=-1))]


__all__ = ["uniform", "normal", "randint", "randn", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "multinomial"]


# -- MXNet's older flat names (mx.nd.random_uniform, mx.nd.sample_normal, ...) -------------
# random_<dist> take numbers, sample_<dist> NDArrays of parameters (one draw, or ``shape``
# draws, per element); both are the functions above under MXNet's parameter names.

def named_params(who, names, args, kwargs):
    """The parameters ``names`` of a flat sampler call ``who`` from its positional
    ``args`` and, taken out of ``kwargs``, its keyword ones (shared with mx.sym's flat
    names): MXNetTypeError for too many positional parameters or one given twice."""
    if len(args) > len(names):
        raise MXNetTypeError(f"{who}: takes at most {len(names)} positional parameters (got "
                             f"{len(args)})")
    params = dict(zip(names, args))
    for k in names:
        if k in kwargs:
            if k in params:
                raise MXNetTypeError(f"{who}: parameter {k!r} given twice")
            params[k] = kwargs.pop(k)
    return params


def _legacy(fn, names, doc, convert=None):
    def call(*args, shape=None, dtype=None, ctx=None, out=None, **kw):
        params = named_params(doc, names, args, kw)
        if kw:
            raise MXNetTypeError(f"{doc}: unexpected argument {next(iter(kw))!r}")
        if convert is not None:
            params = convert(params)
        return fn(*params.values(), shape=shape, dtype=dtype, ctx=ctx, out=out)
    call.__name__ = doc
    call.__doc__ = (f"MXNet's ``{doc}({', '.join(names)}, shape, dtype, ctx, out)``: "
                    f":func:`{fn.__name__}` under MXNet's parameter names.")
    return call


def _rate_to_scale(params):
    lam = params.get("lam", 1.0)
    return {"scale": 1.0 / lam}


def _defaults(**defaults):
    return lambda params: {**defaults, **params}


random_uniform = _legacy(uniform, ("low", "high"), "random_uniform",
                         _defaults(low=0.0, high=1.0))
random_normal = _legacy(normal, ("loc", "scale"), "random_normal",
                        _defaults(loc=0.0, scale=1.0))
random_gamma = _legacy(gamma, ("alpha", "beta"), "random_gamma",
                       _defaults(alpha=1.0, beta=1.0))
random_exponential = _legacy(exponential, ("lam",), "random_exponential", _rate_to_scale)
random_poisson = _legacy(poisson, ("lam",), "random_poisson", _defaults(lam=1.0))
random_negative_binomial = _legacy(negative_binomial, ("k", "p"), "random_negative_binomial",
                                   _defaults(k=1, p=1.0))
random_generalized_negative_binomial = _legacy(
    generalized_negative_binomial, ("mu", "alpha"), "random_generalized_negative_binomial",
    _defaults(mu=1.0, alpha=1.0))
random_randint = _legacy(randint, ("low", "high"), "random_randint")
sample_uniform = _legacy(uniform, ("low", "high"), "sample_uniform")
sample_normal = _legacy(normal, ("mu", "sigma"), "sample_normal")
sample_gamma = _legacy(gamma, ("alpha", "beta"), "sample_gamma")
sample_exponential = _legacy(exponential, ("lam",), "sample_exponential",
                             lambda p: {"scale": 1.0 / p["lam"]})
sample_poisson = _legacy(poisson, ("lam",), "sample_poisson")
sample_negative_binomial = _legacy(negative_binomial, ("k", "p"), "sample_negative_binomial")
sample_generalized_negative_binomial = _legacy(
    generalized_negative_binomial, ("mu", "alpha"), "sample_generalized_negative_binomial")


def sample_multinomial(data, shape=None, get_prob=False, out=None, dtype="int32"):
    """MXNet's ``sample_multinomial``: :func:`multinomial`."""
    return multinomial(data, shape=shape, get_prob=get_prob, out=out, dtype=dtype)


LEGACY = ("random_uniform", "random_normal", "random_gamma", "random_exponential",
          "random_poisson", "random_negative_binomial", "random_generalized_negative_binomial",
          "random_randint", "sample_uniform", "sample_normal", "sample_gamma",
          "sample_exponential", "sample_poisson", "sample_negative_binomial",
          "sample_generalized_negative_binomial", "sample_multinomial")
