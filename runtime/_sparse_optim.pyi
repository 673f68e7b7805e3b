# float32/float64 values (one dtype for every array), int64 row indices; updates in place.
import numpy as np
import numpy.typing as npt

def sgd_update(weight: np.ndarray, grad: np.ndarray, rows: npt.NDArray[np.int64] | None,
               mom: np.ndarray | None, lr: float, wd: float, rescale_grad: float,
               clip_gradient: float, momentum: float, lazy: bool) -> int: ...
def adam_update(weight: np.ndarray, grad: np.ndarray, rows: npt.NDArray[np.int64] | None,
                mean: np.ndarray, var: np.ndarray, lr: float, beta1: float, beta2: float,
                epsilon: float, wd: float, rescale_grad: float, clip_gradient: float,
                lazy: bool) -> int: ...
def adagrad_update(weight: np.ndarray, grad: np.ndarray, rows: npt.NDArray[np.int64] | None,
                   history: np.ndarray, lr: float, epsilon: float, wd: float,
                   rescale_grad: float, clip_gradient: float, lazy: bool) -> int: ...
