"""Shape and indexing operators: reshape, transpose, broadcast_to, concat, take, ...; the
sparse kernel of slice (csr rows, and columns, with step 1).

Results are new arrays (MXNet's operators always write an output); the zero-copy views
are NDArray methods (``x.reshape``, ``x[a:b]``).

Hidden helpers of the gradient rules are registry ops too (so that gradients of
gradients work): ``_slice_assign`` / ``_slice_assign_scalar`` (MXNet's), ``_take_grad``
and ``_pick_grad`` (scatter-adds of an output gradient into zeros).  NDArray indexing
that is not a view runs ``slice``/``take`` and writes with ``_slice_assign``,
``_take_assign`` and their scalar forms (see runtime._indexing).
"""

import numpy as np

from runtime import _index_kernels as IK
from runtime import _storage
from runtime._ndarray import as_dtype, mx_reshape, shape_size, storage_host
from runtime.ops._call import F, unbroadcast, zeros
from runtime.ops.registry import (Attr, dtype_scalar, normalize_axis, register, same_dtype,
                                   scalar_type)


_INT64_MAX = int(np.iinfo(np.int64).max)


def _axes_of(op, axes, ndim, name="axis"):
    """``normalize_axis`` of each axis; ValueError when one repeats."""
    out = tuple(normalize_axis(op, a, ndim, name) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: {name} {axes!r} repeats an axis")
    return out


def _like(g, x):
    """``g`` (same size as ``x``) with the shape of ``x`` (an NDArray or ArrayDesc)."""
    if g.shape == x.shape:
        return g
    if 0 not in x.shape:
        return g.reshape(x.shape)
    # No elements; (NDArray.reshape would read 0 as "keep", as MXNet).
    return zeros(g, x.shape)


def _reshape_grad(a, i, o, g):
    return [_like(g[0], i[0])]


# -- broadcast_to, broadcast_like --------------------------------------------------------

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


def _broadcast_kernel(attrs, ins, outs):
    np.copyto(outs[0], np.broadcast_to(ins[0], outs[0].shape))


register("broadcast_to", attrs={"shape": Attr("shape", required=True)},
         infer_shape=_broadcast_to_shape, compute=_broadcast_kernel,
         gradient=lambda a, i, o, g: [unbroadcast(g[0], i[0].shape)],
         doc="Broadcast to ``shape``; 0 in ``shape`` keeps the input's dimension (MXNet).")


def _broadcast_like_shape(attrs, shapes):
    lhs, rhs = shapes
    la, ra = attrs["lhs_axes"], attrs["rhs_axes"]
    if (la is None) != (ra is None):
        raise ValueError("broadcast_like: lhs_axes and rhs_axes must be given together")
    if la is None:
        ok = len(lhs) == len(rhs) and all(a in (1, b) for a, b in zip(lhs, rhs))
        if not ok:
            raise ValueError(f"broadcast_like: shape {lhs!r} cannot be broadcast to {rhs!r} "
                             "(MXNet: equal numbers of dimensions, each lhs one 1 or equal)")
        return [tuple(rhs)]
    if len(la) != len(ra):
        raise ValueError(f"broadcast_like: lhs_axes {la!r} and rhs_axes {ra!r} must have one "
                         "length")
    if not la:
        raise ValueError("broadcast_like: lhs_axes and rhs_axes must not be empty (got ()); "
                         "leave both out to broadcast every dimension")
    out = list(lhs)
    for a, b in zip(_axes_of("broadcast_like", la, len(lhs), "lhs_axes"),
                    _axes_of("broadcast_like", ra, len(rhs), "rhs_axes")):
        if lhs[a] not in (1, rhs[b]):
            raise ValueError(f"broadcast_like: dimension {a} of {lhs!r} ({lhs[a]}) cannot be "
                             f"broadcast to dimension {b} of {rhs!r} ({rhs[b]})")
        out[a] = rhs[b]
    return [tuple(out)]


register("broadcast_like", inputs=("lhs", "rhs"),
         attrs={"lhs_axes": Attr("axes"), "rhs_axes": Attr("axes")},
         infer_shape=_broadcast_like_shape, infer_type=lambda a, d: [d[0]],
         compute=lambda a, ins, outs: _broadcast_kernel(a, ins[:1], outs), ignores=(1,),
         gradient=lambda a, i, o, g: [unbroadcast(g[0], i[0].shape), None],
         doc="Broadcast ``lhs`` to the shape of ``rhs`` (MXNet: same number of dimensions; "
             "with lhs_axes/rhs_axes only those dimensions).  ``rhs`` gives only its shape; "
             "the output has lhs's dtype.")


# -- reshape family ----------------------------------------------------------------------

def _reshape_shape(attrs, shapes):
    if attrs["shape"] is not None:
        return [mx_reshape("reshape", shapes[0], attrs["shape"], attrs["reverse"])]
    return [_target_shape(attrs, shapes[0])]


def _target_shape(attrs, shape):
    """The output shape of MXNet's deprecated ``target_shape``: a 0 marks the one
    dimension to infer; ``keep_highest`` keeps the input's first dimension."""
    target = attrs["target_shape"]
    if target is None:
        raise TypeError("reshape: attribute 'shape' is required (or MXNet's deprecated "
                        "target_shape)")
    out = list(target)
    first = 0
    if attrs["keep_highest"]:
        if not out or not shape:
            raise ValueError(f"reshape: keep_highest needs a first dimension in the input "
                             f"{shape!r} and in target_shape {target!r}")
        out[0], first = shape[0], 1
    free = [i for i in range(first, len(out)) if out[i] == 0]
    size = shape_size(shape)
    if len(free) > 1:
        raise ValueError(f"reshape: target_shape {target!r} may leave one dimension 0 to "
                         f"infer (got {len(free)})")
    if free:
        known = shape_size(tuple(d for i, d in enumerate(out) if i != free[0]))
        out[free[0]] = size // known if known else 0
    if shape_size(tuple(out)) != size:
        raise ValueError(f"reshape: target_shape {target!r} does not hold the {size} values "
                         f"of shape {shape!r}")
    return tuple(out)


def _reshape_kernel(attrs, ins, outs):
    outs[0][...] = ins[0].reshape(outs[0].shape)


register("reshape", aliases=("Reshape",),
         attrs={"shape": Attr("shape", None), "reverse": Attr("bool", False),
                "target_shape": Attr("shape", None), "keep_highest": Attr("bool", False)},
         infer_shape=_reshape_shape, compute=_reshape_kernel, gradient=_reshape_grad,
         doc="A copy with a new shape; MXNet's special values: 0 copies the input "
             "dimension, -1 infers one dimension, -2 copies all remaining ones, -3 merges "
             "two, -4 splits one into the two values after it; ``reverse`` reads them from "
             "the right.  Without ``shape``, MXNet's deprecated ``target_shape`` (0 marks "
             "the dimension to infer; ``keep_highest`` keeps the input's first one).  "
             "(The zero-copy view is ``NDArray.reshape``.)")


def _range_of(op, v, n, name):
    """An optional begin/end index of MXNet's reshape_like in [0, n]."""
    if v is None:
        return None
    w = v + n if v < 0 else v
    if not 0 <= w <= n:
        raise ValueError(f"{op}: {name} {v} is out of range for {n} dimension(s)")
    return w


def _reshape_like_shape(attrs, shapes):
    lhs, rhs = shapes
    lb = _range_of("reshape_like", attrs["lhs_begin"], len(lhs), "lhs_begin")
    le = _range_of("reshape_like", attrs["lhs_end"], len(lhs), "lhs_end")
    rb = _range_of("reshape_like", attrs["rhs_begin"], len(rhs), "rhs_begin")
    re = _range_of("reshape_like", attrs["rhs_end"], len(rhs), "rhs_end")
    lb, le = lb or 0, len(lhs) if le is None else le
    rb, re = rb or 0, len(rhs) if re is None else re
    out = lhs[:lb] + rhs[rb:re] + lhs[le:]
    if lb > le or rb > re or shape_size(out, None, "reshape_like: shape") != shape_size(lhs):
        raise ValueError(f"reshape_like: cannot reshape an array of shape {lhs!r} into "
                         f"{out!r} (from {rhs!r})")
    return [out]


register("reshape_like", inputs=("lhs", "rhs"),
         attrs={k: Attr("axis") for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")},
         infer_shape=_reshape_like_shape, infer_type=lambda a, d: [d[0]],
         compute=_reshape_kernel, ignores=(1,),
         gradient=lambda a, i, o, g: [_like(g[0], i[0]), None],
         doc="``lhs`` reshaped to the shape of ``rhs`` (MXNet; with lhs_begin/lhs_end and "
             "rhs_begin/rhs_end, only dimensions [lhs_begin, lhs_end) of lhs are replaced "
             "by [rhs_begin, rhs_end) of rhs).")


def _perm(attrs, ndim):
    axes = attrs["axes"]
    if not axes:
        return tuple(range(ndim))[::-1]
    p = tuple(a % ndim if ndim and -ndim <= a < ndim else -1 for a in axes)
    if len(p) != ndim or sorted(p) != list(range(ndim)):
        raise ValueError(f"transpose: axes {axes!r} must be a permutation of the {ndim} "
                         "axes")
    return p


def _transpose_shape(attrs, shapes):
    return [tuple(shapes[0][k] for k in _perm(attrs, len(shapes[0])))]


def _transpose(attrs, ins, outs):
    outs[0][...] = np.transpose(ins[0], _perm(attrs, ins[0].ndim))


def _transpose_grad(a, i, o, g):
    p = _perm(a, g[0].ndim)
    return [F.transpose(g[0], axes=tuple(int(k) for k in np.argsort(p)))]


register("transpose", attrs={"axes": Attr("axes")}, infer_shape=_transpose_shape,
         compute=_transpose, gradient=_transpose_grad,
         doc="Permute the axes (default: reverse them), as MXNet; negative axes count "
             "from the end.")


def _expand_dims_shape(attrs, shapes):
    shape, axis = shapes[0], attrs["axis"]
    n = len(shape)
    if not -n - 1 <= axis <= n:
        raise ValueError(f"expand_dims: axis {axis} is out of range for an array of {n} "
                         "dimension(s)")
    a = axis + n + 1 if axis < 0 else axis
    return [shape[:a] + (1,) + shape[a:]]


register("expand_dims", attrs={"axis": Attr("int", required=True)},
         infer_shape=_expand_dims_shape, compute=_reshape_kernel, gradient=_reshape_grad,
         doc="Insert a dimension of size 1 at ``axis`` (in [-ndim-1, ndim]).")


def _squeeze_shape(attrs, shapes):
    shape, axis = shapes[0], attrs["axis"]
    if axis is None:
        out = tuple(s for s in shape if s != 1)
    else:
        axes = _axes_of("squeeze", axis, len(shape))
        for a in axes:
            if shape[a] != 1:
                raise ValueError(f"squeeze: axis {a} of shape {shape!r} has size {shape[a]}, "
                                 "not 1")
        out = tuple(s for k, s in enumerate(shape) if k not in axes)
    # MXNet never returns 0-d: squeezing every dimension leaves shape (1,).
    return [out if out or not shape else (1,)]


register("squeeze", attrs={"axis": Attr("axes")}, infer_shape=_squeeze_shape,
         compute=_reshape_kernel, gradient=_reshape_grad,
         doc="Remove dimensions of size 1 (``axis``: all of them, or those listed, which "
             "must have size 1).  As MXNet, squeezing every dimension gives shape (1,).")


def _flatten_shape(attrs, shapes):
    shape = shapes[0]
    if not shape:
        return [(1, 1)]
    return [(shape[0], shape_size(shape[1:]))]


register("flatten", aliases=("Flatten",), infer_shape=_flatten_shape,
         compute=_reshape_kernel, gradient=_reshape_grad,
         doc="Collapse all dimensions but the first: (d0, d1*...*dn); 1-D (n,) gives (n, 1) "
             "and 0-d gives (1, 1), as MXNet.")


# -- concat, stack, split ----------------------------------------------------------------

def _check_num_args(op, attrs, n):
    if attrs["num_args"] is not None and attrs["num_args"] != n:
        raise ValueError(f"{op}: num_args is {attrs['num_args']} but {n} arrays were given")


def _concat_shape(attrs, shapes):
    _check_num_args("concat", attrs, len(shapes))
    first = shapes[0]
    d = normalize_axis("concat", attrs["dim"], len(first), "dim")
    for s in shapes[1:]:
        if len(s) != len(first) or any(a != b for k, (a, b) in enumerate(zip(s, first))
                                       if k != d):
            raise ValueError(f"concat: shapes {', '.join(map(repr, shapes))} must agree "
                             f"except on dimension {d}")
    return [first[:d] + (sum(s[d] for s in shapes),) + first[d + 1:]]


def _concat(attrs, ins, outs):
    d = attrs["dim"] % ins[0].ndim
    outs[0][...] = np.concatenate(ins, axis=d)


def _concat_grad(a, i, o, g):
    # Reads only the inputs' shapes (their sizes along ``dim``), never their values.
    d = a["dim"] % g[0].ndim
    grads, off = [], 0
    for x in i:
        n = x.shape[d]
        grads.append(F.slice_axis(g[0], axis=d, begin=off, end=off + n))
        off += n
    return grads


_NUM_ARGS = {"num_args": Attr("int")}

register("concat", aliases=("Concat",), inputs=("data",), variadic=True,
         attrs={"dim": Attr("int", 1), **_NUM_ARGS}, infer_shape=_concat_shape,
         infer_type=lambda a, d: [same_dtype("concat", d)], compute=_concat,
         gradient=_concat_grad,
         doc="Join arrays along ``dim`` (default 1, as MXNet); ``num_args``, if given, "
             "must equal the number of arrays.  The gradient reads only the inputs' "
             "shapes.")


# -- Crop (MXNet's spatial crop of NCHW data) ---------------------------------------------------

def _crop_window(attrs, shapes):
    """(y, x, h, w): the window of data's last two axes that Crop keeps."""
    _check_num_args("Crop", attrs, len(shapes))
    if len(shapes) > 2:
        raise ValueError(f"Crop: takes data and at most one crop_like array (got "
                         f"{len(shapes)} arrays)")
    for name, shape in zip(("data", "crop_like"), shapes):
        if len(shape) != 4:
            raise ValueError(f"Crop: {name} must be 4-D NCHW (got shape {shape!r})")
    big_h, big_w = shapes[0][2:]
    h, w = shapes[1][2:] if len(shapes) == 2 else attrs["h_w"]
    if h < 1 or w < 1:
        raise ValueError(f"Crop: h_w must be positive, or a crop_like array given (got "
                         f"{attrs['h_w']!r})")
    if h > big_h or w > big_w:
        raise ValueError(f"Crop: the crop {(h, w)!r} must fit in data's height and width "
                         f"{(big_h, big_w)!r}")
    if attrs["center_crop"]:
        return (big_h - h) // 2, (big_w - w) // 2, h, w
    y, x = attrs["offset"]
    if not (0 <= y <= big_h - h and 0 <= x <= big_w - w):
        raise ValueError(f"Crop: offset {(y, x)!r} must keep the crop {(h, w)!r} inside "
                         f"data's height and width {(big_h, big_w)!r}")
    return y, x, h, w


def _crop_shape(attrs, shapes):
    _, _, h, w = _crop_window(attrs, shapes)
    return [shapes[0][:2] + (h, w)]


def _crop(attrs, ins, outs):
    y, x, h, w = _crop_window(attrs, [a.shape for a in ins])
    outs[0][...] = ins[0][:, :, y:y + h, x:x + w]


def _crop_grad(a, i, o, g):
    y, x, h, w = _crop_window(a, [t.shape for t in i])
    n, c = i[0].shape[:2]
    grad = F._slice_assign(zeros(i[0]), g[0], begin=(0, 0, y, x), end=(n, c, y + h, x + w))
    return [grad] + [None] * (len(i) - 1)


register("Crop", inputs=("data",), variadic=True,
         attrs={"offset": Attr("shape", (0, 0)), "h_w": Attr("shape", (0, 0)),
                "center_crop": Attr("bool", False), **_NUM_ARGS},
         infer_shape=_crop_shape, infer_type=lambda a, d: [d[0]], compute=_crop,
         ignores=(1,), gradient=_crop_grad,
         doc="The (h, w) window of NCHW ``data`` at ``offset`` = (y, x), MXNet's legacy "
             "Crop: (h, w) is ``h_w``, or the height and width of a second array "
             "(crop_like, whose values are not read); ``center_crop`` centres the window "
             "(the offset rounded down).  The gradient puts the output's gradient back "
             "in the window, zeros elsewhere.")


def _stack_shape(attrs, shapes):
    _check_num_args("stack", attrs, len(shapes))
    first = shapes[0]
    for s in shapes[1:]:
        if s != first:
            raise ValueError(f"stack: all inputs must have one shape (got "
                             f"{', '.join(map(repr, shapes))})")
    n = len(first)
    axis = attrs["axis"]
    if not -n - 1 <= axis <= n:
        raise ValueError(f"stack: axis {axis} is out of range for stacking arrays of {n} "
                         "dimension(s)")
    a = axis % (n + 1)
    return [first[:a] + (len(shapes),) + first[a:]]


def _stack(attrs, ins, outs):
    outs[0][...] = np.stack(ins, axis=attrs["axis"] % (ins[0].ndim + 1))


def _stack_grad(a, i, o, g):
    parts = F.split(g[0], num_outputs=len(i), axis=a["axis"] % g[0].ndim, squeeze_axis=True)
    return parts if isinstance(parts, list) else [parts]


register("stack", inputs=("data",), variadic=True, attrs={"axis": Attr("int", 0), **_NUM_ARGS},
         infer_shape=_stack_shape, infer_type=lambda a, d: [same_dtype("stack", d)],
         compute=_stack, gradient=_stack_grad,
         doc="Join arrays of one shape along a new axis ``axis`` (default 0).")


def _split_shape(attrs, shapes):
    shape, n = shapes[0], attrs["num_outputs"]
    if n < 1:
        raise ValueError(f"split: num_outputs must be >= 1 (got {n})")
    a = normalize_axis("split", attrs["axis"], len(shape))
    if shape[a] % n:
        raise ValueError(f"split: dimension {a} of shape {shape!r} ({shape[a]}) cannot be "
                         f"split evenly into {n} outputs")
    k = shape[a] // n
    if attrs["squeeze_axis"]:
        if k != 1:
            raise ValueError(f"split: squeeze_axis needs sections of size 1, i.e. "
                             f"num_outputs == {shape[a]} (got {n})")
        part = shape[:a] + shape[a + 1:]
    else:
        part = shape[:a] + (k,) + shape[a + 1:]
    return [part] * n


def _split(attrs, ins, outs):
    x = ins[0]
    parts = np.split(x, attrs["num_outputs"], axis=attrs["axis"] % x.ndim)
    for o, p in zip(outs, parts):
        o[...] = p.reshape(o.shape)


def _split_grad(a, i, o, g):
    if a["squeeze_axis"]:
        ndim = g[0].ndim + 1
        return [F.stack(*g, axis=a["axis"] % ndim)]
    return [F.concat(*g, dim=a["axis"] % g[0].ndim)]


register("split", aliases=("SliceChannel",),
         attrs={"num_outputs": Attr("int", required=True), "axis": Attr("int", 1),
                "squeeze_axis": Attr("bool", False)},
         num_outputs=lambda attrs: attrs["num_outputs"], infer_shape=_split_shape,
         infer_type=lambda a, d: [d[0]] * a["num_outputs"], compute=_split,
         gradient=_split_grad,
         doc="Split into ``num_outputs`` equal parts along ``axis`` (default 1, as MXNet); "
             "an uneven split raises ValueError.  ``squeeze_axis`` drops the split axis "
             "(sections must have size 1).")


# -- slice, slice_axis, _slice_assign ------------------------------------------------------

def _index_tuple(op, name, v):
    if v is None:
        return ()
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return (int(v),)
    if isinstance(v, (tuple, list)) and all(
            e is None or (isinstance(e, (int, np.integer)) and not isinstance(e, bool))
            for e in v):
        return tuple(None if e is None else int(e) for e in v)
    raise TypeError(f"{op}: {name} must be a tuple of ints or None (got {v!r})")


def _slices(op, attrs, shape):
    """The tuple of Python slices described by begin/end/step (MXNet's slice)."""
    begin = _index_tuple(op, "begin", attrs["begin"])
    end = _index_tuple(op, "end", attrs["end"])
    step = _index_tuple(op, "step", attrs["step"])
    if len(begin) != len(end) or (step and len(step) != len(begin)):
        raise ValueError(f"{op}: begin {attrs['begin']!r}, end {attrs['end']!r} and step "
                         f"{attrs['step']!r} must have one length")
    if len(begin) > len(shape):
        raise ValueError(f"{op}: begin {attrs['begin']!r} has more entries than the array "
                         f"of shape {shape!r} has dimensions")
    out = []
    for k, (b, e) in enumerate(zip(begin, end)):
        s = step[k] if step else None
        if s == 0:
            raise ValueError(f"{op}: step must not be 0 (got {attrs['step']!r})")
        out.append(slice(b, e, s))
    return tuple(out)


def _sliced_shape(op, attrs, shape):
    sl = _slices(op, attrs, shape)
    return tuple(len(range(*s.indices(n))) for s, n in zip(sl, shape)) + shape[len(sl):]


_SLICE_ATTRS = {"begin": Attr("any", required=True), "end": Attr("any", required=True),
                "step": Attr("any", ())}


def _slice_kernel(attrs, ins, outs):
    outs[0][...] = ins[0][_slices("slice", attrs, ins[0].shape)]


def _slice_attrs(a):
    return {"begin": a["begin"], "end": a["end"], "step": a["step"]}


# the sparse kernel of slice: rows (and columns) of a csr, step 1

def _csr_rows(attrs):
    """((begin, end) of the rows, (begin, end) of the columns or None) of a csr ``slice``
    with step 1 naming axis 0 or axes 0 and 1 (MXNet's SliceCsrImpl), else None."""
    begin, end, step = attrs["begin"], attrs["end"], attrs["step"]
    if not (isinstance(begin, (tuple, list)) and isinstance(end, (tuple, list))
            and len(begin) == len(end) and len(begin) in (1, 2)):
        return None
    steps = step if isinstance(step, (tuple, list)) else (step,)
    if any(s not in (None, 1) for s in steps):
        return None
    return (begin[0], end[0]), ((begin[1], end[1]) if len(begin) == 2 else None)


def _csr_slice_stypes(attrs, stypes):
    return ["csr"] if stypes[0] == "csr" and _csr_rows(attrs) is not None else None


def _csr_slice(attrs, inputs):
    x = inputs[0]
    rows, cols = _csr_rows(attrs)
    start, stop, _ = slice(*rows).indices(x.shape[0])
    stop = max(start, stop)
    indptr = storage_host(x, 0)
    lo, hi = int(indptr[start]), int(indptr[stop])
    indices, data = storage_host(x, 1)[lo:hi], storage_host(x, -1)[lo:hi]
    ptr = indptr[start:stop + 1] - lo
    ncols = x.shape[1]
    if cols is not None:         # keep the entries in [c0, c1), shifted by c0
        c0, c1, _ = slice(*cols).indices(ncols)
        ncols = max(c1 - c0, 0)
        keep = (indices >= c0) & (indices < c0 + ncols)
        kept = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))
        ptr = kept[ptr]                          # entries kept before each row's start
        indices, data = indices[keep] - c0, data[keep]
    return [_storage.from_parts("csr", (stop - start, ncols), np.dtype(x.dtype), x.ctx,
                                data, [ptr, indices], check=False)]


