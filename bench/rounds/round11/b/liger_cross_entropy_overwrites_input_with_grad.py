# label: hazard silent
# why: the fused cross-entropy writes the logits' gradient into the logits buffer during forward (bypassing autograd's version check), but the preceding exp() saved that very buffer as its output, so the gradient reaching the scorer is silently wrong.
# source: https://github.com/linkedin/Liger-Kernel/issues/272
import torch
import torch.nn as nn

torch.manual_seed(0)


def cross_entropy_forward(_input, target, ignore_index=-100):
    BT, V = _input.shape
    n_non_ignore = (target != ignore_index).sum()
    # online-softmax "kernel": loss per row, then the row is overwritten by its gradient to save memory
    m = _input.max(dim=-1, keepdim=True).values
    d = torch.exp(_input - m).sum(-1, keepdim=True)
    lse = m + torch.log(d)
    loss_1d = lse.squeeze(-1) - _input.gather(1, target.unsqueeze(1)).squeeze(1)
    grad_input = torch.softmax(_input, dim=-1)
    grad_input[torch.arange(BT), target] -= 1
    grad_input = grad_input / n_non_ignore
    _input.data.copy_(grad_input)  # <-- IPL007, IPL005: overwrites the forward input (exp's saved output) with its gradient, invisible to autograd
    loss = loss_1d.sum() / n_non_ignore
    return loss, _input


def cross_entropy_backward(_input, grad_output):
    if torch.equal(grad_output, torch.tensor(1.0, device=grad_output.device)):
        return _input
    return _input * grad_output


class LigerCrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, _input, target, ignore_index=-100):
        loss, _input = cross_entropy_forward(_input, target, ignore_index)
        ctx.save_for_backward(_input.detach())
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (_input,) = ctx.saved_tensors
        _input = cross_entropy_backward(_input, grad_output)
        return _input, None, None


class ScoreHead(nn.Module):
    """Produces positive scores exp(s) that are fed to the fused CE as logits."""

    def __init__(self, hidden=8, vocab=11):
        super().__init__()
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, h):
        return torch.exp(self.proj(h) * 0.1)


head = ScoreHead()
h = torch.randn(6, 8)
target = torch.randint(0, 11, (6,))
logits = head(h)
loss = LigerCrossEntropyFunction.apply(logits, target)
loss.backward()
