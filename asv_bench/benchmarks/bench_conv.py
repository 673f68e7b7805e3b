"""CNN operators on a ResNet-style layer: a 3x3 convolution, 64 -> 64 channels, 56x56,
batch 32, float32 (forward, and forward + backward for data, weight and bias), and
Pooling on the same tensor (max 3x3 stride 2 pad 1, avg 2x2 stride 2), each beside
PyTorch's CPU operator when torch imports (``impl='torch'`` is skipped otherwise)."""

import numpy as np

from runtime import autograd, nd

try:
    import torch
except ImportError:
    torch = None

IMPLS = ["ndrt", "torch"]
BATCH, CHANNELS, SIZE = 32, 64, 56
CONV = {"kernel": (3, 3), "pad": (1, 1), "num_filter": CHANNELS}
POOLS = {"max": {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "max"},
         "avg": {"kernel": (2, 2), "stride": (2, 2), "pad": (0, 0), "pool_type": "avg"}}


def layer_data(batch=BATCH, channels=CHANNELS, size=SIZE, seed=0):
    """(x, w, b, head gradient) as float32 NumPy arrays."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, channels, size, size), dtype=np.float32)
    w = rng.standard_normal((channels, channels, 3, 3), dtype=np.float32) * 0.05
    b = rng.standard_normal(channels, dtype=np.float32)
    g = rng.standard_normal((batch, channels, size, size), dtype=np.float32)
    return x, w, b, g


class NdrtLayer:
    """The layer's calls in ndrt."""

    def __init__(self, x, w, b, g):
        self.x, self.w, self.b, self.g = (nd.array(a) for a in (x, w, b, g))
        for a in (self.x, self.w, self.b):
            a.attach_grad()

    def conv(self):
        return nd.Convolution(self.x, self.w, self.b, **CONV)

    def conv_backward(self):
        with autograd.record():
            y = nd.Convolution(self.x, self.w, self.b, **CONV)
        y.backward(self.g)
        return self.x.grad, self.w.grad, self.b.grad

    def pool(self, kind):
        return nd.Pooling(self.x, **POOLS[kind])

    def pool_backward(self, kind):
        with autograd.record():
            y = nd.Pooling(self.x, **POOLS[kind])
        y.backward()
        return self.x.grad


class TorchLayer:
    """The same calls in PyTorch (CPU)."""

    def __init__(self, x, w, b, g):
        self.x, self.w, self.b, self.g = (torch.from_numpy(a.copy()) for a in (x, w, b, g))
        for a in (self.x, self.w, self.b):
            a.requires_grad_(True)

    def conv(self):
        with torch.no_grad():
            return torch.nn.functional.conv2d(self.x, self.w, self.b, padding=1)

    def conv_backward(self):
        for a in (self.x, self.w, self.b):
            a.grad = None
        y = torch.nn.functional.conv2d(self.x, self.w, self.b, padding=1)
        y.backward(self.g)
        return self.x.grad, self.w.grad, self.b.grad

    def _pool(self, kind, x):
        p = POOLS[kind]
        f = (torch.nn.functional.max_pool2d if kind == "max"
             else torch.nn.functional.avg_pool2d)
        return f(x, p["kernel"], p["stride"], p["pad"])

    def pool(self, kind):
        with torch.no_grad():
            return self._pool(kind, self.x)

    def pool_backward(self, kind):
        self.x.grad = None
        y = self._pool(kind, self.x)
        y.backward(torch.ones_like(y))
        return self.x.grad


def make_layer(impl, batch=BATCH):
    data = layer_data(batch)
    if impl == "torch":
        if torch is None:
            raise NotImplementedError("torch is not installed")
        return TorchLayer(*data)
    return NdrtLayer(*data)


class Conv3x3:
    """3x3 convolution, 64 channels, 56x56, batch 32 (float32)."""
    params = [IMPLS]
    param_names = ["impl"]
    timeout = 300

    def setup(self, impl):
        self.layer = make_layer(impl)
        self.layer.conv()

    def time_forward(self, impl):
        self.layer.conv()

    def time_forward_backward(self, impl):
        self.layer.conv_backward()


class Pooling:
    """Pooling of the same tensor: max 3x3 stride 2 pad 1, avg 2x2 stride 2."""
    params = [IMPLS, ["max", "avg"]]
    param_names = ["impl", "kind"]

    def setup(self, impl, kind):
        self.layer = make_layer(impl)
        self.layer.pool(kind)

    def time_forward(self, impl, kind):
        self.layer.pool(kind)

    def time_forward_backward(self, impl, kind):
        self.layer.pool_backward(kind)
