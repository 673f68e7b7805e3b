"""The backward executor's requests: an out-grad that only one rule reads is donated to
that rule's elementwise op (request inplace), which must give the same gradients."""
import numpy as np
import pytest

from runtime import _executor, autograd, nd
from runtime.ops import OPS

DONATING = sorted({op.name for op in OPS.values() if op.grad_donates})


@pytest.fixture
def donation_restored():
    yield
    _executor.set_donation(True)


def _grad(name, v, donate):
    _executor.set_donation(donate)
    x = nd.array(v, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = getattr(nd, name)(x)
    y.backward(nd.array(np.linspace(0.5, 1.5, v.size), dtype="float64"))
    return x.grad.asnumpy(), autograd.last_backward_stats()


@pytest.mark.parametrize("name", DONATING)
def test_donated_out_grads_give_the_same_gradients(name, donation_restored):
    v = np.linspace(0.2, 0.8, 7)
    with np.errstate(all="ignore"):
        plain, _ = _grad(name, v, False)
        donated, stats = _grad(name, v, True)
    np.testing.assert_array_equal(donated, plain)


@pytest.mark.parametrize("donate", [True, False])
def test_a_unary_rule_writes_into_the_out_grad_it_alone_reads(donate, donation_restored):
    _executor.set_donation(donate)
    v = np.linspace(0.2, 0.8, 7)
    x = nd.array(v, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = nd.tanh(nd.tanh(x))      # the inner rule alone reads the outer rule's result
    y.backward()
    assert autograd.last_backward_stats()["requests"]["inplace"] == (2 if donate else 0)
    t = np.tanh(v)
    np.testing.assert_allclose(x.grad.asnumpy(), (1 - np.tanh(t) ** 2) * (1 - t ** 2))


def test_a_head_gradient_the_user_passed_is_never_written():
    x = nd.array([0.1, 0.2], dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = nd.tanh(x)
    h = nd.array([1.0, 2.0], dtype="float64")
    y.backward(h)
    np.testing.assert_array_equal(h.asnumpy(), [1.0, 2.0])
