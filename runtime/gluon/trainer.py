"""gluon's ``Trainer``: applies an optimizer to a set of parameters.

Parameters are taken duck-typed, as Gluon's: ``params`` is a dict name -> Parameter (what
``collect_params()`` returns; anything with ``.values()``) or a list of Parameters, a
Parameter having ``.name``, ``.grad_req`` ('write', 'add' or 'null': skipped),
``.data()`` and ``.grad()`` (NDArrays; the gradient dense or row_sparse), and optionally
``.lr_mult`` and ``.wd_mult`` (1.0 when absent).  A :class:`Parameter` is read through
its internal accessors (a row_sparse one's ``data()`` refuses, as Gluon's) and learns
its Trainer (``_set_trainer``): a sparse parameter takes one Trainer only, and a
parameter's ``set_data`` (a load) drops the Trainer's store when the store runs the
updates, so that the next step starts from the new values (Gluon's rules).

A kvstore (gluon's rules, :meth:`Trainer._init_kvstore`) sums the gradients of the copies
of parameters that live on several contexts (``local``/``device``) and of the ranks of an
MPI job (``dist_sync``): none is made for one context in one process unless a parameter's
stype is row_sparse (its rows then live in the store, which runs the updates).  Where the update
runs follows gluon: in the store (``update_on_kvstore``: push the gradients, the store's
optimizer updates its copy of the weight, pull the weight into every copy) or in the
Trainer (pushpull the gradients, update the first copy, copy it to the others).  Before
the first update every parameter takes rank 0's value (``broadcast``), deferred ones
when their shape becomes known.
"""

import math
import os
import pickle
import weakref

import numpy as np

from runtime import _files, autograd
from runtime import kvstore as kvs
from runtime.gluon import parameter as _parameter
from runtime._ndarray import NDArray
from runtime.ops.optimizer_op import check_lr, check_lrs
from runtime.optimizer.optimizer import SGD, AdaGrad, Adam, Optimizer, create

__all__ = ["Trainer", "StaleGradientError"]


class StaleGradientError(RuntimeError, UserWarning):
    """A parameter's gradient was not written by backward since the last step.  gluon
    raises UserWarning here (as an exception); this is also a RuntimeError, what it is."""


class _UpdateOnKVStoreError(RuntimeError, AssertionError):
    """``update()``/``allreduce_grads()`` while the store runs the updates.  gluon asserts
    here (AssertionError); this is also a RuntimeError, what it is."""