register("slice", aliases=("crop",), attrs=_SLICE_ATTRS,
         infer_shape=lambda a, s: [_sliced_shape("slice", a, s[0])], compute=_slice_kernel,
         compute_sparse=_csr_slice, sparse_stypes=_csr_slice_stypes,
         gradient=lambda a, i, o, g: [F._slice_assign(zeros(i[0]), g[0], **_slice_attrs(a))],
         doc="Basic slicing: ``begin``/``end``/``step`` tuples (None entries = defaults) "
             "for the leading dimensions, as MXNet's slice; indices are clipped as Python "
             "slices are (MXNet >= 1.6 behaves the same), so an empty result is possible.")


def _slice_assign_shape(attrs, shapes):
    lhs, rhs = shapes
    want = _sliced_shape("_slice_assign", attrs, lhs)
    if rhs != want:
        raise ValueError(f"_slice_assign: rhs has shape {rhs!r}, the slice of {lhs!r} has "
                         f"{want!r}")
    return [lhs]


def _slice_assign(attrs, ins, outs):
    lhs, rhs = ins
    sl = _slices("_slice_assign", attrs, lhs.shape)
    np.copyto(outs[0], lhs)
    outs[0][sl] = rhs


def _slice_assign_grad(a, i, o, g):
    return [F._slice_assign_scalar(g[0], scalar=0.0, **_slice_attrs(a)),
            F.slice(g[0], **_slice_attrs(a))]


