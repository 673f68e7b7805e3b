"""``Executor`` (MXNet's ``mx.executor.Executor``): a symbol bound to arrays.

Forward and backward are one plan (``runtime._executor.GraphPlan``, one per recording
mode): the first forward probes the graph and plans it, memory for the forward's values
and the backward's gradients assigned once by lifetime and kept; later forwards run each
node's kernel into the plan's buffers, and ``backward`` runs the plan's backward and
writes each argument's gradient into ``grad_arrays`` by its request (``write``: copied,
``add``: added).  A graph the plan cannot take (sparse or device arrays, custom
operators) runs op by op: the nodes through the invoker in topological order
(``runtime.nd._cached_op.Program``), the forward recorded with the arguments marked as
autograd variables, and ``backward`` is ``autograd.backward`` on it.  Auxiliary states
are the arrays the ops update in place (BatchNorm's moving statistics, in training mode
only).
"""

import math

import numpy as np

from runtime import autograd, nd
from runtime._executor import GraphPlan, write_gradient
from runtime._ndarray import NDArray
from runtime.errors import MXNetError
from runtime.nd._cached_op import Program, graph_steps
from runtime.context import Context, current_context

GRAD_REQS = ("write", "add", "null")


def _ctx(ctx):
    if ctx is None:
        return current_context()
    if not isinstance(ctx, Context):
        raise TypeError(f"bind: ctx must be a Context (got {ctx!r})")
    return ctx


def _by_name(what, values, names, default=None):
    """``values`` (a list in ``names`` order, or a dict by name whose missing names get
    ``default``) as a list."""
    if isinstance(values, dict):
        extra = [k for k in values if k not in names]
        if extra:
            raise ValueError(f"bind: {what} names {extra[0]!r}, which is not one of "
                             f"{', '.join(names) or 'none'}")
        return [values.get(k, default) for k in names]
    if isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise ValueError(f"bind: {what} must hold one value per name of "
                             f"{', '.join(names) or 'none'} (got {len(values)})")
        return list(values)
    raise TypeError(f"bind: {what} must be a list or a dict (got {type(values).__name__})")


def _arrays(what, values, names, allow_none=False):
    """:func:`_by_name` of NDArrays (None allowed where ``allow_none``)."""
    values = _by_name(what, values, names)
    for k, v in zip(names, values):
        if v is None and allow_none:
            continue
        if not isinstance(v, NDArray):
            raise TypeError(f"bind: {what} {k!r} must be an NDArray (got "
                            f"{type(v).__name__})" if v is not None else
                            f"bind: {what} {k!r} is missing")
    return values


def _reqs(grad_req, names):
    reqs = [grad_req] * len(names) if isinstance(grad_req, str) else \
        _by_name("grad_req", grad_req, names, "null")
    for k, r in zip(names, reqs):
        if r not in GRAD_REQS:
            raise ValueError(f"bind: grad_req of {k!r} must be one of "
                             f"{', '.join(GRAD_REQS)} (got {r!r})")
    return reqs


