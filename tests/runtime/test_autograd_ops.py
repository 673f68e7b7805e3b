"""Gradients through the tape for every differentiable operator of the registry.

For each operator with ``differentiable=True``, every ``grad=True`` sample of
tests/runtime/op_samples.py is run under ``autograd.record()`` with ``attach_grad`` on
its floating inputs (taken in float64; integer inputs such as indices stay constants),
then ``autograd.backward`` with a random head gradient; ``x.grad`` is compared with
float64 central differences of ``sum(head * f(x))`` along random directions (Chainer's
gradient_check; tests/runtime/opcheck.py does the same for the bare gradient rules), or,
for a sample with ``grad_ref`` (an output layer whose documented gradient ignores the
head gradient), with that reference.
Each check runs with ``grad_req='write'`` (two backward passes: the second overwrites)
and ``grad_req='add'`` (two passes: twice the gradient).

Samples with sparse storage (sparse inputs, or sparse outputs) of an operator that also
has dense samples are checked apart (``test_tape_gradient_sparse``): the variables keep
their storage type and get dense gradients (``attach_grad(stype='default')``), the head
gradients take the outputs' storage type, and the perturbations are dense.

Recording runs in predict mode (``record(train_mode=False)``), where the reference
``f`` is evaluated too, so Dropout samples are the identity here; test_autograd.py
checks Dropout in training.

Second order (``test_tape_second_order``): for the operators whose first-order gradient
depends on their inputs (smooth elementwise ops, products, reductions, softmax), the
tape's gradient of the gradient (``grad(create_graph=True)`` then ``backward``) against
float64 central differences of the first-order gradient.
"""


import numpy as np
import pytest

from runtime import autograd, nd
from runtime._imperative import invoke
from runtime.ops import OPS
from tests.runtime.op_samples import SAMPLES
from tests.runtime.conftest import dense_values as _values
from tests.runtime.conftest import free_failing_tests
from tests.runtime.conftest import from_dense as _from_dense

pytestmark = pytest.mark.filterwarnings("ignore::runtime.errors.StorageFallbackWarning")

# Canonical operators: one entry per Op object (aliases share it).
CANONICAL = {op.name: op for op in {id(op): op for op in OPS.values()}.values()}
DIFFERENTIABLE = sorted(n for n, op in CANONICAL.items() if op.differentiable)


# -- samples -------------------------------------------------------------------------------





def _as_list(r):
    return r if isinstance(r, list) else [r]


def _sparse_storage(name, sample):
    """True when the sample has sparse inputs or the op gives sparse outputs for it."""
    if not sample.dense:
        return True
    op = CANONICAL[name]
    stypes, _ = op.infer_storage(op.parse_attrs(sample.attrs), ["default"] * len(sample.arrays))
    return any(s != "default" for s in stypes)


class Case:
    """A sample made concrete: float64 values (floating inputs), storage types, the input
    positions that get gradients, attributes."""

    def __init__(self, sample):
        built = sample.build()
        self.stypes = [x.stype for x in built]
        values = [_values(x) for x in built]
        self.values = [v.astype(np.float64) if v.dtype.kind == "f" else v for v in values]
        self.wrt = (sample.wrt if sample.wrt is not None
                    else [i for i, v in enumerate(self.values) if v.dtype.kind == "f"])
        self.attrs = sample.attrs

    def inputs(self, values=None):
        return [_from_dense(v, s) for v, s in zip(values or self.values, self.stypes)]


def _float_differentiable(sample):
    """A grad=True sample with at least one floating input to differentiate."""
    if not sample.grad:
        return False
    built = sample.build()
    wrt = sample.wrt if sample.wrt is not None else range(len(built))
    return any(np.dtype(built[i].dtype).kind == "f" for i in wrt)


def _split(name):
    """(main samples, sparse-storage samples checked apart) of ``name`` that can be
    differentiated in floating point (as test_all_ops.py splits them)."""
    samples = [s for s in SAMPLES.get(name, []) if _float_differentiable(s)]
    dense = [s for s in samples if not _sparse_storage(name, s)]
    if not dense:                      # a sparse-only op: its samples are the main ones
        return samples, []
    return dense, [s for s in samples if _sparse_storage(name, s)]


