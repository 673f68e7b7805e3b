"""The backward plan's C-level rules give what the Python rules give.

- Graphs of the ops with C-level rules (``add``, the scalar forms, ``copy``, broadcast
  adds, ``tanh``): the same backward with the C-level rules off (every rule called in
  Python) is the reference, compared value for value, and NumPy.
- The executor's scratch lives on the plan: a backward run inside a gradient rule (a
  Function's backward) over nodes of the outer graph leaves the outer run intact.
- A variable's gradient takes the memory of the plan's buffer instead of a copy, only
  where nobody can tell: NumPy views, NDArray views and a Function that keeps the array
  it returned still see what they would with a copy.
"""
import numpy as np
import pytest

from runtime import _executor, autograd, nd
from tests.runtime.conftest import free_failing_tests


@pytest.fixture
def c_rules_restored():
    yield
    _executor.set_c_rules(True)


def _arr(v):
    return nd.array(v, dtype="float64")


GRAPHS = {
    # name: (f(x, c) -> head, d head / d x with a head gradient of ones, as NumPy)
    "add chain": (lambda x, c: ((x + c) + c) + x, lambda x, c: np.full(x.shape, 2.0)),
    "add of itself": (lambda x, c: x + x, lambda x, c: np.full(x.shape, 2.0)),
    "scalar forms": (lambda x, c: ((x + 1.0) - 2.0) * x, lambda x, c: 2 * x - 1.0),
    "copy and add_n": (lambda x, c: nd.add_n(nd.copy(x), x * c, x),
                       lambda x, c: 2.0 + c),
    "broadcast add": (lambda x, c: (x + c[:1]).sum(), lambda x, c: np.ones(x.shape)),
    "broadcast lhs": (lambda x, c: (x[:1] + c) * c,
                      lambda x, c: np.r_[c.sum(), np.zeros(x.size - 1)]),
    "tanh of a sum": (lambda x, c: nd.tanh(x + c), lambda x, c: 1 - np.tanh(x + c) ** 2),
}


def _run(name, on, grad_req="write"):
    _executor.set_c_rules(on)
    f, _ = GRAPHS[name]
    v = np.linspace(-0.7, 0.9, 5)
    c = np.linspace(0.3, 1.1, 5)
    x = _arr(v)
    x.attach_grad(grad_req=grad_req)
    for _ in range(2 if grad_req == "add" else 1):
        with autograd.record():
            y = f(x, _arr(c))
        y.backward()
    return x.grad.asnumpy(), autograd.last_backward_stats(), v, c


@pytest.mark.parametrize("grad_req", ["write", "add"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_c_rules_match_the_python_rules_and_numpy(name, grad_req, c_rules_restored):
    plain, plain_stats, v, c = _run(name, False, grad_req)
    fast, fast_stats, _, _ = _run(name, True, grad_req)
    np.testing.assert_allclose(fast, plain, rtol=1e-15, atol=1e-15)
    for k in ("nodes", "entries"):
        assert fast_stats[k] == plain_stats[k], (k, fast_stats[k], plain_stats[k])
    want = GRAPHS[name][1](v, c) * (2 if grad_req == "add" else 1)
    np.testing.assert_allclose(fast, want, rtol=1e-12, atol=1e-12)


def test_create_graph_runs_the_python_rules():
    x = _arr([0.5, -0.25])
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x + 1.0) + x
        (g,) = autograd.grad(y, x, create_graph=True)
    g.backward()                     # d/dx (e^(x+1) + 1) = e^(x+1)
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp(np.array([0.5, -0.25]) + 1.0),
                               rtol=1e-12)


class _InnerBackward(autograd.Function):
    """Its backward runs a backward of its own through ``h``, whose node holds the outer
    run's pending contribution (from ``h * h``) at that moment."""

    def __init__(self, h, w):
        super().__init__()
        self.h, self.w = h, w

    def forward(self, x):
        return x * 3.0

    def backward(self, dy):
        with autograd.record():
            z = self.h * 2.0
        inner = autograd.grad(z, [self.w], retain_graph=True)[0]     # 2 everywhere
        return dy * 3.0 + (inner - 2.0)


def test_a_backward_inside_a_rule_leaves_the_outer_run_intact():
    v = np.array([0.2, -0.4, 0.6])
    w = _arr(v)
    w.attach_grad()
    with autograd.record():
        h = w + 2.0
        y = _InnerBackward(h, w)(h) + h * h
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), 3.0 + 2 * (v + 2.0), rtol=1e-12)


def _dot_grad_into(x, w):
    with autograd.record():
        y = nd.dot(x, w)
    y.backward()


def test_gradient_memory_is_taken_over_only_where_nobody_can_tell():
    x = _arr(np.arange(6.0).reshape(2, 3))
    x.attach_grad()
    w = _arr(np.linspace(-1, 1, 12).reshape(3, 4))
    want = np.ones((2, 4)) @ w.asnumpy().T
    grad = x.grad
    _dot_grad_into(x, w)
    assert x.grad is grad                       # the same array: its memory may change
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-12)
    view = np.asarray(x.grad)                   # a buffer export: must stay live
    row = x.grad[1:]                            # an NDArray view
    x.grad[:] = 0
    _dot_grad_into(x, w)
    np.testing.assert_allclose(view, want, rtol=1e-12)
    np.testing.assert_allclose(row.asnumpy(), want[1:], rtol=1e-12)
    del view, row
    x.grad[:] = 0
    _dot_grad_into(x, w)
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-12)


class _Keeps(autograd.Function):
    def forward(self, x):
        return x * 2.0

    def backward(self, dy):
        self.kept = dy * 2.0
        return self.kept


def test_an_array_a_rule_kept_is_not_the_variables_gradient():
    x = _arr([1.0, 2.0])
    x.attach_grad()
    f = _Keeps()
    with autograd.record():
        y = f(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])
    x.grad[:] = 7.0
    np.testing.assert_array_equal(f.kept.asnumpy(), [2.0, 2.0])


free_failing_tests(globals())
