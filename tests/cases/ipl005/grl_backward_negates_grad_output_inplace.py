# label: hazard silent
# why: the gradient-reversal layer negates grad_output in place, and that gradient buffer is shared with the other branch of the sum, so the classifier branch receives reversed gradients too.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        grad_output.neg_()  # <-- IPL005
        return grad_output


feature = nn.Linear(4, 4)
label_head = nn.Linear(4, 2)
domain_head = nn.Linear(4, 2)

x = torch.randn(6, 4)
h = feature(x)
skip = label_head.weight.sum() * h
mixed = GradReverse.apply(h) + skip
loss = (domain_head(mixed) ** 2).mean()
loss.backward()
