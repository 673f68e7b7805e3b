"""runtime.gluon.loss against NumPy/SciPy formulas (float64), large logits without
overflow, weights, gradients against float64 central differences, bad input."""

import os

import numpy as np
import pytest
import scipy.special as sps

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import loss as L
from tests.runtime.conftest import free_failing_tests
from tests.runtime.mxnet_fixtures import LOSS_CASES


def rand(shape, seed=0, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def a64(x):
    return nd.array(x, dtype="float64")


def check_grad(fn, x, eps=1e-6, seed=0):
    """d sum(fn(x)) / dx by autograd against central differences (float64)."""
    rng = np.random.default_rng(seed)
    xa = a64(x)
    xa.attach_grad()
    with autograd.record():
        out = fn(xa)
    out.backward()
    v = rng.standard_normal(x.shape)
    num = (fn(a64(x + eps * v)).asnumpy().sum() - fn(a64(x - eps * v)).asnumpy().sum()) \
        / (2 * eps)
    ana = float(np.sum(xa.grad.asnumpy() * v))
    assert np.isclose(ana, num, rtol=1e-6, atol=1e-9), (ana, num)


# -- softmax cross-entropy --------------------------------------------------------------

def test_softmax_ce_sparse_labels_matches_numpy():
    x = rand((5, 4))
    y = np.array([0, 3, 1, 1, 2])
    got = L.SoftmaxCrossEntropyLoss()(a64(x), a64(y))
    ref = sps.logsumexp(x, axis=1) - x[np.arange(5), y]
    assert got.shape == (5,)
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-12)
    # (n, 1) labels, MXNet's habit, are accepted too
    np.testing.assert_allclose(L.SoftmaxCELoss()(a64(x), a64(y[:, None])).asnumpy(), ref,
                               rtol=1e-12)


def test_softmax_ce_dense_labels_axis_and_from_logits():
    x = rand((3, 4, 2), 1)
    p = np.random.default_rng(2).dirichlet(np.ones(4), (3, 2)).transpose(0, 2, 1)
    logp = x - sps.logsumexp(x, axis=1, keepdims=True)
    ref = -(p * logp).sum(axis=1).mean(axis=1)
    got = L.SoftmaxCrossEntropyLoss(axis=1, sparse_label=False)(a64(x), a64(p))
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-12)
    got = L.SoftmaxCrossEntropyLoss(axis=1, sparse_label=False, from_logits=True)(
        a64(logp), a64(p))
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-12)
    y = np.array([[0, 3], [2, 2], [1, 0]])
    ref = -np.take_along_axis(logp, y[:, None, :], axis=1)[:, 0, :].mean(axis=1)
    got = L.SoftmaxCrossEntropyLoss(axis=1)(a64(x), a64(y))
    np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-12)


def test_softmax_ce_large_logits_do_not_overflow():
    x = np.array([[1e4, -1e4, 0.0], [3e4, 3e4, -5.0]], np.float32)
    y = np.array([1, 0])
    got = L.SoftmaxCrossEntropyLoss()(nd.array(x), nd.array(y)).asnumpy()
    ref = sps.logsumexp(x.astype(np.float64), axis=1) - x[np.arange(2), y]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_softmax_ce_weights():
    x, y = rand((4, 3), 3), np.array([0, 1, 2, 0])
    sw = rand((4, 1), 4, 0, 1)
    base = sps.logsumexp(x, axis=1) - x[np.arange(4), y]
    got = L.SoftmaxCrossEntropyLoss(weight=0.5)(a64(x), a64(y), a64(sw))
    np.testing.assert_allclose(got.asnumpy(), 0.5 * base * sw[:, 0], rtol=1e-12)


