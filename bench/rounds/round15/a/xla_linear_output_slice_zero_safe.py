# label: safe
# why: Zeroing a slice of a Linear output in place (x[:, :768] = 0) is fine on CPU: addmm saves its inputs and weight, not its output, so the gradient simply ignores the zeroed columns (the reported mismatch was a TPU backend bug).
# source: https://github.com/pytorch/xla/issues/1718
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
    return linear, loss


linear, loss = run_test('cpu')
weight_grad = linear.weight.grad
