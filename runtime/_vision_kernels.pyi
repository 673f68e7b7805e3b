from typing import Any

def roi_pool_max(x: Any, batch: Any, hs: Any, he: Any, ws: Any, we: Any, out: Any,
                 arg: Any, lowest: Any) -> None: ...