def test_softmax_ce_gradient():
    y = a64([2, 0, 1, 1])
    check_grad(lambda p: L.SoftmaxCrossEntropyLoss()(p, y), rand((4, 3), 5))
    y3 = a64([[2, 0], [1, 1]])            # classes on axis 1 of 3-D pred: the composition
    check_grad(lambda p: L.SoftmaxCrossEntropyLoss(axis=1)(p, y3), rand((2, 3, 2), 19))
    check_grad(lambda p: L.SoftmaxCrossEntropyLoss(from_logits=True)(p, y), rand((4, 3), 20))
    q = a64(np.random.default_rng(6).dirichlet(np.ones(3), 4))
    check_grad(lambda p: L.SoftmaxCrossEntropyLoss(sparse_label=False)(p, q), rand((4, 3), 7))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("label_dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_fused_softmax_ce_kernels_match_scipy(dtype, label_dtype):
    """The fused op and its gradient op (compiled kernels for float32/float64 logits and
    float32/float64/int32/int64 labels, NumPy for the rest) against SciPy in float64,
    with large logits and a row holding NaN (NaN loss and gradient, as NumPy's max)."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((9, 7)) * 30).astype(dtype)
    x[4, 2] = np.nan
    label = rng.integers(0, 7, 9).astype(label_dtype)
    g = rng.standard_normal(9).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    x64 = x.astype(np.float64)
    want = -sps.log_softmax(x64, axis=1)[np.arange(9), label.astype(np.int64)]
    got = nd._softmax_ce_loss(nd.array(x, dtype=dtype), nd.array(label, dtype=label_dtype))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=tol, atol=tol)
    assert np.isnan(got.asnumpy()[4]) and got.dtype == dtype
    want_g = (sps.softmax(x64, axis=1) - np.eye(7)[label.astype(np.int64)]) * g[:, None]
    got_g = nd._softmax_ce_loss_grad(nd.array(x, dtype=dtype),
                                     nd.array(label, dtype=label_dtype),
                                     nd.array(g, dtype=dtype)).asnumpy()
    np.testing.assert_allclose(got_g, want_g, rtol=tol * 10, atol=tol * 10)
    assert np.isnan(got_g[4]).all()
    bad = label.copy()
    bad[6] = 7
    for op, args in (("_softmax_ce_loss", []), ("_softmax_ce_loss_grad", [g])):
        out = nd.full((9,) if not args else (9, 7), 3.0, dtype=dtype)
        with pytest.raises(ValueError, match=rf"^{op}: label must hold integers in \[0, 7\) "
                                             r"\(got 7(\.0)? at position 6\)"):
            getattr(nd, op)(nd.array(x, dtype=dtype), nd.array(bad, dtype=label_dtype),
                            *[nd.array(a, dtype=dtype) for a in args], out=out)
        assert (out.asnumpy() == 3.0).all()


def test_softmax_ce_bad_labels():
    x = nd.zeros((2, 3))
    # the fused op (2-D pred, classes on axis 1) and the composition name the value
    with pytest.raises(ValueError, match=r"_softmax_ce_loss: label must hold integers in "
                                         r"\[0, 3\) \(got 3.0 at position 1\)"):
        L.SoftmaxCrossEntropyLoss()(x, nd.array([0, 3]))
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropyLoss: label must hold class "
                                         r"indices in \[0, 3\) \(got -1.0 at \(1, 0\)\)"):
        L.SoftmaxCrossEntropyLoss(axis=1)(nd.zeros((2, 3, 1)), nd.array([[0], [-1]]))
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropyLoss: label must have shape "
                                         r"\(2,\) for pred of shape \(2, 3\)"):
        L.SoftmaxCrossEntropyLoss()(x, nd.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropyLoss: axis must be in "
                                         r"\[-2, 2\)"):
        L.SoftmaxCrossEntropyLoss(axis=2)(x, nd.array([0, 1]))
    with pytest.raises(TypeError, match=r"SoftmaxCrossEntropyLoss: weight must be a number "
                                        r"or None \(got 'x'\)"):
        L.SoftmaxCrossEntropyLoss(weight="x")


# -- L2, L1 -----------------------------------------------------------------------------

def test_l2_and_l1_match_numpy():
    p, t = rand((3, 2, 4), 8), rand((3, 2, 4), 9)
    np.testing.assert_allclose(L.L2Loss()(a64(p), a64(t)).asnumpy(),
                               (0.5 * (p - t) ** 2).mean(axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(L.L2Loss(weight=3.0)(a64(p), a64(t)).asnumpy(),
                               (1.5 * (p - t) ** 2).mean(axis=(1, 2)), rtol=1e-12)
    np.testing.assert_allclose(L.L1Loss()(a64(p), a64(t)).asnumpy(),
                               np.abs(p - t).mean(axis=(1, 2)), rtol=1e-12)
    # a label with as many values is reshaped like pred (Gluon)
    np.testing.assert_allclose(L.L1Loss()(a64(p[:, 0, :1]), a64(t[:, 0, 0])).asnumpy(),
                               np.abs(p[:, 0, 0] - t[:, 0, 0]), rtol=1e-12)
    sw = rand((3, 1, 1), 10, 0, 1)
    np.testing.assert_allclose(L.L1Loss(batch_axis=0)(a64(p), a64(t), a64(sw)).asnumpy(),
                               (np.abs(p - t) * sw).mean(axis=(1, 2)), rtol=1e-12)
    with pytest.raises(ValueError, match=r"L2Loss: label must have the shape of pred "
                                         r"\(3, 2, 4\)"):
        L.L2Loss()(a64(p), a64(t[:2]))


def test_l2_and_l1_gradients():
    t = a64(rand((3, 4), 11))
    check_grad(lambda p: L.L2Loss()(p, t), rand((3, 4), 12))
    check_grad(lambda p: L.L1Loss()(p, t), rand((3, 4), 13))


# -- sigmoid binary cross-entropy -------------------------------------------------------

def _bce(x, z):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def test_sigmoid_bce_matches_stable_formula():
    x, z = rand((4, 3), 14, -5, 5), np.random.default_rng(15).integers(0, 2, (4, 3))
    got = L.SigmoidBinaryCrossEntropyLoss()(a64(x), a64(z))
    np.testing.assert_allclose(got.asnumpy(), _bce(x, z).mean(axis=1), rtol=1e-12)
    p = sps.expit(x)
    got = L.SigmoidBCELoss(from_sigmoid=True)(a64(p), a64(z))
    ref = -(z * np.log(p + 1e-12) + (1 - z) * np.log(1 - p + 1e-12))
    np.testing.assert_allclose(got.asnumpy(), ref.mean(axis=1), rtol=1e-10)
    pw = a64(np.array([2.0, 1.0, 0.5]))
    got = L.SigmoidBCELoss()(a64(x), a64(z), pos_weight=pw)
    ref = -(2 ** 0 * (z * np.array([2.0, 1.0, 0.5]) * np.log(p) + (1 - z) * np.log(1 - p)))
    np.testing.assert_allclose(got.asnumpy(), ref.mean(axis=1), rtol=1e-10)


def test_sigmoid_bce_large_logits_do_not_overflow():
    x = np.array([[1e4, -1e4, 88.0, -100.0]], np.float32)
    z = np.array([[0.0, 1.0, 1.0, 0.0]], np.float32)
    got = L.SigmoidBCELoss(batch_axis=0)(nd.array(x), nd.array(z))
    assert np.isfinite(got.asnumpy()).all()
    np.testing.assert_allclose(got.asnumpy(), _bce(x.astype(np.float64), z).mean(axis=1),
                               rtol=1e-6)


def test_sigmoid_bce_gradient_including_zero_logits():
    z = a64([[1.0, 0.0, 1.0], [0.0, 0.5, 1.0]])
    check_grad(lambda p: L.SigmoidBCELoss()(p, z), rand((2, 3), 16))
    # at x = 0 the gradient is sigmoid(0) - z (a |x|-based formula would lose the 0.5)
    x = a64(np.zeros((2, 3)))
    x.attach_grad()
    with autograd.record():
        out = L.SigmoidBCELoss()(x, z)
    out.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), (0.5 - z.asnumpy()) / 3, rtol=1e-12)
    pw = a64([3.0, 1.0, 0.5])
    check_grad(lambda p: L.SigmoidBCELoss()(p, z, pos_weight=pw), rand((2, 3), 17))
    check_grad(lambda p: L.SigmoidBCELoss(from_sigmoid=True)(p, z), rand((2, 3), 18, 0.1, 0.9))


free_failing_tests(globals())


# -- every Gluon 1.x loss against MXNet 1.9.1 (data/mxnet191.npz, mxnet_fixtures.py) ----

MX = np.load(os.path.join(os.path.dirname(__file__), "data", "mxnet191.npz"))


@pytest.mark.parametrize("case", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_loss_matches_mxnet(case):
    key, cls, kwargs, kinds, _, sw_shape = case
    loss = getattr(L, cls)(**kwargs)
    args = [nd.array(MX[f"loss/{key}/in{i}"]) for i in range(len(kinds))]
    if sw_shape is not None:
        args.append(nd.array(MX[f"loss/{key}/sw"]))
    args[0].attach_grad()
    with autograd.record():
        out = loss(*args)
    out.backward()
    assert out.shape == MX[f"loss/{key}/out"].shape
    # float32 on both sides, summed in different orders
    np.testing.assert_allclose(out.asnumpy(), MX[f"loss/{key}/out"], rtol=5e-5, atol=1e-6)
    if f"loss/{key}/grad" in MX:
        np.testing.assert_allclose(args[0].grad.asnumpy(), MX[f"loss/{key}/grad"],
                                   rtol=5e-5, atol=1e-5)


_R = np.random.default_rng(4)
_PROB = _R.uniform(0.1, 1.0, (4, 3))
_PROB /= _PROB.sum(axis=1, keepdims=True)
_REAL = [_R.uniform(-1.5, 1.5, (4, 3)) for _ in range(2)]
_SIGNS = np.where(_R.uniform(size=(4, 3)) > 0.5, 1.0, -1.0)


@pytest.mark.parametrize("loss,others", [
    (L.KLDivLoss(from_logits=False), [_PROB]), (L.HuberLoss(rho=0.7), [_REAL[0]]),
    (L.HingeLoss(), [_SIGNS]), (L.SquaredHingeLoss(), [_SIGNS]),
    (L.LogisticLoss(), [_SIGNS]), (L.TripletLoss(), _REAL),
    (L.PoissonNLLLoss(from_logits=False, compute_full=True),
     [np.array([[0.0, 1, 2], [3, 4, 0], [2, 2, 5], [1, 0, 3]])]),
    (L.CosineEmbeddingLoss(margin=0.1), [_REAL[0], np.array([1.0, -1.0, 1.0, -1.0])]),
    (L.SDMLLoss(), [_REAL[0]])], ids=lambda v: type(v).__name__ if not
    isinstance(v, list) else "")
def test_new_losses_gradient_central_differences(loss, others):
    x = np.random.default_rng(3).uniform(0.3, 2.0, (4, 3))     # positive: Poisson's rate
    check_grad(lambda a: loss(a, *[a64(o) for o in others]), x)


def test_poisson_full_is_finite_at_zero_counts():
    # MXNet 1.9.1 gives NaN here (0 * log 0 before masking); the Stirling term of a
    # count <= 1 is 0
    pred = np.array([[0.5, 1.5, 2.0]])
    target = np.array([[0.0, 1.0, 4.0]])
    out = L.PoissonNLLLoss(from_logits=False, compute_full=True)(a64(pred), a64(target))
    stirling = np.array([0.0, 0.0, 4 * np.log(4) - 4 + 0.5 * np.log(2 * np.pi * 4)])
    ref = (pred - target * np.log(pred + 1e-8) + stirling).mean()
    np.testing.assert_allclose(out.asnumpy(), [ref], rtol=1e-12)


def test_new_losses_bad_arguments():
    with pytest.raises(ValueError, match="HuberLoss: rho must be > 0"):
        L.HuberLoss(rho=0)
    with pytest.raises(ValueError, match="label_format must be 'signed' or 'binary'"):
        L.LogisticLoss(label_format="zero_one")
    with pytest.raises(TypeError, match="HingeLoss: margin must be a number"):
        L.HingeLoss(margin="1")
    with pytest.raises(ValueError, match=r"SDMLLoss: x1 and x2 must have one shape"):
        L.SDMLLoss()(nd.ones((3, 2)), nd.ones((2, 2)))
    with pytest.raises(ValueError, match="HuberLoss: label must have the shape of pred"):
        L.HuberLoss()(nd.ones((3, 2)), nd.ones((4,)))
    assert repr(L.SDMLLoss()) == "SDMLLoss(batch_axis=0, w=1.0)"


def test_gluons_private_helpers_keep_their_signatures():
    # custom losses written for Gluon 1.x call these two by name
    from runtime.gluon.loss import _apply_weighting, _reshape_like
    loss = nd.array([[1.0, 2.0], [3.0, 4.0]])
    got = _apply_weighting(nd, loss, 0.5, nd.array([[2.0], [0.0]]))
    np.testing.assert_array_equal(got.asnumpy(), [[1.0, 2.0], [0.0, 0.0]])
    assert _apply_weighting(nd, loss) is loss
    with pytest.raises(TypeError, match=r"_apply_weighting: weight must be a number \(got "
                                        r"'2'\)"):
        _apply_weighting(nd, loss, "2")
    np.testing.assert_array_equal(_reshape_like(nd, nd.arange(4), loss).asnumpy(),
                                  [[0.0, 1.0], [2.0, 3.0]])
    x, y = mx.sym.var("x"), mx.sym.var("y")
    assert _reshape_like(mx.sym, x, y).infer_shape(x=(4,), y=(2, 2))[1] == [(2, 2)]

    class Margin(mx.gluon.loss.Loss):
        def __init__(self, weight=2.0, batch_axis=0, **kwargs):
            super().__init__(weight, batch_axis, **kwargs)

        def hybrid_forward(self, F, pred, label):
            loss = F.relu(1.0 - pred * _reshape_like(F, label, pred))
            return F.mean(_apply_weighting(F, loss, self._weight, None), axis=1)

    pred, label = nd.array([[0.5, 2.0], [-1.0, 0.0]]), nd.array([1.0, 1.0, -1.0, 1.0])
    want = 2.0 * np.maximum(0, 1 - np.array([[0.5, 2.0], [-1.0, 0.0]]) *
                            np.array([[1.0, 1.0], [-1.0, 1.0]])).mean(axis=1)
    margin = Margin()
    np.testing.assert_allclose(margin(pred, label).asnumpy(), want)
    margin.hybridize()
    np.testing.assert_allclose(margin(pred, label).asnumpy(), want)
