"""Image operators (MXNet's ``mx.nd.image``): the registry operators ``_image_<name>``
(runtime.ops.image documents them) under MXNet's short names.  MXNet's other image
operators (``resize``, ``crop``, the ``random_*`` ones, ``adjust_lighting``) are not
operators in ndrt: Gluon's transforms and ``mx.image`` do that work on the host."""

from runtime.nd._ops import prefixed


_op = prefixed("_image_")


to_tensor = _op("to_tensor")
normalize = _op("normalize")
flip_left_right = _op("flip_left_right")
flip_top_bottom = _op("flip_top_bottom")

__all__ = ["to_tensor", "normalize", "flip_left_right", "flip_top_bottom"]
