# label: hazard silent
# why: the recorded pre-activation tensor is later passed through ReLU(inplace=True), which rebinds its grad_fn to the ReLU node, so autograd.grad(loss, recorded) silently returns the gradient w.r.t. the post-ReLU value instead of the pre-activation the tracer asked for.
# source: https://github.com/pytorch/pytorch/pull/110867
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActivationTracer:
    """Records intermediate activations so that their gradients can be queried later."""

    def __init__(self):
        self.records = {}

    def record(self, name, tensor):
        self.records[name] = tensor
        return tensor

    def grads(self, loss):
        names = list(self.records)
        grads = torch.autograd.grad(loss, [self.records[n] for n in names], retain_graph=True)
        return dict(zip(names, grads))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, tracer):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)
        self.act = nn.ReLU(inplace=True)
        self.tracer = tracer

    def forward(self, x):
        pre_act = self.tracer.record("ffn.pre_act", self.w_1(x))
        h = self.act(pre_act)  # <-- IPL006
        return self.w_2(h)


class Block(nn.Module):
    def __init__(self, d_model, d_ff, tracer):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, tracer)

    def forward(self, x):
        return x + self.ffn(self.norm(x))


def main():
    tracer = ActivationTracer()
    block = Block(8, 32, tracer)
    x = torch.randn(2 * 5, 8)  # (batch * seq_len, d_model) tokens
    target = torch.randn(2 * 5, 8)
    loss = F.mse_loss(block(x), target)
    grads = tracer.grads(loss)
    loss.backward()
    return loss.detach(), grads["ffn.pre_act"], block.ffn.w_1.weight.grad.clone()


loss, pre_act_grad, w1_grad = main()
