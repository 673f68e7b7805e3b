"""CTCLoss against independent references: brute-force enumeration of every alignment on
tiny inputs (float64), a per-sample textbook recursion in probability space on larger
ones; MXNet's documented conventions (blank first/last, padding, lengths); gradients
against float64 central differences; MXNet's result for labels that cannot be aligned;
bad input."""

import itertools

import numpy as np
import pytest

from runtime import autograd, nd
from runtime.gluon import loss as L
from runtime.ops._call import F
from tests.runtime.conftest import frees_arrays, free_failing_tests
from runtime.gluon import loss as gloss


def rand(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def a64(x):
    return nd.array(x, dtype="float64")


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def collapse(path, blank):
    out, prev = [], None
    for k in path:
        if k != prev and k != blank:
            out.append(k)
        prev = k
    return out


def brute_nll(x, label, blank):
    """-log p(label | x) for one sequence x (T, C) by summing over all C**T paths."""
    t, c = x.shape
    p = softmax(x)
    total = 0.0
    for path in itertools.product(range(c), repeat=t):
        if collapse(path, blank) == list(label):
            total += np.prod(p[np.arange(t), path])
    with np.errstate(divide="ignore"):
        return -np.log(total)


def textbook_nll(x, label, blank):
    """Graves' alpha recursion in probability space (scaled per frame), one sequence."""
    p = softmax(x)
    ext = [blank]
    for k in label:
        ext += [k, blank]
    s, t_len = len(ext), len(p)
    alpha = np.zeros(s)
    alpha[0] = p[0, blank]
    if s > 1:
        alpha[1] = p[0, ext[1]]
    log_scale = np.log(alpha.sum())
    alpha /= alpha.sum()
    for t in range(1, t_len):
        new = np.zeros(s)
        for i in range(s):
            a = alpha[i] + (alpha[i - 1] if i >= 1 else 0.0)
            if i >= 2 and ext[i] != blank and ext[i] != ext[i - 2]:
                a += alpha[i - 2]
            new[i] = a * p[t, ext[i]]
        log_scale += np.log(new.sum())
        alpha = new / new.sum()
    end = alpha[-1] + (alpha[-2] if s > 1 else 0.0)
    return -(np.log(end) + log_scale)


# -- against brute force -------------------------------------------------------------------

@frees_arrays
@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_matches_brute_force_enumeration(blank_label):
    rng = np.random.default_rng(1)
    for trial in range(12):
        t, c, n = int(rng.integers(1, 6)), int(rng.integers(2, 4)), 3
        x = rng.normal(size=(t, n, c)) * 1.5
        lo, hi = (1, c - 1) if blank_label == "first" else (0, c - 2)
        pad = 0 if blank_label == "first" else -1
        width = int(rng.integers(0, t + 1))
        label = np.full((n, width), pad, np.int64)
        lens = rng.integers(0, width + 1, n)
        for i in range(n):
            label[i, :lens[i]] = rng.integers(lo, hi + 1, lens[i])
        got = nd.ctc_loss(a64(x), nd.array(label, dtype="int64"),
                          blank_label=blank_label).asnumpy()
        blank = 0 if blank_label == "first" else c - 1
        for i in range(n):
            want = brute_nll(x[:, i], label[i, :lens[i]], blank)
            if np.isinf(want):      # no alignment: MXNet's kernel gives 0
                assert got[i] == 0, (trial, i)
            else:
                np.testing.assert_allclose(got[i], want, rtol=1e-10, err_msg=f"{trial} {i}")


@frees_arrays
def test_lengths_match_brute_force_on_the_slices():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 4, 3))
    label = np.array([[1, 2, 2], [2, 1, 1], [1, 1, 2], [2, 2, 2]], np.int64)
    dl, ll = np.array([5, 3, 4, 2]), np.array([2, 1, 2, 0])
    got = nd.CTCLoss(a64(x), nd.array(label), nd.array(dl), nd.array(ll),
                     use_data_lengths=True, use_label_lengths=True).asnumpy()
    for i in range(4):
        want = brute_nll(x[:dl[i], i], label[i, :ll[i]], 0)
        np.testing.assert_allclose(got[i], want, rtol=1e-10)
    # label_lengths alone, by keyword or after a None: MXNet's generated functions skip
    # the absent data_lengths
    by_name = nd.ctc_loss(a64(x), nd.array(label), label_lengths=nd.array(ll),
                          use_label_lengths=True).asnumpy()
    after_none = nd.CTCLoss(a64(x), nd.array(label), None, nd.array(ll),
                            use_label_lengths=True).asnumpy()
    for i in range(4):
        want = brute_nll(x[:, i], label[i, :ll[i]], 0)
        np.testing.assert_allclose(by_name[i], want, rtol=1e-10)
        np.testing.assert_allclose(after_none[i], want, rtol=1e-10)
    # use_data_lengths alone: the label ends at its first 0 (blank 'first')
    label2 = np.array([[1, 0, 2], [2, 1, 0], [1, 1, 2], [0, 2, 2]], np.int64)
    got = nd.CTCLoss(a64(x), nd.array(label2), nd.array(dl),
                     use_data_lengths=True).asnumpy()
    for i, lab in enumerate([[1], [2, 1], [1, 1, 2], []]):
        want = brute_nll(x[:dl[i], i], lab, 0)
        assert (got[i] == 0) if np.isinf(want) else np.isclose(got[i], want, rtol=1e-10)


