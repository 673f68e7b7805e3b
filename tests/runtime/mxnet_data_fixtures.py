"""Writes the MXNet 1.9.1 reference files that the data, image and model-zoo tests read
(tests/runtime/data/mxnet191_*): run it with an interpreter that has mxnet 1.9.1
(``../shared/bench/peers/README.md``):

    /root/peers/mxvenv/bin/python tests/runtime/mxnet_data_fixtures.py

- ``mxnet191_records.rec`` / ``.idx``: :data:`RECORDS` written by MXIndexedRecordIO
  under keys 0..n-1 (records holding the magic number exercise the split parts; the
  last two are image-record headers made by ``recordio.pack``).
- ``mxnet191_image.npz``: a random uint8 image, ``mx.image.imresize`` of it for every
  interpolation, ``resize_short``, ``center_crop``, and Gluon vision transforms.
- ``mxnet191_model_zoo.json.gz``: for every model of ``gluon.model_zoo.vision``, its
  parameter names and shapes (structural, as ``save_parameters`` writes them), its
  prefixed parameter names, its parameter count, and for the models of FORWARD the output
  of a forward pass (inference) with param_values() on forward_input().
"""

import gzip
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
_MAGIC = struct.pack("<I", 0xCED7230A)


def records(pack):
    """The records of the RecordIO fixture; ``pack`` is ``recordio.pack`` (MXNet's or
    ndrt's) for the two image-record headers."""
    return [b"", b"a", b"abcd", b"hello world", _MAGIC, b"xy" + _MAGIC + b"zw",
            b"abcd" + _MAGIC + b"efgh" + _MAGIC, _MAGIC + _MAGIC + b"12345",
            pack((0, 3.5, 7, 0), b"payload"), pack((0, [1.0, 2.0, 3.0], 8, 9), b"p2")]


IMAGE_SIZES = [(7, 5), (29, 23), (17, 6), (40, 13), (8, 6)]
# Models run forward (inference) with param_values() on forward_input(side).
FORWARD = {"resnet18_v1": 32, "resnet50_v2": 32, "mobilenet0.25": 32,
           "mobilenetv2_0.25": 32, "squeezenet1.1": 224, "densenet121": 224,
           "inceptionv3": 299, "alexnet": 224, "vgg11_bn": 32}


def param_values(key, shape, i):
    """Deterministic values for the ``i``-th parameter (structural name ``key``) of a
    model: small, with batch-norm scales and variances near 1."""
    n = int(np.prod(shape))
    v = 0.05 * np.sin(np.arange(n, dtype=np.float64) * 0.37 + i)
    if key.endswith(("running_var", "gamma")):
        v = 1.0 + np.abs(v)
    return v.astype(np.float32).reshape(shape)


def forward_input(side):
    return (0.5 * np.cos(np.arange(3 * side * side) * 0.11)).astype(np.float32).reshape(
        1, 3, side, side)
# The names gluon.model_zoo.vision.get_model knows in MXNet 1.9.1.
MODELS = ([f"resnet{d}_v{v}" for v in (1, 2) for d in (18, 34, 50, 101, 152)]
          + [f"vgg{d}{bn}" for bn in ("", "_bn") for d in (11, 13, 16, 19)]
          + ["alexnet"] + [f"densenet{d}" for d in (121, 161, 169, 201)]
          + ["squeezenet1.0", "squeezenet1.1", "inceptionv3"]
          + [f"mobilenet{m}" for m in ("1.0", "0.75", "0.5", "0.25")]
          + [f"mobilenetv2_{m}" for m in ("1.0", "0.75", "0.5", "0.25")])


def main():
    import mxnet as mx
    from mxnet.gluon.data.vision import transforms as T

    w = mx.recordio.MXIndexedRecordIO(os.path.join(HERE, "mxnet191_records.idx"),
                                      os.path.join(HERE, "mxnet191_records.rec"), "w")
    for i, r in enumerate(records(lambda h, s: mx.recordio.pack(mx.recordio.IRHeader(*h), s))):
        w.write_idx(i, r)
    w.close()

    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (13, 17, 3), dtype=np.uint8)
    imgf = (rng.random((13, 17, 3)) * 255).astype(np.float32)
    x = mx.nd.array(img, dtype=np.uint8)
    out = {"img": img, "imgf": imgf}
    for (wd, ht) in IMAGE_SIZES:
        for interp in range(5):
            out[f"resize_{wd}_{ht}_{interp}"] = mx.image.imresize(x, wd, ht,
                                                                  interp=interp).asnumpy()
    out["resize_short"] = mx.image.resize_short(x, 8).asnumpy()
    out["center_crop"] = mx.image.center_crop(x, (9, 7))[0].asnumpy()
    out["T_resize_f"] = T.Resize((9, 7))(mx.nd.array(imgf)).asnumpy()
    out["T_resize_keep"] = T.Resize(8, keep_ratio=True)(x).asnumpy()
    out["T_center"] = T.CenterCrop((9, 7))(x).asnumpy()
    out["T_center_big"] = T.CenterCrop((20, 20))(x).asnumpy()
    out["T_tensor"] = T.ToTensor()(x).asnumpy()
    out["T_norm"] = T.Normalize((0.1, 0.2, 0.3), (0.5, 0.6, 0.7))(T.ToTensor()(x)).asnumpy()
    np.savez_compressed(os.path.join(HERE, "mxnet191_image.npz"), **out)

    if "--no-models" not in sys.argv:
        from mxnet.gluon.model_zoo import vision
        zoo = {}
        for name in MODELS:
            net = vision.get_model(name)
            net.initialize()
            size = 299 if name.startswith("inception") else 224
            net(mx.nd.zeros((1, 3, size, size)))
            params = net._collect_params_with_prefix()
            zoo[name] = {
                "structural": {k: list(v.shape) for k, v in params.items()},
                "prefixed": sorted(net.collect_params().keys()),
                "count": int(sum(np.prod(v.shape) for v in params.values())),
            }
            if name in FORWARD:
                net = vision.get_model(name)
                net.initialize()
                side = FORWARD[name]
                net(mx.nd.zeros((1, 3, side, side)))
                for i, (k, p) in enumerate(sorted(net._collect_params_with_prefix().items())):
                    p.set_data(mx.nd.array(param_values(k, p.shape, i)))
                out = net(mx.nd.array(forward_input(side))).asnumpy()
                zoo[name]["forward"] = out.ravel().tolist()
            print(name, zoo[name]["count"], flush=True)
        with gzip.open(os.path.join(HERE, "mxnet191_model_zoo.json.gz"), "wt") as f:
            json.dump(zoo, f, sort_keys=True)


if __name__ == "__main__":
    main()
