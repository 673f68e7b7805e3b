"""The direct ufunc-loop road: found on every supported NumPy, checked at import, and a
failed check falls back to the general path with identical results."""
import numpy as np
import pytest

from runtime import _imperative, nd
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
        c = a.copy()
        c += b
        out.append(c.asnumpy())
    return out


@pytest.fixture
def spy_add(monkeypatch):
    calls = []
    op = registry.get("add")
    compute = op.compute

    def counting(*args):
        calls.append(1)
        return compute(*args)

    monkeypatch.setattr(op, "compute", counting)
    return calls


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