@frees_arrays
def test_realistic_size_matches_textbook_recursion():
    rng = np.random.default_rng(3)
    t, n, c, width = 40, 6, 7, 10
    x = rng.normal(size=(t, n, c)) * 2
    label = rng.integers(1, c, (n, width))
    label[1, 3] = label[1, 2]                   # repeats need a blank between them
    ll = np.array([10, 4, 7, 1, 0, 9])
    dl = np.array([40, 25, 33, 2, 1, 40])
    got = nd.ctc_loss(a64(x), nd.array(label), nd.array(dl), nd.array(ll),
                      use_data_lengths=True, use_label_lengths=True).asnumpy()
    want = [textbook_nll(x[:dl[i], i], label[i, :ll[i]], 0) for i in range(n)]
    np.testing.assert_allclose(got, want, rtol=1e-9)


@frees_arrays
def test_float32_and_float16_follow_float64():
    x = rand((6, 3, 5), 4)
    label = np.array([[1, 2, 3], [4, 4, 0], [2, 0, 0]])
    ref = nd.ctc_loss(a64(x), nd.array(label)).asnumpy()
    for dtype, tol in (("float32", 1e-5), ("float16", 2e-3)):
        got = nd.ctc_loss(nd.array(x, dtype=dtype), nd.array(label, dtype=dtype))
        assert got.dtype == np.dtype(dtype) and got.shape == (3,)
        np.testing.assert_allclose(got.asnumpy().astype(np.float64), ref, rtol=tol)


# -- MXNet's conventions -------------------------------------------------------------------

@frees_arrays
def test_blank_first_and_last_are_the_same_loss_relabelled():
    """'last' with symbols k - 1 and the blank moved to the end is 'first' permuted."""
    x = rand((5, 2, 4), 5)
    first = np.array([[1, 3, 0], [2, 2, 1]])
    last = np.array([[0, 2, -1], [1, 1, 0]])
    x_last = np.concatenate([x[:, :, 1:], x[:, :, :1]], axis=2)
    a = nd.ctc_loss(a64(x), nd.array(first)).asnumpy()
    b = nd.ctc_loss(a64(x_last), nd.array(last), blank_label="last").asnumpy()
    np.testing.assert_allclose(a, b, rtol=1e-12)
    # with 'last', 0 is a symbol (not padding): the label [0, 2] has length 2
    np.testing.assert_allclose(b[0], brute_nll(x_last[:, 0], [0, 2], 3), rtol=1e-10)


