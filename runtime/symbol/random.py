"""Random sampling nodes (MXNet 1.x's ``mx.sym.random``): uniform, normal, randn, randint,
exponential, gamma, poisson, negative_binomial, generalized_negative_binomial,
multinomial and shuffle.

Distribution parameters given as numbers make a node without inputs (MXNet's
``_random_<dist>``) that draws ``shape`` samples; given as Symbols (all of them, of one
shape) they make a node with those inputs (``_sample_<dist>``) that draws ``shape``
samples per element.  The nodes draw from :mod:`runtime.random`'s generator each time
the graph runs (``mx.random.seed`` before a forward fixes the draw), and no gradient
flows through them.
"""

from numbers import Number

from runtime.errors import MXNetTypeError
from runtime.nd.random import named_params
from runtime.symbol.symbol import Symbol, _source

__all__ = ["uniform", "normal", "randn", "randint", "exponential", "gamma", "poisson",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle"]


def _node(dist, params, shape, dtype, name, attr, kwargs):
    """``_random_<dist>`` when every value of ``params`` ({MXNet attribute: value}) is a
    number, ``_sample_<dist>`` with them as inputs when every one is a Symbol."""
    values = list(params.values())
    attrs = {"shape": shape, "dtype": dtype, **kwargs}
    if all(isinstance(v, Number) for v in values):
        return _source(f"_random_{dist}", {**params, **attrs}, name, attr)
    if all(isinstance(v, Symbol) for v in values):
        return _source(f"_sample_{dist}", attrs, name, attr, inputs=values)
    kinds = ", ".join(f"{k}={type(v).__name__}" for k, v in params.items())
    raise TypeError(f"random.{dist}: the distribution parameters must be all numbers or "
                    f"all Symbols (got {kinds})")


def uniform(low=0, high=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Samples uniform on [low, high)."""
    return _node("uniform", {"low": low, "high": high}, shape, dtype, name, attr, kwargs)


def normal(loc=0, scale=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Samples of the normal distribution of mean ``loc`` and deviation ``scale``."""
    return _node("normal", {"loc": loc, "scale": scale}, shape, dtype, name, attr, kwargs)


def randn(*shape, loc=0, scale=1, dtype=None, name=None, attr=None, **kwargs):
    """:func:`normal` with the shape given as positional arguments."""
    return normal(loc, scale, shape or None, dtype, name, attr, **kwargs)


def randint(low, high, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Integers uniform on [low, high) (int32 unless ``dtype``)."""
    return _source("_random_randint", {"low": low, "high": high, "shape": shape,
                                       "dtype": dtype, **kwargs}, name, attr)


def exponential(scale=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Samples of the exponential distribution of mean ``scale`` (the node holds the
    rate ``1 / scale``, MXNet's ``lam``)."""
    lam = 1.0 / scale
    return _node("exponential", {"lam": lam}, shape, dtype, name, attr, kwargs)


def gamma(alpha=1, beta=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Samples of the gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _node("gamma", {"alpha": alpha, "beta": beta}, shape, dtype, name, attr, kwargs)


def poisson(lam=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Samples of the Poisson distribution of rate ``lam``."""
    return _node("poisson", {"lam": lam}, shape, dtype, name, attr, kwargs)


def negative_binomial(k=1, p=1, shape=None, dtype=None, name=None, attr=None, **kwargs):
    """Samples of the negative binomial distribution: failures before ``k`` successes of
    probability ``p``."""
    return _node("negative_binomial", {"k": k, "p": p}, shape, dtype, name, attr, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, name=None,
                                  attr=None, **kwargs):
    """Samples of the negative binomial distribution of mean ``mu`` and dispersion
    ``alpha``."""
    return _node("generalized_negative_binomial", {"mu": mu, "alpha": alpha}, shape, dtype,
                 name, attr, kwargs)


def multinomial(data, shape=None, get_prob=False, dtype="int32", name=None, attr=None,
                **kwargs):
    """Category indices drawn from the distributions in the last axis of ``data``; with
    ``get_prob`` a second output, the samples' log-probabilities."""
    if not isinstance(data, Symbol):
        raise TypeError(f"random.multinomial: data must be a Symbol (got "
                        f"{type(data).__name__})")
    return _source("_sample_multinomial", {"shape": shape, "get_prob": get_prob,
                                           "dtype": dtype, **kwargs}, name, attr,
                   inputs=[data])


def shuffle(data, name=None, attr=None, **kwargs):
    """``data`` with its rows (first axis) in a random order."""
    if not isinstance(data, Symbol):
        raise TypeError(f"random.shuffle: data must be a Symbol (got "
                        f"{type(data).__name__})")
    return _source("_shuffle", kwargs, name, attr, inputs=[data])


# -- MXNet's older flat names (mx.sym.random_normal, mx.sym.sample_normal, ...) -----------
# random_<dist> make the node without inputs from numbers, sample_<dist> the node whose
# inputs are the Symbols of the parameters; both under MXNet's attribute names, and the
# node is named after the function (random_normal0), as MXNet's generated functions do.

def _legacy(flat_name, dist, names, defaults):
    sampled = flat_name.startswith("sample_")
    want = "Symbol" if sampled else "number"

    def call(*args, shape=None, dtype=None, name=None, attr=None, **kwargs):
        params = named_params(flat_name, names, args, kwargs)
        params = {k: params.get(k, defaults.get(k)) for k in names}
        missing = [k for k, v in params.items() if v is None]
        if missing:
            raise MXNetTypeError(f"{flat_name}: missing parameter {missing[0]!r}")
        kind = Symbol if sampled else Number
        for k, v in params.items():
            if not isinstance(v, kind):
                raise MXNetTypeError(f"{flat_name}: {k} must be a {want} (got "
                                     f"{type(v).__name__})")
        attrs = {"shape": shape, "dtype": dtype, **kwargs}
        if sampled:
            return _source(f"_sample_{dist}", attrs, name, attr,
                           inputs=list(params.values()), hint=flat_name)
        return _source(f"_random_{dist}", {**params, **attrs}, name, attr, hint=flat_name)

    call.__name__ = flat_name
    call.__doc__ = (f"MXNet's ``{flat_name}({', '.join(names)}, shape, dtype, name, attr)``:"
                    f" each parameter a {want}.")
    return call


_DISTRIBUTIONS = (       # (dist, random_ parameters and defaults, sample_ parameters)
    ("uniform", {"low": 0.0, "high": 1.0}, ("low", "high")),
    ("normal", {"loc": 0.0, "scale": 1.0}, ("mu", "sigma")),
    ("gamma", {"alpha": 1.0, "beta": 1.0}, ("alpha", "beta")),
    ("exponential", {"lam": 1.0}, ("lam",)),
    ("poisson", {"lam": 1.0}, ("lam",)),
    ("negative_binomial", {"k": 1, "p": 1.0}, ("k", "p")),
    ("generalized_negative_binomial", {"mu": 1.0, "alpha": 1.0}, ("mu", "alpha")),
)
LEGACY = {}
for _dist, _defaults, _inputs in _DISTRIBUTIONS:
    LEGACY[f"random_{_dist}"] = _legacy(f"random_{_dist}", _dist, tuple(_defaults),
                                        _defaults)
    LEGACY[f"sample_{_dist}"] = _legacy(f"sample_{_dist}", _dist, _inputs, {})
LEGACY["random_randint"] = _legacy("random_randint", "randint", ("low", "high"), {})


def sample_multinomial(data, shape=None, get_prob=False, dtype="int32", name=None,
                       attr=None, **kwargs):
    """MXNet's ``sample_multinomial``: :func:`multinomial`."""
    return multinomial(data, shape, get_prob, dtype, name, attr, **kwargs)


LEGACY["sample_multinomial"] = sample_multinomial
