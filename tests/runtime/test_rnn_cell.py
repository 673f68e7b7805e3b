"""Gluon's recurrent cells (runtime.gluon.rnn) against MXNet 1.9.1: unrolled outputs,
final states and gradients of every cell kind, layout, merge_outputs and valid_length
from ``data/mxnet191.npz`` (``mxnet_fixtures.py``); parameter names shared with the
fused layers; the API's rules (begin_state, modifiers, errors)."""

import os

import numpy as np
import pytest

import runtime as mx
from runtime import autograd, nd
from runtime.gluon import rnn

from tests.runtime.mxnet_fixtures import CELL_CASES, make_cell

MX = np.load(os.path.join(os.path.dirname(__file__), "data", "mxnet191.npz"))


def _suffix(name):
    return name.split("_", 1)[1] if "_" in name else name


def unrolled(key, hybrid=False):
    """(outputs, states, input gradient, parameter gradients) of the fixture's cell
    unrolled under record() with MXNet 1.9.1's parameters, its cells hybridized or not;
    checks the parameter names and the number of outputs and states against MXNet's."""
    _, expr, layout, merge, valid, shape = next(c for c in CELL_CASES if c[0] == key)
    cell = make_cell(rnn, expr)
    cell.initialize()
    if hybrid:
        cell.hybridize()
    x = nd.array(MX[f"cell/{key}/x"])
    length = shape[layout.find("T")]
    cell.unroll(length, x, layout=layout, merge_outputs=True)        # deferred shapes
    params = list(cell.collect_params().values())
    names = [str(n) for n in MX[f"cell/{key}/names"]]
    assert [_suffix(p.name) for p in params] == [_suffix(n) for n in names]
    for i, p in enumerate(params):
        p.set_data(nd.array(MX[f"cell/{key}/p{i}"]))
    x.attach_grad()
    vl = None if valid is None else nd.array(valid)
    with autograd.record(train_mode=False):
        outputs, states = cell.unroll(length, x, layout=layout, merge_outputs=merge,
                                      valid_length=vl)
        outs = [outputs] if isinstance(outputs, nd.NDArray) else list(outputs)
        assert len(outs) == int(MX[f"cell/{key}/nout"])
        total = sum((o * nd.array(MX[f"cell/{key}/head{i}"])).sum() for i, o in enumerate(outs))
        total = total + sum((s * (i + 1)).sum() for i, s in enumerate(states))
    total.backward()
    assert len(states) == sum(1 for k in MX.files if k.startswith(f"cell/{key}/state"))
    graphs = []
    cell.apply(lambda b: graphs.append(bool(getattr(b, "_cache", None))))
    assert any(graphs) == hybrid            # hybridized steps ran as cached graphs
    return ([o.asnumpy() for o in outs], [s.asnumpy() for s in states], x.grad.asnumpy(),
            [p.grad().asnumpy() for p in params])


@pytest.mark.parametrize("hybrid", [False, True], ids=["imperative", "hybridized"])
@pytest.mark.parametrize("case", CELL_CASES, ids=[c[0] for c in CELL_CASES])
def test_cell_matches_mxnet(case, hybrid):
    key = case[0]
    outs, states, dx, grads = unrolled(key, hybrid)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o, MX[f"cell/{key}/out{i}"], rtol=1e-5,
                                   atol=1e-6, err_msg=f"{key}: output {i}")
    for i, s in enumerate(states):
        np.testing.assert_allclose(s, MX[f"cell/{key}/state{i}"], rtol=1e-5,
                                   atol=1e-6, err_msg=f"{key}: state {i}")
    np.testing.assert_allclose(dx, MX[f"cell/{key}/dx"], rtol=1e-4, atol=1e-5,
                               err_msg=f"{key}: input gradient")
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, MX[f"cell/{key}/dp{i}"], rtol=1e-4,
                                   atol=1e-5, err_msg=f"{key}: parameter {i} gradient")


@pytest.mark.parametrize("mode,cell_cls", [("lstm", rnn.LSTMCell), ("gru", rnn.GRUCell),
                                           ("rnn_tanh", rnn.RNNCell)])
