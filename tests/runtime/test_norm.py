"""Normalisation, activation and output operators against NumPy references: BatchNorm in
training (batch statistics, moving statistics after several steps, gradients by float64
central differences in training mode) and inference, fix_gamma, use_global_stats,
output_mean_var, any axis; LayerNorm, InstanceNorm, GroupNorm, L2Normalization; each
act_type of Activation and LeakyReLU (rrelu's random slopes); the output layers'
gradients as MXNet documents them (head gradient ignored, label without gradient)."""

import math

import numpy as np
import pytest
import scipy.special as sps

from runtime import autograd, nd
from runtime import random as rt_random
from tests.runtime.conftest import free_failing_tests


def sample(shape, seed=0, lo=-2.0, hi=2.0, dtype="float64"):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def arr(a):
    return nd.array(a, dtype=a.dtype)


# -- BatchNorm -----------------------------------------------------------------------------

def bn_ref(x, gamma, beta, mean, var, eps, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = lambda v: v.reshape(shape)             # noqa: E731
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


def batch_stats(x, axis):
    axes = tuple(i for i in range(x.ndim) if i != axis)
    return x.mean(axis=axes), x.var(axis=axes)


@pytest.mark.parametrize("shape, axis", [((4, 3, 5), 1), ((6, 2), 1), ((2, 5, 3), -1),
                                         ((3, 4, 2, 2), 0)])
@pytest.mark.parametrize("fix_gamma", [True, False])
def test_batchnorm_training_and_moving_statistics(shape, axis, fix_gamma):
    """Three training steps: each normalises with its batch's statistics and updates the
    moving ones by the momentum rule (biased batch variance); then inference uses the
    moving statistics and writes nothing."""
    c = shape[axis]
    gamma, beta = sample((c,), 1, 0.5, 2.0), sample((c,), 2)
    mm0, mv0 = sample((c,), 3), sample((c,), 4, 0.5, 2.0)
    mm, mv = arr(mm0), arr(mv0)
    eps, momentum = 1e-3, 0.8
    ref_mm, ref_mv = mm0.copy(), mv0.copy()
    g_used = np.ones(c) if fix_gamma else gamma
    for step in range(3):
        x = sample(shape, 10 + step)
        with autograd.train_mode():
            y = nd.BatchNorm(arr(x), arr(gamma), arr(beta), mm, mv, eps=eps,
                             momentum=momentum, fix_gamma=fix_gamma, axis=axis)
        mean, var = batch_stats(x, axis % len(shape))
        np.testing.assert_allclose(y.asnumpy(), bn_ref(x, g_used, beta, mean, var, eps,
                                                       axis % len(shape)), rtol=1e-10,
                                   atol=1e-12)
        ref_mm = ref_mm * momentum + mean * (1 - momentum)
        ref_mv = ref_mv * momentum + var * (1 - momentum)
        np.testing.assert_allclose(mm.asnumpy(), ref_mm, rtol=1e-12)
        np.testing.assert_allclose(mv.asnumpy(), ref_mv, rtol=1e-12)
    x = sample(shape, 20)
    ref_mm, ref_mv = mm.asnumpy(), mv.asnumpy()
    y = nd.BatchNorm(arr(x), arr(gamma), arr(beta), mm, mv, eps=eps, fix_gamma=fix_gamma,
                     axis=axis)
    np.testing.assert_allclose(y.asnumpy(), bn_ref(x, g_used, beta, ref_mm, ref_mv, eps,
                                                   axis % len(shape)), rtol=1e-10)
    np.testing.assert_array_equal(mm.asnumpy(), ref_mm)          # inference: unchanged
    np.testing.assert_array_equal(mv.asnumpy(), ref_mv)


def test_batchnorm_use_global_stats_in_training():
    x, c = sample((4, 3)), 3
    gamma, beta, mm0, mv0 = sample((c,), 1), sample((c,), 2), sample((c,), 3), \
        sample((c,), 4, 0.5, 2.0)
    mm, mv = arr(mm0), arr(mv0)
    with autograd.record():
        y = nd.BatchNorm(arr(x), arr(gamma), arr(beta), mm, mv, use_global_stats=True,
                         fix_gamma=False)
    np.testing.assert_allclose(y.asnumpy(), bn_ref(x, gamma, beta, mm0, mv0, 1e-3, 1),
                               rtol=1e-12)
    np.testing.assert_array_equal(mm.asnumpy(), mm0)
    np.testing.assert_array_equal(mv.asnumpy(), mv0)


def test_batchnorm_output_mean_var():
    x = sample((5, 3, 2))
    params = [arr(sample((3,), s, 0.5, 2.0)) for s in range(4)]
    with autograd.train_mode():
        y, mean, invstd = nd.BatchNorm(arr(x), *params, output_mean_var=True, eps=1e-2)
    m, v = batch_stats(x, 1)
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-12)
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(v + 1e-2), rtol=1e-12)
    _, mean, invstd = nd.BatchNorm(arr(x), *params, output_mean_var=True, eps=1e-2)
    np.testing.assert_allclose(mean.asnumpy(), params[2].asnumpy())
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(params[3].asnumpy() + 1e-2))


