# label: hazard silent
# why: the forward hook stores model[0]'s output, but the next nn.ReLU(inplace=True) clamps that same tensor, so the recorded "conv activation" is silently the post-ReLU map.
# source: https://github.com/meta-pytorch/captum/issues/156
import torch
import torch.nn as nn

torch.manual_seed(23)


class LayerActivation:
    def __init__(self, forward_func, layer):
        self.forward_func = forward_func
        self.layer = layer

    def attribute(self, inputs):
        saved_layer = {}

        def forward_hook(module, inp, out):
            saved_layer[module] = out

        hook = self.layer.register_forward_hook(forward_hook)
        with torch.no_grad():
            self.forward_func(inputs)
        hook.remove()
        return saved_layer[self.layer]


model = nn.Sequential(
    nn.Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)),
    nn.ReLU(inplace=True),  # <-- IPL002: clamps the conv output the hook already stored
    nn.Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)),
    nn.ReLU(inplace=True),
)

layer_act = LayerActivation(model, model[0])
inp = torch.randn(1, 3, 5, 5)
mylayer = model[0]
with torch.no_grad():
    direct = mylayer(inp)
attributed = layer_act.attribute(inp)
gap = torch.norm(direct - attributed, p=2)
