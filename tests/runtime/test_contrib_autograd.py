"""runtime.contrib.autograd (MXNet 1.x's ``mx.contrib.autograd``): one switch for
recording and training, its scopes, and functions wrapped to return their gradients,
checked against float64 central differences and closed-form derivatives."""

import numpy as np
import pytest

from runtime import autograd, nd
from runtime.contrib import autograd as cag


@pytest.fixture(autouse=True)
def flags_restored():
    yield
    autograd.set_recording(False)
    autograd.set_training(False)


def _central_difference(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = (f(up).sum() - f(down).sum()) / (2 * eps)
    return out


def test_set_is_training_switches_recording_and_training_and_returns_the_old_state():
    assert cag.set_is_training(True) is False
    assert autograd.is_recording() and autograd.is_training()
    assert cag.set_is_training(False) is True
    assert not autograd.is_recording() and not autograd.is_training()


def test_sections_nest_and_restore_the_outer_state():
    with cag.train_section():
        assert autograd.is_recording() and autograd.is_training()
        with cag.test_section():
            assert not autograd.is_recording() and not autograd.is_training()
        assert autograd.is_recording() and autograd.is_training()
    assert not autograd.is_recording() and not autograd.is_training()


def test_dropout_drops_in_train_section_only():
    x = nd.ones((20, 20))
    with cag.train_section():
        dropped = nd.Dropout(x, p=0.5).asnumpy()
        with cag.test_section():
            kept = nd.Dropout(x, p=0.5).asnumpy()
    assert (dropped == 0).any()
    np.testing.assert_array_equal(kept, np.ones((20, 20)))


def test_grad_and_loss_matches_central_differences():
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (3, 4))
    wrapped = cag.grad_and_loss(lambda x, y: nd.exp(x) * y + x / y)
    grads, out = wrapped(nd.array(a, dtype="float64"), nd.array(b, dtype="float64"))
    np.testing.assert_allclose(out.asnumpy(), np.exp(a) * b + a / b, rtol=1e-12)
    np.testing.assert_allclose(grads[0].asnumpy(),
                               _central_difference(lambda x: np.exp(x) * b + x / b, a),
                               rtol=1e-6)
    np.testing.assert_allclose(grads[1].asnumpy(),
                               _central_difference(lambda y: np.exp(a) * y + a / y, b),
                               rtol=1e-6)


def test_argnum_picks_the_differentiated_arguments_and_grad_drops_the_loss():
    a, b = nd.array([[1.0, 2.0]]), nd.array([[3.0, 5.0]])
    grads = cag.grad(lambda x, y, scale: x * y * scale, argnum=[1])(a, b, 2.0)
    assert len(grads) == 1
    np.testing.assert_array_equal(grads[0].asnumpy(), [[2.0, 4.0]])
    only = cag.grad(lambda x, y: x * y, argnum=0)(a, b)
    np.testing.assert_array_equal(only[0].asnumpy(), [[3.0, 5.0]])


def test_a_non_array_differentiated_argument_is_refused_by_position():
    with pytest.raises(TypeError, match=r"argument 1 must be an NDArray \(got float\)"):
        cag.grad(lambda x, y: x * y)(nd.ones((2,)), 2.0)


def test_backward_with_head_gradients_and_none_for_ones():
    x = nd.ones((3, 2))
    dx = nd.zeros((3, 2))
    cag.mark_variables([x], [dx])
    with cag.train_section():
        a, b, c = nd.split(x, axis=0, num_outputs=3, squeeze_axis=True)
        cag.backward([a, b, c], [None, nd.array([2.0, 3.0]), nd.array([4.0, 5.0])])
    np.testing.assert_array_equal(dx.asnumpy(), [[1, 1], [2, 3], [4, 5]])


def test_compute_gradient_accumulates_under_grad_req_add():
    x = nd.array([1.0, 2.0])
    dx = nd.zeros((2,))
    cag.mark_variables([x], [dx], grad_reqs="add")
    for _ in range(2):
        with cag.train_section():
            y = x * x
        cag.compute_gradient(y)
    np.testing.assert_array_equal(dx.asnumpy(), [4.0, 8.0])


def test_mx_contrib_autograd_is_this_module():
    import runtime
    assert runtime.contrib.autograd is cag
