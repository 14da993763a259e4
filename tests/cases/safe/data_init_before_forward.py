# label: safe
# why: .data writes rescale the freshly created parameters during __init__, before any forward pass has recorded a graph
import torch
import torch.nn as nn
import torch.nn.functional as F


class HyperMLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for d_in, d_out in zip(sizes[:-1], sizes[1:]):
            self.weights.append(nn.Parameter(torch.randn(d_out, d_in)))
            self.biases.append(nn.Parameter(torch.randn(d_out)))
        # fan-in scaling and zero bias, applied through .data at init time
        for i in range(len(self.weights)):
            fan_in = self.weights[i].shape[1]
            self.weights[i].data.mul_(fan_in ** -0.5)
            self.biases[i].data.mul_(0.0)

    def forward(self, x):
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = F.linear(x, w, b)
            if i < len(self.weights) - 1:
                x = F.gelu(x)
        return x


torch.manual_seed(0)
model = HyperMLP([7, 12, 2])
x = torch.randn(9, 7)
y = torch.randn(9, 2)

pred = model(x)
loss = F.mse_loss(pred, y)
loss.backward()

w0_grad = model.weights[0].grad.clone()
w1_grad = model.weights[1].grad.clone()
final_pred = pred.detach()
