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
