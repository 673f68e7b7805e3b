"""``Module`` (MXNet's ``mx.mod.Module``): training and inference of a symbol through
one executor (``runtime.executor``), the API MXNet 1.x programs used before Gluon.

``bind`` makes the executor from the data and label shapes (gradients for the
parameters; for the data with ``inputs_need_grad``), ``init_params`` fills the
parameters (an initializer by name, or given arrays), ``init_optimizer`` makes an
optimizer and its updater, and ``forward``/``backward``/``update`` run one step;
``fit``, ``score`` and ``predict`` loop over a data iterator (``runtime.io``).

On several contexts (``context=[mx.cpu(0), mx.cpu(1)]``), as MXNet's data-parallel
executor group: one executor per context, each bound to its slice of the batch (split
along the batch axis, the 'N' of each input's DataDesc layout, by ``work_load_list``);
``forward``/``backward`` feed each its slice, the outputs are joined along the batch
axis of each output's ``__layout__`` attribute (``get_outputs(merge_multi_context=
False)`` gives the slices), ``get_params`` averages the copies.

The kvstore follows MXNet's rules: on one context a name ('local', 'device') or None
means no store and updates applied here; on several, a name makes that store, which
sums the contexts' gradients and runs the updates, and None updates each context's
copy with its own gradient (MXNet's ``_update_params`` without a store).  A ``KVStore``
object of type 'local' or 'device' holds the parameters and applies the updates
(``set_optimizer``): dense parameters come back with every update, row_sparse ones only
by row, through ``prepare(batch, sparse_row_id_fn)`` or ``kv.row_sparse_pull`` (MXNet's
sparse training).  ``eval_metric`` is an object with MXNet's metric interface (``update(labels,
preds)``, ``reset()``, ``get_name_value()``), such as ``runtime.metric``'s.
"""

import logging
import os

import numpy as np

from runtime import initializer as _init
from runtime import nd, optimizer as _optim
from runtime import kvstore as _kvs
from runtime.context import Context, current_context
from runtime.io import DataDesc
from runtime.module import _checkpoint
from runtime.module.base_module import BaseModule, _metric
from runtime.module.executor_group import DataParallelExecutorGroup
from runtime.optimizer.optimizer import load_states_file, save_states_file
from runtime.symbol import Symbol

_KVSTORES = (None, "local", "device")


class MissingParameterError(ValueError, RuntimeError):
    """A parameter that ``arg_params``/``aux_params`` lack while ``allow_missing`` is
    False.  MXNet's Module raises RuntimeError here; this is also a ValueError, what it
    is."""


def _descs(what, shapes):
    """[(name, shape)] from a list of DataDesc or (name, shape) pairs (tuples or lists,
    as MXNet's ``DataDesc.get_list`` takes them)."""
    if shapes is None:
        return []
    out = []
    for item in shapes:
        if isinstance(item, DataDesc) or (isinstance(item, (tuple, list)) and len(item) >= 2):
            out.append((item[0], tuple(item[1])))
        else:
            raise TypeError(f"bind: {what} must be DataDesc or (name, shape) pairs (got "
                            f"{item!r})")
    return out


def _batch_axis(layout):
    """MXNet's ``DataDesc.get_batch_axis``: the position of 'N' in ``layout`` (0 when the
    layout is unknown or has no 'N')."""
    return layout.find("N") if isinstance(layout, str) and "N" in layout else 0


def _split(batch, work_load):
    """MXNet's split of a batch of ``batch`` samples over the contexts in proportion to
    ``work_load`` (rounded; the last context takes what is left): one slice each."""
    total = sum(work_load)
    sizes = [int(round(w * batch / total)) for w in work_load]
    if sum(sizes) < batch:
        sizes[-1] += batch - sum(sizes)
    slices, end = [], 0
    for n in sizes:
        begin = min(end, batch)
        end = min(begin + n, batch)
        if begin >= end:
            raise ValueError(f"bind: a batch of {batch} cannot be split over "
                             f"{len(work_load)} contexts by work load {list(work_load)} "
                             "(a slice would be empty)")
        slices.append(slice(begin, end))
    return slices


