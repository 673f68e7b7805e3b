# x: (n, k) C-contiguous float32/float64; label: (n,) float32/float64/int32/int64;
# ograd (n,) and out of x's dtype.  Each returns -1, or the position of the first label
# that is not an integer in [0, k) (then nothing is written).
import numpy as np

def softmax_ce(x: np.ndarray, label: np.ndarray, out: np.ndarray,
               prob: np.ndarray | None = None) -> int: ...
def softmax_ce_grad(x: np.ndarray, label: np.ndarray, ograd: np.ndarray,
                    out: np.ndarray) -> int: ...
# x: (n, k) C-contiguous float32/float64, k >= 1; out of x's shape and dtype (may be x).
def log_softmax_rows(x: np.ndarray, out: np.ndarray) -> None: ...