def test_batchnorm_float16_data_float32_statistics():
    x = sample((8, 4, 3), dtype="float16")
    gamma, beta = sample((4,), 1, 0.5, 2.0, "float32"), sample((4,), 2, dtype="float32")
    mm, mv = nd.zeros((4,)), nd.ones((4,))
    with autograd.train_mode():
        y = nd.BatchNorm(arr(x), arr(gamma), arr(beta), mm, mv, fix_gamma=False)
    assert y.dtype == np.float16
    x64 = x.astype(np.float64)
    mean, var = batch_stats(x64, 1)
    np.testing.assert_allclose(y.asnumpy().astype(np.float64),
                               bn_ref(x64, gamma, beta, mean, var, 1e-3, 1), atol=1e-2)
    np.testing.assert_allclose(mm.asnumpy(), 0.1 * mean, rtol=1e-5, atol=1e-6)


def _train_bn(x, gamma, beta, c, **attrs):
    """BatchNorm in training mode on float64 copies (fresh moving statistics)."""
    with autograd.train_mode():
        return nd.BatchNorm(arr(x), arr(gamma), arr(beta), nd.zeros((c,), dtype="float64"),
                            nd.ones((c,), dtype="float64"), **attrs)


@pytest.mark.parametrize("shape, axis", [((4, 3, 5), 1), ((6, 2), 1), ((2, 5, 3), -1)])
@pytest.mark.parametrize("fix_gamma", [True, False])
def test_batchnorm_training_gradient(shape, axis, fix_gamma):
    """The tape's gradients in training (batch statistics) against float64 central
    differences of sum(head * BatchNorm(x)) in training mode."""
    c = shape[axis]
    x, gamma, beta = sample(shape, 1), sample((c,), 2, 0.5, 2.0), sample((c,), 3)
    head = sample(shape, 4)
    attrs = {"axis": axis, "fix_gamma": fix_gamma, "eps": 1e-3}
    xs = [arr(x), arr(gamma), arr(beta)]
    for v in xs:
        v.attach_grad()
    mm, mv = nd.zeros((c,), dtype="float64"), nd.ones((c,), dtype="float64")
    with autograd.record():
        y = nd.BatchNorm(*xs, mm, mv, **attrs)
    y.backward(arr(head))
    values = [x, gamma, beta]
    rng = np.random.default_rng(5)
    for i in range(3):
        d = rng.standard_normal(values[i].shape)
        plus, minus = list(values), list(values)
        plus[i], minus[i] = values[i] + 1e-6 * d, values[i] - 1e-6 * d
        numeric = np.sum((_train_bn(*plus, c, **attrs).asnumpy()
                          - _train_bn(*minus, c, **attrs).asnumpy()) * head) / 2e-6
        analytic = np.sum(xs[i].grad.asnumpy() * d)
        assert np.isclose(analytic, numeric, rtol=1e-6, atol=1e-8), (i, analytic, numeric)
    if fix_gamma:
        np.testing.assert_array_equal(xs[1].grad.asnumpy(), np.zeros(c))


