"""The optimizer update operators and runtime.optimizer against NumPy references of MXNet's
update rules, over several steps: dense gradients, row_sparse gradients with lazy updates
(untouched rows keep their values and their state) and standard ones (equal to the dense
update of the densified gradient); momentum, weight decay, rescale and clip; Adam's bias
correction; clip_global_norm; gluon's Trainer; bad arguments that leave weight and state
unchanged.  (test_all_ops.py runs the generic checks from op_samples_optimizer_op.py.)"""

import math
import platform

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import nn
from runtime._sparse_common import set_arith_serial_cutoff
from tests.runtime.conftest import dense_values, free_failing_tests

F32, F64 = np.float32, np.float64


# -- NumPy references (float64; MXNet's formulas) ----------------------------------------

def _clip(g, clip):
    return np.clip(g, -clip, clip) if clip >= 0 else g


def ref_update(name, w, g, states, a):
    """One update of weight ``w`` by dense ``g``; returns (weight, states), new arrays."""
    lr, wd, rs, clip = a["lr"], a.get("wd", 0.0), a.get("rescale_grad", 1.0), \
        a.get(CLIP.get(name, "clip_gradient"), -1.0)
    if name == "ftml_update":
        b1, b2, eps, t = a.get("beta1", 0.6), a.get("beta2", 0.999), a.get("epsilon", 1e-8), a["t"]
        gr = _clip(rs * g + wd * w, clip)
        v = b2 * states[1] + (1 - b2) * gr * gr
        dt = (1 - b1 ** t) / lr * (np.sqrt(v / (1 - b2 ** t)) + eps)
        z = b1 * states[2] + (1 - b1) * gr - (dt - b1 * states[0]) * w
        return -z / dt, [dt, v, z]
    if name == "sgd_update":
        return (1 - lr * wd) * w - lr * _clip(rs * g, clip), []
    if name == "sgd_mom_update":
        m = a.get("momentum", 0.0) * states[0] - lr * wd * w - lr * _clip(rs * g, clip)
        return w + m, [m]
    if name == "adam_update":
        b1, b2, eps = a.get("beta1", 0.9), a.get("beta2", 0.999), a.get("epsilon", 1e-8)
        gr = _clip(rs * g + wd * w, clip)
        mean = b1 * states[0] + (1 - b1) * gr
        var = b2 * states[1] + (1 - b2) * gr * gr
        return w - lr * mean / (np.sqrt(var) + eps), [mean, var]
    if name == "nag_mom_update":
        step = lr * (_clip(rs * g, clip) + wd * w)
        m = a.get("momentum", 0.0) * states[0] - step
        return w + a.get("momentum", 0.0) * m - step, [m]
    if name == "rmsprop_update":
        g1, eps, cw = a.get("gamma1", 0.95), a.get("epsilon", 1e-8), a.get("clip_weights", -1)
        gr = _clip(rs * g + wd * w, clip)
        n = (1 - g1) * gr * gr + g1 * states[0]
        return _clip(w - lr * gr / np.sqrt(n + eps), cw), [n]
    if name == "rmspropalex_update":
        g1, g2 = a.get("gamma1", 0.95), a.get("gamma2", 0.9)
        eps, cw = a.get("epsilon", 1e-8), a.get("clip_weights", -1)
        gr = _clip(rs * g + wd * w, clip)
        n = (1 - g1) * gr * gr + g1 * states[0]
        gm = (1 - g1) * gr + g1 * states[1]
        delta = g2 * states[2] - lr * gr / np.sqrt(n - gm * gm + eps)
        return _clip(w + delta, cw), [n, gm, delta]
    if name == "ftrl_update":
        l1, beta = a.get("lamda1", 0.01), a.get("beta", 1.0)
        gr = _clip(rs * g, clip)
        z = states[0] + gr - (np.sqrt(states[1] + gr * gr) - np.sqrt(states[1])) * w / lr
        n = states[1] + gr * gr
        return (np.sign(z) * l1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > l1), [z, n]
    if name == "signum_update":
        mo = a.get("momentum", 0.0)
        m = mo * states[0] - (1 - mo) * wd * w - (1 - mo) * _clip(rs * g, clip)
        return (1 - lr * a.get("wd_lh", 0.0)) * w + lr * np.sign(m), [m]
    if name == "signsgd_update":
        return (1 - lr * wd) * w - lr * np.sign(g), []
    assert name == "adagrad_update"
    gr = _clip(rs * g, clip)
    h = states[0] + gr * gr
    return w - lr * (gr / np.sqrt(h + a.get("epsilon", 1e-7)) + wd * w), [h]


def ref_lazy(name, w, rows, grows, states, a):
    """The lazy update: only ``rows`` (their gradient rows ``grows``) change."""
    w, states = w.copy(), [s.copy() for s in states]
    if len(rows):
        nw, ns = ref_update(name, w[rows], grows, [s[rows] for s in states], a)
        w[rows] = nw
        for s, n in zip(states, ns):
            s[rows] = n
    return w, states


N_STATES = {"sgd_update": 0, "sgd_mom_update": 1, "adam_update": 2, "adagrad_update": 1,
            "nag_mom_update": 1, "rmsprop_update": 1, "rmspropalex_update": 3,
            "ftrl_update": 2, "signum_update": 1, "ftml_update": 3,
            "signsgd_update": 0}
# The updates with MXNet's lazy_update attribute (the others are always lazy).
LAZY_ATTR = ("sgd_update", "sgd_mom_update", "adam_update")
# The updates without a row_sparse kernel in MXNet: a row_sparse gradient takes the
# standard update (MXNet's storage fallback densifies it).
STANDARD_ONLY = ("nag_mom_update", "rmsprop_update", "rmspropalex_update", "ftrl_update",
                 "signum_update", "signsgd_update", "ftml_update")
# The clipping attribute where it is not clip_gradient (MXNet's names).
CLIP = {"ftml_update": "clip_grad"}
# sign(NaN) is 0 in MXNet's kernels: a NaN gradient leaves Signum's weight finite.
SIGN_OPS = ("signum_update", "signsgd_update")
ATTRS = {
    "sgd_update": {"lr": 0.1, "wd": 0.05, "rescale_grad": 0.5, "clip_gradient": 0.4},
    "sgd_mom_update": {"lr": 0.1, "momentum": 0.9, "wd": 0.05, "rescale_grad": 0.5,
                       "clip_gradient": 0.4},
    "adam_update": {"lr": 0.01, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6, "wd": 0.05,
                    "rescale_grad": 0.5, "clip_gradient": 0.4},
    "adagrad_update": {"lr": 0.1, "epsilon": 1e-6, "wd": 0.05, "rescale_grad": 0.5,
                       "clip_gradient": 0.4},
    "nag_mom_update": {"lr": 0.1, "momentum": 0.9, "wd": 0.05, "rescale_grad": 0.5,
                       "clip_gradient": 0.4},
    "rmsprop_update": {"lr": 0.01, "gamma1": 0.9, "epsilon": 1e-6, "wd": 0.05,
                       "rescale_grad": 0.5, "clip_gradient": 0.4, "clip_weights": 1.5},
    "rmspropalex_update": {"lr": 0.01, "gamma1": 0.9, "gamma2": 0.8, "epsilon": 1e-4,
                           "wd": 0.05, "rescale_grad": 0.5, "clip_gradient": 0.4,
                           "clip_weights": 1.5},
    "ftrl_update": {"lr": 0.1, "lamda1": 0.05, "beta": 1.0, "wd": 0.05, "rescale_grad": 0.5,
                    "clip_gradient": 0.4},
    "signum_update": {"lr": 0.01, "momentum": 0.9, "wd": 0.05, "rescale_grad": 0.5,
                      "clip_gradient": 0.4, "wd_lh": 0.1},
    "signsgd_update": {"lr": 0.01, "wd": 0.05, "rescale_grad": 0.5, "clip_gradient": 0.4},
    "ftml_update": {"lr": 0.05, "beta1": 0.6, "beta2": 0.99, "epsilon": 1e-6, "t": 3,
                    "wd": 0.05, "rescale_grad": 0.5, "clip_grad": 0.4},
}
OPS = sorted(N_STATES)


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == F32 else dict(rtol=1e-12, atol=1e-13)


def _initial(name, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape)
    states = [rng.standard_normal(shape) * 0.1 for _ in range(N_STATES[name])]
    if name == "rmspropalex_update":       # n: a mean square above the mean's square
        states[0] = np.abs(states[0]) + 1.0
    if name == "ftml_update":              # v: a mean square
        states[1] = np.abs(states[1])
    if name in ("adam_update", "adagrad_update", "rmsprop_update", "ftrl_update"):
        # var, history, n: sums of squares
        states[-1] = np.abs(states[-1])
    return w.astype(dtype), [s.astype(dtype) for s in states]


def _rsp_grad(rng, shape, rows, dtype):
    values = rng.standard_normal((len(rows),) + shape[1:]).astype(dtype)
    dense = np.zeros(shape, dtype)
    dense[rows] = values
    return nd.sparse.row_sparse_array((values, np.asarray(rows, np.int64)), shape=shape,
                                      dtype=dtype), dense, values


# -- the operators ------------------------------------------------------------------------

@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("shape", [(6, 3), (5,), (3, 2, 4)])
def test_dense_update_matches_numpy(name, dtype, shape):
    attrs = ATTRS[name]
    w0, s0 = _initial(name, shape, dtype)
    w, states = nd.array(w0, dtype=dtype), [nd.array(s, dtype=dtype) for s in s0]
    rw, rs = w0.astype(F64), [s.astype(F64) for s in s0]
    rng = np.random.default_rng(1)
    for _ in range(3):
        g = rng.standard_normal(shape).astype(dtype)
        getattr(nd, name)(w, nd.array(g, dtype=dtype), *states, out=w, **attrs)
        rw, rs = ref_update(name, rw, g.astype(F64), rs, attrs)
        np.testing.assert_allclose(w.asnumpy(), rw, **_tol(dtype))
        for s, r in zip(states, rs):
            np.testing.assert_allclose(s.asnumpy(), r, **_tol(dtype))
    assert w.dtype == dtype and all(s.dtype == dtype for s in states)


