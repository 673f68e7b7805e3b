# buf: the ranks' blocks as one Allgatherv delivered them: rank r's counts[r] sorted,
# unique int64 row ids at byte offsets[r] (8-aligned), then its rows of row_bytes each.
# merge_blocks: the sorted union into union_ids and each id's rows, added in rank order
# from zero, into out (float32/float64, width columns), both with room for counts.sum()
# rows; returns (distinct ids, -1, -1), or (-1, rank, position) of the first id not
# above its predecessor.
import numpy as np

def merge_blocks(buf: np.ndarray, counts: np.ndarray, offsets: np.ndarray,
                 union_ids: np.ndarray, out: np.ndarray) -> tuple[int, int, int]: ...
# grad, residual (n,) float32/float64 of one dtype; codes (ceil(n / 4),) uint8.
def quantize_2bit(grad: np.ndarray, residual: np.ndarray, threshold: float,
                  codes: np.ndarray) -> None: ...
def dequantize_2bit_add(codes: np.ndarray, threshold: float, out: np.ndarray) -> None: ...