def test_batchnorm_gradient_of_mean_var_outputs_is_blocked():
    """MXNet: the mean and inverse-std outputs pass no gradient."""
    x = sample((4, 3), 1)
    params = [sample((3,), s, 0.5, 2.0) for s in range(2, 6)]
    grads = []
    for extra in (False, True):
        xv = arr(x)
        xv.attach_grad()
        ps = [arr(p) for p in params]
        with autograd.record():
            outs = nd.BatchNorm(xv, *ps, output_mean_var=True, fix_gamma=False)
            loss = outs[0].sum() * 0.5 + ((outs[1] + outs[2]).sum() if extra else 0)
        loss.backward()
        grads.append(xv.grad.asnumpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_batchnorm_two_training_steps_on_one_tape():
    """The moving statistics are written by every training forward; the tape keeps no
    copy of them, so backward through two calls works."""
    x = arr(sample((4, 3), 1))
    x.attach_grad()
    gamma, beta = arr(sample((3,), 2, 0.5, 2.0)), arr(sample((3,), 3))
    mm, mv = nd.zeros((3,), dtype="float64"), nd.ones((3,), dtype="float64")
    with autograd.record():
        y = nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False)
        z = nd.BatchNorm(y * 2, gamma, beta, mm, mv, fix_gamma=False)
    z.backward(arr(sample((4, 3), 4)))
    assert np.all(np.isfinite(x.grad.asnumpy()))


def test_batchnorm_training_needs_values():
    mm, mv = nd.zeros((3,)), nd.ones((3,))
    out = nd.full((0, 3), 7.0)
    with autograd.train_mode(), pytest.raises(
            ValueError, match=r"^BatchNorm: training needs at least one value per channel "
                              r"\(got data of shape \(0, 3\)\)"):
        nd.BatchNorm(nd.zeros((0, 3)), nd.ones((3,)), nd.zeros((3,)), mm, mv, out=out)
    np.testing.assert_array_equal(mm.asnumpy(), np.zeros(3))
    np.testing.assert_array_equal(mv.asnumpy(), np.ones(3))


def test_batchnorm_refuses_taped_moving_statistics():
    """Writing the aux states while they are on the tape would corrupt recorded
    gradients: refused before anything is written."""
    mm = nd.zeros((3,), dtype="float64")
    mm.attach_grad()
    with autograd.record():
        t = mm * 1
        with pytest.raises(RuntimeError, match="^BatchNorm: cannot write into an array on"):
            nd.BatchNorm(arr(sample((4, 3))), nd.ones((3,), dtype="float64"),
                         nd.zeros((3,), dtype="float64"), t, nd.ones((3,), dtype="float64"))


# -- LayerNorm, InstanceNorm, GroupNorm, L2Normalization ------------------------------------

def norm_ref(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    std = np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    return (x - mean) / std, mean, std


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, axis", [((2, 3, 4), -1), ((2, 3, 4), 1), ((5,), 0)])
def test_layernorm(shape, axis, dtype):
    x = sample(shape, 1, dtype=dtype)
    c = shape[axis]
    gamma, beta = sample((c,), 2, dtype=dtype), sample((c,), 3, dtype=dtype)
    y, mean, std = nd.LayerNorm(arr(x), arr(gamma), arr(beta), axis=axis,
                                output_mean_var=True)
    x64 = x.astype(np.float64)
    xhat, m, s = norm_ref(x64, axis, 1e-5)
    bshape = [1] * len(shape)
    bshape[axis] = -1
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(y.asnumpy(), xhat * gamma.reshape(bshape)
                               + beta.reshape(bshape), rtol=tol, atol=tol)
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=tol, atol=tol)
    np.testing.assert_allclose(std.asnumpy(), s, rtol=tol)


