"""ndrt's optimizers against MXNet 1.9.1's own weights after three updates, dense and
row_sparse gradients (tests/runtime/data/mxnet_optimizer_values.npz, made by
make_mxnet_optimizer_values.py there with MXNet 1.9.1)."""

import json
from pathlib import Path

import numpy as np
import pytest

import runtime as mx
from runtime import nd
from tests.runtime.conftest import free_failing_tests

DATA = np.load(Path(__file__).parent / "data" / "mxnet_optimizer_values.npz")
META = json.loads(str(DATA["configs"]))
CASES = [(i, bool(s)) for i, s in META["done"]]


def _id(case):
    i, sparse = case
    name, kw = META["configs"][i]
    return f"{name}-{i}-{'rsp' if sparse else 'dense'}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_three_updates_match_mxnet_1_9_1(case):
    i, sparse = case
    name, kw = META["configs"][i]
    w0, grads = DATA["w0"], DATA["grads"]
    updater = mx.optimizer.get_updater(mx.optimizer.create(name, **kw))
    w = nd.array(w0)
    for g, rows in zip(grads, META["rows"]):
        ga = (nd.sparse.row_sparse_array((g[rows], np.array(rows, np.int64)), shape=w0.shape)
              if sparse else nd.array(g))
        updater(0, ga, w)
    np.testing.assert_allclose(w.asnumpy(), DATA[f"{i}_{int(sparse)}"], rtol=1e-5, atol=1e-6)


free_failing_tests(globals())
