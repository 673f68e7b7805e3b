"""Graph nodes that run an ``nd`` function rather than a registry operator: the creation
nodes ``sym.zeros``, ``sym.ones``, ``sym.full``, ``sym.arange`` (MXNet's ``_zeros``,
``_ones``, ``_full``, ``_arange``) and the random samplers of ``sym.random`` (MXNet's
``_random_<dist>`` with numbers for parameters, ``_sample_<dist>`` with one array per
parameter, ``_sample_multinomial``, ``_shuffle``).

``nd``'s creation and random functions are not registry operators (a registry operator
takes an input, which gives its context, and is deterministic), so these are declared
here with the interface of a registry ``Op`` that graph code reads, each node running
its ``nd`` function.  A sampler draws from :mod:`runtime.random`'s generator when the
graph runs, so ``mx.random.seed`` before a forward fixes what it draws, and it has no
gradient (as in MXNet).
"""

import math

import numpy as np

from runtime import nd
from runtime.nd import random as _ndr
from runtime.ops.registry import Attr

_COMMON = {"shape": Attr("shape", ()), "dtype": Attr("dtype", "float32")}


class SourceDef:
    """A node without inputs that runs an ``nd`` function (see the module docstring)."""

    variadic = False
    inputs = ()
    mutates = ()
    input_inits = {}
    infer_inputs = None

    def __init__(self, name, attrs, shape, make):
        self.name = name
        self.attrs = attrs
        self._shape = shape
        self._make = make

    def _refuse_unknown(self, kwargs):
        unknown = [k for k in kwargs if k not in self.attrs]
        if unknown:
            raise TypeError(f"{self.name}: unknown attribute {unknown[0]!r} (it takes "
                            f"{', '.join(self.attrs)})")

    def parse_attrs(self, kwargs):
        self._refuse_unknown(kwargs)
        out = {}
        for k, a in self.attrs.items():
            if k in kwargs:
                out[k] = a.parse(self.name, k, kwargs[k])
            elif a.required:
                raise TypeError(f"{self.name}: attribute {k!r} is required")
            else:
                out[k] = a.default
        self._shape(out)           # refuses what cannot make an array
        return out

    def n_out(self, params):
        return 1

    def infer_shape(self, params, shapes):
        return [self._shape(params)]

    def infer_type(self, params, dtypes):
        return [np.dtype(params["dtype"])]

    def infer_storage(self, params, stypes):
        return ["default"], "dense"

    def function(self, params):
        """The node's call: no inputs, the array made by the ``nd`` function."""
        return lambda: self._make(params)


class SamplerDef(SourceDef):
    """A random node whose distribution parameters are its inputs, one array each
    (MXNet's ``_sample_<dist>``): per element of the parameters, ``shape`` samples, so
    the output has shape ``parameters' shape + shape``."""

    def __init__(self, name, inputs, attrs, draw, n_out=lambda p: 1, shape=None,
                 types=None):
        super().__init__(name, attrs, None, None)
        self.inputs = tuple(inputs)
        self._draw = draw
        self._n_out = n_out
        self._out_shape = shape or (lambda p, s: tuple(s) + tuple(p["shape"]))
        self._types = types

    def parse_attrs(self, kwargs):
        self._refuse_unknown(kwargs)
        return {k: a.parse(self.name, k, kwargs[k]) if k in kwargs else a.default
                for k, a in self.attrs.items()}

    def n_out(self, params):
        return self._n_out(params)

    def infer_shape(self, params, shapes):
        first = shapes[0]
        if any(s != first for s in shapes[1:]):
            raise ValueError(f"{self.name}: the parameters {', '.join(self.inputs)} must "
                             f"have one shape (got {', '.join(map(repr, shapes))})")
        out = self._out_shape(params, first)
        return [out] * self.n_out(params)

    def infer_type(self, params, dtypes):
        if self._types is not None:
            return self._types(params, dtypes)
        d = params.get("dtype")
        return [np.dtype(d) if d is not None else np.dtype(dtypes[0])] * self.n_out(params)

    def infer_storage(self, params, stypes):
        return ["default"] * self.n_out(params), "dense"

    def function(self, params):
        """The node's call: the parameter arrays in, the samples out."""
        return lambda *arrays: self._draw(params, *arrays)


def _arange_shape(p):
    start, stop, step = p["start"], p["stop"], p["step"]
    if stop is None:
        start, stop = 0.0, start
    if step == 0:
        raise ValueError("_arange: step must not be 0")
    if p["repeat"] < 1:
        raise ValueError(f"_arange: repeat must be >= 1 (got {p['repeat']})")
    return (max(0, math.ceil((stop - start) / step)) * p["repeat"],)


def _arange(p):
    return nd.arange(p["start"], p["stop"], p["step"], p["repeat"], dtype=p["dtype"])


