"""Graph nodes without inputs: ``sym.zeros``, ``sym.ones``, ``sym.full``, ``sym.arange``
(MXNet's ``_zeros``, ``_ones``, ``_full``, ``_arange``).

``nd``'s creation functions are not registry operators (the registry's operators all
take an input, which gives their context), so these four are declared here, with the
interface of a registry ``Op`` that graph code reads, each running its ``nd`` function.
"""

import math

import numpy as np

from runtime import nd
from runtime.ops.registry import Attr

_COMMON = {"shape": Attr("shape", ()), "dtype": Attr("dtype", "float32")}


class SourceDef:
    """One of the four source operators (see the module docstring)."""

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

    def parse_attrs(self, kwargs):
        unknown = [k for k in kwargs if k not in self.attrs]
        if unknown:
            raise TypeError(f"{self.name}: unknown attribute {unknown[0]!r} (it takes "
                            f"{', '.join(self.attrs)})")
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
