"""Shared checks for operators: gradients against float64 central differences, and the
four write requests (Chainer's gradient_check, CuPy's numpy_cupy_allclose idea)."""

import numpy as np

from runtime import nd
from runtime._imperative import invoke
from runtime.ops import registry


def run(op_name, arrays, attrs=None, **kw):
    """Invoke ``op_name`` on NumPy or NDArray ``arrays``; returns a list of NDArrays."""
    xs = [a if isinstance(a, nd.NDArray) else nd.array(a, dtype=a.dtype) for a in arrays]
    out = invoke(registry.get(op_name), xs, attrs or {}, **kw)
    return out if isinstance(out, list) else [out]


def check_grad(op_name, arrays, attrs=None, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-7,
               seed=0):
    """Compare the op's gradient rule with central differences in float64.

    ``arrays`` are NumPy inputs (cast to float64 unless integer); ``wrt`` lists the input
    positions to check (default: every floating input).  The check runs along random
    directions: <grad_i, v_i> against (f(x + eps v) - f(x - eps v)) / (2 eps) . g.
    """
    rng = np.random.default_rng(seed)
    op = registry.get(op_name)
    xs = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in map(np.asarray, arrays)]
    wrt = [i for i, a in enumerate(xs) if a.dtype.kind == "f"] if wrt is None else wrt
    outs = run(op_name, xs, attrs)
    heads = [rng.standard_normal(o.shape) for o in outs]
    parsed = op.parse_attrs(attrs or {})
    grads = op.gradient(parsed, [nd.array(x, dtype=x.dtype) for x in xs], outs,
                        [nd.array(h, dtype="float64") for h in heads])
    for i in wrt:
        v = rng.standard_normal(xs[i].shape)
        g = grads[i]
        assert g is not None, f"{op_name}: no gradient for input {i}"
        assert g.shape == xs[i].shape, f"{op_name}: gradient {i} has shape {g.shape}"
        analytic = float(np.sum(g.asnumpy() * v))
        plus = [x.copy() for x in xs]
        minus = [x.copy() for x in xs]
        plus[i] = plus[i] + eps * v
        minus[i] = minus[i] - eps * v
        fp = run(op_name, plus, attrs)
        fm = run(op_name, minus, attrs)
        numeric = sum(float(np.sum((p.asnumpy() - m.asnumpy()) * h)) / (2 * eps)
                      for p, m, h in zip(fp, fm, heads))
        assert np.isclose(analytic, numeric, rtol=rtol, atol=atol * max(1, abs(numeric))), \
            f"{op_name}: gradient of input {i}: analytic {analytic} vs numeric {numeric}"


def check_requests(op_name, arrays, attrs=None):
    """null leaves out= alone, write overwrites it, add accumulates into it, inplace
    (where the op allows it) updates the input.  (That a failed op leaves out= unchanged
    is checked by test_all_ops.py, from the FAILURES of op_samples.py.)"""
    op = registry.get(op_name)
    xs = [np.asarray(a) for a in arrays]
    ref = [r.asnumpy() for r in run(op_name, xs, attrs)]
    n = len(ref)

    def outs(fill):
        return [nd.array(np.full(r.shape, fill, r.dtype), dtype=r.dtype) for r in ref]

    o = outs(7)
    run(op_name, xs, attrs, out=o, req="null")
    for a, r in zip(o, ref):
        np.testing.assert_array_equal(a.asnumpy(), np.full(r.shape, 7, r.dtype))
    o = outs(7)
    run(op_name, xs, attrs, out=o if n > 1 else o[0], req="write")
    for a, r in zip(o, ref):
        np.testing.assert_array_equal(a.asnumpy(), r)
    o = outs(3)
    run(op_name, xs, attrs, out=o if n > 1 else o[0], req="add")
    for a, r in zip(o, ref):
        np.testing.assert_allclose(a.asnumpy(), (np.full(r.shape, 3, r.dtype) + r).astype(r.dtype),
                                   rtol=1e-6)
    for j, k in op.inplace:
        # a variadic op declares the pairs of its largest call
        if j >= len(xs) or k >= n or xs[j].shape != ref[k].shape or xs[j].dtype != ref[k].dtype:
            continue
        arrs = [nd.array(x, dtype=x.dtype) for x in xs]
        target = arrs[j]
        run(op_name, arrs, attrs, out=target if n == 1 else
            [target if m == k else nd.zeros(ref[m].shape, dtype=ref[m].dtype) for m in range(n)])
        np.testing.assert_array_equal(target.asnumpy(), ref[k])