def test_stacked_cells_share_names_and_values_with_fused_layer(mode, cell_cls):
    fused_cls = {"lstm": rnn.LSTM, "gru": rnn.GRU, "rnn_tanh": rnn.RNN}[mode]
    kwargs = {"activation": "tanh"} if mode == "rnn_tanh" else {}
    fused = fused_cls(4, num_layers=2, layout="NTC", prefix="net_", **kwargs)
    stack = rnn.HybridSequentialRNNCell(prefix="net_")
    with stack.name_scope():
        stack.add(cell_cls(4, prefix="l0_"))
        stack.add(cell_cls(4, prefix="l1_"))
    x = nd.array(np.random.default_rng(0).standard_normal((3, 5, 2)))
    fused.initialize()
    stack.initialize()
    fused(x)
    stack.unroll(5, x)
    fp, sp = fused.collect_params(), stack.collect_params()
    assert list(fp) == list(sp)
    for name, p in fp.items():
        sp[name].set_data(p.data())
    out, states = fused(x, fused.begin_state(3))
    sout, sstates = stack.unroll(5, x, merge_outputs=True)
    np.testing.assert_allclose(sout.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)
    # the fused layer's states are (layers, batch, hidden); the stack's one per cell
    per_cell = len(sstates) // 2
    for j, fs in enumerate(states):
        for layer in range(2):
            np.testing.assert_allclose(sstates[layer * per_cell + j].asnumpy(),
                                       fs.asnumpy()[layer], rtol=1e-5, atol=1e-6)


