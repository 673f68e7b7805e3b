"""The invoker (runtime._imperative): inference cached per signature, one storage
fallback, NDArray's Python operators found through the registry ops' fields, the short
road consistent with each op's inference, per-call state."""

import copy
import subprocess
import sys
import warnings

import numpy as np
import pytest

import allocator
import runtime as rt
from runtime import _imperative, nd
from runtime import random as rt_random
from runtime._ndarray import DTYPES
from runtime.ops import registry
from runtime.ops.registry import OPS
from tests.runtime.op_samples import SAMPLES

CANONICAL = {op.name: op for op in {id(op): op for op in OPS.values()}.values()}


def _values(x):
    return (x if x.stype == "default" else x.tostype("default")).asnumpy()


def _as_list(r):
    return r if isinstance(r, list) else [r]


@pytest.fixture
def cache():
    """A cleared inference cache; its info() after each step."""
    _imperative.clear_inference_cache()
    yield _imperative.inference_cache_info
    _imperative.clear_inference_cache()


# -- the inference cache ----------------------------------------------------------------

def test_the_same_signature_hits(cache):
    x = nd.array([1.0, 2.0, 3.0])
    # (x * 2.5 takes the scalar short road, which infers nothing: the op by its name)
    nd._mul_scalar(x, scalar=2.5)
    assert cache()["misses"] == 1 and cache()["hits"] == 0
    y = nd._mul_scalar(x, scalar=2.5)     # another call: the same op, attributes, shape, dtype
    x2 = nd.array([4.0, 5.0, 6.0])
    nd._mul_scalar(x2, scalar=2.5)        # other values, same signature
    assert cache()["misses"] == 1 and cache()["hits"] == 2
    np.testing.assert_array_equal(y.asnumpy(), [2.5, 5.0, 7.5])


@pytest.mark.parametrize("change", ["dtype", "shape", "attr", "stype", "op", "n_inputs"])
def test_a_different_signature_misses(cache, change):
    x = nd.array(np.arange(6.0).reshape(2, 3))
    nd.sum(x, axis=0)
    assert cache() == {**cache(), "misses": 1, "hits": 0, "size": 1}
    if change == "dtype":
        r = nd.sum(x.astype("float64"), axis=0)
    elif change == "shape":
        r = nd.sum(nd.array(np.arange(8.0).reshape(2, 4)), axis=0)
    elif change == "attr":
        r = nd.sum(x, axis=1)
    elif change == "stype":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rt.StorageFallbackWarning)
            r = nd.sum(x.tostype("csr"), axis=0)
    elif change == "op":
        r = nd.prod(x, axis=0)
    else:
        r = nd.add_n(x, x)
    assert cache()["hits"] == 0 and cache()["misses"] >= 2, cache()
    assert r.shape[0] in (2, 3, 4)


def test_attribute_order_and_equal_values(cache):
    op = registry.get("sum")
    x = nd.ones((2, 3))
    _imperative.invoke(op, [x], {"axis": 1, "keepdims": True})
    _imperative.invoke(op, [x], {"keepdims": True, "axis": 1})     # parsed in one order
    _imperative.invoke(op, [x], {"axis": (1,), "keepdims": 1})     # the same, parsed
    assert cache()["misses"] == 1 and cache()["hits"] == 2


def test_a_caller_s_attributes_changed_between_calls(cache):
    """The op's memo of its last signature keeps a copy of attributes it does not own."""
    op = registry.get("sum")
    x = nd.array(np.arange(6.0).reshape(2, 3))
    attrs = op.parse_attrs({"axis": 0})
    assert _imperative.invoke_parsed(op, [x], attrs, None, None).shape == (3,)
    attrs["axis"] = (1,)
    got = _imperative.invoke_parsed(op, [x], attrs, None, None)
    np.testing.assert_array_equal(got.asnumpy(), [3.0, 12.0])
    assert cache()["misses"] == 2


