"""mx.viz.print_summary against MXNet 1.9.1's own table (fixtures/mxnet/summary.txt)."""

import os

import pytest

import runtime as mx

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")


def _cnn():
    data = mx.sym.Variable("data")
    c = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv1")
    b = mx.sym.BatchNorm(c, name="bn1")
    a = mx.sym.Activation(b, act_type="relu", name="relu1")
    p = mx.sym.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    f = mx.sym.Flatten(p, name="flat")
    return mx.sym.FullyConnected(f, num_hidden=10, name="fc1")


def test_summary_is_mxnets_table(capsys):
    fc = _cnn()
    with mx.name.NameManager():       # automatic names from 0, as in MXNet's fresh process
        plus = fc + 1
    mx.viz.print_summary(mx.sym.SoftmaxOutput(plus, name="softmax"),
                         shape={"data": (2, 3, 8, 8)})
    mx.viz.print_summary(fc, line_length=100)          # shapes from the attributes only
    with open(os.path.join(FIX, "summary.txt")) as f:
        assert capsys.readouterr().out == f.read()


def test_every_graph_input_gets_a_row_and_params_are_exact(capsys):
    tok = mx.sym.var("tok")
    emb = mx.sym.Embedding(tok, input_dim=7, output_dim=10, name="emb")
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=10, no_bias=True, name="fc")
    with mx.name.NameManager():       # automatic names from 0, as in MXNet's fresh process
        plus = emb + fc
    mx.viz.print_summary(mx.sym.LinearRegressionOutput(plus, name="lro"),
                         shape={"tok": (2,), "x": (2, 5)})
    out = capsys.readouterr().out.splitlines()
    # columns end at 44%, 64%, 74% and 100% of 120 characters
    rows = [(line[:52].strip(), line[52:76].strip(), line[76:88].strip(), line[88:].strip())
            for line in out[3:-2] if set(line) not in ({"_"}, {"="})]
    assert rows == [("tok(null)", "", "0", ""), ("emb(Embedding)", "10", "70", "tok"),
                    ("x(null)", "5", "0", ""), ("fc(FullyConnected)", "10", "50", "x"),
                    ("_plus0(elemwise_add)", "10", "0", "emb"), ("", "", "", "fc"),
                    ("lro(LinearRegressionOutput)", "10", "0", "_plus0")]  # label: no param
    assert out[-2] == "Total params: 120"


def test_summary_refusals():
    with pytest.raises(TypeError, match="symbol must be a Symbol"):
        mx.viz.print_summary(mx.nd.ones(2))
    with pytest.raises(ValueError, match="positions must give"):
        mx.viz.print_summary(_cnn(), positions=(.5, 1.))
