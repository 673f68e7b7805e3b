"""Reference values from MXNet 1.9.1 for the tests of Gluon's layers, metrics, losses
and recurrent cells, and of the contrib box operators and Correlation.

The cases (class, constructor arguments, input shapes) are plain data that both sides
read: run this file with an interpreter where ``import mxnet`` is MXNet 1.9.1 (the
recipe is in the peers' README) to rewrite ``data/mxnet191.npz``::

    python tests/runtime/mxnet_fixtures.py tests/runtime/data/mxnet191.npz

(with MXNet's default MKL-DNN kernels: the native ones lack 3-D transposed convolution).

For each layer case it stores the input, the parameters (in registration order), the
output of a forward under ``autograd.record()`` (training mode), the gradients of
``sum(out * head)`` with respect to the input and every trained parameter, and the
parameters after the step (BatchNorm's running statistics); the other groups store their
inputs, outputs (and gradients where MXNet has them), all drawn from NumPy generators
seeded by the case's key; the tests read the inputs back from the file.
"""

import sys

import numpy as np

# (key, layer class, constructor kwargs, input shape); running variances are drawn
# positive by ``inputs``
LAYER_CASES = [
    ("conv1d", "Conv1D", dict(channels=4, kernel_size=3, padding=1, strides=2), (2, 3, 9)),
    ("conv2d", "Conv2D", dict(channels=4, kernel_size=(3, 2), padding=(1, 0), dilation=(1, 2),
                              activation="relu"), (2, 3, 7, 8)),
    ("conv2d_groups", "Conv2D", dict(channels=6, kernel_size=3, groups=3, use_bias=False,
                                     strides=2), (2, 3, 7, 7)),
    ("conv2d_nhwc", "Conv2D", dict(channels=5, kernel_size=3, layout="NHWC", padding=1),
     (2, 6, 5, 3)),
    ("conv3d", "Conv3D", dict(channels=2, kernel_size=2, strides=(1, 2, 1)), (1, 3, 4, 5, 4)),
    ("deconv1d", "Conv1DTranspose", dict(channels=3, kernel_size=3, strides=2,
                                         output_padding=1), (2, 4, 5)),
    ("deconv2d", "Conv2DTranspose", dict(channels=4, kernel_size=(3, 2), strides=2, padding=1,
                                         groups=2, in_channels=2), (2, 2, 4, 5)),
    ("deconv3d", "Conv3DTranspose", dict(channels=2, kernel_size=2, strides=2), (1, 3, 2, 3, 2)),
    ("maxpool1d", "MaxPool1D", dict(pool_size=3, strides=2, padding=1), (2, 3, 9)),
    ("maxpool2d_ceil", "MaxPool2D", dict(pool_size=3, strides=2, ceil_mode=True), (2, 3, 8, 8)),
    ("maxpool2d_nhwc", "MaxPool2D", dict(layout="NHWC"), (2, 6, 6, 3)),
    ("maxpool3d", "MaxPool3D", dict(pool_size=2), (1, 2, 4, 4, 4)),
    ("avgpool1d", "AvgPool1D", dict(pool_size=3, strides=1, padding=1), (2, 3, 7)),
    ("avgpool2d_nopad", "AvgPool2D", dict(pool_size=3, strides=2, padding=1,
                                          count_include_pad=False), (2, 3, 7, 7)),
    ("avgpool3d", "AvgPool3D", dict(pool_size=2, strides=1), (1, 2, 3, 3, 3)),
    ("gmaxpool1d", "GlobalMaxPool1D", {}, (2, 3, 7)),
    ("gavgpool2d", "GlobalAvgPool2D", {}, (2, 3, 5, 4)),
    ("gmaxpool3d", "GlobalMaxPool3D", {}, (1, 2, 3, 3, 2)),
    ("reflpad2d", "ReflectionPad2D", dict(padding=2), (2, 3, 4, 5)),
    ("batchnorm", "BatchNorm", dict(momentum=0.8), (4, 3, 2, 2)),
    ("batchnorm_last", "BatchNorm", dict(axis=-1, center=False, in_channels=3), (5, 2, 3)),
    ("batchnorm_noscale", "BatchNorm", dict(scale=False, epsilon=1e-3), (6, 4)),
    ("instancenorm", "InstanceNorm", dict(scale=True), (2, 3, 4, 5)),
    ("layernorm", "LayerNorm", dict(), (3, 4, 6)),
    ("layernorm_axis1", "LayerNorm", dict(axis=1), (3, 4, 2)),
    ("groupnorm", "GroupNorm", dict(num_groups=2), (2, 4, 3, 3)),
    ("leakyrelu", "LeakyReLU", dict(alpha=0.1), (3, 5)),
    ("prelu", "PReLU", dict(in_channels=3), (2, 3, 4)),
    ("elu", "ELU", dict(alpha=0.7), (3, 5)),
    ("selu", "SELU", {}, (3, 5)),
    ("gelu", "GELU", {}, (3, 5)),
    ("swish", "Swish", dict(beta=1.5), (3, 5)),
    ("dense_noflat", "Dense", dict(units=3, flatten=False, activation="tanh"), (2, 4, 5)),
]