def test_failed_inference_raises_every_time_and_is_not_kept(cache):
    a, b = nd.ones((2, 3)), nd.ones((4, 5))
    for _ in range(2):
        with pytest.raises(ValueError, match=r"^add: shapes \(2, 3\), \(4, 5\) are not "):
            a + b
    assert cache()["size"] == 0
    c = nd.ones(3, dtype="int32")
    for _ in range(2):
        with pytest.raises(ValueError, match=r"^_plus_scalar: scalar must be finite"):
            c + float("nan")
    assert cache()["size"] == 0


def test_ops_with_unchecked_attributes_are_not_cached(cache):
    x = nd.array(np.arange(10.0))
    got = nd.slice(x, begin=(2,), end=(5,))
    assert cache()["size"] == 0                 # slice's begin/end are kind 'any'
    np.testing.assert_array_equal(got.asnumpy(), [2.0, 3.0, 4.0])
    got = nd.slice(x, begin=[1], end=[3])       # unhashable values work too
    np.testing.assert_array_equal(got.asnumpy(), [1.0, 2.0])


def test_the_cache_is_bounded(cache):
    x = nd.ones(2)
    for i in range(cache()["max_size"] + 10):   # a scalar that changes every call
        nd._mul_scalar(x, scalar=1.0 + i)
    assert 0 < cache()["size"] <= cache()["max_size"]


def _run_sample(name, sample):
    op = CANONICAL[name]
    if op.needs_rng:
        rt_random.seed(7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rt.StorageFallbackWarning)
        res = _as_list(_imperative.invoke(op, sample.build(), sample.attrs))
    return [(r.shape, np.dtype(r.dtype), r.stype, _values(r)) for r in res]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_results_are_identical_with_the_cache_cleared(cache, name):
    for sample in SAMPLES[name]:
        cached = [_run_sample(name, sample) for _ in range(2)]      # miss, then hit
        _imperative.clear_inference_cache()
        fresh = _run_sample(name, sample)
        for got in cached:
            assert len(got) == len(fresh)
            for (s, d, t, v), (s2, d2, t2, v2) in zip(got, fresh):
                assert (s, d, t) == (s2, d2, t2), name
                np.testing.assert_array_equal(v, v2, err_msg=name)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_inference_is_pure(name):
    """Inference writes nothing into the attributes and gives the same answer twice (the
    invoker caches it)."""
    op = CANONICAL[name]
    for sample in SAMPLES[name]:
        xs = sample.build()
        attrs = op.parse_attrs(sample.attrs)
        before = copy.deepcopy(attrs)
        shapes = [x.shape for x in xs]
        dtypes = [np.dtype(x.dtype) for x in xs]
        stypes = [x.stype for x in xs]
        first = (op.infer_shape(attrs, shapes), op.infer_type(attrs, dtypes),
                 op.infer_storage(attrs, stypes))
        assert attrs == before, f"{name}: inference changed its attributes"
        assert (op.infer_shape(attrs, shapes), op.infer_type(attrs, dtypes),
                op.infer_storage(attrs, stypes)) == first


# -- per-call state ---------------------------------------------------------------------

def test_stateful_entry_point_returns_none_for_ops_without_prepare():
    x = nd.ones((2, 2))
    res, state = _imperative.invoke_stateful(registry.get("exp"), [x], {})
    assert state is None
    np.testing.assert_allclose(res.asnumpy(), np.e)


def test_prepare_runs_once_per_call_even_when_nothing_is_written(monkeypatch, request):
    request.addfinalizer(_imperative.clear_inference_cache)   # forget the replaced prepare
    op = registry.get("Dropout")
    seen = []
    monkeypatch.setattr(op, "prepare", lambda attrs: seen.append(dict(attrs)) or False)
    _imperative.clear_inference_cache()       # prepare is read with a new signature
    x, out = nd.ones((2, 2)), nd.zeros((2, 2))
    res, state = _imperative.invoke_stateful(op, [x], op.parse_attrs({}), out=out, req="null")
    assert state is False and len(seen) == 1
    np.testing.assert_array_equal(out.asnumpy(), 0)


# -- one storage fallback -------------------------------------------------------------