class Executor:
    """A symbol bound to argument, gradient and auxiliary arrays; made by
    ``Symbol.bind``/``simple_bind``.

    Attributes: ``arg_arrays``, ``grad_arrays`` (None where the request is 'null'),
    ``aux_arrays``, their ``*_dict`` forms by name, ``outputs`` (the last forward's
    results; before the first, zero arrays of the inferred shapes and dtypes),
    ``output_dict``.
    """

    def __init__(self, symbol, ctx, args, grads, reqs, aux):
        self._symbol = symbol
        self._ctx = ctx
        # the graph that runs: creation nodes of partly known shape made for these arrays
        graph = symbol._sources_shaped(**{k: a.shape for k, a in zip(
            symbol.list_arguments(), args)})
        self._nodes = graph._nodes()
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self.arg_arrays = args
        self.grad_arrays = grads
        self.aux_arrays = aux
        self._reqs = reqs
        self._heads = None
        self._ran = False
        self.outputs = self._unrun_outputs()
        self._program = Program(self._nodes, graph._outputs)
        self._steps = graph_steps(self._nodes, graph._outputs)
        self._plans = {}             # (needs, train) -> GraphPlan, or False: not plannable
        self._state = None           # the last planned forward's GraphState

    def _unrun_outputs(self):
        """Zero arrays of the outputs' inferred shapes and dtypes (MXNet allocates the
        outputs at bind, so their shapes and dtypes can be read before a forward); none
        when inference cannot tell them.  Each forward gives new arrays."""
        shapes = {k: a.shape for k, a in zip(self._arg_names, self.arg_arrays)}
        types = {k: a.dtype for k, a in zip(self._arg_names, self.arg_arrays)}
        try:
            out_shapes = self._symbol.infer_shape(**shapes)[1]
            out_types = self._symbol.infer_type(**types)[1]
        except (MXNetError, NotImplementedError):
            return []        # the forward will say what is wrong, when it runs
        if out_shapes is None or out_types is None:
            return []
        return [nd.zeros(s, ctx=self._ctx, dtype=t) for s, t in zip(out_shapes, out_types)]

    # -- construction ----------------------------------------------------------------
    @classmethod
    def bind(cls, symbol, ctx, args, args_grad, grad_req, aux_states):
        ctx = _ctx(ctx)
        names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
        args = _arrays("args", args, names)
        if args_grad is None:
            grads = [None] * len(names)
            reqs = ["null"] * len(names)
        else:
            grads = _arrays("args_grad", args_grad, names, allow_none=True)
            # an argument without a gradient array gets none (MXNet's rule for a
            # dict that leaves it out)
            reqs = [r if g is not None else "null"
                    for g, r in zip(grads, _reqs(grad_req, names))]
        aux = _arrays("aux_states", aux_states if aux_states is not None else [],
                      aux_names)
        for k, a, g in zip(names, args, grads):
            if g is not None and g.shape != a.shape:
                raise ValueError(f"bind: gradient of {k!r} must have the argument's shape "
                                 f"{a.shape!r} (got {g.shape!r})")
        return cls(symbol, ctx, args, grads, reqs, aux)

    @classmethod
    def simple_bind(cls, symbol, ctx, grad_req, type_dict, stype_dict, shapes):
        ctx = _ctx(ctx)
        names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
        arg_shapes, _, aux_shapes = symbol.infer_shape_partial(**shapes)
        missing = [k for k, s in zip(names + aux_names, arg_shapes + aux_shapes) if s == ()]
        if missing:
            raise ValueError(f"simple_bind: the shape of {missing[0]!r} cannot be inferred "
                             f"from the shapes given ({shapes!r}); give it")
        # type_dict's dtypes, else the variables' own (Variable(dtype=...)), else float32
        types = {k: np.dtype(v) for k, v in (type_dict or {}).items()}
        arg_types, _, aux_types = symbol.infer_type(**types)
        if arg_types is None:
            attrs = symbol.attr_dict()
            arg_types, _, aux_types = symbol.infer_type(
                **{k: types.get(k, np.float32) for k in names
                   if k in types or "__dtype__" not in attrs.get(k, {})})
        # storage types: stype_dict's, else the variables' own (Variable(stype=...));
        # a row_sparse argument gets a row_sparse gradient, as MXNet's sparse weights do
        arg_stypes = symbol.infer_storage_type(**dict(stype_dict or {}))[0]
        reqs = _reqs(grad_req, names)
        args = [nd.zeros(s, ctx=ctx, dtype=t, stype=st)
                for s, t, st in zip(arg_shapes, arg_types, arg_stypes)]
        grads = [None if r == "null" else nd.zeros(
                     s, ctx=ctx, dtype=t, stype="row_sparse" if st == "row_sparse" else "default")
                 for s, t, st, r in zip(arg_shapes, arg_types, arg_stypes, reqs)]
        aux = [nd.zeros(s, ctx=ctx, dtype=t) for s, t in zip(aux_shapes, aux_types)]
        return cls(symbol, ctx, args, grads, reqs, aux)

    # -- views -----------------------------------------------------------------------
    @property
    def arg_dict(self):
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        return dict(zip(self._arg_names, self.grad_arrays))

    @property
    def aux_dict(self):
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    # -- running ---------------------------------------------------------------------
    def _inputs(self):
        arrays = dict(zip(self._arg_names, self.arg_arrays))
        arrays.update(zip(self._aux_names, self.aux_arrays))
        return [arrays[n.name] for n in self._program.variables]

    def _run(self):
        return self._program.run(self._inputs())

    def _needs(self):
        """Per graph variable: whether its gradient is wanted (None: no argument's)."""
        reqs = dict(zip(self._arg_names, self._reqs))
        needs = tuple(reqs.get(n.name, "null") != "null" for n in self._program.variables)
        return needs if any(needs) else None

    def _plan(self, needs, train):
        """The GraphPlan of a recording mode, made on first use; None when the graph
        cannot be planned."""
        if self._steps is None:
            return None
        key = (needs, train)
        plan = self._plans.get(key)
        if plan is None:
            steps, variables, heads = self._steps
            plan = GraphPlan(steps, len(variables), heads, needs, train)
            if not plan.prepare(self._inputs()):
                plan = False
            self._plans[key] = plan
        return plan or None

    def _planned_forward(self, needs, train):
        plan = self._plan(needs, train)
        if plan is None:
            return False
        self._state = None           # this executor's hold on the last run's buffers
        self.outputs = []
        self._state, self.outputs = plan.forward(self._inputs())
        self._heads = None
        return True

    def forward(self, is_train=False, **kwargs):
        """Run the graph; ``kwargs`` copy new values into arguments first.  Returns
        :attr:`outputs`."""
        arg_dict = self.arg_dict
        for key, value in kwargs.items():      # all checked before any is written
            if key not in arg_dict:
                raise ValueError(f"forward: no argument named {key!r} (arguments: "
                                 f"{', '.join(self._arg_names)})")
            shape = tuple(getattr(value, "shape", np.shape(value)))
            if shape != arg_dict[key].shape:
                raise ValueError(f"forward: {key!r} must have shape {arg_dict[key].shape!r} "
                                 f"(got {shape!r})")
        for key, value in kwargs.items():
            arg_dict[key][:] = value
        self._ran = True
        needs = self._needs() if is_train else None
        if self._planned_forward(needs, bool(is_train)):
            return self.outputs
        self._state = None
        if is_train and self._recorded(True):
            return self.outputs
        self._heads = None
        with autograd.pause(train_mode=bool(is_train)):
            self.outputs = self._run()
        return self.outputs

    def _recorded(self, train):
        """Run the forward recorded (in training mode or not), the arguments that want a
        gradient marked as variables; False when none does."""
        marked = [(a, g, r) for a, g, r in zip(self.arg_arrays, self.grad_arrays, self._reqs)
                  if r != "null"]
        if not marked:
            return False
        autograd.mark_variables([m[0] for m in marked], [m[1] for m in marked],
                                [m[2] for m in marked])
        with autograd.record(train_mode=train):
            self._heads = self._run()
        self.outputs = [h.detach() for h in self._heads]
        return True

    def backward(self, out_grads=None, is_train=True):
        """Gradients of the last forward into :attr:`grad_arrays`, by each argument's
        request; ``out_grads``: the outputs' gradients (ones where None).  After a
        ``forward(is_train=False)``, which records nothing, the forward runs again
        recorded in inference mode first (MXNet allows backward after either).  When
        every ``grad_req`` is ``'null'`` there is nothing to compute and nothing is
        written, as in MXNet.  Before any forward, a forward in training mode runs first
        (MXNet's backward reads whatever the forward buffers hold then)."""
        if not self._ran:
            self.forward(is_train=True)
        if all(r == "null" for r in self._reqs):
            return
        if isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        if self._state is not None:
            self._planned_backward(out_grads)
            return
        if self._heads is None:
            self._recorded(False)
        autograd.backward(self._heads, out_grads, retain_graph=True, train_mode=is_train)

    def _planned_backward(self, out_grads):
        state = self._state
        if state.plan.needs is None:
            # the last forward was for inference: run it again with its gradients planned
            if not self._planned_forward(self._needs(), state.plan.train):
                raise RuntimeError("backward: the graph could not be planned")
            state = self._state
        if out_grads is not None:
            out_grads = list(out_grads)
            if len(out_grads) != len(self.outputs):
                raise ValueError(f"backward: out_grads must hold one array per output "
                                 f"({len(self.outputs)}) (got {len(out_grads)})")
        grads = state.plan.backward(state, out_grads)
        by_name = dict(zip((n.name for n in self._program.variables), grads))
        for name, arr, req in zip(self._arg_names, self.grad_arrays, self._reqs):
            if req != "null":
                write_gradient(arr, by_name.get(name), req)

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new argument shapes ``kwargs``, sharing memory with this one
        (MXNet's): an array whose shape does not change is the same array (the
        parameters); one that shrinks is a view of the first elements of this one's;
        one that grows is new, and only with ``allow_up_sizing=True``."""
        names = self._arg_names
        arg_shapes, _, aux_shapes = self._symbol.infer_shape_partial(**kwargs)
        missing = [k for k, s in zip(names, arg_shapes) if s == ()]
        if missing:
            raise ValueError(f"reshape: the shape of {missing[0]!r} cannot be inferred "
                             f"from {kwargs!r}")
        for k in names:
            if k not in kwargs and not partial_shaping and \
                    arg_shapes[names.index(k)] != self.arg_dict[k].shape:
                raise ValueError(f"reshape: the shape of {k!r} changes to "
                                 f"{arg_shapes[names.index(k)]!r} though it was not "
                                 "given (set partial_shaping=True)")

        def same_or_new(old, shape, name):
            shape = tuple(shape)
            if old is None or old.shape == shape:
                return old
            size = math.prod(shape)
            if size > old.size and not allow_up_sizing:
                raise ValueError(f"reshape: the new shape {shape!r} of {name!r} is larger "
                                 f"than its old one {old.shape!r}; reshape a big executor "
                                 "down rather than up, or set allow_up_sizing=True to "
                                 "allocate new arrays")
            if size <= old.size and old.stype == "default":
                return old.reshape(-1)[:size].reshape(shape)
            return nd.zeros(shape, ctx=old.ctx, dtype=old.dtype, stype=old.stype)

        aux_names = self._symbol.list_auxiliary_states()
        args = [same_or_new(a, s, k) for a, s, k in zip(self.arg_arrays, arg_shapes, names)]
        grads = [same_or_new(g, s, k) for g, s, k in zip(self.grad_arrays, arg_shapes, names)]
        aux = [same_or_new(a, s, k) for a, s, k in zip(self.aux_arrays, aux_shapes, aux_names)]
        return Executor(self._symbol, self._ctx, args, grads, list(self._reqs), aux)

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy arrays by name into the arguments and auxiliary states."""
        for params, target in ((arg_params, self.arg_dict), (aux_params or {}, self.aux_dict)):
            for k, v in params.items():
                if k in target:
                    target[k][:] = v
                elif not allow_extra_params:
                    raise ValueError(f"copy_params_from: {k!r} is not an argument or an "
                                     f"auxiliary state of this executor")


__all__ = ["Executor"]
