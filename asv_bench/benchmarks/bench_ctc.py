"""CTCLoss (runtime/ops/ctc.py) forward, and forward with backward, on a speech-sized
batch beside NumPy's log-softmax of the same activations (the one pass over the data any
CTC implementation makes), so that the ratio shows in one run.  float32 activations
(T, N, alphabet), labels of ``label_length`` symbols without padding."""

import numpy as np

from runtime import autograd, nd


def ctc_data(t, n, c, length, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(t, n, c)).astype(np.float32)
    label = rng.integers(1, c, (n, length)).astype(np.float32)
    return x, label


def numpy_log_softmax(x):
    z = x - x.max(axis=2, keepdims=True)
    z -= np.log(np.exp(z).sum(axis=2, keepdims=True))
    return z


class CTCLossStep:
    # One parameter whose values are shapes: a list of tuples alone would read as two.
    params = [[(100, 32, 30, 20), (200, 64, 60, 40)]]
    param_names = ["(T, N, alphabet, label_length)"]

    def setup(self, shape):
        t, n, c, length = shape
        self.x_np, label = ctc_data(t, n, c, length)
        self.x, self.label = nd.array(self.x_np), nd.array(label)
        self.x.attach_grad()

    def time_numpy_log_softmax(self, shape):
        numpy_log_softmax(self.x_np)

    def time_forward(self, shape):
        nd.ctc_loss(self.x, self.label).wait_to_read()

    def time_forward_backward(self, shape):
        with autograd.record():
            loss = nd.ctc_loss(self.x, self.label)
        loss.backward()
        self.x.grad.wait_to_read()
