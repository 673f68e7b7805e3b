"""Every registered operator, generically: a sample for each (an op added without one
fails here), the four write requests, float64 gradients of differentiable ops (and that
a rule reads the values of exactly the inputs/outputs it declares), inputs declared
``ignores``, failures that leave out= and the inputs unchanged (the listed ones, and for
every float attribute a value that integer data cannot hold), and 0-size inputs against
NumPy.

The inputs live in tests/runtime/op_samples.py; the per-area suites (test_elemwise.py
...) check values against NumPy in depth.

Samples with sparse storage (sparse inputs, or sparse outputs) of an op that also has
dense samples are checked by the ``*_sparse`` tests, so that a bug of a sparse path is
marked apart from the dense one; a sparse-only op's samples are its main ones.
"""

import re

import numpy as np
import pytest

import runtime.ops  # noqa: F401  (registers every operator)
from runtime import _executor, autograd, nd
from runtime import random as rt_random
from runtime import _rng
from runtime._desc import ArrayDesc
from runtime._imperative import invoke
from runtime.ops.registry import OPS
from tests.runtime.op_samples import FAILURES, SAMPLES, ZERO_SIZE, Failure
from tests.runtime.opcheck import check_grad, check_requests
from tests.runtime.conftest import dense_values as _values
from tests.runtime.conftest import frees_arrays as _frees_arrays
from tests.runtime.conftest import from_dense as _from_dense

pytestmark = pytest.mark.filterwarnings("ignore::runtime.errors.StorageFallbackWarning")

# Canonical operators: one entry per Op object (aliases share it), hidden helpers too.
CANONICAL = {op.name: op for op in {id(op): op for op in OPS.values()}.values()}
NAMES = sorted(CANONICAL)

def _sparse_storage(name, sample):
    """True when the sample has sparse inputs or the op gives sparse outputs for it."""
    if not sample.dense:
        return True
    op = CANONICAL[name]
    stypes, _ = op.infer_storage(op.parse_attrs(sample.attrs), ["default"] * len(sample.arrays))
    return any(s != "default" for s in stypes)


def _split(name):
    """(main samples, sparse-storage samples checked apart) of operator ``name``."""
    samples = SAMPLES.get(name, [])
    dense = [s for s in samples if not _sparse_storage(name, s)]
    if not dense:                       # a sparse-only op: its samples are the main ones
        return samples, []
    return dense, [s for s in samples if _sparse_storage(name, s)]


MAIN = {n: _split(n)[0] for n in NAMES}
SPARSE = {n: _split(n)[1] for n in NAMES if _split(n)[1]}
DIFFERENTIABLE = [n for n in NAMES if CANONICAL[n].differentiable]








def _filled(shape, dtype, stype, value):
    """An out= array: ``value`` everywhere, in storage ``stype``."""
    return _from_dense(np.full(shape, value, dtype), stype)


def _as_list(r):
    return r if isinstance(r, list) else [r]


def _invoke(name, inputs, attrs, out=None, req=None):
    return _as_list(invoke(CANONICAL[name], inputs, attrs, out, req))


# -- coverage ------------------------------------------------------------------------------

def test_every_op_has_a_sample():
    missing = sorted(set(NAMES) - set(SAMPLES))
    unknown = sorted(set(SAMPLES) - set(NAMES))
    empty = sorted(n for n, s in SAMPLES.items() if not s)
    assert not missing, (f"{len(missing)} registered operator(s) have no sample in "
                         f"tests/runtime/op_samples.py: {', '.join(missing)}")
    assert not unknown, ("SAMPLES keys that are not canonical operator names (aliases or "
                         f"removed ops): {', '.join(unknown)}")
    assert not empty, f"operators with an empty sample list: {', '.join(empty)}"
    bad = sorted((set(FAILURES) | set(ZERO_SIZE)) - set(NAMES))
    assert not bad, f"FAILURES/ZERO_SIZE keys that are not canonical operators: {bad}"


