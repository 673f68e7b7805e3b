from typing import Any

def max_pool_route(x: Any, src: Any, dst: Any, kernel: Any, stride: Any, pad: Any,
                   lowest: Any, scatter: Any) -> None: ...