@frees_arrays
def test_padding_ends_the_label_and_later_values_are_ignored():
    x = rand((4, 1, 3), 6)
    a = nd.ctc_loss(a64(x), nd.array([[2, 0, 1]])).asnumpy()       # label [2]
    b = nd.ctc_loss(a64(x), nd.array([[2, 0, 2]])).asnumpy()
    np.testing.assert_allclose(a, brute_nll(x[:, 0], [2], 0), rtol=1e-10)
    np.testing.assert_array_equal(a, b)
    c = nd.ctc_loss(a64(x), nd.array([[1, -1, 5]]), blank_label="last").asnumpy()
    np.testing.assert_allclose(c, brute_nll(x[:, 0], [1], 2), rtol=1e-10)
    # explicit label_lengths override padding: a 0 within the length is, as in MXNet
    # (warp-ctc), a symbol emitting the blank (never entered by a skip)
    d = nd.ctc_loss(a64(x), nd.array([[2, 0, 1]]), nd.array([3]), use_label_lengths=True)
    np.testing.assert_allclose(d.asnumpy(), textbook_nll(x[:, 0], [2, 0, 1], 0), rtol=1e-10)


@frees_arrays
def test_impossible_alignment_gives_mxnets_zero_loss_and_gradient():
    """MXNet's CPU kernel (warp-ctc) returns loss 0 (not infinity) when the label plus
    the blanks its repeats need is longer than the sequence, and leaves no gradient."""
    x = rand((3, 3, 3), 7)
    label = np.array([[1, 1, 0], [1, 2, 1], [1, 1, 1]])   # needs 3, 3, 5 frames
    dl = np.array([2, 3, 3])
    xa = a64(x)
    xa.attach_grad()
    with autograd.record():
        loss = nd.ctc_loss(xa, nd.array(label), nd.array(dl), use_data_lengths=True)
    loss.backward()
    got, g = loss.asnumpy(), xa.grad.asnumpy()
    assert got[0] == 0 and got[2] == 0
    np.testing.assert_allclose(got[1], brute_nll(x[:, 1], [1, 2, 1], 0), rtol=1e-10)
    assert np.all(g[:, 0] == 0) and np.all(g[:, 2] == 0)
    assert np.any(g[:, 1] != 0)
    # a label wider than the sequence is a shape error (MXNet's CHECK_GE)
    with pytest.raises(ValueError, match=r"^CTCLoss: the label length \(label's axis 1\) "
                                         r"cannot exceed the sequence length"):
        nd.ctc_loss(a64(x), nd.array(np.ones((3, 4))))


def extended_paths_nll(x, label, blank):
    """-log p by summing over every walk through warp-ctc's extended label (blank, l1,
    blank, ..., blank) that starts at one of its first two positions and ends at one of
    its last two: stay, step, or skip a blank to a symbol that is not the blank's value
    and differs from the one before (a symbol equal to the blank emits the blank)."""
    p = softmax(x)
    ext = [blank]
    for k in label:
        ext += [k, blank]
    s, total = len(ext), 0.0
    for walk in itertools.product(range(s), repeat=len(p)):
        if walk[0] > 1 or walk[-1] < s - 2:
            continue
        ok = all(b - a in (0, 1) or (b - a == 2 and ext[b] != blank and ext[b] != ext[a])
                 for a, b in zip(walk, walk[1:]))
        if ok:
            total += np.prod([p[t, ext[w]] for t, w in enumerate(walk)])
    with np.errstate(divide="ignore"):
        return -np.log(total)


