"""A word-level LSTM language model in the style of MXNet 1.x's
example/gluon/word_language_model (a Block with Embedding, a fused LSTM layer, Dropout
and a Dense decoder; truncated BPTT with detached states; gradient clipping), trained on
a tiny corpus; run through runtime.mxnet_compat by the tests.

Prints one line: the perplexity of the first and the last epoch.
"""
import math

import mxnet as mx
import numpy as np
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn, rnn

CORPUS = ("the cat sat on the mat . the dog sat on the log . a cat saw a dog . "
          "the dog saw the cat on the mat . ") * 20


class RNNModel(gluon.Block):
    def __init__(self, vocab_size, num_embed, num_hidden, num_layers, dropout=0.2,
                 **kwargs):
        super(RNNModel, self).__init__(**kwargs)
        with self.name_scope():
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(vocab_size, num_embed,
                                        weight_initializer=mx.init.Uniform(0.1))
            self.rnn = rnn.LSTM(num_hidden, num_layers, dropout=dropout,
                                input_size=num_embed)
            self.decoder = nn.Dense(vocab_size, in_units=num_hidden)
            self.num_hidden = num_hidden

    def forward(self, inputs, hidden):
        emb = self.drop(self.encoder(inputs))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output.reshape((-1, self.num_hidden)))
        return decoded, hidden

    def begin_state(self, *args, **kwargs):
        return self.rnn.begin_state(*args, **kwargs)


def batchify(data, batch_size):
    nbatch = data.shape[0] // batch_size
    return data[:nbatch * batch_size].reshape((batch_size, nbatch)).T


def detach(hidden):
    if isinstance(hidden, (tuple, list)):
        return [detach(h) for h in hidden]
    return hidden.detach()


mx.random.seed(0)
words = CORPUS.split()
vocab = {w: i for i, w in enumerate(sorted(set(words)))}
data = batchify(nd.array([vocab[w] for w in words]), batch_size=4)
bptt, ctx = 5, mx.cpu()
model = RNNModel(len(vocab), 16, 32, 2)
model.initialize(mx.init.Xavier(), ctx=ctx)
trainer = gluon.Trainer(model.collect_params(), "sgd", {"learning_rate": 10.0, "wd": 0})
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

ppl = []
for epoch in range(6):
    total, n = 0.0, 0
    hidden = model.begin_state(func=mx.nd.zeros, batch_size=4, ctx=ctx)
    for i in range(0, data.shape[0] - 1, bptt):
        seq = min(bptt, data.shape[0] - 1 - i)
        x, y = data[i:i + seq], data[i + 1:i + 1 + seq]
        hidden = detach(hidden)
        with autograd.record():
            output, hidden = model(x, hidden)
            loss = loss_fn(output, y.reshape((-1,)))
        loss.backward()
        grads = [p.grad(ctx) for p in model.collect_params().values()]
        gluon.utils.clip_global_norm(grads, 0.25 * bptt * 4)
        trainer.step(bptt * 4)
        total += mx.nd.sum(loss).asscalar()
        n += loss.size
    ppl.append(math.exp(total / n))
print(f"ppl {ppl[0]:.2f} -> {ppl[-1]:.2f}")