def test_gradient_declarations():
    """An op without a gradient rule declares differentiable=False; every differentiable
    op has a grad=True sample, and no non-differentiable one has."""
    no_rule = [n for n, op in CANONICAL.items() if op.gradient is None and op.differentiable]
    assert not no_rule, f"differentiable without a gradient rule: {no_rule}"
    untested = [n for n in DIFFERENTIABLE if not any(s.grad for s in MAIN[n])]
    assert not untested, f"differentiable ops without a grad=True sample: {untested}"
    wrong = [n for n in NAMES if not CANONICAL[n].differentiable
             and any(s.grad for s in SAMPLES.get(n, ()))]
    assert not wrong, f"grad=True samples of non-differentiable ops: {wrong}"


# -- requests ------------------------------------------------------------------------------

def _check_requests_nd(name, sample, reset=lambda: None):
    """opcheck.check_requests for samples with sparse inputs or outputs, or of ops that
    draw random numbers (``reset`` runs before each call): out= arrays take the result's
    storage type; values are compared densely; the inputs must not change (an op that
    mutates inputs, an optimizer update's states, gets fresh ones for every call)."""
    op = CANONICAL[name]
    attrs = sample.attrs

    ins = sample.build()

    def call(inputs, out=None, req=None):
        reset()
        if op.mutates and inputs is ins:
            inputs = sample.build()
        return _invoke(name, inputs, attrs, out, req)

    before = [_values(x) for x in ins]
    ref = call(ins)
    want = [_values(r) for r in ref]
    n = len(ref)

    def outs(fill):
        o = [_filled(r.shape, np.dtype(r.dtype), r.stype, fill) for r in ref]
        return o, (o if n > 1 else o[0])

    o, arg = outs(7)
    call(ins, out=arg, req="null")
    for a, r in zip(o, ref):
        assert a.stype == r.stype
        np.testing.assert_array_equal(_values(a), np.full(r.shape, 7, np.dtype(r.dtype)))
    o, arg = outs(7)
    call(ins, out=arg, req="write")
    for a, r, w in zip(o, ref, want):
        assert a.stype == r.stype
        np.testing.assert_array_equal(_values(a), w)
    o, arg = outs(3)
    call(ins, out=arg, req="add")
    for a, r, w in zip(o, ref, want):
        assert a.stype == r.stype
        np.testing.assert_allclose(_values(a), (3 + w).astype(w.dtype), rtol=1e-6)
    for x, b in zip(ins, before):
        np.testing.assert_array_equal(_values(x), b)
    for j, k in op.inplace:
        if j >= len(ins) or k >= n:      # a variadic op declares its largest call's pairs
            continue
        xs = sample.build()
        t = xs[j]
        if (t.shape, t.dtype, t.stype) != (ref[k].shape, ref[k].dtype, ref[k].stype):
            continue
        call(xs, out=t if n == 1 else [t if m == k else _filled(
            r.shape, np.dtype(r.dtype), r.stype, 0) for m, r in enumerate(ref)])
        np.testing.assert_array_equal(_values(t), want[k])


def _requests(name, samples):
    assert samples
    for sample in samples:
        if CANONICAL[name].needs_rng:
            g = _rng.generator()
            state = g.bit_generator.state

            def replay():
                g.bit_generator.state = state
            try:
                _check_requests_nd(name, sample, replay)
            finally:
                replay()
        elif _sparse_storage(name, sample):
            _check_requests_nd(name, sample)
        else:
            check_requests(name, sample.arrays, sample.attrs)


@pytest.mark.parametrize("name", NAMES)
@_frees_arrays
def test_requests(name):
    _requests(name, MAIN[name])


@pytest.mark.parametrize("name", sorted(SPARSE))
@_frees_arrays
def test_requests_sparse(name):
    _requests(name, SPARSE[name])


# -- gradients ------------------------------------------------------------------------------

