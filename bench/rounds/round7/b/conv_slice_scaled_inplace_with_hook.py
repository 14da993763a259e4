# label: safe no-twin
# why: x[0, :, 0, 0] *= var scales a slice of a fresh conv output in place; the in-place mul formula keeps what its backward needs and nothing else saved that conv output.
# source: https://github.com/pytorch/pytorch/issues/55980
import torch

torch.manual_seed(0)
grads_seen = []


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3)

    def forward(self, x, y):
        x = self.conv(x)
        y = self.conv(y)
        var = y.flatten()
        x[0, :, 0, 0] *= var

        loss = torch.mean(x)
        var.register_hook(lambda grad: grads_seen.append(grad.sum()))
        return loss


model = Model()
x = torch.ones([1, 4, 3, 3]).float()
y = torch.randn([1, 4, 3, 3]).float()
loss = model(x, y)
loss.backward()
var_grad_sum = grads_seen[0]