def _part(array, axis, piece, ctx):
    """The samples ``piece`` (a slice) of ``array`` along ``axis``, on ``ctx``."""
    if piece.start == 0 and piece.stop == array.shape[axis] and array.context == ctx:
        return array
    return nd.slice_axis(array, axis=axis, begin=piece.start,
                         end=piece.stop).as_in_context(ctx)


def _join(parts, axis):
    """Per-context slices joined along ``axis`` on the first one's context (MXNet's
    ``_merge_multi_context``)."""
    if len(parts) == 1:
        return parts[0]
    ctx = parts[0].context
    return nd.concat(*[p.as_in_context(ctx) for p in parts], dim=axis)


def _share_params(ex, shared, params, aux):
    """Make executor ``ex`` read and write the parameter and auxiliary arrays of
    executor ``shared`` (their shapes must agree)."""
    for names, arrays, order, source in (
            (params, ex.arg_arrays, list(ex.arg_dict), shared.arg_dict),
            (aux, ex.aux_arrays, list(ex.aux_dict), shared.aux_dict)):
        for name in names:
            i = order.index(name)
            if arrays[i].shape != source[name].shape:
                raise ValueError(f"bind: parameter {name!r} has shape {arrays[i].shape} "
                                 f"here and {source[name].shape} in shared_module")
            arrays[i] = source[name]