def _pool_allocations():
    return allocator.get_pool("cpu").memory_stats()["allocation.all.allocated"]


@pytest.mark.parametrize("case", ["storage types", "dtype", "broadcasting", "ndim"])
def test_every_fallback_is_the_invoker_s(case):
    """Storage types without a kernel, and shapes or dtypes that the kernel's
    sparse_check refuses, take the same fallback: pool temporaries, one notice, refused
    under 'error'."""
    S = nd.sparse
    if case == "storage types":
        args, call = [S.csr_matrix(np.eye(3, dtype=np.float32))], nd.exp
        what = r"^exp: no kernel for storage types \(csr\)"
        want = np.exp(np.eye(3))
    elif case == "dtype":
        a = np.array([[1, 0], [0, 2]], np.int32)
        args, call = [S.csr_matrix(a, dtype="int32")] * 2, nd.add
        what = r"^add: no sparse kernel for dtype int32 with storage types \(csr, csr\)"
        want = a + a
    elif case == "broadcasting":
        a = np.array([[1.0, 0.0], [0.0, 2.0]])
        args = [S.row_sparse_array(a), S.row_sparse_array(a[:1])]
        call, want = nd.multiply, a * a[:1]
        what = (r"^multiply: no sparse kernel for broadcasting with storage types "
                r"\(row_sparse, row_sparse\)")
    else:
        a = np.arange(8.0).reshape(2, 2, 2)
        args, call = [S.row_sparse_array(a)], lambda x: nd.square_sum(x, axis=0)
        what = r"^_square_sum: no sparse kernel for 3-D arrays with storage types"
        want = (a * a).sum(axis=0)
    old = rt.set_storage_fallback("error")
    try:
        with pytest.raises(rt.StorageFallbackError, match=what):
            call(*args)
        rt.set_storage_fallback("silent")
        before = _pool_allocations()
        got = call(*args)
        assert _pool_allocations() - before >= 2      # dense temporaries and the result
    finally:
        rt.set_storage_fallback(old)
    np.testing.assert_allclose(_values(got), want)


