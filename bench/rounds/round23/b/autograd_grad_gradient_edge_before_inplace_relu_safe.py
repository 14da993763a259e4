# label: safe
# why: the tracer records the GradientEdge of the pre-activation before ReLU(inplace=True) runs, so even though the in-place ReLU rebinds the tensor's grad_fn, autograd.grad still differentiates w.r.t. the original pre-activation node.
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
        # keep the gradient edge, not the tensor: an in-place op may change its grad_fn
        self.records[name] = torch.autograd.graph.get_gradient_edge(tensor)
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
        h = self.act(pre_act)
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