register("_slice_assign", aliases=("_crop_assign",), inputs=("lhs", "rhs"),
         attrs=_SLICE_ATTRS, infer_shape=_slice_assign_shape,
         infer_type=lambda a, d: [same_dtype("_slice_assign", d)], compute=_slice_assign,
         inplace=[(0, 0)], gradient=_slice_assign_grad,
         doc="``lhs`` with ``lhs[begin:end:step]`` replaced by ``rhs`` (MXNet's).")


def _slice_assign_scalar(attrs, ins, outs):
    x = ins[0]
    sl = _slices("_slice_assign_scalar", attrs, x.shape)
    value = dtype_scalar("_slice_assign_scalar", "scalar", attrs["scalar"], x.dtype)
    np.copyto(outs[0], x)
    outs[0][sl] = value


def _same_shape_sliced(op):
    def infer(attrs, shapes):
        _sliced_shape(op, attrs, shapes[0])                 # validates
        return [shapes[0]]
    return infer


register("_slice_assign_scalar", aliases=("_crop_assign_scalar",),
         attrs={"scalar": Attr("float", 0.0), **_SLICE_ATTRS},
         infer_shape=_same_shape_sliced("_slice_assign_scalar"),
         infer_type=scalar_type("_slice_assign_scalar", "scalar"),
         compute=_slice_assign_scalar, inplace=[(0, 0)],
         gradient=lambda a, i, o, g: [F._slice_assign_scalar(
             g[0], scalar=0.0, **_slice_attrs(a))],
         doc="``data`` with ``data[begin:end:step]`` set to ``scalar`` (MXNet's).  The "
             "scalar is cast to ``data``'s dtype, truncated toward zero for integers; one "
             "the dtype cannot hold (NaN, an infinity, out of range) raises ValueError "
             "before anything is written.")