def test_a_label_holding_the_blank_that_no_path_reaches_gives_zero_loss_and_gradient():
    """Labels [1, 3] with 4 classes and blank_label='last': the symbol 3 emits the blank
    and cannot be skipped into, so two frames hold no path (warp-ctc: loss inf, gradient
    NaN); here it is unalignable, loss 0 and no gradient.  Three frames hold paths: a
    finite loss, as the walks through the extended label give."""
    x = rand((3, 2, 4), 21)
    for frames in (2, 3):
        xa = a64(x)
        xa.attach_grad()
        with autograd.record():
            loss = nd.ctc_loss(xa, nd.array([[1, 3], [0, 2]]), nd.array([frames, 3]),
                               use_data_lengths=True, blank_label="last")
        loss.backward()
        got, g = loss.asnumpy(), xa.grad.asnumpy()
        assert np.all(np.isfinite(got)) and np.all(np.isfinite(g))
        np.testing.assert_allclose(got[1], brute_nll(x[:, 1], [0, 2], 3), rtol=1e-10)
        if frames == 2:
            assert got[0] == 0 and np.all(g[:, 0] == 0)
        else:
            np.testing.assert_allclose(got[0], extended_paths_nll(x[:, 0], [1, 3], 3),
                                       rtol=1e-10)
            assert np.any(g[:, 0] != 0)
    # the reference agrees with the brute force on an ordinary label
    np.testing.assert_allclose(extended_paths_nll(x[:, 1], [0, 2], 3),
                               brute_nll(x[:, 1], [0, 2], 3), rtol=1e-12)


@frees_arrays
def test_zero_frames_and_empty_labels():
    x = rand((3, 2, 3), 8)
    got = nd.ctc_loss(a64(x), nd.array([[0], [1]]), nd.array([0, 0]),
                      use_data_lengths=True).asnumpy()
    np.testing.assert_array_equal(got, [0.0, 0.0])    # p(empty) = 1; [1]: impossible
    got = nd.ctc_loss(a64(x), nd.array(np.zeros((2, 0)))).asnumpy()
    np.testing.assert_allclose(got, -np.log(softmax(x)[:, :, 0]).sum(axis=0), rtol=1e-12)


@frees_arrays
def test_names_and_namespaces():
    x, label = a64(rand((4, 2, 3))), nd.array([[1, 2], [2, 0]])
    want = nd.CTCLoss(x, label).asnumpy()
    for fn in (nd.ctc_loss, nd._contrib_CTCLoss, nd._contrib_ctc_loss, nd.contrib.ctc_loss,
               nd.contrib.CTCLoss):
        np.testing.assert_array_equal(fn(x, label).asnumpy(), want)
    # attributes by position after the four array slots, in MXNet's order
    # (use_data_lengths, use_label_lengths, blank_label); an unused slot is None, and a
    # length array fills the first free slot, as MXNet appends the arrays it is given
    got = nd.CTCLoss(x, label, nd.array([2, 1]), None, False, True, "first").asnumpy()
    np.testing.assert_array_equal(got, want)
    assert "blank_label" in nd.CTCLoss.__doc__


# -- gradients -----------------------------------------------------------------------------

def _num_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


@frees_arrays
@pytest.mark.parametrize("attrs,extra", [
    ({}, []),
    ({"blank_label": "last"}, []),
    ({"use_data_lengths": True, "use_label_lengths": True}, [[4, 3, 5], [2, 1, 0]]),
])
def test_gradient_against_central_differences(attrs, extra):
    x = rand((5, 3, 3), 9)
    label = (np.array([[1, 2, 1], [2, 2, 0], [1, 0, 0]]) if "blank_label" not in attrs
             else np.array([[0, 1, 0], [1, 1, -1], [0, -1, -1]]))
    head = np.array([0.7, -1.3, 2.0])
    ins = [nd.array(label)] + [nd.array(e) for e in extra]

    def f(v):
        return float(np.sum(nd.ctc_loss(a64(v), *ins, **attrs).asnumpy() * head))

    xa = a64(x)
    xa.attach_grad()
    with autograd.record():
        loss = nd.ctc_loss(xa, *ins, **attrs)
    loss.backward(a64(head))
    np.testing.assert_allclose(xa.grad.asnumpy(), _num_grad(f, x), rtol=1e-6, atol=1e-8)
    if extra:       # frames beyond data_lengths get a zero gradient (MXNet masks them)
        assert np.all(xa.grad.asnumpy()[4:, 0] == 0) and np.all(xa.grad.asnumpy()[3:, 1] == 0)