def test_step_by_step_equals_unroll_and_counters():
    cell = rnn.GRUCell(3, input_size=2)
    cell.initialize()
    x = nd.array(np.random.default_rng(1).standard_normal((4, 6, 2)))
    outputs, states = cell.unroll(6, x, layout="NTC", merge_outputs=False)
    assert len(outputs) == 6 and cell._counter == 5
    h = cell.begin_state(batch_size=4)
    for t in range(6):
        out, h = cell(x[:, t, :], h)
        np.testing.assert_allclose(out.asnumpy(), outputs[t].asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(h[0].asnumpy(), states[0].asnumpy(), rtol=1e-6)


def test_reprs_prefixes_and_state_info():
    assert repr(rnn.RNNCell(4, input_size=3)) == "RNNCell(3 -> 4, tanh)"
    assert repr(rnn.LSTMCell(4)) == "LSTMCell(None -> 16)"
    assert repr(rnn.GRUCell(4, input_size=2)) == "GRUCell(2 -> 12)"
    assert repr(rnn.DropoutCell(0.5)) == "DropoutCell(rate=0.5, axes=())"
    lstm = rnn.LSTMCell(4, prefix="enc_")
    assert repr(rnn.ZoneoutCell(lstm, 0.1, 0.2)) == \
        "ZoneoutCell(p_out=0.1, p_state=0.2, LSTMCell(None -> 16))"
    assert rnn.RNNCell(2).prefix.startswith("rnn") and rnn.GRUCell(2).prefix.startswith("gru")
    assert lstm.state_info(5) == [{"shape": (5, 4), "__layout__": "NC"}] * 2
    seq = rnn.SequentialRNNCell()
    seq.add(rnn.LSTMCell(4))
    seq.add(rnn.GRUCell(3))
    states = seq.begin_state(batch_size=2, dtype="float64")
    assert [s.shape for s in states] == [(2, 4), (2, 4), (2, 3)]
    assert all(s.dtype == np.float64 for s in states)
    assert len(seq) == 2 and isinstance(seq[1], rnn.GRUCell)


def test_modifier_rules():
    base = rnn.LSTMCell(3)
    res = rnn.ResidualCell(base)
    assert res.prefix == base.prefix + "residualcell"
    assert list(res.params) == list(base.params)
    with pytest.raises(RuntimeError, match="call the modifier cell instead"):
        base.begin_state(batch_size=2)
    assert [s.shape for s in res.begin_state(batch_size=2)] == [(2, 3), (2, 3)]
    with pytest.raises(ValueError, match="already modified"):
        rnn.ZoneoutCell(base)
    bi = rnn.BidirectionalCell(rnn.GRUCell(2), rnn.GRUCell(2))
    with pytest.raises(NotImplementedError, match="cannot be stepped"):
        bi(nd.ones((1, 2)), bi.begin_state(batch_size=1))
    with pytest.raises(TypeError, match="ZoneoutCell: a BidirectionalCell cannot be stepped"):
        rnn.ZoneoutCell(bi)
    with pytest.raises(ValueError, match=r"DropoutCell: rate must be a number in \[0, 1\)"):
        rnn.DropoutCell(1.5)


def test_composite_cells_sit_in_a_hybrid_block():
    # As in Gluon, HybridSequentialRNNCell, BidirectionalCell and the modifier cells are
    # HybridRecurrentCells (MXNet's test_gluon_rnn.py::test_hybridstack nests them)
    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                left = rnn.HybridSequentialRNNCell()
                left.add(rnn.ResidualCell(rnn.LSTMCell(4, input_size=4)))
                left.add(rnn.GRUCell(4, input_size=4))
                right = rnn.HybridSequentialRNNCell()
                right.add(rnn.LSTMCell(4, input_size=4))
                self.cell = rnn.BidirectionalCell(left, right)

        def hybrid_forward(self, F, x):
            return self.cell.unroll(3, x, layout="NTC", merge_outputs=True)[0]

    for cls in (rnn.HybridSequentialRNNCell, rnn.BidirectionalCell, rnn.ResidualCell,
                rnn.ZoneoutCell):
        assert issubclass(cls, mx.gluon.HybridBlock)
    net = Net()
    net.initialize()
    x = nd.array(np.random.default_rng(0).uniform(size=(2, 3, 4)))
    plain = net(x)
    assert plain.shape == (2, 3, 8)
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), plain.asnumpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="children of a HybridBlock must be HybridBlocks"):
        rnn.HybridSequentialRNNCell().add(rnn.SequentialRNNCell())
    # a stack holding a BidirectionalCell unrolls (Gluon's unfused layers) but cannot step
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.BidirectionalCell(rnn.GRUCell(2, input_size=4), rnn.GRUCell(2, input_size=4)))
    stack.initialize()
    assert stack.unroll(3, x, layout="NTC", merge_outputs=True)[0].shape == (2, 3, 4)
    with pytest.raises(NotImplementedError, match="cannot be stepped"):
        stack(x[:, 0], stack.begin_state(batch_size=2))


def test_zoneout_in_training_keeps_previous_values():
    cell = rnn.ZoneoutCell(rnn.RNNCell(50, input_size=4), zoneout_outputs=0.5)
    cell.initialize(mx.init.Normal(1.0))
    x = nd.array(np.random.default_rng(2).standard_normal((8, 2, 4)))
    with autograd.record():
        outputs, _ = cell.unroll(2, x, layout="NTC", merge_outputs=False)
    first, second = outputs[0].asnumpy(), outputs[1].asnumpy()
    # step 0 keeps zeros (the previous output) where zoned out, step 1 keeps step 0's
    zeros = first == 0
    assert 0.3 < zeros.mean() < 0.7
    kept = second == first
    assert 0.3 < kept.mean() < 0.7


def test_unroll_errors():
    cell = rnn.RNNCell(2)
    cell.initialize()
    with pytest.raises(ValueError, match="unroll: layout must be one of"):
        cell.unroll(3, nd.ones((2, 3, 4)), layout="NCT")
    with pytest.raises(ValueError, match="length must be the inputs' size 3"):
        cell.unroll(4, nd.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="length must be the number of input steps 2"):
        cell.unroll(3, [nd.ones((2, 4))] * 2)
    with pytest.raises(ValueError, match="RNNCell: states must be a list of 1"):
        cell(nd.ones((2, 4)), [])


def _params_of(cell):
    return {p.name: p.data() for p in cell.collect_params().values()}


