"""MXNet 1.x's own unit tests for nd.contrib, CTCLoss and Convolution/Deconvolution/
Pooling, ported (test_operator.py, test_contrib_operator.py, test_loss.py): the cases
that run on CPU, with MXNet's reference numbers."""

import numpy as np
import pytest

from runtime import autograd, nd
from runtime.nn import loss as gloss


def a64(x):
    return nd.array(np.asarray(x, dtype=np.float64), dtype="float64")


# -- contrib (test_operator.py / test_contrib_operator.py) -------------------------------------

def test_index_copy_mxnet():
    x = nd.zeros((5, 3))
    t = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    index = nd.array([0, 4, 2], dtype="int64")
    tensor = np.array([[1, 2, 3], [0, 0, 0], [7, 8, 9], [0, 0, 0], [4, 5, 6]])
    x.attach_grad()
    t.attach_grad()
    with autograd.record():
        out = nd.contrib.index_copy(x, index, t)
    out.backward()
    np.testing.assert_array_equal(out.asnumpy(), tensor)
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0] * 3, [1] * 3, [0] * 3, [1] * 3, [0] * 3])
    np.testing.assert_array_equal(t.grad.asnumpy(), np.ones((3, 3)))


def test_boolean_mask_mxnet():
    data = nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    for index, want, wgrad in (([0, 1, 0], [[4, 5, 6]], [[0] * 3, [1] * 3, [0] * 3]),
                               ([0, 0, 0], np.zeros((0, 3)), np.zeros((3, 3)))):
        data.attach_grad()
        with autograd.record():
            out = nd.contrib.boolean_mask(data, nd.array(index))
        out.backward()
        np.testing.assert_array_equal(out.asnumpy(), np.asarray(want).reshape(-1, 3))
        np.testing.assert_array_equal(data.grad.asnumpy(), wgrad)
    # accumulated gradient of two masks, three times
    rng = np.random.default_rng(0)
    a = nd.array(rng.integers(0, 100, (100, 30)).astype(np.float32))
    a.attach_grad(grad_req="add")
    bi = nd.array(rng.integers(0, 100, 100) > 50)
    ci = nd.array(rng.integers(0, 100, 100) < 50)
    for _ in range(3):
        with autograd.record():
            b = nd.contrib.boolean_mask(a, bi)
            c = nd.contrib.boolean_mask(a, ci)
            su = b.sum() + c.sum()
        su.backward()
    grad = np.tile((bi.asnumpy() + ci.asnumpy()).reshape(-1, 1), (1, 30)) * 3
    np.testing.assert_allclose(a.grad.asnumpy(), grad)
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy()[bi.asnumpy().astype(bool)])


@pytest.mark.parametrize("shape", [(10,), (7, 5, 29), (5, 7, 11, 3, 2, 4), (2, 0, 3)])
def test_index_array_mxnet(shape):
    want = np.stack(np.mgrid[tuple(slice(0, x) for x in shape)], axis=-1)
    out = nd.contrib.index_array(nd.ones(shape))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.asnumpy(), want.reshape(shape + (len(shape),)))
    if len(shape) == 6:
        for axes in [(3,), (4, 1), (5, 1, 3), (-1,), (-5, -1, -3)]:
            np.testing.assert_array_equal(
                nd.contrib.index_array(nd.ones(shape), axes=axes).asnumpy(),
                want[..., list(axes)])
    assert nd.contrib.index_array(nd.ones(())).shape == (0,)


def test_arange_like_mxnet():
    for sh in [(10,), (10, 20), (10, 20, 30)]:
        data = nd.array(np.random.rand(*sh))
        for axis in (0, -1):
            np.testing.assert_array_equal(
                nd.contrib.arange_like(data, start=0, axis=axis).asnumpy(),
                np.arange(sh[axis]))
        np.testing.assert_array_equal(nd.contrib.arange_like(data, start=0).asnumpy(),
                                      np.arange(np.prod(sh)).reshape(sh))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_quadratic_and_gradientmultiplier_mxnet(dtype):
    rng = np.random.default_rng(1)
    a, b, c = rng.random(3)
    m = rng.random() - 0.5
    tol = 1e-2 if dtype is np.float16 else 1e-5
    for ndim in range(1, 6):
        shape = tuple(rng.integers(1, 6, ndim))
        x_np = rng.standard_normal(shape).astype(dtype)
        x = nd.array(x_np, dtype=dtype)
        x.attach_grad()
        with autograd.record():
            y = nd.contrib.quadratic(x, a=a, b=b, c=c)
        y.backward()
        np.testing.assert_allclose(y.asnumpy(), a * x_np ** 2 + b * x_np + c, rtol=tol, atol=tol)
        np.testing.assert_allclose(x.grad.asnumpy(), 2 * a * x_np + b, rtol=tol, atol=tol)
        with autograd.record():
            y = nd.contrib.gradientmultiplier(nd.contrib.quadratic(x, a=a, b=b, c=c), scalar=m)
        y.backward()
        np.testing.assert_allclose(x.grad.asnumpy(), (2 * a * x_np + b) * m, rtol=tol,
                                   atol=tol)


