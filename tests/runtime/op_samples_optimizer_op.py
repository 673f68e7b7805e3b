"""Samples of the optimizer update operators (runtime/ops/optimizer_op.py): dense and row_sparse
gradients (lazy and standard updates), the failures of bad attributes, shapes, dtypes and
storage types, and 0-size weights.  The updates are not differentiable: no grad samples.
Values are checked against NumPy in depth by tests/runtime/test_optim.py."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, _csr, _rsp, _sparse_input, positive, uniform,
                                      zeros)

F32 = np.float32


def _weight(seed, shape=(4, 3), dtype=np.float64):
    return uniform(shape, seed=seed, dtype=dtype)


def _states(n, seed, shape=(4, 3), dtype=np.float64):
    """``n`` state arrays; the last one positive (var, history: sums of squares)."""
    out = [uniform(shape, -0.5, 0.5, seed=seed + i, dtype=dtype) for i in range(n - 1)]
    return out + [positive(shape, seed=seed + n).astype(dtype)] if n else out


# (name, states, attrs of a sample)
UPDATES = [
    ("sgd_update", 0, {"lr": 0.1, "wd": 0.01}),
    ("sgd_mom_update", 1, {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "clip_gradient": 0.5}),
    ("adam_update", 2, {"lr": 0.01, "beta1": 0.8, "wd": 0.1, "rescale_grad": 0.5}),
    ("adagrad_update", 1, {"lr": 0.1, "epsilon": 1e-6, "rescale_grad": 2.0}),
    ("nag_mom_update", 1, {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "clip_gradient": 0.5}),
    ("rmsprop_update", 1, {"lr": 0.01, "gamma1": 0.9, "wd": 0.1, "clip_weights": 0.6}),
    # epsilon 1: n - g^2 + epsilon stays > 0 with the samples' random states
    ("rmspropalex_update", 3, {"lr": 0.01, "gamma1": 0.9, "gamma2": 0.8, "epsilon": 1.0,
                               "wd": 0.1}),
    ("ftrl_update", 2, {"lr": 0.1, "lamda1": 0.01, "beta": 1.0, "wd": 0.01}),
    ("signum_update", 1, {"lr": 0.01, "momentum": 0.9, "wd": 0.01, "wd_lh": 0.1}),
    ("signsgd_update", 0, {"lr": 0.01, "wd": 0.01}),
    ("ftml_update", 3, {"lr": 0.05, "beta1": 0.6, "t": 2, "wd": 0.01}),
]
# The clipping attribute where it is not clip_gradient (MXNet's names).
CLIP = {"ftml_update": "clip_grad"}
# The updates with MXNet's lazy_update attribute (the others are always lazy).
LAZY_ATTR = ("sgd_update", "sgd_mom_update", "adam_update")

for _i, (_name, _n, _attrs) in enumerate(UPDATES):
    _s = 10 * _i
    _lazy = {"lazy_update": False} if _name in LAZY_ATTR else {}
    _add(SAMPLES, _name,
         Sample([_weight(_s), uniform((4, 3), seed=_s + 1), *_states(_n, _s + 2)], _attrs,
                grad=False),
         Sample([_weight(_s, (5,), F32), uniform((5,), seed=_s + 1, dtype=F32),
                 *_states(_n, _s + 2, (5,), F32)],
                {**_attrs, CLIP.get(_name, "clip_gradient"): 0.3},
                grad=False),
         Sample([_weight(_s, (2, 2, 3)), uniform((2, 2, 3), seed=_s + 1),
                 *_states(_n, _s + 2, (2, 2, 3))], _attrs, grad=False),
         # row_sparse gradients: lazy (only the stored rows) and standard
         Sample([_weight(_s), _rsp(_sparse_input((4, 3), _s + 1)), *_states(_n, _s + 2)],
                _attrs, grad=False),
         Sample([_weight(_s), _rsp(_sparse_input((4, 3), _s + 1)), *_states(_n, _s + 2)],
                {**_attrs, **_lazy}, grad=False),
         Sample([_weight(_s, dtype=F32), _rsp(_sparse_input((4, 3), _s + 1).astype(F32)),
                 *_states(_n, _s + 2, dtype=F32)], _attrs, grad=False))
    _w, _g, _st = _weight(_s), uniform((4, 3), seed=_s + 1), _states(_n, _s + 2)
    _add(FAILURES, _name,
         Failure([_w, _g, *_st], {**_attrs, "lr": -0.1}, ValueError,
                 rf"^{_name}: lr must be finite and >= 0 \(got -0\.1\)"),
         Failure([_w, _g, *_st], {**_attrs, "wd": float("nan")}, ValueError,
                 rf"^{_name}: wd must be finite \(got nan\)"),
         Failure([_w, uniform((3, 4)), *_st], _attrs, ValueError,
                 rf"^{_name}: grad must have the weight's shape \(4, 3\) \(got \(3, 4\)\)"),
         Failure([_w, _g.astype(F32), *_st], _attrs, TypeError,
                 rf"^{_name}: grad must have the weight's dtype float64 \(got float32\)"),
         Failure([_w.astype(np.int64), _g.astype(np.int64), *[s.astype(np.int64)
                                                              for s in _st]],
                 _attrs, TypeError,
                 rf"^{_name}: weight must be float16, float32 or float64 \(got int64\)"),
         Failure([_w, _csr(_sparse_input((4, 3), _s + 1)), *_st], _attrs,
                 NotImplementedError,
                 rf"^{_name}: grad must have storage type 'default' or 'row_sparse' "
                 r"\(got 'csr'\)"),
         Failure([_csr(_sparse_input((4, 3), _s)), _g, *_st], _attrs, NotImplementedError,
                 rf"^{_name}: weight must have storage type 'default' or 'row_sparse' "
                 r"\(got 'csr'\)"),
         Failure([_w, _rsp(_sparse_input((4, 2), _s + 1)), *_st], _attrs, ValueError,
                 rf"^{_name}: grad must have the weight's shape \(4, 3\) \(got \(4, 2\)\)"))
    if _n:
        _state = {"sgd_mom_update": "mom", "adam_update": "mean",
                  "adagrad_update": "history", "nag_mom_update": "mom", "rmsprop_update": "n",
                  "rmspropalex_update": "n",
                  "ftrl_update": "z", "signum_update": "mom", "ftml_update": "d"}[_name]
        _add(FAILURES, _name,
             Failure([_w, _g, uniform((4, 2)), *_st[1:]], _attrs, ValueError,
                     rf"^{_name}: {_state} must have the weight's shape \(4, 3\) "
                     r"\(got \(4, 2\)\)"),
             Failure([_w, _g, _st[0].astype(F32), *_st[1:]], _attrs, TypeError,
                     rf"^{_name}: {_state} must have the weight's dtype float64 "
                     r"\(got float32\)"),
             Failure([_w, _rsp(_sparse_input((4, 3), _s + 1)), uniform((4, 2)), *_st[1:]],
                     _attrs, ValueError, rf"^{_name}: {_state} must have the weight's shape"))
    _add(ZERO_SIZE, _name,
         ZeroSize([zeros(0, 3), zeros(0, 3), *[zeros(0, 3)] * _n], _attrs,
                  lambda w, *rest: w),
         ZeroSize([zeros(0, 3), _rsp(zeros(0, 3)), *[zeros(0, 3)] * _n], _attrs,
                  lambda w, *rest: w))

_ATTRS = dict((n, a) for n, _, a in UPDATES)
_W, _G = _weight(50), uniform((4, 3), seed=51)
_add(FAILURES, "sgd_mom_update",
     Failure([_W, _G, zeros(4, 3)], {"lr": 0.1, "momentum": 1.5}, ValueError,
             r"^sgd_mom_update: momentum must be in \[0, 1\) \(got 1\.5\)"))
_add(FAILURES, "adam_update",
     Failure([_W, _G, zeros(4, 3), zeros(4, 3)], {"lr": 0.1, "beta1": 1.0}, ValueError,
             r"^adam_update: beta1 must be in \[0, 1\) \(got 1\.0\)"),
     Failure([_W, _G, zeros(4, 3), zeros(4, 3)], {"lr": 0.1, "beta2": -0.1}, ValueError,
             r"^adam_update: beta2 must be in \[0, 1\) \(got -0\.1\)"),
     Failure([_W, _G, zeros(4, 3), zeros(4, 3)], {"lr": 0.1, "epsilon": 0.0}, ValueError,
             r"^adam_update: epsilon must be finite and > 0 \(got 0\.0\)"),
     Failure([_W, _G, zeros(4, 3), zeros(4, 3)], {"lr": 0.1, "clip_gradient": float("nan")},
             ValueError, r"^adam_update: clip_gradient must be a number, < 0 for no "
                         r"clipping \(got nan\)"),
     Failure([_W, _G, zeros(4, 3), zeros(4, 3)], {}, TypeError, r"^adam_update: .*lr"))
_add(FAILURES, "adagrad_update",
     Failure([_W, _G, zeros(4, 3)], {"lr": 0.1, "epsilon": -1e-7}, ValueError,
             r"^adagrad_update: epsilon must be finite and > 0 \(got -1e-07\)"))
_add(FAILURES, "rmsprop_update",
     Failure([_W, _G, zeros(4, 3)], {"lr": 0.1, "gamma1": 1.0}, ValueError,
             r"^rmsprop_update: gamma1 must be in \[0, 1\) \(got 1\.0\)"),
     Failure([_W, _G, zeros(4, 3)], {"lr": 0.1, "clip_weights": float("nan")}, ValueError,
             r"^rmsprop_update: clip_weights must be a number, < 0 for no clipping"))
_add(FAILURES, "ftrl_update",
     Failure([_W, _G, zeros(4, 3), zeros(4, 3)], {"lr": 0.1, "lamda1": -1.0}, ValueError,
             r"^ftrl_update: lamda1 must be finite and >= 0 \(got -1\.0\)"))
_add(FAILURES, "nag_mom_update",
     Failure([_W, _G, zeros(4, 3)], {"lr": 0.1, "momentum": 1.0}, ValueError,
             r"^nag_mom_update: momentum must be in \[0, 1\) \(got 1\.0\)"))
_add(FAILURES, "signum_update",
     Failure([_W, _G, zeros(4, 3)], {"lr": 0.1, "momentum": -0.5}, ValueError,
             r"^signum_update: momentum must be in \[0, 1\) \(got -0\.5\)"))
_add(FAILURES, "rmspropalex_update",
     Failure([_W, _G, zeros(4, 3), zeros(4, 3), zeros(4, 3)], {"lr": 0.1, "gamma2": 1.0},
             ValueError, r"^rmspropalex_update: gamma2 must be in \[0, 1\) \(got 1\.0\)"))
_add(FAILURES, "ftml_update",
     Failure([_W, _G, zeros(4, 3), zeros(4, 3), zeros(4, 3)], {"lr": 0.1, "t": 0}, ValueError,
             r"^ftml_update: t must be an integer >= 1, the update count \(got 0\)"),
     Failure([_W, _G, zeros(4, 3), zeros(4, 3), zeros(4, 3)],
             {"lr": 0.1, "t": 1, "clip_grad": float("nan")}, ValueError,
             r"^ftml_update: clip_grad must be a number, < 0 for no clipping"))

# LAMB's phases: phase 1 (weight, grad, mean, var[, weight32]) -> g; phase 2 (weight, g,
# r1, r2[, weight32]) -> the weight; the mp_ forms take a float16 weight (and grad).
F16 = np.float16
_L1 = {"t": 2, "wd": 0.01, "beta1": 0.8, "clip_gradient": 0.5, "rescale_grad": 2.0}
_L2 = {"lr": 0.1, "lower_bound": 0.5, "upper_bound": 3.0}


def _lamb_in(seed, shape=(4, 3), dtype=np.float64, mp=False):
    """weight, grad, mean, var (var positive), weight32 where ``mp``."""
    low = F16 if mp else dtype
    w = _weight(seed, shape, low)
    ins = [w, uniform(shape, seed=seed + 1, dtype=low),
           uniform(shape, -0.5, 0.5, seed=seed + 2, dtype=dtype),
           positive(shape, seed=seed + 3).astype(dtype)]
    return ins + [w.astype(dtype)] if mp else ins


def _norms(seed, dtype=np.float64):
    return [positive((1,), seed=seed).astype(dtype), positive((1,), seed=seed + 1).astype(dtype)]


for _mp in (False, True):
    _p = "mp_" if _mp else ""
    _d = F32 if _mp else np.float64
    _a = _lamb_in(70, dtype=_d, mp=_mp)
    _extra = _a[4:]
    _add(SAMPLES, _p + "lamb_update_phase1",
         Sample(_a, _L1, grad=False),
         Sample(_lamb_in(71, (5,), F32, _mp), {"t": 1, "wd": 0.0, "bias_correction": False},
                grad=False))
    _add(SAMPLES, _p + "lamb_update_phase2",
         Sample([_a[0], uniform((4, 3), seed=72, dtype=_d), *_norms(73, _d), *_extra], _L2,
                grad=False),
         Sample([_a[0], uniform((4, 3), seed=74, dtype=_d), zeros(1).astype(_d),
                 *_norms(75, _d)[1:], *_extra], {"lr": 0.05}, grad=False))
    _add(ZERO_SIZE, _p + "lamb_update_phase1",
         ZeroSize([zeros(0, 3).astype(F16 if _mp else np.float64),
                   zeros(0, 3).astype(F16 if _mp else np.float64)]
                  + [zeros(0, 3).astype(_d)] * (3 if _mp else 2), _L1,
                  lambda w, *rest: w.astype(_d)))
    _add(ZERO_SIZE, _p + "lamb_update_phase2",
         ZeroSize([zeros(0, 3).astype(F16 if _mp else np.float64), zeros(0, 3).astype(_d),
                   *_norms(76, _d)] + ([zeros(0, 3).astype(_d)] if _mp else []), _L2,
                  lambda w, *rest: w))
    _add(FAILURES, _p + "lamb_update_phase1",
         Failure(_a, {**_L1, "t": 0}, ValueError,
                 rf"^{_p}lamb_update_phase1: t must be an integer >= 1, the update count "
                 r"\(got 0\)", out=False),
         Failure(_a, {**_L1, "beta2": 1.0}, ValueError,
                 rf"^{_p}lamb_update_phase1: beta2 must be in \[0, 1\) \(got 1\.0\)",
                 out=False),
         Failure(_a, {"t": 1}, TypeError, rf"^{_p}lamb_update_phase1: .*wd", out=False),
         Failure([_a[0], _a[1], uniform((4, 2)).astype(_d), *_a[3:]], _L1, ValueError,
                 rf"^{_p}lamb_update_phase1: mean must have the weight shape \(4, 3\) "
                 r"\(got \(4, 2\)\)", out=False),
         Failure([_a[0], _rsp(_sparse_input((4, 3), 77).astype(_a[1].dtype)), *_a[2:]],
                 _L1, NotImplementedError,
                 rf"^{_p}lamb_update_phase1: grad must have storage type 'default' "
                 r"\(got 'row_sparse'\)", out=False))
    _add(FAILURES, _p + "lamb_update_phase2",
         Failure([_a[0], uniform((4, 3), seed=78, dtype=_d), *_norms(79, _d), *_extra],
                 {"lr": -1.0}, ValueError,
                 rf"^{_p}lamb_update_phase2: lr must be finite and >= 0 \(got -1\.0\)"),
         Failure([_a[0], uniform((4, 3), seed=78, dtype=_d), uniform((2,)).astype(_d),
                  _norms(79, _d)[1], *_extra], _L2, ValueError,
                 rf"^{_p}lamb_update_phase2: r1 must have shape \(1,\) \(got \(2,\)\)"),
         Failure([_a[0], uniform((4, 3), seed=78, dtype=_d), *_norms(79, _d), *_extra],
                 {"lr": 0.1, "upper_bound": float("nan")}, ValueError,
                 rf"^{_p}lamb_update_phase2: upper_bound must be a number, < 0 for no "
                 r"bound \(got nan\)"))
_add(FAILURES, "lamb_update_phase1",
     Failure([_W.astype(np.int64)] * 4, _L1, TypeError,
             r"^lamb_update_phase1: weight must be float32 or float64 \(got int64\)",
             out=False),
     Failure([_W, _G.astype(F32), zeros(4, 3), zeros(4, 3)], _L1, TypeError,
             r"^lamb_update_phase1: grad must have dtype float64 \(got float32\)",
             out=False))
_add(FAILURES, "mp_lamb_update_phase1",
     Failure([_W.astype(F32), _G.astype(F32), *[zeros(4, 3).astype(F32)] * 3], _L1,
             TypeError, r"^mp_lamb_update_phase1: weight must be float16 \(got float32\)",
             out=False),
     Failure([_W.astype(F16), _G.astype(F16), zeros(4, 3), *[zeros(4, 3).astype(F32)] * 2],
             _L1, TypeError,
             r"^mp_lamb_update_phase1: mean must have dtype float32 \(got float64\)",
             out=False))


# The aggregated SGD updates: data holds (weight, grad[, mom][, weight32]) per weight; the
# mp_ forms take float16 weights and grads with float32 moms and master copies.
def _multi_in(seed, mom, mp, dtype=np.float64, shapes=((4, 3), (5,))):
    out = []
    for j, shape in enumerate(shapes):
        low = F16 if mp else dtype
        w = _weight(seed + 5 * j, shape, low)
        out += [w, uniform(shape, seed=seed + 5 * j + 1, dtype=low)]
        if mom:
            out.append(uniform(shape, -0.5, 0.5, seed=seed + 5 * j + 2,
                               dtype=F32 if mp else dtype))
        if mp:
            out.append(w.astype(F32))
    return out


_MULTI = {"lrs": (0.1, 0.05), "wds": (0.01, 0.0), "num_weights": 2}
for _mom in (False, True):
    for _mp in (False, True):
        _name = f"multi_{'mp_' if _mp else ''}sgd_{'mom_' if _mom else ''}update"
        _m = {"momentum": 0.9} if _mom else {}
        _k = 2 + _mom + _mp
        _a = _multi_in(90, _mom, _mp)
        _add(SAMPLES, _name,
             Sample(_a, {**_MULTI, **_m}, grad=False),
             Sample(_multi_in(95, _mom, _mp, F32),
                    {**_MULTI, **_m, "clip_gradient": 0.3, "rescale_grad": 0.5}, grad=False),
             Sample(_multi_in(97, _mom, _mp, shapes=((2, 2, 3),)),
                    {"lrs": 0.2, "wds": 0.1, **_m}, grad=False))
        _low = F16 if _mp else np.float64
        _add(ZERO_SIZE, _name,
             ZeroSize([zeros(0, 3).astype(_low)] * 2
                      + [zeros(0, 3).astype(F32 if _mp else np.float64)] * (_k - 2),
                      {"lrs": 0.1, "wds": 0.0, **_m}, lambda w, *rest: w))
        _add(FAILURES, _name,
             # found by the kernel (lrs is not part of inference): one weight, so that
             # the weight given as out= is the whole out=
             Failure(_a[:_k], {"lrs": -1.0, "wds": 0.0, **_m}, ValueError,
                     rf"^{_name}: lrs must be finite and >= 0 \(got \(-1\.0,\)\)"),
             Failure(_a, {**_MULTI, **_m, "wds": (0.1,)}, ValueError,
                     rf"^{_name}: wds must have num_weights=2 entries \(got 1\)", out=False),
             Failure(_a, {**_MULTI, **_m, "num_weights": 3}, ValueError,
                     rf"^{_name}: takes {_k} arrays per weight .*, {3 * _k} for "
                     rf"num_weights=3 \(got {2 * _k}\)", out=False),
             Failure(_a, {**_MULTI, **_m, "num_weights": 0, "lrs": (), "wds": ()},
                     ValueError, rf"^{_name}: num_weights must be in \[1, 60\] \(got 0\)",
                     out=False),
             Failure(_a[:_k + 1] + [uniform((4,), seed=3).astype(_a[_k + 1].dtype)]
                     + _a[_k + 2:], {**_MULTI, **_m}, ValueError,
                     rf"^{_name}: grad 1 must have weight 1's shape \(5,\) \(got \(4,\)\)",
                     out=False),
             Failure([_a[0], _rsp(_sparse_input((4, 3), 99).astype(_a[1].dtype))] + _a[2:],
                     {**_MULTI, **_m}, NotImplementedError,
                     rf"^{_name}: grad 0 must have storage type 'default', as MXNet's "
                     r"\(got 'row_sparse'\)", out=False))
        if _mom:
            _add(FAILURES, _name,
                 Failure(_a, {**_MULTI, "momentum": 1.0}, ValueError,
                         rf"^{_name}: momentum must be in \[0, 1\) \(got 1\.0\)", out=False),
                 Failure(_a[:2] + [_a[2].astype(F16 if not _mp else np.float64)] + _a[3:],
                         {**_MULTI, **_m}, TypeError,
                         rf"^{_name}: mom 0 must have dtype "
                         rf"{'float32' if _mp else 'float64'} \(got "
                         rf"{'float64' if _mp else 'float16'}\)", out=False))
_add(FAILURES, "multi_sgd_update",
     Failure([_W.astype(np.int64), _G.astype(np.int64)], {"lrs": 0.1, "wds": 0.0}, TypeError,
             r"^multi_sgd_update: weight 0 must be float32 or float64 \(got int64\)",
             out=False))
_add(FAILURES, "multi_mp_sgd_update",
     Failure([_W, _G, _W.astype(F32)], {"lrs": 0.1, "wds": 0.0}, TypeError,
             r"^multi_mp_sgd_update: weight 0 must be float16 \(got float64\)", out=False))
