"""Optimizer update operators (MXNet 1.x names, signatures and semantics): ``sgd_update``,
``sgd_mom_update``, ``adam_update``, ``adagrad_update`` (MXNet's
``nd.sparse.adagrad_update``, registered there as ``_sparse_adagrad_update``),
``nag_mom_update``, ``rmsprop_update``, ``rmspropalex_update``, ``ftml_update``,
``ftrl_update``, ``signum_update`` and ``signsgd_update``.

Each takes ``(weight, grad, *states)``, writes the updated weight to its output and its
states in place (``mutates``); MXNet calls them ``nd.sgd_update(w, g, lr=0.1, out=w)``,
which updates the weight in place (``inplace`` (0, 0)).  Without ``out=`` the result is
a new array and the weight is left alone, but the states are still updated, as in
MXNet.

Storage types.  Weight, gradient and states are dense or row_sparse (MXNet 1.x's
``nd.sparse.sgd_update`` ... ``ftrl_update`` on row_sparse weights); the result has the
weight's.  A row_sparse weight must store every row and a row_sparse state every row or
none (MXNet's rule for its row_sparse kernels; a state that stores none starts at zeros
and stores every row after the update), so their values are laid out as dense ones.  For
a row_sparse gradient, which rows change follows MXNet's kernel for the storage types:

- ``sgd_update``, ``sgd_mom_update``, ``adam_update``: with ``lazy_update=True`` and the
  states of the weight's storage type, only the gradient's rows of the weight and the
  states (the lazy update); otherwise every row, as if the absent rows had a zero
  gradient (the standard update, equal to the dense update of the densified gradient):
  MXNet's kernel for a row_sparse weight with dense states is the standard one.
- ``adagrad_update`` (MXNet's ``_sparse_adagrad_update``): always lazy; storage types
  (default, default, default), (default, row_sparse, default) or (row_sparse,
  row_sparse, row_sparse) only, as MXNet's.
- ``ftrl_update``: lazy when weight, grad and states are all row_sparse (MXNet's
  kernel), else standard.
- ``nag_mom_update``, ``rmsprop_update``, ``rmspropalex_update``, ``ftml_update``,
  ``signum_update``, ``signsgd_update`` (no row_sparse kernel in MXNet, which densifies
  through its storage fallback): the standard update.

Where MXNet differs: it requires ``out=weight`` for a row_sparse weight (ndrt also
returns a new array); ``adam_update`` with all-row_sparse arguments and
``lazy_update=False`` fails in MXNet 1.9.1 and takes the standard update here; MXNet's
fallback accepts a row_sparse weight that lacks rows and returns it with its zero rows
dropped, ndrt refuses such a weight and keeps every row.
``clip_gradient`` < 0 means no clipping.

Host kernels are runtime._sparse_optim's (one pass over memory, no temporaries, for
dense and row_sparse gradients alike; on x86 they flush denormals to zero, see there);
device arrays take NumPy-style formulas in CuPy.
Values are float32 or float64, or float16 for dense arrays (computed in float32 and
rounded back, as MXNet's float16 updates are).  Bad attributes, shapes, dtypes or storage types raise
during inference, before anything is written.  The updates are not differentiable (the
tape does not record them; recording refuses them on arrays that are on the tape).
"""

import math

import numpy as np

from runtime import _sparse_optim as K
from runtime._device import array_module
from runtime._ndarray import alloc_sparse, storage_view, write_storage
from runtime._ndarray import empty as _empty
from runtime.ops.registry import Attr, register

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_HALF = np.dtype(np.float16)
_INF = math.inf

# Attributes shared by every update, in MXNet's order after the op's own.
_COMMON = {"wd": Attr("float", 0.0), "rescale_grad": Attr("float", 1.0),
           "clip_gradient": Attr("float", -1.0)}
_LAZY = {"lazy_update": Attr("bool", True)}
# The learning rate: left out of the invoker's inference signature (the optimizers pass a
# new one at every step, Adam's bias correction folds into it), so the kernels check it.
_LR = Attr("float", required=True, infer=False)


# -- attribute, shape, dtype and storage checks ----------------------------------------------

def check_number(owner, name, v, lo=None, lo_open=False, hi=None):
    """ValueError unless float ``v`` is finite and in the range given: [lo, hi), or from
    ``lo`` (excluded when ``lo_open``).  runtime.optimizer checks its arguments with it too."""
    ok = math.isfinite(v)
    if ok and lo is not None:
        ok = v > lo if lo_open else v >= lo
    if ok and hi is not None:
        ok = v < hi
    if not ok:
        if lo is not None and hi is not None:
            rule = f"in [{lo}, {hi})"
        elif lo is not None:
            rule = f"finite and {'>' if lo_open else '>='} {lo}"
        else:
            rule = "finite"
        raise ValueError(f"{owner}: {name} must be {rule} (got {v!r})")