@pytest.mark.parametrize("name", [n for n in OPS if n not in STANDARD_ONLY])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_lazy_row_sparse_update_touches_only_the_rows_present(name, dtype):
    attrs = ATTRS[name]
    shape = (8, 3)
    w0, s0 = _initial(name, shape, dtype)
    w, states = nd.array(w0, dtype=dtype), [nd.array(s, dtype=dtype) for s in s0]
    rw, rs = w0.astype(F64), [s.astype(F64) for s in s0]
    rng = np.random.default_rng(2)
    for rows in ([1, 4, 5], [0, 4], [], [7]):
        g, _, values = _rsp_grad(rng, shape, rows, dtype)
        getattr(nd, name)(w, g, *states, out=w, **attrs)
        rw, rs = ref_lazy(name, rw, rows, values.astype(F64), rs, attrs)
        np.testing.assert_allclose(w.asnumpy(), rw, **_tol(dtype))
        for s, r in zip(states, rs):
            np.testing.assert_allclose(s.asnumpy(), r, **_tol(dtype))
    untouched = [2, 3, 6]          # never in a gradient: exactly their first values
    np.testing.assert_array_equal(w.asnumpy()[untouched], w0[untouched])
    for s, s_first in zip(states, s0):
        np.testing.assert_array_equal(s.asnumpy()[untouched], s_first[untouched])


@pytest.mark.parametrize("name", [n for n in OPS if n in LAZY_ATTR + STANDARD_ONLY])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_standard_row_sparse_update_equals_the_dense_update(name, dtype):
    attrs = {**ATTRS[name], **({"lazy_update": False} if name in LAZY_ATTR else {})}
    shape = (7, 2, 2)
    w0, s0 = _initial(name, shape, dtype)
    w, states = nd.array(w0, dtype=dtype), [nd.array(s, dtype=dtype) for s in s0]
    dw, dstates = nd.array(w0, dtype=dtype), [nd.array(s, dtype=dtype) for s in s0]
    rng = np.random.default_rng(3)
    for rows in ([0, 3], [6], []):
        g, dense, _ = _rsp_grad(rng, shape, rows, dtype)
        getattr(nd, name)(w, g, *states, out=w, **attrs)
        getattr(nd, name)(dw, nd.array(dense, dtype=dtype), *dstates, out=dw, **attrs)
        np.testing.assert_allclose(w.asnumpy(), dw.asnumpy(), rtol=1e-6, atol=1e-7)
        for s, d in zip(states, dstates):
            np.testing.assert_allclose(s.asnumpy(), d.asnumpy(), rtol=1e-6, atol=1e-7)
    assert not np.array_equal(w.asnumpy()[[1, 2, 4, 5]], w0[[1, 2, 4, 5]])   # wd, momentum


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("sparse", [False, True])
def test_out_semantics(name, sparse):
    """out=weight updates in place; without out= (or with another out=) the weight is
    left alone and the result is new, while the states are updated (as MXNet)."""
    attrs = ATTRS[name]
    shape = (5, 3)
    w0, s0 = _initial(name, shape, F64)
    rng = np.random.default_rng(4)
    if sparse:
        g, dense, values = _rsp_grad(rng, shape, [1, 3], F64)
        if name in STANDARD_ONLY:
            want, want_states = ref_update(name, w0, dense, s0, attrs)
        else:
            want, want_states = ref_lazy(name, w0, [1, 3], values, s0, attrs)
    else:
        dense = rng.standard_normal(shape)
        g = nd.array(dense, dtype=F64)
        want, want_states = ref_update(name, w0, dense, s0, attrs)
    for how in ("none", "other", "add"):
        w, states = nd.array(w0, dtype=F64), [nd.array(s, dtype=F64) for s in s0]
        version = w.version
        if how == "none":
            r = getattr(nd, name)(w, g, *states, **attrs)
            expect = want
        elif how == "other":
            r = nd.full(shape, 7.0, dtype=F64)
            getattr(nd, name)(w, g, *states, out=r, **attrs)
            expect = want
        else:
            r = nd.full(shape, 1.0, dtype=F64)
            getattr(nd, name)(w, g, *states, out=r, req="add", **attrs)
            expect = want + 1.0
        np.testing.assert_allclose(r.asnumpy(), expect, rtol=1e-12, atol=1e-13)
        np.testing.assert_array_equal(w.asnumpy(), w0)
        assert w.version == version
        for s, ws in zip(states, want_states):
            np.testing.assert_allclose(s.asnumpy(), ws, rtol=1e-12, atol=1e-13)
    w = nd.array(w0, dtype=F64)
    states = [nd.array(s, dtype=F64) for s in s0]
    version = w.version
    assert getattr(nd, name)(w, g, *states, out=w, **attrs) is w
    assert w.version > version
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-12, atol=1e-13)


def test_state_versions_are_bumped_and_the_tape_refuses_recorded_states():
    w, g, m = nd.ones((3, 2)), nd.ones((3, 2)), nd.zeros((3, 2))
    v = m.version
    nd.sgd_mom_update(w, g, m, out=w, lr=0.1, momentum=0.5)
    assert m.version > v
    m.attach_grad()
    with autograd.record():
        y = m * 2
        with pytest.raises(RuntimeError, match=r"^sgd_mom_update: cannot write into an "
                                               r"array on the autograd tape"):
            nd.sgd_mom_update(w, g, m, out=w, lr=0.1, momentum=0.5)
    del y


@pytest.mark.parametrize("name", OPS)
def test_threaded_kernels_match_the_serial_ones(name):
    """The OpenMP paths (forced on small inputs) give the serial results."""
    attrs = ATTRS[name]
    shape = (64, 5)
    w0, s0 = _initial(name, shape, F64, seed=5)
    rng = np.random.default_rng(6)
    g, dense, _ = _rsp_grad(rng, shape, sorted(rng.choice(64, 20, replace=False)), F64)
    results = []
    for cutoff in (1 << 40, 0):
        old = set_arith_serial_cutoff(cutoff)
        try:
            out = []
            for grad, extra in ((g, {}), (g, {"lazy_update": False}),
                                (nd.array(dense, dtype=F64), {})):
                if name not in LAZY_ATTR and extra:
                    continue
                w, states = nd.array(w0, dtype=F64), [nd.array(s, dtype=F64) for s in s0]
                getattr(nd, name)(w, grad, *states, out=w, **attrs, **extra)
                out.append([w.asnumpy()] + [s.asnumpy() for s in states])
            results.append(out)
        finally:
            set_arith_serial_cutoff(old)
    for a, b in zip(*results):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("clip", [-1.0, 0.4])