def test_div_sqrt_dim_mxnet():
    x_np = np.random.rand(3, 4, 9).astype(np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.div_sqrt_dim(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), x_np / 3, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), np.full(x_np.shape, 1 / 3), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_allclose_mxnet(dtype):
    rng = np.random.default_rng(2)
    rtol = (1e-2 if dtype is np.float16 else 1e-5) * (1 + (2 * rng.random() - 1) / 100)
    atol = (1e-4 if dtype is np.float16 else 1e-7) * (1 + (2 * rng.random() - 1) / 100)
    for ndim in range(1, 10):
        shape = tuple(rng.integers(1, 9, ndim))
        a_np = rng.standard_normal(shape).astype(dtype)
        b_np = (a_np + rng.standard_normal(shape).astype(dtype) / 10000000).astype(dtype)
        want = np.allclose(a_np, b_np, rtol, atol)
        got = nd.contrib.allclose(nd.array(a_np, dtype=dtype), nd.array(b_np, dtype=dtype),
                                  rtol=rtol, atol=atol)
        assert (got.asnumpy() == 1) == want


@pytest.mark.parametrize("shape", [(3, 4), (3, 5), (2, 3, 2, 6)])
def test_fft_ifft_mxnet(shape):
    rng = np.random.default_rng(3)
    x_np = rng.normal(size=shape).astype(np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.fft(x, compute_size=128)
    c = np.fft.fft(x_np.astype(np.float64), axis=-1)
    want = np.empty(shape[:-1] + (2 * shape[-1],))
    want[..., 0::2], want[..., 1::2] = c.real, c.imag
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-3, atol=1e-5)
    g = rng.normal(-3, 3, want.shape).astype(np.float32)
    y.backward(nd.array(g))
    gc = g[..., 0::2] + 1j * g[..., 1::2]
    np.testing.assert_allclose(x.grad.asnumpy() / shape[-1], np.fft.ifft(gc, axis=-1).real,
                               rtol=1e-3, atol=1e-5)
    # ifft of interleaved data: the unnormalised inverse, real part
    z = nd.array(want.astype(np.float32))
    z.attach_grad()
    with autograd.record():
        w = nd.contrib.ifft(z)
    np.testing.assert_allclose(w.asnumpy() / shape[-1], x_np, rtol=1e-3, atol=1e-4)
    g2 = rng.normal(-3, 3, shape).astype(np.float32)
    w.backward(nd.array(g2))
    np.testing.assert_allclose(z.grad.asnumpy()[..., 0::2], np.fft.fft(g2, axis=-1).real,
                               rtol=1e-3, atol=1e-3)


def test_count_sketch_mxnet():
    rng = np.random.default_rng(4)
    n, in_dim, out_dim = 4, 7, 5
    data = rng.uniform(-10, 10, (n, in_dim)).astype(np.float32)
    h = rng.integers(0, out_dim, (1, in_dim)).astype(np.float32)
    s = rng.choice([-1, 1], (1, in_dim)).astype(np.float32)
    want = np.zeros((n, out_dim))
    for i in range(in_dim):
        want[:, int(h[0, i])] += data[:, i] * s[0, i]
    x = nd.array(data)
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.count_sketch(x, nd.array(h), nd.array(s), out_dim=out_dim)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)
    g = rng.uniform(-1, 1, (n, out_dim)).astype(np.float32)
    y.backward(nd.array(g))
    np.testing.assert_allclose(x.grad.asnumpy(), g[:, h[0].astype(int)] * s, rtol=1e-6)


# -- control flow (test_contrib_control_flow.py, imperative) ----------------------------------

def test_while_loop_mxnet_shapes():
    def cond(i, s):
        return i <= 5

    def func(i, s):
        return [i + s], [i + 1, s + i]
    outs, (i, s) = nd.contrib.while_loop(
        cond, func, (nd.array([0], dtype="int64"), nd.array([1], dtype="int64")),
        max_iterations=10)
    assert isinstance(outs, list) and len(outs) == 1 and outs[0].shape == (10, 1)
    np.testing.assert_array_equal(outs[0].asnumpy()[:6, 0], [1, 2, 4, 7, 11, 16])
    assert i.asnumpy()[0] == 6 and s.asnumpy()[0] == 16
    # no step output: [] and the final loop vars
    outs, v = nd.contrib.while_loop(lambda v: v < 3, lambda v: (None, v + 1), nd.array([0]),
                                    max_iterations=5)
    assert outs == [] and v.asnumpy()[0] == 3