def _slice_axis_range(attrs, shape):
    a = normalize_axis("slice_axis", attrs["axis"], len(shape))
    n, b, e = shape[a], attrs["begin"], attrs["end"]
    b2 = b + n if b < 0 else b
    e2 = n if e is None else (e + n if e < 0 else e)
    if not 0 <= b2 <= e2 <= n:
        raise ValueError(f"slice_axis: begin {b} and end {e} are out of range for axis {a} "
                         f"of size {n}")
    return a, b2, e2


def _slice_axis_shape(attrs, shapes):
    shape = shapes[0]
    a, b, e = _slice_axis_range(attrs, shape)
    return [shape[:a] + (e - b,) + shape[a + 1:]]


def _slice_axis(attrs, ins, outs):
    x = ins[0]
    a, b, e = _slice_axis_range(attrs, x.shape)
    outs[0][...] = x[(slice(None),) * a + (slice(b, e),)]


def _slice_axis_grad(at, i, o, g):
    x = i[0]
    a, b, e = _slice_axis_range(at, x.shape)
    return [F._slice_assign(zeros(x), g[0], begin=(None,) * a + (b,),
                            end=(None,) * a + (e,))]


register("slice_axis", attrs={"axis": Attr("int", required=True),
                              "begin": Attr("int", required=True),
                              "end": Attr("axis", required=True)},
         infer_shape=_slice_axis_shape, compute=_slice_axis, gradient=_slice_axis_grad,
         doc="Elements [begin, end) along ``axis`` (``end`` None: to the end; negative "
             "values count from the end).  As MXNet, out-of-range bounds raise "
             "ValueError instead of being clipped; unlike MXNet, begin == end (an empty "
             "slice) is allowed.")


