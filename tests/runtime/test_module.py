"""mx.mod.Module, mx.model and mx.callback: one SGD step against NumPy, fit/score/predict
on a separable problem, checkpoints in MXNet's files, MXNet 1.9.1's MLP fixture."""

import logging
import os
import random

import numpy as np
import pytest

import runtime as mx
from runtime import nd
from tests.runtime.data_makers import DATA, maker

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")


class Accuracy:
    """MXNet's metric interface, computed with NumPy."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.correct = self.total = 0

    def update(self, labels, preds):
        for label, pred in zip(labels, preds):
            self.correct += int((pred.asnumpy().argmax(1) == label.asnumpy()).sum())
            self.total += label.shape[0]

    def get_name_value(self):
        return [("accuracy", self.correct / max(self.total, 1))]


def _softmax_regression():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _separable(n=64, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.float32)
    return x, y


def test_one_step_matches_numpy_sgd():
    x, y = _separable(8)
    mod = mx.mod.Module(_softmax_regression())
    mod.bind(data_shapes=[("data", (8, 3))], label_shapes=[("softmax_label", (8,))])
    rng = np.random.RandomState(1)
    w, b = rng.normal(size=(2, 3)).astype(np.float32), np.zeros(2, np.float32)
    mod.init_params(arg_params={"fc_weight": nd.array(w), "fc_bias": nd.array(b)})
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    batch = mx.io.DataBatch([nd.array(x)], [nd.array(y)])
    mod.forward(batch, is_train=True)
    mod.backward()
    mod.update()
    z = x @ w.T + b
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    g = p.copy()
    g[np.arange(8), y.astype(int)] -= 1
    g /= 8                                   # rescale_grad = 1 / batch size
    arg, _ = mod.get_params()
    np.testing.assert_allclose(arg["fc_weight"].asnumpy(), w - 0.5 * g.T @ x, rtol=1e-5)
    np.testing.assert_allclose(arg["fc_bias"].asnumpy(), b - 0.5 * g.sum(0), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), p, rtol=1e-5)


def test_fit_score_predict_and_checkpoints(tmp_path, caplog):
    x, y = _separable(64)
    train = mx.io.NDArrayIter(x, y, batch_size=16, shuffle=False)
    mod = mx.mod.Module(_softmax_regression())
    prefix = str(tmp_path / "reg")
    speed = mx.callback.Speedometer(16, frequent=2)
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_metric=Accuracy(), optimizer="sgd",
                optimizer_params={"learning_rate": 1.0}, num_epoch=8,
                initializer=mx.init.Xavier(), batch_end_callback=speed,
                epoch_end_callback=mx.callback.do_checkpoint(prefix, period=4))
    assert speed.speed is not None and speed.speed > 0
    assert "Train-accuracy" in caplog.text
    (name, acc), = mod.score(train, Accuracy())
    assert name == "accuracy" and acc >= 0.9
    pred = mod.predict(train).asnumpy()
    arg, _ = mod.get_params()
    z = x @ arg["fc_weight"].asnumpy().T + arg["fc_bias"].asnumpy()
    np.testing.assert_allclose(pred, np.exp(z) / np.exp(z).sum(1, keepdims=True), rtol=1e-5)
    assert sorted(os.listdir(tmp_path)) == ["reg-0004.params", "reg-0008.params",
                                            "reg-symbol.json"]
    sym, arg8, aux8 = mx.model.load_checkpoint(prefix, 8)
    assert sym.tojson() == mod.symbol.tojson() and aux8 == {}
    np.testing.assert_array_equal(arg8["fc_weight"].asnumpy(), arg["fc_weight"].asnumpy())
    loaded = mx.mod.Module.load(prefix, 8)
    loaded.bind(data_shapes=train.provide_data, label_shapes=train.provide_label,
                for_training=False)
    np.testing.assert_array_equal(loaded.predict(train).asnumpy(), pred)


def test_mxnet_mlp_through_module():
    sym = mx.sym.load(os.path.join(FIX, "mlp-symbol.json"))
    mod = mx.mod.Module(sym)
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    params = {k: nd.array(np.load(os.path.join(FIX, f"mlp_{k}.npy")))
              for k in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")}
    mod.set_params(params, {})
    batch = mx.io.DataBatch([nd.array(np.load(os.path.join(FIX, "mlp_data.npy")))],
                            [nd.array(np.load(os.path.join(FIX, "mlp_softmax_label.npy")))])
    mod.forward(batch, is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               np.load(os.path.join(FIX, "mlp_out.npy")), rtol=1e-5)


def test_module_errors():
    sym = _softmax_regression()
    with pytest.raises(ValueError, match="data name 'x' is not an argument"):
        mx.mod.Module(sym, data_names=("x",))
    mod = mx.mod.Module(sym)
    with pytest.raises(RuntimeError, match="call bind\\(\\) first"):
        mod.init_params()
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))])
    with pytest.raises(ValueError, match="parameter 'fc_bias' is missing"):
        mod.init_params(arg_params={"fc_weight": nd.ones((2, 3))})
    # MXNet raises RuntimeError for a missing parameter, before it looks for extra ones
    with pytest.raises(RuntimeError, match="parameter 'fc_weight' is missing"):
        mod.init_params(arg_params={"other": nd.ones(1)})
    assert not mod.params_initialized
    with pytest.raises(ValueError, match="'other' is not a parameter"):
        mod.init_params(arg_params={"fc_weight": nd.ones((2, 3)), "fc_bias": nd.ones(2),
                                    "other": nd.ones(1)})
    mod.init_params()
    with pytest.raises(TypeError, match="metric interface"):
        mod.score(mx.io.NDArrayIter(np.ones((2, 3)), np.ones(2), batch_size=2), 3)
    with pytest.raises(ValueError, match=r"metric must be one of .* \(got 'nosuch'\)"):
        mod.score(mx.io.NDArrayIter(np.ones((2, 3)), np.ones(2), batch_size=2), "nosuch")
    with pytest.raises(NotImplementedError, match="kvstore"):
        mod.init_optimizer(kvstore="dist_sync")
    class DistStore(mx.kv.KVStoreBase):      # a dist store's type, without MPI
        type = "dist_sync"

    with pytest.raises(NotImplementedError, match="type 'dist_sync' is not supported"):
        mod.init_optimizer(kvstore=DistStore())


def test_fit_logs_like_mxnet_and_names_metrics(caplog):
    # MXNet 1.9.1: eval_metric defaults to 'acc' and may be a name; Speedometer logs
    # "Batch [first-last]" and clears only the local statistics, so the epoch's
    # Train- line is the whole epoch's (the global statistics).
    x, y = _separable(64)
    train = mx.io.NDArrayIter(x, y, batch_size=16, shuffle=False)
    mod = mx.mod.Module(_softmax_regression())
    metric = mx.metric.Accuracy()
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_metric=metric, num_epoch=2, initializer=mx.init.Xavier(),
                optimizer_params={"learning_rate": 0.5},
                batch_end_callback=mx.callback.Speedometer(16, frequent=2))
    batch_lines = [r.getMessage() for r in caplog.records if "Speed:" in r.getMessage()]
    assert [m.split("\t")[0] for m in batch_lines] == ["Epoch[0] Batch [0-2]",
                                                       "Epoch[1] Batch [0-2]"]
    assert metric.num_inst == 16 and metric.global_num_inst == 64    # batch 3; the epoch
    train_line = [r.getMessage() for r in caplog.records if "Train-" in r.getMessage()][-1]
    assert train_line == f"Epoch[1] Train-accuracy={metric.get_global()[1]:f}"
    caplog.clear()
    with caplog.at_level(logging.INFO):
        mx.mod.Module(_softmax_regression()).fit(train, num_epoch=1)
        (name, _), = mod.score(train, "acc")
    assert name == "accuracy" and "Epoch[0] Train-accuracy=" in caplog.text


SGD = {"learning_rate": 0.1, "momentum": 0.9}


def test_optimizer_states_round_trip_through_checkpoints(tmp_path, caplog):
    # MXNet 1.9.1: save_checkpoint(save_optimizer_states=True) adds prefix-%04d.states;
    # Module.load(load_optimizer_states=True) restores them in init_optimizer, so the
    # resumed run continues exactly as the uninterrupted one.  (Momentum: the states are
    # the updater's; as in MXNet they do not carry the optimizer's update counts.)
    x, y = _separable(32)
    batch = mx.io.DataBatch([nd.array(x)], [nd.array(y)])

    def make(mod):
        mod.bind(data_shapes=[("data", (32, 3))], label_shapes=[("softmax_label", (32,))])
        return mod

    mod = make(mx.mod.Module(_softmax_regression()))
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params=SGD)
    for _ in range(3):
        mod.forward_backward(batch)
        mod.update()
    prefix = str(tmp_path / "ck")
    with caplog.at_level(logging.INFO):
        mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    assert f'Saved checkpoint to "{prefix}-0003.params"' in caplog.text
    assert f'Saved optimizer state to "{prefix}-0003.states"' in caplog.text
    assert sorted(os.listdir(tmp_path)) == ["ck-0003.params", "ck-0003.states",
                                            "ck-symbol.json"]
    resumed = make(mx.mod.Module.load(prefix, 3, load_optimizer_states=True))
    resumed.init_params()
    resumed.init_optimizer(optimizer="sgd", optimizer_params=SGD)
    fresh = make(mx.mod.Module.load(prefix, 3))
    fresh.init_params()
    fresh.init_optimizer(optimizer="sgd", optimizer_params=SGD)
    for m in (mod, resumed, fresh):
        m.forward_backward(batch)
        m.update()
    want = mod.get_params()[0]["fc_weight"].asnumpy()
    np.testing.assert_array_equal(resumed.get_params()[0]["fc_weight"].asnumpy(), want)
    assert not np.array_equal(fresh.get_params()[0]["fc_weight"].asnumpy(), want)
    with pytest.raises(FileNotFoundError, match=r"ck-0007.states"):
        mx.mod.Module.load(prefix, 7, load_optimizer_states=True)
    bad = tmp_path / "bad.states"
    bad.write_bytes(b"not a pickle")
    before = resumed.get_params()[0]["fc_weight"].asnumpy()
    with pytest.raises(ValueError, match="must hold states written by"):
        resumed.load_optimizer_states(str(bad))
    np.testing.assert_array_equal(resumed.get_params()[0]["fc_weight"].asnumpy(), before)


def test_exec_group_exposes_the_bound_arrays():
    # MXNet's sparse examples read mod._exec_group.param_names / param_arrays
    mod = mx.mod.Module(_softmax_regression())
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4,))])
    mod.init_params()
    group = mod._exec_group
    assert group.param_names == ["fc_weight", "fc_bias"]
    weight = group.param_arrays[group.param_names.index("fc_weight")]
    assert isinstance(weight, list) and len(weight) == 1
    weight[0][:] = 2.0                         # the executor's own array, not a copy
    assert (mod.get_params()[0]["fc_weight"].asnumpy() == 2.0).all()
    assert group.grad_arrays[0][0].shape == (2, 3) and group.aux_arrays == []


def test_exec_group_class_has_mxnets_module_path():
    from runtime.module.executor_group import DataParallelExecutorGroup
    mod = mx.mod.Module(_softmax_regression())
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4,))])
    assert isinstance(mod._exec_group, DataParallelExecutorGroup)


def test_bind_takes_list_pairs_and_the_dtype_of_a_data_desc():
    # MXNet's DataDesc.get_list takes [name, shape] lists too, and its executor group
    # binds with each DataDesc's dtype
    sym = mx.sym.Activation(mx.sym.Variable("data"), act_type="relu")
    mod = mx.mod.Module(sym, ("data",), None)
    mod.bind(data_shapes=[["data", (2, 3)]])
    mod.init_params()
    mod.forward(mx.io.DataBatch([nd.array([[-1, 2, 3], [4, -5, 6]])]), is_train=False)
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), [[0, 2, 3], [4, 0, 6]])
    assert mod.get_outputs()[0].dtype == np.float32
    half = mx.mod.Module(sym, ("data",), None)
    half.bind(data_shapes=[mx.io.DataDesc("data", (2, 3), np.float16)])
    half.init_params()
    half.forward(mx.io.DataBatch([nd.ones((2, 3), dtype=np.float16)]), is_train=True)
    half.backward([nd.ones((2, 3), dtype=np.float16)])
    assert half.get_outputs()[0].dtype == np.float16


@pytest.mark.filterwarnings("ignore::runtime.StorageFallbackWarning")  # dense x rsp dot
def test_update_on_a_kvstore_and_rows_pulled_by_prepare():
    # MXNet's Module with a KVStore object: the store holds the parameters and runs the
    # optimizer; dense parameters come back with every update (the same values as the
    # updates applied here), row_sparse ones only by the rows prepare() pulls.
    x, y = _separable(8)
    batch = mx.io.DataBatch([nd.array(x)], [nd.array(y)])
    data = mx.sym.var("data")
    weight = mx.sym.var("fc_weight", shape=(2, 3), stype="row_sparse")
    out = mx.sym.SoftmaxOutput(mx.sym.dot(data, weight, transpose_b=True), name="softmax")
    mods = []
    for kv in (None, mx.kv.create("local")):
        mod = mx.mod.Module(out)
        mod.bind(data_shapes=[("data", (8, 3))], label_shapes=[("softmax_label", (8,))])
        assert mod._exec_group.param_arrays[0][0].stype == "row_sparse"
        mod.init_params(arg_params={"fc_weight": nd.array(
            np.arange(6).reshape(2, 3) / 10).tostype("row_sparse")})
        mod.init_optimizer(kvstore=kv, optimizer="sgd",
                           optimizer_params={"learning_rate": 0.5})
        mods.append(mod)
    here, store = mods
    for mod in mods:
        mod.forward_backward(batch)
        mod.update()
    stale = store._exec_group.param_arrays[0][0].asnumpy()
    np.testing.assert_array_equal(stale, np.float32(np.arange(6).reshape(2, 3) / 10))  # not pulled
    store.prepare(batch, sparse_row_id_fn=lambda b: {"fc_weight": nd.array([1])})
    now = store._exec_group.param_arrays[0][0]
    assert now.indices.asnumpy().tolist() == [1]          # only the rows asked for
    want = here.get_params()[0]["fc_weight"].asnumpy()
    np.testing.assert_allclose(now.asnumpy()[1], want[1], rtol=1e-6)
    np.testing.assert_allclose(store.get_params()[0]["fc_weight"].asnumpy(), want,
                               rtol=1e-6)                 # get_params pulls every row
    with pytest.raises(ValueError, match="names 'nope', which is not a parameter"):
        store.prepare(batch, sparse_row_id_fn=lambda b: {"nope": nd.array([0])})


def test_prepare_without_a_kvstore_has_nothing_to_pull(caplog):
    mod = mx.mod.Module(_softmax_regression())
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("softmax_label", (4,))])
    mod.init_params()
    mod.init_optimizer()
    with caplog.at_level(logging.WARNING):
        mod.prepare(None, sparse_row_id_fn=lambda batch: {"fc_weight": nd.array([0])})
    assert "sparse_row_id_fn has nothing to pull" in caplog.text


def test_init_params_honours_a_variables_own_initializer():
    # MXNet's Module hands the initializer an InitDesc carrying the symbol's attributes:
    # a variable's __init__ wins over the global initializer and over the name rules
    data = mx.sym.Variable("data")
    w = mx.sym.Variable("w", shape=(3, 1), init=mx.init.Constant(2.0))
    gamma = mx.sym.Variable("scale_gamma", shape=(1,), init=mx.init.Zero())
    out = mx.sym.broadcast_mul(mx.sym.dot(data, w), gamma)
    mod = mx.mod.Module(out, label_names=None)
    mod.bind(data_shapes=[("data", (2, 3))])
    mod.init_params(initializer=mx.init.Uniform(0.5))
    args, _ = mod.get_params()
    np.testing.assert_array_equal(args["w"].asnumpy(), np.full((3, 1), 2.0, np.float32))
    np.testing.assert_array_equal(args["scale_gamma"].asnumpy(), np.zeros(1, np.float32))


def test_prelu_gamma_of_a_module_starts_at_quarter():
    data = mx.sym.Variable("data")
    mod = mx.mod.Module(mx.sym.LeakyReLU(data, act_type="prelu"), label_names=None)
    mod.bind(data_shapes=[("data", (4, 5))])
    mod.init_params()
    (gamma,) = mod.get_params()[0].values()
    np.testing.assert_array_equal(gamma.asnumpy(), np.full(5, 0.25, np.float32))


# -- MXNet's multipliers (tests/runtime/data/mxnet_module_mult_values.npz, written by
# make_mxnet_module_mult_values.py there with MXNet 1.9.1) ---------------------------------

def _mult_fixture():
    return (maker("make_mxnet_module_mult_values"),
            dict(np.load(DATA / "mxnet_module_mult_values.npz")))


def _mult_module(optimizer="sgd"):
    maker, ref = _mult_fixture()
    data, label, params = maker.inputs()
    mod = mx.mod.Module(maker.net(mx.sym), data_names=["data"],
                        label_names=["softmax_label"])
    mod.bind(data_shapes=[("data", data.shape)], label_shapes=[("softmax_label", label.shape)])
    mod.init_params(arg_params={k: nd.array(v) for k, v in params.items()},
                    aux_params={"bn_moving_mean": nd.zeros(5), "bn_moving_var": nd.ones(5)})
    if optimizer == "sgd":
        mod.init_optimizer(optimizer="sgd", optimizer_params=maker.OPT)
    else:
        mod.init_optimizer(optimizer=optimizer)
    batch = mx.io.DataBatch([nd.array(data)], [nd.array(label)])
    for _ in range(3):
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    return mod, ref, params


def test_module_weight_decay_and_multipliers_as_mxnet():
    # no weight decay on names ending neither in _weight nor _gamma (fc biases, bn_beta);
    # lr_mult/wd_mult from the symbol's variable attributes: MXNet 1.9.1's parameters
    mod, ref, _ = _mult_module()
    args, _ = mod.get_params()
    assert sorted(args) == sorted(ref)
    for k, v in ref.items():
        np.testing.assert_allclose(args[k].asnumpy(), v, rtol=1e-5, atol=1e-6, err_msg=k)
    opt = mod._optimizer
    assert opt.wd_mult == {"fc1_bias": 0.0, "bn_beta": 0.0, "fc2_bias": 0.0,
                           "fc2_weight": 3.0}
    assert opt.lr_mult == {"fc1_weight": 2.0}


def test_module_given_an_optimizer_keeps_its_multipliers():
    # as MXNet: an Optimizer made by the caller gets Module's names, not its wd rule
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1)
    mod, ref, params = _mult_module(opt)
    assert opt.idx2name == dict(enumerate(mod._param_names))
    assert opt.wd_mult == {} and opt.lr_mult == {}
    args, _ = mod.get_params()
    assert not np.allclose(args["fc1_bias"].asnumpy(), ref["fc1_bias"])   # decayed here


def test_optimizer_multipliers_by_name_and_index():
    opt = mx.optimizer.SGD(learning_rate=1.0, wd=0.5,
                           param_idx2name={0: "a_weight", 1: "a_bias", 2: "bn_gamma"})
    assert opt.wd_mult == {"a_bias": 0.0}
    opt.set_lr_mult({"a_weight": 3.0, 2: 0.5})
    assert opt._lr_wd(0) == (3.0, 0.5) and opt._lr_wd(1) == (1.0, 0.0)
    assert opt._lr_wd(2) == (0.5, 0.5) and opt._lr_wd(7) == (1.0, 0.5)
    assert opt._get_lr(0) == 3.0 and opt._get_wd(1) == 0.0
    with pytest.raises(TypeError, match="param_idx2name must be a dict"):
        mx.optimizer.SGD(param_idx2name=["a_weight"])


def _regression(num_hidden=3):
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=num_hidden, name="fc")
    return mx.sym.LinearRegressionOutput(fc, mx.sym.var("lin_label"), name="lin")


def _trained(contexts, kvstore="local", work_load_list=None, steps=2):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(8, 5)).astype(np.float32)
    y = rng.normal(size=(8, 3)).astype(np.float32)
    w0 = rng.normal(size=(3, 5)).astype(np.float32)
    mod = mx.mod.Module(_regression(), label_names=("lin_label",), context=contexts,
                        work_load_list=work_load_list)
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("lin_label", (8, 3))])
    mod.init_params(arg_params={"fc_weight": nd.array(w0), "fc_bias": nd.zeros(3)})
    mod.init_optimizer(kvstore=kvstore, optimizer_params={"learning_rate": 0.1,
                                                          "momentum": 0.9})
    batch = mx.io.DataBatch(data=[nd.array(x)], label=[nd.array(y)])
    for _ in range(steps):
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    return mod, x, y, w0


def test_several_contexts_split_the_batch_and_train_as_one():
    one, x, _, _ = _trained([mx.cpu(0)])
    two, _, _, _ = _trained([mx.cpu(0), mx.cpu(1)], work_load_list=[1, 3])
    group = two._exec_group
    assert [s.stop - s.start for s in group.slices] == [2, 6]
    assert group.contexts == [mx.cpu(0), mx.cpu(1)]
    assert [w.context for w in group.param_arrays[0]] == [mx.cpu(0), mx.cpu(1)]
    # the summed gradients of the slices are the whole batch's: the same training
    for a, b in zip(one.get_params()[0].values(), two.get_params()[0].values()):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    for w in group.param_arrays[0]:
        np.testing.assert_allclose(w.asnumpy(), one.get_params()[0]["fc_weight"].asnumpy(),
                                   rtol=1e-5, atol=1e-6)
    merged = two.get_outputs()[0]
    np.testing.assert_allclose(merged.asnumpy(), one.get_outputs()[0].asnumpy(),
                               rtol=1e-5, atol=1e-6)
    parts = two.get_outputs(merge_multi_context=False)[0]
    assert [(p.shape, p.context) for p in parts] == [((2, 3), mx.cpu(0)),
                                                      ((6, 3), mx.cpu(1))]
    assert [len(o) for o in one.get_outputs(merge_multi_context=False)] == [1]
    assert two.output_shapes == [("lin_output", (8, 3))]


def test_several_contexts_without_a_store_update_each_copy_with_its_own_gradient():
    mod, x, y, w0 = _trained([mx.cpu(0), mx.cpu(1)], kvstore=None, steps=1)
    # LinearRegressionOutput's gradient of the weight on a slice: (out - y)^T x over the
    # outputs per sample (3), times rescale_grad 1 / batch (8)
    for (w, piece) in zip(mod._exec_group.param_arrays[0], mod._exec_group.slices):
        xs, ys = x[piece], y[piece]
        grad = (xs @ w0.T - ys).T @ xs / 3 / 8
        np.testing.assert_allclose(w.asnumpy(), w0 - 0.1 * grad, rtol=1e-5, atol=1e-6)


def test_several_contexts_follow_the_layout_and_reshape():
    act = mx.sym.Activation(mx.sym.var("data"), act_type="relu", __layout__="TNC")
    mod = mx.mod.Module(act, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (3, 8, 7), layout="TNC")])
    mod.init_params()
    x = np.random.default_rng(1).normal(size=(3, 8, 7)).astype(np.float32)
    mod.forward(mx.io.DataBatch(data=[nd.array(x)], label=None), is_train=False)
    assert [p.shape for p in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 4, 7)] * 2
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.maximum(x, 0))
    reg, _, _, _ = _trained([mx.cpu(0), mx.cpu(1)], steps=1)
    before = reg.get_params()[0]["fc_weight"].asnumpy()
    reg.reshape(data_shapes=[("data", (4, 5))], label_shapes=[("lin_label", (4, 3))])
    assert [s.stop - s.start for s in reg._exec_group.slices] == [2, 2]
    np.testing.assert_array_equal(reg.get_params()[0]["fc_weight"].asnumpy(), before)


def test_several_contexts_refuse_bad_arguments():
    sym = _regression()
    with pytest.raises(ValueError, match="context must not repeat a Context"):
        mx.mod.Module(sym, context=[mx.cpu(0), mx.cpu(0)])
    with pytest.raises(ValueError, match="work_load_list must hold one number > 0 per "
                       "context"):
        mx.mod.Module(sym, context=[mx.cpu(0), mx.cpu(1)], work_load_list=[1])
    mod = mx.mod.Module(sym, label_names=("lin_label",), context=[mx.cpu(0), mx.cpu(1)])
    with pytest.raises(ValueError, match="a batch of 1 cannot be split over 2 contexts"):
        mod.bind(data_shapes=[("data", (1, 5))], label_shapes=[("lin_label", (1, 3))])
    assert not mod.binded



@pytest.mark.parametrize("contexts", [[mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]])
def test_a_batch_of_another_size_binds_the_module_again(contexts):
    # MXNet's Module.forward reshapes for a batch of another shape (its linear regression
    # tutorial evaluates a module trained in batches of 10 on batches of 1), keeping the
    # parameters and the optimizer
    mod, _, _, _ = _trained(contexts, steps=1)
    w = mod.get_params()[0]["fc_weight"].asnumpy()
    b = mod.get_params()[0]["fc_bias"].asnumpy()
    x6 = np.arange(30, dtype=np.float32).reshape(6, 5) / 30
    small = mx.io.DataBatch(data=[nd.array(x6)], label=[nd.ones((6, 3))])
    mod.forward(small, is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), x6 @ w.T + b, rtol=1e-5)
    assert mod.data_shapes[0].shape == (6, 5)
    mod.forward(small, is_train=True)
    mod.backward()
    mod.update()            # the optimizer carried over: momentum from the first step
    assert not np.allclose(mod.get_params()[0]["fc_weight"].asnumpy(), w)
    unlabelled = mx.io.DataBatch(data=[nd.array(x6[:2])])
    mod.forward(unlabelled, is_train=False)
    assert mod.get_outputs()[0].shape == (2, 3)


def test_iter_predict_yields_outputs_without_padding():
    x, y = _separable(10)
    it = mx.io.NDArrayIter(x, y, batch_size=4)          # 4, 4, 2 + 2 padding
    mod = mx.mod.Module(_softmax_regression())
    mod.bind(it.provide_data, it.provide_label, for_training=False)
    rng = np.random.RandomState(2)
    w, b = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=2).astype(np.float32)
    mod.set_params({"fc_weight": nd.array(w), "fc_bias": nd.array(b)}, {})
    z = x @ w.T + b
    want = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    seen = []
    for outputs, nbatch, batch in mod.iter_predict(it):
        assert batch.pad == (2 if nbatch == 2 else 0)
        seen.append(outputs[0].asnumpy().copy())
    assert [s.shape[0] for s in seen] == [4, 4, 2]
    np.testing.assert_allclose(np.concatenate(seen), want, rtol=1e-5)
    assert len(list(mod.iter_predict(it, num_batch=1))) == 1
    np.testing.assert_allclose(mod.predict(it).asnumpy(), want, rtol=1e-5)


def _two_modules():
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc1"),
                          act_type="relu")
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2,
                                                     name="fc2"), name="softmax")
    seq = mx.mod.SequentialModule()
    assert seq.add(mx.mod.Module(h, label_names=[])) is seq
    return seq.add(mx.mod.Module(out), take_labels=True, auto_wiring=True)


def test_sequential_module_step_matches_numpy():
    x, y = _separable(8)
    rng = np.random.RandomState(3)
    p = {"fc1_weight": rng.normal(size=(4, 3)), "fc1_bias": rng.normal(size=4),
         "fc2_weight": rng.normal(size=(2, 4)), "fc2_bias": rng.normal(size=2)}
    p = {k: v.astype(np.float32) for k, v in p.items()}
    seq = _two_modules()
    seq.bind(data_shapes=[("data", (8, 3))], label_shapes=[("softmax_label", (8,))])
    seq.init_params(arg_params={k: nd.array(v) for k, v in p.items()})
    seq.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    batch = mx.io.DataBatch([nd.array(x)], [nd.array(y)])
    seq.forward(batch, is_train=True)
    seq.backward()
    seq.update()
    # NumPy: relu(x W1' + b1) W2' + b2, softmax cross-entropy, SGD with rescale 1/batch
    z1 = x @ p["fc1_weight"].T + p["fc1_bias"]
    h = np.maximum(z1, 0)
    z2 = h @ p["fc2_weight"].T + p["fc2_bias"]
    prob = np.exp(z2 - z2.max(1, keepdims=True))
    prob /= prob.sum(1, keepdims=True)
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), prob, rtol=1e-5)
    d2 = (prob - np.eye(2)[y.astype(int)]) / 8
    d1 = (d2 @ p["fc2_weight"]) * (z1 > 0)
    want = {"fc2_weight": p["fc2_weight"] - 0.5 * d2.T @ h,
            "fc2_bias": p["fc2_bias"] - 0.5 * d2.sum(0),
            "fc1_weight": p["fc1_weight"] - 0.5 * d1.T @ x,
            "fc1_bias": p["fc1_bias"] - 0.5 * d1.sum(0)}
    arg, aux = seq.get_params()
    assert sorted(arg) == sorted(want) and aux == {}
    for k, v in want.items():
        np.testing.assert_allclose(arg[k].asnumpy(), v, rtol=1e-5, atol=1e-6)


def test_sequential_module_fits_and_predicts(caplog):
    x, y = _separable(64)
    train = mx.io.NDArrayIter(x, y, batch_size=16)
    seq = _two_modules()
    with caplog.at_level(logging.INFO):
        seq.fit(train, optimizer_params={"learning_rate": 0.5}, num_epoch=10,
                initializer=mx.init.Xavier())
    assert "Epoch[9] Train-accuracy" in caplog.text
    assert seq.output_shapes == [("softmax_output", (16, 2))]
    (name, acc), = seq.score(train, "acc")
    assert name == "accuracy" and acc >= 0.9
    pred = seq.predict(train).asnumpy()
    assert pred.shape == (64, 2)
    assert (pred.argmax(1) == y).mean() == acc


def test_sequential_module_refuses_bad_use():
    seq = mx.mod.SequentialModule()
    with pytest.raises(RuntimeError, match="bind: add a module first"):
        seq.bind([("data", (2, 3))])
    with pytest.raises(TypeError, match="module must be a module"):
        seq.add("fc")
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    with pytest.raises(ValueError, match="unknown flag 'take_label'"):
        seq.add(mx.mod.Module(sym, label_names=[]), take_label=True)
    seq.add(mx.mod.Module(sym, label_names=[])).add(mx.mod.Module(sym, label_names=[]))
    with pytest.raises(ValueError, match=r"module 1 takes the data inputs \['data'\] \(got "
                                         r"\['fc_output'\]; add it with auto_wiring=True"):
        seq.bind([("data", (2, 3))])
    assert not seq.binded and not seq._modules[0].binded
    seq = mx.mod.SequentialModule().add(mx.mod.Module(sym, label_names=[]))
    seq.add(mx.mod.Module(sym, label_names=[]), auto_wiring=True)
    seq.bind([("data", (2, 3))])
    with pytest.raises(ValueError, match="duplicated parameter name 'fc_weight'"):
        seq.init_params()
    seq = _two_modules()
    seq.bind([("data", (2, 3))], [("softmax_label", (2,))])
    with pytest.raises(ValueError, match="'w' is not a parameter of the modules"):
        seq.init_params(arg_params={"w": nd.ones(1)}, allow_missing=True)
    with pytest.raises(RuntimeError, match="call init_params"):
        seq.forward(mx.io.DataBatch([nd.ones((2, 3))], [nd.ones(2)]))


def test_feedforward_fits_predicts_scores_and_round_trips(tmp_path, caplog):
    x, y = _separable(64)
    with pytest.warns(DeprecationWarning, match="FeedForward has been deprecated"):
        model = mx.model.FeedForward(_softmax_regression(), num_epoch=10,
                                     numpy_batch_size=16, learning_rate=0.5,
                                     initializer=mx.init.Xavier())
    with caplog.at_level(logging.INFO):
        model.fit(x, y, eval_data=(x, y))
    assert "Start training with [cpu(0)]" in caplog.text       # MXNet's first line
    assert "Epoch[9] Train-accuracy" in caplog.text
    assert "Epoch[9] Validation-accuracy" in caplog.text
    w, b = model.arg_params["fc_weight"].asnumpy(), model.arg_params["fc_bias"].asnumpy()
    z = x @ w.T + b
    want = np.exp(z - z.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    pred = model.predict(x)
    assert isinstance(pred, np.ndarray) and pred.shape == (64, 2)
    np.testing.assert_allclose(pred, want, rtol=1e-5)
    acc = model.score(mx.io.NDArrayIter(x, y, batch_size=16))
    assert acc == (want.argmax(1) == y).mean() and acc >= 0.9
    out, data, label = model.predict(x[:10], return_data=True)
    np.testing.assert_array_equal(data, x[:10])
    np.testing.assert_array_equal(label, np.zeros(10))
    model.save(str(tmp_path / "ff"))
    assert sorted(os.listdir(tmp_path)) == ["ff-0010.params", "ff-symbol.json"]
    with pytest.warns(DeprecationWarning):
        again = mx.model.FeedForward.load(str(tmp_path / "ff"), 10)
    assert again.begin_epoch == 10
    np.testing.assert_array_equal(again.predict(x), pred)


def test_feedforward_trains_a_symbol_generator_on_buckets(tmp_path, caplog):
    # MXNet's old bucketing examples: FeedForward(symbol=sym_gen) on an iterator whose
    # batches carry bucket_key; here runs t, t+1, t+2 ... (tokens 1..9) of lengths 3 to
    # 8, padded to buckets 4 and 8, and a per-token model that learns the next token
    rng = np.random.default_rng(0)
    sentences = []
    for _ in range(400):
        start, n = rng.integers(1, 10), rng.integers(3, 9)
        sentences.append([(start + k - 1) % 9 + 1 for k in range(n)])
    train = mx.rnn.BucketSentenceIter(sentences, 20, buckets=[4, 8], invalid_label=0)
    built = []

    def sym_gen(seq_len):
        built.append(seq_len)
        embed = mx.sym.Embedding(mx.sym.var("data"), input_dim=10, output_dim=8,
                                 name="embed")
        pred = mx.sym.FullyConnected(mx.sym.Reshape(embed, shape=(-1, 8)), num_hidden=10,
                                     name="pred")
        label = mx.sym.Reshape(mx.sym.var("softmax_label"), shape=(-1,))
        return mx.sym.SoftmaxOutput(pred, label, use_ignore=True, ignore_label=0,
                                    name="softmax")         # padding teaches nothing

    mx.random.seed(0)
    np.random.seed(0)                   # the iterator's shuffles: NumPy's and Python's
    random.seed(0)
    with pytest.warns(DeprecationWarning):
        model = mx.model.FeedForward(sym_gen, num_epoch=6, learning_rate=0.05, momentum=0.9,
                                     initializer=mx.init.Xavier())
    with caplog.at_level(logging.INFO):
        model.fit(train, eval_metric=mx.metric.Perplexity(0))
    assert "Epoch[5] Train-perplexity" in caplog.text
    assert built[0] == 8 and set(built) == {4, 8}      # the default bucket first
    assert model.symbol.list_arguments() == ["data", "embed_weight", "pred_weight",
                                             "pred_bias", "softmax_label"]
    args = {k: v.asnumpy() for k, v in model.arg_params.items()}
    logits = args["embed_weight"] @ args["pred_weight"].T + args["pred_bias"]
    np.testing.assert_array_equal(logits[1:9].argmax(1), np.arange(2, 10))
    model.save(str(tmp_path / "ff"))
    assert sorted(os.listdir(tmp_path)) == ["ff-0006.params", "ff-symbol.json"]


def test_feedforward_refuses_bad_use():
    with pytest.warns(DeprecationWarning):
        with pytest.raises(TypeError, match="symbol must be a Symbol or a symbol generator"):
            mx.model.FeedForward(42)
        with pytest.raises(RuntimeError, match="has a symbol once fit"):
            mx.model.FeedForward(lambda key: None, num_epoch=1).save("never")
        with pytest.raises(NotImplementedError, match="epoch_size must be None"):
            mx.model.FeedForward(_softmax_regression(), epoch_size=3)
        model = mx.model.FeedForward(_softmax_regression())
    x, y = _separable(8)
    with pytest.raises(RuntimeError, match="FeedForward.predict: no parameters"):
        model.predict(x)
    with pytest.raises(ValueError, match="num_epoch must be given"):
        model.fit(x, y)
    model.num_epoch = 1
    with pytest.raises(ValueError, match="y must hold one label per sample of X"):
        model.fit(x, y[:5])
    with pytest.raises(TypeError, match="X must be a DataIter"):
        model.fit([[1, 2, 3]], y)
    assert model.arg_params is None


def test_fit_resets_the_iterator_after_each_epoch_and_refuses_an_exhausted_one():
    x, y = _separable(32)
    train = mx.io.NDArrayIter(x, y, batch_size=8)
    mod = mx.mod.Module(_softmax_regression())
    seen = []
    mod.fit(train, num_epoch=2, batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)))
    assert seen == [(e, b) for e in range(2) for b in range(4)]
    assert len(list(train)) == 4          # left at its start, as MXNet's fit leaves it
    arg_before = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    with pytest.raises(ValueError, match=r"fit: train_data must yield batches \(epoch 0 got "
                                         r"none; reset\(\) an exhausted iterator"):
        mod.fit(train, num_epoch=1)
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(v.asnumpy(), arg_before[k])


def _bag_of_words(seq_len):
    """An embedding summed over a sequence of ``seq_len`` tokens, then a classifier: the
    same parameters for every length."""
    embed = mx.sym.Embedding(mx.sym.var("data"), input_dim=6, output_dim=3, name="embed")
    fc = mx.sym.FullyConnected(mx.sym.sum(embed, axis=1), num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax"), ("data",), ("softmax_label",)


def _bag_of_words_step(p, state, tokens, labels, lr=0.5, momentum=0.9):
    """One SGD-with-momentum step of _bag_of_words in NumPy (MXNet's rule: state =
    momentum * state - lr * grad; weight += state; gradients / batch)."""
    n = len(labels)
    h = p["embed_weight"][tokens].sum(1)
    z = h @ p["fc_weight"].T + p["fc_bias"]
    prob = np.exp(z - z.max(1, keepdims=True))
    prob /= prob.sum(1, keepdims=True)
    dz = (prob - np.eye(2)[labels]) / n
    dh = dz @ p["fc_weight"]
    grads = {"fc_weight": dz.T @ h, "fc_bias": dz.sum(0), "embed_weight": np.zeros((6, 3))}
    for row, d in zip(tokens, dh):
        for t in row:
            grads["embed_weight"][t] += d
    for k, g in grads.items():
        state[k] = momentum * state.get(k, 0) - lr * g
        p[k] = p[k] + state[k]


def test_bucketing_module_shares_parameters_and_optimizer_states_across_buckets():
    rng = np.random.RandomState(4)
    p = {"embed_weight": rng.normal(size=(6, 3)), "fc_weight": rng.normal(size=(2, 3)),
         "fc_bias": rng.normal(size=2)}
    p = {k: v.astype(np.float32) for k, v in p.items()}
    mod = mx.mod.BucketingModule(_bag_of_words, default_bucket_key=5)
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    mod.init_params(arg_params={k: nd.array(v) for k, v in p.items()})
    mod.init_optimizer(optimizer="sgd",
                       optimizer_params={"learning_rate": 0.5, "momentum": 0.9})
    want, state = {k: v.astype(np.float64) for k, v in p.items()}, {}
    for seq_len in (5, 3, 5, 3):
        tokens = rng.randint(0, 6, (4, seq_len))
        labels = rng.randint(0, 2, 4)
        batch = mx.io.DataBatch([nd.array(tokens)], [nd.array(labels)], bucket_key=seq_len,
                                provide_data=[("data", (4, seq_len))],
                                provide_label=[("softmax_label", (4,))])
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
        _bag_of_words_step(want, state, tokens, labels)
    assert sorted(mod._buckets) == [3, 5]
    arg, _ = mod.get_params()
    for k, v in want.items():
        np.testing.assert_allclose(arg[k].asnumpy(), v, rtol=1e-4, atol=1e-5)
    # the two buckets' modules hold the same arrays, not copies
    assert mod._buckets[3]._exec.arg_dict["fc_weight"] is \
        mod._buckets[5]._exec.arg_dict["fc_weight"]


def test_bucketing_module_refuses_bad_use():
    with pytest.raises(TypeError, match="sym_gen must be callable"):
        mx.mod.BucketingModule("gen", default_bucket_key=3)
    with pytest.raises(ValueError, match="default_bucket_key must be given"):
        mx.mod.BucketingModule(_bag_of_words)
    mod = mx.mod.BucketingModule(_bag_of_words, default_bucket_key=5)
    with pytest.raises(RuntimeError, match="forward: call bind"):
        mod.forward(mx.io.DataBatch([nd.ones((2, 5))], [nd.ones(2)]))
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="other")
    shared = mx.mod.Module(_bag_of_words(5)[0])
    shared.bind([("data", (2, 5))], [("softmax_label", (2,))])
    shared.init_params()
    with pytest.raises(ValueError, match="shared_module must hold every parameter"):
        mx.mod.Module(sym, label_names=[]).bind([("data", (2, 5))], shared_module=shared)


class _BucketIter(mx.io.DataIter):
    """Batches of token sequences of two lengths (MXNet's bucketing protocol: each batch
    names its bucket_key and shapes); label 1 when most tokens are below 3."""

    def __init__(self, n_batches, seed):
        super().__init__(batch_size=8)
        rng = np.random.RandomState(seed)
        self.batches = []
        for i in range(n_batches):
            length = (3, 5)[i % 2]
            tokens = rng.randint(0, 6, (8, length))
            labels = ((tokens < 3).sum(1) * 2 > length).astype(np.float32)
            self.batches.append(mx.io.DataBatch(
                [nd.array(tokens)], [nd.array(labels)], bucket_key=length,
                provide_data=[("data", (8, length))], provide_label=[("softmax_label", (8,))]))
        self.default_bucket_key = 5
        self._provide_data = [mx.io.DataDesc("data", (8, 5))]
        self._provide_label = [mx.io.DataDesc("softmax_label", (8,))]
        self.cursor = 0

    def reset(self):
        self.cursor = 0

    def next(self):
        if self.cursor == len(self.batches):
            raise StopIteration
        self.cursor += 1
        return self.batches[self.cursor - 1]


def test_bucketing_module_fits_over_buckets():
    train = _BucketIter(40, seed=0)
    mod = mx.mod.BucketingModule(_bag_of_words, default_bucket_key=train.default_bucket_key)
    mod.fit(train, num_epoch=8, optimizer_params={"learning_rate": 0.2, "momentum": 0.9},
            initializer=mx.init.Xavier())
    assert sorted(mod._buckets) == [3, 5]
    (name, acc), = mod.score(_BucketIter(20, seed=1), "acc")
    assert name == "accuracy" and acc >= 0.9


def test_progress_bar_validation_log_and_module_checkpoint(tmp_path, caplog):
    x, y = _separable(64)
    train = mx.io.NDArrayIter(x, y, batch_size=16, shuffle=False)
    mod = mx.mod.Module(_softmax_regression())
    prefix = str(tmp_path / "m")
    with caplog.at_level(logging.INFO):
        mod.fit(train, eval_data=train, eval_metric=Accuracy(), optimizer="sgd",
                optimizer_params={"learning_rate": 1.0}, num_epoch=2,
                initializer=mx.init.Xavier(),
                batch_end_callback=mx.callback.ProgressBar(total=4, length=8),
                eval_end_callback=mx.callback.LogValidationMetricsCallback(),
                epoch_end_callback=mx.callback.module_checkpoint(
                    mod, prefix, period=2, save_optimizer_states=True))
    # nbatch counts 0..3 in an epoch: 0/4 -> no '=', 2/4 -> half the bar, 3/4 -> 75%
    assert "[--------] 0%" in caplog.text
    assert "[====----] 50%" in caplog.text
    assert "[======--] 75%" in caplog.text
    assert "Epoch[1] Validation-accuracy=" in caplog.text
    assert sorted(os.listdir(tmp_path)) == ["m-0002.params", "m-0002.states", "m-symbol.json"]
    with pytest.raises(ValueError, match=r"^ProgressBar: total must be an int >= 1 \(got 0\)"):
        mx.callback.ProgressBar(0)


def test_python_loss_module_passes_scores_and_its_gradient_through_a_sequence():
    # MXNet's example/module/python_loss.py: an MLP's scores into a PythonLossModule
    # whose grad_func is the loss's gradient; here squared error to the one-hot labels
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2], np.float32)
    seen = []

    def grad_func(scores, labels):
        seen.append((scores.shape, labels.asnumpy().tolist()))
        return scores.asnumpy() - np.eye(3)[labels.asnumpy().astype(int)]

    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    loss = mx.mod.PythonLossModule(grad_func=grad_func)
    assert loss.output_names == ["pyloss_output"] and loss.get_params() == ({}, {})
    seq = mx.mod.SequentialModule().add(mx.mod.Module(fc, label_names=None))
    seq.add(loss, take_labels=True, auto_wiring=True)
    seq.bind([("data", (6, 4))], [("softmax_label", (6,))])
    seq.init_params(mx.init.Xavier())
    batch = mx.io.DataBatch([nd.array(x)], [nd.array(y)])
    seq.forward(batch, is_train=True)
    seq.backward()
    w, b = (seq.get_params()[0][k].asnumpy() for k in ("fc_weight", "fc_bias"))
    scores = x @ w.T + b
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), scores, rtol=1e-5)
    assert seen == [((6, 3), y.tolist())]
    g = scores - np.eye(3)[y.astype(int)]
    np.testing.assert_allclose(loss.get_input_grads()[0].asnumpy(), g, rtol=1e-5)
    grads = {k: v.asnumpy() for k, v in seq._modules[0]._exec.grad_dict.items()
             if v is not None}
    np.testing.assert_allclose(grads["fc_weight"], g.T @ x, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["fc_bias"], g.sum(0), rtol=1e-4, atol=1e-6)
    metric = mx.metric.Accuracy()
    seq.update_metric(metric, [nd.array(y)])
    assert metric.get()[1] == (scores.argmax(1) == y).mean()


def test_python_loss_module_refuses_bad_use():
    with pytest.raises(ValueError, match="one name each"):
        mx.mod.PythonLossModule(data_names=("a", "b"))
    with pytest.raises(TypeError, match="grad_func must be callable"):
        mx.mod.PythonLossModule(grad_func=3)
    loss = mx.mod.PythonLossModule()
    with pytest.raises(ValueError, match=r"data_shapes must name \['data'\]"):
        loss.bind([("x", (2, 3))])
    loss.bind([("data", (2, 3))], [("softmax_label", (2,))])
    assert loss.output_shapes == [("pyloss_output", (2, 3))]
    loss.forward(mx.io.DataBatch([nd.ones((2, 3))], [nd.zeros(2)]))
    with pytest.raises(NotImplementedError, match="give grad_func"):
        loss.backward()
    with pytest.raises(ValueError, match="takes no out_grads"):
        loss.backward([nd.ones((2, 3))])


def test_state_names_are_carried_not_trained():
    # MXNet's Module(state_names=...): states are arguments bound as zeros, without
    # gradient, skipped by init_params and the optimizer, set by set_states
    data, state = mx.sym.var("data"), mx.sym.var("h", shape=(2, 3))
    nxt = mx.sym.tanh(mx.sym.FullyConnected(data, num_hidden=3, name="fc") + state)
    net = mx.sym.Group([mx.sym.BlockGrad(nxt), mx.sym.MakeLoss(mx.sym.sum(nxt))])
    mod = mx.mod.Module(net, label_names=None, state_names=["h"])
    mod.bind([("data", (2, 4))])
    mod.init_params(mx.init.One())
    assert sorted(mod.get_params()[0]) == ["fc_bias", "fc_weight"]
    assert mod._exec_group.state_names == ["h"]
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), np.zeros((2, 3)))
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    x = np.arange(8, dtype=np.float32).reshape(2, 4) / 10
    mod.set_states(value=0.5)
    h = np.full((2, 3), 0.5)
    for _ in range(2):                       # each step starts from the last one's state
        mod.forward(mx.io.DataBatch([nd.array(x)]), is_train=True)
        w, b = (mod.get_params()[0][k].asnumpy() for k in ("fc_weight", "fc_bias"))
        h = np.tanh(x @ w.T + b + h)
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), h, rtol=1e-5)
        mod.backward()
        mod.update()
        mod.set_states(states=mod.get_outputs(merge_multi_context=False)[:1])
    np.testing.assert_allclose(mod.get_states()[0].asnumpy(), h, rtol=1e-5)
    with pytest.raises(ValueError, match="exactly one of states and value"):
        mod.set_states()
    with pytest.raises(ValueError, match=r"state 'h' must have shape \(2, 3\)"):
        mod.set_states(states=[nd.ones((3, 3))])
    with pytest.raises(ValueError, match="state name 'c' is not an argument"):
        mx.mod.Module(net, label_names=None, state_names=["c"])
