# data: (n, k) C-contiguous float32/float64, k >= 1; index: (n,) float32/float64/int32/
# int64; out (n,) of data's dtype.  Returns -1, or the position of the first index that
# is not a finite number (then nothing is written).
import numpy as np

def pick_rows(data: np.ndarray, index: np.ndarray, wrap: bool, out: np.ndarray) -> int: ...