# -- take, pick, one_hot -----------------------------------------------------------------

def _index_dtype(op, dt, name="indices"):
    if dt.kind not in "iuf":
        raise TypeError(f"{op}: {name} must be integers or floats (got {dt})")


def _indices(op, ind, n, mode, axis):
    """Integer positions in [0, n) from ``ind`` (MXNet truncates float indices toward
    zero); mode 'clip', 'wrap' or 'raise' (IndexError at the first bad index)."""
    if ind.size == 0:
        return ind.astype(np.int64)
    given = ind
    if ind.dtype.kind == "f":
        finite = np.isfinite(ind)
        if not bool(finite.all()):
            pos = int(np.flatnonzero(~finite)[0])
            raise IndexError(f"{op}: index {float(ind.ravel()[pos])} at position {pos} is "
                             "not a finite number")
        ind = np.clip(np.trunc(ind), -2.0 ** 62, 2.0 ** 62)
    idx = ind.astype(np.int64)
    if n == 0:
        raise IndexError(f"{op}: cannot index axis {axis} of size 0")
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if mode == "wrap":
        return np.mod(idx, n)
    bad = (idx < -n) | (idx >= n)
    if bool(bad.any()):
        pos = int(np.flatnonzero(bad)[0])
        v = given.ravel()[pos]
        v = int(v) if v == int(v) else float(v)
        raise IndexError(f"{op}: index {v} at position {pos} is out of range for axis {axis} "
                         f"of size {n} (mode='raise')")
    return np.where(idx < 0, idx + n, idx)


