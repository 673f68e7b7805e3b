"""Custom operators written in Python (MXNet's ``mx.operator``): ``CustomOp``,
``CustomOpProp`` and ``register``, called as ``nd.Custom(*inputs, op_type=name,
**kwargs)`` or ``sym.Custom(...)``.

>>> class Square(CustomOp):
...     def forward(self, is_train, req, in_data, out_data, aux):
...         self.assign(out_data[0], req[0], in_data[0] * in_data[0])
...     def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
...         self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])
>>> @register("square")
... class SquareProp(CustomOpProp):
...     def create_operator(self, ctx, in_shapes, in_dtypes):
...         return Square()

As in MXNet, the keyword arguments reach the ``CustomOpProp`` constructor as strings.  A
call is one node of the autograd tape whose gradient calls ``backward`` (with request
'write' for every input; gradients of gradients are not supported).  In a graph, a
Custom node is an operator like the registry's: its shapes and dtypes come from the
prop's ``infer_shape``/``infer_type``, its auxiliary states from
``list_auxiliary_states`` (updated in place by ``forward``), and MXNet's JSON writes it
as ``{"op": "Custom", "attrs": {"op_type": ..., <kwargs>}}``.
"""

import numpy as np

from runtime import _tape
from runtime._imperative import is_recording, is_training, set_recording
from runtime._ndarray import NDArray, zeros
from runtime.context import current_context

_PROPS = {}


