"""nd.random: seeding, ranges, dtypes, out=, bad input."""

import numpy as np
import pytest

import runtime as rt
from runtime import autograd, nd


def test_seed_makes_draws_reproducible():
    rt.random.seed(7)
    a = nd.random.uniform(shape=(5,)).asnumpy()
    b = nd.random.normal(shape=(3,)).asnumpy()
    rt.random.seed(7)
    np.testing.assert_array_equal(nd.random.uniform(shape=(5,)).asnumpy(), a)
    np.testing.assert_array_equal(nd.random.normal(shape=(3,)).asnumpy(), b)
    rt.random.seed(8)
    assert not np.array_equal(nd.random.uniform(shape=(5,)).asnumpy(), a)


def test_defaults_follow_mxnet():
    x = nd.random.uniform()
    assert x.shape == (1,) and x.dtype == np.float32
    assert nd.random.randint(0, 5).dtype == np.int32


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_uniform_range_and_moments(dtype):
    rt.random.seed(0)
    x = nd.random.uniform(-2, 3, shape=(200, 100), dtype=dtype).asnumpy()
    assert x.dtype == np.dtype(dtype) and x.min() >= -2 and x.max() <= 3
    assert abs(float(x.astype(np.float64).mean()) - 0.5) < 0.05


def test_normal_moments():
    rt.random.seed(0)
    x = nd.random.normal(1.5, 2.0, shape=(400, 100), dtype="float64").asnumpy()
    assert abs(x.mean() - 1.5) < 0.03 and abs(x.std() - 2.0) < 0.03


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8"])
def test_randint_range(dtype):
    x = nd.random.randint(0, 7, shape=(1000,), dtype=dtype).asnumpy()
    assert x.dtype == np.dtype(dtype) and x.min() >= 0 and x.max() <= 6
    assert set(np.unique(x)) == set(range(7))


def test_out_parameter_writes_in_place_and_bumps_version():
    out = nd.zeros((3, 2))
    v0 = out.version
    assert nd.random.uniform(5, 6, out=out) is out
    assert out.version > v0 and np.all((out.asnumpy() >= 5) & (out.asnumpy() <= 6))


def test_ctx_is_honoured():
    assert nd.random.normal(shape=(2,), ctx=rt.cpu()).ctx == rt.cpu()


