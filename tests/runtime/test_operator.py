"""Custom operators (runtime.operator, MXNet's mx.operator): nd.Custom and sym.Custom
against NumPy and float64 central differences, MXNet's JSON form, aux states, errors."""

import json

import numpy as np
import pytest
import scipy.sparse

import runtime as mx
from runtime import autograd, nd
from runtime.test_utils import check_numeric_gradient


class _Softplus(mx.operator.CustomOp):
    def __init__(self, scale):
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], nd.log(1 + nd.exp(in_data[0])) * self.scale)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0],
                    out_grad[0] * self.scale / (1 + nd.exp(-in_data[0])))


@mx.operator.register("test_softplus")
class _SoftplusProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)
        assert isinstance(scale, str)        # MXNet passes keyword arguments as strings
        self.scale = float(scale)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Softplus(self.scale)


class _MulAdd(mx.operator.CustomOp):
    """(a * b, a + b); counts its calls in the aux state."""

    def forward(self, is_train, req, in_data, out_data, aux):
        a, b = in_data
        self.assign(out_data[0], req[0], a * b)
        self.assign(out_data[1], req[1], a + b)
        if is_train:
            aux[0][:] += 1

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        a, b = in_data
        self.assign(in_grad[0], req[0], out_grad[0] * b + out_grad[1])
        self.assign(in_grad[1], req[1], out_grad[0] * a + out_grad[1])


@mx.operator.register("test_muladd")
class _MulAddProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["prod", "sum"]

    def list_auxiliary_states(self):
        return ["calls"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], [(1,)]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _MulAdd()


def test_nd_custom_forward_and_gradient():
    a = np.array([-1.0, 0.5, 2.0], np.float32)
    x = nd.array(a)
    x.attach_grad()
    with autograd.record():
        y = nd.Custom(x, op_type="test_softplus", scale=2)
        z = (y * y).sum()
    z.backward()
    sp = 2 * np.log1p(np.exp(a))
    np.testing.assert_allclose(y.asnumpy(), sp, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * sp * 2 / (1 + np.exp(-a)), rtol=1e-5)
    assert "Custom(test_softplus)" in repr(y._entry)


def test_sym_custom_in_a_graph_and_its_json():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym.Custom(a, b=b, op_type="test_muladd", name="ma")
    assert out.list_outputs() == ["ma_prod", "ma_sum"]
    assert out.list_arguments() == ["a", "b"]
    assert out.list_auxiliary_states() == ["ma_calls"]
    node = json.loads(out.tojson())["nodes"][-1]
    assert node["op"] == "Custom" and node["attrs"] == {"op_type": "test_muladd"}
    again = mx.sym.load_json(out.tojson())
    loss = again[0] * 2 + again[1]
    rng = np.random.RandomState(0)
    check_numeric_gradient(loss, {"a": rng.normal(size=(2, 3)), "b": rng.normal(size=(2, 3))},
                           aux_states={"ma_calls": np.zeros(1)})
    exe = loss.simple_bind(mx.cpu(), a=(2, 3), b=(2, 3))
    exe.forward(is_train=True)
    exe.forward(is_train=False)
    np.testing.assert_array_equal(exe.aux_dict["ma_calls"].asnumpy(), [1])


class _WeightedSigmoid(mx.operator.CustomOp):
    """sigmoid(data) forward; (out - label) * scale backward, without the head gradient."""

    def __init__(self, scale):
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], 1 / (1 + nd.exp(-in_data[0])))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], (out_data[0] - in_data[1]) * self.scale)


@mx.operator.register("test_weighted_sigmoid")
class _WeightedSigmoidProp(mx.operator.CustomOpProp):
    """A loss op whose label's shape comes from the data's, and whose infer_shape returns
    two lists (MXNet allows it for an op without auxiliary states)."""

    def __init__(self, scale):
        super().__init__(need_top_grad=False)
        self.scale = float(scale)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], in_shape[0]], [in_shape[0]]

    def infer_type(self, in_type):
        return [in_type[0], in_type[0]], [in_type[0]]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _WeightedSigmoid(self.scale)


def test_sym_custom_completes_a_label_shape_from_the_data():
    out = mx.sym.Custom(mx.sym.var("data"), op_type="test_weighted_sigmoid", scale=0.5,
                        name="ws")
    assert out.list_arguments() == ["data", "ws_label"]
    assert out.infer_shape(data=(4, 5)) == ([(4, 5), (4, 5)], [(4, 5)], [])
    exe = out.simple_bind(mx.cpu(), data=(4, 5))
    rng = np.random.RandomState(0)
    x, y = rng.normal(size=(4, 5)), (rng.uniform(size=(4, 5)) > 0.5)
    exe.arg_dict["data"][:] = x
    exe.arg_dict["ws_label"][:] = y
    exe.forward(is_train=True)
    exe.backward()
    sig = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), sig, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["data"].asnumpy(), (sig - y) * 0.5, rtol=1e-6)
    # a prop that cannot work from the data alone leaves the label to be given
    partial = mx.sym.Custom(mx.sym.var("data"), op_type="test_muladd", name="m")
    assert partial.infer_shape_partial(data=(2, 3))[0] == [(2, 3), ()]


class _Square(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], nd.square(in_data[0]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@mx.operator.register("test_sparse_square")
class _SparseSquareProp(mx.operator.CustomOpProp):
    """Keeps a csr input's storage for the output, as MXNet's custom_sparse_sqr example."""

    def infer_storage_type(self, in_stype):
        st = "default" if in_stype[0] == "default" else "csr"
        return [st], [st], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Square()


def test_nd_custom_outputs_take_the_props_storage_type():
    m = scipy.sparse.random(4, 6, density=0.3, format="csr", dtype=np.float32, random_state=0)
    x = nd.sparse.csr_matrix(m)
    x.attach_grad(stype="default")
    with autograd.record():
        y = nd.Custom(x, op_type="test_sparse_square")
    y.backward(out_grad=nd.ones((4, 6)))
    assert y.stype == "csr"
    np.testing.assert_allclose(y.asscipy().toarray(), m.multiply(m).toarray(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * m.toarray(), rtol=1e-6)
    dense = nd.Custom(nd.array(m.toarray()), op_type="test_sparse_square")
    assert dense.stype == "default"


@mx.operator.register("test_bad_infer")
class _BadInferProp(mx.operator.CustomOpProp):
    def infer_shape(self, in_shape):
        return [in_shape[0]]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _WeightedSigmoid(1.0)


def test_custom_errors():
    with pytest.raises(ValueError, match="op_type 'nothing' is not registered"):
        nd.Custom(nd.ones(2), op_type="nothing")
    with pytest.raises(TypeError, match="op_type is required"):
        nd.Custom(nd.ones(2))
    with pytest.raises(ValueError, match="takes 3 input"):
        nd.Custom(nd.ones(2), op_type="test_muladd")
    with pytest.raises(ValueError, match=r"Custom \(test_bad_infer\): infer_shape must "
                       r"return 2 or 3 lists"):
        nd.Custom(nd.ones(2), op_type="test_bad_infer")
    with pytest.raises(TypeError, match="CustomOpProp subclass"):
        mx.operator.register("bad")(object)
    bad = {"nodes": [{"op": "null", "name": "x", "inputs": []},
                     {"op": "Custom", "name": "c", "inputs": [[0, 0, 0]]}],
           "arg_nodes": [0], "heads": [[1, 0, 0]]}
    with pytest.raises(ValueError, match="node 1 'c': a Custom node needs"):
        mx.sym.load_json(json.dumps(bad))
