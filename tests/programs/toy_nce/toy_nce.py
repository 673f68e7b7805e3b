# Licensed to the Apache Software Foundation (ASF) under one
# or more contributor license agreements.  See the NOTICE file
# distributed with this work for additional information
# regarding copyright ownership.  The ASF licenses this file
# to you under the Apache License, Version 2.0 (the
# "License"); you may not use this file except in compliance
# with the License.  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing,
# software distributed under the License is distributed on an
# "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
# KIND, either express or implied.  See the License for the
# specific language governing permissions and limitations
# under the License.

# In the style of apache/mxnet's example/nce-loss/toy_nce.py (whose 1.9.x text is not at
# hand here; the version read still divides with '/' under Python 3): its network and
# training, on random_data.py's DataIterNce (an mx.io.DataIter subclass that assigns
# provide_data/provide_label and yields its own batch objects) beside nce.py's loss and
# NceAccuracy (an EvalMetric subclass), by mx.model.FeedForward.  Smaller than the
# example: 100 labels and 10,000 samples for 8 epochs.  Prints the validation
# accuracy of each epoch.
import logging
import random

import mxnet as mx
import numpy as np
from nce import *
from random_data import DataIterNce


def get_net(vocab_size, num_label):
    data = mx.sym.Variable('data')
    label = mx.sym.Variable('label')
    label_weight = mx.sym.Variable('label_weight')
    embed_weight = mx.sym.Variable('embed_weight')
    pred = mx.sym.FullyConnected(data = data, num_hidden = 100)
    ret = nce_loss(data = pred,
                    label = label,
                    label_weight = label_weight,
                    embed_weight = embed_weight,
                    vocab_size = vocab_size,
                    num_hidden = 100,
                    num_label = num_label)
    return ret


class Printed(logging.Handler):
    def emit(self, record):
        message = record.getMessage()
        if "Validation-nce-accuracy" in message:
            print(message.rsplit("=", 1)[1])


if __name__ == '__main__':
    random.seed(0)
    logging.basicConfig(level=logging.DEBUG, format='%(asctime)-15s %(message)s')
    logging.getLogger().addHandler(Printed())

    batch_size = 128
    vocab_size = 100
    feature_size = 100
    num_label = 6

    data_train = DataIterNce(10000, batch_size, vocab_size, num_label, feature_size)
    data_test = DataIterNce(1000, batch_size, vocab_size, num_label, feature_size)

    network = get_net(vocab_size, num_label)
    devs = [mx.cpu()]
    model = mx.model.FeedForward(ctx = devs,
                                 symbol = network,
                                 num_epoch = 8,
                                 learning_rate = 0.03,
                                 momentum = 0.9,
                                 wd = 0.00001,
                                 initializer=mx.init.Xavier(factor_type="in", magnitude=2.34))

    metric = NceAccuracy()
    model.fit(X = data_train, eval_data = data_test,
              eval_metric = metric,
              batch_end_callback = mx.callback.Speedometer(batch_size, 50),)
