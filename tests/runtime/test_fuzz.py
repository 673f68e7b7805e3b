"""Random configurations of Convolution, Pooling, RNN, CTCLoss, ROIPooling and ROIAlign,
and random MXNet-format byte strings: each case gives a clear exception (of the kinds a
bad argument raises, its message naming the operator or the file) or a result equal to an
independent NumPy reference (the nested-loop references of the domain suites), never a
signal, a hang or a wrong result.

The cases run in one child interpreter (``run_limited``: an address-space limit and a
timeout), so that a crash or a runaway allocation fails these tests instead of killing
pytest; each surface runs a fixed number of seeded cases (a second or so in all) and
reports what it saw as JSON.  Every surface must produce results as well as refusals, so
that the fuzz cannot pass by refusing everything.
"""

import json
import math
import random
import traceback

import numpy as np
import pytest

from tests.runtime.conftest import run_limited

# The exceptions a bad argument may raise (MemoryError: an out-of-memory refusal).
CLEAR = (ValueError, TypeError, IndexError, NotImplementedError, MemoryError)
SEED = 20261201
CASES = {"convolution": 200, "pooling": 300, "rnn": 80, "ctc": 200, "roi": 150,
         "mxnet_file": 600}


def _pick(rng, common, rare, p_rare=0.12):
    return rng.choice(rare if rng.random() < p_rare else common)


class _Outcome:
    """Counts of one surface: results checked, refusals, and what went wrong."""

    def __init__(self):
        self.ok = self.refused = 0
        self.failures = []

    def run(self, what, call, check, names):
        """``call()`` must raise a CLEAR exception whose message starts with one of
        ``names``, or return a result that ``check(result)`` accepts (it raises
        AssertionError otherwise)."""
        try:
            got = call()
        except CLEAR as e:
            if not str(e).startswith(names):
                self.failures.append(f"{what}: unclear {type(e).__name__}: {e}")
            else:
                self.refused += 1
            return
        except Exception as e:        # noqa: BLE001 -- any other type is the finding
            self.failures.append(f"{what}: {type(e).__name__}: {e}\n"
                                 f"{traceback.format_exc(limit=-3)}")
            return
        try:
            check(got)
            self.ok += 1
        except Exception as e:        # noqa: BLE001 -- a wrong result or no reference
            self.failures.append(f"{what}: wrong result: {type(e).__name__}: {e}")

    def report(self):
        return {"ok": self.ok, "refused": self.refused, "failures": self.failures[:10]}


def _close(got, want, rtol=1e-9, atol=1e-11):
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol,
                               equal_nan=True)


# -- operators ------------------------------------------------------------------------------