def test_device_formulas_match_the_host_kernels(name, clip):
    """The CuPy formulas of the dense kernels are array-generic: run on NumPy arrays,
    they give the host kernel's results (the GPU suite runs them on CuPy)."""
    from runtime.ops import optimizer_op as ops_optim
    from runtime.ops.registry import get
    op = get(name)
    attrs = op.parse_attrs({**ATTRS[name], CLIP.get(name, "clip_gradient"): clip})
    device = {"sgd_update": ops_optim._sgd_device, "sgd_mom_update": ops_optim._sgd_device,
              "adam_update": ops_optim._adam_device,
              "adagrad_update": ops_optim._adagrad_device,
              "nag_mom_update": ops_optim._nag_device,
              "rmsprop_update": ops_optim._rmsprop_device,
              "rmspropalex_update": ops_optim._rmspropalex_device,
              "ftrl_update": ops_optim._ftrl_device,
              "signum_update": ops_optim._signum_device,
              "signsgd_update": ops_optim._signum_device,
              "ftml_update": ops_optim._ftml_device}[name]
    w0, s0 = _initial(name, (4, 5), F64, seed=11)
    g = np.random.default_rng(12).standard_normal((4, 5))
    w, states, out = w0.copy(), [s.copy() for s in s0], np.empty_like(w0)
    device(w, g, states, out, attrs)
    want, want_states = ref_update(name, w0, g, s0, attrs)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(w, w0)
    for s, r in zip(states, want_states):
        np.testing.assert_allclose(s, r, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", [n for n in OPS if n not in SIGN_OPS])
@pytest.mark.parametrize("clip", [-1.0, 0.4])
def test_nan_gradients_propagate(name, clip):
    """A NaN gradient gives a NaN weight whether or not it is clipped (as NumPy's
    clip); the other values are updated normally."""
    w0, s0 = _initial(name, (2, 3), F32, seed=13)
    g = np.ones((2, 3), F32)
    g[1, 2] = np.nan
    w, states = nd.array(w0), [nd.array(s) for s in s0]
    attrs = {**ATTRS[name], CLIP.get(name, "clip_gradient"): clip}
    getattr(nd, name)(w, nd.array(g), *states, out=w, **attrs)
    got = w.asnumpy()
    assert np.isnan(got[1, 2])
    want, _ = ref_update(name, w0.astype(F64), g.astype(F64), [s.astype(F64) for s in s0],
                         attrs)
    np.testing.assert_allclose(np.delete(got.ravel(), 5), np.delete(want.ravel(), 5),
                               rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("rows, g_shape, exc, match", [
    (np.array([2, 1]), (2, 2), ValueError, r"rows must be sorted and unique \(got 1 after 2 "
                                           r"at position 1\)"),
    (np.array([0, 4]), (2, 2), IndexError, r"rows must lie in \[0, 4\) \(got 0 \.\. 4\)"),
    (np.array([0, 1], np.int32), (2, 2), TypeError, r"rows must be a 1-D int64 array"),
    (np.array([0, 1]), (3, 2), ValueError, r"grad must hold 2 rows of the weight's row "
                                           r"shape \(2,\) \(got shape \(3, 2\)\)"),
    (None, (2, 2), ValueError, r"a dense grad must have the weight's shape \(4, 2\)"),
])
def test_kernel_checks_change_nothing(rows, g_shape, exc, match):
    """runtime._sparse_optim checks every argument before it writes (the operators'
    inference refuses most of these first; rows come from a checked row_sparse array)."""
    from runtime import _sparse_optim as K
    w, out = np.ones((4, 2), F32), np.full((4, 2), 7, F32)
    m = np.zeros((4, 2), F32)
    with pytest.raises(exc, match="^sgd_update: " + match):
        K.sgd_update(out, w, np.ones(g_shape, F32), rows, m, 0.1, 0.0, 1.0, -1.0, 0.9, True)
    np.testing.assert_array_equal(out, 7)
    np.testing.assert_array_equal(w, 1)
    np.testing.assert_array_equal(m, 0)
    with pytest.raises(ValueError, match=r"^adam_update: out must be C-contiguous"):
        K.adam_update(np.ones((2, 4), F32).T, w, w, None, m, m, 0.1, 0.9, 0.9, 1e-8, 0.0,
                      1.0, -1.0, True)
    with pytest.raises(ValueError, match=r"^adagrad_update: history must be writeable"):
        ro = np.zeros((4, 2), F32)
        ro.flags.writeable = False
        K.adagrad_update(w, w, w, None, ro, 0.1, 1e-7, 0.0, 1.0, -1.0, True)
    np.testing.assert_array_equal(w, 1)


def test_adagrad_is_in_nd_sparse_under_mxnets_name():
    w, h = nd.ones((4, 2)), nd.zeros((4, 2))
    g = nd.sparse.row_sparse_array(np.array([[0, 0], [2, 2], [0, 0], [0, 0]], F32))
    nd.sparse.adagrad_update(w, g, h, lr=0.5, out=w)
    np.testing.assert_allclose(w.asnumpy()[1], 1 - 0.5 * 2 / (2 + 1e-7), rtol=1e-6)
    np.testing.assert_array_equal(w.asnumpy()[[0, 2, 3]], 1)
    np.testing.assert_array_equal(h.asnumpy(), [[0, 0], [4, 4], [0, 0], [0, 0]])


def test_lr_is_required_and_attributes_are_positional_in_mxnets_order():
    from runtime.ops.registry import get
    assert list(get("sgd_update").attrs) == ["lr", "wd", "rescale_grad", "clip_gradient",
                                             "lazy_update"]
    assert list(get("sgd_mom_update").attrs) == ["lr", "momentum", "wd", "rescale_grad",
                                                 "clip_gradient", "lazy_update"]
    assert list(get("adam_update").attrs) == ["lr", "beta1", "beta2", "epsilon", "wd",
                                              "rescale_grad", "clip_gradient", "lazy_update"]
    assert list(get("adagrad_update").attrs) == ["lr", "epsilon", "wd", "rescale_grad",
                                                 "clip_gradient"]
    w = nd.ones((2,))
    with pytest.raises(TypeError, match="lr"):
        nd.sgd_update(w, w, out=w)
    np.testing.assert_array_equal(w.asnumpy(), [1, 1])


def test_a_state_of_another_shape_leaves_everything_unchanged_with_a_sparse_grad():
    w, m = nd.ones((4, 2)), nd.full((4, 3), 0.5)
    g = nd.sparse.row_sparse_array(np.ones((4, 2), F32))
    with pytest.raises(ValueError, match=r"^sgd_mom_update: mom must have the weight's "
                                         r"shape \(4, 2\) \(got \(4, 3\)\)"):
        nd.sgd_mom_update(w, g, m, out=w, lr=0.1, momentum=0.9)
    np.testing.assert_array_equal(w.asnumpy(), np.ones((4, 2)))
    np.testing.assert_array_equal(m.asnumpy(), np.full((4, 3), 0.5))


# -- optimizers ---------------------------------------------------------------------------

def ref_optimizer(kind, kw, w, grads):
    """MXNet's optimizer ``kind`` applied to ``w`` for each (rows or None, dense grad)."""
    lr, wd = kw.get("learning_rate", 0.001 if kind == "adam" else 0.01), kw.get("wd", 0.0)
    rs = kw.get("rescale_grad", 1.0)
    clip = kw.get("clip_gradient")
    clip = -1.0 if clip is None else clip
    lazy = kw.get("lazy_update", True)
    if kind == "sgd":
        mom = kw.get("momentum", 0.0)
        name = "sgd_mom_update" if mom else "sgd_update"
        states = [np.zeros_like(w)] if mom else []
        attrs = {"lr": lr, "wd": wd, "rescale_grad": rs, "clip_gradient": clip,
                 "momentum": mom}
    elif kind == "adam":
        name, states = "adam_update", [np.zeros_like(w), np.zeros_like(w)]
        b1, b2 = kw.get("beta1", 0.9), kw.get("beta2", 0.999)
        attrs = {"wd": wd, "rescale_grad": rs, "clip_gradient": clip, "beta1": b1,
                 "beta2": b2, "epsilon": kw.get("epsilon", 1e-8)}
    elif kind == "adagrad":
        name, states = "adagrad_update", [np.zeros_like(w)]
        attrs = {"lr": lr, "wd": wd, "rescale_grad": rs, "clip_gradient": clip,
                 "epsilon": kw.get("eps", 1e-7)}
        lazy = True
    else:
        lr = kw.get("learning_rate", {"rmsprop": 0.001, "ftrl": 0.1}.get(kind, 0.01))
        attrs = {"lr": lr, "wd": wd, "rescale_grad": rs, "clip_gradient": clip}
        lazy = False          # no row_sparse kernel in MXNet: the standard update
        mom = kw.get("momentum", 0.9 if kind == "signum" else 0.0)
        if kind == "nag":
            name = "nag_mom_update" if mom else "sgd_update"
            states = [np.zeros_like(w)] if mom else []
            attrs["momentum"] = mom
        elif kind == "rmsprop":
            centered = kw.get("centered", False)
            name = "rmspropalex_update" if centered else "rmsprop_update"
            states = [np.zeros_like(w) for _ in range(3 if centered else 1)]
            cw = kw.get("clip_weights")
            attrs.update(gamma1=kw.get("gamma1", 0.9), gamma2=kw.get("gamma2", 0.9),
                         epsilon=kw.get("epsilon", 1e-8),
                         clip_weights=-1.0 if cw is None else cw)
        elif kind == "ftrl":
            name, states = "ftrl_update", [np.zeros_like(w), np.zeros_like(w)]
            attrs.update(lamda1=kw.get("lamda1", 0.01), beta=kw.get("beta", 1.0))
        else:
            name = "signum_update" if mom else "signsgd_update"
            states = [np.zeros_like(w)] if mom else []
            attrs.update(momentum=mom, wd_lh=kw.get("wd_lh", 0.0))
    for t, (rows, g) in enumerate(grads, 1):
        if kind == "adam":
            attrs["lr"] = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        if rows is not None and lazy:
            w, states = ref_lazy(name, w, rows, g[rows], states, attrs)
        else:
            w, states = ref_update(name, w, g, states, attrs)
    return w, states


OPTIMIZERS = [
    ("sgd", {"learning_rate": 0.1}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "lazy_update": False}),
    ("adam", {"learning_rate": 0.05, "wd": 0.01, "clip_gradient": 0.5}),
    ("adam", {"learning_rate": 0.05, "beta1": 0.5, "lazy_update": False,
              "rescale_grad": 0.25}),
    ("adagrad", {"learning_rate": 0.1, "eps": 1e-6, "wd": 0.01, "clip_gradient": 1.0}),
    ("nag", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "clip_gradient": 0.5}),
    ("nag", {"learning_rate": 0.1}),
    ("rmsprop", {"learning_rate": 0.01, "gamma1": 0.8, "wd": 0.01, "clip_weights": 1.0}),
    ("rmsprop", {"learning_rate": 0.01, "centered": True, "gamma2": 0.7, "epsilon": 1e-4,
                 "wd": 0.01}),
    ("ftrl", {"lamda1": 0.05, "beta": 0.5, "wd": 0.01, "rescale_grad": 0.5}),
    ("signum", {"learning_rate": 0.05, "wd": 0.01, "wd_lh": 0.1}),
    ("signum", {"learning_rate": 0.05, "momentum": 0.0}),
]


@pytest.mark.parametrize("kind, kw", OPTIMIZERS)
@pytest.mark.parametrize("sparse", [False, True])
def test_optimizer_matches_numpy(kind, kw, sparse):
    shape = (6, 3)
    rng = np.random.default_rng(7)
    w0 = rng.standard_normal(shape)
    grads = []
    for rows in ([0, 2], [2, 5], [1]):
        g = rng.standard_normal(shape)
        if sparse:
            keep = np.zeros(shape[0], bool)
            keep[rows] = True
            g[~keep] = 0
        grads.append((rows if sparse else None, g))
    opt = mx.optimizer.create(kind, **kw)
    w = nd.array(w0, dtype=F64)
    state = opt.create_state(0, w)
    for rows, g in grads:
        ga = (nd.sparse.row_sparse_array((g[rows], np.array(rows, np.int64)), shape=shape,
                                         dtype=F64) if sparse else nd.array(g, dtype=F64))
        opt.update(0, w, ga, state)
    want, want_states = ref_optimizer(kind, kw, w0, grads)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-12, atol=1e-13)
    got_states = [] if state is None else list(state) if isinstance(state, tuple) else [state]
    for s, r in zip(got_states, want_states):
        np.testing.assert_allclose(s.asnumpy(), r, rtol=1e-12, atol=1e-13)
    if sparse and kw.get("lazy_update", True) and kind in ("sgd", "adam", "adagrad"):
        np.testing.assert_array_equal(w.asnumpy()[[3, 4]], w0[[3, 4]])
        for s in got_states:
            np.testing.assert_array_equal(s.asnumpy()[[3, 4]], 0)
    assert opt.num_update == 3


def test_rmsprop_states_are_tuples_as_in_mxnet():
    # MXNet 1.x: (n,) for Tieleman and Hinton's form, (n, g, delta) for the centered one
    w = nd.ones((2, 3))
    plain = mx.optimizer.RMSProp().create_state(0, w)
    centered = mx.optimizer.RMSProp(centered=True).create_state(0, w)
    assert isinstance(plain, tuple) and len(plain) == 1 and plain[0].shape == (2, 3)
    assert isinstance(centered, tuple) and len(centered) == 3
    np.testing.assert_array_equal(plain[0].asnumpy(), 0)


def test_an_optimizer_pickles_without_its_parameters():
    import pickle
    p = mx.gluon.Parameter("w", shape=(2,), lr_mult=3.0)
    opt = mx.optimizer.SGD(learning_rate=0.5, param_dict={0: p})
    assert opt._get_lr(0) == 1.5
    back = pickle.loads(pickle.dumps(opt))
    assert back.param_dict == {} and back._get_lr(0) == 0.5 and back.lr == 0.5
    assert opt.param_dict == {0: p}          # the original keeps them


def test_multipliers_scheduler_and_learning_rate():
    opt = mx.optimizer.SGD(learning_rate=0.5)
    opt.set_lr_mult({0: 0.1})
    opt.set_wd_mult({0: 0.0})
    assert opt._get_lr(0) == pytest.approx(0.05) and opt._get_lr(1) == 0.5
    opt.set_learning_rate(0.2)
    assert opt.learning_rate == 0.2
    w = nd.ones((2,))
    opt.update(0, w, nd.ones((2,)), None)
    np.testing.assert_allclose(w.asnumpy(), 1 - 0.02, rtol=1e-6)

    class Param:
        lr_mult, wd_mult = 2.0, 0.5
    opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.2, param_dict={3: Param()})
    assert opt._get_lr(3) == pytest.approx(0.2) and opt._get_wd(3) == pytest.approx(0.1)

    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5)
    opt = mx.optimizer.SGD(learning_rate=1.0, lr_scheduler=sched)
    lrs = []
    w = nd.zeros((1,))
    for _ in range(5):
        lrs.append(opt.learning_rate)
        opt.update(0, w, nd.ones((1,)), None)
    assert lrs == [1.0, 1.0, 1.0, 0.5, 0.5]      # MXNet: decays once num_update > 2
    np.testing.assert_allclose(w.asnumpy(), [-(1.0 + 1.0 + 0.5 + 0.5 + 0.25)])
    with pytest.raises(UserWarning, match="LRScheduler"):
        opt.set_learning_rate(0.1)


