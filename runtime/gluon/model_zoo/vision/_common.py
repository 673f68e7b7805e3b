"""What every model of the zoo shares: the classifier block base and pretrained loading."""

from runtime import nd
from runtime.context import cpu
from runtime.gluon.block import Block
from runtime.gluon.model_zoo import model_store


class Classifier(Block):
    """``output(features(x))``: the shape of every network of the zoo."""

    def forward(self, x):
        return self.output(self.features(x))


def relu(x):
    return nd.Activation(x, act_type="relu")


def finish(net, name, pretrained, ctx, root):
    """``net``, with MXNet's published parameters of ``name`` loaded from ``root`` when
    ``pretrained``."""
    if pretrained:
        net.load_parameters(model_store.get_model_file(name, root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net