def _check_grad_nd(name, sample, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """opcheck.check_grad for inputs of any storage type: float inputs are taken in
    float64 and perturbed densely, each keeping its storage type."""
    op = CANONICAL[name]
    rng = np.random.default_rng(seed)
    built = sample.build()
    stypes = [x.stype for x in built]
    xs = [_values(x) for x in built]
    xs = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in xs]
    wrt = [i for i, x in enumerate(xs) if x.dtype.kind == "f"] if sample.wrt is None \
        else sample.wrt

    def run(arrays):
        return _invoke(name, [_from_dense(a, s) for a, s in zip(arrays, stypes)],
                       sample.attrs)

    outs = run(xs)
    heads = [rng.standard_normal(o.shape) for o in outs]
    grads = op.gradient(op.parse_attrs(sample.attrs),
                        [_from_dense(a, s) for a, s in zip(xs, stypes)], outs,
                        [nd.array(h, dtype="float64") for h in heads])
    for i in wrt:
        v = rng.standard_normal(xs[i].shape)
        g = grads[i]
        assert g is not None, f"{name}: no gradient for input {i}"
        assert g.shape == xs[i].shape, f"{name}: gradient {i} has shape {g.shape}"
        analytic = float(np.sum(_values(g) * v))
        plus, minus = list(xs), list(xs)
        plus[i], minus[i] = xs[i] + eps * v, xs[i] - eps * v
        numeric = sum(float(np.sum((_values(p) - _values(m)) * h)) / (2 * eps)
                      for p, m, h in zip(run(plus), run(minus), heads))
        assert np.isclose(analytic, numeric, rtol=rtol, atol=atol * max(1, abs(numeric))), \
            f"{name}: gradient of input {i}: analytic {analytic} vs numeric {numeric}"


def _described(arrays, kept):
    """``arrays`` with an ArrayDesc in place of each one whose position is not in ``kept``
    (what the tape passes a gradient rule)."""
    return [x if k in kept else ArrayDesc.of(x) for k, x in enumerate(arrays)]


def _gradient_with(op, attrs, args, heads, side, k, x):
    """The gradient rule on ``args`` (inputs, outputs) with ``x`` at position ``k`` of
    ``args[side]``."""
    ins, outs = list(args[0]), list(args[1])
    (ins, outs)[side][k] = x
    return op.gradient(attrs, ins, outs, heads)


def _same_gradients(a, b):
    return all((x is None) == (y is None) and (x is None or np.array_equal(
        _values(x), _values(y), equal_nan=True)) for x, y in zip(a, b))


def _values_ignored(op, attrs, args, heads, side, k, want):
    """True when the gradients stay ``want`` with other values (each one value
    everywhere, NaN among them for floats) at position ``k`` of ``args[side]``; a rule
    that refuses the values reads them."""
    x = args[side][k]
    fills = (np.nan, 0.5) if np.dtype(x.dtype).kind in "fc" else (0, 1)
    for f in fills:
        other = _from_dense(np.full(x.shape, f, np.dtype(x.dtype)), x.stype)
        try:
            with np.errstate(all="ignore"):
                got = _gradient_with(op, attrs, args, heads, side, k, other)
        except Exception:
            return False
        if not _same_gradients(want, got):
            return False
    return True