@frees_arrays
def test_gradient_is_softmax_minus_occupancy():
    """Per frame the gradient sums to 0 (softmax and the occupancy each sum to 1)."""
    x = rand((8, 4, 5), 10)
    label = np.array([[1, 2, 3], [4, 4, 0], [2, 0, 0], [0, 0, 0]])
    xa = a64(x)
    xa.attach_grad()
    with autograd.record():
        loss = nd.ctc_loss(xa, nd.array(label))
    loss.backward()
    g = xa.grad.asnumpy()
    np.testing.assert_allclose(g.sum(axis=2), 0, atol=1e-12)
    # the empty label: every frame is blank, the gradient is softmax - one_hot(blank)
    want = softmax(x[:, 3])
    want[:, 0] -= 1
    np.testing.assert_allclose(g[:, 3], want, rtol=1e-12, atol=1e-14)


@frees_arrays
def test_rule_without_the_forward_state_recomputes_the_same_gradient():
    x = rand((6, 2, 4), 11)
    label, dl = nd.array([[1, 3], [2, 0]]), nd.array([6, 4])
    xa = a64(x)
    xa.attach_grad()
    with autograd.record():
        loss = nd.ctc_loss(xa, label, dl, use_data_lengths=True)
    loss.backward()
    unit = F._ctc_loss_grad(a64(x), label, dl, use_data_lengths=True)
    np.testing.assert_allclose(unit.asnumpy(), xa.grad.asnumpy(), rtol=1e-13, atol=1e-15)
    # under create_graph the first-order gradient comes from _ctc_loss_grad; it has no
    # rule of its own, so a second backward says so instead of giving a wrong value
    xb = a64(x)
    xb.attach_grad()
    with autograd.record():
        loss = nd.ctc_loss(xb, label, dl, use_data_lengths=True)
        (g,) = autograd.grad(loss, [xb], create_graph=True)
    np.testing.assert_allclose(g.asnumpy(), xa.grad.asnumpy(), rtol=1e-13, atol=1e-15)
    with pytest.raises(Exception, match="_ctc_loss_grad"):
        with autograd.record():
            s = nd.sum(g * g)
        s.backward()


# -- bad input -----------------------------------------------------------------------------

@frees_arrays
def test_bad_input_is_refused_with_clear_messages():
    x = a64(rand((4, 2, 3)))
    lab = nd.array([[1, 2], [2, 1]])
    cases = [
        (lambda: nd.ctc_loss(x, nd.array([[1, 2], [-1, 1]])), ValueError,
         r"^CTCLoss: label must hold symbols in \[0, 2\] within its length .*\(got -1(\.0)? at "
         r"\(1, 0\)\)"),
        (lambda: nd.ctc_loss(x, nd.array([[0, 3], [2, 1]]), blank_label="last"),
         ValueError, r"^CTCLoss: label must hold symbols in \[0, 2\] within its length "
                     r"\(alphabet_size 3, blank_label='last'\) \(got 3"),
        (lambda: nd.ctc_loss(x, nd.array([[1.5, 2], [2, 1]])), ValueError,
         r"^CTCLoss: label must hold symbols .*\(got 1.5 at \(0, 0\)\)"),
        (lambda: nd.ctc_loss(x, lab, nd.array([4, -1]), use_data_lengths=True), ValueError,
         r"^CTCLoss: data_lengths must hold integers in \[0, 4\]"),
        (lambda: nd.ctc_loss(x, lab, nd.array([3, 2]), use_label_lengths=True), ValueError,
         r"^CTCLoss: label_lengths must hold integers in \[0, 2\] \(label's axis 1\) \(got 3"),
        (lambda: nd.ctc_loss(x, lab, nd.array([3, 2])), ValueError,
         r"^CTCLoss: takes 2 array inputs \(data, label\)"),
        (lambda: nd.ctc_loss(x, lab, blank_label="middle"), ValueError, "blank_label"),
        (lambda: nd.ctc_loss(x, nd.array([1, 2])), ValueError,
         r"^CTCLoss: label must be 2-D \(batch, label_length\) \(got shape \(2,\)\)"),
        (lambda: nd.ctc_loss(a64(np.zeros((4, 2, 0))), nd.array(np.zeros((2, 0)))),
         ValueError, r"^CTCLoss: data's alphabet_size \(axis 2\) must be at least 1"),
        (lambda: nd.ctc_loss(a64(np.zeros((4, 2, 1))), lab), ValueError,
         r"^CTCLoss: label must hold symbols in \[0, 0\] within its length"),
        (lambda: nd.ctc_loss(x, nd.array([[True, False]] * 2, dtype="bool")), TypeError,
         r"^CTCLoss: label must hold integers"),
    ]
    for call, exc, match in cases:
        with pytest.raises(exc, match=match):
            call()


