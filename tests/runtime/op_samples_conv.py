"""Samples, failures and zero-size cases of the CNN operators (runtime/ops/conv.py):
Convolution, Deconvolution, Pooling, UpSampling and their hidden gradient helpers.
Small shapes: the generic suite checks every gradient by float64 central differences."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, positive, uniform, zeros)

F32 = np.float32

# -- Convolution ----------------------------------------------------------------------------

_C2 = {"kernel": (3, 2), "num_filter": 4}
_add(SAMPLES, "Convolution",
     Sample([uniform((2, 3, 5, 4)), uniform((4, 3, 3, 2), seed=1), uniform((4,), seed=2)], _C2),
     Sample([uniform((1, 4, 6, 5)), uniform((6, 2, 2, 3), seed=1)],
            {"kernel": (2, 3), "num_filter": 6, "num_group": 2, "stride": (2, 1),
             "pad": (1, 0), "dilate": (1, 2), "no_bias": True}),
     Sample([uniform((2, 2, 7)), uniform((3, 2, 3), seed=1), uniform((3,), seed=2)],
            {"kernel": (3,), "num_filter": 3, "stride": (2,), "pad": (1,)}),
     Sample([uniform((1, 2, 3, 4, 3)), uniform((2, 2, 2, 2, 2), seed=1)],
            {"kernel": (2, 2, 2), "num_filter": 2, "no_bias": True, "pad": (0, 1, 0)}),
     # stride 1, with pad > dilated kernel - 1 along the last axis of the second (the data
     # gradient's columns added back by col2im)
     Sample([uniform((1, 16, 3, 3)), uniform((2, 16, 2, 2), seed=1), uniform((2,), seed=2)],
            {"kernel": (2, 2), "num_filter": 2, "pad": (1, 0)}),
     Sample([uniform((2, 4, 5, 4)), uniform((4, 2, 2, 2), seed=1)],
            {"kernel": (2, 2), "num_filter": 4, "num_group": 2, "dilate": (2, 1),
             "pad": (1, 2), "no_bias": True}),
     Sample([uniform((1, 2, 4, 3, 3)), uniform((2, 2, 2, 2, 2), seed=1)],
            {"kernel": (2, 2, 2), "num_filter": 2, "dilate": (1, 1, 2), "pad": (1, 1, 0),
             "no_bias": True}),
     # 3x3 stride 1 with 16 channels and filters, 29 wide: the Winograd kernels (forward,
     # data gradient by the flipped weight, weight gradient), odd output sizes
     Sample([uniform((2, 16, 3, 27)), uniform((16, 16, 3, 3), seed=1), uniform((16,), seed=2)],
            {"kernel": (3, 3), "num_filter": 16, "pad": (1, 2)}),
     Sample([uniform((2, 3, 4, 4), dtype=F32), uniform((2, 3, 1, 1), seed=1, dtype=F32),
             uniform((2,), seed=2, dtype=F32)], {"kernel": (1, 1), "num_filter": 2},
            grad=False))
_add(FAILURES, "Convolution",
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3)), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4, "dilate": (3, 1)}, ValueError,
             r"^Convolution: the dilated kernel \(7\) is larger than the padded input \(5\) "
             r"along spatial axis 0"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3)), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4, "num_group": 2}, ValueError,
             r"^Convolution: the 3 input channels are not divisible by num_group=2"),
     Failure([uniform((1, 4, 5, 5)), uniform((3, 2, 3, 3)), uniform((3,))],
             {"kernel": (3, 3), "num_filter": 3, "num_group": 2}, ValueError,
             r"^Convolution: num_filter=3 is not divisible by num_group=2"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 2)), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4}, ValueError,
             r"^Convolution: weight must have shape \(4, 3, 3, 3\) for data of shape "
             r"\(1, 3, 5, 5\) \(got \(4, 3, 3, 2\)\)"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3)), uniform((5,))],
             {"kernel": (3, 3), "num_filter": 4}, ValueError,
             r"^Convolution: bias must have shape \(4,\) \(got \(5,\)\)"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3)), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4, "no_bias": True}, TypeError,
             r"^Convolution: takes 2 array inputs \(data, weight\) with no_bias=True"),
     Failure([uniform((1, 3, 5)), uniform((4, 3, 3, 3)), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4}, ValueError,
             r"^Convolution: data must have 4 dimensions .* \(got shape \(1, 3, 5\)\)"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3)), uniform((4,))],
             {"kernel": (3, 0), "num_filter": 4}, ValueError,
             r"^Convolution: kernel must be positive \(got kernel=\(3, 0\)\)"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3)), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4, "stride": (1, 0)}, ValueError,
             r"^Convolution: stride must be positive \(got stride=\(1, 0\)\)"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3)), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4, "pad": (1,)}, ValueError,
             r"^Convolution: pad must have 2 entries, one per spatial axis"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3)), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4, "layout": "NHWC"}, NotImplementedError,
             r"^Convolution: layout 'NHWC' is not supported"),
     Failure([uniform((1, 3, 5, 5)), uniform((4, 3, 3, 3), dtype=F32), uniform((4,))],
             {"kernel": (3, 3), "num_filter": 4}, TypeError,
             r"^Convolution: weight must have data's dtype float64 \(got float32\)"),
     Failure([np.ones((1, 3, 5, 5), np.int64), np.ones((4, 3, 3, 3), np.int64),
              np.ones(4, np.int64)], {"kernel": (3, 3), "num_filter": 4}, TypeError,
             r"^Convolution: needs a floating-point data \(got int64\)"))
_add(ZERO_SIZE, "Convolution",
     ZeroSize([zeros(0, 3, 5, 5), uniform((4, 3, 3, 3)), uniform((4,))],
              {"kernel": (3, 3), "num_filter": 4}, lambda x, w, b: np.zeros((0, 4, 3, 3))),
     ZeroSize([zeros(2, 0, 5, 5), zeros(4, 0, 3, 3), uniform((4,))],
              {"kernel": (3, 3), "num_filter": 4},
              lambda x, w, b: np.broadcast_to(b[:, None, None], (2, 4, 3, 3))))

# -- Deconvolution --------------------------------------------------------------------------

_add(SAMPLES, "Deconvolution",
     Sample([uniform((2, 3, 3, 2)), uniform((3, 2, 3, 2), seed=1)],
            {"kernel": (3, 2), "num_filter": 2}),
     # 16 channels and filters, 3x3 stride 1, 28 wide: the Winograd kernels with the roles
     # swapped
     Sample([uniform((1, 16, 3, 26)), uniform((16, 16, 3, 3), seed=1)],
            {"kernel": (3, 3), "num_filter": 16, "pad": (1, 0), "no_bias": True}),
     Sample([uniform((1, 4, 3, 3)), uniform((4, 3, 3, 3), seed=1), uniform((6,), seed=2)],
            {"kernel": (3, 3), "num_filter": 6, "num_group": 2, "stride": (2, 2),
             "pad": (1, 0), "adj": (1, 0), "dilate": (1, 2), "no_bias": False}),
     Sample([uniform((2, 2, 4)), uniform((2, 3, 3), seed=1)],
            {"kernel": (3,), "num_filter": 3, "stride": (2,), "target_shape": (8,)}),
     Sample([uniform((1, 2, 2, 2, 2)), uniform((2, 1, 2, 2, 2), seed=1)],
            {"kernel": (2, 2, 2), "num_filter": 1, "stride": (2, 1, 1)}),
     Sample([uniform((2, 3, 4, 4), dtype=F32), uniform((3, 2, 2, 2), seed=1, dtype=F32)],
            {"kernel": (2, 2), "num_filter": 2, "stride": (2, 2)}, grad=False))
_add(FAILURES, "Deconvolution",
     Failure([uniform((1, 3, 4, 4)), uniform((3, 2, 3, 3))],
             {"kernel": (3, 3), "num_filter": 2, "stride": (2, 2), "adj": (2, 0)}, ValueError,
             r"^Deconvolution: adj must be smaller than stride \(got adj=\(2, 0\), "
             r"stride=\(2, 2\)\)"),
     Failure([uniform((1, 3, 4, 4)), uniform((2, 3, 3, 3))],
             {"kernel": (3, 3), "num_filter": 3}, ValueError,
             r"^Deconvolution: weight must have shape \(3, 3, 3, 3\)"),
     Failure([uniform((1, 3, 4)), uniform((3, 2, 3))],
             {"kernel": (3,), "num_filter": 2, "target_shape": (7,)}, ValueError,
             r"^Deconvolution: target_shape \(7,\) is larger than the full output \(6,\)"),
     Failure([uniform((1, 3, 2)), uniform((3, 2, 3))],
             {"kernel": (3,), "num_filter": 2, "pad": (2,)}, ValueError,
             r"^Deconvolution: pad \(2,\) leaves no output along spatial axis 0"),
     Failure([uniform((1, 3, 4)), uniform((3, 2, 3)), uniform((2,))],
             {"kernel": (3,), "num_filter": 2}, TypeError,
             r"^Deconvolution: takes 2 array inputs \(data, weight\) with no_bias=True"))
_add(ZERO_SIZE, "Deconvolution",
     ZeroSize([zeros(0, 3, 4, 4), uniform((3, 2, 3, 3))], {"kernel": (3, 3), "num_filter": 2},
              lambda x, w: np.zeros((0, 2, 6, 6))))

# -- _conv_weight_grad ---------------------------------------------------------------------

_add(SAMPLES, "_conv_weight_grad",
     Sample([uniform((2, 3, 5, 4)), uniform((2, 4, 3, 3), seed=1)], {"kernel": (3, 2)}),
     Sample([uniform((1, 4, 6, 5)), uniform((1, 6, 4, 1), seed=1)],
            {"kernel": (2, 3), "num_group": 2, "stride": (2, 1), "pad": (1, 0),
             "dilate": (1, 2)}),
     Sample([uniform((2, 2, 5), dtype=F32), uniform((2, 3, 3), seed=1, dtype=F32)],
            {"kernel": (3,)}, grad=False))
_add(FAILURES, "_conv_weight_grad",
     Failure([uniform((2, 3, 5, 4)), uniform((2, 4, 3, 2))], {"kernel": (3, 2)}, ValueError,
             r"^_conv_weight_grad: grad must have shape \(2, 4, 3, 3\) for data of shape "
             r"\(2, 3, 5, 4\) \(got \(2, 4, 3, 2\)\)", out=((4, 3, 3, 2), np.float64)))
_add(ZERO_SIZE, "_conv_weight_grad",
     ZeroSize([zeros(0, 3, 5, 4), zeros(0, 4, 3, 3)], {"kernel": (3, 2)},
              lambda x, g: np.zeros((4, 3, 3, 2))))

# -- Pooling --------------------------------------------------------------------------------
# max samples keep every window's maximum unique (no ties: central differences hold)

_PX = uniform((2, 3, 5, 6), seed=3)
_add(SAMPLES, "Pooling",
     Sample([_PX], {"kernel": (2, 2), "stride": (2, 2)}),
     Sample([_PX], {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
     Sample([_PX], {"kernel": (2, 3), "pool_type": "avg", "stride": (2, 2), "pad": (1, 1),
                    "pooling_convention": "full"}),
     Sample([_PX], {"kernel": (3, 2), "pool_type": "avg", "pad": (1, 1),
                    "count_include_pad": False, "pooling_convention": "full",
                    "stride": (2, 3)}),
     Sample([_PX], {"kernel": (2, 2), "pool_type": "sum", "stride": (1, 2)}),
     Sample([positive((2, 2, 5), seed=4)], {"kernel": (2,), "pool_type": "lp", "p_value": 2,
                                            "stride": (2,)}),
     Sample([positive((1, 2, 4, 4), seed=4)], {"kernel": (3, 3), "pool_type": "lp",
                                               "p_value": 3, "pad": (1, 1)}),
     Sample([uniform((2, 2, 5))], {"kernel": (2,), "pool_type": "lp", "p_value": 1}),
     Sample([uniform((1, 2, 3, 4, 3))], {"kernel": (2, 2, 2), "pool_type": "max"}),
     Sample([_PX], {"global_pool": True, "pool_type": "avg"}),
     Sample([_PX], {"global_pool": True, "pool_type": "max", "kernel": (9, 9)}),
     Sample([uniform((2, 3, 6, 6), dtype=F32)], {"kernel": (3, 3), "stride": (2, 2),
                                                 "pad": (1, 1)}, grad=False))
_add(FAILURES, "Pooling",
     Failure([_PX], {"kernel": (0, 2)}, ValueError,
             r"^Pooling: kernel must be positive \(got kernel=\(0, 2\)\)"),
     Failure([_PX], {}, ValueError,
             r"^Pooling: kernel must be given unless global_pool=True"),
     Failure([_PX], {"kernel": (2,)}, ValueError,
             r"^Pooling: kernel must have 2 entries for data of shape \(2, 3, 5, 6\)"),
     Failure([_PX], {"kernel": (7, 2)}, ValueError,
             r"^Pooling: kernel \(7, 2\) is larger than the padded input along spatial "
             r"axis 0"),
     Failure([_PX], {"kernel": (2, 2), "pool_type": "lp"}, ValueError,
             r"^Pooling: p_value must be 1, 2 or 3 for pool_type='lp' \(got p_value=None\)"),
     Failure([_PX], {"kernel": (2, 2), "pool_type": "median"}, ValueError,
             r"^Pooling: pool_type must be one of"),
     Failure([_PX], {"kernel": (2, 2), "stride": (0, 1)}, ValueError,
             r"^Pooling: stride must be positive \(got stride=\(0, 1\)\)"),
     Failure([uniform((2, 3))], {"kernel": (2,)}, ValueError,
             r"^Pooling: data must have 3, 4 or 5 dimensions"),
     Failure([np.ones((1, 1, 4, 4), np.int64)], {"kernel": (2, 2)}, TypeError,
             r"^Pooling: needs a floating-point input \(got int64\)"))
_add(ZERO_SIZE, "Pooling",
     ZeroSize([zeros(0, 3, 4, 4)], {"kernel": (2, 2)}, lambda x: np.zeros((0, 3, 3, 3))),
     ZeroSize([zeros(2, 0, 4, 4)], {"kernel": (2, 2), "pool_type": "avg"},
              lambda x: np.zeros((2, 0, 3, 3))))

# -- _backward_Pooling, _pooling_max_pick --------------------------------------------------

_BG = uniform((2, 3, 3, 3), seed=5)
_add(SAMPLES, "_backward_Pooling",
     Sample([_BG, _PX], {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1),
                         "data_shape": (2, 3, 5, 6)}, wrt=[0]),
     Sample([uniform((2, 3, 4, 4), seed=5)], {"kernel": (2, 3), "pool_type": "avg",
                                              "stride": (2, 2), "pad": (1, 1),
                    "pooling_convention": "full", "data_shape": (2, 3, 5, 6)}),
     Sample([uniform((1, 2, 4, 5), seed=6)], {"kernel": (2, 2), "pool_type": "sum",
                                              "data_shape": (1, 2, 5, 6)}),
     Sample([_BG.astype(F32), _PX.astype(F32)],
            {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "data_shape": (2, 3, 5, 6)},
            grad=False))
_add(FAILURES, "_backward_Pooling",
     Failure([_BG], {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1),
                     "data_shape": (2, 3, 5, 6)}, TypeError,
             r"^_backward_Pooling: takes 2 array input\(s\) \(grad, data\) with "
             r"pool_type='max' \(got 1\)", out=((2, 3, 5, 6), np.float64)),
     Failure([_BG], {"kernel": (2, 2), "pool_type": "sum", "data_shape": (2, 3, 5, 6)},
             ValueError, r"^_backward_Pooling: grad must have shape \(2, 3, 4, 5\) for "
             r"data_shape=\(2, 3, 5, 6\) \(got \(2, 3, 3, 3\)\)",
             out=((2, 3, 5, 6), np.float64)),
     Failure([_BG], {"kernel": (2, 2), "pool_type": "lp", "p_value": 2,
                     "data_shape": (2, 3, 5, 6)}, ValueError,
             r"^_backward_Pooling: pool_type must be 'max', 'avg' or 'sum' \(got 'lp'\)",
             out=((2, 3, 5, 6), np.float64)))
_add(ZERO_SIZE, "_backward_Pooling",
     ZeroSize([zeros(0, 3, 3, 3)], {"kernel": (2, 2), "pool_type": "avg",
                                    "data_shape": (0, 3, 4, 4)},
              lambda g: np.zeros((0, 3, 4, 4))))

_add(SAMPLES, "_pooling_max_pick",
     Sample([_PX, uniform((2, 3, 5, 6), seed=7)], {"kernel": (3, 3), "stride": (2, 2),
                                                   "pad": (1, 1)}, wrt=[1]),
     Sample([_PX.astype(F32), uniform((2, 3, 5, 6), seed=7, dtype=F32)],
            {"kernel": (2, 2), "pooling_convention": "full", "stride": (2, 2)}, grad=False))
_add(FAILURES, "_pooling_max_pick",
     Failure([_PX, uniform((2, 3, 5, 5))], {"kernel": (2, 2)}, ValueError,
             r"^_pooling_max_pick: values must have data's shape \(2, 3, 5, 6\)"),
     Failure([_PX, _PX], {"kernel": (2, 2), "pool_type": "avg"}, ValueError,
             r"^_pooling_max_pick: pool_type must be 'max' \(got 'avg'\)"))
_add(ZERO_SIZE, "_pooling_max_pick",
     ZeroSize([zeros(0, 3, 4, 4), zeros(0, 3, 4, 4)], {"kernel": (2, 2)},
              lambda x, v: np.zeros((0, 3, 3, 3))))

# -- _pooling_route ---------------------------------------------------------------------------

# positions in the (5, 6) planes, -1 (dropped) and repeats (added) among them
_ROUTE = np.random.default_rng(8).integers(-1, 30, (2, 3, 3, 3)).astype(np.int64)
_add(SAMPLES, "_pooling_route",
     Sample([uniform((2, 3, 3, 3), seed=9), _ROUTE], {"data_shape": (2, 3, 5, 6)}, wrt=[0]),
     Sample([uniform((2, 3, 5, 6), seed=9), _ROUTE],
            {"data_shape": (2, 3, 5, 6), "scatter": False}, wrt=[0]),
     Sample([uniform((2, 3, 3, 3), seed=9, dtype=F32), _ROUTE], {"data_shape": (2, 3, 5, 6)},
            grad=False))
_add(FAILURES, "_pooling_route",
     Failure([uniform((2, 3, 3, 3)), np.full((2, 3, 3, 3), 30, np.int64)],
             {"data_shape": (2, 3, 5, 6)}, ValueError,
             r"^_pooling_route: route must hold positions in \[-1, 30\) \(got 30 at flat "
             r"index 0\)", out=((2, 3, 5, 6), np.float64)),
     Failure([uniform((2, 3, 3, 3)), _ROUTE.astype(np.float64)], {"data_shape": (2, 3, 5, 6)},
             TypeError, r"^_pooling_route: route must have dtype int64 \(got float64\)"),
     Failure([uniform((2, 3, 3, 2)), _ROUTE], {"data_shape": (2, 3, 5, 6)}, ValueError,
             r"^_pooling_route: data must have route's shape \(2, 3, 3, 3\) with "
             r"scatter=True \(got \(2, 3, 3, 2\)\)"),
     Failure([uniform((2, 3, 3, 3)), _ROUTE], {"data_shape": (2, 4, 5, 6)}, ValueError,
             r"^_pooling_route: route must have data_shape's batch and channel axes"))
_add(ZERO_SIZE, "_pooling_route",
     ZeroSize([zeros(0, 3, 3, 3), np.zeros((0, 3, 3, 3), np.int64)],
              {"data_shape": (0, 3, 5, 6)}, lambda g, r: np.zeros((0, 3, 5, 6))))

# -- UpSampling -----------------------------------------------------------------------------

_add(SAMPLES, "UpSampling",
     Sample([uniform((2, 3, 2, 3))], {"scale": 2}),
     Sample([uniform((1, 2, 2, 2)), uniform((1, 3, 4, 4), seed=1)],
            {"scale": 2, "sample_type": "nearest", "num_args": 2}),
     Sample([uniform((1, 2, 2, 2)), uniform((1, 2, 1, 1), seed=1)],
            {"scale": 3, "multi_input_mode": "sum"}),
     Sample([uniform((1, 2, 3, 2)), uniform((2, 1, 4, 4), seed=1)],
            {"scale": 2, "sample_type": "bilinear", "num_filter": 2}),
     Sample([uniform((2, 3, 2, 3), dtype=F32)], {"scale": 3}, grad=False))
_add(FAILURES, "UpSampling",
     Failure([uniform((1, 2, 2, 2)), uniform((1, 3, 3, 3))], {"scale": 2}, ValueError,
             r"^UpSampling: input 1 of shape \(1, 3, 3, 3\) cannot be scaled to the output "
             r"size \(4, 4\) by one integer factor"),
     Failure([uniform((1, 2, 2, 2)), uniform((1, 3, 4, 4))],
             {"scale": 2, "multi_input_mode": "sum"}, ValueError,
             r"^UpSampling: multi_input_mode='sum' needs one channel count"),
     Failure([uniform((1, 2, 2, 2))], {"scale": 0}, ValueError,
             r"^UpSampling: scale must be >= 1 \(got 0\)"),
     Failure([uniform((1, 2, 2, 2))], {"scale": 2, "num_args": 2}, ValueError,
             r"^UpSampling: num_args is 2 but 1 arrays were given"),
     Failure([uniform((2, 2, 2))], {"scale": 2}, ValueError,
             r"^UpSampling: input 0 must have 4 dimensions \(N, C, H, W\)"),
     Failure([uniform((1, 2, 3, 2)), uniform((2, 1, 3, 3))],
             {"scale": 2, "sample_type": "bilinear"}, ValueError,
             r"^UpSampling: weight must have shape \(2, 1, 4, 4\)"))
_add(ZERO_SIZE, "UpSampling",
     ZeroSize([zeros(0, 3, 2, 2)], {"scale": 2}, lambda x: np.zeros((0, 3, 4, 4))))


# -- Correlation (runtime/ops/correlation.py); values against MXNet 1.9.1 in
#    tests/runtime/test_correlation.py ---------------------------------------------------------

_C1, _C2 = uniform((2, 2, 5, 6), seed=61), uniform((2, 2, 5, 6), seed=62)
_add(SAMPLES, "Correlation",
     Sample([_C1, _C2]),
     Sample([_C1, _C2], {"kernel_size": 3, "max_displacement": 2, "pad_size": 2}),
     Sample([_C1, _C2], {"max_displacement": 2, "stride1": 2, "stride2": 2, "pad_size": 1}),
     Sample([_C1.astype(np.float32), _C2.astype(np.float32)], {"kernel_size": 3,
                                                               "pad_size": 1,
                                                               "is_multiply": False},
            grad=False))
_add(FAILURES, "Correlation",
     Failure([_C1, _C2[:, :1]], {}, ValueError,
             r"^Correlation: data1 and data2 must have one shape", out=False),
     Failure([_C1, _C2], {"kernel_size": 2}, ValueError,
             r"^Correlation: kernel_size must be an odd number >= 1 \(got 2\)", out=False),
     Failure([_C1, _C2], {"max_displacement": 4}, ValueError,
             r"^Correlation: data of shape \(2, 2, 5, 6\) is too small", out=False),
     Failure([_C1, _C2.astype(np.float32)], {}, TypeError,
             r"^Correlation: data1 and data2 must have one dtype", out=False))
_add(SAMPLES, "_backward_Correlation",
     Sample([uniform((2, 9, 3, 4), seed=63), _C1, _C2], grad=False),
     Sample([uniform((2, 9, 5, 6), seed=64), _C1, _C2],
            {"kernel_size": 3, "pad_size": 2, "is_multiply": False}, grad=False))
_add(FAILURES, "_backward_Correlation",
     Failure([uniform((2, 9, 3, 3), seed=63), _C1, _C2], {}, ValueError,
             r"^_backward_Correlation: grad must have shape \(2, 9, 3, 4\)", out=False))
