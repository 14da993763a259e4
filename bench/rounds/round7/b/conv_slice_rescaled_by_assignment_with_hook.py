# label: hazard raises no-twin
# why: x[0, :, 0, 0] = x[0, :, 0, 0] * var multiplies a slice of x (mul saves that slice for var's gradient) and then writes the product back into x, so the saved slice is modified before backward.
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
        x[0, :, 0, 0] = x[0, :, 0, 0] * var  # <-- IPL001: overwrites the slice the multiplication saved

        loss = torch.mean(x)
        var.register_hook(lambda grad: grads_seen.append(grad.sum()))
        return loss


def run(model, x, y):
    loss = model(x, y)
    loss.backward()
    return loss.detach()


model = Model()
final_loss = run(model, torch.ones([1, 4, 3, 3]).float(), torch.randn([1, 4, 3, 3]).float())
