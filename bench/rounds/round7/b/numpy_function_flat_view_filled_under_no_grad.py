# label: hazard raises no-twin
# why: Mul3ThenFlatten returns a view created inside the custom Function, and the caller overwrites padded entries of that view in place under torch.no_grad(), which would bypass the Function's custom backward.
# source: https://github.com/pytorch/pytorch/issues/14707
import torch
import torch.nn as nn
from torch.autograd import Function

torch.manual_seed(0)


class Mul3ThenFlatten(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        z = x.detach().numpy() * 3
        # If I add a .contiguous() to the end of this statement, other things happen.
        return torch.tensor(z).view(-1)

    @staticmethod
    def backward(ctx, dx):
        x = ctx.saved_tensors[0]
        return dx.view(x.shape) * 3


class Scorer(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.proj = nn.Linear(dim, 3)

    def forward(self, x, pad_mask):
        h = self.proj(x)
        output = Mul3ThenFlatten.apply(h)
        # Modify the padded entries in no_grad mode.
        with torch.no_grad():
            output[pad_mask.repeat_interleave(3)] = 0.0  # <-- IPL001: in-place write into a view returned by a custom Function
        return output


def train_step(scorer, x, pad_mask):
    scores = scorer(x, pad_mask)
    loss = scores.pow(2).sum()
    loss.backward()
    return loss.detach()


scorer = Scorer()
step_loss = train_step(scorer, torch.randn(4, 4), torch.tensor([False, False, True, False]))