class Module(BaseModule):
    """A symbol trained and run through an executor.

    Parameters
    ----------
    symbol : Symbol
    data_names, label_names : sequence of str
        Arguments fed from the data batches (default ``('data',)`` and
        ``('softmax_label',)``); label names absent from the symbol are ignored.
    context : Context or list of Contexts, optional
        Several contexts split each batch between them (module docstring).
    work_load_list : list of numbers, optional
        The share of the batch of each context (default: equal shares).
    fixed_param_names : sequence of str, optional
        Parameters that are not updated (no gradient).
    state_names : sequence of str, optional
        Arguments that are neither data nor parameters (an RNN's carried states): bound
        as zeros, without gradient, neither initialised nor updated, and set by
        :meth:`set_states` (MXNet's).
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        if not isinstance(symbol, Symbol):
            raise TypeError(f"Module: symbol must be a Symbol (got {type(symbol).__name__})")
        contexts = list(context) if isinstance(context, (list, tuple)) else \
            [context if context is not None else current_context()]
        if not contexts:
            raise ValueError("Module: context must hold at least one Context (got [])")
        for c in contexts:
            if not isinstance(c, Context):
                raise TypeError(f"Module: context must be a Context or a list of Contexts "
                                f"(got {c!r})")
        if len(set(contexts)) != len(contexts):
            raise ValueError(f"Module: context must not repeat a Context (got {context!r})")
        work_load = [1] * len(contexts) if work_load_list is None else list(work_load_list)
        if len(work_load) != len(contexts) or not all(
                isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0
                for w in work_load):
            raise ValueError(f"Module: work_load_list must hold one number > 0 per context "
                             f"({len(contexts)}) (got {work_load_list!r})")
        self._symbol = symbol
        self._contexts = contexts
        self._context = contexts[0]
        self._work_load = work_load
        self.logger = logger
        args = symbol.list_arguments()
        self.data_names = list(data_names)
        self.label_names = [n for n in (label_names or ()) if n in args]
        for n in self.data_names:
            if n not in args:
                raise ValueError(f"Module: data name {n!r} is not an argument of the symbol "
                                 f"({', '.join(args)})")
        self._state_names = list(state_names or ())
        for n in self._state_names:
            if n not in args:
                raise ValueError(f"Module: state name {n!r} is not an argument of the "
                                 f"symbol ({', '.join(args)})")
        inputs = set(self.data_names) | set(self.label_names) | set(self._state_names)
        self._param_names = [n for n in args if n not in inputs]
        self._aux_names = symbol.list_auxiliary_states()
        self._fixed = set(fixed_param_names or ())
        self.output_names = symbol.list_outputs()
        self._exec = None           # the first context's executor
        self._execs = []            # one per context
        self._slices = []
        self._batch_size = None
        self._grad_req = "write"
        self._loaded = None         # (arg_params, aux_params) of Module.load
        self._preload_states = None  # the .states file Module.load was asked to restore
        self._updater = None
        self._optimizer = None
        self._kvstore = None
        self._data_shapes = self._label_shapes = None
        self.binded = self.params_initialized = self.optimizer_initialized = False
        self.for_training = False
        self.inputs_need_grad = False

    # -- properties ----------------------------------------------------------------------
    @property
    def symbol(self):
        return self._symbol

    @property
    def data_shapes(self):
        return [DataDesc(n, s) for n, s in self._data_shapes]

    @property
    def label_shapes(self):
        return [DataDesc(n, s) for n, s in self._label_shapes]

    @property
    def output_shapes(self):
        if len(self._execs) == 1 and self._exec.outputs:
            return [(n, o.shape) for n, o in zip(self.output_names, self._exec.outputs)]
        return list(zip(self.output_names, self._out_shapes))

    @property
    def _exec_group(self):
        """MXNet's executor group, as MXNet's example programs reach into it: names and
        per-context lists of the bound executors' arrays."""
        self._check("_exec_group")
        return DataParallelExecutorGroup(self)

    # -- binding and parameters ------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Make the executors for these data and label shapes, one per context, each on
        its slice of the batch (the parameters keep their values across a rebind).

        ``shared_module`` (bucketing): a bound, initialised Module on the same contexts
        whose parameters this one uses, the same arrays, not copies; this module's
        parameters must all be among its."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            if not isinstance(shared_module, Module) or not shared_module.binded or \
                    not shared_module.params_initialized:
                raise ValueError("bind: shared_module must be a bound Module with its "
                                 f"parameters initialised (got {shared_module!r})")
            missing = [n for n in self._param_names + self._aux_names
                       if n not in shared_module._param_names + shared_module._aux_names]
            if missing or shared_module._contexts != self._contexts:
                raise ValueError(f"bind: shared_module must hold every parameter of this "
                                 f"module on the same contexts (missing {missing}, contexts "
                                 f"{shared_module._contexts} and {self._contexts})")
        data = _descs("data_shapes", data_shapes)
        labels = [d for d in _descs("label_shapes", label_shapes)
                  if d[0] in self.label_names]
        axes = {item[0]: _batch_axis(getattr(item, "layout", None))
                for item in list(data_shapes) + list(label_shapes or ())}
        names = [n for n, _ in data]
        if sorted(names) != sorted(self.data_names):
            raise ValueError(f"bind: data_shapes must name {self.data_names} (got {names})")
        reqs = {}
        for n in self._symbol.list_arguments():
            if n in self._param_names:
                reqs[n] = grad_req if for_training and n not in self._fixed else "null"
            elif n in self.data_names:
                reqs[n] = grad_req if inputs_need_grad else "null"
            else:
                reqs[n] = "null"
        # the inputs' dtypes, float32 unless a DataDesc says otherwise (MXNet's
        # executor group binds with them)
        types = {item[0]: getattr(item, "dtype", np.float32)
                 for item in list(data_shapes) + list(label_shapes or ())
                 if item[0] in names or item[0] in self.label_names}
        batch = data[0][1][axes[data[0][0]]]
        slices = _split(batch, self._work_load)
        execs = []
        for ctx, piece in zip(self._contexts, slices):
            shapes = {}
            for name, shape in data + labels:
                shape = list(shape)
                shape[axes[name]] = piece.stop - piece.start
                shapes[name] = tuple(shape)
            execs.append(self._symbol.simple_bind(ctx, grad_req=reqs, type_dict=types,
                                                  **shapes))
        if shared_module is not None:
            for ex, shared in zip(execs, shared_module._execs):
                _share_params(ex, shared, self._param_names, self._aux_names)
            self.params_initialized = True
        old = self._exec
        if old is not None and self.params_initialized and shared_module is None:
            for ex in execs:
                ex.copy_params_from({n: old.arg_dict[n] for n in self._param_names},
                                    old.aux_dict)
        self._execs, self._exec, self._slices = execs, execs[0], slices
        self._batch_size, self._axes, self._grad_req = batch, axes, grad_req
        self._out_axes = [_batch_axis(self._symbol[i].attr("__layout__"))
                          for i in range(len(self.output_names))]
        self._out_shapes = self._symbol.infer_shape(**dict(data + labels))[1]
        self._data_shapes, self._label_shapes = data, labels
        self.binded, self.for_training = True, for_training
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.inputs_need_grad = inputs_need_grad
        if self._loaded is not None and not self.params_initialized:
            self.init_params(None, *self._loaded)

    def reshape(self, data_shapes, label_shapes=None):
        """Bind again for new data and label shapes, keeping the parameters and the
        optimizer (MXNet's ``Module.reshape``)."""
        self._check("reshape")
        self.bind(data_shapes, label_shapes, for_training=self.for_training,
                  inputs_need_grad=self.inputs_need_grad, force_rebind=True,
                  grad_req=self._grad_req)

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Fill the parameters: from ``arg_params``/``aux_params`` where given, else by
        ``initializer`` (default ``Uniform(0.01)``) called with each name; every
        context's copy takes the first's values."""
        self._check("init_params")
        if self.params_initialized and not force_init:
            return
        init = _init.create(initializer if initializer is not None
                            else _init.Uniform(0.01), "init_params: initializer")
        tables = ((arg_params, self._param_names, self._exec.arg_dict),
                  (aux_params, self._aux_names, self._exec.aux_dict))
        for given, names, _ in tables:          # every check before any write
            if given is None:
                continue
            extra = [k for k in given if k not in names] if not allow_extra else []
            missing = [n for n in names if n not in given] if not allow_missing else []
            if missing:
                raise MissingParameterError(
                    f"init_params: parameter {missing[0]!r} is missing (set "
                    "allow_missing=True to initialise it)")
            if extra:
                raise ValueError(f"init_params: {extra[0]!r} is not a parameter of the "
                                 "module (set allow_extra=True to ignore it)")
        attrs = self._symbol.attr_dict()
        for given, names, target in tables:
            for name in names:
                if given is not None and name in given:
                    target[name][:] = given[name]
                else:
                    init(_init.InitDesc(name, attrs.get(name), init), target[name])
        for ex in self._execs[1:]:
            ex.copy_params_from({n: self._exec.arg_dict[n] for n in self._param_names},
                                self._exec.aux_dict)
        self.params_initialized = True

    def get_params(self):
        """(arg_params, aux_params): copies of the parameters by name (every row of a
        row_sparse parameter a kvstore holds is pulled first); on several contexts the
        average of the copies, as MXNet's."""
        self._check("get_params", params=True)
        if self._kvstore is not None:
            for name in self._param_names:
                weights = [ex.arg_dict[name] for ex in self._execs]
                if weights[0].stype == "row_sparse":
                    rows = nd.arange(weights[0].shape[0], dtype="int64")
                    self._kvstore.row_sparse_pull(name, out=weights, row_ids=[rows] * len(weights))
        return ({n: self._average("arg_dict", n) for n in self._param_names},
                {n: self._average("aux_dict", n) for n in self._aux_names})

    def _average(self, table, name):
        copies = [getattr(ex, table)[name] for ex in self._execs]
        if len(copies) == 1:
            return copies[0].copy()
        total = copies[0].copy()
        for c in copies[1:]:
            total += c.as_in_context(total.context)
        return total / len(copies)

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Make the optimizer (a name and its parameters, or an Optimizer) and its
        updater; ``rescale_grad`` defaults to 1 / batch size, as MXNet's."""
        self._check("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            return
        store = None
        if isinstance(kvstore, str) and kvstore in _KVSTORES and len(self._execs) > 1:
            kvstore = _kvs.create(kvstore)     # MXNet's store for several contexts
        if isinstance(kvstore, _kvs.KVStoreBase):
            if kvstore.type not in ("local", "device"):
                raise NotImplementedError(f"init_optimizer: a kvstore of type "
                                          f"{kvstore.type!r} is not supported by ndrt's "
                                          "Module (one process: 'local' or 'device'); "
                                          "train data-parallel with gluon.Trainer")
            store = kvstore
        elif kvstore not in _KVSTORES:
            raise NotImplementedError(f"init_optimizer: kvstore must be a KVStore or one of "
                                      f"{_KVSTORES} in ndrt's Module (got {kvstore!r})")
        # the updater's indices are the parameters' positions (their names with a store)
        idx2name = dict(enumerate(self._param_names))
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", 1.0 / self._batch_size)
            optimizer = _optim.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                      **params)
        elif not isinstance(optimizer, _optim.Optimizer):
            raise TypeError(f"init_optimizer: optimizer must be a name or an Optimizer "
                            f"(got {optimizer!r})")
        elif not optimizer.idx2name:
            # as MXNet: names for multipliers given by name; the weight decay multipliers
            # were fixed when the optimizer was made
            optimizer.idx2name = idx2name
        self._optimizer = optimizer
        self._updater = _optim.get_updater(optimizer)
        self._kvstore = store
        self._update_index = {name: i for i, name in enumerate(self._param_names)}
        if store is not None:
            # MXNet's update on the store: it holds the parameters and runs the optimizer
            store.set_optimizer(optimizer)
            for name in self._param_names:
                store.init(name, self._exec.arg_dict[name])
        self.optimizer_initialized = True
        if self._preload_states is not None:
            self.load_optimizer_states(self._preload_states)
            self._preload_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, updater (its states) and kvstore, with its
        parameters' update indices (bucketing: every bucket's module updates the shared
        parameters as one)."""
        self._check("borrow_optimizer", params=True)
        if not shared_module.optimizer_initialized:
            raise RuntimeError("borrow_optimizer: shared_module has no optimizer: call its "
                               "init_optimizer() first")
        self._optimizer = shared_module._optimizer
        self._updater = shared_module._updater
        self._kvstore = shared_module._kvstore
        self._update_index = shared_module._update_index
        self.optimizer_initialized = True

    # -- steps -------------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Copy the batch's data and labels in (each context its slice) and run the
        executors' forward; a batch whose data shapes differ from the bound ones binds the
        module again for them first (:meth:`reshape`)."""
        self._check("forward", params=True)
        if is_train is None:
            is_train = self.for_training
        shapes = [tuple(a.shape) for a in data_batch.data]
        if shapes != [tuple(s) for _, s in self._data_shapes]:
            # a batch of another shape (an evaluation set in batches of 1, a short last
            # batch): bind again for it under the module's own input names, as MXNet's
            # Module does
            labels = None
            if self.label_names and data_batch.label:
                labels = [(n, tuple(a.shape))
                          for n, a in zip(self.label_names, data_batch.label)]
            self.reshape(list(zip(self.data_names, shapes)), labels)
        feed = dict(zip(self.data_names, data_batch.data))
        if self.label_names and data_batch.label is not None:
            feed.update(zip(self.label_names, data_batch.label))
        if len(self._execs) == 1:
            self._exec.forward(is_train=is_train, **feed)
            return
        for k, v in feed.items():          # all checked before any context runs
            if v.shape[self._axes[k]] != self._batch_size:
                raise ValueError(f"forward: {k!r} must hold the bound batch of "
                                 f"{self._batch_size} along axis {self._axes[k]} (got shape "
                                 f"{v.shape!r}); call reshape() for another batch size")
        for ex, piece, ctx in zip(self._execs, self._slices, self._contexts):
            ex.forward(is_train=is_train, **{k: _part(v, self._axes[k], piece, ctx)
                                             for k, v in feed.items()})

    def backward(self, out_grads=None):
        self._check("backward", params=True)
        if len(self._execs) == 1 or out_grads is None:
            for ex in self._execs:
                ex.backward(out_grads)
            return
        if isinstance(out_grads, nd.NDArray):
            out_grads = [out_grads]
        for ex, piece, ctx in zip(self._execs, self._slices, self._contexts):
            ex.backward([_part(g, axis, piece, ctx)
                         for g, axis in zip(out_grads, self._out_axes)])

    def update(self):
        """Apply the optimizer to every parameter with a gradient: here, or on the
        kvstore (push the gradient; a dense parameter is pulled back, a row_sparse one
        waits for a pull by row)."""
        self._check("update", params=True, optimizer=True)
        n = len(self._execs)
        for name in self._param_names:
            i = self._update_index[name]
            grads = [ex.grad_dict[name] for ex in self._execs]
            args = [ex.arg_dict[name] for ex in self._execs]
            if grads[0] is None:
                continue
            if self._kvstore is None:
                # each context's copy with its own gradient (MXNet's indices i * n + k)
                for k, (g, w) in enumerate(zip(grads, args)):
                    self._updater(i * n + k, g, w)
            elif grads[0].stype == "default" and args[0].stype == "default":
                self._kvstore.pushpull(name, grads if n > 1 else grads[0],
                                       out=args if n > 1 else args[0], priority=-i)
            else:
                self._kvstore.push(name, grads if n > 1 else grads[0], priority=-i)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Get the parameters a batch needs ready before ``forward``: with a kvstore,
        the rows ``sparse_row_id_fn(data_batch)`` names (``{param name: row ids}``) of
        each row_sparse parameter are pulled from it.  Without a kvstore every parameter
        is always here and there is nothing to pull (MXNet warns, as here)."""
        if sparse_row_id_fn is None:
            return
        self._check("prepare", params=True, optimizer=True)
        if self._kvstore is None:
            self.logger.warning("prepare: the parameters are not held by a kvstore; "
                                "sparse_row_id_fn has nothing to pull")
            return
        for name, row_ids in sparse_row_id_fn(data_batch).items():
            if name not in self._param_names:
                raise ValueError(f"prepare: sparse_row_id_fn names {name!r}, which is not "
                                 f"a parameter ({', '.join(self._param_names)})")
            outs = [ex.arg_dict[name] for ex in self._execs]
            self._kvstore.row_sparse_pull(name, out=outs if len(outs) > 1 else outs[0],
                                          row_ids=[row_ids] * len(outs) if len(outs) > 1
                                          else row_ids,
                                          priority=-self._param_names.index(name))

    def get_states(self, merge_multi_context=True):
        """The arrays of the states (``state_names``), in :meth:`get_outputs`'s forms."""
        self._check("get_states", params=True)
        per_state = [[ex.arg_dict[n] for ex in self._execs] for n in self._state_names]
        if not merge_multi_context:
            return per_state
        return [_join(parts, 0) for parts in per_state]

    def set_states(self, states=None, value=None):
        """Set the states (``state_names``) from ``states`` (per state, one array for
        every context or a list of one per context, as ``get_outputs(
        merge_multi_context=False)`` gives them) or to the number ``value``; exactly one
        of the two."""
        self._check("set_states", params=True)
        if (states is None) == (value is None):
            raise ValueError("set_states: give exactly one of states and value (got "
                             f"states={states!r}, value={value!r})")
        targets = [[ex.arg_dict[n] for ex in self._execs] for n in self._state_names]
        if value is not None:
            for per_context in targets:
                for arr in per_context:
                    arr[:] = value
            return
        if len(states) != len(targets):
            raise ValueError(f"set_states: states must hold one entry per state "
                             f"({len(targets)}: {', '.join(self._state_names)}) (got "
                             f"{len(states)})")
        for name, given, per_context in zip(self._state_names, states, targets):
            given = given if isinstance(given, (list, tuple)) else [given] * len(per_context)
            if len(given) != len(per_context):
                raise ValueError(f"set_states: state {name!r} must hold one array per "
                                 f"context ({len(per_context)}) (got {len(given)})")
            for src, dst in zip(given, per_context):
                if src.shape != dst.shape:
                    raise ValueError(f"set_states: state {name!r} must have shape "
                                     f"{dst.shape!r} (got {src.shape!r})")
            for src, dst in zip(given, per_context):
                dst[:] = src

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward: each joined over the contexts along its batch
        axis, or with ``merge_multi_context=False`` a list of the contexts' slices per
        output (MXNet's forms)."""
        self._check("get_outputs")
        per_output = [list(parts) for parts in zip(*[ex.outputs for ex in self._execs])]
        if not merge_multi_context:
            return per_output
        return [_join(parts, axis) for parts, axis in zip(per_output, self._out_axes)]

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs, in :meth:`get_outputs`'s forms."""
        self._check("get_input_grads")
        if not self.inputs_need_grad:
            raise RuntimeError("get_input_grads: bind with inputs_need_grad=True")
        per_input = [[ex.grad_dict[n] for ex in self._execs] for n in self.data_names]
        if not merge_multi_context:
            return per_input
        return [_join(parts, self._axes[n]) for parts, n in zip(per_input, self.data_names)]

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        _metric(eval_metric).update(labels, self.get_outputs())

    # -- files -------------------------------------------------------------------------------
    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False,
                        remove_amp_cast=True):
        """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` (MXNet's files), and
        with ``save_optimizer_states`` the optimizer's states to ``prefix-%04d.states``."""
        if save_optimizer_states:
            self._check("save_checkpoint", params=True, optimizer=True)
        arg, aux = self.get_params()
        _checkpoint.save_checkpoint(prefix, epoch, self._symbol, arg, aux)
        if save_optimizer_states:
            states = f"{prefix}-{int(epoch):04d}.states"
            self.save_optimizer_states(states)
            logging.info('Saved optimizer state to "%s"', states)

    def save_optimizer_states(self, fname):
        """Write the optimizer's states (the updater's, pickled) to ``fname``, through a
        temporary file renamed into place."""
        self._check("save_optimizer_states", params=True, optimizer=True)
        if self._kvstore is not None:
            self._kvstore.save_optimizer_states(fname)
        else:
            save_states_file(self._updater, fname)

    def load_optimizer_states(self, fname):
        """Restore the states :meth:`save_optimizer_states` wrote."""
        self._check("load_optimizer_states", params=True, optimizer=True)
        if self._kvstore is not None:
            self._kvstore.load_optimizer_states(fname)
        else:
            load_states_file(self._updater, fname)

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module of the checkpoint ``prefix``/``epoch``; ``bind`` puts the loaded
        parameters in (``kwargs`` go to the constructor); with ``load_optimizer_states``
        ``init_optimizer`` restores ``prefix-%04d.states``."""
        states = f"{prefix}-{int(epoch):04d}.states" if load_optimizer_states else None
        if states is not None and not os.path.isfile(states):
            raise FileNotFoundError(f"load: load_optimizer_states needs {states!r}, which "
                                    "does not exist")
        sym, arg, aux = _checkpoint.load_checkpoint(prefix, epoch)
        mod = Module(sym, **kwargs)
        mod._loaded = (arg, aux)
        mod._preload_states = states
        return mod


__all__ = ["Module"]