def fuzz_convolution(rng, n_cases):
    from runtime import nd
    from tests.runtime.test_conv import ref_conv
    out = _Outcome()
    for _ in range(n_cases):
        nd_ = rng.choice([1, 2, 2, 3])
        small = 3 if nd_ == 3 else 6
        n, group = rng.choice([0, 1, 2]), rng.choice([1, 1, 2, 3])
        c = group * rng.choice([1, 2]) if rng.random() < 0.9 else rng.choice([1, 2, 5])
        nf = group * rng.choice([1, 2]) if rng.random() < 0.9 else rng.choice([1, 5])
        spatial = tuple(_pick(rng, range(1, small + 1), [0]) for _ in range(nd_))
        kernel = tuple(_pick(rng, [1, 2, 3], [0, 7, -1, 2 ** 31, 2 ** 62], 0.05)
                       for _ in range(nd_))
        stride = tuple(_pick(rng, [1, 1, 2, 3], [0, -2, 2 ** 40], 0.05) for _ in range(nd_))
        pad = tuple(_pick(rng, [0, 0, 1, 2], [-1, 5, 2 ** 62], 0.05) for _ in range(nd_))
        dilate = tuple(_pick(rng, [1, 1, 2], [0, -1, 2 ** 33], 0.05) for _ in range(nd_))
        no_bias = rng.random() < 0.5
        dtype = rng.choice(["float32", "float64"])
        x = np.random.default_rng(rng.randrange(1 << 30)).standard_normal((n, c) + spatial)
        wk = tuple(min(abs(k), 3) for k in kernel)
        wshape = (nf, max(c // group, 1)) + wk
        if rng.random() < 0.05:
            wshape = (nf + 1,) + wshape[1:]
        w = np.random.default_rng(rng.randrange(1 << 30)).standard_normal(wshape)
        b = np.random.default_rng(rng.randrange(1 << 30)).standard_normal(nf)
        args = [nd.array(x, dtype=dtype), nd.array(w, dtype=dtype)] + \
            ([] if no_bias else [nd.array(b, dtype=dtype)])
        attrs = dict(kernel=kernel, stride=stride, pad=pad, dilate=dilate, num_filter=nf,
                     num_group=group, no_bias=no_bias)

        def check(y, x=x, w=w, b=b, attrs=attrs):
            assert attrs["kernel"] == w.shape[2:] and w.shape[0] == attrs["num_filter"], \
                "accepted a weight of another shape"
            assert all(v >= 1 for v in attrs["kernel"] + attrs["stride"] + attrs["dilate"]) \
                and min(attrs["pad"]) >= 0, "accepted a bad kernel, stride, dilate or pad"
            g = attrs["num_group"]
            assert x.shape[1] % g == 0 and attrs["num_filter"] % g == 0 and \
                w.shape[1] == x.shape[1] // g, "accepted channels the groups do not divide"
            want = ref_conv(x, w, None if attrs["no_bias"] else b, attrs["stride"],
                            attrs["pad"], attrs["dilate"], g)
            _close(y, want, *((1e-4, 1e-4) if y.dtype == np.float32 else ()))

        out.run(f"Convolution{attrs} on {x.shape}", lambda: nd.Convolution(*args, **attrs),
                check, ("Convolution",))
    return out.report()


def fuzz_pooling(rng, n_cases):
    from runtime import nd
    from tests.runtime.test_conv import ref_pool
    out = _Outcome()
    for _ in range(n_cases):
        nd_ = rng.choice([1, 2, 2, 3])
        small = 4 if nd_ == 3 else 7
        shape = (rng.choice([0, 1, 2]), rng.choice([1, 2, 3])) + tuple(
            _pick(rng, range(1, small + 1), [0]) for _ in range(nd_))
        kernel = tuple(_pick(rng, [1, 2, 3], [0, -1, 9, 2 ** 40], 0.05) for _ in range(nd_))
        stride = tuple(_pick(rng, [1, 1, 2, 3], [0, -1, 2 ** 40], 0.05) for _ in range(nd_))
        pad = tuple(_pick(rng, [0, 0, 1], [2, -1, 2 ** 62], 0.05) for _ in range(nd_))
        kind = rng.choice(["max", "avg", "sum", "lp"])
        full = rng.random() < 0.3
        include_pad = rng.random() < 0.7
        p = rng.choice([1, 2, 3])
        glob = rng.random() < 0.1
        dtype = rng.choice(["float32", "float64"])
        x = np.random.default_rng(rng.randrange(1 << 30)).standard_normal(shape)
        if kind == "lp":
            x = np.abs(x) + 0.1
        attrs = dict(kernel=kernel, stride=stride, pad=pad, pool_type=kind,
                     pooling_convention="full" if full else "valid", global_pool=glob)
        if kind == "lp":
            attrs["p_value"] = p
        if kind == "avg":
            attrs["count_include_pad"] = include_pad

        def check(y, x=x, attrs=attrs, dtype=dtype, p=p, include_pad=include_pad):
            if attrs["global_pool"]:
                k, s, q = x.shape[2:], (1,) * (x.ndim - 2), (0,) * (x.ndim - 2)
            else:
                k, s, q = attrs["kernel"], attrs["stride"], attrs["pad"]
                assert min(k) >= 1 and min(s) >= 1 and min(q) >= 0, \
                    "accepted a bad kernel, stride or pad"
                assert all(kk <= n + 2 * qq for kk, n, qq in zip(k, x.shape[2:], q)), \
                    "accepted a window larger than the padded input"
            # (the reference reshapes its windows by batch: it runs on one row of an
            # empty batch, whose result is cut back to none)
            rows = x if x.shape[0] else np.ones((1,) + x.shape[1:])
            want = ref_pool(rows.astype(np.float64), k, s, q, attrs["pool_type"],
                            attrs["pooling_convention"] == "full",
                            attrs.get("count_include_pad", True), p, dtype)[:x.shape[0]]
            _close(y, want, *((1e-5, 1e-5) if dtype == "float32" else ()))

        out.run(f"Pooling{attrs} on {shape}", lambda: nd.Pooling(nd.array(x, dtype=dtype),
                                                                 **attrs), check, ("Pooling",))
    return out.report()


def fuzz_rnn(rng, n_cases):
    from runtime import nd
    from runtime.nd._rnn import rnn_param_size
    from tests.runtime.test_rnn import reference
    out = _Outcome()
    for _ in range(n_cases):
        mode = rng.choice(["rnn_relu", "rnn_tanh", "lstm", "gru"])
        layers, bidir = rng.choice([1, 1, 2]), rng.random() < 0.4
        t, n, isz = rng.choice([0, 1, 2, 3]), rng.choice([0, 1, 2, 3]), rng.choice([1, 2, 3])
        h = _pick(rng, [1, 1, 2, 3], [0, -1])
        proj = rng.choice([None, None, None, 1, 2]) if mode == "lstm" else None
        d = 2 if bidir else 1
        r = h if proj is None else proj
        g = np.random.default_rng(rng.randrange(1 << 30))
        try:
            size = rnn_param_size(mode, isz, h, layers, bidir, proj)
        except Exception:           # noqa: BLE001 -- a bad state_size: any size will do
            size = 7
        if rng.random() < 0.08:
            size += rng.choice([-1, 1])
        x = g.uniform(-1, 1, (t, n, isz))
        params = g.uniform(-0.6, 0.6, max(size, 0))
        sshape = (layers * d, n, max(r, 0)) if rng.random() < 0.93 else (layers * d, n + 1, 2)
        h0 = g.uniform(-1, 1, sshape)
        c0 = g.uniform(-1, 1, (layers * d, n, max(h, 0))) if mode == "lstm" else None
        lengths = None
        if rng.random() < 0.3 and n:
            lengths = g.integers(1, max(t, 1) + 1, n).astype(np.float64)
            if rng.random() < 0.2:
                lengths[0] = rng.choice([0, t + 1, np.nan])
        kw = dict(state_size=h, num_layers=layers, bidirectional=bidir, mode=mode,
                  state_outputs=True, projection_size=proj)
        args = [nd.array(a, dtype="float64") for a in (x, params, h0)]
        if c0 is not None:
            kw["state_cell"] = nd.array(c0, dtype="float64")
        if lengths is not None:
            kw.update(sequence_length=nd.array(lengths, dtype="float64"),
                      use_sequence_length=True)

        def check(res, x=x, params=params, h0=h0, c0=c0, h=h, layers=layers, bidir=bidir,
                  lengths=lengths, mode=mode, proj=proj):
            assert h >= 1, "accepted a bad state_size"
            if lengths is not None:
                assert np.all(np.isfinite(lengths)) and lengths.min() >= 1 and \
                    lengths.max() <= x.shape[0], "accepted bad sequence lengths"
            o, hn, cn = reference(mode, x, params, h0, c0, h, layers, bidir, lengths,
                                  proj=proj)
            _close(res[0], o)
            _close(res[1], hn)
            if mode == "lstm":
                _close(res[2], cn)

        out.run(f"RNN{kw} on {x.shape}", lambda: nd.RNN(*args, **kw), check, ("RNN",))
    return out.report()


def fuzz_ctc(rng, n_cases):
    from runtime import autograd, nd
    from tests.runtime.test_ctc import extended_paths_nll
    out = _Outcome()
    for _ in range(n_cases):
        t, n, c = rng.choice([0, 1, 2, 3, 4]), rng.choice([0, 1, 2, 3]), rng.choice([1, 2, 3, 4])
        width = rng.choice(range(0, t + 1)) if rng.random() < 0.95 else t + 1
        first = rng.random() < 0.5
        g = np.random.default_rng(rng.randrange(1 << 30))
        x = g.standard_normal((t, n, c))
        label = g.integers(-1, c + 1, (n, width)).astype(np.float64)
        use_dl, use_ll = rng.random() < 0.4, rng.random() < 0.4
        dl = g.integers(0, t + 1, n).astype(np.float64)
        ll = g.integers(0, width + 1, n).astype(np.float64)
        if rng.random() < 0.1 and n:
            (dl if rng.random() < 0.5 else ll)[0] = rng.choice([-1, t + 5, np.nan])
        attrs = dict(use_data_lengths=use_dl, use_label_lengths=use_ll,
                     blank_label="first" if first else "last")
        xa = nd.array(x, dtype="float64")
        inputs = [xa, nd.array(label)] + ([nd.array(dl)] if use_dl else []) + \
            ([nd.array(ll)] if use_ll else [])

        def call(xa=xa, inputs=inputs, attrs=attrs):
            xa.attach_grad()
            with autograd.record():
                loss = nd.CTCLoss(*inputs, **attrs)
            loss.backward()
            return loss, xa.grad

        def check(res, x=x, label=label, dl=dl, ll=ll, attrs=attrs):
            loss, grad = res
            t, n, c = x.shape
            blank = 0 if attrs["blank_label"] == "first" else c - 1
            want = np.zeros(n)
            for b in range(n):
                tl = int(dl[b]) if attrs["use_data_lengths"] else t
                row = label[b]
                if attrs["use_label_lengths"]:
                    length = int(ll[b])
                else:
                    pad = np.flatnonzero(row == (0 if attrs["blank_label"] == "first" else -1))
                    length = int(pad[0]) if pad.size else len(row)
                symbols = row[:length]
                assert np.all((symbols >= 0) & (symbols <= c - 1)), "accepted a bad symbol"
                if tl == 0:
                    continue                  # p(empty) = 1; else no path: loss 0
                nll = extended_paths_nll(x[:tl, b], [int(s) for s in symbols], blank)
                want[b] = nll if math.isfinite(nll) else 0.0   # unalignable: 0
            _close(loss, want, 1e-9, 1e-9)
            assert np.all(np.isfinite(grad.asnumpy())), "a non-finite gradient"

        out.run(f"CTCLoss{attrs} on {x.shape}, label {label.tolist()}", call, check,
                ("CTCLoss",))
    return out.report()


def fuzz_roi(rng, n_cases):
    from runtime import nd
    from tests.runtime.test_vision import roi_align_weights, roi_pool_reference
    out = _Outcome()
    for _ in range(n_cases):
        g = np.random.default_rng(rng.randrange(1 << 30))
        n, c = rng.choice([1, 2]), rng.choice([1, 2, 3, 4])
        h, w = rng.choice([1, 3, 5]), rng.choice([1, 4, 6])
        k = rng.choice([0, 1, 2, 3])
        rois = np.c_[g.integers(0, n, k), g.uniform(-3, 9, (k, 4))]
        if k and rng.random() < 0.15:
            rois[0, rng.choice(range(5))] = rng.choice([np.nan, np.inf, 1e30, -1.0, n])
        pooled = (_pick(rng, [1, 2, 3], [0, -1]), _pick(rng, [1, 2, 3], [0, -1]))
        scale = _pick(rng, [1.0, 0.5, 0.8], [0.0, -1.0, np.inf, np.nan], 0.08)
        x = g.standard_normal((n, c, h, w))
        align = rng.random() < 0.5
        if align:
            psens = rng.random() < 0.25
            attrs = dict(pooled_size=pooled, spatial_scale=scale,
                         sample_ratio=rng.choice([-1, -1, 1, 2]), aligned=rng.random() < 0.5,
                         position_sensitive=psens)
            name, fn = "_contrib_ROIAlign", nd._contrib_ROIAlign
        else:
            attrs = dict(pooled_size=pooled, spatial_scale=scale)
            name, fn = "ROIPooling", nd.ROIPooling

        def check(y, x=x, rois=rois, attrs=attrs, align=align):
            ph, pw = attrs["pooled_size"]
            assert ph >= 1 and pw >= 1, "accepted a bad pooled_size"
            assert math.isfinite(attrs["spatial_scale"]) and attrs["spatial_scale"] > 0, \
                "accepted a bad spatial_scale"
            assert np.all(np.isfinite(rois)), "accepted non-finite rois"
            if align:
                if attrs["position_sensitive"]:
                    assert x.shape[1] % (ph * pw) == 0, "accepted channels pooled_size " \
                                                        "does not divide"
                assert np.all(rois[:, 0] < x.shape[0]), "accepted a bad batch index"
                m, shape = roi_align_weights(x.shape, rois, (ph, pw), attrs["spatial_scale"],
                                             attrs["sample_ratio"],
                                             attrs["position_sensitive"], attrs["aligned"])
                _close(y, (m @ x.ravel()).reshape(shape))
            else:
                assert np.all((rois[:, 0] >= 0) & (rois[:, 0] < x.shape[0])), \
                    "accepted a bad batch index"
                _close(y, roi_pool_reference(x, rois, (ph, pw), attrs["spatial_scale"])[0])

        out.run(f"{name}{attrs} on {x.shape}, rois {rois.tolist()}",
                lambda: fn(nd.array(x, dtype="float64"), nd.array(rois, dtype="float64"),
                           **attrs), check, (name,))
    return out.report()


# -- MXNet files ----------------------------------------------------------------------------

def _random_arrays(rng):
    """A few arrays (NumPy dense, or ('row_sparse'|'csr', dense 2-D)) and whether named."""
    g = np.random.default_rng(rng.randrange(1 << 30))
    arrays = []
    for _ in range(rng.choice([0, 1, 2, 3])):
        kind = rng.choice(["dense", "dense", "row_sparse", "csr"])
        dtype = rng.choice([np.float32, np.float64, np.int32, np.int64, np.uint8] +
                           [np.float16] * (kind == "dense"))       # (SciPy has no float16)
        if kind == "dense":
            shape = tuple(rng.choice([0, 1, 2, 3]) for _ in range(rng.choice([1, 2, 3])))
        else:
            shape = (rng.choice([1, 2, 3]), rng.choice([1, 2, 4]))
        a = (g.integers(0, 3, shape) * (g.random(shape) < 0.5)).astype(dtype)
        arrays.append(a if kind == "dense" else (kind, a))
    return arrays, rng.random() < 0.5


def _expected(arrays):
    return [a[1] if isinstance(a, tuple) else a for a in arrays]


def fuzz_mxnet_file(rng, n_cases):
    from runtime import nd
    from tests.runtime.test_mxnet_io import container, csr, dense, row_sparse
    out = _Outcome()
    for _ in range(n_cases):
        arrays, named = _random_arrays(rng)
        records = [dense(a) if not isinstance(a, tuple) else
                   (row_sparse if a[0] == "row_sparse" else csr)(a[1]) for a in arrays]
        names = [f"arg:w{i}" for i in range(len(arrays))] if named else []
        raw = bytearray(container(records, names))
        mutation = rng.choice(["none", "truncate", "flip", "flip", "word", "append"])
        if mutation == "truncate":
            raw = raw[:rng.randrange(len(raw))]
        elif mutation == "flip":
            for _ in range(rng.choice([1, 1, 2, 4])):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        elif mutation == "word" and len(raw) >= 32:
            at = rng.randrange(16, len(raw) - 8)
            raw[at:at + 8] = rng.choice([2 ** 62, 2 ** 63 - 1, 2 ** 64 - 1, 2 ** 31, 0,
                                         1 << 40]).to_bytes(8, "little")
        elif mutation == "append":
            raw += bytes(rng.randrange(1, 9))
        raw = bytes(raw)

        def check(got, arrays=arrays, names=names, mutation=mutation, raw=raw):
            got = list(got.values()) if isinstance(got, dict) else got
            if mutation == "none":
                want = _expected(arrays)
                assert len(got) == len(want), "a different number of arrays"
                for x, a in zip(got, want):
                    assert np.dtype(x.dtype) == a.dtype, (x.dtype, a.dtype)
                    v = x.asnumpy() if x.stype == "default" else x.tostype("default").asnumpy()
                    np.testing.assert_array_equal(v, a)
            else:     # a mutated file that loads must be a well-formed one: it round-trips
                assert mutation != "truncate" or not raw, "a truncated file loaded"
                again = nd.load_frombuffer(_save_bytes(got, names))
                again = list(again.values()) if isinstance(again, dict) else again
                for x, y in zip(got, again):
                    assert (x.shape, x.dtype, x.stype) == (y.shape, y.dtype, y.stype)
                    for a, b in zip(_parts(x), _parts(y)):
                        np.testing.assert_array_equal(a, b)

        out.run(f"{mutation} of {len(raw)} bytes", lambda: nd.load_frombuffer(raw), check,
                ("load: '<buffer>'",))
    return out.report()


def _parts(x):
    """The stored values of ``x`` (a sparse array of a huge shape has no dense form)."""
    if x.stype == "default":
        return [x.asnumpy()]
    return [x.data.asnumpy(), x.indices.asnumpy()] + \
        ([x.indptr.asnumpy()] if x.stype == "csr" else [])


def _save_bytes(arrays, names):
    import os
    import tempfile

    from runtime import nd
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f")
        nd.save(path, dict(zip(names, arrays)) if names else list(arrays), format="mxnet")
        with open(path, "rb") as f:
            return f.read()


SURFACES = {"convolution": fuzz_convolution, "pooling": fuzz_pooling, "rnn": fuzz_rnn,
            "ctc": fuzz_ctc, "roi": fuzz_roi, "mxnet_file": fuzz_mxnet_file}


def run_all():
    """The child's work: every surface's report, as one JSON line."""
    import warnings
    warnings.simplefilter("ignore")          # storage fallback notes of odd inputs
    reports = {}
    for name, fuzz in SURFACES.items():
        reports[name] = fuzz(random.Random(f"{SEED}-{name}"), CASES[name])
    print(json.dumps(reports))


@pytest.fixture(scope="module")
def reports():
    res = run_limited("from tests.runtime.test_fuzz import run_all; run_all()",
                      memory=2 << 30, timeout=300)
    assert res.returncode == 0, (f"the fuzzing child ended with status {res.returncode}"
                                 + (" (a signal)" if res.returncode < 0 else "")
                                 + f"\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("surface", list(SURFACES))
def test_a_clear_exception_or_a_correct_result(reports, surface):
    r = reports[surface]
    assert not r["failures"], "\n\n".join(r["failures"])
    assert r["ok"] >= CASES[surface] // 10 and r["refused"] >= 1, r