_MODES = ("clip", "wrap", "raise")


def _take_shape(attrs, shapes):
    a, ind = shapes
    ax = normalize_axis("take", attrs["axis"], len(a))
    return [a[:ax] + ind + a[ax + 1:]]


def _take_type(attrs, dtypes):
    _index_dtype("take", dtypes[1])
    return [dtypes[0]]


def _take(attrs, ins, outs):
    a, ind = ins
    ax = attrs["axis"] % a.ndim
    idx = _indices("take", ind, a.shape[ax], attrs["mode"], ax)
    outs[0][...] = np.take(a, idx, axis=ax)


register("take", inputs=("a", "indices"),
         attrs={"axis": Attr("int", 0), "mode": Attr("str", "clip", choices=_MODES)},
         infer_shape=_take_shape, infer_type=_take_type, compute=_take, grad_inputs=(1,),
         gradient=lambda a, i, o, g: [F._take_grad(i[1], g[0], axis=a["axis"] % i[0].ndim,
                                                   mode=a["mode"], shape=i[0].shape), None],
         doc="Elements of ``a`` at ``indices`` along ``axis``: shape a.shape[:axis] + "
             "indices.shape + a.shape[axis+1:].  mode 'clip' (default, as MXNet: "
             "negative indices clip to 0), 'wrap', or 'raise' (IndexError naming the first "
             "bad index; negative indices count from the end, as NumPy).  Float indices are "
             "truncated toward zero as MXNet does; non-finite ones raise IndexError.  No "
             "gradient for ``indices``.")


def _take_grad_shape(attrs, shapes):
    ind, g = shapes
    shape = attrs["shape"]
    ax = normalize_axis("_take_grad", attrs["axis"], len(shape))
    want = shape[:ax] + ind + shape[ax + 1:]
    if g != want:
        raise ValueError(f"_take_grad: ograd has shape {g!r}, expected {want!r}")
    return [shape]


def _take_grad(attrs, ins, outs):
    ind, g = ins
    shape = attrs["shape"]
    ax = attrs["axis"] % len(shape)
    idx = _indices("_take_grad", ind, shape[ax], attrs["mode"], ax).ravel()
    out = outs[0]
    out[...] = 0
    gm = g.reshape(shape[:ax] + (idx.size,) + shape[ax + 1:])
    np.add.at(np.moveaxis(out, ax, 0), idx, np.moveaxis(gm, ax, 0))


register("_take_grad", inputs=("indices", "ograd"),
         attrs={"axis": Attr("int", 0), "mode": Attr("str", "clip", choices=_MODES),
                "shape": Attr("shape", required=True)},
         infer_shape=_take_grad_shape, infer_type=lambda a, d: [d[1]], compute=_take_grad,
         grad_inputs=(0,),
         gradient=lambda a, i, o, g: [None, F.take(g[0], i[0], axis=a["axis"],
                                                   mode=a["mode"])],
         doc="Gradient of take: ``ograd`` scatter-added (np.add.at) into zeros of "
             "``shape`` at ``indices`` along ``axis``.")


# -- _take_assign, _take_assign_scalar: the writing side of take (x[indices] = value) -----

_TAKE_ATTRS = {"axis": Attr("int", 0), "mode": Attr("str", "clip", choices=_MODES)}


def _take_assign_shape(attrs, shapes):
    lhs, rhs, ind = shapes
    ax = normalize_axis("_take_assign", attrs["axis"], len(lhs))
    want = lhs[:ax] + ind + lhs[ax + 1:]
    if rhs != want:
        raise ValueError(f"_take_assign: rhs has shape {rhs!r}, the elements it replaces in "
                         f"{lhs!r} have {want!r}")
    return [lhs]


def _take_assign_type(attrs, dtypes):
    _index_dtype("_take_assign", dtypes[2])
    return [same_dtype("_take_assign", dtypes[:2])]


def _put(op, attrs, out, src, ind, value):
    """``out = src`` with the elements at ``ind`` along the axis set to ``value`` (already
    moved so that the index dimensions lead).  The indices are checked first."""
    ax = attrs["axis"] % src.ndim
    idx = _indices(op, ind, src.shape[ax], attrs["mode"], ax)
    np.copyto(out, src)
    np.moveaxis(out, ax, 0)[idx] = value(ax)


def _take_assign(attrs, ins, outs):
    lhs, rhs, ind = ins
    k = ind.ndim
    _put("_take_assign", attrs, outs[0], lhs, ind,
         lambda ax: np.moveaxis(rhs, tuple(range(ax, ax + k)), tuple(range(k))))


def _take_assign_grad(a, i, o, g):
    kw = {"axis": a["axis"], "mode": a["mode"]}
    return [F._take_assign_scalar(g[0], i[2], scalar=0.0, **kw), F.take(g[0], i[2], **kw),
            None]


register("_take_assign", inputs=("lhs", "rhs", "indices"), attrs=_TAKE_ATTRS,
         infer_shape=_take_assign_shape, infer_type=_take_assign_type, compute=_take_assign,
         inplace=[(0, 0)], gradient=_take_assign_grad, grad_inputs=(2,), grad_outputs=(),
         doc="``lhs`` with the elements that ``take(lhs, indices, axis, mode)`` reads "
             "replaced by ``rhs`` (of take's result shape): NDArray's ``x[key] = value`` "
             "for integer-array and mask keys.  Repeated indices: which value is written "
             "is unspecified (NumPy's rule) and every copy gets the gradient.  No gradient "
             "for ``indices``.")


def _take_assign_scalar_shape(attrs, shapes):
    normalize_axis("_take_assign_scalar", attrs["axis"], len(shapes[0]))
    return [shapes[0]]


def _take_assign_scalar_type(attrs, dtypes):
    _index_dtype("_take_assign_scalar", dtypes[1])
    return scalar_type("_take_assign_scalar", "scalar")(attrs, dtypes)