@pytest.mark.parametrize("call, exc, match", [
    (lambda: nd.random.uniform(2, 1), ValueError, r"uniform: low must be <= high \(got low=2, high=1\)"),
    (lambda: nd.random.normal(0, -1), ValueError, r"normal: scale must be >= 0 \(got -1\)"),
    (lambda: nd.random.randint(3, 3), ValueError, "randint: low must be < high"),
    (lambda: nd.random.randint(0.5, 3), TypeError, "randint: low must be an integer"),
    (lambda: nd.random.randint(0, 300, dtype="uint8"), ValueError, "does not fit uint8"),
    (lambda: nd.random.uniform(dtype="int32"), TypeError, "uniform: dtype must be one of"),
    (lambda: nd.random.randint(0, 3, dtype="float32"), TypeError, "integer type"),
    (lambda: nd.random.uniform(shape=(-1,)), ValueError, "shape must contain non-negative"),
    (lambda: rt.random.seed(1.5), ValueError, "seed_state must be an integer"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# -- randn, exponential, gamma, poisson, negative_binomial, shuffle, multinomial ----------------

N = 200_000


@pytest.mark.parametrize("draw, mean, var", [
    (lambda: nd.random.randn(400, 500, loc=1.0, scale=2.0), 1.0, 4.0),
    (lambda: nd.random.exponential(2.0, shape=(N,)), 2.0, 4.0),
    (lambda: nd.random.gamma(3.0, 0.5, shape=(N,)), 1.5, 0.75),
    (lambda: nd.random.poisson(4.0, shape=(N,)), 4.0, 4.0),
    (lambda: nd.random.negative_binomial(3, 0.4, shape=(N,)), 4.5, 11.25),
])
def test_distribution_moments(draw, mean, var):
    rt.random.seed(3)
    x = draw()
    assert x.dtype == np.float32 and x.size == N
    v = x.asnumpy().astype(np.float64)
    # 6 standard errors of the mean; the variance within 3 %
    assert abs(v.mean() - mean) < 6 * np.sqrt(var / N)
    assert abs(v.var() / var - 1) < 0.03
    rt.random.seed(3)
    np.testing.assert_array_equal(draw().asnumpy(), x.asnumpy())


def test_defaults_and_ndarray_parameters():
    assert nd.random.exponential().shape == (1,)
    assert nd.random.randn().shape == (1,)
    lam = nd.array([1.0, 50.0], dtype="float64")
    x = nd.random.poisson(lam, shape=(2000,))
    assert x.shape == (2, 2000) and x.dtype == np.float64
    np.testing.assert_allclose(x.asnumpy().mean(axis=1), [1.0, 50.0], rtol=0.05)
    g = nd.random.gamma(nd.array([1.0, 4.0]), nd.array([2.0, 0.5]), shape=3)
    assert g.shape == (2, 3)
    np.testing.assert_array_equal(nd.random.gamma(0.0, 2.0, shape=(5,)).asnumpy(), 0)
    out = nd.zeros((4,), dtype="float64")
    assert nd.random.exponential(1.0, shape=(4,), out=out) is out


@pytest.mark.parametrize("call, exc, match", [
    (lambda: nd.random.exponential(0.0), ValueError, r"exponential: scale must be > 0 \(got 0.0\)"),
    (lambda: nd.random.gamma(-1.0), ValueError, r"gamma: alpha must be >= 0"),
    (lambda: nd.random.poisson(nd.array([1.0, -2.0])), ValueError, r"poisson: lam must be >= 0 \(got -2.0\)"),
    (lambda: nd.random.negative_binomial(2, 1.5), ValueError, r"p must be in \(0, 1\]"),
    (lambda: nd.random.gamma(nd.ones((2,)), nd.ones((3,))), ValueError, "must have one shape"),
    (lambda: nd.random.poisson("3"), TypeError, "lam must be a number or an NDArray"),
    (lambda: nd.random.exponential(dtype="int32"), TypeError, "dtype must be one of"),
    (lambda: nd.random.shuffle(nd.array(3.0).reshape(())), ValueError, "at least one dimension"),
    (lambda: nd.random.multinomial(nd.array([0.5, 0.6])), ValueError, "sum to 1"),
    (lambda: nd.random.multinomial(nd.array([-0.5, 1.5])), ValueError, "probabilities >= 0"),
    (lambda: nd.random.multinomial(nd.array([0.5, 0.5]), dtype="int64"), TypeError, "dtype"),
])
def test_bad_parameters(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_shuffle_permutes_rows_only():
    rt.random.seed(1)
    a = np.arange(40, dtype=np.float32).reshape(10, 4)
    x = nd.array(a)
    y = nd.random.shuffle(x)
    np.testing.assert_array_equal(x.asnumpy(), a)                      # input kept
    got = y.asnumpy()
    assert sorted(map(tuple, got)) == sorted(map(tuple, a))           # rows intact
    assert not np.array_equal(got, a)
    assert nd.random.shuffle(x, out=x) is x
    assert sorted(map(tuple, x.asnumpy())) == sorted(map(tuple, a))


def test_multinomial_frequencies_and_shapes():
    rt.random.seed(5)
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]], np.float32)
    s = nd.random.multinomial(nd.array(p), shape=(50_000,))
    assert s.shape == (2, 50_000) and s.dtype == np.int32
    freq = np.stack([np.bincount(r, minlength=3) for r in s.asnumpy()]) / 50_000
    np.testing.assert_allclose(freq, p, atol=0.01)
    assert freq[1, 1] == 0                                            # p = 0 never drawn
    one = nd.random.multinomial(nd.array([0.0, 1.0]))
    assert one.shape == (1,)
    assert int(one.asnumpy().reshape(-1)[0]) == 1


def test_multinomial_log_prob_is_differentiable():
    rt.random.seed(2)
    p = nd.array([[0.2, 0.3, 0.5]], dtype="float64")
    p.attach_grad()
    with autograd.record():
        s, logp = nd.random.multinomial(p, shape=(6,), get_prob=True)
        total = logp.sum()
    total.backward()
    picks = s.asnumpy()[0]
    np.testing.assert_allclose(logp.asnumpy()[0], np.log(p.asnumpy()[0][picks]))
    want = np.bincount(picks, minlength=3) / p.asnumpy()[0]      # d/dp sum log p[s]
    np.testing.assert_allclose(p.grad.asnumpy()[0], want)


def test_seed_is_taken_modulo_2_to_the_32():
    # MXNet reads the seed as a C int made unsigned: -3 and 2**32 - 3 are one seed
    rt.random.seed(-3)
    a = rt.nd.random.uniform(shape=5).asnumpy()
    rt.random.seed(2 ** 32 - 3)
    b = rt.nd.random.uniform(shape=5).asnumpy()
    rt.random.seed(5)
    c = rt.nd.random.uniform(shape=5).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# -- sym.random ---------------------------------------------------------------------------

SYM_CASES = [
    # symbol call, nd call with the same draws, mean, std
    (lambda: rt.sym.random.uniform(-1.5, 3.0, shape=(N,)),
     lambda: nd.random.uniform(-1.5, 3.0, shape=(N,)), 0.75, 4.5 / np.sqrt(12)),
    (lambda: rt.sym.random.normal(10.0, 0.5, shape=(N,)),
     lambda: nd.random.normal(10.0, 0.5, shape=(N,)), 10.0, 0.5),
    (lambda: rt.sym.random.exponential(0.25, shape=(N,)),
     lambda: nd.random.exponential(0.25, shape=(N,)), 0.25, 0.25),
    (lambda: rt.sym.random.gamma(9.0, 0.5, shape=(N,)),
     lambda: nd.random.gamma(9.0, 0.5, shape=(N,)), 4.5, 1.5),
    (lambda: rt.sym.random.poisson(4.0, shape=(N,)),
     lambda: nd.random.poisson(4.0, shape=(N,)), 4.0, 2.0),
]


@pytest.mark.parametrize("make_sym, make_nd, mean, std", SYM_CASES)
def test_sym_random_draws_like_nd_random_from_the_same_seed(make_sym, make_nd, mean, std):
    x = rt.sym.var("x")
    exe = (make_sym() + x).bind(rt.cpu(), {"x": nd.zeros((N,))})
    rt.random.seed(11)
    got = exe.forward()[0].asnumpy()
    rt.random.seed(11)
    want = make_nd().asnumpy()
    np.testing.assert_array_equal(got, want)
    assert abs(got.mean() - mean) < 0.05 * std + 0.02 and abs(got.std() - std) < 0.05 * std
    rt.random.seed(11)
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), got)