def _check_grad_reads(name, sample):
    """The gradient rule reads the values of exactly the inputs and outputs it declares
    (Op.grad_reads).  With an ArrayDesc (all that the tape keeps) in place of every other
    one it gives the same gradients; for each declared one, it fails with an ArrayDesc in
    its place too, and gives other gradients for other values there (else it reads only a
    shape or a dtype, through an operator such as zeros_like)."""
    op = CANONICAL[name]
    xs = sample.build()
    outs = _invoke(name, xs, sample.attrs)
    rng = np.random.default_rng(1)
    heads = [nd.array(rng.standard_normal(o.shape).astype(np.dtype(o.dtype)), dtype=o.dtype)
             for o in outs]
    attrs = op.parse_attrs(sample.attrs)
    ins_read, outs_read = op.grad_reads(attrs, len(xs), len(outs))
    declared = f"grad_inputs {ins_read}, grad_outputs {outs_read}"
    assert all(k < len(xs) for k in ins_read) and all(k < len(outs) for k in outs_read), \
        f"{name}: {declared} name positions beyond {len(xs)} inputs, {len(outs)} outputs"
    full = op.gradient(attrs, xs, outs, heads)
    tape = (_described(xs, ins_read), _described(outs, outs_read))
    try:
        part = op.gradient(attrs, *tape, heads)
    except (TypeError, AttributeError) as e:
        raise AssertionError(f"{name}: the gradient rule reads more than it declares "
                             f"({declared}): {type(e).__name__}: {e}") from e
    assert len(full) == len(part) == len(xs), f"{name}: one gradient per input"
    for i, (a, b) in enumerate(zip(full, part)):
        assert (a is None) == (b is None), f"{name}: gradient {i}"
        if a is not None:
            np.testing.assert_array_equal(_values(a), _values(b), err_msg=f"{name}: {i}")
    more = f"{name}: the gradient rule declares more than it reads ({declared}, attrs " \
           f"{sample.attrs})"
    for side, k in [(0, k) for k in ins_read] + [(1, k) for k in outs_read]:
        what = f"{('input', 'output')[side]} {k}"
        try:
            _gradient_with(op, attrs, tape, heads, side, k, ArrayDesc.of(tape[side][k]))
        except (TypeError, AttributeError):
            pass
        else:
            raise AssertionError(f"{more}: it runs without the values of {what}")
        assert not _values_ignored(op, attrs, tape, heads, side, k, full), (
            f"{more}: its gradients do not depend on the values of {what}, only on its "
            "shape, dtype or storage type; take those from an ArrayDesc "
            "(runtime.ops._call.zeros, broadcast, unbroadcast)")


def _check_grad_ref(name, sample, seed=0):
    """The gradient rule of an op whose gradient is documented rather than derived
    (``Sample.grad_ref``) against that reference, in float64."""
    op = CANONICAL[name]
    rng = np.random.default_rng(seed)
    xs = [_values(x) for x in sample.build()]
    xs = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in xs]
    outs = _invoke(name, [nd.array(x, dtype=x.dtype) for x in xs], sample.attrs)
    heads = [rng.standard_normal(o.shape) for o in outs]
    grads = op.gradient(op.parse_attrs(sample.attrs), [nd.array(x, dtype=x.dtype) for x in xs],
                        outs, [nd.array(h, dtype="float64") for h in heads])
    want = sample.grad_ref(xs, heads)
    assert len(grads) == len(want) == len(xs), f"{name}: one gradient per input"
    for i, (g, w) in enumerate(zip(grads, want)):
        if w is None:
            assert g is None, f"{name}{sample.attrs}: input {i} gets a gradient"
            continue
        assert g is not None and g.shape == xs[i].shape, f"{name}: gradient {i}: {g!r}"
        np.testing.assert_allclose(_values(g), w, rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}{sample.attrs}: gradient of input {i}")


def _gradients(name, samples):
    samples = [s for s in samples if s.grad]
    assert samples, f"{name}: differentiable but no grad=True sample"
    for s in samples:
        if s.grad_ref is not None:
            _check_grad_ref(name, s)
        elif s.dense:
            check_grad(name, s.arrays, s.attrs, wrt=s.wrt)
        else:
            _check_grad_nd(name, s)
        _check_grad_reads(name, s)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@_frees_arrays
def test_gradient(name):
    _gradients(name, MAIN[name])


@pytest.mark.parametrize("name", sorted(
    n for n in SPARSE if CANONICAL[n].differentiable and any(s.grad for s in SPARSE[n])))
@_frees_arrays
def test_gradient_sparse(name):
    _gradients(name, SPARSE[name])


# -- the backward plan's two paths ---------------------------------------------------------

