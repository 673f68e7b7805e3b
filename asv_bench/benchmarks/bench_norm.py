"""BatchNorm in training (batch statistics, moving statistics updated): forward, and
forward + backward, on a ResNet-style activation (32, 64, 56, 56) float32 and a small
one, each beside a handwritten NumPy reference doing the same work, so that the ratio
shows in one run.

The cases and the NumPy reference live here and are imported by
``asv_bench/run_norm_figures.py``, which measures them with ratios paired per round (and
PyTorch's ``batch_norm`` beside when torch imports).
"""
import numpy as np

from runtime import autograd, nd

SHAPES = {"resnet": (32, 64, 56, 56), "small": (8, 16, 14, 14)}
EPS = 1e-3


def bn_data(shape, seed=0):
    """(x, gamma, beta, head) float32: data, parameters of its channels (axis 1), a head
    gradient."""
    rng = np.random.default_rng(seed)
    c = shape[1]
    return (rng.standard_normal(shape, dtype=np.float32),
            rng.uniform(0.5, 1.5, c).astype(np.float32),
            rng.uniform(-0.5, 0.5, c).astype(np.float32),
            rng.standard_normal(shape, dtype=np.float32))


def numpy_bn(x, gamma, beta, head=None):
    """BatchNorm in training, by hand: the output, and with ``head`` also (dx, dgamma,
    dbeta)."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    m = x.size // x.shape[1]
    mean = x.mean(axis=axes)
    xc = x - mean.reshape(shape)
    n, c = x.shape[:2]
    var = np.einsum("ncq,ncq->c", xc.reshape(n, c, -1), xc.reshape(n, c, -1)) / m
    invstd = (1 / np.sqrt(var + EPS)).astype(x.dtype)
    xhat = xc
    xhat *= invstd.reshape(shape)
    y = xhat * gamma.reshape(shape)
    y += beta.reshape(shape)
    if head is None:
        return y
    dbeta = head.sum(axis=axes)
    dgamma = np.einsum("ncq,ncq->c", head.reshape(n, c, -1), xhat.reshape(n, c, -1))
    dx = head - (dbeta / m).reshape(shape)
    xhat *= (dgamma / m).reshape(shape)
    dx -= xhat
    dx *= (gamma * invstd).reshape(shape)
    return y, dx, dgamma, dbeta


def ndrt_bn(x, gamma, beta, head):
    """(forward, forward_backward, arrays): closures running ndrt's BatchNorm in training
    (``fix_gamma=False``) on NDArrays of the inputs; arrays = (x, gamma, beta, moving_mean,
    moving_var) whose ``.grad`` the backward fills."""
    c = x.shape[1]
    xs = [nd.array(a) for a in (x, gamma, beta)]
    for a in xs:
        a.attach_grad()
    mm, mv = nd.zeros((c,)), nd.ones((c,))
    h = nd.array(head)

    def forward():
        with autograd.train_mode():
            return nd.BatchNorm(*xs, mm, mv, eps=EPS, fix_gamma=False)

    def forward_backward():
        with autograd.record():
            y = nd.BatchNorm(*xs, mm, mv, eps=EPS, fix_gamma=False)
        y.backward(h)

    return forward, forward_backward, xs + [mm, mv]


class BatchNormTrain:
    """BatchNorm in training, float32, channels on axis 1."""
    params = [list(SHAPES)]
    param_names = ["shape"]
    timeout = 120

    def setup(self, shape):
        self.x, self.gamma, self.beta, self.head = bn_data(SHAPES[shape])
        self.fwd, self.fwd_bwd, _ = ndrt_bn(self.x, self.gamma, self.beta, self.head)
        self.fwd_bwd()                      # warm: gradients and pool blocks exist

    def time_forward(self, shape):
        self.fwd()

    def time_forward_numpy(self, shape):
        numpy_bn(self.x, self.gamma, self.beta)

    def time_forward_backward(self, shape):
        self.fwd_bwd()

    def time_forward_backward_numpy(self, shape):
        numpy_bn(self.x, self.gamma, self.beta, self.head)
