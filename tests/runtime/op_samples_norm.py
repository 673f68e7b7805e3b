"""op_samples entries for the normalisation operators (runtime/ops/norm.py).

The generic suites run outside training, so BatchNorm is sampled with its moving
statistics (tests/runtime/test_norm.py checks training mode).
"""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, ints, positive, uniform, zeros)

F32 = np.float32


def _bn_params(c, seed=0, dtype=np.float64):
    """gamma, beta, moving_mean, moving_var."""
    return [positive((c,), seed).astype(dtype), uniform((c,), seed=seed + 1).astype(dtype),
            uniform((c,), -0.5, 0.5, seed + 2).astype(dtype),
            positive((c,), seed + 3).astype(dtype)]


# -- BatchNorm -----------------------------------------------------------------------------

_X = uniform((2, 3, 4))
_add(SAMPLES, "BatchNorm",
     Sample([_X] + _bn_params(3), wrt=[0, 1, 2]),
     Sample([_X] + _bn_params(3), {"fix_gamma": False}, wrt=[0, 1, 2]),
     Sample([uniform((2, 4, 3), seed=1)] + _bn_params(3, 5),
            {"axis": -1, "fix_gamma": False, "eps": 0.01}, wrt=[0, 1, 2]),
     Sample([uniform((4, 3), seed=2)] + _bn_params(3, 6),
            {"use_global_stats": True, "fix_gamma": False}, wrt=[0, 1, 2]),
     Sample([_X] + _bn_params(3), {"output_mean_var": True, "fix_gamma": False},
            wrt=[0, 1, 2]),
     Sample([_X.astype(F32)] + _bn_params(3, dtype=F32), grad=False),
     Sample([_X.astype(np.float16)] + _bn_params(3, dtype=F32), {"fix_gamma": False},
            grad=False))
_add(FAILURES, "BatchNorm",
     Failure([_X] + _bn_params(4), {}, ValueError,
             r"^BatchNorm: gamma must have shape \(3,\) \(data's size 3 on axis 1\) "
             r"\(got \(4,\)\)"),
     Failure([_X] + _bn_params(3), {"axis": 3}, ValueError,
             r"^BatchNorm: axis 3 is out of range"),
     Failure([_X] + _bn_params(3), {"momentum": 1.5}, ValueError,
             r"^BatchNorm: momentum must be in \[0, 1\] \(got 1.5\)"),
     Failure([_X] + _bn_params(3), {"eps": -1.0}, ValueError,
             r"^BatchNorm: eps must be finite and >= 0 \(got -1.0\)"),
     Failure([_X.astype(F32)] + _bn_params(3), {}, TypeError,
             r"^BatchNorm: gamma must have dtype float32 for float32 data \(got float64\)",
             out=((2, 3, 4), F32)),
     Failure([np.ones((2, 3), np.int64)] + _bn_params(3), {}, TypeError,
             r"^BatchNorm: needs floating-point data \(got int64\)", out=((2, 3), F32)))
_add(ZERO_SIZE, "BatchNorm",
     ZeroSize([zeros(0, 3)] + _bn_params(3), {}, lambda x, *p: x),
     ZeroSize([zeros(2, 0)] + [zeros(0)] * 4, {}, lambda x, *p: x))

_G, _XB = uniform((2, 3, 4), seed=7), uniform((2, 3, 4), seed=8)
_add(SAMPLES, "_backward_BatchNorm",
     Sample([_G, _XB, uniform((3,), seed=9), positive((3,), 10)], grad=False),
     Sample([_G, _XB, uniform((3,), seed=9), positive((3,), 10), positive((3,), 11)],
            {"axis": 1}, grad=False),
     Sample([_G.astype(np.float16), _XB.astype(np.float16),
             uniform((3,), seed=9).astype(F32), positive((3,), 10).astype(F32)],
            grad=False))
_add(FAILURES, "_backward_BatchNorm",
     Failure([_G, uniform((2, 3, 5)), uniform((3,)), positive((3,))], {}, ValueError,
             r"^_backward_BatchNorm: grad must have data's shape \(2, 3, 5\)", out=False))


# -- LayerNorm, InstanceNorm, GroupNorm, L2Normalization -------------------------------------

def _affine(c, seed=0):
    return [positive((c,), seed), uniform((c,), seed=seed + 1)]


_add(SAMPLES, "LayerNorm",
     Sample([uniform((2, 3, 4))] + _affine(4)),
     Sample([uniform((2, 3, 4), seed=1)] + _affine(3, 2), {"axis": 1, "eps": 0.1}),
     Sample([uniform((5,), seed=3)] + _affine(5, 4)),
     Sample([uniform((2, 3, 4))] + _affine(4), {"output_mean_var": True}, grad=False),
     Sample([uniform((2, 4), dtype=F32)] + [a.astype(F32) for a in _affine(4)], grad=False))
_add(FAILURES, "LayerNorm",
     Failure([uniform((2, 3))] + _affine(2), {}, ValueError,
             r"^LayerNorm: gamma must have shape \(3,\) \(data's size 3 on axis -1\) "
             r"\(got \(2,\)\)"),
     Failure([uniform((2, 3))] + _affine(3), {"axis": 2}, ValueError,
             r"^LayerNorm: axis 2 is out of range"),
     Failure([np.ones((2, 3), np.int64)] + _affine(3), {}, TypeError,
             r"^LayerNorm: needs floating-point data \(got int64\)", out=((2, 3), F32)))
