"""MXNet 1.x's own unit tests for nd.contrib, CTCLoss and Convolution/Deconvolution/
Pooling, ported (test_operator.py, test_contrib_operator.py, test_loss.py): the cases
that run on CPU, with MXNet's reference numbers."""

import numpy as np
import pytest

from runtime import autograd, nd
from runtime.gluon import loss as gloss


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
        # the perturbation in float64 (1e7 overflows float16; MXNet's test divides there,
        # giving b == a, which the float64 form also gives once cast)
        b_np = (a_np + rng.standard_normal(shape) / 10000000).astype(dtype)
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


def test_while_loop_simple_forward_mxnet():
    # test_contrib_control_flow.py's test_while_loop_simple_forward, imperative
    def run(cond, func, *loop_vars):
        return nd.contrib.while_loop(cond=cond, func=func, loop_vars=loop_vars,
                                     max_iterations=1000)

    def i64(v):
        return nd.array([v], dtype="int64")
    _, r = run(lambda i, s: i <= 5, lambda i, s: (None, (i + 1, s + i)), i64(1), i64(0))
    assert (r[0].asscalar(), r[1].asscalar()) == (6, 15)
    _, r = run(lambda i, s, t: t, lambda i, s, t: (None, (i + 1, s + i, t)), i64(1), i64(0),
               i64(1))
    assert (r[0].asscalar(), r[1].asscalar(), r[2].asscalar()) == (1001, 500500, 1)
    _, r = run(lambda i, s, f: f, lambda i, s, f: (None, (i + 1, s + i, f)), i64(1), i64(0),
               i64(0))
    assert (r[0].asscalar(), r[1].asscalar(), r[2].asscalar()) == (1, 0, 0)
    outs, (ri, rs) = run(lambda i, s: i <= 100, lambda i, s: (i, (i + 1, s + i)), i64(1),
                         i64(0))
    assert outs.shape == (1000, 1)
    assert (outs.asnumpy()[:100] == np.arange(1, 101).reshape(100, 1)).all()
    assert (ri.asscalar(), rs.asscalar()) == (101, 5050)
    outs, (ri, rs, _) = run(lambda i, s, t: t, lambda i, s, t: (i, (i + 1, s + i, t)),
                            i64(1), i64(0), i64(1))
    assert (outs.asnumpy() == np.arange(1, 1001).reshape(1000, 1)).all()
    assert (ri.asscalar(), rs.asscalar()) == (1001, 500500)
    outs, (ri, rs, _) = run(lambda i, s, f: f, lambda i, s, f: (i, (i + 1, s + i, f)),
                            i64(1), i64(0), i64(0))
    assert outs == [] and (ri.asscalar(), rs.asscalar()) == (1, 0)


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


# -- Convolution, Deconvolution, Pooling (test_operator.py) ---------------------------------

