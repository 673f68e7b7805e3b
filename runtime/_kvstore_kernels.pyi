# ids: one rank's sorted unique int64 row ids; rows (len(ids), width) float32/float64;
# union_ids the sorted union of every rank's ids; out (len(union_ids), width) of rows'
# dtype, added into.  Returns -1, or the position of the first id not above its
# predecessor or not in union_ids (then nothing is written).
import numpy as np

def merge_rows(ids: np.ndarray, rows: np.ndarray, union_ids: np.ndarray,
               out: np.ndarray) -> int: ...
# grad, residual (n,) float32/float64 of one dtype; codes (ceil(n / 4),) uint8.
def quantize_2bit(grad: np.ndarray, residual: np.ndarray, threshold: float,
                  codes: np.ndarray) -> None: ...
def dequantize_2bit_add(codes: np.ndarray, threshold: float, out: np.ndarray) -> None: ...