def test_instancenorm():
    x = sample((2, 3, 4, 2), 1)
    gamma, beta = sample((3,), 2), sample((3,), 3)
    y = nd.InstanceNorm(arr(x), arr(gamma), arr(beta), eps=1e-2)
    xhat, _, _ = norm_ref(x, (2, 3), 1e-2)
    np.testing.assert_allclose(y.asnumpy(), xhat * gamma.reshape(1, 3, 1, 1)
                               + beta.reshape(1, 3, 1, 1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("per", ["channel", "group"])
def test_groupnorm(per):
    x = sample((2, 6, 3, 2), 1)
    g = 3
    c = 6 if per == "channel" else g
    gamma, beta = sample((c,), 2), sample((c,), 3)
    y, mean, std = nd.GroupNorm(arr(x), arr(gamma), arr(beta), num_groups=g,
                                output_mean_var=True)
    xg = x.reshape(2, g, 2, 3, 2)
    xhat, m, s = norm_ref(xg, (2, 3, 4), 1e-5)
    if per == "channel":
        want = xhat.reshape(x.shape) * gamma.reshape(1, 6, 1, 1) + beta.reshape(1, 6, 1, 1)
    else:
        want = (xhat * gamma.reshape(1, g, 1, 1, 1)
                + beta.reshape(1, g, 1, 1, 1)).reshape(x.shape)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean.asnumpy().reshape(2, g), m.reshape(2, g), rtol=1e-12)
    np.testing.assert_allclose(std.asnumpy().reshape(2, g), s.reshape(2, g), rtol=1e-12)


@pytest.mark.parametrize("mode, axes", [("instance", (1, 2, 3)), ("channel", (1,)),
                                        ("spatial", (2, 3))])
def test_l2normalization(mode, axes):
    x = sample((2, 3, 2, 2), 1)
    y = nd.L2Normalization(arr(x), mode=mode)
    np.testing.assert_allclose(
        y.asnumpy(), x / np.sqrt((x * x).sum(axis=axes, keepdims=True) + 1e-10),
        rtol=1e-12)


def test_norm_layers_blocked_mean_std_gradients():
    """LayerNorm's and GroupNorm's mean/std outputs pass no gradient (as BatchNorm's)."""
    x0 = sample((2, 4, 3), 1)
    for op, attrs, c in ((nd.LayerNorm, {}, 3), (nd.GroupNorm, {"num_groups": 2}, 4)):
        grads = []
        for extra in (False, True):
            x = arr(x0)
            x.attach_grad()
            with autograd.record():
                y, m, s = op(x, arr(sample((c,), 2)), arr(sample((c,), 3)),
                             output_mean_var=True, **attrs)
                loss = y.sum() + ((m * 3 + s).sum() if extra else 0)
            loss.backward()
            grads.append(x.grad.asnumpy())
        np.testing.assert_array_equal(grads[0], grads[1])


# -- Activation, LeakyReLU -----------------------------------------------------------------

ACTS = {"relu": lambda x: np.maximum(x, 0), "sigmoid": sps.expit, "tanh": np.tanh,
        "softrelu": lambda x: np.log1p(np.exp(x)), "softsign": lambda x: x / (1 + np.abs(x))}


@pytest.mark.parametrize("act_type", sorted(ACTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation(act_type, dtype):
    x = sample((3, 4), 1, -5, 5, dtype)
    y = nd.Activation(arr(x), act_type=act_type)
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_allclose(y.asnumpy(), ACTS[act_type](x.astype(np.float64)),
                               rtol=1e-6 if dtype == "float32" else 1e-12, atol=1e-7)


def test_softrelu_is_stable():
    y = nd.Activation(nd.array([-1000.0, 0.0, 1000.0]), act_type="softrelu").asnumpy()
    np.testing.assert_allclose(y, [0.0, math.log(2), 1000.0])


SELU = (1.6732632423543772, 1.0507009873554805)
LEAKY = {
    "leaky": lambda x, s: np.where(x > 0, x, s * x),
    "elu": lambda x, s: np.where(x > 0, x, s * np.expm1(x)),
    "selu": lambda x, s: SELU[1] * np.where(x > 0, x, SELU[0] * np.expm1(x)),
    "gelu": lambda x, s: 0.5 * x * (1 + sps.erf(x / np.sqrt(2))),
    "rrelu": lambda x, s: np.where(x > 0, x, (0.125 + 0.334) / 2 * x),   # inference
}


@pytest.mark.parametrize("act_type", sorted(LEAKY))
def test_leaky_relu(act_type):
    x = sample((3, 4), 1)
    y = nd.LeakyReLU(arr(x), act_type=act_type, slope=0.3)
    np.testing.assert_allclose(y.asnumpy(), LEAKY[act_type](x, 0.3), rtol=1e-12)


def test_prelu_per_channel_and_shared():
    x = sample((2, 3, 4), 1)
    gamma = sample((3,), 2, 0.1, 0.5)
    y = nd.LeakyReLU(arr(x), arr(gamma), act_type="prelu")
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, gamma.reshape(1, 3, 1) * x))
    y = nd.LeakyReLU(arr(x), arr(gamma[:1]), act_type="prelu")
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, gamma[0] * x))


