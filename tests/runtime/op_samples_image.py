"""op_samples entries for the image operators (runtime/ops/image.py): images HxWxC (or
NxHxWxC) for to_tensor and the flips, CxHxW (or NxCxHxW) tensors for normalize."""

import numpy as np

from tests.runtime.op_samples import (FAILURES, SAMPLES, ZERO_SIZE, Failure, Sample, ZeroSize,
                                      _add, uniform, zeros)

F32 = np.float32
_IMG = np.random.default_rng(21).integers(0, 256, (4, 5, 3)).astype(np.uint8)
_HWC = uniform((4, 5, 3), seed=22)
_NHWC = uniform((2, 4, 5, 3), seed=23)
_CHW = uniform((3, 4, 5), seed=24)
_NCHW = uniform((2, 1, 4, 5), seed=25)
_NORM = {"mean": (0.1, 0.2, 0.3), "std": (0.5, 2.0, 4.0)}


def _norm_ref(x, mean, std):
    return (x - np.reshape(mean, (-1, 1, 1))) / np.reshape(std, (-1, 1, 1))


_add(SAMPLES, "_image_to_tensor",
     Sample([_IMG], grad=False), Sample([_NHWC], grad=False),
     Sample([_HWC.astype(F32)], grad=False))
_add(FAILURES, "_image_to_tensor",
     Failure([_HWC[0]], {}, ValueError, r"^_image_to_tensor: data must be an image \(H, W, C\) "
             r"or a batch of them \(N, H, W, C\) \(got shape \(5, 3\)\)", out=False))
_add(ZERO_SIZE, "_image_to_tensor",
     ZeroSize([zeros(0, 4, 5, 3)], {}, lambda x: np.zeros((0, 3, 4, 5), F32)),
     ZeroSize([zeros(4, 0, 3)], {}, lambda x: np.zeros((3, 4, 0), F32)))

_add(SAMPLES, "_image_normalize",
     Sample([_CHW], _NORM), Sample([_NCHW], {"mean": (0.5,), "std": (2.0,)}),
     Sample([_CHW.astype(F32)], {"mean": (0.5,), "std": (0.25, 0.5, 2.0)}, grad=False))
_add(FAILURES, "_image_normalize",
     Failure([uniform((4, 2, 2), seed=26)], _NORM, ValueError,
             r"^_image_normalize: data must have 1 or 3 channels \(got 4 in shape "
             r"\(4, 2, 2\)\)", out=False),
     Failure([_CHW], {"mean": (0.1, 0.2)}, ValueError,
             r"^_image_normalize: mean must hold 1 or 3 values for 3 channels \(got "
             r"\(0.1, 0.2\)\)", out=False),
     Failure([_CHW], {"std": (1.0, 0.0, 1.0)}, ValueError,
             r"^_image_normalize: std must not hold 0", out=False),
     Failure([_CHW[0]], {}, ValueError, r"^_image_normalize: data must be a tensor \(C, H, W\)",
             out=False),
     Failure([_IMG.transpose(2, 0, 1).copy()], {}, TypeError,
             r"^_image_normalize: needs a floating-point data tensor \(got uint8\); apply "
             r"ToTensor first",
             out=False))
_add(ZERO_SIZE, "_image_normalize",
     ZeroSize([zeros(0, 3, 4, 5)], _NORM, lambda x: np.zeros((0, 3, 4, 5))),
     ZeroSize([zeros(3, 0, 5)], _NORM, lambda x: np.zeros((3, 0, 5))))

_G = uniform((3, 4, 5), seed=27)
_add(SAMPLES, "_backward_image_normalize",
     Sample([_G], {"std": (0.5, 2.0, 4.0)}), Sample([_G.astype(F32)], grad=False))
_add(FAILURES, "_backward_image_normalize",
     Failure([_G], {"std": (1.0, 2.0)}, ValueError,
             r"^_backward_image_normalize: std must hold 1 or 3 values", out=False))
_add(ZERO_SIZE, "_backward_image_normalize",
     ZeroSize([zeros(0, 3, 4, 5)], {"std": (2.0,)}, lambda g: np.zeros((0, 3, 4, 5))))

for _name, _axis in (("_image_flip_left_right", -2), ("_image_flip_top_bottom", -3)):
    _add(SAMPLES, _name, Sample([_HWC]), Sample([_NHWC]), Sample([_IMG], grad=False))
    _add(FAILURES, _name,
         Failure([_HWC[0]], {}, ValueError, rf"^{_name}: data must be an image \(H, W, C\) or "
                 r"a batch of them \(N, H, W, C\) \(got shape \(5, 3\)\)", out=False))
    _add(ZERO_SIZE, _name,
         ZeroSize([zeros(0, 4, 5, 3)], {}, lambda x: np.zeros((0, 4, 5, 3))),
         ZeroSize([zeros(4, 0, 3)], {}, lambda x: np.zeros((4, 0, 3))))
