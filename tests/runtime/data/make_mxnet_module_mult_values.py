"""Make mxnet_module_mult_values.npz: MXNet 1.9.1's Module parameters after 3 SGD updates
of a small net whose bias and BatchNorm beta get no weight decay (Module's param_idx2name
rule) and whose first weight has ``lr_mult=2`` and second ``wd_mult=3`` as symbol
attributes (the reference of tests/runtime/test_module.py).  Run with MXNet 1.9.1, as
make_mxnet_optimizer_values.py says."""
import os

import numpy as np


def net(sym):
    """The net, built with ``sym`` (MXNet's or ndrt's symbol module)."""
    x = sym.Variable("data")
    w1 = sym.Variable("fc1_weight", lr_mult=2.0)
    h = sym.FullyConnected(x, weight=w1, num_hidden=5, name="fc1")
    h = sym.BatchNorm(h, fix_gamma=False, name="bn")
    h = sym.Activation(h, act_type="relu")
    w2 = sym.Variable("fc2_weight", wd_mult=3.0)
    h = sym.FullyConnected(h, weight=w2, num_hidden=3, name="fc2")
    return sym.SoftmaxOutput(h, name="softmax")


def inputs():
    rng = np.random.RandomState(0)
    data = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    label = rng.randint(0, 3, 8).astype(np.float32)
    params = {"fc1_weight": rng.uniform(-0.5, 0.5, (5, 4)),
              "fc1_bias": rng.uniform(-0.5, 0.5, (5,)),
              "bn_gamma": rng.uniform(0.5, 1.5, (5,)),
              "bn_beta": rng.uniform(-0.5, 0.5, (5,)),
              "fc2_weight": rng.uniform(-0.5, 0.5, (3, 5)),
              "fc2_bias": rng.uniform(-0.5, 0.5, (3,))}
    return data, label, {k: v.astype(np.float32) for k, v in params.items()}


OPT = {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.1}

if __name__ == "__main__":
    np.bool = bool          # MXNet 1.9.1 still says np.bool
    import mxnet as mx
    data, label, params = inputs()
    mod = mx.mod.Module(net(mx.sym), data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=[("data", data.shape)], label_shapes=[("softmax_label", label.shape)])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in params.items()},
                    aux_params={"bn_moving_mean": mx.nd.zeros(5),
                                "bn_moving_var": mx.nd.ones(5)})
    mod.init_optimizer(optimizer="sgd", optimizer_params=OPT)
    batch = mx.io.DataBatch([mx.nd.array(data)], [mx.nd.array(label)])
    for _ in range(3):
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    args, _ = mod.get_params()
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "mxnet_module_mult_values.npz"),
             **{k: v.asnumpy() for k, v in args.items()})
    print(f"{len(args)} parameters written with MXNet {mx.__version__}")