def test_rrelu_training_draws_slopes_and_the_gradient_uses_them():
    x = arr(sample((50, 40), 1))
    x.attach_grad()
    rt_random.seed(3)
    with autograd.record():
        y = nd.LeakyReLU(x, act_type="rrelu", lower_bound=0.2, upper_bound=0.4)
    y.backward()
    xv, yv, g = x.asnumpy(), y.asnumpy(), x.grad.asnumpy()
    neg = xv < 0
    slopes = yv[neg] / xv[neg]
    assert slopes.min() >= 0.2 and slopes.max() <= 0.4
    assert slopes.std() > 0.03                   # random per element, not one slope
    np.testing.assert_allclose(g[neg], slopes, rtol=1e-12)
    np.testing.assert_array_equal(g[~neg], 1.0)


# -- output layers ---------------------------------------------------------------------

def _backward_of(op, x, label, head=None, **attrs):
    xv, lv = arr(x), arr(label)
    xv.attach_grad()
    lv.attach_grad()
    with autograd.record():
        y = op(xv, lv, **attrs)
    y.backward(None if head is None else arr(head))
    return y.asnumpy(), xv.grad.asnumpy(), lv.grad.asnumpy()


def test_softmax_output_gradient_ignores_the_head():
    x, label = sample((4, 5), 1), np.array([0.0, 4.0, 2.0, 2.0])
    p = sps.softmax(x, axis=1)
    want = p - np.eye(5)[label.astype(int)]
    for head in (None, sample((4, 5), 2)):
        y, g, lg = _backward_of(nd.SoftmaxOutput, x, label, head)
        np.testing.assert_allclose(y, p, rtol=1e-12)
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(lg, np.zeros(4))          # the label gets none
    head = sample((4, 5), 3)
    _, g, _ = _backward_of(nd.SoftmaxOutput, x, label, head, out_grad=True)
    np.testing.assert_allclose(g, want * head, rtol=1e-12, atol=1e-15)


def test_softmax_output_ignore_and_normalization():
    x, label = sample((4, 3), 1), np.array([0.0, 1.0, 1.0, 2.0])
    p = sps.softmax(x, axis=1)
    keep = (label != 1)[:, None]
    want = (p - np.eye(3)[label.astype(int)]) * keep * 0.5 / 2      # 2 valid labels
    _, g, _ = _backward_of(nd.SoftmaxOutput, x, label, use_ignore=True, ignore_label=1,
                           normalization="valid", grad_scale=0.5)
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-15)
    _, g, _ = _backward_of(nd.SoftmaxOutput, x, label, normalization="batch")
    np.testing.assert_allclose(g, (p - np.eye(3)[label.astype(int)]) / 4, rtol=1e-12)


def test_softmax_output_bad_label_raises_in_backward():
    xv = arr(sample((2, 3)))
    xv.attach_grad()
    with autograd.record():
        y = nd.SoftmaxOutput(xv, nd.array([0.0, 7.0], dtype="float64"))
    with pytest.raises(ValueError, match=r"label must hold class indices in \[0, 3\) "
                                         r"\(got 7.0 at row 1\)"):
        y.backward()


@pytest.mark.parametrize("name, fwd, dfn", [
    ("LinearRegressionOutput", lambda x: x, lambda d: d),
    ("LogisticRegressionOutput", sps.expit, lambda d: d),
    ("MAERegressionOutput", lambda x: x, np.sign)])