def inputs(key, shape, param_shapes):
    """The seeded input and parameter values of case ``key`` (params: a list of
    (shape, kind) with kind 'var' for positive running variances)."""
    rng = np.random.default_rng(sum(map(ord, key)))
    x = rng.standard_normal(shape).astype(np.float32)
    params = []
    for pshape, kind in param_shapes:
        if kind == "var":
            params.append(rng.uniform(0.5, 1.5, pshape).astype(np.float32))
        else:
            params.append((rng.standard_normal(pshape) * 0.5).astype(np.float32))
    return x, params


def _to_first(a):
    return np.moveaxis(a, -1, 1)


def _to_last(a):
    return np.moveaxis(a, 1, -1)


def _run_mxnet(out_path):
    """MXNet 1.9.1's CPU operators take channel-first layouts only, so a channel-last
    case runs the channel-first layer on transposed data and weight: the reference of
    the layout's meaning is then MXNet's weight shape for that layout and the transposes
    of this function."""
    import mxnet as mx
    from mxnet import autograd, gluon

    arrays = {}
    for key, cls, kwargs, shape in LAYER_CASES:
        last = kwargs.get("layout", "NC")[1] != "C"
        shapes = [p.shape for p in getattr(gluon.nn, cls)(**kwargs).collect_params().values()]
        if last:
            kwargs = dict(kwargs, layout=kwargs["layout"][0] + "C" + kwargs["layout"][1:-1])
        layer = getattr(gluon.nn, cls)(**kwargs)
        layer.initialize()
        x_shape = (shape[0], shape[-1]) + shape[1:-1] if last else shape
        layer(mx.nd.zeros(x_shape))               # completes deferred shapes
        params = list(layer.collect_params().values())
        kinds = [(tuple(p.shape) if 0 in s or not last else s,
                  "var" if p.name.endswith("running_var") else "")
                 for p, s in zip(params, shapes)]
        x, values = inputs(key, shape, kinds)
        for p, v in zip(params, values):
            p.set_data(mx.nd.array(_to_first(v) if last and v.ndim > 1 else v))
        xa = mx.nd.array(_to_first(x) if last else x)
        xa.attach_grad()
        with autograd.record():
            out = layer(xa)
        fix = _to_last if last else (lambda a: a)
        head = np.random.default_rng(7).standard_normal(fix(out.asnumpy()).shape)
        head = head.astype(np.float32)
        out.backward(mx.nd.array(_to_first(head) if last else head))
        arrays[f"{key}/x"] = x
        arrays[f"{key}/out"] = fix(out.asnumpy())
        arrays[f"{key}/head"] = head
        arrays[f"{key}/dx"] = fix(xa.grad.asnumpy())
        for i, (p, v) in enumerate(zip(params, values)):
            after = p.data().asnumpy()
            arrays[f"{key}/p{i}"] = v
            arrays[f"{key}/after{i}"] = fix(after) if last and after.ndim > 1 else after
            if p.grad_req != "null":
                g = p.grad().asnumpy()
                arrays[f"{key}/dp{i}"] = fix(g) if last and g.ndim > 1 else g
        arrays[f"{key}/names"] = np.array([p.name for p in params] or [""])
    _metrics(mx, arrays)
    _losses(mx, arrays)
    _cells(mx, arrays)
    _contrib(mx, arrays)
    _correlation(mx, arrays)
    _detection(mx, arrays)
    _target(mx, arrays)
    np.savez(out_path, **arrays)