_add(ZERO_SIZE, "LayerNorm", ZeroSize([zeros(0, 4)] + _affine(4), {}, lambda x, g, b: x))

_add(SAMPLES, "InstanceNorm",
     Sample([uniform((2, 3, 4))] + _affine(3)),
     Sample([uniform((2, 2, 2, 3), seed=1)] + _affine(2, 2), {"eps": 0.01}),
     Sample([uniform((2, 3, 4), dtype=F32)] + [a.astype(F32) for a in _affine(3)],
            grad=False))
_add(FAILURES, "InstanceNorm",
     Failure([uniform((2, 3))] + _affine(3), {}, ValueError,
             r"^InstanceNorm: data must have at least 3 dimensions .* \(got shape \(2, 3\)\)"),
     Failure([uniform((2, 3, 4))] + _affine(4), {}, ValueError,
             r"^InstanceNorm: gamma must have shape \(3,\)"))
_add(ZERO_SIZE, "InstanceNorm", ZeroSize([zeros(0, 3, 4)] + _affine(3), {},
                                         lambda x, g, b: x))

_add(SAMPLES, "GroupNorm",
     Sample([uniform((2, 4, 3))] + _affine(4), {"num_groups": 2}),
     Sample([uniform((2, 4, 3), seed=1)] + _affine(2, 2), {"num_groups": 2}),
     Sample([uniform((2, 3, 2, 2), seed=2)] + _affine(3, 3), {"eps": 0.1}),
     Sample([uniform((3, 4), seed=3)] + _affine(4, 4), {"num_groups": 4}),
     Sample([uniform((2, 4, 3))] + _affine(4), {"num_groups": 2, "output_mean_var": True},
            grad=False))
_add(FAILURES, "GroupNorm",
     Failure([uniform((2, 4, 3))] + _affine(4), {"num_groups": 3}, ValueError,
             r"^GroupNorm: num_groups must divide the 4 channels \(got num_groups=3\)"),
     Failure([uniform((2, 4, 3))] + _affine(3), {"num_groups": 2}, ValueError,
             r"^GroupNorm: gamma must have shape \(4,\) \(channels\) or \(2,\)"),
     Failure([uniform((2, 4, 3))] + _affine(4), {"num_groups": 0}, ValueError,
             r"^GroupNorm: num_groups must be >= 1 \(got 0\)"))
_add(ZERO_SIZE, "GroupNorm", ZeroSize([zeros(0, 4, 3)] + _affine(4), {"num_groups": 2},
                                      lambda x, g, b: x))

_add(SAMPLES, "L2Normalization",
     Sample([uniform((2, 3, 4))]),
     Sample([uniform((2, 3, 4), seed=1)], {"mode": "channel"}),
     Sample([uniform((2, 3, 2, 2), seed=2)], {"mode": "spatial", "eps": 0.1}),
     Sample([uniform((2, 3), dtype=F32)], grad=False))
_add(FAILURES, "L2Normalization",
     Failure([uniform((2, 3))], {"mode": "spatial"}, ValueError,
             r"^L2Normalization: data must have at least 3 dimensions for "
             r"mode='spatial' \(got 2\)"),
     Failure([uniform((2, 3))], {"mode": "channel"}, ValueError,
             r"^L2Normalization: data must have at least 3 dimensions for "
             r"mode='channel' \(got 2\)"),
     Failure([uniform((2, 3))], {"mode": "all"}, ValueError,
             r"^L2Normalization: mode must be one of"))
_add(ZERO_SIZE, "L2Normalization", ZeroSize([zeros(0, 3)], {}, lambda x: x))


# -- LRN, _lrn_window_sum --------------------------------------------------------------

_LRN_X = uniform((2, 5, 3, 2), seed=780)
_add(SAMPLES, "LRN",
     Sample([_LRN_X], {"nsize": 3, "alpha": 0.5}),
     Sample([uniform((2, 4, 3), seed=781)], {"nsize": 5, "alpha": 0.3, "beta": 0.5,
                                             "knorm": 1.0}),
     Sample([uniform((1, 3, 2, 2), seed=782, dtype=np.float32)], {"nsize": 1}, grad=False))
_add(SAMPLES, "_lrn_window_sum",
     Sample([_LRN_X], {"nsize": 3}),
     Sample([uniform((2, 4), seed=783, dtype=np.float32)], {"nsize": 5}, grad=False))
for _name in ("LRN", "_lrn_window_sum"):
    _add(FAILURES, _name,
         Failure([_LRN_X], {"nsize": 4}, ValueError,
                 rf"^{_name}: nsize must be a positive odd number \(got nsize=4\)"),
         Failure([uniform((5,))], {"nsize": 3}, ValueError,
                 rf"^{_name}: data must have a channel axis 1"),
         Failure([ints(1, 2, 3, 4).reshape(1, 4)], {"nsize": 3}, TypeError,
                 rf"^{_name}: needs a floating-point input"))
    _add(ZERO_SIZE, _name, ZeroSize([zeros(0, 3, 2)], {"nsize": 3}, lambda x: x))