SPLIT = {n: _split(n) for n in DIFFERENTIABLE}
SPARSE_NAMES = sorted(n for n in DIFFERENTIABLE if SPLIT[n][1])


# -- through the tape ----------------------------------------------------------------------

def _forward(name, case, values):
    """The op's outputs on ``values`` (no recording): the reference f."""
    return _as_list(invoke(CANONICAL[name], case.inputs(values), case.attrs))


def _heads(heads, outs):
    """Head gradients in the outputs' dtypes and storage types."""
    return [_from_dense(h.astype(np.dtype(o.dtype)), o.stype) for h, o in zip(heads, outs)]


def tape_grads(name, case, heads, grad_req="write", rounds=1):
    """x.grad of every input in ``case.wrt`` after ``rounds`` recorded forward passes, each
    followed by ``autograd.backward`` with ``heads``."""
    xs = case.inputs()
    for i in case.wrt:
        xs[i].attach_grad(grad_req=grad_req, stype="default")
    for _ in range(rounds):
        with autograd.record(train_mode=False):
            outs = _as_list(invoke(CANONICAL[name], xs, case.attrs))
        autograd.backward(outs, head_grads=_heads(heads, outs))
    grads = []
    for i in case.wrt:
        g = xs[i].grad
        assert g is not None and g.shape == xs[i].shape, \
            f"{name}: input {i} has gradient {g!r} after backward"
        grads.append(_values(g).astype(np.float64))
    return grads