# (key, metric name for create, kwargs, label kind, pred kind, updates, batch size);
# kinds: 'class' (ints in [0, classes)), 'binary', 'prob' (rows summing to 1), 'score',
# 'real'; a reset_local() comes after the second update
METRIC_CASES = [
    ("acc", "acc", {}, "class", "score", 3, 8),
    ("acc_classes", "accuracy", {}, "class", "class", 3, 8),
    ("acc_axis0", "acc", dict(axis=0), "class_t", "score_t", 2, 6),
    ("topk", "top_k_accuracy", dict(top_k=3), "class", "score", 3, 8),
    ("f1_macro", "f1", {}, "binary", "prob2", 3, 10),
    ("f1_micro", "f1", dict(average="micro"), "binary", "prob2", 3, 10),
    ("mcc_macro", "mcc", {}, "binary", "prob2", 3, 10),
    ("mcc_micro", "mcc", dict(average="micro"), "binary", "prob2", 3, 10),
    ("mae", "mae", {}, "real", "real", 3, 6),
    ("mse", "mse", {}, "real", "real", 3, 6),
    ("rmse", "rmse", {}, "real", "real", 3, 6),
    ("ce", "ce", {}, "class", "prob", 3, 8),
    ("nll", "nll_loss", {}, "class", "prob", 3, 8),
    ("perplexity", "perplexity", dict(ignore_label=None), "class", "prob", 3, 8),
    ("perplexity_ignore", "perplexity", dict(ignore_label=2), "class", "prob", 3, 8),
    ("pearsonr", "pearsonr", {}, "real", "real", 3, 12),
    ("pearsonr_micro", "pearsonr", dict(average="micro"), "real", "real", 3, 12),
    ("pcc", "pcc", {}, "class", "score", 3, 12),
    ("loss", "loss", {}, "real", "real", 3, 5),
]


def metric_data(kind, n, rng, classes=5):
    """One label or prediction array of ``kind`` for ``n`` samples."""
    if kind == "class":
        return rng.integers(0, classes, n).astype(np.float32)
    if kind == "class_t":
        return rng.integers(0, 3, classes).astype(np.float32)
    if kind == "binary":
        return rng.integers(0, 2, n).astype(np.float32)
    if kind in ("score", "prob", "prob2"):
        k = 2 if kind == "prob2" else classes
        x = rng.random((n, k)).astype(np.float32)
        return x / x.sum(axis=1, keepdims=True) if kind != "score" else x
    if kind == "score_t":
        return rng.random((3, classes)).astype(np.float32)
    return rng.standard_normal(n).astype(np.float32)


def _metrics(mx, arrays):
    for key, name, kwargs, lkind, pkind, updates, n in METRIC_CASES:
        rng = np.random.default_rng(sum(map(ord, key)))
        metric = mx.metric.create(name, **kwargs)
        arrays[f"metric/{key}/name"] = np.array(str(metric.get()[0]))
        for i in range(updates):
            label, pred = metric_data(lkind, n, rng), metric_data(pkind, n, rng)
            arrays[f"metric/{key}/label{i}"] = label
            arrays[f"metric/{key}/pred{i}"] = pred
            metric.update([mx.nd.array(label)], [mx.nd.array(pred)])
            arrays[f"metric/{key}/get{i}"] = np.float64(metric.get()[1])
            arrays[f"metric/{key}/global{i}"] = np.float64(metric.get_global()[1])
            if i == 1:
                metric.reset_local()


