# label: safe
# why: zeroing a slice of nn.Linear's output in place is fine on CPU: addmm saves its inputs, not its output, so the gradient equals the out-of-place masked version.
# source: https://github.com/pytorch/xla/issues/1718 (in-place `x[:, :768] = 0` after a Linear; wrong only on TPU, correct on CPU)
import torch
import torch.nn as nn


def run_test(device):
    torch.manual_seed(0)
    linear = nn.Linear(16, 32).to(device=device)
    batch = torch.rand(4, 16).to(device=device)
    x = linear(batch)
    x[:, :24] = 0
    loss = x.sum()
    loss.backward()
    return loss.detach(), linear.weight.grad.norm(), linear.bias.grad.clone()


cpu_loss, cpu_gnorm, cpu_bias_grad = run_test('cpu')