@pytest.mark.parametrize("kind, kw, match", [
    ("sgd", {"learning_rate": -0.1}, r"^SGD: learning_rate must be finite and >= 0 "
                                     r"\(got -0\.1\)"),
    ("sgd", {"momentum": 1.0}, r"^SGD: momentum must be in \[0, 1\) \(got 1\.0\)"),
    ("adam", {"beta1": 1.0}, r"^Adam: beta1 must be in \[0, 1\) \(got 1\.0\)"),
    ("adam", {"beta2": -0.5}, r"^Adam: beta2 must be in \[0, 1\) \(got -0\.5\)"),
    ("adam", {"epsilon": 0}, r"^Adam: epsilon must be finite and > 0 \(got 0\.0\)"),
    ("adagrad", {"eps": float("nan")}, r"^AdaGrad: eps must be finite and > 0 \(got nan\)"),
    ("adagrad", {"clip_gradient": -1}, r"^AdaGrad: clip_gradient must be finite and >= 0"),
    ("adagrad", {"wd": float("inf")}, r"^AdaGrad: wd must be finite \(got inf\)"),
])
def test_bad_optimizer_arguments(kind, kw, match):
    with pytest.raises(ValueError, match=match):
        mx.optimizer.create(kind, **kw)


def test_create_and_register():
    assert isinstance(mx.optimizer.create("SGD"), mx.optimizer.SGD)
    assert isinstance(mx.optimizer.create("adam"), mx.optimizer.Adam)
    # MXNet 1.x's deprecated alias of SGD, for old programs
    cc = mx.optimizer.create("ccsgd", learning_rate=0.5, momentum=0.9)
    assert isinstance(cc, mx.optimizer.SGD) and (cc.learning_rate, cc.momentum) == (0.5, 0.9)
    with pytest.raises(ValueError, match=r"^create: name must be one of adadelta, adagrad, "
                                         r"adam, adamax, ccsgd, dcasgd, ftml, ftrl, lamb, lars, "
                                         r"lbsgd, nadam, nag, rmsprop, sgd, sgld, signum "
                                         r"\(got 'adamw'\)"):
        mx.optimizer.create("adamw")
    with pytest.raises(TypeError, match=r"^SGD: learning_rate must be a number \(got "
                                        r"'0\.1'\)"):
        mx.optimizer.create("sgd", learning_rate="0.1")
    with pytest.raises(TypeError, match="^register: klass must be a subclass"):
        mx.optimizer.register(int)


@pytest.mark.parametrize("kind", ["sgd", "adam", "adagrad"])
def test_failed_update_leaves_weight_and_state_unchanged(kind):
    opt = mx.optimizer.create(kind, momentum=0.9) if kind == "sgd" else mx.optimizer.create(kind)
    w = nd.ones((4, 2))
    state = opt.create_state(0, w)
    states = list(state) if isinstance(state, tuple) else [state]
    for s in states:
        s[:] = 0.25
    for bad, exc in ((nd.ones((4, 3)), ValueError), (nd.ones((4, 2), dtype=F64), TypeError)):
        with pytest.raises(exc, match=r"_update: grad must have the weight's"):
            opt.update(0, w, bad, state)
        np.testing.assert_array_equal(w.asnumpy(), 1)
        for s in states:
            np.testing.assert_array_equal(s.asnumpy(), 0.25)


# -- clip_global_norm -----------------------------------------------------------------------

@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_global_norm_matches_numpy(max_norm):
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((3, 4)).astype(F32), rng.standard_normal(5).astype(F32)
    c = np.zeros((6, 2), F32)
    c[[1, 4]] = rng.standard_normal((2, 2))
    arrays = [nd.array(a), nd.array(b), nd.sparse.row_sparse_array(c)]
    norm = mx.gluon.utils.clip_global_norm(arrays, max_norm)
    want = math.sqrt(sum(float(np.sum(x.astype(F64) ** 2)) for x in (a, b, c)))
    assert norm == pytest.approx(want, rel=1e-6)
    scale = min(1.0, max_norm / (want + 1e-8))
    for x, ref in zip(arrays, (a, b, c)):
        np.testing.assert_allclose(dense_values(x), ref * scale, rtol=1e-6)
    assert arrays[2].stype == "row_sparse"


def test_clip_global_norm_errors_and_non_finite():
    with pytest.raises(ValueError, match=r"^clip_global_norm: arrays must hold at least one"):
        mx.gluon.utils.clip_global_norm([], 1.0)
    with pytest.raises(ValueError, match=r"^clip_global_norm: max_norm must be finite and "
                                         r"> 0 \(got 0\)"):
        mx.gluon.utils.clip_global_norm([nd.ones(2)], 0)
    with pytest.raises(TypeError, match=r"^clip_global_norm: arrays\[1\] must be an NDArray"):
        mx.gluon.utils.clip_global_norm([nd.ones(2), np.ones(2)], 1.0)
    x = nd.array([np.inf, 1.0])
    with pytest.warns(UserWarning, match="nan or inf"):
        assert math.isinf(mx.gluon.utils.clip_global_norm([x], 1.0))


# -- Trainer --------------------------------------------------------------------------------

class Param:
    """What the Trainer needs of gluon's Parameter."""

    def __init__(self, name, values, grad_stype=None, grad_req="write", lr_mult=None):
        self.name = name
        self._data = nd.array(values)                 # float32, as gluon's default
        self._data.attach_grad(stype=grad_stype)
        self.grad_req = grad_req
        if lr_mult is not None:
            self.lr_mult = lr_mult

    def data(self):
        return self._data

    def grad(self):
        return self._data.grad


def _model_step(params, x, idx):
    """loss = sum(Embedding(idx, E) @ W.T * x); the backward writes W (dense) and E
    (row_sparse, rows idx) gradients."""
    w, e = params["w"].data(), params["e"].data()
    with autograd.record():
        emb = nd.Embedding(nd.array(idx), e, input_dim=e.shape[0], output_dim=e.shape[1],
                           sparse_grad=True)
        loss = (nd.dot(emb, w.T) * x).sum()
    loss.backward()


@pytest.mark.parametrize("kind, kw", [("sgd", {"learning_rate": 0.1, "momentum": 0.9}),
                                      ("adam", {"learning_rate": 0.01, "wd": 0.001})])
def test_trainer_step_rescales_by_batch_size(kind, kw):
    rng = np.random.default_rng(9)
    w0, e0 = rng.standard_normal((3, 2)), rng.standard_normal((10, 2))
    params = {"w": Param("w", w0), "e": Param("e", e0, grad_stype="row_sparse"),
              "frozen": Param("frozen", np.ones(2), grad_req="null")}
    trainer = mx.gluon.Trainer(params, kind, kw)
    ref = mx.optimizer.create(kind, **kw)
    rw, re = nd.array(w0), nd.array(e0)
    rstates = [ref.create_state(0, rw), ref.create_state(1, re)]
    batch = 4
    for step in range(3):
        x = nd.array(rng.standard_normal((2, 3)))
        idx = [step, 7]
        _model_step(params, x, idx)
        assert params["e"].grad().stype == "row_sparse"
        gw, ge = params["w"].grad(), params["e"].grad()
        ref.rescale_grad = 1.0 / batch
        ref.update(0, rw, gw, rstates[0])
        ref.update(1, re, ge, rstates[1])
        trainer.step(batch)
        del gw, ge
    np.testing.assert_allclose(params["w"].data().asnumpy(), rw.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(params["e"].data().asnumpy(), re.asnumpy(), rtol=1e-6)
    # rows never looked up (3..6, 8, 9) keep their values: lazy updates
    np.testing.assert_array_equal(params["e"].data().asnumpy()[[3, 4, 5, 6, 8, 9]],
                                  np.asarray(nd.array(e0)).copy()[[3, 4, 5, 6, 8, 9]])
    np.testing.assert_array_equal(params["frozen"].data().asnumpy(), 1)
    assert trainer.optimizer.rescale_grad == 1.0 / batch
    trainer.set_learning_rate(0.5)
    assert trainer.learning_rate == 0.5


def test_trainer_step_before_any_backward_is_stale():
    """gluon: a gradient backward has not written since the Trainer was made (or since the
    last step) is stale; the weights stay as they are."""
    p = Param("w", [1.0, 2.0])
    w = p.data()
    trainer = mx.gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "wd": 0.5})
    with pytest.raises(RuntimeError, match="`w` on context cpu\\(0\\) has not been updated "
                                           "by backward since last `step`"):
        trainer.step(1)
    with pytest.raises(UserWarning):          # what gluon raises
        trainer.step(1)
    np.testing.assert_array_equal(w.asnumpy(), [1.0, 2.0])
    with autograd.record():
        y = (w * w).sum()
    y.backward()
    trainer.step(1)
    np.testing.assert_allclose(w.asnumpy(), [1.0 - 0.1 * (2.0 + 0.5), 2.0 - 0.1 * (4.0 + 1.0)],
                               rtol=1e-6)


def test_trainer_stale_gradients_and_multipliers():
    rng = np.random.default_rng(10)
    params = [Param("w", rng.standard_normal((3, 2)), lr_mult=0.0),
              Param("e", rng.standard_normal((10, 2)), grad_stype="row_sparse")]
    trainer = mx.gluon.Trainer(params, mx.optimizer.SGD(learning_rate=0.1))
    _model_step({"w": params[0], "e": params[1]}, nd.ones((2, 3)), [0, 1])
    w_before = params[0].data().asnumpy().copy()
    trainer.step(1)
    np.testing.assert_array_equal(params[0].data().asnumpy(), w_before)   # lr_mult 0
    e_after = params[1].data().asnumpy().copy()
    with pytest.raises(mx.gluon.StaleGradientError, match=r"^Gradient of Parameter `w` on "
                                                     r"context cpu\(0\) has not been updated"):
        trainer.step(1)
    np.testing.assert_array_equal(params[1].data().asnumpy(), e_after)
    trainer.step(1, ignore_stale_grad=True)                  # both stale: nothing moves
    np.testing.assert_array_equal(params[1].data().asnumpy(), e_after)
    _model_step({"w": params[0], "e": params[1]}, nd.ones((2, 3)), [5])
    trainer.step(1)
    assert not np.array_equal(params[1].data().asnumpy()[5], e_after[5])


