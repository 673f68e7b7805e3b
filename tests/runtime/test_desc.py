"""ArrayDesc (runtime._desc): an array's description without its values, and the
gradient-read declarations of the registry that hand it to gradient rules."""

import pickle

import numpy as np
import pytest

import runtime as rt
from runtime import nd
from runtime._desc import ArrayDesc
from runtime.nd import sparse
from runtime.ops import registry
from runtime.ops._call import F, broadcast, zeros


def test_describes_an_array():
    x = nd.array(np.arange(6.0).reshape(2, 3), dtype="float64")
    d = ArrayDesc.of(x)
    assert (d.shape, d.dtype, d.stype, d.ctx) == (x.shape, x.dtype, x.stype, x.ctx)
    assert (d.ndim, d.size) == (2, 6)
    assert d == ArrayDesc((2, 3), np.float64, "default", rt.cpu())
    assert hash(d) == hash(ArrayDesc.of(x))
    assert d != ArrayDesc.of(x.astype("float32"))
    assert pickle.loads(pickle.dumps(d)) == d
    assert ArrayDesc.of(d) == d
    c = ArrayDesc.of(sparse.csr_matrix(np.eye(3, dtype=np.float32)))
    assert (c.stype, c.shape, c.size) == ("csr", (3, 3), 9)
    assert ArrayDesc.of(nd.zeros((0, 4))).size == 0


def test_has_no_values():
    x = nd.ones((2, 3))
    d = ArrayDesc.of(x)
    for read in (lambda: x * d, lambda: d * 2, lambda: -d, lambda: d + 1.0, lambda: d > 0,
                 lambda: d != 0, lambda: d == x, lambda: F.exp(d)):
        with pytest.raises(TypeError):
            read()
    for name in ("asnumpy", "reshape", "copy"):
        assert not hasattr(d, name)
    with pytest.raises(AttributeError):
        d.shape = (3, 2)


def test_shape_helpers_take_a_description():
    x = nd.array(np.ones((2, 3), np.float64), dtype="float64")
    z = zeros(ArrayDesc.of(x))
    assert (z.shape, z.dtype, z.stype) == ((2, 3), np.float64, "default")
    assert zeros(ArrayDesc.of(x), (0, 3)).shape == (0, 3)
    s = zeros(ArrayDesc((4, 2), np.float32, "row_sparse", rt.cpu()))
    assert s.stype == "row_sparse" and not s.asnumpy().any()
    g = nd.array(np.array([[1.0], [2.0]]), dtype="float64")
    np.testing.assert_array_equal(broadcast(g, (2, 3)).asnumpy(), [[1, 1, 1], [2, 2, 2]])
    assert broadcast(nd.zeros((1, 3)), (0, 3)).shape == (0, 3)


def test_declarations_default_to_nothing_and_resolve():
    op = registry.Op("_probe", gradient=lambda a, i, o, g: [g[0]])
    assert op.grad_reads({}, 1, 1) == ((), ())
    op = registry.Op("_probe", inputs=("args",), variadic=True,
                     gradient=lambda a, i, o, g: [g[0]] * len(i),
                     grad_inputs=lambda attrs, n: range(n) if attrs["all"] else (0,))
    assert op.grad_reads({"all": True}, 3, 1) == ((0, 1, 2), ())
    assert op.grad_reads({"all": False}, 3, 1) == ((0,), ())
    norm = registry.get("norm")
    assert norm.grad_reads(norm.parse_attrs({"ord": 1}), 1, 1) == ((0,), ())
    assert norm.grad_reads(norm.parse_attrs({}), 1, 1) == ((0,), (0,))


@pytest.mark.parametrize("kw", [{"grad_inputs": (1,)}, {"grad_inputs": (0, 0)},
                                {"grad_outputs": (-1,)}, {"grad_outputs": ("out",)}])
def test_declarations_name_positions(kw):
    with pytest.raises(ValueError, match=r"^_probe: grad_(in|out)puts must be distinct "
                                         r"positions >= 0"):
        registry.Op("_probe", gradient=lambda a, i, o, g: [g[0]], **kw)