def _plan_backward(name, sample, mode, c_rules):
    """Backward through the plan of one recorded call of ``name``, its floating inputs
    attached by ``mode``: 'write', 'add' (onto 0.5) or 'null' (the first one 'null', the
    others 'write'); the gradients (or the exception's type) and the plan's requests."""
    _executor.set_c_rules(c_rules)
    rt_random.seed(3)                            # Dropout and rrelu draw the same masks
    rng = np.random.default_rng(3)
    xs = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in map(np.asarray,
                                                                         sample.arrays)]
    arrs = [nd.array(x, dtype=x.dtype) for x in xs]
    wrt = ([i for i, x in enumerate(xs) if x.dtype.kind == "f"] if sample.wrt is None
           else sample.wrt)
    for k, i in enumerate(wrt):
        arrs[i].attach_grad(grad_req="null" if mode == "null" and k == 0 else
                            "add" if mode == "add" else "write")
        if mode == "add":
            arrs[i].grad[:] = 0.5
    try:
        with autograd.record():
            outs = _invoke(name, arrs, sample.attrs)
        autograd.backward(outs, [nd.array(rng.standard_normal(o.shape), dtype=o.dtype)
                                 for o in outs])
    except Exception as e:                       # the same refusal on both paths
        return type(e), None
    return [arrs[i].grad.asnumpy() for i in wrt], autograd.last_backward_stats()["requests"]


@pytest.mark.parametrize("mode", ["write", "add", "null"])
@pytest.mark.parametrize("name", DIFFERENTIABLE)
@_frees_arrays
def test_plan_c_rules_match_python_rules(name, mode):
    """Every differentiable op backward through the plan with its C-level rule (where it
    has one) and with its Python rule: the same gradients under each request."""
    samples = [s for s in MAIN[name] if s.grad and s.dense and s.grad_ref is None]
    try:
        for s in samples:
            fast, fast_req = _plan_backward(name, s, mode, True)
            plain, _ = _plan_backward(name, s, mode, False)
            if isinstance(plain, type):
                assert fast is plain, (name, s.attrs, fast, plain)
                continue
            for i, (a, b) in enumerate(zip(fast, plain)):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12,
                                           err_msg=f"{name}{s.attrs} {mode}: input {i}")
            if mode == "null":
                assert not fast[0].any(), f"{name}: a 'null' variable's gradient was written"
                assert fast_req["null"] >= 1
    finally:
        _executor.set_c_rules(True)


# -- declared ignored inputs ------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in NAMES if CANONICAL[n].ignores])
@_frees_arrays
def test_ignored_inputs(name):
    """Inputs listed in ``ignores`` give only their shape and dtype: other values, same
    result."""
    op = CANONICAL[name]
    for sample in SAMPLES[name]:
        xs = sample.build()
        want = [_values(r) for r in _invoke(name, xs, sample.attrs)]
        for j in op.ignores:
            if j >= len(xs):        # an optional input of a variadic op, not given here
                continue
            x = xs[j]
            xs[j] = _from_dense(np.full(x.shape, 5, np.dtype(x.dtype)), x.stype)
        got = _invoke(name, xs, sample.attrs)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(_values(g), w)


# -- failures -------------------------------------------------------------------------------

def _check_atomic_failure(name, f):
    """Failure ``f`` raises, leaving out= (given with write and add, and as the input of
    each inplace pair) and the inputs unchanged: values and versions."""
    op = CANONICAL[name]
    ins = f.build()
    before = [_values(x) for x in ins]
    versions = [x.version for x in ins]
    shape, dtype, stype = (f.out + ("default",))[:3] if f.out else (
        ins[0].shape, np.dtype(ins[0].dtype), "default")
    for req in [None] if f.out is False else ["write", "add"]:
        out = None if req is None else _filled(shape, dtype, stype, 7)
        version = None if out is None else out.version
        with pytest.raises(f.exc, match=f.match):
            _invoke(name, ins, f.attrs, out=out, req=req)
        if out is not None:
            assert out.stype == stype
            np.testing.assert_array_equal(_values(out), np.full(shape, 7, dtype),
                                          err_msg=f"{name}: out= changed by a failed call")
            assert out.version == version, f"{name}: a failed call bumped out='s version"
        for x, b, v in zip(ins, before, versions):
            np.testing.assert_array_equal(_values(x), b, err_msg=f"{name}: an input changed")
            assert x.version == v, f"{name}: a failed call bumped an input's version"
    for j, _ in op.inplace:                       # the input given as out=
        if j >= len(ins):
            continue
        xs = f.build()
        with pytest.raises(f.exc, match=f.match):
            _invoke(name, xs, f.attrs, out=xs[j])
        for x, b in zip(xs, before):
            np.testing.assert_array_equal(_values(x), b,
                                          err_msg=f"{name}: an input changed in place")