class Trainer:
    """Applies ``optimizer`` to ``params`` (gluon's ``Trainer``).

    Parameters
    ----------
    params : dict name -> Parameter, or list of Parameters
    optimizer : str or Optimizer
        A name for :func:`runtime.optimizer.create` ('sgd', 'adam', 'adagrad'), or an
        optimizer (then ``optimizer_params`` must be None).
    optimizer_params : dict, optional
        Keyword arguments of the optimizer made from a name (``learning_rate``, ``wd``,
        ``momentum`` ...).
    kvstore : str, KVStore or None
        'device' (default), 'local', 'dist_sync', 'dist_device_sync', a store, or None.
    compression_params : dict, optional
        The store's gradient compression (``{'type': '2bit', 'threshold': 0.5}``).
    update_on_kvstore : bool or None
        Whether the store runs the updates; None: gluon's choice (module docstring).
        ndrt also allows False on a dist store with row_sparse gradients (it sums them
        with an Allgatherv), where gluon refuses it.
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if hasattr(params, "values") and callable(params.values):
            params = list(params.values())
        elif isinstance(params, (list, tuple)):
            params = list(params)
        else:
            raise TypeError(f"Trainer: params must be a dict of Parameters (collect_params()) "
                            f"or a list of Parameters (got {type(params).__name__})")
        seen = set()
        for i, p in enumerate(params):
            missing = [m for m in ("name", "grad_req", "data", "grad") if not hasattr(p, m)]
            if missing:
                raise TypeError(f"Trainer: params[{i}] must be a Parameter with name, "
                                f"grad_req, data() and grad() (got {type(p).__name__} "
                                f"without {', '.join(missing)})")
            if p.grad_req not in ("write", "add", "null"):
                raise ValueError(f"Trainer: grad_req of parameter {p.name!r} must be one of "
                                 f"write, add, null (got {p.grad_req!r})")
            if p.name in seen:
                raise ValueError(f"Trainer: parameter names must be unique (got {p.name!r} "
                                 "twice)")
            seen.add(p.name)
        self._params = params
        if isinstance(optimizer, Optimizer):
            if optimizer_params:
                raise ValueError("Trainer: optimizer_params must be None when optimizer is "
                                 f"an Optimizer instance (got {optimizer_params!r})")
            self._optimizer = optimizer
        elif isinstance(optimizer, str):
            self._optimizer = create(optimizer, **dict(optimizer_params or {}))
        else:
            raise TypeError(f"Trainer: optimizer must be a name or an Optimizer (got "
                            f"{type(optimizer).__name__})")
        self._optimizer.param_dict = {i: p for i, p in enumerate(params)}
        self._scale = self._optimizer.rescale_grad
        self._states = {}
        # index -> (shape, dtype, context) of the weight that a state made by
        # _init_states was made for, until its first update checks it still fits
        self._early = {}
        self._init_states()
        # index -> (the grad's chunk, its version) at the last update, or when the Trainer
        # was made: a write bumps the version, a backward may give it a new chunk (a
        # row_sparse grad's storage; a dense one's planned buffer or rule output, taken
        # instead of copied).  The chunk is remembered by a weak reference: holding it
        # would keep backward from handing .grad new memory.  Seeding it here makes a
        # step before any backward stale, as gluon's fresh-gradient flag does.
        self._seen = {}
        # (operator names and attributes but the learning rates, the input arrays) of
        # the last step whose updates passed _check_plans
        self._checked = None
        # the last step's updates, to run again while nothing they depend on changed
        # (see _replay)
        self._memo = None
        for i, _, grad in self._initialised():
            self._seen[i] = _seen_mark(grad)
        self._init_kv_config(kvstore, compression_params, update_on_kvstore)
        _claim(params, self)

    def _initialised(self):
        """(index, weight, grad) of each parameter that has its arrays (deferred ones do
        not yet) and takes updates (grad_req not 'null')."""
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            try:
                weight, grad = _weight(p), _grad(p)
            except RuntimeError:          # not initialised yet (deferred)
                continue
            if isinstance(weight, NDArray) and isinstance(grad, NDArray):
                yield i, weight, grad

    def _init_states(self):
        """The optimizer's state of every parameter already initialised (the others get
        theirs at their first update).  Made here, before any forward or backward, the
        states take memory beside the model's rather than blocks that the first
        backward frees (which the next step would then ask the pool's upstream for
        again): training allocates nothing upstream after its first step.  The states
        of SGD, Adam and AdaGrad are zeros of the weight's shape, dtype and context, so
        making them early changes no update; another optimizer's create_state may read
        the weight's values, and runs at the first update, as in gluon."""
        if type(self._optimizer).create_state not in (SGD.create_state, Adam.create_state,
                                                      AdaGrad.create_state):
            return
        for i, weight, _ in self._initialised():
            if i not in self._states:
                self._states[i] = self._optimizer.create_state_multi_precision(i, weight)
                self._early[i] = (weight.shape, weight.dtype, weight.context)

    @property
    def optimizer(self):
        return self._optimizer

    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    @property
    def _params_to_init(self):
        """Gluon's list of the parameters a step still has to set up: here those whose
        shape is still deferred (a step needs their gradients, so it finds none)."""
        return [p for p in self._params if getattr(p, "_data", None) is None]

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate."""
        self._optimizer.set_learning_rate(lr)

    def step(self, batch_size, ignore_stale_grad=False):
        """One update of every parameter whose grad_req is not 'null', from gradients
        that ``backward`` computed for a batch of ``batch_size`` samples: the gradients
        are rescaled by 1 / batch_size (times the optimizer's own rescale_grad).  With a
        kvstore the gradients are summed first (over the contexts and the ranks).

        A gradient not written since the last step is stale: StaleGradientError (a
        RuntimeError and, as gluon raises, a UserWarning) in gluon's words, naming the
        parameter, or with ``ignore_stale_grad=True`` that parameter is skipped (as
        gluon)."""
        self._rescale(batch_size)
        if self._kv_prepare():
            if self._update_on_kvstore:
                self._update_in_store(batch_size, ignore_stale_grad)
                return
            self._allreduce_grads()
            self._update(batch_size, ignore_stale_grad)
            self._sync_copies()
            return
        self._update(batch_size, ignore_stale_grad)

    def allreduce_grads(self):
        """Sum the gradients over the contexts and the ranks, in place (gluon's API; with
        no kvstore, nothing to do).  Refused when the store runs the updates."""
        if self._kv_prepare():
            if self._update_on_kvstore:
                raise _UpdateOnKVStoreError(
                    "allreduce_grads() when parameters are updated on kvstore is not "
                    "supported. Try setting `update_on_kvstore` to False when creating "
                    "trainer.")
            self._allreduce_grads()

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of :meth:`step` (gluon's ``Trainer.update``), after
        :meth:`allreduce_grads`.  Refused when the store runs the updates."""
        self._rescale(batch_size)
        if self._kv_prepare():
            if self._update_on_kvstore:
                raise _UpdateOnKVStoreError(
                    "update() when parameters are updated on kvstore is not supported. "
                    "Try setting `update_on_kvstore` to False when creating trainer.")
            self._update(batch_size, ignore_stale_grad)
            self._sync_copies()
            return
        self._update(batch_size, ignore_stale_grad)

    def _update(self, batch_size, ignore_stale_grad=False):
        """Apply the optimizer to every parameter's (first) copy.

        All or nothing: every parameter's update is checked (batch_size, stale
        gradients, the update operators' attributes, shapes, dtypes and storage types)
        before any weight, optimizer state, update count or rescale_grad changes, so a
        refused step leaves everything as it was.  An optimizer that overrides
        ``update`` itself, and a multi-precision update, cannot be checked ahead: their
        weights and states are copied first and put back if one of the updates raises."""
        rescale = self._rescale(batch_size)
        if self._memo is not None and self._replay(rescale):
            return
        self._memo = None
        work = []
        seen = self._seen
        for i, p in enumerate(self._params):
            if p.grad_req == "null":
                continue
            weight, grad = _weight(p), _grad(p)
            if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
                raise TypeError(f"Trainer.step: parameter {p.name!r} must give NDArrays "
                                f"from data() and grad() (got {type(weight).__name__}, "
                                f"{type(grad).__name__})")
            last = seen.get(i)
            if _unchanged(last, grad):
                if not ignore_stale_grad:
                    raise _stale(p, grad)
                continue
            work.append((i, weight, grad))
        opt = self._optimizer
        made = {}           # states made by this step, kept only if it succeeds
        for i, weight, _ in work:
            early = self._early.get(i)
            if i not in self._states or (early is not None and early != (
                    weight.shape, weight.dtype, weight.context)):
                made[i] = opt.create_state_multi_precision(i, weight)   # (re-made: cast, reinit)
        states = [made[i] if i in made else self._states[i] for i, _, _ in work]
        before = (opt.rescale_grad, dict(opt._index_update_count), opt.num_update)
        opt.rescale_grad = rescale
        try:
            # a multi-precision weight is planned only in an aggregated call (its
            # multi_mp_ operator); otherwise its update cannot be checked ahead
            if type(opt).update is Optimizer.update and all(
                    not opt._master(w) or (opt.aggregate_num > 1 and _aggregatable(opt, w, g, s))
                    for (_, w, g), s in zip(work, states)):
                calls = _calls(opt, work, states)
                plans = _plans(opt, calls)
                self._check_plans(opt, plans)
                _run(opt, plans)
            else:
                calls = None
                _update_restoring(opt, work, states)
        except BaseException:
            opt.rescale_grad, opt._index_update_count, opt.num_update = before
            raise
        self._states.update(made)
        for i, weight, grad in work:
            self._early.pop(i, None)
            seen[i] = _seen_mark(grad)
        if calls is not None and len(work) == sum(p.grad_req != "null" for p in self._params):
            self._memo = self._memo_of(opt, calls)

    def _memo_of(self, opt, calls):
        """What :meth:`_replay` needs to run ``calls`` (the step's updates, every
        parameter's, as :func:`_calls` grouped them) again; None where it cannot tell
        that nothing they depend on changed (a parameter without the Parameter class's
        bookkeeping)."""
        if not all(hasattr(p, "_grad_req") and hasattr(p, "_arrays") for p in self._params):
            return None
        entries = [(i, w, g, self._states.get(i)) for _, part in calls
                   for i, w, g, _ in part]
        return (_parameter._generation, opt, opt.aggregate_num, opt.multi_precision,
                tuple(p._grad_req for p in self._params), entries, calls)

    def _replay(self, rescale):
        """Run the last step's updates again (the same parameters, weights, gradients,
        states and grouping, the operators' attributes planned anew), if nothing they
        depend on changed: no parameter's arrays replaced (``parameter._generation``),
        the same optimizer, aggregation and grad_reqs, every weight's gradient the same
        array and written since the last step, every state the Trainer's.  False (and
        nothing done) otherwise: :meth:`_update` then takes its full path, which raises or
        skips what it must.  The same result as that path, without gathering, grouping
        and checking every parameter again (docs/kvstore.md, "gluon's Trainer")."""
        generation, opt, aggregate, mp, reqs, entries, calls = self._memo
        if (generation != _parameter._generation or opt is not self._optimizer
                or aggregate != opt.aggregate_num or mp != opt.multi_precision
                or reqs != tuple(p._grad_req for p in self._params)):
            return False
        seen, states = self._seen, self._states
        for i, weight, grad, state in entries:
            last = seen[i]
            if weight.grad is not grad or states.get(i) is not state or (
                    last[0]() is grad.chunk and last[1] == grad.version):
                return False
        before = (opt.rescale_grad, dict(opt._index_update_count), opt.num_update)
        opt.rescale_grad = rescale
        try:
            plans = _plans(opt, calls)
            self._check_plans(opt, plans)
            _run(opt, plans)
        except BaseException:
            opt.rescale_grad, opt._index_update_count, opt.num_update = before
            raise
        for i, _, grad, _ in entries:
            seen[i] = _seen_mark(grad)
        return True

    def _check_plans(self, opt, plans):
        """Raise what one of ``plans`` would raise, before any runs.  Dense arrays whose
        shape, dtype and context cannot change while they are the same objects: when a
        step's calls take the same arrays and attributes as the last checked step's
        (the learning rates aside, checked at every step), that check holds, and only
        the learning rates are checked again."""
        if all(x.stype == "default" for _, (_, inputs, _) in plans for x in inputs):
            key = [(name, {k: v for k, v in attrs.items() if k not in ("lr", "lrs")})
                   for _, (name, _, attrs) in plans]
            last = self._checked
            if last is not None and last[0] == key and len(last[1]) == len(plans) and all(
                    len(a) == len(b) and all(x is y for x, y in zip(a, b))
                    for a, (_, (_, b, _)) in zip(last[1], plans)):
                for _, (name, _, attrs) in plans:
                    if "lrs" in attrs:
                        check_lrs(name, attrs["lrs"], attrs["num_weights"])
                    else:
                        check_lr(name, attrs)
                return
        else:
            key = None
        self._checked = None
        for _, plan in plans:
            opt._check_plan(*plan)
        if key is not None:
            self._checked = (key, [inputs for _, (_, inputs, _) in plans])

    def _rescale(self, batch_size):
        """The optimizer's rescale_grad for a step over ``batch_size`` samples."""
        if isinstance(batch_size, (bool, np.bool_)) or not isinstance(
                batch_size, (int, float, np.integer, np.floating)):
            raise TypeError(f"Trainer.step: batch_size must be a number (got "
                            f"{batch_size!r})")
        try:
            b = float(batch_size)
        except OverflowError:
            b = math.inf
        if not (math.isfinite(b) and b > 0):
            raise ValueError(f"Trainer.step: batch_size must be a finite number > 0 (got "
                             f"{batch_size!r})")
        rescale = self._scale / b
        if not math.isfinite(rescale):
            raise ValueError(f"Trainer.step: batch_size must leave rescale_grad / "
                             f"batch_size finite (got {batch_size!r}: {self._scale!r} / "
                             f"{batch_size!r} overflows)")
        return rescale


    # -- the kvstore ---------------------------------------------------------------------
    def _init_kv_config(self, kvstore, compression_params, update_on_kvstore):
        if not (kvstore is None or isinstance(kvstore, (str, kvs.KVStoreBase))):
            raise TypeError(f"Trainer: kvstore must be a str, a KVStore or None (got "
                            f"{type(kvstore).__name__})")
        if update_on_kvstore not in (None, True, False):
            raise ValueError(f"Trainer: update_on_kvstore must be None, True or False (got "
                             f"{update_on_kvstore!r})")
        if compression_params is not None and not isinstance(compression_params, dict):
            raise TypeError(f"Trainer: compression_params must be a dict (got "
                            f"{type(compression_params).__name__})")
        self._kv_config = (kvstore, compression_params, update_on_kvstore)
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = False
        self._distributed = False
        self._kv_keys = set()          # indices whose value the store has initialised

    def _init_kvstore(self):
        """Make the kvstore by gluon's rules: none for one context in one process (a
        str type); a store given is used; ``update_on_kvstore`` defaults to True
        (MXNET_UPDATE_ON_KVSTORE=0 turns the default off) where the store is capable,
        except a 'local' store with a parameter over 16 Mi elements, and except a
        non-dist store with row_sparse gradients (then False, faster in one process).
        A parameter whose stype is row_sparse makes a store of a str type on any number
        of contexts, which runs the updates (False is refused with ValueError)."""
        kvstore, compression, update_on = self._kv_config
        contexts = max((_n_ctx(p) for p in self._params), default=1)
        sparse_weight = any(getattr(p, "stype", "default") != "default"
                            for p in self._params)
        if sparse_weight and update_on is False:
            raise ValueError("Trainer: update_on_kvstore must not be False when a "
                             "parameter's stype is row_sparse (got False): the store keeps "
                             "its rows and runs their updates (gluon's rule)")
        sparse_grad = any(getattr(p, "grad_stype", "default") != "default" and
                          p.grad_req != "null" for p in self._params)
        default_on = os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1") not in ("0", "")
        kv = None
        if isinstance(kvstore, kvs.KVStoreBase):
            kv = kvstore
        elif isinstance(kvstore, str) and (contexts > 1 or "dist" in kvstore
                                           or sparse_weight):
            kv = kvs.create(kvstore)
            if kvstore == "local":
                biggest = max((int(np.prod(p.shape)) for p in self._params
                               if getattr(p, "shape", None) is not None), default=0)
                if biggest > 16 * 1024 * 1024:
                    default_on = False
        if kv is not None:
            self._distributed = "dist" in kv.type
            if sparse_weight:
                default_on = True
            elif sparse_grad and not self._distributed:
                default_on = False
            on = default_on if update_on is None else update_on
            if on and not kv.is_capable(kvs.KVStoreBase.OPTIMIZER):
                raise ValueError(f"Trainer: update_on_kvstore=True needs a kvstore capable "
                                 f"of running the optimizer ({type(kv).__name__} is not)")
            if compression:
                kv.set_gradient_compression(compression)
            if on:
                kv.set_optimizer(self._optimizer)
            self._update_on_kvstore = bool(on)
        self._kvstore = kv
        self._kv_initialized = True

    def _reset_kvstore(self):
        """Drop the store when it runs the updates (it is made again, from the
        parameters' values, at the next step): a parameter's new values (``set_data``,
        a load) would otherwise be overwritten by the store's.  A distributed store
        cannot be dropped (gluon's rule)."""
        if not (self._kv_initialized and self._kvstore is not None and self._update_on_kvstore):
            return
        if self._distributed:
            raise RuntimeError("Trainer: cannot reset a distributed kvstore, which runs the "
                               "updates: set the parameters' values before the first step")
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = False
        self._kv_keys = set()

    def _kv_prepare(self):
        """Make the store on first use and give it the parameters initialised since;
        returns whether there is a store."""
        if not self._kv_initialized:
            self._init_kvstore()
        kv = self._kvstore
        if kv is None:
            return False
        for i, p in enumerate(self._params):
            if i in self._kv_keys or not _has_data(p):
                continue
            arrays = _weights(p)
            if p.stype == "default":
                kv.broadcast(i, arrays[0], arrays)        # rank 0's value everywhere
            else:
                kv.init(i, arrays[0])
            self._kv_keys.add(i)
        return True

    def _live(self):
        """(index, Parameter) of the parameters that take updates and have arrays."""
        return [(i, p) for i, p in enumerate(self._params)
                if p.grad_req != "null" and i in self._kv_keys]

    def _allreduce_grads(self):
        """pushpull every gradient in place, in one call: the store packs the dense ones
        in its buckets, or, where they are small, sends them with the first row_sparse
        gradient's rows (one collective a step)."""
        live = self._live()
        if live:
            self._kvstore.pushpull([i for i, _ in live], [p.list_grad() for _, p in live])

    def _update_in_store(self, batch_size, ignore_stale_grad):
        """Push the gradients (the store's optimizer updates its weights) and pull the
        weights into every copy."""
        kv = self._kvstore
        self._optimizer.rescale_grad = self._scale / batch_size
        for i, p in self._live():
            grads = p.list_grad()
            last = self._seen.get(i)
            g = grads[0]
            if _unchanged(last, g):
                if not ignore_stale_grad:
                    raise _stale(p, g)
                continue
            kv.push(i, grads)
            kv.pull(i, _weights(p), ignore_sparse=False)
            self._seen[i] = _seen_mark(g)

    def _sync_copies(self):
        """Write the updated copy of each parameter into its other copies."""
        with autograd.pause():
            for _, p in self._live():
                arrays = _weights(p)
                if len(arrays) > 1:
                    src = _weight(p)
                    for a in arrays:
                        if a is src:
                            continue
                        if a.stype == "default":
                            a.copyto_dense(src)
                        else:       # a row_sparse weight takes a copy of the storage
                            a[:] = src

    @property
    def kvstore(self):
        """The kvstore in use (None: no store), made at the first step."""
        return self._kvstore

    # -- states on disk ------------------------------------------------------------------
    def save_states(self, fname):
        """Write the optimizer and its per-parameter states to ``fname`` (gluon's
        ``save_states``: a pickle of ``(states, optimizer)``, written beside ``fname`` and
        renamed over it once complete).  When the store runs the updates, the store
        writes its own states."""
        if self._kv_prepare() and self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return
        # (an optimizer pickles without its param_dict: the parameters stay the caller's)
        data = pickle.dumps((self._states, self._optimizer))
        _files.write_bytes(fname, data)

    def load_states(self, fname):
        """Restore the optimizer and the states that :meth:`save_states` wrote (gluon's
        ``load_states``); the optimizer then applies to this Trainer's parameters.  A
        file that does not hold them raises ValueError and changes nothing."""
        if self._kv_prepare() and self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                data = f.read()
            try:
                states, opt = pickle.loads(data)
            except Exception as e:
                raise ValueError(f"Trainer.load_states: {fname!r} must hold the states that "
                                 f"save_states wrote ({type(e).__name__}: {e})") from None
            if not (isinstance(states, dict) and isinstance(opt, Optimizer)):
                raise ValueError(f"Trainer.load_states: {fname!r} must hold (states, "
                                 f"optimizer) as save_states writes them (got "
                                 f"({type(states).__name__}, {type(opt).__name__}))")
            self._states, self._optimizer = states, opt
            self._early = {}
        self._optimizer.param_dict = {i: p for i, p in enumerate(self._params)}


def _calls(opt, work, states):
    """The updates of ``work`` with their ``states`` as (aggregated, [(index, weight,
    grad, state)...]): the dense weights with dense states, by dtype and context in
    groups of ``opt.aggregate_num``, one aggregated call each (MXNet's Updater groups
    them so) where the optimizer has one; the others one call each."""
    single, groups = [], {}
    size = opt.aggregate_num
    for (i, weight, grad), state in zip(work, states):
        if size > 1 and _aggregatable(opt, weight, grad, state):
            groups.setdefault((weight.dtype, weight.context), []).append(
                (i, weight, grad, state))
        else:
            single.append((i, weight, grad, state))
    calls = [(False, [one]) for one in single]
    for group in groups.values():
        calls += [(True, group[lo:lo + size]) for lo in range(0, len(group), size)]
    return calls


def _plans(opt, calls):
    """``calls`` (see :func:`_calls`) as (aggregated, (operator name, inputs,
    attributes)), counting each update."""
    plans = []
    for multi, part in calls:
        for i, _, _, _ in part:
            opt._update_count(i)
        if multi:
            plans.append((True, opt._plan_multi(*[list(x) for x in zip(*part)])))
        else:
            plans.append((False, opt._plan(*part[0])))
    return plans


def _run(opt, plans):
    for multi, plan in plans:
        if multi:
            opt._run_multi(*plan)
        else:
            opt._run(*plan)


def _update_restoring(opt, work, states):
    """``opt.update_multi_precision`` of every (index, weight, grad) of ``work`` with its state; if one
    raises, the weights and the NDArrays of the states are put back as they were."""
    kept = []

    def keep(x):
        if isinstance(x, NDArray):
            kept.append((x, x.copy()))
        elif isinstance(x, (tuple, list)):
            for y in x:
                keep(y)
    for (_, weight, _), state in zip(work, states):
        keep(weight)
        keep(state)
    try:
        for (i, weight, grad), state in zip(work, states):
            opt.update_multi_precision(i, weight, grad, state)
    except BaseException:
        for x, copy in kept:
            copy.copyto(x)
        raise


def _aggregatable(opt, weight, grad, state):
    """Whether the update of ``weight`` may join an aggregated call: dense weight,
    gradient and states (a multi-precision state: its float32 master copy and the
    state made for it)."""
    if weight.stype != "default" or grad.stype != "default":
        return False
    if opt._master(weight):
        master, state = state
        if not (isinstance(master, NDArray) and master.stype == "default"):
            return False
    return state is None or (isinstance(state, NDArray) and state.stype == "default")


def _weight(p):
    """``p``'s array that the Trainer updates: a Parameter's first copy, through its
    internal accessor, which also gives a row_sparse parameter's (its ``data()``
    refuses, as Gluon's) whatever the current context; a duck-typed one's ``data()``."""
    read = getattr(p, "_arrays", None)
    return p.data() if read is None else read()[0]


def _grad(p):
    """The gradient of :func:`_weight`'s array (a duck-typed parameter's ``grad()``)."""
    grads = getattr(p, "list_grad", None)
    return p.grad() if grads is None else grads()[0]


def _weights(p):
    """``p``'s copies, one per context (see :func:`_weight`)."""
    read = getattr(p, "_arrays", None)
    return p.list_data() if read is None else read()


def _claim(params, trainer):
    """Tell every parameter that can hear it (``_set_trainer``) that ``trainer`` updates
    it; if one refuses (a sparse parameter already held by another Trainer), the others
    are told nothing."""
    done = []
    try:
        for p in params:
            claim = getattr(p, "_set_trainer", None)
            if claim is not None:
                done.append((p, getattr(p, "_trainer", None)))
                claim(trainer)
    except RuntimeError:
        for p, before in done:
            p._trainer = before
        raise


def _has_data(p):
    try:
        _weights(p)
    except RuntimeError:              # not initialised yet (deferred)
        return False
    return True


def _n_ctx(p):
    """How many contexts ``p`` lives on (1 for a parameter without ``list_ctx``, or not
    initialised yet)."""
    list_ctx = getattr(p, "list_ctx", None)
    if list_ctx is None:
        return 1
    try:
        return len(list_ctx())
    except RuntimeError:
        return 1


def _seen_mark(grad):
    """What a step remembers of a gradient it used: its chunk (weakly) and version."""
    return weakref.ref(grad.chunk), grad.version


def _unchanged(last, grad):
    """Whether ``grad`` is the gradient ``last`` (a ``_seen_mark``) saw: same chunk, no
    write since."""
    return last is not None and last[0]() is grad.chunk and last[1] == grad.version


def _stale(p, grad):
    """gluon's stale-gradient error for parameter ``p``."""
    return StaleGradientError(
        f"Gradient of Parameter `{p.name}` on context {grad.context} has not "
        "been updated by backward since last `step`. This could mean a bug in "
        "your model that made it only use a subset of the Parameters (Blocks) "
        "for this iteration. If you are intentionally only using a subset, "
        "call step with ignore_stale_grad=True to suppress this warning and "
        "skip updating of Parameters with stale gradient")
