"""The direct ufunc-loop road: found on every supported NumPy, checked at import, and a
failed check falls back to the general path with identical results."""
import numpy as np
import pytest

from runtime import _imperative, autograd, nd
from runtime.ops import registry

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"]


def _results():
    out = []
    for dt in DTYPES:
        a = nd.array(np.array([1, 2, 3, 0, 5], dtype=dt), dtype=dt)
        b = nd.array(np.array([3, 1, 1, 2, 1], dtype=dt), dtype=dt)
        out += [(a + b).asnumpy(), (a * b).asnumpy(), nd.maximum(a, b).asnumpy(),
                a.sum().asnumpy(), a.max().asnumpy()]
        if dt != "bool":
            out += [(a - b).asnumpy(), nd.abs(a).asnumpy(), nd.square(a).asnumpy()]
        if dt.startswith("float"):
            out += [nd.exp(a).asnumpy(), nd.sqrt(a).asnumpy(), a.mean().asnumpy()]
            out += [r.asnumpy() for r in _scalar_forms(b)]      # b has no 0 to divide by
        c = a.copy()
        c += b
        out.append(c.asnumpy())
    return out


def _scalar_forms(a):
    c = a.copy()
    c *= 0.1
    return [a * 0.1, 0.1 * a, a - 0.3, 0.3 - a, a / 3.0, 3.0 / a, a + 1, 1 + a, c]


def _spy(monkeypatch, name):
    calls = []
    op = registry.get(name)
    compute = op.compute

    def counting(*args):
        calls.append(1)
        return compute(*args)

    monkeypatch.setattr(op, "compute", counting)
    return calls


@pytest.fixture
def spy_add(monkeypatch):
    return _spy(monkeypatch, "add")


def test_fast_path_is_active_and_skips_the_kernel(spy_add):
    assert _imperative.fast_path_note().startswith("active"), _imperative.fast_path_note()
    a = nd.ones((4,))
    np.testing.assert_array_equal((a + a).asnumpy(), np.full(4, 2, np.float32))
    assert spy_add == []


def test_failed_probe_falls_back_to_the_general_path(spy_add):
    fast = _results()
    try:
        note = _imperative._init_fast_path(_corrupt_probe=True)
        assert note.startswith("off") and "general path" in note
        assert _imperative.fast_path_note() == note
        slow = _results()
        a = nd.ones((4,))
        np.testing.assert_array_equal((a + a).asnumpy(), np.full(4, 2, np.float32))
        assert spy_add, "a + b did not reach the general path"
    finally:
        _imperative._init_fast_path()
    assert _imperative.fast_path_note().startswith("active")
    assert len(fast) == len(slow)
    for f, s in zip(fast, slow):
        assert f.dtype == s.dtype and f.shape == s.shape
        np.testing.assert_array_equal(f, s)


@pytest.mark.parametrize("n", [8, 100, 40_000])
@pytest.mark.parametrize("op", ["+=", "*=", "-="])
def test_inplace_operator_on_overlapping_views_matches_numpy(n, op):
    ref = np.arange(n, dtype=np.float32) % 7 + 1
    x = nd.array(ref)
    exec(f"x[1:] {op} x[:-1]")
    exec(f"ref[1:] {op} ref[:-1]")
    np.testing.assert_array_equal(x.asnumpy(), ref)
    y = nd.array(np.arange(n, dtype=np.float32))
    exec(f"y[:-1] {op} y[1:]")
    r = np.arange(n, dtype=np.float32)
    exec(f"r[:-1] {op} r[1:]")
    np.testing.assert_array_equal(y.asnumpy(), r)


def test_out_overlapping_an_input_matches_numpy():
    x = nd.arange(8)
    nd.elemwise_add(x[:-1], x[:-1], out=x[1:])
    ref = np.arange(8, dtype=np.float32)
    np.add(ref[:-1], ref[:-1], out=ref[1:])
    np.testing.assert_array_equal(x.asnumpy(), ref)



@pytest.mark.parametrize("n", [1, 5, 8, 9, 129, 8193, 100_000])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_full_reductions_match_numpy_bit_for_bit(n, dtype):
    """A sum starts from 0 as NumPy's does (the pairwise split, and [-0.0] sums to 0.0);
    a float32 mean divides in float64 as np.mean does."""
    a = (np.random.default_rng(n).random(n) * 3 - 1).astype(dtype)
    x = nd.array(a, dtype=dtype)
    got = {f: getattr(nd, f)(x).asnumpy()[0] for f in ("sum", "prod", "max", "min", "mean")}
    assert got["sum"] == np.sum(a, dtype=dtype)
    assert got["prod"] == np.prod(a, dtype=dtype)
    assert got["max"] == a.max() and got["min"] == a.min()
    if dtype != "float16":
        assert got["mean"] == np.mean(a, dtype=dtype)
    assert str(nd.array(np.array([-0.0], dtype), dtype=dtype).sum().asnumpy()[0]) == "0.0"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scalar_forms_match_numpy_bit_for_bit_without_their_kernel(monkeypatch, dtype):
    """x <op> number on floating arrays runs the ufunc loop with the number made a value
    of x's dtype (NumPy's rule for a Python float), reversed for number - x and
    number / x; the scalar ops' kernels are not called."""
    calls = [_spy(monkeypatch, n) for n in ("_plus_scalar", "_minus_scalar",
                                            "_rminus_scalar", "_mul_scalar", "_div_scalar",
                                            "_rdiv_scalar")]
    a = (np.random.default_rng(3).random(37) * 4 - 2).astype(dtype)
    got = _scalar_forms(nd.array(a, dtype=dtype))
    c = a.copy()
    c *= 0.1
    want = [a * 0.1, 0.1 * a, a - 0.3, 0.3 - a, a / 3.0, 3.0 / a, a + 1, 1 + a, c]
    for g, w in zip(got, want):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(g.asnumpy(), w)
    assert [len(c) for c in calls] == [0] * 6


def test_scalar_forms_record_their_op_and_refuse_writes_into_the_tape():
    x = nd.array(np.array([0.25, -1.5, 2.0, 4.0]))
    x.attach_grad()
    with autograd.record():
        y = 3.0 / (2.0 * x - 1.0) + (x / 4.0 - 0.5)
    y.backward()
    xn = np.array([0.25, -1.5, 2.0, 4.0])
    # d/dx [3 / (2x - 1) + x / 4 - 0.5] = -6 / (2x - 1)^2 + 1/4, in float32
    np.testing.assert_allclose(x.grad.asnumpy(), -6.0 / (2 * xn - 1) ** 2 + 0.25, rtol=1e-6)
    with autograd.record():
        z = nd.tanh(x)               # saves its output
        with pytest.raises(RuntimeError, match="_mul_scalar: cannot write into an array "
                                               "on the autograd tape"):
            z *= 2.0
    np.testing.assert_array_equal(z.asnumpy(), np.tanh(xn.astype(np.float32)))


def test_scalar_beyond_float32_takes_the_general_path_and_its_warning():
    x = nd.array(np.array([1.0, -1.0], np.float32))
    with pytest.warns(RuntimeWarning, match="overflow"):
        r = x * 1e39
    np.testing.assert_array_equal(r.asnumpy(), np.array([np.inf, -np.inf], np.float32))