# (key, loss class, kwargs, [input kinds], shape, sample_weight shape or None); the
# gradient is taken with respect to the first input
LOSS_CASES = [
    ("softmax_ce", "SoftmaxCrossEntropyLoss", {}, ["real", "class"], (4, 5), (4, 1)),
    ("softmax_ce_dense", "SoftmaxCELoss", dict(sparse_label=False), ["real", "prob"],
     (4, 5), None),
    ("l2", "L2Loss", dict(weight=0.7), ["real", "real"], (4, 3), (4, 1)),
    ("l1", "L1Loss", {}, ["real", "real"], (4, 3, 2), None),
    ("sigmoid_bce", "SigmoidBCELoss", {}, ["real", "binary"], (4, 3), (4, 1)),
    ("sigmoid_bce_prob", "SigmoidBinaryCrossEntropyLoss", dict(from_sigmoid=True),
     ["unit", "binary"], (4, 3), None),
    ("kldiv", "KLDivLoss", {}, ["logprob", "prob"], (4, 5), (4, 1)),
    ("kldiv_logits", "KLDivLoss", dict(from_logits=False, weight=2.0), ["real", "prob"],
     (3, 4), None),
    ("huber", "HuberLoss", dict(rho=0.5), ["real", "real"], (4, 3), (4, 1)),
    ("hinge", "HingeLoss", dict(margin=0.8), ["real", "signed"], (4, 3), None),
    ("sqhinge", "SquaredHingeLoss", {}, ["real", "signed"], (4, 3), (4, 1)),
    ("logistic", "LogisticLoss", {}, ["real", "signed"], (4, 3), None),
    ("logistic_binary", "LogisticLoss", dict(label_format="binary"), ["real", "binary"],
     (4, 3), (4, 1)),
    ("triplet", "TripletLoss", dict(margin=0.5), ["real", "real", "real"], (4, 3), None),
    ("poisson", "PoissonNLLLoss", {}, ["real", "count"], (4, 3), None),
    ("poisson_rate", "PoissonNLLLoss", dict(from_logits=False, compute_full=True),
     ["pos", "count1"], (4, 3), (4, 1)),
    ("cosine", "CosineEmbeddingLoss", dict(margin=0.2), ["real", "real", "signed_row"],
     (4, 3), None),
    ("sdml", "SDMLLoss", {}, ["real", "real"], (4, 3), None),
    ("batch_axis1", "L2Loss", dict(batch_axis=1), ["real", "real"], (3, 4, 2), None),
]


