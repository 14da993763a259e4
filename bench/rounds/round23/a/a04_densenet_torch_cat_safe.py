# label: safe
# why: the original AbstractDenseNet grows the features with torch.cat, so every layer input is a fresh tensor that nothing writes to afterwards; the only cost is memory.
# source: https://discuss.pytorch.org/t/inplace-cat-buffer/75832
import torch
import torch.nn as nn

torch.manual_seed(0)


class AbstractDenseNet(torch.nn.Module):
    def __init__(self, in_features: int, depth: int, width: int):
        super(AbstractDenseNet, self).__init__()
        self._depth = depth
        self._width = width
        self._in_features = in_features
        self._out_features = in_features + width * depth
        self.layers = torch.nn.ModuleList(
            [
                self.get_layer(in_features=in_features + i * width, out_features=width)
                for i in range(depth)
            ]
        )

    def get_layer(self, in_features: int, out_features: int) -> torch.nn.Module:
        raise NotImplementedError

    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        cat_dim = len(tensor.size()) - 1
        for i in range(self._depth):
            cur_out = self.layers[i](tensor)
            tensor = torch.cat([tensor, cur_out], dim=cat_dim)
        return tensor


class DenseNet(AbstractDenseNet):
    def get_layer(self, in_features: int, out_features: int) -> torch.nn.Module:
        layer = nn.Sequential(nn.Linear(in_features, out_features), nn.ReLU(inplace=True))
        return layer


def main():
    model = DenseNet(in_features=8, depth=3, width=4)
    x = torch.randn(5, 8, requires_grad=True)
    out = model(x)
    out.mul_(0.5)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), x.grad, model.layers[0][0].weight.grad


loss, x_grad, w0_grad = main()