@pytest.mark.parametrize("name", sorted(FAILURES))
@_frees_arrays
def test_failed_op_leaves_out_unchanged(name):
    for f in FAILURES[name]:
        _check_atomic_failure(name, f)


# Attributes of kind 'float' are scalars that kernels cast to an array's dtype (data or
# result).  A value no integer dtype can hold must fail before out= is written; the
# listed failures are mostly refused by inference, so this class of kernel-time failure
# is generated here from every sample with an integer result.
_UNREPRESENTABLE = (float("nan"), float("-inf"), 1e30)


def _result(name, sample):
    """(shape, dtype) of the first output, by inference."""
    op = CANONICAL[name]
    attrs, xs = op.parse_attrs(sample.attrs), sample.build()
    return (tuple(op.infer_shape(attrs, [x.shape for x in xs])[0]),
            op.infer_type(attrs, [np.dtype(x.dtype) for x in xs])[0])


def _scalar_attrs(name):
    return [k for k, a in CANONICAL[name].attrs.items() if a.kind == "float"]


def _integer_samples(name):
    return [s for s in MAIN[name] if _result(name, s)[1].kind in "iu"]


def _takes_integers(name):
    """False when the op refuses integer data (its float attributes never meet them)."""
    op = CANONICAL[name]
    try:
        op.infer_type(op.parse_attrs(MAIN[name][0].attrs),
                      [np.dtype(np.int32)] * len(MAIN[name][0].arrays))
    except TypeError:
        return False
    return True


SCALAR_OPS = [n for n in NAMES if _scalar_attrs(n) and _takes_integers(n)]


def test_scalar_attributes_meet_integers():
    """Each op with float attributes that takes integer data has a sample with an integer
    result, so that test_unrepresentable_scalar_leaves_out_unchanged covers it."""
    missing = [n for n in SCALAR_OPS if not _integer_samples(n)]
    assert SCALAR_OPS and not missing, (
        f"ops with float attributes but no integer-result sample: {missing}")


@pytest.mark.parametrize("name", SCALAR_OPS)
@_frees_arrays
def test_unrepresentable_scalar_leaves_out_unchanged(name):
    for sample in _integer_samples(name):
        for attr in _scalar_attrs(name):
            for value in _UNREPRESENTABLE:
                _check_atomic_failure(name, Failure(
                    sample.arrays, {**sample.attrs, attr: value}, ValueError,
                    rf"^{name}: {attr} must be finite and .*\(got {re.escape(repr(value))}\)",
                    out=_result(name, sample)))


# -- zero-size inputs -------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ZERO_SIZE))
@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning",
                            "ignore:invalid value encountered:RuntimeWarning")
@_frees_arrays
def test_zero_size(name):
    """Results against NumPy; for differentiable ops also gradients of the inputs'
    shapes (from the declared reads only, as in _check_grad_reads)."""
    op = CANONICAL[name]
    for z in ZERO_SIZE[name]:
        ins = z.build()
        got = _invoke(name, ins, z.attrs)
        with np.errstate(all="ignore"):
            want = z.expect(*[_values(x) for x in ins])
        want = [np.asarray(w) for w in (want if isinstance(want, list) else [want])]
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert g.shape == w.shape, f"{name}{z.attrs}: shape {g.shape}, NumPy {w.shape}"
            np.testing.assert_allclose(_values(g).astype(np.float64), w.astype(np.float64),
                                       equal_nan=True, err_msg=name)
        if op.differentiable:
            heads = [nd.zeros(g.shape, dtype=g.dtype) for g in got]
            attrs = op.parse_attrs(z.attrs)
            ins_read, outs_read = op.grad_reads(attrs, len(ins), len(got))
            grads = op.gradient(attrs, _described(ins, ins_read), _described(got, outs_read),
                                heads)
            for x, g in zip(ins, grads):
                assert g is None or g.shape == x.shape, f"{name}: gradient shape {g.shape}"