def test_trainer_sees_fresh_gradients_whose_memory_backward_replaced():
    """Backward hands .grad new memory where nobody can tell (a Python rule's result, a
    planned buffer): the Trainer, which remembers each gradient's chunk weakly, takes
    such a gradient as fresh, a gradient no backward wrote since as stale, and holds no
    chunk that would stop the hand-over (w.grad's memory moves on every backward)."""
    net = mx.gluon.nn.Conv2D(2, kernel_size=1, in_channels=3, use_bias=False)
    net.initialize(mx.init.Constant(0.5))
    w = net.weight
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = nd.array(np.arange(3 * 4, dtype=F32).reshape(1, 3, 2, 2))
    want = np.full((2, 3, 1, 1), 0.5, F32)
    for _ in range(3):
        before = np.asarray(w.grad()).__array_interface__["data"][0]
        with autograd.record():
            y = net(x).sum()
        y.backward()
        assert np.asarray(w.grad()).__array_interface__["data"][0] != before
        trainer.step(1)
        want -= 0.1 * x.asnumpy().sum(axis=(0, 2, 3))[None, :, None, None]
        np.testing.assert_allclose(w.data().asnumpy(), want, rtol=1e-6)
    with pytest.raises(mx.gluon.StaleGradientError, match=r"^Gradient of Parameter "):
        trainer.step(1)
    np.testing.assert_allclose(w.data().asnumpy(), want, rtol=1e-6)


def test_update_kernels_flush_denormals_on_x86():
    """A state holding denormals (Adam's mean decaying under a zero gradient) is read
    and written as zero on x86 (FTZ/DAZ in the kernels: denormal arithmetic is many
    times slower), elsewhere as IEEE says; normal values are untouched either way."""
    x86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    tiny = np.finfo(F32).tiny
    w = nd.array(np.ones(4, F32))
    g = nd.array(np.array([0.0, 0.0, 1.0, 0.0], F32))
    mean = nd.array(np.array([tiny / 8, tiny * 4, 0.5, 0.0], F32))
    var = nd.array(np.array([0.0, 0.0, 0.25, tiny / 4], F32))
    nd.adam_update(w, g, mean, var, out=w, lr=0.1, beta1=0.5, beta2=0.5)
    m, v = mean.asnumpy(), var.asnumpy()
    assert m[2] == np.float32(0.5 * 0.5 + 0.5 * 1.0) and v[2] == np.float32(0.625)
    assert m[1] == np.float32(2 * tiny)                     # normal: kept
    if x86:
        assert m[0] == 0 and v[3] == 0
    else:
        assert m[0] == np.float32(tiny / 16) and v[3] == np.float32(tiny / 8)
    np.testing.assert_array_equal(w.asnumpy()[[0, 3]], 1)


def test_trainer_makes_states_before_the_first_step():
    """States of initialised parameters exist when the Trainer is made (so that the first
    backward's freed blocks are not taken by them); a deferred parameter gets its state
    at its first update; a weight re-made after the Trainer (another dtype) gets a fresh
    state that fits it; the updates are those of states made at the first update."""
    net = nn.Sequential()
    net.add(nn.Dense(3, in_units=4), nn.Dense(2))           # the second: deferred
    net.initialize()
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    assert sorted(trainer._states) == [0, 1, 3]              # the deferred weight: none
    assert all(np.array_equal(s.asnumpy(), np.zeros((3, 4))) for s in trainer._states[0])
    rng = np.random.default_rng(11)
    x = nd.array(rng.standard_normal((5, 4)).astype(np.float32))
    params = list(net.collect_params().values())
    with autograd.record():
        loss = net(x).sum()
    before = [p.data().asnumpy().copy() for p in params]
    loss.backward()
    grads = [p.grad().asnumpy().astype(np.float64) for p in params]
    trainer.step(5)
    assert sorted(trainer._states) == [0, 1, 2, 3]
    lr = 0.01 * math.sqrt(1 - 0.999) / (1 - 0.9)
    for p, w0, g in zip(params, before, grads):
        g = g / 5
        mean, var = 0.1 * g, 0.001 * g * g
        np.testing.assert_allclose(p.data().asnumpy(), w0 - lr * mean / (np.sqrt(var) + 1e-8),
                                   rtol=1e-5, atol=1e-7)
    # a weight re-made in another dtype after the Trainer: its early state is replaced
    p = Param("w", np.ones((2, 2)))
    t = mx.gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "momentum": 0.5})
    assert t._states[0].dtype == np.float32
    p._data = nd.array(np.ones((2, 2)), dtype="float64")
    p._data.attach_grad()
    with autograd.record():
        y = (p.data() * 2).sum()
    y.backward()
    t.step(1)
    assert t._states[0].dtype == np.float64
    np.testing.assert_allclose(p.data().asnumpy(), 1 - 0.1 * 2)
    # an optimizer of its own: create_state runs at the first update (it may read the
    # weight's values, as this one does)

    class Snapshot(mx.optimizer.SGD):
        def create_state(self, index, weight):
            return weight.copy()

        def update(self, index, weight, grad, state):
            weight[:] = state * 10

    p = Param("w", np.ones(3))
    t = mx.gluon.Trainer([p], Snapshot())
    assert t._states == {}
    p.data()[:] = 2.0
    with autograd.record():
        y = p.data().sum()
    y.backward()
    t.step(1)
    np.testing.assert_array_equal(p.data().asnumpy(), 20.0)


def test_trainer_bad_arguments():
    p = Param("w", np.ones(2))
    with pytest.raises(TypeError, match=r"^Trainer: params must be a dict of Parameters"):
        mx.gluon.Trainer(p, "sgd")
    with pytest.raises(TypeError, match=r"^Trainer: params\[0\] must be a Parameter"):
        mx.gluon.Trainer([object()], "sgd")
    with pytest.raises(ValueError, match=r"^Trainer: optimizer_params must be None"):
        mx.gluon.Trainer([p], mx.optimizer.SGD(), {"learning_rate": 0.1})
    with pytest.raises(ValueError, match=r"^Trainer: parameter names must be unique"):
        mx.gluon.Trainer([p, p], "sgd")
    with pytest.raises(ValueError, match=r"^create: name must be one of"):
        mx.gluon.Trainer([p], "adamw")
    trainer = mx.gluon.Trainer([p], "sgd")
    with pytest.raises(ValueError, match=r"^Trainer.step: batch_size must be a finite number "
                                         r"> 0 \(got 0\)"):
        trainer.step(0)


def _backward_all(params):
    with autograd.record():
        y = sum((p.data() * p.data()).sum() for p in params)
    y.backward()


def _snapshot(trainer, params):
    opt = trainer.optimizer
    states = {i: [x.asnumpy().copy() for x in (s if isinstance(s, tuple) else (s,))
                  if x is not None] for i, s in trainer._states.items()}
    return ([p.data().asnumpy().copy() for p in params], states, opt.rescale_grad,
            dict(opt._index_update_count), opt.num_update)


def _assert_unchanged(trainer, params, before):
    weights, states, rescale, counts, num = before
    now = _snapshot(trainer, params)
    for a, b in zip(now[0], weights):
        np.testing.assert_array_equal(a, b)
    assert now[1].keys() == states.keys()
    for i in states:
        for a, b in zip(now[1][i], states[i]):
            np.testing.assert_array_equal(a, b)
    assert now[2:] == (rescale, counts, num)


def _assert_step_refused(trainer, params, batch_size, match):
    """``trainer.step(batch_size)`` raises ValueError matching ``match`` and leaves the
    weights, the states, rescale_grad and the update counts as they were."""
    before = _snapshot(trainer, params)
    with pytest.raises(ValueError, match=match):
        trainer.step(batch_size)
    _assert_unchanged(trainer, params, before)


@pytest.mark.parametrize("kind, kw", [("sgd", {"momentum": 0.9}), ("adam", {}),
                                      ("adagrad", {})])
def test_a_refused_step_changes_nothing(kind, kw):
    """A step applies to every parameter or to none: a bad multiplier on the second
    parameter leaves the first one, every state, the update counts and rescale_grad as
    they were; the next good step is the first update (Adam's count did not move)."""
    params = [Param("a", [1.0, 2.0]), Param("b", [3.0, -1.0])]
    trainer = mx.gluon.Trainer(params, kind, {"learning_rate": 0.1, "wd": 0.01, **kw})
    params[1].wd_mult = math.inf
    _backward_all(params)
    # SGD updates both (dense) parameters in one multi_sgd_mom_update: its wds
    _assert_step_refused(trainer, params, 2, r"_update: (wd must be finite \(got inf\)|wds "
                         r"must be finite \(got \(0\.01, inf\)\))")
    params[1].wd_mult = 1.0
    trainer.step(2)
    fresh = [Param("a", [1.0, 2.0]), Param("b", [3.0, -1.0])]
    ref = mx.gluon.Trainer(fresh, kind, {"learning_rate": 0.1, "wd": 0.01, **kw})
    _backward_all(fresh)
    ref.step(2)
    for p, q in zip(params, fresh):
        np.testing.assert_array_equal(p.data().asnumpy(), q.data().asnumpy())


@pytest.mark.parametrize("batch_size, exc, match", [
    (1e-320, ValueError, r"batch_size must leave rescale_grad / batch_size finite \(got "
                         r"1e-320: 1\.0 / 1e-320 overflows\)"),
    (math.inf, ValueError, r"batch_size must be a finite number > 0 \(got inf\)"),
    (math.nan, ValueError, r"batch_size must be a finite number > 0 \(got nan\)"),
    (-3, ValueError, r"batch_size must be a finite number > 0 \(got -3\)"),
    (10 ** 400, ValueError, r"batch_size must be a finite number > 0 \(got 1000"),
    (True, TypeError, r"batch_size must be a number \(got True\)"),
    ("4", TypeError, r"batch_size must be a number \(got '4'\)")],
    ids=["tiny", "inf", "nan", "negative", "huge-int", "bool", "str"])
def test_a_bad_batch_size_is_refused_before_anything_changes(batch_size, exc, match):
    p = Param("w", [1.0, 1.0])
    trainer = mx.gluon.Trainer([p], "adam", {"learning_rate": 0.1})
    _backward_all([p])
    before = _snapshot(trainer, [p])
    with pytest.raises(exc, match="^Trainer.step: " + match):
        trainer.step(batch_size)
    _assert_unchanged(trainer, [p], before)
    trainer.step(1)
    # the first Adam update moves each weight by lr * g / (|g| + eps') (bias-corrected)
    np.testing.assert_allclose(p.data().asnumpy(), [0.9, 0.9], rtol=1e-6)


def test_a_refused_step_of_an_optimizer_of_its_own_is_undone():
    """An optimizer that overrides update cannot be checked ahead: the weights and states
    it updated before its update of a later parameter raised are put back."""

    class Picky(mx.optimizer.SGD):
        def update(self, index, weight, grad, state):
            if index == 1:
                raise ValueError("Picky: index must be 0 (got 1)")
            super().update(index, weight, grad, state)

    params = [Param("a", [1.0, 2.0]), Param("b", [3.0, -1.0])]
    trainer = mx.gluon.Trainer(params, Picky(learning_rate=0.1, momentum=0.5))
    _backward_all(params)
    _assert_step_refused(trainer, params, 1, "^Picky: index must be 0")