def test_sym_random_with_symbol_parameters_draws_per_element():
    lo, hi = rt.sym.var("lo"), rt.sym.var("hi")
    s = rt.sym.random.uniform(lo, hi, shape=(4000,))
    assert s.infer_shape(lo=(2,), hi=(2,))[1] == [(2, 4000)]
    out = s.eval(lo=nd.array([0.0, 10.0]), hi=nd.array([1.0, 12.0]))[0].asnumpy()
    assert out.shape == (2, 4000) and out.dtype == np.float32
    assert (out[0] >= 0).all() and (out[0] < 1).all()
    assert (out[1] >= 10).all() and (out[1] < 12).all()
    scale = rt.sym.var("scale")
    e = rt.sym.random.exponential(scale, shape=(20000,))
    means = e.eval(scale=nd.array([0.5, 4.0], dtype="float64"))[0].asnumpy().mean(axis=1)
    np.testing.assert_allclose(means, [0.5, 4.0], rtol=0.05)


def test_sym_random_multinomial_shuffle_randint_and_json():
    p = rt.sym.var("p")
    m = rt.sym.random.multinomial(p, shape=5, get_prob=True)
    samples, logp = m.eval(p=nd.array([[0.0, 1.0], [1.0, 0.0]]))
    np.testing.assert_array_equal(samples.asnumpy(), [[1] * 5, [0] * 5])
    assert samples.dtype == np.int32 and logp.dtype == np.float32
    np.testing.assert_allclose(logp.asnumpy(), 0.0, atol=1e-6)
    d = rt.sym.var("d")
    rows = rt.sym.random.shuffle(d).eval(d=nd.array(np.arange(10.0)))[0].asnumpy()
    np.testing.assert_array_equal(np.sort(rows), np.arange(10.0))
    r = rt.sym.random.randint(3, 7, shape=(500,))
    v = r.eval()[0].asnumpy()
    assert v.dtype == np.int32 and v.min() >= 3 and v.max() <= 6
    loaded = rt.sym.load_json(rt.sym.random.normal(1.0, 2.0, shape=(3,)).tojson())
    assert loaded.infer_shape()[1] == [(3,)]


