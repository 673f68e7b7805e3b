"""runtime/ops/bounding_box.py (nd.contrib.MultiBoxPrior, bipartite_matching, box_encode,
box_decode, MultiBoxDetection, MultiBoxTarget) and nd.contrib.getnnz against MXNet 1.9.1's outputs (``data/mxnet191.npz``,
``mxnet_fixtures.py``) and hand-checked cases."""

import os

import numpy as np
import pytest

from runtime import nd

from tests.runtime.mxnet_fixtures import CONTRIB_CASES, DETECTION_CASES, TARGET_CASES

MX = np.load(os.path.join(os.path.dirname(__file__), "data", "mxnet191.npz"))


@pytest.mark.parametrize("case", CONTRIB_CASES, ids=[c[0] for c in CONTRIB_CASES])
def test_matches_mxnet(case):
    key, op, kwargs, _ = case
    n_in = sum(1 for k in MX.files if k.startswith(f"contrib/{key}/in"))
    ins = [nd.array(MX[f"contrib/{key}/in{i}"]) for i in range(n_in)]
    out = getattr(nd.contrib, op)(*ins, **kwargs)
    outs = out if isinstance(out, (list, tuple)) else [out]
    assert len(outs) == sum(1 for k in MX.files if k.startswith(f"contrib/{key}/out"))
    for i, o in enumerate(outs):
        want = MX[f"contrib/{key}/out{i}"]
        assert o.shape == want.shape and o.dtype == want.dtype
        np.testing.assert_allclose(o.asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_bipartite_matching_documented_example():
    x = nd.array([[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]])
    rows, cols = nd.contrib.bipartite_matching(x, threshold=1e-12, is_ascend=False)
    assert rows.asnumpy().tolist() == [1, -1, 0] and cols.asnumpy().tolist() == [2, 0]


def test_multibox_prior_by_hand():
    # one cell of a 1x2 map: centre (0.25, 0.5), size 0.5 at ratio 1 and ratio 4
    out = nd.contrib.MultiBoxPrior(nd.zeros((1, 1, 1, 2)), sizes=(0.5,), ratios=(1, 4))
    w1, h1 = 0.5 * 1 / 2 / 2, 0.5 / 2
    w2, h2 = 0.5 * 1 / 2 * 2 / 2, 0.5 / 2 / 2
    want = [[0.25 - w1, 0.5 - h1, 0.25 + w1, 0.5 + h1],
            [0.25 - w2, 0.5 - h2, 0.25 + w2, 0.5 + h2]]
    np.testing.assert_allclose(out.asnumpy()[0, :2], want, rtol=1e-6)


def test_getnnz():
    dense = np.array([[1.0, 0, 2], [0, 0, 0], [0, 3, 0]])
    c = nd.array(dense).tostype("csr")
    assert nd.contrib.getnnz(c).asnumpy().tolist() == [3]
    assert nd.contrib.getnnz(c, axis=1).asnumpy().tolist() == [2, 0, 1]
    assert nd.contrib.getnnz(c, axis=0).asnumpy().tolist() == [1, 1, 1]
    assert nd.contrib.getnnz(c).dtype == np.int64
    with pytest.raises(NotImplementedError, match="data must have storage type 'csr'"):
        nd.contrib.getnnz(nd.array(dense))


@pytest.mark.parametrize("case", DETECTION_CASES, ids=[c[0] for c in DETECTION_CASES])
def test_multibox_detection_matches_mxnet(case):
    key, kwargs, _, _ = case
    ins = [nd.array(MX[f"det/{key}/in{i}"]) for i in range(3)]
    out = nd.contrib.MultiBoxDetection(*ins, **kwargs)
    want = MX[f"det/{key}/out0"]
    assert out.shape == want.shape
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", TARGET_CASES, ids=[c[0] for c in TARGET_CASES])
def test_multibox_target_matches_mxnet(case):
    key, kwargs, _, _ = case
    ins = [nd.array(MX[f"target/{key}/in{i}"]) for i in range(3)]
    outs = nd.contrib.MultiBoxTarget(*ins, **kwargs)
    assert len(outs) == 3
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), MX[f"target/{key}/out{i}"], rtol=1e-5,
                                   atol=1e-6)
