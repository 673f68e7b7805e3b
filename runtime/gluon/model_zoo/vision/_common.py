"""What every model of the zoo shares: the classifier block base and pretrained loading."""

from runtime.context import cpu
from runtime.gluon.block import HybridBlock
from runtime.gluon.model_zoo import model_store


class Classifier(HybridBlock):
    """``output(features(x))``: the shape of every network of the zoo (a HybridBlock, as
    every block of the zoo: ``hybridize()`` runs the whole network as one graph, and
    ``export()`` writes it in MXNet's formats)."""

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def relu(F, x):
    return F.Activation(x, act_type="relu")


def finish(net, name, pretrained, ctx, root):
    """``net``, with MXNet's published parameters of ``name`` loaded from ``root`` when
    ``pretrained``."""
    if pretrained:
        net.load_parameters(model_store.get_model_file(name, root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net