def test_foreach_mxnet_nested():
    data = nd.array(np.arange(12).reshape(3, 4))
    x = data.copy()
    x.attach_grad()
    with autograd.record():
        outs, states = nd.contrib.foreach(
            lambda d, s: ([d * 2, [d + s[0]]], [s[0] + d]), x, [nd.zeros((4,))])
        total = outs[0].sum() + outs[1][0].sum() + states[0].sum()
    total.backward()
    assert outs[0].shape == (3, 4) and outs[1][0].shape == (3, 4)
    np.testing.assert_array_equal(states[0].asnumpy(), data.asnumpy().sum(0))
    # d/dx_t: 2 (outs0) + 1 + (later steps' use of s) + 1 (states)
    np.testing.assert_array_equal(x.grad.asnumpy()[:, 0], [2 + 1 + 2 + 1, 2 + 1 + 1 + 1,
                                                           2 + 1 + 0 + 1])


# -- CTC (test_operator.py test_ctc_loss, test_ctc_loss_grad; test_loss.py) -------------------

ACTS = np.array([[[1.2, 3.4, 1.2, -0.1, -2.34], [1.2, 3.4, 1.2, -0.1, -2.34]],
                 [[0.1, 0.2, 0.3, 0.22, 0.123], [0.1, 0.2, 0.3, 0.22, 0.123]],
                 [[-15, -14, -13, -12, -11], [-15, -14, -13, -12, -11]]], dtype=np.float32)
ACTS2 = np.array([[[-5, -4, -3, -2, -1], [1.2, 3.4, 1.2, -0.1, -2.34]],
                  [[-10, -9, -8, -7, -6], [0.1, 0.2, 0.3, 0.22, 0.123]],
                  [[-15, -14, -13, -12, -11], [-15, -14.2, -13.5, -12.2, -11.22]]],
                 dtype=np.float32)


@pytest.mark.parametrize("fn", ["ctc_loss", "CTCLoss", "contrib.ctc_loss", "contrib.CTCLoss"])
def test_ctc_loss_mxnet_torch_numbers(fn):
    f = nd
    for part in fn.split("."):
        f = getattr(f, part)
    for acts, labels, truth in (
            (ACTS, np.array([[2, 3, 0], [2, 3, 0]]), [4.04789, 4.04789]),
            (ACTS2, np.array([[2, 3, 1], [2, 0, 0]], np.float32), [7.3557, 5.4091]),
            (ACTS2, np.array([[2, 3, 1], [2, 0, 0]], np.int32), [7.3557, 5.4091])):
        x = nd.array(acts)
        x.attach_grad()
        with autograd.record():
            loss = f(x, nd.array(labels, dtype=labels.dtype))
        loss.backward()
        np.testing.assert_allclose(loss.asnumpy(), truth, rtol=1e-4, atol=1e-4)
        # MXNet's check_ctc_loss: the gradient is finite and the batch entries agree
        assert np.isfinite(x.grad.asnumpy()).all()


def test_ctc_loss_with_large_classes_mxnet():
    num_classes, seq_len, batch = 6000, 8, 2
    data = np.empty((num_classes, 0))
    for i in range(seq_len * batch):
        row = np.roll(np.arange(num_classes, dtype=np.float32), i).reshape(num_classes, 1)
        data = np.append(data, row / 13, axis=1)
    data = data.reshape(seq_len, batch, num_classes)
    label = np.array([[100, 200, 300, 400, 500, 0, 0, 0],
                      [1000, 2000, 3000, 4000, 0, 5000, 0, 0]], dtype=np.int32)
    loss = nd.ctc_loss(data=nd.array(data), label=nd.array(label))
    np.testing.assert_allclose(loss.asnumpy(), [688.02826, 145.34462], rtol=1e-5)