def test_sym_random_refuses_mixed_parameters_and_bad_attributes():
    with pytest.raises(TypeError, match=r"random.uniform: the distribution parameters must "
                       r"be all numbers or all Symbols \(got low=float, high=Symbol\)"):
        rt.sym.random.uniform(0.0, rt.sym.var("h"))
    with pytest.raises(ValueError, match="_random_randint: low must be < high"):
        rt.sym.random.randint(5, 5)
    with pytest.raises(TypeError, match="_random_normal: unknown attribute 'mean'"):
        rt.sym.random.normal(mean=1.0)
    a, b = rt.sym.var("a"), rt.sym.var("b")
    with pytest.raises(ValueError, match="must have one shape"):
        rt.sym.random.normal(a, b).infer_shape(a=(2,), b=(3,))



def test_sym_flat_sampler_names_draw_like_nd_ones():
    # mx.sym.random_normal / sample_normal: MXNet 1.x's flat names, the nodes named after
    # the function as MXNet names them (random_normal0)
    s = rt.sym.random_normal(loc=2.0, scale=0.5, shape=(N,))
    assert s.name.startswith("random_normal") and s.list_arguments() == []
    rt.random.seed(5)
    got = s.eval()[0].asnumpy()
    rt.random.seed(5)
    np.testing.assert_array_equal(got, nd.random_normal(loc=2.0, scale=0.5,
                                                        shape=(N,)).asnumpy())
    e = rt.sym.random_exponential(lam=4.0, shape=(N,)).eval()[0].asnumpy()
    assert abs(e.mean() - 0.25) < 0.02
    u = rt.sym.uniform(shape=(N,)).eval()[0].asnumpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    r = rt.sym.random_randint(low=1, high=4, shape=(200,)).eval()[0].asnumpy()
    assert r.dtype == np.int32 and set(np.unique(r)) == {1, 2, 3}
    mu, sigma = rt.sym.var("mu"), rt.sym.var("sigma")
    t = rt.sym.sample_normal(mu=mu, sigma=sigma, shape=(2,))
    assert t.list_arguments() == ["mu", "sigma"]
    assert t.infer_shape(mu=(3,), sigma=(3,))[1] == [(3, 2)]
    big = rt.sym.sample_normal(mu, sigma, shape=(4000,)).eval(
        mu=nd.array([0.0, 100.0]), sigma=nd.array([1.0, 0.1]))[0].asnumpy()
    np.testing.assert_allclose(big.mean(axis=1), [0.0, 100.0], atol=0.1)
    p = rt.sym.var("p")
    k = rt.sym.sample_multinomial(p).eval(p=nd.array([[0.0, 1.0]]))[0].asnumpy()
    np.testing.assert_array_equal(k, [1])
    # the symbol form of a graph: z = mu + exp(0.5 * logvar) * noise, as in a VAE
    z = mu + rt.sym.broadcast_mul(rt.sym.exp(sigma), rt.sym.random_normal(shape=(2, 3)))
    assert z.infer_shape(mu=(2, 3), sigma=(2, 3))[1] == [(2, 3)]


def test_sym_flat_sampler_names_refuse_the_wrong_kind_of_parameter():
    with pytest.raises(TypeError, match=r"random_normal: loc must be a number \(got "
                                        r"Symbol\)"):
        rt.sym.random_normal(loc=rt.sym.var("m"))
    with pytest.raises(TypeError, match=r"sample_normal: missing parameter 'sigma'"):
        rt.sym.sample_normal(rt.sym.var("m"))
    with pytest.raises(TypeError, match=r"random_uniform: parameter 'low' given twice"):
        rt.sym.random_uniform(0.0, low=1.0)
