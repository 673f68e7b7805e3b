# out: the updated weight (weight itself for the in-place call, else weight is copied into
# it first); float32/float64 values, one dtype for every array; int64 row indices of a
# row_sparse grad (None: a dense grad).  States are updated in place.
import numpy as np
import numpy.typing as npt

def sgd_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
               rows: npt.NDArray[np.int64] | None, mom: np.ndarray | None, lr: float,
               wd: float, rescale_grad: float, clip_gradient: float, momentum: float,
               lazy: bool) -> None: ...
def multi_sgd_update(outs: list[np.ndarray], weights: list[np.ndarray],
                     grads: list[np.ndarray], moms: list[np.ndarray] | None,
                     lrs: tuple[float, ...], wds: tuple[float, ...], rescale_grad: float,
                     clip_gradient: float, momentum: float) -> None: ...
def adam_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
                rows: npt.NDArray[np.int64] | None, mean: np.ndarray, var: np.ndarray,
                lr: float, beta1: float, beta2: float, epsilon: float, wd: float,
                rescale_grad: float, clip_gradient: float, lazy: bool) -> None: ...
def adagrad_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
                   rows: npt.NDArray[np.int64] | None, history: np.ndarray, lr: float,
                   epsilon: float, wd: float, rescale_grad: float, clip_gradient: float,
                   lazy: bool) -> None: ...
def nag_mom_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
                   rows: npt.NDArray[np.int64] | None, mom: np.ndarray, lr: float,
                   momentum: float, wd: float, rescale_grad: float, clip_gradient: float,
                   lazy: bool) -> None: ...
def rmsprop_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
                   rows: npt.NDArray[np.int64] | None, n: np.ndarray, lr: float,
                   gamma1: float, epsilon: float, wd: float, rescale_grad: float,
                   clip_gradient: float, clip_weights: float, lazy: bool) -> None: ...
def ftrl_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
                rows: npt.NDArray[np.int64] | None, z: np.ndarray, n: np.ndarray, lr: float,
                lamda1: float, beta: float, wd: float, rescale_grad: float,
                clip_gradient: float, lazy: bool) -> None: ...
def signum_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
                  rows: npt.NDArray[np.int64] | None, mom: np.ndarray | None, lr: float,
                  momentum: float, wd: float, rescale_grad: float, clip_gradient: float,
                  wd_lh: float, lazy: bool) -> None: ...
def rmspropalex_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
                       rows: npt.NDArray[np.int64] | None, n: np.ndarray, g: np.ndarray,
                       delta: np.ndarray, lr: float, gamma1: float, gamma2: float,
                       epsilon: float, wd: float, rescale_grad: float, clip_gradient: float,
                       clip_weights: float, lazy: bool) -> None: ...
def ftml_update(out: np.ndarray, weight: np.ndarray, grad: np.ndarray,
                rows: npt.NDArray[np.int64] | None, d: np.ndarray, v: np.ndarray, z: np.ndarray,
                lr: float, beta1: float, beta2: float, epsilon: float, t: int, wd: float,
                rescale_grad: float, clip_grad: float, lazy: bool) -> None: ...
