"""NumPy indexing keys, translated for registry operators (used by NDArray's
``__getitem__`` and ``__setitem__``).

``x[i]`` and ``x[a:b]`` (axis 0, step 1) stay views of ``x``; every other key reads or
writes through operators, so that the tape can record it:

- a basic key (ints, slices, ``...``, ``None``) is ``slice`` / ``_slice_assign`` over the
  leading axes it names (:func:`basic`), plus a reshape view that drops the int axes and
  adds the ``None`` ones;
- any other key (integer arrays, boolean masks, mixed) is ``take`` / ``_take_assign``
  of the flat positions NumPy's ``x[key]`` reads (:func:`flat`), computed on shapes
  only: O(ndim x result size), never O(x.size).

Both raise NumPy's own IndexError (ValueError for a 0 step) for keys NumPy refuses.
"""

import operator

import numpy as np


def _is_int(k):
    return type(k) is int or isinstance(k, np.integer)


def basic(shape, key):
    """``(begin, end, step, sliced, result)`` for a basic ``key`` of an array of
    ``shape``, or None when ``key`` holds anything else (NumPy's advanced indexing).

    ``begin``/``end``/``step`` are the ``slice`` operator's attributes (one entry per
    leading axis the key names; ``step`` is () when every step is 1); ``sliced`` is the
    shape the operator gives (1 for each int axis), ``result`` the shape of ``x[key]``.
    """
    if type(key) is not tuple:
        key = (key,)
    ndim = len(shape)
    used = 0
    ellipsis = False
    for k in key:
        if k is None:
            continue
        if k is Ellipsis:
            if ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis = True
        elif type(k) is slice or _is_int(k):
            used += 1
        else:
            return None
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{used} were indexed")
    begin, end, step, sliced, result = [], [], [], [], []
    stepped = False
    axis = 0
    for k in key:
        if k is None:
            result.append(1)
        elif k is Ellipsis:
            n = ndim - used
            whole = shape[axis:axis + n]
            begin += [None] * n
            end += [None] * n
            step += [None] * n
            sliced += whole
            result += whole
            axis += n
        else:
            n = shape[axis]
            if type(k) is slice:
                b, e, s = (None if v is None else operator.index(v)
                           for v in (k.start, k.stop, k.step))
                size = len(range(*slice(b, e, s).indices(n)))
                result.append(size)
                stepped = stepped or s is not None
            else:
                i = operator.index(k)
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for axis {axis} with size "
                                     f"{n}")
                b, e, s, size = i % n, i % n + 1, None, 1
            begin.append(b)
            end.append(e)
            step.append(s)
            sliced.append(size)
            axis += 1
    rest = tuple(shape[axis:])
    while begin and begin[-1] is None and end[-1] is None and step[-1] is None:
        begin.pop(), end.pop(), step.pop()          # whole trailing axes need no entry
    return (tuple(begin), tuple(end), tuple(step) if stepped else (),
            tuple(sliced) + rest, tuple(result) + rest)


def flat(shape, key):
    """The C-order flat positions of the elements ``x[key]`` reads, for an array of
    ``shape``: an int64 array of the result's shape (NumPy applies ``key`` to one
    zero-stride grid of positions per axis).  Keys whose arrays are NumPy arrays."""
    ndim = len(shape)
    if ndim == 0:
        return np.asarray(np.zeros((), np.int64)[key], order="C")
    pos = None
    stride = 1
    for axis in range(ndim - 1, -1, -1):
        along = np.arange(shape[axis], dtype=np.int64) * stride
        steps = [0] * ndim
        steps[axis] = 8
        part = np.ndarray(shape, np.int64, along, 0, steps)[key]    # a zero-stride grid
        pos = part if pos is None else pos + part
        stride *= shape[axis]
    return np.asarray(pos, np.int64, order="C")     # (ascontiguousarray makes 0-d 1-d)
