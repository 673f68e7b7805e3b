"""Shape and indexing operators: reshape, transpose, broadcast_to, concat, take, ...

Results are new arrays (MXNet's operators always write an output); the zero-copy views
are NDArray methods (``x.reshape``, ``x[a:b]``).
"""

import numpy as np

from runtime.ops._call import F, unbroadcast
from runtime.ops.registry import Attr, register


def _broadcast_to_shape(attrs, shapes):
    src, want = shapes[0], attrs["shape"]
    # MXNet: 0 in the target keeps the input's dimension.
    want = tuple(s if w == 0 and len(want) == len(src) else w
                 for w, s in zip(want, src + (0,) * (len(want) - len(src))))
    try:
        np.broadcast_shapes(src, want)
        if np.broadcast_shapes(src, want) != want:
            raise ValueError
    except ValueError:
        raise ValueError(f"broadcast_to: shape {shapes[0]!r} cannot be broadcast to "
                         f"{attrs['shape']!r}") from None
    return [want]


def _broadcast_to(attrs, ins, outs):
    np.copyto(outs[0], np.broadcast_to(ins[0], outs[0].shape))


register("broadcast_to", attrs={"shape": Attr("shape", required=True)},
         infer_shape=_broadcast_to_shape, compute=_broadcast_to, grad_inputs=(0,),
         gradient=lambda a, i, o, g: [unbroadcast(g[0], i[0].shape)])
