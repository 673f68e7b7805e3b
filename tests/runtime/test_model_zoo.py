"""gluon.model_zoo.vision against MXNet 1.9.1: every model's parameter names (structural,
as save_parameters writes them, and prefixed, as MXNet's published files name them),
shapes and count, and the output of nine models with the same parameters on the same
input (tests/runtime/data/mxnet191_model_zoo.json.gz, written by mxnet_data_fixtures.py);
pretrained files found, checked and loaded from a local root."""

import gzip
import json
import os

import numpy as np
import pytest

from runtime import init, nd
from runtime.gluon.model_zoo import model_store, vision
from tests.runtime.conftest import free_failing_tests
from tests.runtime.mxnet_data_fixtures import FORWARD, MODELS, forward_input, param_values

with gzip.open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                            "mxnet191_model_zoo.json.gz"), "rt") as f:
    ZOO = json.load(f)

# The smallest input side that gives every parameter its ImageNet shape: global pooling
# takes any size; a fixed pooling window needs 224 (299).  VGG's first dense layer reads
# the flattened 7x7 map of a 224 input; at 32 it reads 1x1 (see _vgg_at_32).
SIDE = {"inceptionv3": 299, "vgg11": 224}
for _name in MODELS:
    if _name.startswith(("resnet", "mobilenet", "vgg")):
        SIDE.setdefault(_name, 32)
    SIDE.setdefault(_name, 224)


def _vgg_at_32(name, ref):
    """MXNet's shapes as a 32x32 input gives them: VGG's first dense weight reads 512
    values instead of 512 * 7 * 7."""
    if not name.startswith("vgg") or SIDE[name] != 32:
        return ref
    ref = dict(ref)
    key = next(k for k, s in ref.items() if s == [4096, 25088])
    ref[key] = [4096, 512]
    return ref


def _built(name, **kwargs):
    net = vision.get_model(name, **kwargs)
    net.initialize(init.Zero())
    out = net(nd.zeros((1, 3, SIDE[name], SIDE[name])))
    return net, out


@pytest.mark.parametrize("name", MODELS)
def test_model_matches_mxnet_names_shapes_and_count(name):
    net, out = _built(name)
    assert out.shape == (1, 1000)
    ref = ZOO[name]
    got = {k: list(p.shape) for k, p in net._collect_params_with_prefix().items()}
    want = _vgg_at_32(name, ref["structural"])
    assert got == want
    flattened = 4096 * 512 * 7 * 7 - 4096 * 512 if want != ref["structural"] else 0
    # prefixed names without the net's own prefix (its counter depends on what was made
    # before): what MXNet's published files key the parameters by
    strip = lambda names, prefix: sorted(n[len(prefix):] for n in names)  # noqa: E731
    mx_prefix = ref["prefixed"][0].split("_")[0] + "_"
    assert strip(net.collect_params().keys(), net.prefix) == strip(ref["prefixed"], mx_prefix)
    assert sum(int(np.prod(s)) for s in got.values()) == ref["count"] - flattened


def test_get_model_names_and_classes():
    net, out = _built("resnet18_v1", classes=10)
    assert out.shape == (1, 10)
    assert set(vision._MODELS) == set(MODELS)
    with pytest.raises(ValueError, match=r"get_model: name must be one of .* \(got 'resnet9'\)"):
        vision.get_model("resnet9")
    assert type(vision.get_model("ResNet18_V2")).__name__ == "ResNetV2"


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_matches_mxnet(name):
    # the same deterministic parameters and input as MXNet 1.9.1's run (inference mode)
    side = FORWARD[name]
    net = vision.get_model(name)
    net.initialize(init.Zero())
    net(nd.zeros((1, 3, side, side)))
    for i, (k, p) in enumerate(sorted(net._collect_params_with_prefix().items())):
        p.set_data(nd.array(param_values(k, p.shape, i)))
    out = net(nd.array(forward_input(side))).asnumpy().ravel()
    ref = np.asarray(ZOO[name]["forward"], np.float32)
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-4 * np.abs(ref).max())


def test_model_file_missing_names_the_expected_path(tmp_path, monkeypatch):
    expected = os.path.join(str(tmp_path), f"resnet18_v1-{model_store.short_hash('resnet18_v1')}"
                                           ".params")
    assert expected.endswith("resnet18_v1-a0666292.params")
    with pytest.raises(FileNotFoundError, match=r"no pretrained parameters for 'resnet18_v1' "
                                                r"at .*resnet18_v1-a0666292.params'; ndrt does "
                                                r"not download"):
        model_store.get_model_file("resnet18_v1", root=str(tmp_path))
    monkeypatch.setenv("MXNET_HOME", str(tmp_path / "home"))
    with pytest.raises(FileNotFoundError, match=r"home/models/vgg11-dd221b16.params'"):
        model_store.get_model_file("vgg11")
    with open(expected, "wb") as f:
        f.write(b"not the published file")
    with pytest.raises(ValueError, match="is not MXNet's published resnet18_v1-a0666292"):
        model_store.get_model_file("resnet18_v1", root=str(tmp_path))
    with pytest.raises(ValueError, match="no pretrained parameters are published for 'lenet'"):
        model_store.get_model_file("lenet", root=str(tmp_path))


def test_pretrained_missing_file_through_get_model(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"resnet18_v1-a0666292.params'; ndrt does "):
        vision.get_model("resnet18_v1", pretrained=True, root=str(tmp_path))


def test_pretrained_parameters_load_from_root(tmp_path, monkeypatch):
    # A parameter file in MXNet's format under the published name (its checksum
    # registered for this test) loads into the model, value for value.
    net, _ = _built("mobilenet0.25")
    rng = np.random.default_rng(3)
    for p in net.collect_params().values():
        p.set_data(nd.array(rng.standard_normal(p.shape).astype(np.float32)))
    path = str(tmp_path / "saved.params")
    net.save_parameters(path)
    import hashlib
    with open(path, "rb") as f:
        digest = hashlib.sha1(f.read()).hexdigest()
    monkeypatch.setitem(model_store._SHA1, "mobilenet0.25", digest)
    os.replace(path, str(tmp_path / f"mobilenet0.25-{digest[:8]}.params"))
    loaded = vision.get_model("mobilenet0.25", pretrained=True, root=str(tmp_path))
    for (k, a), (k2, b) in zip(net._collect_params_with_prefix().items(),
                               loaded._collect_params_with_prefix().items()):
        assert k == k2
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())


free_failing_tests(globals())
