# label: hazard raises
# why: forward fills one preallocated feature buffer in place (buffer[..., lo:hi] = cur_out), but every earlier layer saved a view of that buffer as its Linear input, so the writes bump the buffer version and backward refuses the saved inputs.
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
        # "use one big preallocated buffer and fill it inplace during forward pass"
        cat_dim = len(tensor.size()) - 1
        buffer = tensor.new_zeros(tensor.size()[:-1] + (self._out_features,))
        buffer[..., : self._in_features] = tensor
        filled = self._in_features
        for i in range(self._depth):
            cur_out = self.layers[i](buffer.narrow(cat_dim, 0, filled))
            buffer[..., filled: filled + self._width] = cur_out  # <-- IPL001
            filled += self._width
        return buffer


class DenseNet(AbstractDenseNet):
    def get_layer(self, in_features: int, out_features: int) -> torch.nn.Module:
        return nn.Sequential(nn.Linear(in_features, out_features), nn.Tanh())


def main():
    model = DenseNet(in_features=8, depth=3, width=4)
    x = torch.randn(5, 8, requires_grad=True)
    out = model(x)
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), x.grad


loss, x_grad = main()