SOURCES = {
    "_zeros": SourceDef("_zeros", dict(_COMMON), lambda p: tuple(p["shape"]),
                        lambda p: nd.zeros(p["shape"], dtype=p["dtype"])),
    "_ones": SourceDef("_ones", dict(_COMMON), lambda p: tuple(p["shape"]),
                       lambda p: nd.ones(p["shape"], dtype=p["dtype"])),
    "_full": SourceDef("_full", {**_COMMON, "value": Attr("float", required=True)},
                       lambda p: tuple(p["shape"]),
                       lambda p: nd.full(p["shape"], p["value"], dtype=p["dtype"])),
    "_arange": SourceDef("_arange", {"start": Attr("float", required=True),
                                     "stop": Attr("float", None),
                                     "step": Attr("float", 1.0), "repeat": Attr("int", 1),
                                     "infer_range": Attr("bool", False),
                                     "dtype": Attr("dtype", "float32")},
                         _arange_shape, _arange),
}


def _shape_of(p):
    return tuple(p["shape"]) if p["shape"] else (1,)


_RANDOM_COMMON = {"shape": Attr("shape", ()), "dtype": Attr("dtype", "float32"),
                  "ctx": Attr("any", "")}
_SAMPLE_COMMON = {"shape": Attr("shape", ()), "dtype": Attr("dtype_or_none", None)}


def _random_source(dist, params, fn):
    """``_random_<dist>``: ``params`` ({MXNet attribute: default}) given as numbers."""
    attrs = {**{k: Attr("float", v) for k, v in params.items()}, **_RANDOM_COMMON}
    names = list(params)

    def make(p):
        values = [p[k] for k in names]
        return fn(*values, shape=_shape_of(p), dtype=p["dtype"])
    return SourceDef(f"_random_{dist}", attrs, _shape_of, make)


def _sampler(dist, inputs, fn):
    """``_sample_<dist>``: one array per parameter (MXNet's input names ``inputs``)."""
    def draw(p, *arrays):
        shape = tuple(p["shape"]) or None
        return fn(*arrays, shape=shape, dtype=p["dtype"])
    return SamplerDef(f"_sample_{dist}", inputs, dict(_SAMPLE_COMMON), draw)


def _exponential(lam, shape=None, dtype=None):
    # MXNet's exponential nodes carry the rate; nd.random.exponential takes the scale
    return _ndr.exponential(1.0 / lam, shape=shape, dtype=dtype)


def _randint_shape(p):
    if p["low"] >= p["high"]:
        raise ValueError(f"_random_randint: low must be < high (got low={p['low']}, "
                         f"high={p['high']})")
    return _shape_of(p)


def _multinomial(p, data):
    return _ndr.multinomial(data, shape=tuple(p["shape"]) or None, get_prob=p["get_prob"],
                            dtype=p["dtype"])


_DISTRIBUTIONS = [
    # dist, MXNet's scalar attributes with defaults, its input names, the nd function
    ("uniform", {"low": 0.0, "high": 1.0}, ("low", "high"), _ndr.uniform),
    ("normal", {"loc": 0.0, "scale": 1.0}, ("mu", "sigma"), _ndr.normal),
    ("gamma", {"alpha": 1.0, "beta": 1.0}, ("alpha", "beta"), _ndr.gamma),
    ("exponential", {"lam": 1.0}, ("lam",), _exponential),
    ("poisson", {"lam": 1.0}, ("lam",), _ndr.poisson),
    ("negative_binomial", {"k": 1.0, "p": 1.0}, ("k", "p"), _ndr.negative_binomial),
    ("generalized_negative_binomial", {"mu": 1.0, "alpha": 1.0}, ("mu", "alpha"),
     _ndr.generalized_negative_binomial),
]

for _dist, _params, _inputs, _fn in _DISTRIBUTIONS:
    SOURCES[f"_random_{_dist}"] = _random_source(_dist, _params, _fn)
    SOURCES[f"_sample_{_dist}"] = _sampler(_dist, _inputs, _fn)

SOURCES["_random_randint"] = SourceDef(
    "_random_randint", {"low": Attr("int", required=True), "high": Attr("int", required=True),
                        "shape": Attr("shape", ()), "dtype": Attr("dtype", "int32"),
                        "ctx": Attr("any", "")},
    _randint_shape,
    lambda p: _ndr.randint(p["low"], p["high"], shape=_shape_of(p), dtype=p["dtype"]))
SOURCES["_sample_multinomial"] = SamplerDef(
    "_sample_multinomial", ("data",),
    {"shape": Attr("shape", ()), "get_prob": Attr("bool", False),
     "dtype": Attr("dtype", "int32")},
    _multinomial, n_out=lambda p: 2 if p["get_prob"] else 1,
    shape=lambda p, s: tuple(s[:-1]) + tuple(p["shape"]),
    # the samples in dtype; with get_prob, their log-probabilities in the data's dtype
    types=lambda p, d: [np.dtype(p["dtype"]), np.dtype(d[0])][:2 if p["get_prob"] else 1])
SOURCES["_shuffle"] = SamplerDef("_shuffle", ("data",), {},
                                 lambda p, data: _ndr.shuffle(data),
                                 shape=lambda p, s: tuple(s))