free_failing_tests(globals())


# -- lr is left out of the inference signature -------------------------------------------

@pytest.mark.parametrize("name,states", [("sgd_update", 0), ("sgd_mom_update", 1),
                                         ("adam_update", 2), ("adagrad_update", 1)])
def test_new_lr_hits_inference_cache_and_bad_lr_still_refused(name, states):
    """A new lr at every call (Adam's bias correction) reuses the cached inference, yet
    each call updates with its own lr, and a bad lr after a cached good one is refused
    with the weight and states unchanged."""
    from runtime._imperative import inference_cache_info
    rng = np.random.default_rng(7)
    w0, g0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    s0 = [np.abs(rng.standard_normal((3, 4))) + 0.1 for _ in range(states)]
    w, g = nd.array(w0, dtype=F64), nd.array(g0, dtype=F64)
    s = [nd.array(x, dtype=F64) for x in s0]
    op = getattr(nd, name)
    ws, ss = w0, s0
    for i, lr in enumerate((0.1, 0.05, 0.025, 0.0125)):
        if i == 1:
            misses = inference_cache_info()["misses"]
        op(w, g, *s, lr=lr, wd=0.01, out=w)
        ws, ss = ref_update(name, ws, g0, ss, {"lr": lr, "wd": 0.01})
        np.testing.assert_allclose(w.asnumpy(), ws, rtol=1e-12)
        for a, b in zip(s, ss):
            np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-12)
    assert inference_cache_info()["misses"] == misses
    before = [w.asnumpy()] + [x.asnumpy() for x in s]
    for bad in (-0.5, math.nan, math.inf):
        with pytest.raises(ValueError, match=rf"^{name}: lr must be finite and >= 0"):
            op(w, g, *s, lr=bad, wd=0.01, out=w)
        for a, b in zip([w] + s, before):
            np.testing.assert_array_equal(a.asnumpy(), b)


def test_signsgd_and_signum_updates_match_mxnet():
    # values printed by MXNet 1.9.1 for these inputs
    w = nd.array([1.0, -2.0, 3.0, 0.5])
    g = nd.array([0.5, -3.0, 0.0, 2.0])
    out = nd.signsgd_update(w, g, lr=0.1, wd=0.2, rescale_grad=2.0, clip_gradient=1.0)
    np.testing.assert_allclose(out.asnumpy(), [0.88, -1.86, 2.94, 0.39], rtol=1e-6)
    mom = nd.array([0.1, 0.2, -0.3, 0.0])
    nd.signum_update(w, g, mom, lr=0.1, momentum=0.9, wd=0.2, rescale_grad=2.0,
                     clip_gradient=1.0, wd_lh=0.05, out=w)
    np.testing.assert_allclose(w.asnumpy(), [0.895, -1.89, 2.885, 0.3975], rtol=1e-6)
    np.testing.assert_allclose(mom.asnumpy(), [-0.03, 0.32, -0.33, -0.11], rtol=1e-5,
                               atol=1e-7)


def test_updater_makes_state_on_first_use_and_matches_the_optimizer():
    rng = np.random.RandomState(3)
    w0, g = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    updater = mx.optimizer.get_updater(opt)
    w = nd.array(w0)
    updater(7, nd.array(g), w)
    updater(7, nd.array(g), w)
    # momentum SGD by hand: m = 0.9 m - lr g; w += m
    m = -0.1 * g
    expected = w0 + m
    m = 0.9 * m - 0.1 * g
    expected = expected + m
    np.testing.assert_allclose(w.asnumpy(), expected, rtol=1e-5)
    assert list(updater.states) == [7]
    restored = mx.optimizer.Updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    restored.set_states(updater.get_states())
    np.testing.assert_array_equal(restored.states[7].asnumpy(), updater.states[7].asnumpy())


def test_updater_takes_lists_and_refuses_a_non_optimizer():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0))
    a, b = nd.ones((2,)), nd.ones((3,))
    updater([0, 1], [nd.ones((2,)), nd.ones((3,)) * 2], [a, b])
    np.testing.assert_array_equal(a.asnumpy(), [0, 0])
    np.testing.assert_array_equal(b.asnumpy(), [-1, -1, -1])
    with pytest.raises(ValueError, match="lists of one length"):
        updater([0, 1], [nd.ones((2,))], [a, b])
    with pytest.raises(TypeError, match="must be an Optimizer"):
        mx.optimizer.Updater("sgd")


def test_lr_scheduler_base():
    s = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    assert isinstance(s, mx.lr_scheduler.LRScheduler)
    assert [s(n) for n in (1, 2, 3, 5)] == [1.0, 1.0, 0.5, 0.25]
    with pytest.raises(NotImplementedError):
        mx.lr_scheduler.LRScheduler()(1)
    with pytest.raises(ValueError, match="base_lr must be"):
        mx.lr_scheduler.LRScheduler(base_lr=-1)


def _ref_formula_optimizer(kind, kw, w, grads):
    """NumPy transcriptions of MXNet's Python-level Adamax, AdaDelta and Nadam, and of
    LAMB's phases (whose attributes are float32, as MXNet's operator parameters are)."""
    if kind == "lamb":
        kw = {"learning_rate": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, **kw}
        kw = {k: float(np.float32(v)) for k, v in kw.items()}
    rs, wd, clip = kw.get("rescale_grad", 1.0), kw.get("wd", 0.0), kw.get("clip_gradient")
    s0, s1 = np.zeros_like(w), np.zeros_like(w)
    m_schedule = 1.0
    for t, g in enumerate(grads, 1):
        gw = g * rs if kind in ("adadelta", "dcasgd", "lamb") else g * rs + wd * w
        gw = gw if clip is None else np.clip(gw, -clip, clip)
        if t == 1 and kind == "dcasgd":
            s1 = w.copy()                      # the previous weight
        if kind == "dcasgd":
            lr, mo = kw.get("learning_rate", 0.01), kw.get("momentum", 0.0)
            step = -lr * (gw + wd * w + kw.get("lamda", 0.04) * gw * gw * (w - s1))
            s0 = mo * s0 + step if mo else step
            s1 = w.copy()
            w = w + s0
        elif kind == "lamb":
            b1, b2, eps = kw.get("beta1", 0.9), kw.get("beta2", 0.999), kw.get("epsilon", 1e-6)
            s0 = b1 * s0 + (1 - b1) * gw
            s1 = b2 * s1 + (1 - b2) * gw * gw
            m, v = s0 / (1 - b1 ** t), s1 / (1 - b2 ** t)
            u = m / (np.sqrt(v) + eps) + wd * w
            r1 = np.linalg.norm(w)
            if kw.get("lower_bound") is not None:
                r1 = max(r1, kw["lower_bound"])
            if kw.get("upper_bound") is not None:
                r1 = min(r1, kw["upper_bound"])
            r2 = np.linalg.norm(u)
            w = w - kw.get("learning_rate", 0.001) * (r1 / r2 if r1 > 0 and r2 > 0 else 1) * u
        elif kind == "adamax":
            lr = kw.get("learning_rate", 0.002) / (1 - kw.get("beta1", 0.9) ** t)
            b1, b2 = kw.get("beta1", 0.9), kw.get("beta2", 0.999)
            s0 = b1 * s0 + (1 - b1) * gw
            s1 = np.maximum(b2 * s1, np.abs(gw))
            with np.errstate(invalid="ignore"):    # 0 / 0 where no gradient came yet: NaN
                w = w - lr * s0 / s1
        elif kind == "adadelta":
            rho, eps = kw.get("rho", 0.9), kw.get("epsilon", 1e-5)
            s0 = rho * s0 + (1 - rho) * gw * gw
            delta = np.sqrt(s1 + eps) / np.sqrt(s0 + eps) * gw
            s1 = rho * s1 + (1 - rho) * delta * delta
            w = w - (delta + wd * w)
        else:
            b1, b2, eps = kw.get("beta1", 0.9), kw.get("beta2", 0.999), kw.get("epsilon", 1e-8)
            sd, lr = kw.get("schedule_decay", 0.004), kw.get("learning_rate", 0.001)
            mt = b1 * (1 - 0.5 * 0.96 ** (t * sd))
            mt1 = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * sd))
            m_schedule *= mt
            s0 = b1 * s0 + (1 - b1) * gw
            s1 = b2 * s1 + (1 - b2) * gw * gw
            m_bar = (1 - mt) * gw / (1 - m_schedule) + mt1 * s0 / (1 - m_schedule * mt1)
            w = w - lr * m_bar / (np.sqrt(s1 / (1 - b2 ** t)) + eps)
    return w, [s0, s1]


@pytest.mark.parametrize("kind, kw", [
    ("adamax", {"learning_rate": 0.05, "wd": 0.01, "clip_gradient": 0.5}),
    ("adamax", {"beta1": 0.5, "rescale_grad": 0.25}),
    ("adadelta", {"rho": 0.8, "wd": 0.01, "clip_gradient": 0.4}),
    ("adadelta", {"epsilon": 1e-6, "rescale_grad": 2.0}),
    ("nadam", {"learning_rate": 0.01, "wd": 0.01, "clip_gradient": 0.5}),
    ("nadam", {"beta1": 0.8, "schedule_decay": 0.1, "rescale_grad": 0.5}),
    ("dcasgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "lamda": 0.5}),
    ("dcasgd", {"learning_rate": 0.1, "clip_gradient": 0.5}),
    ("lamb", {"learning_rate": 0.01, "wd": 0.01, "clip_gradient": 0.5}),
    ("lamb", {"learning_rate": 0.01, "lower_bound": 3.0, "upper_bound": 3.5,
              "rescale_grad": 0.5}),
])
@pytest.mark.parametrize("sparse", [False, True])
def test_formula_optimizers_match_numpy(kind, kw, sparse):
    shape = (5, 3)
    rng = np.random.default_rng(21)
    w0 = rng.standard_normal(shape)
    grads = []
    for rows in ([0, 2], [1, 4], [3]):
        g = rng.standard_normal(shape)
        if sparse:
            keep = np.zeros(shape[0], bool)
            keep[rows] = True
            g[~keep] = 0
        grads.append(g)
    opt = mx.optimizer.create(kind, **kw)
    w = nd.array(w0, dtype=F64)
    state = opt.create_state(0, w)
    for g in grads:
        if sparse:
            rows = np.flatnonzero(np.abs(g).sum(axis=1))
            ga = nd.sparse.row_sparse_array((g[rows], rows.astype(np.int64)), shape=shape,
                                            dtype=F64)
        else:
            ga = nd.array(g, dtype=F64)
        opt.update(0, w, ga, state)
    want, want_states = _ref_formula_optimizer(kind, kw, w0, grads)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-10, atol=1e-12)
    for s, r in zip(state, want_states):
        if s is not None:
            np.testing.assert_allclose(s.asnumpy(), r, rtol=1e-10, atol=1e-12)


