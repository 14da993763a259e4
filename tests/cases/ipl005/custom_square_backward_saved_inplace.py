# label: hazard raises
# why: Square.backward doubles the saved input in place, so the second backward over the retained graph sees a modified saved tensor.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x.mul_(2)  # <-- IPL005: writes into ctx.saved_tensors
        return grad_output * x


encoder = nn.Linear(5, 3)
head_a = nn.Linear(3, 1)
head_b = nn.Linear(3, 1)
batch = torch.randn(6, 5)
energy = Square.apply(encoder(batch))
loss_a = head_a(energy).mean()
loss_b = head_b(energy).mean()
loss_a.backward(retain_graph=True)
loss_b.backward()