@pytest.mark.parametrize("make, n_states", [
    (lambda: rnn.RNNCell(6, prefix="rnn_"), 1),
    (lambda: rnn.LSTMCell(6, prefix="rnn_"), 2),
    (lambda: rnn.GRUCell(6, prefix="rnn_"), 1),
])
def test_unroll_on_symbols_builds_gluons_graph(make, n_states):
    cell = make()
    inputs = [mx.sym.var(f"rnn_t{i}_data") for i in range(3)]
    outputs, states = cell.unroll(3, inputs)
    assert len(states) == n_states
    group = mx.sym.Group(outputs)
    assert group.list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output",
                                    "rnn_t2_out_output"]
    assert sorted(group.list_arguments()) == sorted(
        [f"rnn_t{i}_data" for i in range(3)] + ["rnn_h2h_bias", "rnn_h2h_weight",
                                                 "rnn_i2h_bias", "rnn_i2h_weight"])
    shapes = {f"rnn_t{i}_data": (4, 5) for i in range(3)}
    _, outs, _ = group.infer_shape(**shapes)
    assert outs == [(4, 6)] * 3
    # the graph computes what the imperative unroll does, with the same parameters
    cell.initialize(mx.init.Uniform(0.5))
    rng = np.random.default_rng(3)
    xs = [nd.array(rng.normal(size=(4, 5))) for _ in range(3)]
    want, _ = cell.unroll(3, xs)
    got = group.eval(**{f"rnn_t{i}_data": x for i, x in enumerate(xs)}, **_params_of(cell))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-5, atol=1e-6)


def test_symbolic_rnn_cell_against_numpy_on_a_merged_input():
    cell = rnn.RNNCell(3, prefix="r_", input_size=2)
    out, _ = cell.unroll(2, mx.sym.var("x"), layout="TNC", merge_outputs=True)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 2)).astype(np.float32)
    w_i, w_h = rng.normal(size=(3, 2)), rng.normal(size=(3, 3))
    b_i, b_h = rng.normal(size=3), rng.normal(size=3)
    got = out.eval(x=nd.array(x), r_i2h_weight=nd.array(w_i), r_h2h_weight=nd.array(w_h),
                   r_i2h_bias=nd.array(b_i), r_h2h_bias=nd.array(b_h))[0].asnumpy()
    h, want = np.zeros((4, 3)), []
    for t in range(2):
        h = np.tanh(x[t] @ w_i.T + b_i + h @ w_h.T + b_h)
        want.append(h)
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-5, atol=1e-6)


def test_symbolic_stack_bidirectional_and_modifiers():
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(4, prefix="s0_"))
    stack.add(rnn.ResidualCell(rnn.LSTMCell(4, prefix="s1_")))
    stack.add(rnn.ZoneoutCell(rnn.GRUCell(4, prefix="s2_"), 0.3, 0.3))
    x = mx.sym.var("x")
    out, states = stack.unroll(3, x, merge_outputs=True)
    assert len(states) == 5
    assert out.infer_shape(x=(2, 3, 5))[1] == [(2, 3, 4)]
    bi = rnn.BidirectionalCell(rnn.GRUCell(3, prefix="l_"), rnn.GRUCell(3, prefix="r_"),
                               output_prefix="bi_")
    outs, _ = bi.unroll(2, [mx.sym.var("a"), mx.sym.var("b")])
    group = mx.sym.Group(outs)
    assert group.list_outputs() == ["bi_t0_output", "bi_t1_output"]
    assert group.infer_shape(a=(7, 5), b=(7, 5))[1] == [(7, 6), (7, 6)]
    with pytest.raises(ValueError, match="unroll: length must be given when inputs is one "
                       "Symbol"):
        rnn.GRUCell(3).unroll(None, mx.sym.var("x"))
    with pytest.raises(TypeError, match="a non-empty list of NDArrays or of Symbols"):
        rnn.GRUCell(3).unroll(2, [mx.sym.var("x"), nd.ones((2, 2))])