@frees_arrays
def test_failed_call_leaves_out_unchanged():
    x = a64(rand((4, 2, 3)))
    out = a64(np.array([5.0, 6.0]))
    with pytest.raises(ValueError):
        nd.ctc_loss(x, nd.array([[1, 3], [2, 1]]), out=out)
    np.testing.assert_array_equal(out.asnumpy(), [5.0, 6.0])
    nd.ctc_loss(x, nd.array([[1, 2], [2, 1]]), out=out)
    np.testing.assert_allclose(out.asnumpy(), [brute_nll(x.asnumpy()[:, 0], [1, 2], 0),
                                               brute_nll(x.asnumpy()[:, 1], [2, 1], 0)])


# -- Gluon's CTCLoss ------------------------------------------------------------------------

@frees_arrays
def test_gluon_ctc_loss_layouts_lengths_and_weights():
    rng = np.random.default_rng(12)
    x = rng.normal(size=(3, 5, 4))                       # NTC, blank 'last' = 3
    label = np.array([[0, 2, -1], [1, 1, 2], [2, -1, -1]])
    want = [brute_nll(x[i], lab, 3) for i, lab in enumerate([[0, 2], [1, 1, 2], [2]])]
    got = L.CTCLoss()(a64(x), nd.array(label)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-10)
    tnc = L.CTCLoss(layout="TNC", label_layout="TN", weight=2.0)
    got = tnc(a64(x.transpose(1, 0, 2)), nd.array(label.T)).asnumpy()
    np.testing.assert_allclose(got, 2 * np.array(want), rtol=1e-10)
    # label_lengths alone (no pred_lengths), then both, with sample weights
    got = L.CTCLoss()(a64(x), nd.array(label), None, nd.array([1, 2, 0]),
                      sample_weight=a64([1.0, 0.5, 3.0])).asnumpy()
    ref = [brute_nll(x[0], [0], 3), 0.5 * brute_nll(x[1], [1, 1], 3),
           3 * brute_nll(x[2], [], 3)]
    np.testing.assert_allclose(got, ref, rtol=1e-10)
    got = L.CTCLoss()(a64(x), nd.array(label), nd.array([4, 5, 2]), nd.array([2, 3, 1]))
    np.testing.assert_allclose(got.asnumpy(), [brute_nll(x[0, :4], [0, 2], 3),
                                               want[1], brute_nll(x[2, :2], [2], 3)],
                               rtol=1e-10)
    xa = a64(x)
    xa.attach_grad()
    with autograd.record():
        loss = L.CTCLoss()(xa, nd.array(label))
    loss.backward()
    f = (lambda v: float(np.sum(L.CTCLoss()(a64(v), nd.array(label)).asnumpy())))
    np.testing.assert_allclose(xa.grad.asnumpy(), _num_grad(f, x), rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match=r"^CTCLoss: layout must be 'NTC' or 'TNC'"):
        L.CTCLoss(layout="NCT")
    with pytest.raises(ValueError, match=r"^CTCLoss: label_layout must be 'NT' or 'TN'"):
        L.CTCLoss(label_layout="N")


free_failing_tests(globals())


# -- MXNet 1.x's CTC (test_operator.py test_ctc_loss, test_ctc_loss_grad; test_loss.py) cases, ported ----