def as_number(owner, name, v, lo=None, lo_open=False, hi=None):
    """``v`` (a Python or NumPy real number, not a bool) as a float, checked by
    :func:`check_number`; TypeError for anything else."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                             np.floating)):
        raise TypeError(f"{owner}: {name} must be a number (got {v!r})")
    v = float(v)
    check_number(owner, name, v, lo, lo_open, hi)
    return v


def _finite(op, attrs, name, lo=None, lo_open=False, hi=None):
    check_number(op, name, attrs[name], lo, lo_open, hi)


def _clip_name(attrs):
    """The clipping attribute: ``clip_gradient``, or ``clip_grad`` (MXNet's ftml_update)."""
    return "clip_gradient" if "clip_gradient" in attrs else "clip_grad"


def _check_common(op, attrs):
    _finite(op, attrs, "lr", lo=0)
    _finite(op, attrs, "wd")
    _finite(op, attrs, "rescale_grad")
    clip = _clip_name(attrs)
    if math.isnan(attrs[clip]):
        raise ValueError(f"{op}: {clip} must be a number, < 0 for no clipping (got "
                         f"{attrs[clip]!r})")


def _common_ok(attrs):
    """True when the attributes of _check_common pass (its quick form: the optimizers
    call the updates with a new lr at every step, so inference runs every time)."""
    clip = attrs[_clip_name(attrs)]
    return (0.0 <= attrs["lr"] < _INF and -_INF < attrs["wd"] < _INF
            and -_INF < attrs["rescale_grad"] < _INF and clip == clip)


def _shapes(op, states, check, ok):
    """infer_shape: the attributes pass ``check`` (``ok(attrs)`` tells quickly that they
    do); grad and each state have the weight's shape."""
    names = ("grad",) + states

    def infer(attrs, shapes):
        if not (_common_ok(attrs) and ok(attrs)):
            _check_common(op, attrs)
            check(op, attrs)
        w = shapes[0]
        for name, s in zip(names, shapes[1:]):
            if s != w:
                raise ValueError(f"{op}: {name} must have the weight's shape {w!r} (got "
                                 f"{s!r})")
        return [w]
    return infer


def _types(op, states):
    """infer_type: a float16, float32 or float64 weight, the grad and states of its
    dtype (MXNet's updates take every real type; float16 is computed in float32)."""
    names = ("grad",) + states

    def infer(attrs, dtypes):
        w = dtypes[0]
        if w not in _FLOATS and w != _HALF:
            raise TypeError(f"{op}: weight must be float16, float32 or float64 (got {w})")
        for name, d in zip(names, dtypes[1:]):
            if d != w:
                raise TypeError(f"{op}: {name} must have the weight's dtype {w} (got {d})")
        return [w]
    return infer


_RSP = "row_sparse"
_ST = ("default", _RSP)
# The storage-type combinations (weight, grad, states...) of an update that has no
# storage fallback in MXNet (AdaGrad's sparse operator): every other one is refused.
_ADAGRAD_STYPES = (("default", "default", "default"), ("default", _RSP, "default"),
                   (_RSP, _RSP, _RSP))


def _storage(op, states, allowed=None):
    """infer_storage: weight, grad and states dense or row_sparse (``allowed``: the only
    combinations taken); the result has the weight's storage type.  All dense: the dense
    kernel; any row_sparse: the kernel of :func:`_sparse`."""
    names = ("weight", "grad") + states

    def infer(attrs, stypes):
        for name, s in zip(names, stypes):
            if s not in _ST:
                raise NotImplementedError(f"{op}: {name} must have storage type 'default' "
                                          f"or 'row_sparse' (got {s!r})")
        if allowed is not None and tuple(stypes) not in allowed:
            combos = " or ".join("(" + ", ".join(c) + ")" for c in allowed)
            raise NotImplementedError(f"{op}: storage types ({', '.join(names)}) must be "
                                      f"{combos}, as MXNet's (got ({', '.join(stypes)}))")
        if all(s == "default" for s in stypes):
            return ["default"], "dense"
        return [stypes[0]], "sparse"
    return infer


# Each check of an op's own attributes, and its quick form (True: the check passes).

def _no_check(op, attrs):
    """sgd_update has no attributes beyond the common ones (lr, wd, rescale, clip)."""
    return None


def _no_check_ok(attrs):
    return True


def _check_momentum(op, attrs):
    _finite(op, attrs, "momentum", lo=0, hi=1)


def _momentum_ok(attrs):
    return 0.0 <= attrs["momentum"] < 1.0


def _check_adam(op, attrs):
    _finite(op, attrs, "beta1", lo=0, hi=1)
    _finite(op, attrs, "beta2", lo=0, hi=1)
    _finite(op, attrs, "epsilon", lo=0, lo_open=True)


def _adam_ok(attrs):
    return (0.0 <= attrs["beta1"] < 1.0 and 0.0 <= attrs["beta2"] < 1.0
            and 0.0 < attrs["epsilon"] < _INF)


def _check_adagrad(op, attrs):
    _finite(op, attrs, "epsilon", lo=0, lo_open=True)


def _adagrad_ok(attrs):
    return 0.0 < attrs["epsilon"] < _INF


# -- kernels ---------------------------------------------------------------------------------

def check_lr(op, attrs):
    """lr is not part of the inference signature (_LR): each kernel checks it first (and
    runtime.optimizer before it runs any update of a step)."""
    if not 0.0 <= attrs["lr"] < _INF:
        _finite(op, attrs, "lr", lo=0)


def _dense(op, update, device):
    """The dense kernel: the host runs ``update(out, weight, grad, None, states, attrs,
    lazy=False)``, a device ``device(w, g, states, o, attrs)``."""
    def compute(attrs, ins, outs):
        check_lr(op, attrs)
        w, g, states, o = ins[0], ins[1], ins[2:], outs[0]
        if w.dtype == _HALF:
            _in_float32(w, g, states, o, lambda *a: compute(attrs, a[:-1], a[-1:]))
        elif isinstance(w, np.ndarray):
            update(o, w, g, None, states, attrs, False)
        else:
            device(w, g, states, o, attrs)
    return compute


def _in_float32(w, g, states, o, run):
    """A float16 update computed in float32 (MXNet's float16 updates do their math in
    float32): ``run(w, g, *states, o)`` on float32 copies, then the result and the
    states rounded back into ``o`` and ``states``, only once it has succeeded."""
    wide = [x.astype(np.float32) for x in (w, g) + tuple(states)]
    out = wide[0].copy()
    run(*wide, out)
    for dst, src in zip(states, wide[2:]):
        dst[...] = src
    o[...] = out


def _lazy(rule, attrs, w, g, states):
    """Whether a row_sparse ``g`` takes the lazy update (only its rows of the weight and
    the states change) or the standard one (every row, a row absent from ``g`` as if its
    gradient were 0), by MXNet 1.x's kernel for the storage types: ``rule`` 'flag'
    (sgd_update, sgd_mom_update, adam_update): ``lazy_update`` decides where the states
    have the weight's storage type, else MXNet's kernel is the standard one; 'always'
    (adagrad_update); 'all_rsp' (ftrl_update): lazy when weight and states are
    row_sparse, else standard (MXNet's storage fallback); 'never': standard (the updates
    that MXNet computes densely)."""
    if rule == "flag":
        return attrs["lazy_update"] and all(s.stype == w.stype for s in states)
    if rule == "always":
        return True
    if rule == "all_rsp":
        return w.stype == _RSP and all(s.stype == _RSP for s in states)
    return False


def _stored_rows(x):
    return storage_view(x, 0).shape[0]


def _full(x):
    """True when row_sparse ``x`` stores every row (its data is then the dense layout)."""
    n, k = x.shape[0], _stored_rows(x)
    if k != n:
        return False
    rows = storage_view(x, 0)
    return n == 0 or (rows[0] == 0 and rows[n - 1] == n - 1)


def check_rows(op, state_names, inputs):
    """ValueError unless a row_sparse weight among ``inputs`` (weight, grad, states...)
    stores every row and a row_sparse state every row or none; returns the positions
    among the states of those that store none.  runtime.optimizer checks a step's
    updates with it before it runs any."""
    w, states = inputs[0], inputs[2:]
    n = w.shape[0] if w.ndim else 1
    if w.stype == _RSP and not _full(w):
        raise ValueError(f"{op}: a row_sparse weight must store all its {n} rows, as "
                         f"MXNet's row_sparse updates require (got {_stored_rows(w)} "
                         f"stored rows)")
    empty = []
    for i, (name, s) in enumerate(zip(state_names, states)):
        if s.stype == _RSP and not _full(s):
            if _stored_rows(s):
                raise ValueError(f"{op}: a row_sparse {name} must store all its {n} rows "
                                 f"or none (none: it starts at zeros) (got "
                                 f"{_stored_rows(s)} stored rows)")
            empty.append(i)
    return empty


def _full_row_sparse(shape, dtype, ctx, values=None):
    """A row_sparse array of ``shape`` that stores every row (indices 0 .. n-1), its
    values ``values`` (a NumPy array of ``shape``) or zeros: the layout that the updates
    take for a row_sparse weight and states.  Host contexts."""
    n = shape[0]
    x = alloc_sparse(_RSP, shape, dtype, ctx, shape, [(n,)])
    write_storage(x, 0, np.arange(n, dtype=np.int64))
    write_storage(x, -1, 0 if values is None else values)
    return x


def _sparse(op, update, rule, state_names):
    """The kernel of the updates with a row_sparse weight, grad or state (see
    :func:`_lazy` for which rows change).  A row_sparse weight must store every row and
    a row_sparse state every row or none (MXNet's rule; none: the state starts at zeros
    and stores every row after the update), so that their data is the dense layout and
    the host loops of runtime._sparse_optim run on it.  The result has the weight's
    storage type: ``out=weight`` is written in place; otherwise the weight is copied
    into a new array and updated there."""
    def compute(attrs, inputs, outs):
        check_lr(op, attrs)
        w, g, states = inputs[0], inputs[1], inputs[2:]
        if w.dtype == _HALF:
            raise TypeError(f"{op}: a float16 update takes dense arrays (got storage "
                            f"types {', '.join(x.stype for x in inputs)}); make the "
                            f"weight, gradient and states dense or float32")
        if not all(x.context.device_type == "cpu" for x in inputs):
            raise NotImplementedError(f"{op}: no device kernel for row_sparse arrays yet "
                                      f"(got {w.context}); use dense arrays")
        fresh = {i: _full_row_sparse(states[i].shape, states[i].dtype, states[i].context)
                 for i in check_rows(op, state_names, inputs)}
        views = [storage_view(fresh[i] if i in fresh else s, -1)
                 for i, s in enumerate(states)]
        o = outs[0]
        if o is None or o.stype != w.stype or (o.stype == _RSP and o.chunk is not w.chunk):
            o = (_full_row_sparse(w.shape, w.dtype, w.context) if w.stype == _RSP
                 else _empty(w.shape, ctx=w.context, dtype=w.dtype))
        rows = None if g.stype == "default" else storage_view(g, 0)
        update(storage_view(o, -1), storage_view(w, -1), storage_view(g, -1), rows, views,
               attrs, _lazy(rule, attrs, w, g, states) if rows is not None else False)
        for i, x in fresh.items():
            states[i][:] = x
        return [o]
    return compute


def _scaled(g, attrs, extra=None):
    """clip(rescale_grad * g (+ extra)) as a new array (device formulas)."""
    xp = array_module(g)
    r = g * g.dtype.type(attrs["rescale_grad"])
    if extra is not None:
        r += extra
    c = attrs["clip_gradient"]
    if c >= 0:
        xp.clip(r, -c, c, out=r)
    return r


# sgd_update / sgd_mom_update

def _sgd_host(o, w, g, rows, states, attrs, lazy):
    K.sgd_update(o, w, g, rows, states[0] if states else None, attrs["lr"], attrs["wd"],
                 attrs["rescale_grad"], attrs["clip_gradient"], attrs.get("momentum", 0.0),
                 lazy)


def _sgd_device(w, g, states, o, attrs):
    t = w.dtype.type
    lr, wd = t(attrs["lr"]), t(attrs["wd"])
    step = _scaled(g, attrs)
    if not states:
        o[...] = (1 - lr * wd) * w - lr * step
        return
    mom = states[0]
    mom *= t(attrs["momentum"])
    mom -= lr * wd * w + lr * step
    o[...] = w + mom


register(
    "sgd_update", inputs=("weight", "grad"),
    attrs={"lr": _LR, **_COMMON, **_LAZY},
    infer_shape=_shapes("sgd_update", (), _no_check, _no_check_ok),
    infer_type=_types("sgd_update", ()), infer_storage=_storage("sgd_update", ()),
    compute=_dense("sgd_update", _sgd_host, _sgd_device),
    compute_sparse=_sparse("sgd_update", _sgd_host, "flag", ()), sparse_out=True,
    inplace=((0, 0),), differentiable=False,
    doc="""SGD (MXNet's sgd_update): weight = (1 - lr wd) weight - lr clip(rescale_grad
grad, clip_gradient).  A row_sparse grad with lazy_update updates only its rows.""")

register(
    "sgd_mom_update", inputs=("weight", "grad", "mom"),
    attrs={"lr": _LR, "momentum": Attr("float", 0.0), **_COMMON,
           **_LAZY},
    infer_shape=_shapes("sgd_mom_update", ("mom",), _check_momentum, _momentum_ok),
    infer_type=_types("sgd_mom_update", ("mom",)),
    infer_storage=_storage("sgd_mom_update", ("mom",)),
    compute=_dense("sgd_mom_update", _sgd_host, _sgd_device),
    compute_sparse=_sparse("sgd_mom_update", _sgd_host, "flag", ("mom",)), sparse_out=True,
    inplace=((0, 0),), mutates=(2,), differentiable=False,
    doc="""SGD with momentum (MXNet's sgd_mom_update): mom = momentum mom - lr wd weight
- lr clip(rescale_grad grad, clip_gradient); weight += mom.  ``mom`` is updated in place;
a row_sparse grad with lazy_update updates only its rows of weight and mom.""")


# adam_update

def _adam_host(o, w, g, rows, states, attrs, lazy):
    K.adam_update(o, w, g, rows, states[0], states[1], attrs["lr"], attrs["beta1"],
                  attrs["beta2"], attrs["epsilon"], attrs["wd"], attrs["rescale_grad"],
                  attrs["clip_gradient"], lazy)


def _adam_device(w, g, states, o, attrs):
    xp, t = array_module(w), w.dtype.type
    mean, var = states
    b1, b2 = t(attrs["beta1"]), t(attrs["beta2"])
    step = _scaled(g, attrs, extra=w * t(attrs["wd"]))
    mean *= b1
    mean += (1 - b1) * step
    var *= b2
    var += (1 - b2) * step * step
    o[...] = w - t(attrs["lr"]) * mean / (xp.sqrt(var) + t(attrs["epsilon"]))


register(
    "adam_update", inputs=("weight", "grad", "mean", "var"),
    attrs={"lr": _LR, "beta1": Attr("float", 0.9),
           "beta2": Attr("float", 0.999), "epsilon": Attr("float", 1e-8), **_COMMON,
           **_LAZY},
    infer_shape=_shapes("adam_update", ("mean", "var"), _check_adam, _adam_ok),
    infer_type=_types("adam_update", ("mean", "var")),
    infer_storage=_storage("adam_update", ("mean", "var")),
    compute=_dense("adam_update", _adam_host, _adam_device),
    compute_sparse=_sparse("adam_update", _adam_host, "flag", ("mean", "var")),
    sparse_out=True,
    inplace=((0, 0),), mutates=(2, 3), differentiable=False,
    doc="""Adam (MXNet's adam_update, without bias correction: the Adam optimizer folds
it into lr): g = clip(rescale_grad grad + wd weight, clip_gradient); mean = beta1 mean +
(1 - beta1) g; var = beta2 var + (1 - beta2) g^2; weight -= lr mean / (sqrt(var) +
epsilon).  ``mean`` and ``var`` are updated in place; a row_sparse grad with lazy_update
updates only its rows of weight, mean and var.""")


# adagrad_update

def _adagrad_host(o, w, g, rows, states, attrs, lazy):
    K.adagrad_update(o, w, g, rows, states[0], attrs["lr"], attrs["epsilon"], attrs["wd"],
                     attrs["rescale_grad"], attrs["clip_gradient"], lazy)


def _adagrad_device(w, g, states, o, attrs):
    xp, t = array_module(w), w.dtype.type
    hist = states[0]
    step = _scaled(g, attrs)
    hist += step * step
    o[...] = w - t(attrs["lr"]) * (step / xp.sqrt(hist + t(attrs["epsilon"]))
                                   + t(attrs["wd"]) * w)


register(
    "adagrad_update", inputs=("weight", "grad", "history"),
    aliases=("_sparse_adagrad_update",),
    attrs={"lr": _LR, "epsilon": Attr("float", 1e-7), **_COMMON},
    infer_shape=_shapes("adagrad_update", ("history",), _check_adagrad,
                        _adagrad_ok),
    infer_type=_types("adagrad_update", ("history",)),
    infer_storage=_storage("adagrad_update", ("history",), _ADAGRAD_STYPES),
    compute=_dense("adagrad_update", _adagrad_host, _adagrad_device),
    compute_sparse=_sparse("adagrad_update", _adagrad_host, "always", ("history",)),
    sparse_out=True,
    inplace=((0, 0),), mutates=(2,), differentiable=False,
    doc="""AdaGrad (MXNet's nd.sparse.adagrad_update): g = clip(rescale_grad grad,
clip_gradient); history += g^2; weight -= lr (g / sqrt(history + epsilon) + wd weight)
(epsilon inside the root, as MXNet's kernel).
``history`` is updated in place.  A row_sparse grad updates only its rows of weight and
history (always lazy, as MXNet); MXNet's sparse op refuses wd != 0, here wd decays the
rows updated.""")


# nag_mom_update, rmsprop_update, ftrl_update, signum_update, signsgd_update

def _check_nag(op, attrs):
    _finite(op, attrs, "momentum", lo=0, hi=1)


def _check_rmsprop(op, attrs):
    _finite(op, attrs, "gamma1", lo=0, hi=1)
    _finite(op, attrs, "epsilon", lo=0, lo_open=True)
    if math.isnan(attrs["clip_weights"]):
        raise ValueError(f"{op}: clip_weights must be a number, < 0 for no clipping (got "
                         f"{attrs['clip_weights']!r})")


def _rmsprop_ok(attrs):
    return (0.0 <= attrs["gamma1"] < 1.0 and 0.0 < attrs["epsilon"] < _INF
            and attrs["clip_weights"] == attrs["clip_weights"])


def _check_ftrl(op, attrs):
    _finite(op, attrs, "lamda1", lo=0)
    _finite(op, attrs, "beta", lo=0)


def _ftrl_ok(attrs):
    return 0.0 <= attrs["lamda1"] < _INF and 0.0 <= attrs["beta"] < _INF


def _check_signum(op, attrs):
    _finite(op, attrs, "momentum", lo=0, hi=1)
    _finite(op, attrs, "wd_lh")


def _signum_ok(attrs):
    return 0.0 <= attrs["momentum"] < 1.0 and -_INF < attrs["wd_lh"] < _INF


def _nag_host(o, w, g, rows, states, attrs, lazy):
    K.nag_mom_update(o, w, g, rows, states[0], attrs["lr"], attrs["momentum"], attrs["wd"],
                     attrs["rescale_grad"], attrs["clip_gradient"], lazy)


def _nag_device(w, g, states, o, attrs):
    t = w.dtype.type
    mom = states[0]
    step = t(attrs["lr"]) * (_scaled(g, attrs) + t(attrs["wd"]) * w)
    mom *= t(attrs["momentum"])
    mom -= step
    o[...] = w + t(attrs["momentum"]) * mom - step


register(
    "nag_mom_update", inputs=("weight", "grad", "mom"),
    attrs={"lr": _LR, "momentum": Attr("float", 0.0), **_COMMON},
    infer_shape=_shapes("nag_mom_update", ("mom",), _check_nag, _momentum_ok),
    infer_type=_types("nag_mom_update", ("mom",)),
    infer_storage=_storage("nag_mom_update", ("mom",)),
    compute=_dense("nag_mom_update", _nag_host, _nag_device),
    compute_sparse=_sparse("nag_mom_update", _nag_host, "never", ("mom",)), sparse_out=True,
    inplace=((0, 0),), mutates=(2,), differentiable=False,
    doc="""Nesterov momentum (MXNet's nag_mom_update kernel): s = lr (clip(rescale_grad
grad, clip_gradient) + wd weight); mom = momentum mom - s; weight += momentum mom - s.
``mom`` is updated in place; a row_sparse grad takes the standard update.  (MXNet's
in-place kernel reads the new weight in the wd term of the momentum; ndrt reads the
weight the update started from.)""")


def _rmsprop_host(o, w, g, rows, states, attrs, lazy):
    K.rmsprop_update(o, w, g, rows, states[0], attrs["lr"], attrs["gamma1"],
                     attrs["epsilon"], attrs["wd"], attrs["rescale_grad"],
                     attrs["clip_gradient"], attrs["clip_weights"], lazy)


def _rmsprop_device(w, g, states, o, attrs):
    xp, t = array_module(w), w.dtype.type
    n = states[0]
    step = _scaled(g, attrs, extra=w * t(attrs["wd"]))
    g1 = t(attrs["gamma1"])
    n *= g1
    n += (1 - g1) * step * step
    o[...] = w - t(attrs["lr"]) * step / xp.sqrt(n + t(attrs["epsilon"]))
    if attrs["clip_weights"] >= 0:
        xp.clip(o, -attrs["clip_weights"], attrs["clip_weights"], out=o)


register(
    "rmsprop_update", inputs=("weight", "grad", "n"),
    attrs={"lr": _LR, "gamma1": Attr("float", 0.95), "epsilon": Attr("float", 1e-8),
           **_COMMON, "clip_weights": Attr("float", -1.0)},
    infer_shape=_shapes("rmsprop_update", ("n",), _check_rmsprop, _rmsprop_ok),
    infer_type=_types("rmsprop_update", ("n",)),
    infer_storage=_storage("rmsprop_update", ("n",)),
    compute=_dense("rmsprop_update", _rmsprop_host, _rmsprop_device),
    compute_sparse=_sparse("rmsprop_update", _rmsprop_host, "never", ("n",)), sparse_out=True,
    inplace=((0, 0),), mutates=(2,), differentiable=False,
    doc="""RMSProp (MXNet's rmsprop_update): g = clip(rescale_grad grad + wd weight,
clip_gradient); n = (1 - gamma1) g^2 + gamma1 n; weight -= lr g / sqrt(n + epsilon), then
clipped to [-clip_weights, clip_weights] when clip_weights >= 0.  ``n`` is updated in
place; a row_sparse grad takes the standard update.""")


def _check_rmspropalex(op, attrs):
    _check_rmsprop(op, attrs)
    _finite(op, attrs, "gamma2", lo=0, hi=1)


def _rmspropalex_ok(attrs):
    return _rmsprop_ok(attrs) and 0.0 <= attrs["gamma2"] < 1.0


def _rmspropalex_host(o, w, g, rows, states, attrs, lazy):
    K.rmspropalex_update(o, w, g, rows, states[0], states[1], states[2], attrs["lr"],
                         attrs["gamma1"], attrs["gamma2"], attrs["epsilon"], attrs["wd"],
                         attrs["rescale_grad"], attrs["clip_gradient"], attrs["clip_weights"],
                         lazy)


def _rmspropalex_device(w, g, states, o, attrs):
    xp, t = array_module(w), w.dtype.type
    n, gm, delta = states
    step = _scaled(g, attrs, extra=w * t(attrs["wd"]))
    g1 = t(attrs["gamma1"])
    n *= g1
    n += (1 - g1) * step * step
    gm *= g1
    gm += (1 - g1) * step
    delta *= t(attrs["gamma2"])
    delta -= t(attrs["lr"]) * step / xp.sqrt(n - gm * gm + t(attrs["epsilon"]))
    o[...] = w + delta
    if attrs["clip_weights"] >= 0:
        xp.clip(o, -attrs["clip_weights"], attrs["clip_weights"], out=o)


register(
    "rmspropalex_update", inputs=("weight", "grad", "n", "g", "delta"),
    attrs={"lr": _LR, "gamma1": Attr("float", 0.95), "gamma2": Attr("float", 0.9),
           "epsilon": Attr("float", 1e-8), **_COMMON, "clip_weights": Attr("float", -1.0)},
    infer_shape=_shapes("rmspropalex_update", ("n", "g", "delta"), _check_rmspropalex,
                        _rmspropalex_ok),
    infer_type=_types("rmspropalex_update", ("n", "g", "delta")),
    infer_storage=_storage("rmspropalex_update", ("n", "g", "delta")),
    compute=_dense("rmspropalex_update", _rmspropalex_host, _rmspropalex_device),
    compute_sparse=_sparse("rmspropalex_update", _rmspropalex_host, "never",
                           ("n", "g", "delta")),
    sparse_out=True,
    inplace=((0, 0),), mutates=(2, 3, 4), differentiable=False,
    doc="""Centered RMSProp, Graves' form (MXNet's rmspropalex_update): g = clip(rescale_grad
grad + wd weight, clip_gradient); n = (1 - gamma1) g^2 + gamma1 n; g_avg = (1 - gamma1) g +
gamma1 g_avg; delta = gamma2 delta - lr g / sqrt(n - g_avg^2 + epsilon); weight += delta,
then clipped to [-clip_weights, clip_weights] when clip_weights >= 0.  ``n``, ``g`` and
``delta`` are updated in place; a row_sparse grad takes the standard update.""")


def _check_ftml(op, attrs):
    _finite(op, attrs, "beta1", lo=0, hi=1)
    _finite(op, attrs, "beta2", lo=0, hi=1)
    _finite(op, attrs, "epsilon", lo=0, lo_open=True)
    if attrs["t"] < 1:
        raise ValueError(f"{op}: t must be an integer >= 1, the update count (got "
                         f"{attrs['t']!r})")


def _ftml_ok(attrs):
    return (0.0 <= attrs["beta1"] < 1.0 and 0.0 <= attrs["beta2"] < 1.0
            and 0.0 < attrs["epsilon"] < _INF and attrs["t"] >= 1)


def _ftml_host(o, w, g, rows, states, attrs, lazy):
    K.ftml_update(o, w, g, rows, states[0], states[1], states[2], attrs["lr"],
                  attrs["beta1"], attrs["beta2"], attrs["epsilon"], attrs["t"], attrs["wd"],
                  attrs["rescale_grad"], attrs["clip_grad"], lazy)


def _ftml_device(w, g, states, o, attrs):
    xp, t = array_module(w), w.dtype.type
    d, v, z = states
    b1, b2, n = t(attrs["beta1"]), t(attrs["beta2"]), attrs["t"]
    step = g * t(attrs["rescale_grad"]) + t(attrs["wd"]) * w
    if attrs["clip_grad"] >= 0:
        xp.clip(step, -attrs["clip_grad"], attrs["clip_grad"], out=step)
    v *= b2
    v += (1 - b2) * step * step
    dt = t(1 - attrs["beta1"] ** n) / t(attrs["lr"]) * (
        xp.sqrt(v / t(1 - attrs["beta2"] ** n)) + t(attrs["epsilon"]))
    z *= b1
    z += (1 - b1) * step - (dt - b1 * d) * w
    d[...] = dt
    o[...] = -z / dt


register(
    "ftml_update", inputs=("weight", "grad", "d", "v", "z"),
    attrs={"lr": _LR, "beta1": Attr("float", 0.6), "beta2": Attr("float", 0.999),
           "epsilon": Attr("float", 1e-8), "t": Attr("int", required=True),
           "wd": Attr("float", 0.0), "rescale_grad": Attr("float", 1.0),
           "clip_grad": Attr("float", -1.0)},
    infer_shape=_shapes("ftml_update", ("d", "v", "z"), _check_ftml, _ftml_ok),
    infer_type=_types("ftml_update", ("d", "v", "z")),
    infer_storage=_storage("ftml_update", ("d", "v", "z")),
    compute=_dense("ftml_update", _ftml_host, _ftml_device),
    compute_sparse=_sparse("ftml_update", _ftml_host, "never", ("d", "v", "z")), sparse_out=True,
    inplace=((0, 0),), mutates=(2, 3, 4), differentiable=False,
    doc="""FTML, Follow the Moving Leader (MXNet's ftml_update): g = clip(rescale_grad grad +
wd weight, clip_grad); v = beta2 v + (1 - beta2) g^2; d_t = (1 - beta1^t) / lr
(sqrt(v / (1 - beta2^t)) + epsilon); z = beta1 z + (1 - beta1) g - (d_t - beta1 d) weight;
d = d_t; weight = -z / d_t, at update ``t`` >= 1.  ``d``, ``v`` and ``z`` are updated in
place; a row_sparse grad takes the standard update.""")


def _ftrl_host(o, w, g, rows, states, attrs, lazy):
    K.ftrl_update(o, w, g, rows, states[0], states[1], attrs["lr"], attrs["lamda1"],
                  attrs["beta"], attrs["wd"], attrs["rescale_grad"], attrs["clip_gradient"],
                  lazy)


def _ftrl_device(w, g, states, o, attrs):
    xp, t = array_module(w), w.dtype.type
    z, n = states
    lr, l1 = t(attrs["lr"]), t(attrs["lamda1"])
    step = _scaled(g, attrs)
    z += step - (xp.sqrt(n + step * step) - xp.sqrt(n)) * w / lr
    n += step * step
    o[...] = ((xp.sign(z) * l1 - z) / ((t(attrs["beta"]) + xp.sqrt(n)) / lr + t(attrs["wd"]))
              * (xp.abs(z) > l1))


register(
    "ftrl_update", inputs=("weight", "grad", "z", "n"),
    attrs={"lr": _LR, "lamda1": Attr("float", 0.01), "beta": Attr("float", 1.0),
           **_COMMON},
    infer_shape=_shapes("ftrl_update", ("z", "n"), _check_ftrl, _ftrl_ok),
    infer_type=_types("ftrl_update", ("z", "n")),
    infer_storage=_storage("ftrl_update", ("z", "n")),
    compute=_dense("ftrl_update", _ftrl_host, _ftrl_device),
    compute_sparse=_sparse("ftrl_update", _ftrl_host, "all_rsp", ("z", "n")), sparse_out=True,
    inplace=((0, 0),), mutates=(2, 3), differentiable=False,
    doc="""FTRL-proximal (MXNet's ftrl_update): g = clip(rescale_grad grad,
clip_gradient); z += g - (sqrt(n + g^2) - sqrt(n)) weight / lr; n += g^2; weight =
(sign(z) lamda1 - z) / ((beta + sqrt(n)) / lr + wd) where |z| > lamda1, else 0.  ``z``
and ``n`` are updated in place; a row_sparse grad takes the standard update.""")


def _signum_host(o, w, g, rows, states, attrs, lazy):
    K.signum_update(o, w, g, rows, states[0] if states else None, attrs["lr"],
                    attrs.get("momentum", 0.0), attrs["wd"], attrs["rescale_grad"],
                    attrs["clip_gradient"], attrs.get("wd_lh", 0.0), lazy)


def _signum_device(w, g, states, o, attrs):
    xp, t = array_module(w), w.dtype.type
    lr, wd = t(attrs["lr"]), t(attrs["wd"])
    if not states:
        o[...] = (1 - lr * wd) * w - lr * xp.sign(g)
        return
    mom = states[0]
    m = t(attrs["momentum"])
    mom *= m
    mom -= (1 - m) * (wd * w + _scaled(g, attrs))
    o[...] = (1 - lr * t(attrs["wd_lh"])) * w + lr * xp.sign(mom)


register(
    "signum_update", inputs=("weight", "grad", "mom"),
    attrs={"lr": _LR, "momentum": Attr("float", 0.0), **_COMMON,
           "wd_lh": Attr("float", 0.0)},
    infer_shape=_shapes("signum_update", ("mom",), _check_signum, _signum_ok),
    infer_type=_types("signum_update", ("mom",)),
    infer_storage=_storage("signum_update", ("mom",)),
    compute=_dense("signum_update", _signum_host, _signum_device),
    compute_sparse=_sparse("signum_update", _signum_host, "never", ("mom",)), sparse_out=True,
    inplace=((0, 0),), mutates=(2,), differentiable=False,
    doc="""Signum (MXNet's signum_update): mom = momentum mom - (1 - momentum) (wd weight
+ clip(rescale_grad grad, clip_gradient)); weight = (1 - lr wd_lh) weight + lr sign(mom).
``mom`` is updated in place; a row_sparse grad takes the standard update.""")

register(
    "signsgd_update", inputs=("weight", "grad"),
    attrs={"lr": _LR, **_COMMON},
    infer_shape=_shapes("signsgd_update", (), _no_check, _no_check_ok),
    infer_type=_types("signsgd_update", ()), infer_storage=_storage("signsgd_update", ()),
    compute=_dense("signsgd_update", _signum_host, _signum_device),
    compute_sparse=_sparse("signsgd_update", _signum_host, "never", ()), sparse_out=True,
    inplace=((0, 0),), differentiable=False,
    doc="""signSGD (MXNet's signsgd_update): weight = (1 - lr wd) weight - lr sign(grad)
(the sign of the raw gradient: rescaling and clipping do not change it).  A row_sparse
grad takes the standard update.""")


# lamb_update_phase1 / lamb_update_phase2 and their mixed-precision forms (LAMB's two
# phases: MXNet computes the norms of the weight and of phase 1's output between them)

def _check_lamb1(op, attrs):
    _finite(op, attrs, "beta1", lo=0, hi=1)
    _finite(op, attrs, "beta2", lo=0, hi=1)
    _finite(op, attrs, "epsilon", lo=0, lo_open=True)
    _finite(op, attrs, "wd")
    _finite(op, attrs, "rescale_grad")
    if math.isnan(attrs["clip_gradient"]):
        raise ValueError(f"{op}: clip_gradient must be a number, < 0 for no clipping (got "
                         f"nan)")
    if attrs["t"] < 1:
        raise ValueError(f"{op}: t must be an integer >= 1, the update count (got "
                         f"{attrs['t']!r})")


def _check_lamb2(op, attrs):
    for name in ("lower_bound", "upper_bound"):
        if math.isnan(attrs[name]):
            raise ValueError(f"{op}: {name} must be a number, < 0 for no bound (got nan)")


def _lamb_shapes(op, names, check):
    """infer_shape: the attributes pass ``check``; ``names`` (the inputs after the
    weight) have the weight's shape, except r1 and r2, which hold one value each."""
    def infer(attrs, shapes):
        check(op, attrs)
        w = shapes[0]
        for name, s in zip(names, shapes[1:]):
            want = (1,) if name in ("r1", "r2") else w
            if s != want:
                raise ValueError(f"{op}: {name} must have "
                                 f"{'shape (1,)' if want == (1,) else f'the weight shape {w!r}'}"
                                 f" (got {s!r})")
        return [w]
    return infer


def _lamb_types(op, names, mp, out_f32):
    """infer_type: float32/float64 arrays of the weight's dtype; in the mixed-precision
    forms (``mp``) a float16 weight and grad and float32 for the rest.  The output: the
    weight's dtype, or float32 (``out_f32``: mp phase 1's g)."""
    def infer(attrs, dtypes):
        w = dtypes[0]
        if mp:
            if w != np.float16:
                raise TypeError(f"{op}: weight must be float16 (got {w})")
        elif w not in _FLOATS:
            raise TypeError(f"{op}: weight must be float32 or float64 (got {w})")
        for name, d in zip(names, dtypes[1:]):
            want = w if (not mp or name == "grad") else np.dtype(np.float32)
            if d != want:
                raise TypeError(f"{op}: {name} must have dtype {want} (got {d})")
        return [np.dtype(np.float32) if out_f32 else w]
    return infer


def _lamb_storage(op, names):
    def infer(attrs, stypes):
        for name, s in zip(("weight",) + names, stypes):
            if s != "default":
                raise NotImplementedError(f"{op}: {name} must have storage type 'default' "
                                          f"(got {s!r})")
        return ["default"], "dense"
    return infer


def _lamb1(attrs, ins, outs):
    """Phase 1 (host and device alike): the moments in place, g into the output.  The
    attributes are rounded to float32 and the bias corrections divide in float64, as
    MXNet's kernel does (its parameters are floats; ``1. - pow(beta, t)`` a double)."""
    w, g, mean, var = ins[:4]
    xp, t, f = array_module(mean), mean.dtype.type, np.float32
    b1, b2, n = f(attrs["beta1"]), f(attrs["beta2"]), attrs["t"]
    r = g.astype(mean.dtype) * t(f(attrs["rescale_grad"]))
    if attrs["clip_gradient"] >= 0:
        c = t(f(attrs["clip_gradient"]))
        xp.clip(r, -c, c, out=r)
    mean *= t(b1)
    mean += t(f(1) - b1) * r
    var *= t(b2)
    var += t(f(1) - b2) * r * r
    m, v = mean, var
    if attrs["bias_correction"]:
        m = (mean.astype(np.float64) / (1.0 - float(b1) ** n)).astype(mean.dtype)
        v = (var.astype(np.float64) / (1.0 - float(b2) ** n)).astype(mean.dtype)
    master = ins[4] if len(ins) == 5 else w        # the wd term reads weight32 in mp
    outs[0][...] = m / (xp.sqrt(v) + t(f(attrs["epsilon"]))) + t(f(attrs["wd"])) * master


def _lamb2(op):
    """Phase 2: weight - lr r1 / r2 g, r1 within the bounds, the ratio 1 where either
    norm is 0; the mixed-precision form updates weight32 in place, then casts."""
    def compute(attrs, ins, outs):
        check_lr(op, attrs)
        w, g, r1, r2 = ins[:4]
        t, f = g.dtype.type, np.float32          # MXNet's parameters are floats
        a, b = float(r1[0]), float(r2[0])
        if attrs["lower_bound"] >= 0:
            a = max(a, float(f(attrs["lower_bound"])))
        if attrs["upper_bound"] >= 0:
            a = min(a, float(f(attrs["upper_bound"])))
        lr = t(f(attrs["lr"]))
        if a != 0 and b != 0:
            lr = lr * (t(a) / t(b))
        if len(ins) == 5:
            w32 = ins[4]
            w32 -= lr * g
            outs[0][...] = w32
        else:
            outs[0][...] = w - lr * g
    return compute


_LAMB1_ATTRS = {"beta1": Attr("float", 0.9), "beta2": Attr("float", 0.999),
                "epsilon": Attr("float", 1e-6), "t": Attr("int", required=True),
                "bias_correction": Attr("bool", True), "wd": Attr("float", required=True),
                "rescale_grad": Attr("float", 1.0), "clip_gradient": Attr("float", -1.0)}
_LAMB2_ATTRS = {"lr": _LR, "lower_bound": Attr("float", -1.0),
                "upper_bound": Attr("float", -1.0)}
_LAMB1_DOC = """g = clip(rescale_grad grad, clip_gradient); mean = beta1 mean + (1 - beta1) g;
var = beta2 var + (1 - beta2) g^2; with bias_correction mean /= 1 - beta1^t, var /= 1 -
beta2^t (in the formula, not in the states); returns mean / (sqrt(var) + epsilon) + wd
weight, at update ``t`` >= 1.  ``mean`` and ``var`` are updated in place.  Dense arrays
(MXNet densifies a row_sparse grad)."""
_LAMB2_DOC = """r1 = max(r1, lower_bound) where lower_bound >= 0, then min(r1, upper_bound)
where upper_bound >= 0; lr' = lr where r1 or r2 is 0, else lr r1 / r2; weight - lr' g.
``r1`` and ``r2`` (shape (1,)) are the norms of the weight and of phase 1's g."""

register(
    "lamb_update_phase1", inputs=("weight", "grad", "mean", "var"), attrs=_LAMB1_ATTRS,
    infer_shape=_lamb_shapes("lamb_update_phase1", ("grad", "mean", "var"), _check_lamb1),
    infer_type=_lamb_types("lamb_update_phase1", ("grad", "mean", "var"), False, False),
    infer_storage=_lamb_storage("lamb_update_phase1", ("grad", "mean", "var")),
    compute=_lamb1, mutates=(2, 3), differentiable=False,
    doc="LAMB's phase 1 (MXNet's lamb_update_phase1): " + _LAMB1_DOC)

register(
    "lamb_update_phase2", inputs=("weight", "g", "r1", "r2"), attrs=_LAMB2_ATTRS,
    infer_shape=_lamb_shapes("lamb_update_phase2", ("g", "r1", "r2"), _check_lamb2),
    infer_type=_lamb_types("lamb_update_phase2", ("g", "r1", "r2"), False, False),
    infer_storage=_lamb_storage("lamb_update_phase2", ("g", "r1", "r2")),
    compute=_lamb2("lamb_update_phase2"), inplace=((0, 0),), differentiable=False,
    doc="LAMB's phase 2 (MXNet's lamb_update_phase2): " + _LAMB2_DOC)

register(
    "mp_lamb_update_phase1", inputs=("weight", "grad", "mean", "var", "weight32"),
    attrs=_LAMB1_ATTRS,
    infer_shape=_lamb_shapes("mp_lamb_update_phase1", ("grad", "mean", "var", "weight32"),
                             _check_lamb1),
    infer_type=_lamb_types("mp_lamb_update_phase1", ("grad", "mean", "var", "weight32"),
                           True, True),
    infer_storage=_lamb_storage("mp_lamb_update_phase1", ("grad", "mean", "var", "weight32")),
    compute=_lamb1, mutates=(2, 3), differentiable=False,
    doc="LAMB's phase 1 for a float16 weight with its float32 master copy ``weight32`` "
        "(MXNet's mp_lamb_update_phase1): the float16 grad is computed with in float32, "
        "the wd term reads weight32, g is float32.  " + _LAMB1_DOC)

register(
    "mp_lamb_update_phase2", inputs=("weight", "g", "r1", "r2", "weight32"),
    attrs=_LAMB2_ATTRS,
    infer_shape=_lamb_shapes("mp_lamb_update_phase2", ("g", "r1", "r2", "weight32"),
                             _check_lamb2),
    infer_type=_lamb_types("mp_lamb_update_phase2", ("g", "r1", "r2", "weight32"), True,
                           False),
    infer_storage=_lamb_storage("mp_lamb_update_phase2", ("g", "r1", "r2", "weight32")),
    compute=_lamb2("mp_lamb_update_phase2"), inplace=((0, 0),), mutates=(4,),
    differentiable=False,
    doc="LAMB's phase 2 for a float16 weight with its float32 master copy ``weight32`` "
        "(MXNet's mp_lamb_update_phase2): weight32 -= lr' g in place, and the output is "
        "weight32 cast to float16 (MXNet 1.9.1's kernel leaves weight32 as it was, so its "
        "LAMB never moves the master copy; ndrt does what MXNet documents).  " + _LAMB2_DOC)


# multi_sgd_update, multi_sgd_mom_update, multi_mp_sgd_update, multi_mp_sgd_mom_update: the
# SGD updates of several weights in one call (MXNet's aggregated updates, which its SGD
# optimizer runs for up to MXNET_OPTIMIZER_AGGREGATION_SIZE dense weights at a time)

MAX_WEIGHTS = 60      # MXNet's multi-SGD kernels take at most this many weights per call


def _multi_names(mom, mp):
    return ("weight", "grad") + (("mom",) if mom else ()) + (("weight32",) if mp else ())


def check_lrs(op, lrs, n):
    """lrs is left out of inference (_LRS): the kernels check it at every call."""
    if len(lrs) != n:
        raise ValueError(f"{op}: lrs must have num_weights={n} entries (got {len(lrs)})")
    for v in lrs:
        if not 0.0 <= v < _INF:
            raise ValueError(f"{op}: lrs must be finite and >= 0 (got {lrs!r})")


def _check_multi(op, attrs, n_in, names):
    n, k = attrs["num_weights"], len(names)
    if not 1 <= n <= MAX_WEIGHTS:
        raise ValueError(f"{op}: num_weights must be in [1, {MAX_WEIGHTS}] (got {n})")
    if n_in != k * n:
        raise ValueError(f"{op}: takes {k} arrays per weight ({', '.join(names)}), "
                         f"{k * n} for num_weights={n} (got {n_in})")
    if len(attrs["wds"]) != n:
        raise ValueError(f"{op}: wds must have num_weights={n} entries (got "
                         f"{len(attrs['wds'])})")
    if not all(math.isfinite(v) for v in attrs["wds"]):
        raise ValueError(f"{op}: wds must be finite (got {attrs['wds']!r})")
    _finite(op, attrs, "rescale_grad")
    if math.isnan(attrs["clip_gradient"]):
        raise ValueError(f"{op}: clip_gradient must be a number, < 0 for no clipping (got "
                         f"nan)")
    if "momentum" in attrs:
        _finite(op, attrs, "momentum", lo=0, hi=1)


def _multi_shape(op, names):
    def infer(attrs, shapes):
        _check_multi(op, attrs, len(shapes), names)
        k, out = len(names), []
        for i in range(attrs["num_weights"]):
            w = shapes[k * i]
            for name, s in zip(names[1:], shapes[k * i + 1:k * i + k]):
                if s != w:
                    raise ValueError(f"{op}: {name} {i} must have weight {i}'s shape {w!r} "
                                     f"(got {s!r})")
            out.append(w)
        return out
    return infer


def _multi_type(op, names, mp):
    def infer(attrs, dtypes):
        k, out = len(names), []
        for i in range(len(dtypes) // k):
            w = dtypes[k * i]
            if mp and w != np.float16:
                raise TypeError(f"{op}: weight {i} must be float16 (got {w})")
            if not mp and w not in _FLOATS:
                raise TypeError(f"{op}: weight {i} must be float32 or float64 (got {w})")
            for name, d in zip(names[1:], dtypes[k * i + 1:k * i + k]):
                want = w if (name == "grad" or not mp) else np.dtype(np.float32)
                if d != want:
                    raise TypeError(f"{op}: {name} {i} must have dtype {want} (got {d})")
            out.append(w)
        return out
    return infer


def _multi_storage(op, names):
    def infer(attrs, stypes):
        k = len(names)
        for j, s in enumerate(stypes):
            if s != "default":
                raise NotImplementedError(f"{op}: {names[j % k]} {j // k} must have storage "
                                          f"type 'default', as MXNet's (got {s!r})")
        return ["default"] * (len(stypes) // k), "dense"
    return infer


def _multi_compute(op, names, mp):
    """The kernel: one compiled call over every weight (runtime._sparse_optim's
    multi_sgd_update) on the host; the mixed-precision forms update each float32 master
    copy with sgd_update's kernel and cast it into the float16 weight; a device runs
    sgd_update's formulas per weight."""
    k, mom = len(names), "mom" in names

    def compute(attrs, ins, outs):
        n = len(outs)
        check_lrs(op, attrs["lrs"], n)
        lrs, wds = attrs["lrs"], attrs["wds"]
        groups = [ins[k * i:k * i + k] for i in range(n)]
        # the invoker puts every input on one context: the first output tells which
        if not mp and isinstance(outs[0], np.ndarray):
            K.multi_sgd_update(list(outs), [g[0] for g in groups], [g[1] for g in groups],
                               [g[2] for g in groups] if mom else None, lrs, wds,
                               attrs["rescale_grad"], attrs["clip_gradient"],
                               attrs.get("momentum", 0.0))
            return
        for i, g in enumerate(groups):
            one = {"lr": lrs[i], "wd": wds[i], "rescale_grad": attrs["rescale_grad"],
                   "clip_gradient": attrs["clip_gradient"],
                   "momentum": attrs.get("momentum", 0.0)}
            w, grad, states = g[0], g[1], list(g[2:3]) if mom else []
            if mp:
                w, grad = g[k - 1], g[1].astype(np.float32)
            if isinstance(w, np.ndarray):
                K.sgd_update(w if mp else outs[i], w, grad, None,
                             states[0] if states else None, one["lr"], one["wd"],
                             one["rescale_grad"], one["clip_gradient"], one["momentum"],
                             False)
            else:
                _sgd_device(w, grad, states, w if mp else outs[i], one)
            if mp:
                outs[i][...] = w
    return compute


_LRS = Attr("floats", required=True, infer=False)
_MULTI_DOC = """  ``data`` holds, per weight, {arrays}; ``lrs`` and ``wds`` one learning rate and
weight decay per weight; ``num_weights`` (1 to {max}) the number of weights.  The result
is the list of updated weights (``out=`` the weights: in place){states}.  Dense arrays
only, as MXNet's."""

for _name, _mom, _mp, _formula in (
        ("multi_sgd_update", False, False,
         "weight = (1 - lr wd) weight - lr clip(rescale_grad grad, clip_gradient), as "
         "sgd_update"),
        ("multi_sgd_mom_update", True, False,
         "mom = momentum mom - lr wd weight - lr clip(rescale_grad grad, clip_gradient); "
         "weight += mom, as sgd_mom_update"),
        ("multi_mp_sgd_update", False, True,
         "sgd_update on the float32 master copy weight32 of a float16 weight (the float16 "
         "grad computed with in float32), then weight = weight32 cast to float16"),
        ("multi_mp_sgd_mom_update", True, True,
         "sgd_mom_update on the float32 master copy weight32 of a float16 weight (mom "
         "float32), then weight = weight32 cast to float16")):
    _names = _multi_names(_mom, _mp)
    _k = len(_names)
    _attrs = {"lrs": _LRS, "wds": Attr("floats", required=True)}
    if _mom:
        _attrs["momentum"] = Attr("float", 0.0)
    _attrs.update({"rescale_grad": Attr("float", 1.0), "clip_gradient": Attr("float", -1.0),
                   "num_weights": Attr("int", 1)})
    _written = tuple(_k * i + j for i in range(MAX_WEIGHTS) for j in range(2, _k))
    register(
        _name, inputs=("data",), variadic=True, attrs=_attrs,
        num_outputs=lambda attrs: attrs["num_weights"],
        infer_shape=_multi_shape(_name, _names), infer_type=_multi_type(_name, _names, _mp),
        infer_storage=_multi_storage(_name, _names),
        compute=_multi_compute(_name, _names, _mp),
        inplace=tuple((_k * i, i) for i in range(MAX_WEIGHTS)), mutates=_written,
        differentiable=False,
        doc=f"""SGD of several weights in one call (MXNet's {_name}): {_formula}.
""" + _MULTI_DOC.format(arrays=", ".join(_names), max=MAX_WEIGHTS,
                        states="; " + " and ".join(_names[2:]) + " are updated in place"
                        if _k > 2 else ""))