def _grads(f, arrays, head):
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        y = f(*arrays)
    y.backward(head)
    return y.asnumpy(), [a.grad.asnumpy() for a in arrays]


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("num_group", [1, 2])
def test_convolution_grouping_mxnet(dim, num_group):
    rng = np.random.default_rng(5)
    num_filter, kernel = 4, (3,) * dim
    shape = (1, 4) + (9,) * dim
    x = rng.normal(size=shape)
    w = rng.normal(size=(num_filter, 4 // num_group) + kernel)
    b = rng.normal(size=(num_filter,))
    head = a64(rng.normal(size=(1, num_filter) + (7,) * dim))

    def grouped(x, w, b):
        return nd.Convolution(x, w, b, num_filter=num_filter, num_group=num_group,
                              kernel=kernel)

    def sliced(x, w, b):
        xs = nd.split(x, num_outputs=num_group, axis=1) if num_group > 1 else [x]
        ws = nd.split(w, num_outputs=num_group, axis=0) if num_group > 1 else [w]
        bs = nd.split(b, num_outputs=num_group, axis=0) if num_group > 1 else [b]
        return nd.concat(*[nd.Convolution(xs[i], ws[i], bs[i], num_filter=num_filter //
                                          num_group, kernel=kernel)
                           for i in range(num_group)], dim=1)
    y1, g1 = _grads(grouped, [a64(x), a64(w), a64(b)], head)
    y2, g2 = _grads(sliced, [a64(x), a64(w), a64(b)], head)
    np.testing.assert_allclose(y1, y2, rtol=1e-10, atol=1e-10)
    for a, b_ in zip(g1, g2):
        np.testing.assert_allclose(a, b_, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("num_base", [1, 4])
@pytest.mark.parametrize("kernel,stride,pad", [((3, 3), (1, 1), (0, 0)),
                                               ((3, 3), (2, 2), (1, 1)),
                                               ((5, 5), (1, 1), (1, 1))])
def test_depthwise_convolution_mxnet(num_base, kernel, stride, pad):
    rng = np.random.default_rng(6)
    num_group = 4
    c = num_base * num_group
    shape = (2, c, 16, 16)
    x = rng.normal(size=shape).astype(np.float32)
    w = rng.normal(size=(c, 1) + kernel).astype(np.float32)
    b = rng.normal(size=(c,)).astype(np.float32)
    kw = dict(kernel=kernel, stride=stride, pad=pad)
    y = nd.Convolution(nd.array(x), nd.array(w), nd.array(b), num_filter=c, num_group=c, **kw)
    parts = [nd.Convolution(nd.array(x[:, i:i + 1]), nd.array(w[i:i + 1]),
                            nd.array(b[i:i + 1]), num_filter=1, **kw) for i in range(c)]
    np.testing.assert_allclose(y.asnumpy(), nd.concat(*parts, dim=1).asnumpy(), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("dil,ks", [(d, k) for d in [(1,), (2,), (3,)]
                                    for k in [(1,), (2,), (3,), (4,)]]
                         + [(d, k) for d in [(1, 1), (2, 2), (3, 3)]
                            for k in [(3, 3), (4, 4), (2, 3), (3, 2), (1, 1)]])
def test_convolution_dilated_impulse_response_mxnet(dil, ks):
    ndim = len(dil)
    spatial = (33,) * ndim
    x = np.zeros((1, 1) + spatial, np.float32)
    x[(0, 0) + tuple(s // 2 for s in spatial)] = 1.0
    w = np.ones((1, 1) + ks, np.float32)
    xs = nd.array(x)
    ws = nd.array(w)
    xs.attach_grad()
    ws.attach_grad()
    with autograd.record():
        out = nd.Convolution(xs, ws, num_filter=1, kernel=ks, dilate=dil, no_bias=True)
    out_grad = out.asnumpy().copy()
    out.backward(nd.array(out_grad))
    # the impulse reaches every kernel tap once
    assert abs(out.asnumpy().sum() - np.prod(ks)) < 1e-3
    # and the gradient of the weight at each tap is the output at that tap
    np.testing.assert_allclose(ws.grad.asnumpy(), np.ones((1, 1) + ks), rtol=1e-5)
    # random kernel: the response is the (flipped, dilated) kernel around the impulse
    rw = np.random.default_rng(7).normal(size=(1, 1) + ks).astype(np.float32)
    out = nd.Convolution(nd.array(x), nd.array(rw), num_filter=1, kernel=ks, dilate=dil,
                         no_bias=True).asnumpy()
    np.testing.assert_allclose(np.sort(out[out != 0]), np.sort(rw.ravel()[rw.ravel() != 0]),
                               rtol=1e-5)


@pytest.mark.parametrize("case", [
    ((2, 3, 4, 4), (3, 3), (2, 2), (99, 99), (101, 101), (8, 8)),
    ((2, 3, 4, 4), (3, 3), (2, 2), (1, 1), (1, 1), None),
    ((2, 3, 4), (3,), (2,), (99,), (101,), (8,)),
    ((2, 3, 4), (3,), (2,), (1,), (1,), None),
    ((2, 3, 4, 4, 4), (3, 3, 3), (2, 2, 2), (99, 99, 99), (101, 101, 101), (8, 8, 8)),
    ((2, 3, 4, 4, 4), (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), None),
])
def test_deconvolution_target_shape_mxnet(case):
    shape, kernel, stride, pad, adj, target = case
    kw = dict(kernel=kernel, stride=stride, pad=pad, adj=adj, num_filter=5)
    if target:
        kw["target_shape"] = target
    w = nd.ones((shape[1], 5) + kernel)
    out = nd.Deconvolution(nd.ones(shape), w, **kw)
    assert out.shape == (shape[0], 5) + (8,) * len(kernel)


@pytest.mark.parametrize("shape,nf,kernel,stride,pad", [
    ((1, 1, 5, 5), 1, (3, 3), (1, 1), (1, 1)),
    ((4, 3, 12, 12), 3, (3, 3), (1, 1), (1, 1)),
    ((1, 3, 10), 3, (3,), (1,), (1,)),
    ((2, 2, 5, 5, 5), 2, (3, 3, 3), (1, 1, 1), (1, 1, 1)),
])
def test_deconvolution_forward_backward_mxnet(shape, nf, kernel, stride, pad):
    # conv -> deconv with one weight: the data gradient under head = data equals the output
    rng = np.random.default_rng(8)
    x = a64(rng.uniform(-5, 5, shape))
    w = a64(rng.normal(0, 1, (nf, shape[1]) + kernel))
    x.attach_grad()
    with autograd.record():
        c = nd.Convolution(x, w, kernel=kernel, stride=stride, pad=pad, num_filter=nf,
                           no_bias=True)
        d = nd.Deconvolution(c, w, kernel=kernel, stride=stride, pad=pad, num_filter=nf,
                             no_bias=True)
    d.backward(x)
    np.testing.assert_allclose(d.asnumpy(), x.grad.asnumpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape,nf,pad", [((1, 3, 5, 5), 3, (1, 1)), ((2, 3, 20, 20), 3, (3, 3))])
def test_deconvolution_gradient_mxnet(shape, nf, pad):
    # conv(data, w) with pad p == deconv(data, w') with pad k-1-p (stride 1): same grads
    rng = np.random.default_rng(9)
    k = 2 * pad[0] + 1
    kernel = (k, k)
    x = rng.normal(size=shape)
    w = rng.normal(size=(nf, shape[1]) + kernel)
    head = a64(rng.normal(size=(shape[0], nf) + shape[2:]))
    y1, g1 = _grads(lambda x, w: nd.Convolution(x, w, kernel=kernel, pad=pad, num_filter=nf,
                                               no_bias=True), [a64(x), a64(w)], head)
    wt = np.flip(w, axis=(2, 3)).swapaxes(0, 1)
    y2, g2 = _grads(lambda x, w: nd.Deconvolution(x, w, kernel=kernel,
                                                 pad=(k - 1 - pad[0],) * 2, num_filter=nf,
                                                 no_bias=True), [a64(x), a64(wt)], head)
    np.testing.assert_allclose(y1, y2, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(g1[0], g2[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(g1[1], np.flip(g2[1], axis=(2, 3)).swapaxes(0, 1), rtol=1e-9,
                               atol=1e-9)


def test_convolution_independent_gradients_mxnet():
    rng = np.random.default_rng(10)
    x_np, w_np = rng.normal(size=(2, 4, 7, 7)), rng.normal(size=(3, 4, 3, 3))
    b_np = rng.normal(size=(3,))
    head = a64(rng.normal(size=(2, 3, 5, 5)))
    _, ref = _grads(lambda x, w, b: nd.Convolution(x, w, b, kernel=(3, 3), num_filter=3),
                    [a64(x_np), a64(w_np), a64(b_np)], head)
    for reqs in [("write", "null", "add"), ("null", "add", "write"), ("add", "write", "null")]:
        arrs = [a64(x_np), a64(w_np), a64(b_np)]
        for a, r in zip(arrs, reqs):
            a.attach_grad(grad_req=r)
            if r == "add":
                a.grad[:] = 1
        with autograd.record():
            y = nd.Convolution(*arrs, kernel=(3, 3), num_filter=3)
        y.backward(head)
        for a, r, want in zip(arrs, reqs, ref):
            if r == "write":
                np.testing.assert_allclose(a.grad.asnumpy(), want, rtol=1e-10)
            elif r == "add":
                np.testing.assert_allclose(a.grad.asnumpy(), want + 1, rtol=1e-10)


def _num_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g


@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_pooling_full_2d_mxnet(pool_type):
    shape, kernel, pad, stride = (2, 2, 10, 10), (4, 5), (1, 2), (3, 4)
    x_np = np.random.default_rng(11).permutation(400).reshape(shape).astype(np.float64) / 7
    kw = dict(kernel=kernel, pad=pad, stride=stride, pool_type=pool_type,
              pooling_convention="full", global_pool=False)
    x = a64(x_np)
    out = nd.Pooling(x, **kw)
    # H = 1 + ceil((10 + 2 - 4) / 3) = 4, W = 1 + ceil((10 + 4 - 5) / 4) = 4
    assert out.shape == (2, 2, 4, 4)
    rng = np.random.default_rng(12)
    head = rng.normal(size=out.shape)
    # 'full' windows of padding only give max the lowest float, as MXNet: no gradient there
    head[out.asnumpy() == np.finfo(np.float64).min] = 0
    x.attach_grad()
    with autograd.record():
        y = nd.Pooling(x, **kw)
    y.backward(a64(head))
    num = _num_grad(lambda v: float((nd.Pooling(a64(v), **kw).asnumpy() * head).sum()), x_np)
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 10), (2, 3, 10, 10), (2, 3, 6, 6, 6)])
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum", "lp"])
def test_global_pooling_mxnet(shape, pool_type):
    # MXNet's test_global_pooling: kernel, pad and stride given with global_pool are ignored
    nd_ = len(shape) - 2
    x_np = np.random.default_rng(13).normal(size=shape)
    x = a64(x_np)
    extra = {"p_value": 2} if pool_type == "lp" else {}
    ax = tuple(range(2, 2 + nd_))
    want = {"max": x_np.max(axis=ax, keepdims=True), "avg": x_np.mean(axis=ax, keepdims=True),
            "sum": x_np.sum(axis=ax, keepdims=True),
            "lp": np.sqrt((x_np ** 2).sum(axis=ax, keepdims=True))}[pool_type]
    for kw in ({}, {"kernel": (2,) * nd_}, {"kernel": (2,) * nd_, "pad": (1,) * nd_},
               {"kernel": (2,) * nd_, "stride": (2,) * nd_},
               {"kernel": (2,) * nd_, "pad": (1,) * nd_, "stride": (2,) * nd_,
                "pooling_convention": "full"}):
        out = nd.Pooling(x, pool_type=pool_type, global_pool=True, **kw, **extra)
        assert out.shape == shape[:2] + (1,) * nd_
        np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-10)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pooling_mxnet(p):
    x_np = np.abs(np.random.default_rng(14).normal(size=(1, 2, 6, 6))) + 0.1
    out = nd.Pooling(a64(x_np), kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=p)
    w = x_np.reshape(1, 2, 3, 2, 3, 2)
    want = ((w ** p).sum(axis=(3, 5))) ** (1.0 / p)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-10)


def test_pooling_count_include_pad_mxnet():
    x_np = np.arange(16, dtype=np.float64).reshape(1, 1, 4, 4)
    kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")
    incl = nd.Pooling(a64(x_np), **kw).asnumpy()
    excl = nd.Pooling(a64(x_np), count_include_pad=False, **kw).asnumpy()
    xp = np.pad(x_np, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones_like(x_np), ((0, 0), (0, 0), (1, 1), (1, 1)))
    for i in range(2):
        for j in range(2):
            win = xp[0, 0, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            assert np.isclose(incl[0, 0, i, j], win.sum() / 9)
            assert np.isclose(excl[0, 0, i, j],
                              win.sum() / ones[0, 0, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum())