def test_the_fallback_warns_once_per_signature_and_reason():
    code = """
import warnings
import numpy as np
import runtime as rt
from runtime import nd
rt.set_storage_fallback("warn")
c = nd.sparse.csr_matrix(np.eye(2, dtype=np.int32), dtype="int32")
f = nd.sparse.csr_matrix(np.eye(2, dtype=np.float32))
with warnings.catch_warnings(record=True) as rec:
    warnings.simplefilter("always")
    for _ in range(3):
        nd.add(c, c)                     # dtype: one notice
        nd.exp(f)                        # storage types: one notice
    nd.add(f, f)                         # a sparse kernel: none
ws = [str(w.message) for w in rec if issubclass(w.category, rt.StorageFallbackWarning)]
assert len(ws) == 2, ws
assert ws[0].startswith("add: no sparse kernel for dtype int32 with storage types (csr, csr)")
assert ws[1].startswith("exp: no kernel for storage types (csr)")
print("ok")
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr


# -- NDArray's Python operators and the ops' fields ------------------------------------

OPERATORS = [("__add__", "add"), ("__sub__", "subtract"), ("__mul__", "multiply"),
             ("__truediv__", "divide"), ("__mod__", "mod"), ("__pow__", "power"),
             ("__eq__", "equal"), ("__ne__", "not_equal"), ("__lt__", "lesser"),
             ("__le__", "lesser_equal"), ("__gt__", "greater"), ("__ge__", "greater_equal"),
             ("__matmul__", "dot")]


@pytest.fixture
def general_path():
    _imperative.set_fast_path(False)
    yield
    _imperative.set_fast_path(True)


def _spy(monkeypatch, name):
    op, calls = registry.get(name), []
    compute = op.compute

    def counting(*args):
        calls.append(name)
        return compute(*args)
    monkeypatch.setattr(op, "compute", counting)
    return calls


@pytest.mark.parametrize("method, name", OPERATORS)
def test_each_python_operator_runs_its_registry_op(monkeypatch, general_path, method, name):
    calls = _spy(monkeypatch, name)
    x, y = nd.array([[1.0, 2.0], [3.0, 4.0]]), nd.array([[2.0, 1.0], [1.0, 2.0]])
    got = getattr(x, method)(y)
    assert calls == [name]
    np.testing.assert_array_equal(got.asnumpy(), _imperative.invoke(registry.get(name),
                                                                    [x, y]).asnumpy())


SCALAR_AND_UNARY = [("x + 2", "_plus_scalar"), ("2 + x", "_plus_scalar"),
                    ("x - 2", "_minus_scalar"), ("2 - x", "_rminus_scalar"),
                    ("2 / x", "_rdiv_scalar"), ("2 ** x", "_rpower_scalar"),
                    ("x < 2", "_lesser_scalar"), ("2 < x", "_greater_scalar"),
                    ("-x", "negative"), ("abs(x)", "abs")]


@pytest.mark.parametrize("expr, name", SCALAR_AND_UNARY)
def test_scalar_and_unary_operators(monkeypatch, general_path, expr, name):
    calls = _spy(monkeypatch, name)
    x = nd.array([1.0, 3.0])
    got = eval(expr)
    assert calls == [name]
    np.testing.assert_allclose(got.asnumpy(), eval(expr, {"x": np.array([1.0, 3.0])}))


def test_scalar_forms_name_registered_ops():
    for op in CANONICAL.values():
        if op.scalar_forms is not None:
            assert len(op.scalar_forms) == 2
            for name in op.scalar_forms:
                assert name in OPS, f"{op.name}: scalar form {name!r} is not registered"
                assert "scalar" in OPS[name].attrs


UFUNC_OPS = sorted(n for n, op in CANONICAL.items() if op.ufunc is not None)


@pytest.mark.parametrize("name", UFUNC_OPS)
def test_the_short_road_agrees_with_the_general_path(name):
    """For every op with a ufunc and every dtype: the direct loop gives what the general
    path gives, or the call fails on both (the short road takes only the dtypes the op's
    inference keeps)."""
    op = CANONICAL[name]
    fn = nd.__dict__[name]
    rng = np.random.default_rng(0)
    for dtype in DTYPES:
        arrays = [nd.array((rng.random(5) * 3 + 0.5).astype(dtype), dtype=dtype)
                  for _ in range(len(op.inputs))]
        results = []
        for fast in (True, False):
            _imperative.set_fast_path(fast)
            try:
                with np.errstate(all="ignore"):
                    r = fn(*arrays)
                results.append((np.dtype(r.dtype), r.asnumpy()))
            except (TypeError, ValueError) as e:
                results.append(type(e))
            finally:
                _imperative.set_fast_path(True)
        if isinstance(results[0], type) or isinstance(results[1], type):
            assert results[0] == results[1], f"{name}[{dtype}]: {results}"
        else:
            assert results[0][0] == results[1][0]
            np.testing.assert_array_equal(results[0][1], results[1][1],
                                          err_msg=f"{name}[{dtype}]")


def test_reduction_methods_take_attribute_keywords():
    x = nd.array(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x.sum(axis=0).asnumpy(), [3.0, 5.0, 7.0])
    np.testing.assert_array_equal(x.max(axis=1, keepdims=True).asnumpy(), [[2.0], [5.0]])
    out = nd.zeros(3)
    x.mean(axis=0, out=out)                      # out= goes to the nd function
    np.testing.assert_array_equal(out.asnumpy(), [1.5, 2.5, 3.5])
    with pytest.raises(TypeError, match=r"^sum: axis must be an int or a tuple of ints"):
        x.sum(axis=0.5)
    with pytest.raises(TypeError, match=r"^sum: axis must be an int or a tuple of ints"):
        x.sum(axis=(False,))                     # not the remembered axis=(0,)
    with pytest.raises(TypeError, match=r"^sum: axis must be an int or a tuple of ints"):
        x.sum(axis=False)                        # nor axis=0