def test_regression_outputs(name, fwd, dfn):
    x, label = sample((4, 3), 1), sample((4, 3), 2)
    y, g, lg = _backward_of(getattr(nd, name), x, label, sample((4, 3), 3), grad_scale=2.0)
    np.testing.assert_allclose(y, fwd(x), rtol=1e-12)
    np.testing.assert_allclose(g, dfn(fwd(x) - label) * 2.0 / 3, rtol=1e-12)
    np.testing.assert_array_equal(lg, np.zeros((4, 3)))


def test_make_loss():
    x = sample((4, 3), 1)
    for attrs, scale in (({}, 1.0), ({"normalization": "batch", "grad_scale": 2.0}, 0.5),
                         ({"normalization": "valid", "valid_thresh": 0.5},
                          1 / max((x > 0.5).sum(), 1))):
        xv = arr(x)
        xv.attach_grad()
        with autograd.record():
            y = nd.MakeLoss(xv, **attrs)
        y.backward(arr(sample((4, 3), 2)))
        np.testing.assert_array_equal(y.asnumpy(), x)
        np.testing.assert_allclose(xv.grad.asnumpy(), np.full((4, 3), scale), rtol=1e-12)


@pytest.mark.parametrize("sigma", [1.0, 2.0, 0.5])
def test_smooth_l1(sigma):
    x = sample((5, 4), 1, -3, 3)
    s2 = sigma ** 2
    want = np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x * x, np.abs(x) - 0.5 / s2)
    np.testing.assert_allclose(nd.smooth_l1(arr(x), scalar=sigma).asnumpy(), want,
                               rtol=1e-12)


free_failing_tests(globals())


# the kernels' paths: short rows summed per channel (post 7: one vector and a scalar
# tail), long rows in memory order with a flush inside the row (post 1037), a tail of 4
# (post 660); data far from 0 (the shifted sums)
@pytest.mark.parametrize("shape, axis, loc", [((6, 5, 7), 1, 0.0), ((3, 4, 1037), 1, 50.0),
                                              ((2, 9, 33, 20), 1, -20.0),
                                              ((2, 33, 20, 3), 3, 5.0)])
def test_batchnorm_threaded_kernels_match_serial(shape, axis, loc):
    """The compiled float32 kernels give the same results on several threads (a block of
    channels per thread for the sums, of rows for the affine passes) as on one, within
    float32 rounding of the float64 definition: the output, the moving statistics and
    the gradients (d data = gamma * invstd * (g - mean(g) - xhat * mean(g * xhat)))."""
    from runtime import _sparse_common
    c = shape[axis]
    x = sample(shape, 1, dtype="float32") * 3 + np.float32(loc)
    head = sample(shape, 2, dtype="float32")
    gamma, beta = sample((c,), 3, 0.5, 2.0, "float32"), sample((c,), 4, dtype="float32")
    results = []
    threads = _sparse_common.get_num_threads()
    old = _sparse_common.set_arith_serial_cutoff(0)
    try:
        for n in (1, 2):
            _sparse_common.set_num_threads(n)
            xv, gv, bv = arr(x), arr(gamma), arr(beta)
            for v in (xv, gv, bv):
                v.attach_grad()
            mm, mv = nd.zeros((c,)), nd.ones((c,))
            with autograd.record():
                y = nd.BatchNorm(xv, gv, bv, mm, mv, fix_gamma=False, axis=axis, eps=1e-5)
            y.backward(arr(head))
            results.append([a.asnumpy() for a in (y, xv.grad, gv.grad, bv.grad, mm, mv)])
    finally:
        _sparse_common.set_arith_serial_cutoff(old)
        _sparse_common.set_num_threads(threads)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    x64, g64 = x.astype(np.float64), head.astype(np.float64)
    mean, var = batch_stats(x64, axis)
    y, dx, dgamma, dbeta, mm, mv = results[0]
    np.testing.assert_allclose(y, bn_ref(x64, gamma, beta, mean, var, 1e-5, axis),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mm, 0.1 * mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mv, 0.9 + 0.1 * var, rtol=1e-5)
    red = tuple(i for i in range(len(shape)) if i != axis)
    bshape = [1] * len(shape)
    bshape[axis] = c
    invstd = 1 / np.sqrt(var + 1e-5)
    xhat = (x64 - mean.reshape(bshape)) * invstd.reshape(bshape)
    want_dbeta, want_dgamma = g64.sum(axis=red), (g64 * xhat).sum(axis=red)
    m = x.size // c
    want_dx = (gamma * invstd).reshape(bshape) * (
        g64 - (want_dbeta / m).reshape(bshape) - xhat * (want_dgamma / m).reshape(bshape))
    np.testing.assert_allclose(dbeta, want_dbeta, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dgamma, want_dgamma, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-3, atol=1e-4)


