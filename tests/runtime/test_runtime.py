"""runtime.runtime (MXNet's mx.runtime): the feature table that programs query."""

import pytest

import runtime as mx
from runtime import runtime as features


def test_features_list_mxnets_names_and_ndrts_answers():
    f = mx.runtime.Features()
    assert list(f)[:5] == ["CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT"]
    assert len(f) == 32 and "INT64_TENSOR_SIZE" in f and "MKLDNN" in f
    assert f.is_enabled("CUDA") == (mx.context.num_gpus() > 0)
    assert f.is_enabled("lapack") and f.is_enabled("PROFILER")
    assert not f.is_enabled("MKLDNN") and not f.is_enabled("CUDNN")
    assert repr(f["MKLDNN"]) == "✖ MKLDNN" and repr(f["LAPACK"]) == "✔ LAPACK"
    assert [x.name for x in features.feature_list()] == list(f)
    with pytest.raises(RuntimeError, match=r"Feature 'FOO' is unknown, known features are: "
                                           r"\['CUDA', "):
        f.is_enabled("foo")