def test_sgld_adds_gaussian_noise_of_variance_lr():
    lr, n = 0.04, 200_000
    w0 = np.full(n, 2.0)
    g = np.random.default_rng(41).standard_normal(n)
    mx.random.seed(5)
    opt = mx.optimizer.SGLD(learning_rate=lr, wd=0.1)
    w = nd.array(w0, dtype=F64)
    opt.update(0, w, nd.array(g, dtype=F64), None)
    noise = w.asnumpy() - (w0 - lr / 2 * (g + 0.1 * w0))
    assert abs(noise.mean()) < 4 * math.sqrt(lr / n)
    assert abs(noise.std() - math.sqrt(lr)) < 0.01 * math.sqrt(lr)
    mx.random.seed(5)
    again = nd.array(w0, dtype=F64)
    opt.update(0, again, nd.array(g, dtype=F64), None)
    np.testing.assert_array_equal(again.asnumpy(), w.asnumpy())


free_failing_tests(globals())


@pytest.mark.parametrize("kind, kw", [("sgd", {"learning_rate": 0.1, "momentum": 0.9}),
                                      ("adam", {"learning_rate": 0.01}),
                                      ("rmsprop", {"learning_rate": 0.01}),
                                      ("lamb", {"learning_rate": 0.01, "wd": 0.01}),
                                      ("lbsgd", {"learning_rate": 0.1, "momentum": 0.9,
                                                 "batch_scale": 2, "warmup_epochs": 1,
                                                 "updates_per_epoch": 2})])
def test_multi_precision_updates_a_float32_master_copy(kind, kw):
    rng = np.random.default_rng(31)
    w16 = rng.standard_normal((4, 3)).astype(np.float16)
    grads = [rng.standard_normal((4, 3)).astype(np.float16) for _ in range(4)]
    updater = mx.optimizer.get_updater(mx.optimizer.create(kind, multi_precision=True, **kw))
    ref = mx.optimizer.get_updater(mx.optimizer.create(kind, **kw))
    w, master = nd.array(w16, dtype=np.float16), nd.array(w16.astype(F32))
    for g in grads:
        updater(0, nd.array(g, dtype=np.float16), w)
        ref(0, nd.array(g.astype(F32)), master)        # the same update in float32
    assert w.dtype == np.float16
    kept = updater.states[0][0]
    np.testing.assert_array_equal(kept.asnumpy(), master.asnumpy())
    np.testing.assert_array_equal(w.asnumpy(), master.asnumpy().astype(np.float16))
    with pytest.warns(UserWarning, match="Consider using multi_precision=True"):
        mx.optimizer.SGD().create_state_multi_precision(0, nd.zeros(2, dtype=np.float16))


def test_lbsgd_accumulates_copies_of_the_gradients_and_warms_up():
    rng = np.random.default_rng(5)
    w0, g1, g2, g3 = (rng.standard_normal((3, 2)).astype(F32) for _ in range(4))
    opt = mx.optimizer.LBSGD(learning_rate=0.1, batch_scale=2, warmup_epochs=1,
                             updates_per_epoch=4)
    updater = mx.optimizer.get_updater(opt)
    w, g = nd.array(w0), nd.array(g1)
    updater(0, g, w)                        # count 1: accumulated, weight unchanged
    assert np.array_equal(w.asnumpy(), w0)
    g[:] = g2                               # the next backward writes the same array
    updater(0, g, w)                        # count 2: mean of g1, g2; 1 + (2 - 1) 2 / 4
    want = w0 - np.float32(0.1 * 1.5) * ((g1 + g2) / 2)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)
    g[:] = g3
    updater(0, g, w)                        # count 3: a new accumulation starts
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-6)
    assert opt._get_lbmult(3) == 1.75 and opt._get_lbmult(4) == 2.0
    with pytest.raises(ValueError, match=r"LBSGD: warmup_strategy must be one of linear, "
                                         r"power2, sqrt, lars \(got 'cosine'\)"):
        mx.optimizer.LBSGD(warmup_strategy="cosine")
    with pytest.raises(ValueError, match=r"LBSGD: batch_scale must be an integer >= 1 "
                                         r"\(got 0\)"):
        mx.optimizer.LBSGD(batch_scale=0)


# -- the aggregated SGD updates ------------------------------------------------------------

def _sgd_ref(w, g, mom, lr, wd, rescale, clip, momentum):
    """MXNet's SGD formulas in float64: (weight, mom) after one update."""
    s = rescale * g
    if clip >= 0:
        s = np.clip(s, -clip, clip)
    if mom is None:
        return (1 - lr * wd) * w - lr * s, None
    mom = momentum * mom - lr * wd * w - lr * s
    return w + mom, mom


@pytest.mark.parametrize("mom", [False, True])
@pytest.mark.parametrize("mp", [False, True])
def test_multi_sgd_updates_match_the_formulas(mom, mp):
    """multi_(mp_)sgd_(mom_)update of three weights, in place, against MXNet's SGD
    formulas per weight (mp: on the float32 master copies, cast into the float16
    weights)."""
    rng = np.random.default_rng(3)
    shapes, lrs, wds = [(4, 3), (7,), (2, 2, 2)], (0.1, 0.05, 0.2), (0.01, 0.0, 0.1)
    low = np.float16 if mp else np.float32
    ws = [rng.uniform(-1, 1, s).astype(low) for s in shapes]
    gs = [rng.uniform(-2, 2, s).astype(low) for s in shapes]
    ms = [rng.uniform(-0.5, 0.5, s).astype(np.float32) for s in shapes]
    W, G = [nd.array(w, dtype=low) for w in ws], [nd.array(g, dtype=low) for g in gs]
    M = [nd.array(m) for m in ms]
    W32 = [nd.array(w.astype(np.float32)) for w in ws]
    data = []
    for i in range(3):
        data += [W[i], G[i]] + ([M[i]] if mom else []) + ([W32[i]] if mp else [])
    name = f"multi_{'mp_' if mp else ''}sgd_{'mom_' if mom else ''}update"
    extra = {"momentum": 0.9} if mom else {}
    getattr(nd, name)(*data, lrs=lrs, wds=wds, rescale_grad=0.5, clip_gradient=0.6,
                      num_weights=3, out=W, **extra)
    for i in range(3):
        want, want_mom = _sgd_ref(ws[i].astype(np.float64), gs[i].astype(np.float64),
                                  ms[i].astype(np.float64) if mom else None, lrs[i], wds[i],
                                  0.5, 0.6, 0.9)
        np.testing.assert_allclose(W[i].asnumpy(), want.astype(low), rtol=2e-3 if mp else 1e-6,
                                   atol=1e-3 if mp else 1e-7)
        if mp:
            np.testing.assert_allclose(W32[i].asnumpy(), want, rtol=1e-6, atol=1e-7)
        if mom:
            np.testing.assert_allclose(M[i].asnumpy(), want_mom, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("size", ["1", "2", "4", "60"])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_trainer_aggregated_sgd_matches_the_formulas(monkeypatch, size, momentum):
    """gluon's Trainer with SGD over float32 and float64 parameters, for every
    MXNET_OPTIMIZER_AGGREGATION_SIZE (1: one update per weight; else multi_sgd_update
    per group of one dtype), three steps with a learning rate that changes between them,
    against MXNet's formulas in float64."""
    monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", size)
    rng = np.random.default_rng(5)
    values = [rng.uniform(-1, 1, s) for s in [(3, 2), (4,), (2,), (5,), (1,)]]
    dtypes = [np.float32, np.float64, np.float32, np.float32, np.float64]
    params = []
    for i, (v, d) in enumerate(zip(values, dtypes)):
        p = Param(f"p{i}", v)
        p._data = nd.array(v, dtype=d)
        p._data.attach_grad()
        p.wd_mult = 0.5 * i
        params.append(p)
    trainer = mx.gluon.Trainer(params, "sgd", {"learning_rate": 0.1, "wd": 0.02,
                                               "momentum": momentum})
    assert trainer.optimizer.aggregate_num == int(size)
    ref = [v.astype(dtypes[i]).astype(np.float64) for i, v in enumerate(values)]
    moms = [np.zeros_like(r) for r in ref] if momentum else [None] * len(ref)
    for step, lr in enumerate((0.1, 0.1, 0.03)):
        trainer.set_learning_rate(lr)
        with autograd.record():
            heads = [(p.data() * p.data()).sum() for p in params]
        autograd.backward(heads)              # gradient 2 w
        grads = [2 * p.data().asnumpy().astype(np.float64) for p in params]
        trainer.step(4)
        for i, p in enumerate(params):
            ref[i], moms[i] = _sgd_ref(ref[i], grads[i], moms[i], lr, 0.02 * 0.5 * i, 0.25,
                                       -1.0, momentum)
            np.testing.assert_allclose(p.data().asnumpy(), ref[i], rtol=1e-5, atol=1e-6,
                                       err_msg=f"step {step}, {p.name}")
    assert trainer.optimizer._index_update_count == {i: 3 for i in range(len(params))}


def test_trainer_checks_again_what_changed_since_the_last_step():
    """The Trainer's check of a step's updates is kept while the arrays and attributes
    stay those of the last checked step: a multiplier, a batch size or a learning rate
    that changes is checked (and refused, with nothing changed) all the same."""
    params = [Param("a", [1.0, 2.0]), Param("b", [3.0, -1.0])]
    trainer = mx.gluon.Trainer(params, "sgd", {
        "momentum": 0.9, "lr_scheduler": lambda n: 0.1 if n <= 2 else -0.5})
    _backward_all(params)
    trainer.step(2)
    params[1].wd_mult = math.inf
    _backward_all(params)
    _assert_step_refused(trainer, params, 2, r"^multi_sgd_mom_update: wds must be finite")
    params[1].wd_mult = 1.0
    trainer.step(2)
    _backward_all(params)
    _assert_step_refused(trainer, params, 2, r"^multi_sgd_mom_update: lrs must be finite "
                         r"and >= 0 \(got \(-0\.5, -0\.5\)\)")


@pytest.mark.parametrize("value, want", [("0", 1), ("7", 7), ("1000", 60)])
def test_aggregation_size_comes_from_the_environment(monkeypatch, value, want):
    monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", value)
    assert mx.optimizer.SGD().aggregate_num == want


def test_a_bad_aggregation_size_is_refused(monkeypatch):
    monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "four")
    with pytest.raises(ValueError, match=r"^MXNET_OPTIMIZER_AGGREGATION_SIZE must be an "
                                         r"integer \(got 'four'\)"):
        mx.optimizer.SGD()


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_trainer_aggregated_multi_precision_equals_the_update_per_weight(monkeypatch,
                                                                         momentum):
    """float16 parameters with multi_precision: the aggregated update
    (multi_mp_sgd_update / multi_mp_sgd_mom_update on the float32 master copies) gives
    the very weights and master copies of one update_multi_precision per weight."""
    rng = np.random.default_rng(9)
    values = [rng.uniform(-1, 1, s) for s in [(3, 2), (4,), (5,)]]
    results = []
    for size in ("4", "1"):
        monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", size)
        params = []
        for i, v in enumerate(values):
            p = Param(f"p{i}", v)
            p._data = nd.array(v, dtype=np.float16)
            p._data.attach_grad()
            params.append(p)
        trainer = mx.gluon.Trainer(params, "sgd", {"learning_rate": 0.1, "wd": 0.01,
                                                   "momentum": momentum,
                                                   "multi_precision": True})
        for _ in range(3):
            with autograd.record():
                heads = [(p.data() * p.data()).sum() for p in params]
            autograd.backward(heads)
            trainer.step(2)
        results.append(([p.data().asnumpy() for p in params],
                        [trainer._states[i][0].asnumpy() for i in range(len(params))]))
    for got, want in zip(results[0], results[1]):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    assert results[0][0][0].dtype == np.float16 and results[0][1][0].dtype == np.float32
    assert not np.array_equal(results[0][0][0], values[0].astype(np.float16))