@pytest.mark.parametrize("blank_label", ["first", "last"])
@pytest.mark.parametrize("fn", ["CTCLoss", "contrib.CTCLoss"])
def test_ctc_loss_grad_mxnet_tf_numbers(blank_label, fn):
    f = nd
    for part in fn.split("."):
        f = getattr(f, part)
    vocab_size, max_label_len = 5, 5
    padding_mask = -1 + (blank_label == "first")
    targets_0 = [0, 1, 2, 1, 0]
    loss_log_prob_0 = -3.34211
    p0 = np.asarray(
        [[0.633766, 0.221185, 0.0917319, 0.0129757, 0.0142857, 0.0260553],
         [0.111121, 0.588392, 0.278779, 0.0055756, 0.00569609, 0.010436],
         [0.0357786, 0.633813, 0.321418, 0.00249248, 0.00272882, 0.0037688],
         [0.0663296, 0.643849, 0.280111, 0.00283995, 0.0035545, 0.00331533],
         [0.458235, 0.396634, 0.123377, 0.00648837, 0.00903441, 0.00623107]], np.float32)
    g0 = np.asarray(
        [[-0.366234, 0.221185, 0.0917319, 0.0129757, 0.0142857, 0.0260553],
         [0.111121, -0.411608, 0.278779, 0.0055756, 0.00569609, 0.010436],
         [0.0357786, 0.633813, -0.678582, 0.00249248, 0.00272882, 0.0037688],
         [0.0663296, -0.356151, 0.280111, 0.00283995, 0.0035545, 0.00331533],
         [-0.541765, 0.396634, 0.123377, 0.00648837, 0.00903441, 0.00623107]], np.float32)
    targets_1 = [0, 1, 1, 0]
    loss_log_prob_1 = -5.42262
    p1 = np.asarray(
        [[0.30176, 0.28562, 0.0831517, 0.0862751, 0.0816851, 0.161508],
         [0.24082, 0.397533, 0.0557226, 0.0546814, 0.0557528, 0.19549],
         [0.230246, 0.450868, 0.0389607, 0.038309, 0.0391602, 0.202456],
         [0.280884, 0.429522, 0.0326593, 0.0339046, 0.0326856, 0.190345],
         [0.423286, 0.315517, 0.0338439, 0.0393744, 0.0339315, 0.154046]], np.float32)
    g1 = np.asarray(
        [[-0.69824, 0.28562, 0.0831517, 0.0862751, 0.0816851, 0.161508],
         [0.24082, -0.602467, 0.0557226, 0.0546814, 0.0557528, 0.19549],
         [0.230246, 0.450868, 0.0389607, 0.038309, 0.0391602, -0.797544],
         [0.280884, -0.570478, 0.0326593, 0.0339046, 0.0326856, 0.190345],
         [-0.576714, 0.315517, 0.0338439, 0.0393744, 0.0339315, 0.154046]], np.float32)
    inputs = [np.vstack([p0[t], p1[t]]) for t in range(5)] \
        + 2 * [np.nan * np.ones((2, vocab_size + 1), np.float32)]
    inputs = np.log(np.asarray(inputs, dtype=np.float32))
    grad_truth = np.array([np.vstack([g0[t], g1[t]]) for t in range(5)]
                          + 2 * [np.zeros((2, vocab_size + 1), np.float32)])
    if blank_label == "first":
        inputs = np.roll(inputs, 1, axis=2)
        grad_truth = np.roll(grad_truth, 1, axis=2)
    labels = (np.asarray([x + [padding_mask] * (max_label_len - len(x))
                          for x in [targets_0, targets_1]]) + (blank_label == "first"))
    data = nd.array(inputs)
    data.attach_grad()
    with autograd.record():
        loss = f(data, nd.array(labels), use_data_lengths=True, use_label_lengths=True,
                 data_lengths=nd.array([5, 5]), label_lengths=nd.array([5, 4]),
                 blank_label=blank_label)
    loss.backward()
    np.testing.assert_allclose(loss.asnumpy(), [-loss_log_prob_0, -loss_log_prob_1],
                               atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(data.grad.asnumpy(), grad_truth, atol=1e-5, rtol=1e-5)


def test_gluon_ctc_loss_mxnet():
    want = [18.82820702, 16.50581741]
    lab = nd.array([[1, 0, -1, -1], [2, 1, 1, -1]])
    l = gloss.CTCLoss()(nd.ones((2, 20, 4)), lab)
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss(layout="TNC")(nd.ones((20, 2, 4)), lab)
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss(layout="TNC", label_layout="TN")(nd.ones((20, 2, 4)), lab.T)
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss()(nd.ones((2, 20, 4)), nd.array([[2, 1, 2, 2], [3, 2, 2, 2]]), None,
                        nd.array([2, 3]))
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss()(nd.ones((2, 25, 4)), nd.array([[2, 1, -1, -1], [3, 2, 2, -1]]),
                        nd.array([20, 20]))
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss()(nd.ones((2, 25, 4)), nd.array([[2, 1, 3, 3], [3, 2, 2, 3]]),
                        nd.array([20, 20]), nd.array([2, 3]))
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