def _take_assign_scalar(attrs, ins, outs):
    x, ind = ins
    value = dtype_scalar("_take_assign_scalar", "scalar", attrs["scalar"], x.dtype)
    _put("_take_assign_scalar", attrs, outs[0], x, ind, lambda ax: value)


register("_take_assign_scalar", inputs=("data", "indices"),
         attrs={"scalar": Attr("float", 0.0), **_TAKE_ATTRS},
         infer_shape=_take_assign_scalar_shape, infer_type=_take_assign_scalar_type,
         compute=_take_assign_scalar, inplace=[(0, 0)], grad_inputs=(1,), grad_outputs=(),
         gradient=lambda a, i, o, g: [F._take_assign_scalar(
             g[0], i[1], scalar=0.0, axis=a["axis"], mode=a["mode"]), None],
         doc="``data`` with the elements that ``take(data, indices, axis, mode)`` reads set "
             "to ``scalar`` (cast to ``data``'s dtype as ``_slice_assign_scalar`` casts "
             "it): NDArray's ``x[key] = scalar`` for integer-array and mask keys.")


def _pick_axis(attrs, shape, op="pick"):
    if attrs["axis"] is None:
        raise ValueError(f"{op}: axis=None is not supported (as MXNet); give an axis")
    return normalize_axis(op, attrs["axis"], len(shape))


def _picked_shape(shape, ax, keepdims):
    if keepdims:
        return shape[:ax] + (1,) + shape[ax + 1:]
    return (shape[:ax] + shape[ax + 1:]) or (1,)


def _pick_shape(attrs, shapes):
    data, index = shapes
    ax = _pick_axis(attrs, data)
    out = _picked_shape(data, ax, attrs["keepdims"])
    want = _picked_shape(data, ax, False)
    # MXNet's index is data's shape without the axis, keepdims or not; with keepdims the
    # output's shape (the axis as 1) is taken too
    if index != want and index != out:
        raise ValueError(f"pick: index has shape {index!r}, expected {want!r} (data {data!r} "
                         f"along axis {ax})")
    return [out]


def _pick_type(attrs, dtypes):
    _index_dtype("pick", dtypes[1], "index")
    return [dtypes[0]]


def _like_index(g, index):
    """The out-grad of pick shaped as its index (keepdims with an index without the
    axis)."""
    return g if g.shape == index.shape else F.reshape(g, shape=index.shape)


def _pick_index(op, attrs, index, shape):
    ax = _pick_axis(attrs, shape, op)
    idx = _indices(op, index, shape[ax], attrs["mode"], ax)
    return ax, idx.reshape(shape[:ax] + (1,) + shape[ax + 1:])


_ndarray = np.ndarray
_PICK_DATA = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_PICK_INDEX = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


def _pick(attrs, ins, outs):
    data, index = ins
    if (type(data) is _ndarray and data.ndim == 2 and data.shape[1] > 0
            and data.dtype in _PICK_DATA and index.dtype in _PICK_INDEX
            and _pick_axis(attrs, data.shape) == 1):
        # the rows of a matrix (a batch of class scores): one compiled pass
        if IK.pick_rows(data, index.reshape(-1), attrs["mode"] == "wrap",
                        outs[0].reshape(-1)) < 0:
            return
    ax, idx = _pick_index("pick", attrs, index, data.shape)     # raises, naming the index
    outs[0][...] = np.take_along_axis(data, idx, axis=ax).reshape(outs[0].shape)


register("pick", inputs=("data", "index"), aliases=("choose_element_0index",),
         attrs={"axis": Attr("axis", -1), "keepdims": Attr("bool", False),
                "mode": Attr("str", "clip", choices=("clip", "wrap"))},
         infer_shape=_pick_shape, infer_type=_pick_type, compute=_pick, grad_inputs=(1,),
         gradient=lambda a, i, o, g: [F._pick_grad(
             i[1], _like_index(g[0], i[1]), axis=_pick_axis(a, i[0].shape), mode=a["mode"],
             shape=i[0].shape), None],
         doc="``data[..., index, ...]`` along ``axis`` (default -1): ``index`` has the "
             "shape of data without that axis, as MXNet (with keepdims the output keeps the "
             "axis as 1, and an index of that shape is taken too); 1-D data gives shape "
             "(1,).  mode 'clip' (default) or 'wrap'; float indices are truncated.  No "
             "gradient for ``index``.")


def _pick_grad_shape(attrs, shapes):
    index, g = shapes
    shape = attrs["shape"]
    ax = normalize_axis("_pick_grad", attrs["axis"], len(shape))
    if index not in (_picked_shape(shape, ax, False), _picked_shape(shape, ax, True)):
        raise ValueError(f"_pick_grad: index has shape {index!r}, which does not match "
                         f"{shape!r} along axis {ax}")
    if g != index:
        raise ValueError(f"_pick_grad: ograd has shape {g!r}, index {index!r}")
    return [shape]


def _pick_grad(attrs, ins, outs):
    index, g = ins
    shape = attrs["shape"]
    ax, idx = _pick_index("_pick_grad", attrs, index, shape)
    out = outs[0]
    out[...] = 0
    np.put_along_axis(out, idx, g.reshape(idx.shape), axis=ax)


def _pick_grad_grad(a, i, o, g):
    index, shape = i[0], a["shape"]
    keepdims = len(shape) > 1 and index.ndim == len(shape)
    return [None, F.pick(g[0], index, axis=a["axis"], keepdims=keepdims, mode=a["mode"])]


register("_pick_grad", inputs=("index", "ograd"),
         attrs={"axis": Attr("int", -1), "mode": Attr("str", "clip", choices=("clip", "wrap")),
                "shape": Attr("shape", required=True)},
         infer_shape=_pick_grad_shape, infer_type=lambda a, d: [d[1]], compute=_pick_grad,
         gradient=_pick_grad_grad, grad_inputs=(0,),
         doc="Gradient of pick: ``ograd`` placed into zeros of ``shape`` at ``index`` "
             "along ``axis``.")


