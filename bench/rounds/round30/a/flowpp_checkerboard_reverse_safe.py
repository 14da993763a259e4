# label: safe
# why: checkerboard(reverse=True) accumulates y and z into a fresh zeros buffer with `x[:, :, idx] += ...`; on current PyTorch the advanced-index reads save only the indices, not x, so the in-place index_put_ calls overwrite nothing autograd needs and gradients match the out-of-place version.
# source: https://github.com/chrischute/flowplusplus/issues/2
import torch
import torch.nn as nn

torch.manual_seed(0)


def checkerboard(x, reverse=False):
    """Split x in a checkerboard pattern. Collapse horizontally."""
    # Get dimensions
    if reverse:
        b, c, h, w = x[0].size()
        w *= 2
        device = x[0].device
    else:
        b, c, h, w = x.size()
        device = x.device

    # Get list of indices in alternating checkerboard pattern
    y_idx = []
    z_idx = []
    for i in range(h):
        for j in range(w):
            if (i % 2) == (j % 2):
                y_idx.append(i * w + j)
            else:
                z_idx.append(i * w + j)
    y_idx = torch.tensor(y_idx, dtype=torch.int64, device=device)
    z_idx = torch.tensor(z_idx, dtype=torch.int64, device=device)

    if reverse:
        y, z = (t.contiguous().view(b, c, h * w // 2) for t in x)
        x = torch.zeros(b, c, h * w, dtype=y.dtype, device=y.device)
        x[:, :, y_idx] += y
        x[:, :, z_idx] += z
        x = x.view(b, c, h, w)

        return x
    else:
        if w % 2 != 0:
            raise RuntimeError('Checkerboard got odd width input: {}'.format(w))

        x = x.view(b, c, h * w)
        y = x[:, :, y_idx].view(b, c, h, w // 2)
        z = x[:, :, z_idx].view(b, c, h, w // 2)

        return y, z


class Coupling(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.nn = nn.Sequential(nn.Conv2d(in_channels, 16, 3, padding=1), nn.ReLU(),
                                nn.Conv2d(16, 2 * in_channels, 3, padding=1))

    def forward(self, x_change, x_id):
        a, b = self.nn(x_id).chunk(2, dim=1)
        scale = torch.tanh(a)
        x_change = x_change * scale.exp() + b
        sldj = scale.flatten(1).sum(-1)
        return x_change, x_id, sldj


def main():
    coupling = Coupling(3)
    x = torch.randn(2, 3, 8, 8, requires_grad=True)
    x_id, x_change = checkerboard(x)
    x_change, x_id, sldj = coupling(x_change, x_id)
    x_out = checkerboard((x_id, x_change), reverse=True)
    loss = 0.5 * x_out.pow(2).flatten(1).sum(-1).mean() - sldj.mean()
    loss.backward()
    return x_out.detach(), x.grad, coupling.nn[0].weight.grad


x_out, x_grad, conv_grad = main()
