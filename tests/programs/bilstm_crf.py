"""A bidirectional-LSTM CRF tagger for noun-phrase chunking written for MXNet 1.x Gluon,
in the style of MXNet's example/gluon/lstm_crf (an Embedding, a bidirectional LSTM with
a given begin state, a Dense emission layer and a transition matrix made by
params.get; the forward algorithm in log space, the gold path's score by pick and
gather_nd, Viterbi decoding by argmax); run through runtime.mxnet_compat by the tests.

Prints one line: the mean negative log-likelihood of the first and the last epoch, and
for each sentence 1 when the decoded tags are its gold tags, else 0.
"""
import mxnet as mx
from mxnet import autograd, gluon, nd
from mxnet.gluon import nn, rnn

mx.random.seed(1)
TAGS = {"B": 0, "I": 1, "O": 2}
START, STOP, N = 3, 4, 5
HIDDEN = 4
SENTENCES = [("the wall street journal reported today that apple corporation made money",
              "B I I I O O O B I O O"),
             ("georgia tech is a university in georgia", "B I O O O O B")]
VOCAB = {}
for words, _ in SENTENCES:
    for w in words.split():
        VOCAB.setdefault(w, len(VOCAB))


def log_sum_exp(scores):
    """log(sum(exp)) along the last axis of (rows, cols) scores, kept as (rows, 1)."""
    top = nd.max(scores, axis=1, keepdims=True)
    return top + nd.log(nd.sum(nd.exp(nd.broadcast_sub(scores, top)), axis=1, keepdims=True))


class Tagger(gluon.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed = nn.Embedding(len(VOCAB), 5)
            self.lstm = rnn.LSTM(HIDDEN // 2, bidirectional=True)
            self.emit = nn.Dense(N)
            # transitions[i, j]: the score of tag j followed by tag i
            self.transitions = self.params.get("transitions", shape=(N, N))

    def features(self, words):
        steps = words.shape[0]
        state = [nd.random.normal(shape=(2, 1, HIDDEN // 2)) for _ in range(2)]
        out, _ = self.lstm(self.embed(words).reshape((steps, 1, -1)), state)
        return self.emit(out.reshape((steps, HIDDEN)))

    def log_partition(self, feats):
        trans = self.transitions.data()
        alpha = nd.full((1, N), -10000.0)
        alpha[0, START] = 0
        for feat in nd.split(feats, num_outputs=feats.shape[0], axis=0):
            step = nd.broadcast_add(nd.broadcast_add(trans, alpha), feat.reshape((N, 1)))
            alpha = log_sum_exp(step).reshape((1, N))
        return log_sum_exp(alpha + trans[STOP].reshape((1, N))).reshape((1,))

    def gold_score(self, feats, tags):
        trans = self.transitions.data()
        before = nd.concat(nd.array([START]), tags[:-1], dim=0)
        moves = nd.gather_nd(trans, nd.stack(tags, before))
        return (nd.pick(feats, tags, axis=1).sum() + moves.sum()
                + trans[STOP, int(tags[-1].asscalar())])

    def nll(self, words, tags):
        feats = self.features(words)
        return self.log_partition(feats) - self.gold_score(feats, tags)

    def decode(self, words):
        feats = self.features(words)
        trans = self.transitions.data()
        best = nd.full((1, N), -10000.0)
        best[0, START] = 0
        pointers = []
        for feat in nd.split(feats, num_outputs=feats.shape[0], axis=0):
            step = nd.broadcast_add(trans, best)
            pointers.append(nd.argmax(step, axis=1).asnumpy().astype(int))
            best = (nd.max(step, axis=1) + feat.reshape((N,))).reshape((1, N))
        tag = int(nd.argmax(best + trans[STOP].reshape((1, N)), axis=1).asscalar())
        path = [tag]
        for back in reversed(pointers[1:]):
            tag = back[tag]
            path.append(tag)
        return path[::-1]


model = Tagger()
model.initialize(mx.init.Xavier(magnitude=2.24))
trainer = gluon.Trainer(model.collect_params(), "sgd", {"learning_rate": 0.02, "wd": 1e-4})
data = [(nd.array([VOCAB[w] for w in words.split()]), nd.array([TAGS[t] for t in tags.split()]),
         [TAGS[t] for t in tags.split()]) for words, tags in SENTENCES]
losses = []
for epoch in range(150):
    total = 0.0
    for words, tags, _ in data:
        with autograd.record():
            loss = model.nll(words, tags)
        loss.backward()
        trainer.step(1)
        total += float(loss.asscalar())
    losses.append(total / len(data))
print("nll", losses[0], "->", losses[-1], "match",
      *[int(model.decode(words) == gold) for words, _, gold in data])