def _one_hot_shape(attrs, shapes):
    if attrs["depth"] < 0:
        raise ValueError(f"one_hot: depth must be >= 0 (got {attrs['depth']})")
    return [shapes[0] + (attrs["depth"],)]


def _one_hot_type(attrs, dtypes):
    _index_dtype("one_hot", dtypes[0])
    dtype = as_dtype(attrs["dtype"], "one_hot: dtype")
    for name in ("on_value", "off_value"):
        dtype_scalar("one_hot", name, attrs[name], dtype)
    return [dtype]


def _one_hot(attrs, ins, outs):
    ind, depth, o = ins[0], attrs["depth"], outs[0]
    res = np.full_like(o, dtype_scalar("one_hot", "off_value", attrs["off_value"], o.dtype))
    if depth and ind.size:
        idx = ind.ravel()
        if idx.dtype.kind == "f":
            # MXNet truncates; non-finite positions become -1 (an all-off row).
            idx = np.where(np.isfinite(idx), np.clip(np.trunc(idx), -1, depth), -1)
        idx = idx.astype(np.int64)
        valid = (idx >= 0) & (idx < depth)
        res.reshape(-1, depth)[np.flatnonzero(valid), idx[valid]] = \
            dtype_scalar("one_hot", "on_value", attrs["on_value"], o.dtype)
    o[...] = res


register("one_hot", inputs=("indices",),
         attrs={"depth": Attr("int", required=True), "on_value": Attr("float", 1.0),
                "off_value": Attr("float", 0.0), "dtype": Attr("dtype", "float32")},
         infer_shape=_one_hot_shape, infer_type=_one_hot_type, compute=_one_hot,
         differentiable=False,
         doc="One-hot rows of length ``depth`` (shape indices.shape + (depth,)): "
             "``on_value`` at each index, ``off_value`` elsewhere; indices outside "
             "[0, depth) give an all-off row, float indices are truncated (MXNet).  "
             "``on_value`` and ``off_value`` are cast to ``dtype`` (truncated toward zero "
             "for integers; ValueError for NaN, an infinity or out of range).  No gradient.")


# -- tile, repeat, flip ------------------------------------------------------------------

def _tile_dims(shape, reps):
    n = max(len(shape), len(reps))
    return (1,) * (n - len(shape)) + tuple(shape), (1,) * (n - len(reps)) + tuple(reps)


def _tile_shape(attrs, shapes):
    reps = attrs["reps"]
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be >= 0 (got {reps!r})")
    xs, rs = _tile_dims(shapes[0], reps)
    return [tuple(a * b for a, b in zip(xs, rs))]


def _tile(attrs, ins, outs):
    outs[0][...] = np.tile(ins[0], attrs["reps"])


def _tile_grad(a, i, o, g):
    x = i[0]
    if x.size == 0 or g[0].size == 0:
        return [zeros(x)]
    xs, rs = _tile_dims(x.shape, a["reps"])
    inter = tuple(v for pair in zip(rs, xs) for v in pair)     # (r0, d0, r1, d1, ...)
    s = F.sum(g[0].reshape(inter), axis=tuple(range(0, len(inter), 2))) if inter else g[0]
    return [_like(s, x)]


register("tile", attrs={"reps": Attr("shape", required=True)}, infer_shape=_tile_shape,
         compute=_tile, gradient=_tile_grad,
         doc="Repeat the whole array ``reps`` times per dimension (NumPy's tile, as MXNet: "
             "the shorter of shape and reps is padded with leading 1s).")


def _repeat_axis(attrs, ndim):
    return None if attrs["axis"] is None else normalize_axis("repeat", attrs["axis"], ndim)


def _repeat_shape(attrs, shapes):
    shape, r = shapes[0], attrs["repeats"]
    if r < 0:
        raise ValueError(f"repeat: repeats must be >= 0 (got {r})")
    a = _repeat_axis(attrs, len(shape))
    n = shape_size(shape) if a is None else shape[a]
    # The repeated dimension and the size must be int64s (then the allocator says whether
    # they fit in memory); the size is the larger one unless the input is empty.
    if max(n, shape_size(shape)) * r > _INT64_MAX:
        raise ValueError(f"repeat: repeats must keep the result's size within int64 for "
                         f"shape {shape!r} (got {r})")
    if a is None:
        return [(n * r,)]
    return [shape[:a] + (n * r,) + shape[a + 1:]]


def _repeat(attrs, ins, outs):
    x = ins[0]
    outs[0][...] = np.repeat(x, attrs["repeats"], axis=_repeat_axis(attrs, x.ndim))


def _repeat_grad(at, i, o, g):
    x, r = i[0], at["repeats"]
    if x.size == 0 or r == 0:
        return [zeros(x)]
    a = _repeat_axis(at, x.ndim)
    if a is None:
        return [_like(F.sum(g[0].reshape((x.size, r)), axis=1), x)]
    split = x.shape[:a] + (x.shape[a], r) + x.shape[a + 1:]
    return [_like(F.sum(g[0].reshape(split), axis=a + 1), x)]


register("repeat", attrs={"repeats": Attr("int", required=True), "axis": Attr("axis")},
         infer_shape=_repeat_shape, compute=_repeat, gradient=_repeat_grad,
         doc="Repeat each element ``repeats`` times along ``axis`` (None: of the "
             "flattened array, giving 1-D), as MXNet and NumPy.")


def _flip_axes(attrs, ndim):
    return _axes_of("flip", attrs["axis"], ndim)


def _flip_shape(attrs, shapes):
    _flip_axes(attrs, len(shapes[0]))
    return [shapes[0]]


def _flip(attrs, ins, outs):
    outs[0][...] = np.flip(ins[0], axis=_flip_axes(attrs, ins[0].ndim))


register("flip", aliases=("reverse",), attrs={"axis": Attr("axes", required=True)},
         infer_shape=_flip_shape, compute=_flip,
         gradient=lambda a, i, o, g: [F.flip(g[0], axis=a["axis"])],
         doc="Reverse the order of elements along ``axis`` (an int or a tuple; MXNet's "
             "reverse).")