# -- float16 weights without multi_precision ---------------------------------------------

@pytest.mark.parametrize("op, n_states, kw", [
    ("sgd_update", 0, {"lr": 0.1, "wd": 0.01}),
    ("sgd_mom_update", 1, {"lr": 0.1, "momentum": 0.9}),
    ("adam_update", 2, {"lr": 0.01}),
    ("rmsprop_update", 1, {"lr": 0.01}),
    ("nag_mom_update", 1, {"lr": 0.1, "momentum": 0.9}),
    ("signum_update", 1, {"lr": 0.1, "momentum": 0.9}),
    ("ftrl_update", 2, {"lr": 0.1}),
])
def test_float16_update_is_the_float32_update_rounded(op, n_states, kw):
    rng = np.random.default_rng(7)
    w, g = (rng.standard_normal((5, 3)).astype(np.float16) for _ in range(2))
    states = [np.abs(rng.standard_normal((5, 3))).astype(np.float16) for _ in range(n_states)]
    fn = getattr(nd, op)
    w16, s16 = nd.array(w, dtype=np.float16), [nd.array(s, dtype=np.float16) for s in states]
    w32, s32 = nd.array(w, dtype=F32), [nd.array(s, dtype=F32) for s in states]
    fn(w16, nd.array(g, dtype=np.float16), *s16, out=w16, **kw)
    fn(w32, nd.array(g, dtype=F32), *s32, out=w32, **kw)
    assert w16.dtype == np.float16 and all(s.dtype == np.float16 for s in s16)
    np.testing.assert_array_equal(w16.asnumpy(), w32.asnumpy().astype(np.float16))
    for a, b in zip(s16, s32):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy().astype(np.float16))


def test_float16_sgd_matches_the_formula_and_the_optimizer_takes_float16_weights():
    w = np.array([1.0, -2.0, 3.5], np.float16)
    g = np.array([0.5, 0.25, -1.0], np.float16)
    out = nd.sgd_update(nd.array(w, dtype=np.float16), nd.array(g, dtype=np.float16),
                        lr=0.1, wd=0.01, rescale_grad=0.5)
    want = (w.astype(F32) - 0.1 * (0.5 * g.astype(F32) + 0.01 * w.astype(F32)))
    np.testing.assert_array_equal(out.asnumpy(), want.astype(np.float16))
    weight = nd.array(w, dtype=np.float16)
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1))
    with pytest.warns(UserWarning, match="Consider using multi_precision=True"):
        updater(0, nd.array(g, dtype=np.float16), weight)
    np.testing.assert_array_equal(weight.asnumpy(),
                                  (w.astype(F32) - 0.1 * g.astype(F32)).astype(np.float16))


def test_float16_row_sparse_update_is_refused_and_changes_nothing():
    w = nd.array(np.ones((3, 2)), dtype=np.float16)
    g = nd.sparse.row_sparse_array((np.ones((1, 2), np.float16), [1]), shape=(3, 2),
                                   dtype=np.float16)
    mom = nd.zeros((3, 2), dtype=np.float16)
    with pytest.raises(TypeError, match=r"sgd_mom_update: a float16 update takes dense "
                                        r"arrays \(got storage types default, row_sparse"):
        nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9, out=w)
    np.testing.assert_array_equal(w.asnumpy(), np.ones((3, 2)))
    np.testing.assert_array_equal(mom.asnumpy(), np.zeros((3, 2)))
    with pytest.raises(TypeError, match=r"weight must be float16, float32 or float64 "
                                        r"\(got int32\)"):
        nd.sgd_update(nd.ones((2,), dtype=np.int32), nd.ones((2,), dtype=np.int32), lr=0.1)


def _mlp(seed, dtype="float32"):
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu", in_units=3), nn.Dense(2, in_units=4))
    net.initialize(mx.init.Uniform(0.5))
    rng = np.random.default_rng(seed)
    for p in net.collect_params().values():
        p.set_data(nd.array(rng.uniform(-0.5, 0.5, p.shape)))
    if dtype != "float32":
        net.cast(dtype)
    return net


def _backward(net, x):
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()


@pytest.mark.parametrize("kind, kw, dtype", [
    ("sgd", {"momentum": 0.9, "wd": 0.01,
             "lr_scheduler": mx.lr_scheduler.FactorScheduler(2, 0.5)}, "float32"),
    ("sgd", {"multi_precision": True}, "float16"),
    ("adam", {"wd": 0.01}, "float32"),
    ("adagrad", {}, "float32")])
def test_trainer_replayed_steps_equal_full_steps(kind, kw, dtype):
    """From its second step the Trainer runs the last step's updates again (_replay)
    while nothing they depend on changed; the weights, the states and the update counts
    are bit for bit those of a Trainer that takes its full path at every step, with a
    learning rate that a scheduler changes, Adam's bias correction that changes every
    step, and float16 weights with float32 master copies."""
    x = nd.array(np.random.default_rng(3).uniform(-1, 1, (5, 3)), dtype=dtype)
    nets = [_mlp(4, dtype), _mlp(4, dtype)]
    trainers = [mx.gluon.Trainer(n.collect_params(), kind, dict(kw, learning_rate=0.1))
                for n in nets]
    replayed = []
    real = trainers[0]._replay
    trainers[0]._replay = lambda rescale: replayed.append(real(rescale)) or replayed[-1]
    for _ in range(5):
        for net, trainer in zip(nets, trainers):
            _backward(net, x)
            if trainer is trainers[1]:
                trainer._memo = None              # the full path every time
            trainer.step(5)
    assert replayed == [True] * 4
    for a, b in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())
    for a, b in zip(_snapshot(trainers[0], [])[1].values(),
                    _snapshot(trainers[1], [])[1].values()):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
    assert trainers[0].optimizer._index_update_count == \
        trainers[1].optimizer._index_update_count
    assert trainers[0].optimizer.num_update == trainers[1].optimizer.num_update == 5


def test_trainer_replay_gives_way_to_what_changed(tmp_path):
    """A replayed step still refuses or skips stale gradients, and any change that the
    last step's updates depend on sends the step down the full path: a parameter's
    grad_req, arrays replaced by a re-initialisation, a gradient array replaced, an
    optimizer loaded from a file."""
    x = nd.array(np.random.default_rng(5).uniform(-1, 1, (5, 3)))
    net = _mlp(6)
    params = list(net.collect_params().values())
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    for _ in range(2):
        _backward(net, x)
        trainer.step(1)
    assert trainer._memo is not None
    before = [p.data().asnumpy().copy() for p in params]
    with pytest.raises(mx.gluon.StaleGradientError, match="has not been updated"):
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p.data().asnumpy(), b)

    params[0].grad_req = "null"                     # the first weight stops training
    for _ in range(2):                              # the second step replays the first
        _backward(net, x)
        trainer.step(1)
    np.testing.assert_array_equal(params[0].data().asnumpy(), before[0])
    assert not np.array_equal(params[1].data().asnumpy(), before[1])
    params[0].grad_req = "write"                    # and trains again
    _backward(net, x)
    g, w0 = params[0].grad().asnumpy().copy(), params[0].data().asnumpy().copy()
    trainer.step(1)
    np.testing.assert_allclose(params[0].data().asnumpy(), w0 - 0.1 * g, rtol=1e-6)

    net.initialize(mx.init.Constant(0.25), force_reinit=True)   # new arrays
    _backward(net, x)
    grads = [p.grad().asnumpy().copy() for p in params]
    now = [p.data().asnumpy().copy() for p in params]
    assert now[0][0, 0] == 0.25
    trainer.step(1)
    for p, a, g in zip(params, now, grads):
        np.testing.assert_allclose(p.data().asnumpy(), a - 0.1 * g, rtol=1e-6)

    w = params[2].data()
    w.attach_grad()                                  # a new gradient array
    _backward(net, x)
    g, w0 = w.grad.asnumpy().copy(), w.asnumpy().copy()
    trainer.step(1)
    np.testing.assert_allclose(w.asnumpy(), w0 - 0.1 * g, rtol=1e-6)

    other = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    other.save_states(str(tmp_path / "s"))
    trainer.load_states(str(tmp_path / "s"))         # an optimizer with lr 0.5
    _backward(net, x)
    grads = [p.grad().asnumpy().copy() for p in params]
    now = [p.data().asnumpy().copy() for p in params]
    trainer.step(1)
    for p, a, g in zip(params, now, grads):
        np.testing.assert_allclose(p.data().asnumpy(), a - 0.5 * g, rtol=1e-6)


def test_trainer_params_to_init_lists_the_deferred_parameters():
    # Gluon's Trainer._params_to_init: what is not set up yet; empty after a step
    from runtime.gluon import Trainer, nn
    net = nn.Dense(2)                          # in_units deferred to the first call
    net.initialize()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    assert [p.name for p in trainer._params_to_init] == [net.weight.name]
    x = nd.ones((3, 4))
    with autograd.record():
        y = net(x)
    y.backward()
    trainer.step(3)
    assert trainer._params_to_init == []