ACTS = np.array([[[1.2, 3.4, 1.2, -0.1, -2.34], [1.2, 3.4, 1.2, -0.1, -2.34]],
                 [[0.1, 0.2, 0.3, 0.22, 0.123], [0.1, 0.2, 0.3, 0.22, 0.123]],
                 [[-15, -14, -13, -12, -11], [-15, -14, -13, -12, -11]]], dtype=np.float32)
ACTS2 = np.array([[[-5, -4, -3, -2, -1], [1.2, 3.4, 1.2, -0.1, -2.34]],
                  [[-10, -9, -8, -7, -6], [0.1, 0.2, 0.3, 0.22, 0.123]],
                  [[-15, -14, -13, -12, -11], [-15, -14.2, -13.5, -12.2, -11.22]]],
                 dtype=np.float32)


@pytest.mark.parametrize("fn", ["ctc_loss", "CTCLoss", "contrib.ctc_loss", "contrib.CTCLoss"])
def test_ctc_loss_mxnet_torch_numbers(fn):
    f = nd
    for part in fn.split("."):
        f = getattr(f, part)
    for acts, labels, truth in (
            (ACTS, np.array([[2, 3, 0], [2, 3, 0]]), [4.04789, 4.04789]),
            (ACTS2, np.array([[2, 3, 1], [2, 0, 0]], np.float32), [7.3557, 5.4091]),
            (ACTS2, np.array([[2, 3, 1], [2, 0, 0]], np.int32), [7.3557, 5.4091])):
        x = nd.array(acts)
        x.attach_grad()
        with autograd.record():
            loss = f(x, nd.array(labels, dtype=labels.dtype))
        loss.backward()
        np.testing.assert_allclose(loss.asnumpy(), truth, rtol=1e-4, atol=1e-4)
        # MXNet's check_ctc_loss: the gradient is finite and the batch entries agree
        assert np.isfinite(x.grad.asnumpy()).all()


def test_ctc_loss_with_large_classes_mxnet():
    num_classes, seq_len, batch = 6000, 8, 2
    data = np.empty((num_classes, 0))
    for i in range(seq_len * batch):
        row = np.roll(np.arange(num_classes, dtype=np.float32), i).reshape(num_classes, 1)
        data = np.append(data, row / 13, axis=1)
    data = data.reshape(seq_len, batch, num_classes)
    label = np.array([[100, 200, 300, 400, 500, 0, 0, 0],
                      [1000, 2000, 3000, 4000, 0, 5000, 0, 0]], dtype=np.int32)
    loss = nd.ctc_loss(data=nd.array(data), label=nd.array(label))
    np.testing.assert_allclose(loss.asnumpy(), [688.02826, 145.34462], rtol=1e-5)


