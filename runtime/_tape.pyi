from typing import Any

from runtime._ndarray import NDArray

GRAD_REQS: dict[str, int]

class Entry:
    node: Node
    index: int

class Node:
    op: Any
    attrs: dict[str, Any]
    state: Any
    seq: int
    inputs: list[Entry | None]
    in_descs: list[Any]
    out_descs: list[Any]
    consumed: bool
    grad: NDArray | None
    grad_req: int
    @property
    def name(self) -> str: ...
    def saved(self, outputs: bool, i: int, with_entry: bool) -> Any: ...

def record_call(op: Any, attrs: dict[str, Any], state: Any, inputs: list[NDArray],
                outputs: list[NDArray]) -> None: ...
def mark_variable(x: NDArray, grad: NDArray, grad_req: str) -> None: ...
def variable_node(x: NDArray) -> Node | None: ...
