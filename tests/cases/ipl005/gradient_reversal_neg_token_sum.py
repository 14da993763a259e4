# label: hazard raises
# why: the gradient reversal layer negates grad_output in place, but the token sum after it passes an expanded gradient, so the in-place write raises.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        grad_output.mul_(-ctx.lambd)  # <-- IPL005: in-place on grad_output
        return grad_output, None


encoder = nn.Linear(12, 16)
label_head = nn.Linear(16, 4)
domain_head = nn.Linear(16, 1)

tokens = torch.randn(6, 5, 12)
labels = torch.randint(0, 4, (6,))
domains = torch.tensor([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])

feats = encoder(tokens)
task_loss = F.cross_entropy(label_head(feats.mean(dim=1)), labels)
dom_feats = GradReverse.apply(feats, 0.3).sum(dim=1)
dom_loss = F.binary_cross_entropy_with_logits(domain_head(dom_feats).squeeze(1), domains)
loss = task_loss + dom_loss
loss.backward()