class CustomOp:
    """The computation of a custom operator: define ``forward`` and ``backward``."""

    def forward(self, is_train, req, in_data, out_data, aux):
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise NotImplementedError(f"{type(self).__name__} must define backward")

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` by request ``req`` ('null', 'write', 'inplace',
        'add')."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src
        else:
            raise ValueError(f"assign: req must be one of null, write, inplace, add (got "
                             f"{req!r})")


class CustomOpProp:
    """The declaration of a custom operator (its inputs, outputs, shapes, dtypes)."""

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def list_auxiliary_states(self):
        return []

    def infer_shape(self, in_shape):
        """(input shapes, output shapes, aux shapes); default: every output has the
        first input's shape."""
        return in_shape, [in_shape[0]] * len(self.list_outputs()), []

    def infer_type(self, in_type):
        """(input dtypes, output dtypes, aux dtypes); default: the first input's."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        deps = list(in_data) + list(out_data)
        return list(out_grad) + deps if self.need_top_grad_ else deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        raise NotImplementedError(f"{type(self).__name__} must define create_operator")


def register(reg_name):
    """Class decorator: register a :class:`CustomOpProp` subclass as ``op_type``
    ``reg_name``."""
    if not isinstance(reg_name, str) or not reg_name:
        raise TypeError(f"register: reg_name must be a non-empty str (got {reg_name!r})")

    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise TypeError(f"register: {reg_name!r} must decorate a CustomOpProp subclass "
                            f"(got {prop_cls!r})")
        _PROPS[reg_name] = prop_cls
        return prop_cls
    return do_register


class _Attr:
    """The attribute form that graph code reads (``kind``) for Custom's string
    keyword arguments."""
    kind = "str"


class CustomDef:
    """One ``(op_type, kwargs)`` of a custom operator, with the interface of a registry
    ``Op`` that graph mode reads (inputs, outputs, inference, ``call``)."""

    name = "Custom"
    variadic = False
    input_inits = {}

    def __init__(self, op_type, kwargs):
        if op_type not in _PROPS:
            raise ValueError(f"Custom: op_type {op_type!r} is not registered (registered: "
                             f"{', '.join(sorted(_PROPS)) or 'none'})")
        self.op_type = op_type
        self.kwargs = {k: str(v) for k, v in kwargs.items()}
        self.prop = _PROPS[op_type](**self.kwargs)
        args = list(self.prop.list_arguments())
        aux = list(self.prop.list_auxiliary_states())
        self.inputs = tuple(args + aux)
        self.n_args = len(args)
        self.mutates = tuple(range(len(args), len(args) + len(aux)))
        self.attrs = {k: _Attr() for k in ["op_type"] + list(self.kwargs)}
        self.params = {"op_type": op_type, **self.kwargs}
        self.output_names = list(self.prop.list_outputs())

    def n_out(self, params):
        return len(self.output_names)

    def _split(self, values):
        return list(values[:self.n_args]), list(values[self.n_args:])

    def _prop_infer(self, what, values):
        """The prop's ``infer_shape``/``infer_type`` on the arguments' ``values``, as
        (inputs, outputs, aux) lists of the declared lengths; a prop may return the first
        two only when it has no auxiliary state (MXNet's)."""
        ret = getattr(self.prop, what)(list(values))
        if not isinstance(ret, (list, tuple)) or len(ret) not in (2, 3):
            raise ValueError(f"Custom ({self.op_type}): {what} must return 2 or 3 lists "
                             f"(got {ret!r})")
        ins, outs, aux = (list(ret) + [[]])[:3]
        for kind, got, want in (("input", ins, self.n_args),
                                ("output", outs, len(self.output_names)),
                                ("auxiliary", aux, len(self.inputs) - self.n_args)):
            if len(got) != want:
                raise ValueError(f"Custom ({self.op_type}): {what} must return {want} "
                                 f"{kind} entries (got {len(got)})")
        return ins, outs, aux

    def infer_shape(self, params, shapes):
        args, _ = self._split(shapes)
        _, outs, _ = self._prop_infer("infer_shape", [list(s) for s in args])
        return [tuple(s) for s in outs]

    def infer_inputs(self, params, shapes):
        """The auxiliary states' shapes and any argument's the prop completes (a label's
        from the data's, say).  As MXNet's, the prop sees an unknown shape as []; a prop
        that cannot work from the shapes known so far leaves them as they are."""
        args, _ = self._split(shapes)
        if all(s is None for s in args):
            return shapes
        given = [[] if s is None else list(s) for s in args]
        if any(s is None for s in args):
            try:
                ins, _, aux = self._prop_infer("infer_shape", given)
            except (IndexError, KeyError, TypeError, ValueError):
                return shapes
        else:
            ins, _, aux = self._prop_infer("infer_shape", given)
        return [tuple(s) if len(s) else None for s in ins] + [tuple(s) for s in aux]

    def infer_type(self, params, dtypes):
        args, _ = self._split(dtypes)
        _, outs, _ = self._prop_infer("infer_type", args)
        return [np.dtype(d) for d in outs]

    def infer_storage(self, params, stypes):
        args, _ = self._split(stypes)
        _, outs, _ = self.prop.infer_storage_type(list(args))
        return list(outs), "dense"

    def call(self, *inputs):
        """Run the operator on NDArrays (recorded when autograd records)."""
        return _run(self, list(inputs))

    def function(self, params):
        """The call of a graph node of this op (its attributes are fixed already)."""
        return self.call


class _CustomCall:
    """The tape's record of one Custom call: its gradient calls the op's backward."""

    __slots__ = ("name", "op", "ins", "outs", "aux")
    differentiable = True
    grad_reads = None

    def __init__(self, name, op, ins, outs, aux):
        self.name, self.op, self.ins, self.outs, self.aux = name, op, ins, outs, aux

    def release(self):
        self.op = self.ins = self.outs = self.aux = None

    def gradient(self, attrs, ins, outs, ograds):
        if is_recording():
            raise NotImplementedError(f"{self.name}: gradients of gradients through a "
                                      "custom operator are not supported")
        in_grad = [zeros(x.shape, ctx=x.ctx, dtype=x.dtype) for x in self.ins]
        self.op.backward(["write"] * len(in_grad), list(ograds), self.ins, self.outs,
                         in_grad, self.aux)
        return in_grad


def _run(cdef, inputs):
    for i, x in enumerate(inputs):
        if not isinstance(x, NDArray):
            raise TypeError(f"Custom ({cdef.op_type}): input {cdef.inputs[i]!r} must be "
                            f"an NDArray (got {type(x).__name__})")
    if len(inputs) != len(cdef.inputs):
        raise ValueError(f"Custom ({cdef.op_type}): takes {len(cdef.inputs)} input(s) "
                         f"({', '.join(cdef.inputs)}) (got {len(inputs)})")
    args, aux = cdef._split(inputs)
    shapes = cdef.infer_shape(None, [x.shape for x in inputs])
    dtypes = cdef.infer_type(None, [x.dtype for x in inputs])
    stypes = cdef.infer_storage(None, [x.stype for x in inputs])[0]
    ctx = args[0].ctx if args else current_context()
    op = cdef.prop.create_operator(ctx, [list(x.shape) for x in args],
                                   [x.dtype for x in args])
    outs = [zeros(s, ctx=ctx, dtype=d, stype=st)
            for s, d, st in zip(shapes, dtypes, stypes)]
    recording = is_recording()
    prev = set_recording(False)
    try:
        op.forward(is_training(), ["write"] * len(outs), args, outs, aux)
    finally:
        set_recording(prev)
    if recording and any(x._entry is not None for x in args):
        _tape.record_call(_CustomCall(f"Custom({cdef.op_type})", op, args, outs, aux), {},
                          None, args, outs)
    return outs[0] if len(outs) == 1 else outs


def custom(*inputs, op_type=None, **kwargs):
    """``nd.Custom(*inputs, op_type=name, **kwargs)``: run the registered custom operator
    ``op_type`` (arguments, then auxiliary states) on NDArrays."""
    if op_type is None:
        raise TypeError("Custom: op_type is required (the name given to "
                        "mx.operator.register)")
    kwargs.pop("name", None)
    return CustomDef(op_type, kwargs).call(*inputs)


__all__ = ["CustomOp", "CustomOpProp", "register", "CustomDef", "custom"]
