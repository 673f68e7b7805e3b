# float32/float64 values (rsp_retain: any dtype), int64 indices.
import numpy as np
import numpy.typing as npt

def csr_dot_dense(indptr: npt.NDArray[np.int64], indices: npt.NDArray[np.int64],
                  data: np.ndarray, dense2d: np.ndarray, out2d: np.ndarray,
                  rowmap: npt.NDArray[np.int64] | None = None) -> int: ...
class ColumnPlan:
    cols: npt.NDArray[np.int64]
    pos: npt.NDArray[np.int64]
    colptr: npt.NDArray[np.int64]
    ncols: int
    use_map: bool
    @property
    def nused(self) -> int: ...

def csr_column_plan(indptr: npt.NDArray[np.int64], indices: npt.NDArray[np.int64], ncols: int,
                    rowmap: npt.NDArray[np.int64] | None = None) -> ColumnPlan: ...
def csr_t_dot_dense(indptr: npt.NDArray[np.int64], indices: npt.NDArray[np.int64],
                    data: np.ndarray, dense2d: np.ndarray, plan: ColumnPlan,
                    indices_out: npt.NDArray[np.int64], data2d_out: np.ndarray,
                    rowmap: npt.NDArray[np.int64] | None = None) -> int: ...
def dense_dot_csr_t(dense2d: np.ndarray, indptr: npt.NDArray[np.int64],
                    indices: npt.NDArray[np.int64], data: np.ndarray,
                    out2d: np.ndarray) -> int: ...

def csr_binary_count(op: str, a_indptr: npt.NDArray[np.int64], a_indices: npt.NDArray[np.int64],
                     a_data: np.ndarray, b_indptr: npt.NDArray[np.int64],
                     b_indices: npt.NDArray[np.int64], b_data: np.ndarray,
                     indptr_out: npt.NDArray[np.int64]) -> int: ...
def csr_binary_fill(op: str, a_indptr: npt.NDArray[np.int64], a_indices: npt.NDArray[np.int64],
                    a_data: np.ndarray, b_indptr: npt.NDArray[np.int64],
                    b_indices: npt.NDArray[np.int64], b_data: np.ndarray,
                    indptr: npt.NDArray[np.int64], indices_out: npt.NDArray[np.int64],
                    data_out: np.ndarray) -> int: ...
def rsp_binary_count(op: str, a_indices: npt.NDArray[np.int64],
                     b_indices: npt.NDArray[np.int64]) -> int: ...
def rsp_binary(op: str, a_indices: npt.NDArray[np.int64], a_data2d: np.ndarray,
               b_indices: npt.NDArray[np.int64], b_data2d: np.ndarray,
               indices_out: npt.NDArray[np.int64], data2d_out: np.ndarray) -> int: ...
def rsp_mul_dense(indices: npt.NDArray[np.int64], data2d: np.ndarray, dense2d: np.ndarray,
                  data2d_out: np.ndarray) -> int: ...
def rsp_union_count(indices_list: list[npt.NDArray[np.int64]]) -> int: ...
def rsp_add_n(indices_list: list[npt.NDArray[np.int64]], data2d_list: list[np.ndarray],
              indices_out: npt.NDArray[np.int64], data2d_out: np.ndarray) -> int: ...

def csr_sum(indptr: npt.NDArray[np.int64], indices: npt.NDArray[np.int64], data: np.ndarray,
            axis: int, out: np.ndarray, scale: float = 1.0) -> int: ...
def square_sum(data2d: np.ndarray, axis: int, out: np.ndarray) -> int: ...
def rsp_retain(indices: npt.NDArray[np.int64], data2d: np.ndarray,
               keep: npt.NDArray[np.int64], indices_out: npt.NDArray[np.int64],
               data2d_out: np.ndarray) -> int: ...