@pytest.mark.parametrize("blank_label", ["first", "last"])
@pytest.mark.parametrize("fn", ["CTCLoss", "contrib.CTCLoss"])
def test_ctc_loss_grad_mxnet_tf_numbers(blank_label, fn):
    f = nd
    for part in fn.split("."):
        f = getattr(f, part)
    vocab_size, max_label_len = 5, 5
    padding_mask = -1 + (blank_label == "first")
    targets_0 = [0, 1, 2, 1, 0]
    loss_log_prob_0 = -3.34211
    p0 = np.asarray(
        [[0.633766, 0.221185, 0.0917319, 0.0129757, 0.0142857, 0.0260553],
         [0.111121, 0.588392, 0.278779, 0.0055756, 0.00569609, 0.010436],
         [0.0357786, 0.633813, 0.321418, 0.00249248, 0.00272882, 0.0037688],
         [0.0663296, 0.643849, 0.280111, 0.00283995, 0.0035545, 0.00331533],
         [0.458235, 0.396634, 0.123377, 0.00648837, 0.00903441, 0.00623107]], np.float32)
    g0 = np.asarray(
        [[-0.366234, 0.221185, 0.0917319, 0.0129757, 0.0142857, 0.0260553],
         [0.111121, -0.411608, 0.278779, 0.0055756, 0.00569609, 0.010436],
         [0.0357786, 0.633813, -0.678582, 0.00249248, 0.00272882, 0.0037688],
         [0.0663296, -0.356151, 0.280111, 0.00283995, 0.0035545, 0.00331533],
         [-0.541765, 0.396634, 0.123377, 0.00648837, 0.00903441, 0.00623107]], np.float32)
    targets_1 = [0, 1, 1, 0]
    loss_log_prob_1 = -5.42262
    p1 = np.asarray(
        [[0.30176, 0.28562, 0.0831517, 0.0862751, 0.0816851, 0.161508],
         [0.24082, 0.397533, 0.0557226, 0.0546814, 0.0557528, 0.19549],
         [0.230246, 0.450868, 0.0389607, 0.038309, 0.0391602, 0.202456],
         [0.280884, 0.429522, 0.0326593, 0.0339046, 0.0326856, 0.190345],
         [0.423286, 0.315517, 0.0338439, 0.0393744, 0.0339315, 0.154046]], np.float32)
    g1 = np.asarray(
        [[-0.69824, 0.28562, 0.0831517, 0.0862751, 0.0816851, 0.161508],
         [0.24082, -0.602467, 0.0557226, 0.0546814, 0.0557528, 0.19549],
         [0.230246, 0.450868, 0.0389607, 0.038309, 0.0391602, -0.797544],
         [0.280884, -0.570478, 0.0326593, 0.0339046, 0.0326856, 0.190345],
         [-0.576714, 0.315517, 0.0338439, 0.0393744, 0.0339315, 0.154046]], np.float32)
    inputs = [np.vstack([p0[t], p1[t]]) for t in range(5)] \
        + 2 * [np.nan * np.ones((2, vocab_size + 1), np.float32)]
    inputs = np.log(np.asarray(inputs, dtype=np.float32))
    grad_truth = np.array([np.vstack([g0[t], g1[t]]) for t in range(5)]
                          + 2 * [np.zeros((2, vocab_size + 1), np.float32)])
    if blank_label == "first":
        inputs = np.roll(inputs, 1, axis=2)
        grad_truth = np.roll(grad_truth, 1, axis=2)
    labels = (np.asarray([x + [padding_mask] * (max_label_len - len(x))
                          for x in [targets_0, targets_1]]) + (blank_label == "first"))
    data = nd.array(inputs)
    data.attach_grad()
    with autograd.record():
        loss = f(data, nd.array(labels), use_data_lengths=True, use_label_lengths=True,
                 data_lengths=nd.array([5, 5]), label_lengths=nd.array([5, 4]),
                 blank_label=blank_label)
    loss.backward()
    np.testing.assert_allclose(loss.asnumpy(), [-loss_log_prob_0, -loss_log_prob_1],
                               atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(data.grad.asnumpy(), grad_truth, atol=1e-5, rtol=1e-5)


def test_gluon_ctc_loss_mxnet():
    want = [18.82820702, 16.50581741]
    lab = nd.array([[1, 0, -1, -1], [2, 1, 1, -1]])
    l = gloss.CTCLoss()(nd.ones((2, 20, 4)), lab)
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss(layout="TNC")(nd.ones((20, 2, 4)), lab)
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss(layout="TNC", label_layout="TN")(nd.ones((20, 2, 4)), lab.T)
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss()(nd.ones((2, 20, 4)), nd.array([[2, 1, 2, 2], [3, 2, 2, 2]]), None,
                        nd.array([2, 3]))
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss()(nd.ones((2, 25, 4)), nd.array([[2, 1, -1, -1], [3, 2, 2, -1]]),
                        nd.array([20, 20]))
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
    l = gloss.CTCLoss()(nd.ones((2, 25, 4)), nd.array([[2, 1, 3, 3], [3, 2, 2, 3]]),
                        nd.array([20, 20]), nd.array([2, 3]))
    np.testing.assert_allclose(l.asnumpy(), want, rtol=1e-5)
