"""Mixed-precision operators (MXNet 1.x's AMP operators, names, signatures and
semantics): ``amp_cast``, ``amp_multicast``, ``all_finite`` and ``multi_all_finite``.

The casts touch floating-point arrays only (float16, float32, float64): MXNet's AMP
casts between low precision floats and float32 and leaves every other dtype as it is.
Their gradients are the head gradients cast back to each input's dtype.  The finiteness
checks give a float32 array of shape (1,): 1 when every value is finite, else 0."""

import numpy as np

from runtime.ops._call import F
from runtime.ops.registry import Attr, register

_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _cast_to(dtype, target):
    """``target`` for a floating-point ``dtype``, ``dtype`` itself otherwise."""
    return np.dtype(target) if np.dtype(dtype) in _FLOATS else np.dtype(dtype)


def _copy_cast(attrs, ins, outs):
    # a value beyond float16's range becomes an infinity, as in MXNet: what AMP's
    # all_finite check is there to catch, not an error
    with np.errstate(over="ignore"):
        for x, out in zip(ins, outs):
            out[...] = x


def _amp_cast_grad(attrs, inputs, outputs, out_grads):
    return [F.amp_cast(out_grads[0], dtype=inputs[0].dtype)]


register("amp_cast", attrs={"dtype": Attr("dtype", required=True)},
         infer_type=lambda a, d: [_cast_to(d[0], a["dtype"])], compute=_copy_cast,
         gradient=_amp_cast_grad,
         doc="``data`` cast to ``dtype`` when both are floating point (float16, float32, "
             "float64); an array of any other dtype comes back as it is (MXNet's "
             "``amp_cast``).  The gradient is cast back to ``data``'s dtype.")


def _multicast_count(attrs, n):
    if attrs["num_outputs"] != n:
        raise ValueError(f"amp_multicast: num_outputs must equal the number of inputs {n} "
                         f"(got {attrs['num_outputs']})")


def _multicast_shape(attrs, shapes):
    _multicast_count(attrs, len(shapes))
    return list(shapes)


def _multicast_type(attrs, dtypes):
    _multicast_count(attrs, len(dtypes))
    floats = [np.dtype(d) for d in dtypes if np.dtype(d) in _FLOATS]
    if not floats:
        return list(dtypes)
    pick = min if attrs["cast_narrow"] else max
    target = pick(floats, key=lambda d: d.itemsize)
    return [_cast_to(d, target) for d in dtypes]


def _multicast_grad(attrs, inputs, outputs, out_grads):
    return [F.amp_cast(g, dtype=x.dtype) for x, g in zip(inputs, out_grads)]


register("amp_multicast", inputs=("data",), variadic=True,
         num_outputs=lambda a: a["num_outputs"],
         attrs={"num_outputs": Attr("int", required=True),
                "cast_narrow": Attr("bool", False)},
         infer_shape=_multicast_shape, infer_type=_multicast_type, compute=_copy_cast,
         gradient=_multicast_grad,
         doc="Each input cast to the widest floating-point dtype among the inputs (the "
             "narrowest with ``cast_narrow``); inputs of other dtypes come back as they "
             "are (MXNet's ``amp_multicast``).  ``num_outputs`` must equal the number of "
             "inputs.  Each gradient is cast back to its input's dtype.")


def _finite_flag(attrs, ins, outs):
    ok = all(bool(np.isfinite(x).all()) for x in ins
             if np.issubdtype(x.dtype, np.floating))
    outs[0][0] = 1.0 if ok else 0.0


def _num_arrays(attrs, n):
    if attrs["num_arrays"] != n:
        raise ValueError(f"multi_all_finite: num_arrays must equal the number of arrays "
                         f"{n} (got {attrs['num_arrays']})")


def _init_output(op, attrs):
    # MXNet's False keeps what ``out`` holds when every value is finite: a flag carried
    # across calls, which needs an output array that outlives the call
    if not attrs["init_output"]:
        raise ValueError(f"{op}: init_output must be True (got False)")


def _flag_shape(attrs, shapes):
    _init_output("all_finite", attrs)
    return [(1,)]


def _multi_shape(attrs, shapes):
    _init_output("multi_all_finite", attrs)
    _num_arrays(attrs, len(shapes))
    return [(1,)]


_INIT_OUTPUT = Attr("bool", True)
# what the two finiteness checks share: a float32 flag, one kernel, no gradient
_FLAG_OP = dict(infer_type=lambda a, d: [np.dtype(np.float32)], compute=_finite_flag,
                differentiable=False)

register("all_finite", attrs={"init_output": _INIT_OUTPUT}, infer_shape=_flag_shape,
         **_FLAG_OP,
         doc="A float32 array of shape (1,): 1 when every value of ``data`` is finite "
             "(no NaN, no infinity), else 0 (MXNet's ``all_finite``).  "
             "``init_output=False`` (MXNet: leave the flag as ``out`` holds it when every "
             "value is finite) is refused.")
register("multi_all_finite", inputs=("data",), variadic=True,
         attrs={"num_arrays": Attr("int", 1), "init_output": _INIT_OUTPUT},
         infer_shape=_multi_shape, **_FLAG_OP,
         doc="``all_finite`` over several arrays (MXNet's ``multi_all_finite``): 1 when "
             "every value of every array is finite, else 0.  ``num_arrays`` must equal "
             "the number of arrays; ``init_output=False`` is refused, as for "
             "``all_finite``.")