def loss_data(kind, shape, rng):
    """One input of ``kind`` and ``shape`` for a loss case."""
    if kind == "class":
        return rng.integers(0, shape[-1], shape[:-1]).astype(np.float32)
    if kind in ("prob", "logprob"):
        x = rng.random(shape) + 0.1
        x = x / x.sum(axis=-1, keepdims=True)
        return (np.log(x) if kind == "logprob" else x).astype(np.float32)
    if kind == "binary":
        return rng.integers(0, 2, shape).astype(np.float32)
    if kind == "signed":
        return (rng.integers(0, 2, shape) * 2 - 1).astype(np.float32)
    if kind == "signed_row":
        return (rng.integers(0, 2, shape[0]) * 2 - 1).astype(np.float32)
    if kind == "unit":
        return rng.uniform(0.05, 0.95, shape).astype(np.float32)
    if kind == "pos":
        return rng.uniform(0.2, 3.0, shape).astype(np.float32)
    if kind == "count":
        return rng.integers(0, 5, shape).astype(np.float32)
    if kind == "count1":          # >= 1: MXNet's full Poisson loss is NaN at 0
        return rng.integers(1, 6, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def _losses(mx, arrays):
    from mxnet import autograd, gluon
    for key, cls, kwargs, kinds, shape, sw_shape in LOSS_CASES:
        rng = np.random.default_rng(sum(map(ord, key)))
        loss = getattr(gluon.loss, cls)(**kwargs)
        values = [loss_data(k, shape, rng) for k in kinds]
        args = [mx.nd.array(v) for v in values]
        if sw_shape is not None:
            sw = rng.uniform(0.5, 2.0, sw_shape).astype(np.float32)
            arrays[f"loss/{key}/sw"] = sw
            args.append(mx.nd.array(sw))
        args[0].attach_grad()
        try:
            with autograd.record():
                out = loss(*args)
            out.backward()
            arrays[f"loss/{key}/grad"] = args[0].grad.asnumpy()
        except mx.base.MXNetError:     # compute_full's in-place product cannot record
            out = loss(*args)
        for i, v in enumerate(values):
            arrays[f"loss/{key}/in{i}"] = v
        arrays[f"loss/{key}/out"] = out.asnumpy()


# (key, cell expression over ``rnn``, layout, merge_outputs, valid lengths or None,
# input shape in that layout); the expression is evaluated on both sides
CELL_CASES = [
    ("rnn_relu", "rnn.RNNCell(4, activation='relu')", "NTC", True, None, (2, 5, 3)),
    ("rnn_tanh_list", "rnn.RNNCell(4)", "TNC", False, None, (5, 2, 3)),
    ("lstm", "rnn.LSTMCell(4, input_size=3)", "NTC", True, None, (2, 5, 3)),
    ("lstm_valid", "rnn.LSTMCell(4)", "NTC", True, [3, 5], (2, 5, 3)),
    ("gru", "rnn.GRUCell(4)", "TNC", None, None, (5, 2, 3)),
    ("gru_valid_list", "rnn.GRUCell(3)", "TNC", False, [2, 4, 1], (4, 3, 2)),
    ("sequential", "_seq(rnn.SequentialRNNCell(), rnn.LSTMCell(4), rnn.DropoutCell(0.5), "
     "rnn.GRUCell(3))", "NTC", True, None, (2, 4, 3)),
    ("hybrid_sequential_valid", "_seq(rnn.HybridSequentialRNNCell(), rnn.RNNCell(3), "
     "rnn.LSTMCell(3))", "NTC", True, [4, 2], (2, 4, 3)),
    ("bidirectional", "rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.GRUCell(2))", "NTC", True,
     None, (2, 4, 3)),
    ("bidirectional_valid", "rnn.BidirectionalCell(rnn.GRUCell(3), rnn.RNNCell(3))", "TNC",
     True, [2, 4], (4, 2, 3)),
    ("residual", "rnn.ResidualCell(rnn.GRUCell(3))", "NTC", True, None, (2, 4, 3)),
    ("residual_valid_list", "rnn.ResidualCell(rnn.LSTMCell(3))", "NTC", False, [1, 3],
     (2, 3, 3)),
    ("zoneout_predict", "rnn.ZoneoutCell(rnn.LSTMCell(3), 0.5, 0.5)", "NTC", True, None,
     (2, 3, 3)),
]


def make_cell(rnn, expr):
    """The cell of a case's expression, built from the ``rnn`` module given."""
    def _seq(seq, *cells):
        for cell in cells:
            seq.add(cell)
        return seq
    return eval(expr, {"rnn": rnn, "_seq": _seq})     # constant expressions of CELL_CASES


def _cells(mx, arrays):
    from mxnet import autograd, gluon
    for key, expr, layout, merge, valid, shape in CELL_CASES:
        rng = np.random.default_rng(sum(map(ord, key)))
        cell = make_cell(gluon.rnn, expr)
        cell.initialize()
        x = rng.standard_normal(shape).astype(np.float32)
        length = shape[layout.find("T")]
        cell.unroll(length, mx.nd.array(x), layout=layout, merge_outputs=True)  # shapes
        params = list(cell.collect_params().values())
        values = [(rng.standard_normal(p.shape) * 0.5).astype(np.float32) for p in params]
        for p, v in zip(params, values):
            p.set_data(mx.nd.array(v))
        xa = mx.nd.array(x)
        xa.attach_grad()
        vl = None if valid is None else mx.nd.array(valid)
        # predict mode: DropoutCell and ZoneoutCell pass their values unchanged
        with autograd.record(train_mode=False):
            outputs, states = cell.unroll(length, xa, layout=layout, merge_outputs=merge,
                                          valid_length=vl)
            outs = [outputs] if isinstance(outputs, mx.nd.NDArray) else list(outputs)
            heads = [rng.standard_normal(o.shape).astype(np.float32) for o in outs]
            total = sum((o * mx.nd.array(h)).sum() for o, h in zip(outs, heads))
            total = total + sum((s * (i + 1)).sum() for i, s in enumerate(states))
        total.backward()
        arrays[f"cell/{key}/x"] = x
        arrays[f"cell/{key}/names"] = np.array([p.name for p in params])
        for i, v in enumerate(values):
            arrays[f"cell/{key}/p{i}"] = v
            arrays[f"cell/{key}/dp{i}"] = params[i].grad().asnumpy()
        arrays[f"cell/{key}/nout"] = np.array(len(outs))
        for i, (o, h) in enumerate(zip(outs, heads)):
            arrays[f"cell/{key}/out{i}"] = o.asnumpy()
            arrays[f"cell/{key}/head{i}"] = h
        for i, st in enumerate(states):
            arrays[f"cell/{key}/state{i}"] = st.asnumpy()
        arrays[f"cell/{key}/dx"] = xa.grad.asnumpy()


# contrib box operators: (key, operator, kwargs, input builder name)
CONTRIB_CASES = [
    ("prior", "MultiBoxPrior", dict(sizes=(0.5, 0.25), ratios=(1, 2, 0.5)), "feature"),
    ("prior_clip", "MultiBoxPrior", dict(sizes=(0.9,), ratios=(1, 3), clip=True,
                                         steps=(0.3, 0.2), offsets=(0.2, 0.7)), "feature"),
    ("match", "bipartite_matching", dict(threshold=0.3), "scores"),
    ("match_ascend_topk", "bipartite_matching", dict(threshold=0.8, is_ascend=True, topk=2),
     "scores"),
    ("encode", "box_encode", {}, "encode"),
    ("decode_center", "box_decode", dict(std0=0.1, std1=0.1, std2=0.2, std3=0.2),
     "decode"),
    ("decode_corner_clip", "box_decode", dict(format="corner", clip=0.5), "decode"),
]


def contrib_inputs(kind, rng):
    """The input arrays of a contrib case."""
    if kind == "feature":
        return [np.zeros((2, 3, 4, 5), np.float32)]
    if kind == "scores":
        return [rng.random((2, 5, 4)).astype(np.float32)]
    if kind == "encode":
        samples = rng.choice([-1.0, 0.0, 1.0], (2, 6)).astype(np.float32)
        matches = rng.integers(0, 3, (2, 6)).astype(np.float32)
        lo = rng.uniform(0, 5, (2, 6, 2))
        anchors = np.concatenate([lo, lo + rng.uniform(1, 4, (2, 6, 2))], -1)
        lo = rng.uniform(0, 5, (2, 3, 2))
        refs = np.concatenate([lo, lo + rng.uniform(1, 4, (2, 3, 2))], -1)
        means = np.array([0.1, -0.1, 0.0, 0.2], np.float32)
        stds = np.array([0.1, 0.1, 0.2, 0.3], np.float32)
        return [samples, matches, anchors.astype(np.float32), refs.astype(np.float32),
                means, stds]
    lo = rng.uniform(0, 5, (1, 6, 2))
    anchors = np.concatenate([lo, lo + rng.uniform(1, 4, (1, 6, 2))], -1)
    return [rng.standard_normal((2, 6, 4)).astype(np.float32), anchors.astype(np.float32)]


def _op_cases(mx, arrays, tag, cases, inputs_of, op_of):
    """For each case: its inputs ``inputs_of(case, rng)`` (seeded by the key), the
    outputs of MXNet's ``nd.contrib.<op_of(case)>(*inputs, **case[kwargs])``, stored as
    ``<tag>/<key>/in<i>`` and ``<tag>/<key>/out<i>``."""
    for case in cases:
        key, kwargs = case[0], case[2] if tag == "contrib" else case[1]
        ins = inputs_of(case, np.random.default_rng(sum(map(ord, key))))
        out = getattr(mx.nd.contrib, op_of(case))(*[mx.nd.array(a) for a in ins], **kwargs)
        for i, a in enumerate(ins):
            arrays[f"{tag}/{key}/in{i}"] = a
        for i, o in enumerate(out if isinstance(out, (list, tuple)) else [out]):
            arrays[f"{tag}/{key}/out{i}"] = o.asnumpy()


def _contrib(mx, arrays):
    _op_cases(mx, arrays, "contrib", CONTRIB_CASES, lambda c, rng: contrib_inputs(c[3], rng),
              lambda c: c[1])


# (key, Correlation kwargs, data shape): outputs and both gradients
CORRELATION_CASES = [
    ("default", {}, (2, 3, 5, 6)),
    ("wide", dict(kernel_size=3, max_displacement=2, stride1=1, stride2=1, pad_size=2),
     (1, 2, 6, 5)),
    ("strided", dict(kernel_size=1, max_displacement=4, stride1=2, stride2=2, pad_size=4),
     (2, 2, 7, 8)),
    ("subtract", dict(kernel_size=3, max_displacement=1, pad_size=1, is_multiply=False),
     (1, 3, 4, 4)),
]


def _correlation(mx, arrays):
    from mxnet import autograd
    for key, kwargs, shape in CORRELATION_CASES:
        rng = np.random.default_rng(sum(map(ord, key)))
        a = rng.standard_normal(shape).astype(np.float32)
        b = rng.standard_normal(shape).astype(np.float32)
        xa, xb = mx.nd.array(a), mx.nd.array(b)
        xa.attach_grad()
        xb.attach_grad()
        with autograd.record():
            out = mx.nd.Correlation(xa, xb, **kwargs)
        head = rng.standard_normal(out.shape).astype(np.float32)
        out.backward(mx.nd.array(head))
        for name, v in (("a", a), ("b", b), ("out", out.asnumpy()), ("head", head),
                        ("da", xa.grad.asnumpy()), ("db", xb.grad.asnumpy())):
            arrays[f"corr/{key}/{name}"] = v


# (key, MultiBoxDetection kwargs, classes, anchors per batch)
DETECTION_CASES = [
    ("default", {}, 4, 12),
    ("threshold_topk", dict(threshold=0.3, nms_topk=4, nms_threshold=0.3), 3, 12),
    ("force_noclip", dict(force_suppress=True, clip=False, variances=(0.2, 0.2, 0.1, 0.1),
                          nms_threshold=0.4), 3, 10),
    ("background2", dict(background_id=2, threshold=0.2), 4, 10),
    ("no_nms", dict(nms_threshold=0.0), 3, 8),
]


def detection_inputs(classes, anchors, rng):
    """(cls_prob (2, classes, anchors), loc_pred (2, anchors * 4), anchor (1, anchors, 4))
    with anchors clustered so that suppression happens."""
    logits = rng.standard_normal((2, classes, anchors)) * 2
    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    loc = rng.standard_normal((2, anchors * 4)) * 0.5
    centre = rng.uniform(0.2, 0.8, (anchors // 2, 2)).repeat(2, axis=0)
    centre = centre + rng.normal(0, 0.03, centre.shape)
    size = rng.uniform(0.1, 0.4, (anchors, 2))
    anchor = np.concatenate([centre - size / 2, centre + size / 2], axis=1)[None]
    return [prob.astype(np.float32), loc.astype(np.float32), anchor.astype(np.float32)]


def _detection(mx, arrays):
    _op_cases(mx, arrays, "det", DETECTION_CASES,
              lambda c, rng: detection_inputs(c[2], c[3], rng), lambda c: "MultiBoxDetection")


# (key, MultiBoxTarget kwargs, anchors, ground truths per image (the rest padded -1))
TARGET_CASES = [
    ("default", {}, 12, (2, 3)),
    ("mining", dict(negative_mining_ratio=2, negative_mining_thresh=0.4,
                    overlap_threshold=0.3), 16, (1, 2)),
    ("variances_minneg", dict(variances=(0.2, 0.2, 0.4, 0.4), negative_mining_ratio=1,
                              minimum_negative_samples=3, ignore_label=-2), 12, (3, 1)),
]


def target_inputs(anchors, gts, rng):
    """(anchor (1, A, 4), label (2, 4, 5), cls_pred (2, 3, A))."""
    centre = rng.uniform(0.2, 0.8, (anchors, 2))
    size = rng.uniform(0.1, 0.4, (anchors, 2))
    anchor = np.concatenate([centre - size / 2, centre + size / 2], axis=1)[None]
    label = np.full((2, 4, 5), -1.0)
    for b, n in enumerate(gts):
        pick = rng.choice(anchors, n, replace=False)
        box = anchor[0, pick] + rng.normal(0, 0.03, (n, 4))
        label[b, :n] = np.concatenate([rng.integers(0, 2, (n, 1)), box], axis=1)
    cls = rng.standard_normal((2, 3, anchors))
    return [anchor.astype(np.float32), label.astype(np.float32), cls.astype(np.float32)]


def _target(mx, arrays):
    _op_cases(mx, arrays, "target", TARGET_CASES,
              lambda c, rng: target_inputs(c[2], c[3], rng), lambda c: "MultiBoxTarget")


if __name__ == "__main__":
    _run_mxnet(sys.argv[1])