def test_batchnorm_statistics_far_from_zero():
    """Data centred far from 0 (1e6 + N(0, 1)): the one-pass moments and the backward's
    sums are shifted, so nothing cancels."""
    x = 1e6 + sample((8, 3, 5), 1)
    head = sample((8, 3, 5), 2)
    xv = arr(x)
    xv.attach_grad()
    mm, mv = nd.zeros((3,), dtype="float64"), nd.ones((3,), dtype="float64")
    ones, zero = nd.ones((3,), dtype="float64"), nd.zeros((3,), dtype="float64")
    with autograd.record():
        y, mean, invstd = nd.BatchNorm(xv, ones, zero, mm, mv, output_mean_var=True)
    y.backward(arr(head))
    m, v = batch_stats(x, 1)
    np.testing.assert_allclose(mean.asnumpy(), m, rtol=1e-15)
    np.testing.assert_allclose(invstd.asnumpy(), 1 / np.sqrt(v + 1e-3), rtol=1e-9)
    xc = x - m.reshape(1, 3, 1)
    r = (1 / np.sqrt(v + 1e-3)).reshape(1, 3, 1)
    xhat = xc * r
    dx = r * (head - head.mean(axis=(0, 2), keepdims=True)
              - xhat * (head * xhat).mean(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(xv.grad.asnumpy(), dx, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("training", [True, False])
def test_batchnorm_float16_gradients(training):
    """float16 data (float32 parameters) through the NumPy kernels: the gradients in
    training and inference against the float64 ones."""
    x = sample((6, 3, 4), 1, dtype="float16")
    head = sample((6, 3, 4), 2, dtype="float16")
    params = [sample((3,), 3, 0.5, 2.0), sample((3,), 4), sample((3,), 5),
              sample((3,), 6, 0.5, 2.0)]
    grads = {}
    for dt, pdt in (("float16", "float32"), ("float64", "float64")):
        xv = arr(x.astype(dt))
        ps = [arr(p.astype(pdt)) for p in params]
        for v in [xv] + ps[:2]:
            v.attach_grad()
        with autograd.record(train_mode=training):
            y = nd.BatchNorm(xv, *ps, fix_gamma=False)
        y.backward(arr(head.astype(dt)))
        assert xv.grad.dtype == np.dtype(dt) and ps[0].grad.dtype == np.dtype(pdt)
        grads[dt] = [v.grad.asnumpy().astype(np.float64) for v in [xv] + ps[:2]]
    for a, b in zip(grads["float16"], grads["float64"]):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2 * np.abs(b).max())


def test_batchnorm_updates_moving_statistics_marked_without_gradient():
    """Moving statistics marked as variables with grad_req='null' (a training layer's aux
    states) are updated while recording; a recorded node that saved their old value is
    caught by the version check at backward."""
    x0 = sample((4, 3), 1)
    mm, mv = nd.zeros((3,), dtype="float64"), nd.ones((3,), dtype="float64")
    for a in (mm, mv):
        a.attach_grad(grad_req="null")
    x = arr(x0)
    x.attach_grad()
    gamma, beta = arr(sample((3,), 2, 0.5, 2.0)), arr(sample((3,), 3))
    with autograd.record():
        y = nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False, momentum=0.5)
    y.backward()
    np.testing.assert_allclose(mm.asnumpy(), 0.5 * x0.mean(axis=0), rtol=1e-12)
    w = arr(sample((3,), 4))
    w.attach_grad()
    with autograd.record():
        z = (w * mm).sum()                       # saves mm's old value
        nd.BatchNorm(x, gamma, beta, mm, mv)
    with pytest.raises(RuntimeError, match=r"^backward: multiply's input 1 \(shape \(3,\)\) "
                                           r"was written after multiply saved it"):
        z.backward()
