"""nd.Correlation (runtime/ops/correlation.py) against MXNet 1.9.1: outputs and both
gradients from ``data/mxnet191.npz`` (``mxnet_fixtures.py``), and a direct NumPy loop
of the definition."""

import os

import numpy as np
import pytest

from runtime import autograd, nd

from tests.runtime.mxnet_fixtures import CORRELATION_CASES

MX = np.load(os.path.join(os.path.dirname(__file__), "data", "mxnet191.npz"))


@pytest.mark.parametrize("case", CORRELATION_CASES, ids=[c[0] for c in CORRELATION_CASES])
def test_correlation_matches_mxnet(case):
    key, kwargs, _ = case
    a, b = nd.array(MX[f"corr/{key}/a"]), nd.array(MX[f"corr/{key}/b"])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = nd.Correlation(a, b, **kwargs)
    out.backward(nd.array(MX[f"corr/{key}/head"]))
    np.testing.assert_allclose(out.asnumpy(), MX[f"corr/{key}/out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.grad.asnumpy(), MX[f"corr/{key}/da"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.asnumpy(), MX[f"corr/{key}/db"], rtol=1e-5, atol=1e-6)


def test_correlation_definition_by_loops():
    rng = np.random.default_rng(0)
    x1, x2 = rng.standard_normal((1, 2, 4, 5)), rng.standard_normal((1, 2, 4, 5))
    k, md, pad = 3, 1, 1
    got = nd.Correlation(nd.array(x1, dtype="float64"), nd.array(x2, dtype="float64"),
                         kernel_size=k, max_displacement=md, pad_size=pad).asnumpy()
    p1 = np.pad(x1, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    p2 = np.pad(x2, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    want = np.zeros(got.shape)
    for i in range(got.shape[2]):
        for j in range(got.shape[3]):
            y1, x1_ = i + md, j + md
            for q in range(9):
                dy, dx = q // 3 - 1, q % 3 - 1
                patch1 = p1[0, :, y1:y1 + k, x1_:x1_ + k]
                patch2 = p2[0, :, y1 + dy:y1 + dy + k, x1_ + dx:x1_ + dx + k]
                want[0, q, i, j] = (patch1 * patch2).sum() / (k * k * 2)
    np.testing.assert_allclose(got, want, rtol=1e-12)
