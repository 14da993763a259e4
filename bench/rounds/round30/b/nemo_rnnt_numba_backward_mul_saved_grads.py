# label: hazard silent
# why: _RNNTNumba.backward scales the gradients it stashed on ctx in place (`ctx.grads.mul_(grad_output)`) and returns that same buffer, so any second pass through the retained graph (here a logging autograd.grad followed by backward) multiplies by grad_output again and the RNNT gradients come out silently rescaled.
# source: https://github.com/NVIDIA/NeMo/commit/4a23c0fd4e6bd1308f0db402d9bfee6ab0da9fb1
import torch
import torch.nn as nn
from torch.autograd import Function

torch.manual_seed(0)


def rnnt_loss_cpu(acts, labels, input_lengths, label_lengths, costs, grads, blank_label, fastemit_lambda, clamp, num_threads):
    """Stand-in for the numba kernel: per-frame label log-likelihood cost and its analytic gradient."""
    log_probs = torch.log_softmax(acts, dim=-1)  # B x T x U x V
    B, T, U, V = acts.shape
    for b in range(B):
        t_len = int(input_lengths[b])
        target = labels[b, 0]
        costs[b] = -log_probs[b, :t_len, 0, target].sum()
        if grads is not None:
            g = torch.softmax(acts[b, :t_len, 0], dim=-1)
            g[:, target] -= 1.0
            grads[b, :t_len, 0] = g


class _RNNTNumba(Function):
    @staticmethod
    def forward(ctx, acts, labels, act_lens, label_lens, blank, reduction, fastemit_lambda, clamp):
        loss_func = rnnt_loss_cpu
        grads = torch.zeros_like(acts) if acts.requires_grad else None
        minibatch_size = acts.size(0)
        costs = torch.zeros(minibatch_size, device=acts.device, dtype=acts.dtype)

        loss_func(acts, labels=labels, input_lengths=act_lens, label_lengths=label_lens, costs=costs,
                  grads=grads, blank_label=blank, fastemit_lambda=fastemit_lambda, clamp=clamp, num_threads=0)

        if reduction in ['sum', 'mean']:
            costs = costs.sum().unsqueeze_(-1)
            if reduction == 'mean':
                costs /= minibatch_size
                if grads is not None:
                    grads /= minibatch_size

        ctx.grads = grads
        return costs

    @staticmethod
    def backward(ctx, grad_output):
        if grad_output is not None and ctx.grads is not None:
            grad_output = grad_output.view(-1, 1, 1, 1).to(ctx.grads)
            return ctx.grads.mul_(grad_output), None, None, None, None, None, None, None  # <-- IPL005


def rnnt_loss(acts, labels, act_lens, label_lens, blank=0, reduction='mean', fastemit_lambda=0.0, clamp=0.0):
    return _RNNTNumba.apply(acts, labels, act_lens, label_lens, blank, reduction, fastemit_lambda, clamp)


class RNNTJoint(nn.Module):
    def __init__(self, enc_dim=8, pred_dim=8, num_classes=6):
        super().__init__()
        self.enc = nn.Linear(enc_dim, 16)
        self.pred = nn.Linear(pred_dim, 16)
        self.joint_net = nn.Linear(16, num_classes)

    def forward(self, f, g):
        return self.joint_net(torch.tanh(self.enc(f).unsqueeze(2) + self.pred(g).unsqueeze(1)))


def main():
    joint = RNNTJoint()
    enc_out = torch.randn(2, 5, 8)
    pred_out = torch.randn(2, 2, 8)
    labels = torch.tensor([[3, 1], [2, 4]])
    act_lens = torch.tensor([5, 4])
    label_lens = torch.tensor([2, 2])
    ctc_weight = 0.7

    acts = joint(enc_out, pred_out)
    loss_value = rnnt_loss(acts, labels, act_lens, label_lens).mean()
    aux_loss = acts.pow(2).mean()
    total = ctc_weight * loss_value + (1 - ctc_weight) * aux_loss

    # log the gradient norm of the joint layer before the real backward
    (joint_grad,) = torch.autograd.grad(total, joint.joint_net.weight, retain_graph=True)
    grad_norm = joint_grad.norm()
    total.backward()
    return grad_norm.detach(), joint.joint_net.weight.grad, joint.enc.weight.grad


grad_norm, joint_weight_grad, enc_weight_grad = main()
