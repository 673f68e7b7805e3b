"""A LeNet on MNIST written for MXNet 1.x (Gluon, DataLoader with worker processes,
transforms); run through runtime.mxnet_compat by the tests on synthetic MNIST-format
files in the folder given as the first argument.

Prints one line: the loss of the first and the last epoch, and the test accuracy.
"""
import sys

import mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import nn
from mxnet.gluon.data.vision import MNIST, transforms

root = sys.argv[1]
mx.random.seed(0)
to_tensor = transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.13, 0.31)])
train = MNIST(root=root, train=True).transform_first(to_tensor)
test = MNIST(root=root, train=False).transform_first(to_tensor)
train_data = gluon.data.DataLoader(train, batch_size=32, shuffle=True, num_workers=2)
test_data = gluon.data.DataLoader(test, batch_size=100, num_workers=0)

net = nn.Sequential()
with net.name_scope():
    net.add(nn.Conv2D(6, kernel_size=5, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Conv2D(16, kernel_size=5, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Flatten(), nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"),
            nn.Dense(10))
net.initialize(mx.init.Xavier())
trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.002})
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

losses = []
for epoch in range(3):
    total, count = 0.0, 0
    for x, y in train_data:
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(x.shape[0])
        total += float(loss.sum().asscalar())
        count += x.shape[0]
    losses.append(total / count)
correct = n = 0
for x, y in test_data:
    pred = net(x).argmax(axis=1)
    correct += int((pred == y.astype("float32")).sum().asscalar())
    n += x.shape[0]
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} accuracy {correct / n:.3f}")