def check_tape_grad(name, sample, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """The tape's gradients of ``sample`` against central differences, with grad_req
    'write' (two passes overwrite) and 'add' (two passes accumulate)."""
    case = Case(sample)
    rng = np.random.default_rng(seed)
    outs = _forward(name, case, case.values)
    heads = [rng.standard_normal(o.shape) for o in outs]
    write = tape_grads(name, case, heads, "write", rounds=2)
    add = tape_grads(name, case, heads, "add", rounds=2)
    if sample.grad_ref is not None:            # a documented gradient, not a derivative
        want = sample.grad_ref(case.values, heads)
        for i, g, g2 in zip(case.wrt, write, add):
            np.testing.assert_allclose(
                g, want[i], rtol=1e-10, atol=1e-12,
                err_msg=f"{name}{sample.attrs}: gradient of input {i} through the tape")
            np.testing.assert_allclose(g2, 2 * want[i], rtol=1e-10, atol=1e-12,
                                       err_msg=f"{name}{sample.attrs}: grad_req='add'")
        return
    for i, g, g2 in zip(case.wrt, write, add):
        v = rng.standard_normal(case.values[i].shape)
        analytic = float(np.sum(g * v))
        plus, minus = list(case.values), list(case.values)
        plus[i], minus[i] = case.values[i] + eps * v, case.values[i] - eps * v
        numeric = sum(float(np.sum((_values(p) - _values(m)) * h)) / (2 * eps)
                      for p, m, h in zip(_forward(name, case, plus),
                                         _forward(name, case, minus), heads))
        assert np.isclose(analytic, numeric, rtol=rtol, atol=atol * max(1, abs(numeric))), \
            (f"{name}{sample.attrs}: gradient of input {i} through the tape: analytic "
             f"{analytic} vs numeric {numeric}")
        np.testing.assert_allclose(
            g2, 2 * g, rtol=1e-10, atol=1e-12,
            err_msg=f"{name}{sample.attrs}: grad_req='add' twice is not twice the gradient "
                    f"of input {i}")


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_tape_gradient(name):
    main, _ = SPLIT[name]
    assert main, f"{name}: no grad=True sample with a floating input in op_samples.py"
    for sample in main:
        check_tape_grad(name, sample)


@pytest.mark.parametrize("name", SPARSE_NAMES)
def test_tape_gradient_sparse(name):
    for sample in SPLIT[name][1]:
        check_tape_grad(name, sample)


def test_every_differentiable_op_is_checked_through_the_tape():
    unchecked = [n for n in DIFFERENTIABLE if not SPLIT[n][0]]
    assert DIFFERENTIABLE and not unchecked, (
        f"differentiable ops without a float-differentiable sample: {unchecked}")


# -- second order --------------------------------------------------------------------------

_ALL = None
# Operators whose first-order gradient depends on the inputs through differentiable ops,
# so that the gradient of the gradient runs through the tape: name -> which main samples
# (None: all).  Left out: linear ops (add, sum, ...: the gradient is the head gradient,
# off the tape) and piecewise linear ones (relu, abs, maximum, ...: zero second
# derivative through a mask); gamma and gammaln, whose second derivative needs digamma's,
# which has no rule (test_autograd.py checks that this raises).
SECOND_ORDER = {
    **{n: _ALL for n in (
        "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "cbrt", "square",
        "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
        "tanh", "arcsinh", "arctanh", "sigmoid", "softrelu", "erf")},
    **{n: _ALL for n in ("multiply", "divide", "power", "hypot", "_power_scalar",
                         "_rpower_scalar", "_rdiv_scalar", "_hypot_scalar")},
    # prod's rule is exact at zeros to first order only: samples without zeros
    "prod": lambda s: all(np.all(np.asarray(a) != 0) for a in s.arrays),
    "logsumexp": _ALL, "norm": _ALL,
    "dot": _ALL, "batch_dot": _ALL, "matmul": _ALL,
    # the bias gradient is a sum of the head gradient: a constant
    "FullyConnected": lambda s: s.attrs.get("no_bias", False),
    "softmax": _ALL, "log_softmax": _ALL, "softmax_cross_entropy": _ALL,
    # normalisation and activation layers (LeakyReLU: the act_types with a curved
    # negative side; left out: BatchNorm, LayerNorm, InstanceNorm and GroupNorm, whose
    # beta gradient is a sum of the head gradient, a constant)
    "L2Normalization": _ALL, "smooth_l1": _ALL,
    "Activation": lambda s: s.attrs["act_type"] in ("sigmoid", "tanh", "softrelu",
                                                    "softsign"),
    "LeakyReLU": lambda s: s.attrs.get("act_type") in ("elu", "selu", "gelu", "prelu"),
}


def _second_order_samples(name):
    keep = SECOND_ORDER[name]
    return [s for s in SPLIT[name][0] if keep is None or keep(s)]


def check_tape_second_order(name, sample, eps=1e-5, rtol=1e-5, atol=1e-7, seed=0):
    """With heads h and directions v_i, phi(x) = sum_i <v_i, d<h, f(x)>/dx_i>: the tape's
    backward of grad(f(x), xs, h, create_graph=True) with head gradients v must leave
    d phi / dx_j in x_j.grad (checked along a random direction u against central
    differences of phi, each phi a first-order pass through the tape)."""
    op = CANONICAL[name]
    case = Case(sample)
    rng = np.random.default_rng(seed)
    heads = [rng.standard_normal(o.shape) for o in _forward(name, case, case.values)]
    vs = {i: rng.standard_normal(case.values[i].shape) for i in case.wrt}

    def first_order(values, create_graph=False):
        xs = case.inputs(values)
        for i in case.wrt:
            xs[i].attach_grad()
        with autograd.record(train_mode=False):
            outs = _as_list(invoke(op, xs, case.attrs))
        gs = autograd.grad(outs, [xs[i] for i in case.wrt], head_grads=_heads(heads, outs),
                           create_graph=create_graph)
        return xs, gs

    def phi(values):
        _, gs = first_order(values)
        return sum(float(np.sum(vs[i] * _values(g))) for i, g in zip(case.wrt, gs))

    xs, gs = first_order(case.values, create_graph=True)
    autograd.backward(gs, head_grads=[nd.array(vs[i], dtype="float64") for i in case.wrt])
    for j in case.wrt:
        u = rng.standard_normal(case.values[j].shape)
        analytic = float(np.sum(_values(xs[j].grad) * u))
        plus, minus = list(case.values), list(case.values)
        plus[j], minus[j] = case.values[j] + eps * u, case.values[j] - eps * u
        numeric = (phi(plus) - phi(minus)) / (2 * eps)
        assert np.isclose(analytic, numeric, rtol=rtol, atol=atol * max(1, abs(numeric))), \
            (f"{name}{sample.attrs}: second derivative for input {j}: analytic {analytic} "
             f"vs numeric {numeric}")


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_tape_second_order(name):
    samples = _second_order_samples(name)
    assert samples, f"{name}: no sample for the second-order check"
    for sample in samples:
        check_tape_second_order(name, sample)


# -- failing tests leave no arrays behind --------------------------------------------------

free_failing_tests(globals())
