# label: hazard silent
# why: clamping the softmax probabilities through .data before taking the log hides the write from autograd, so softmax's backward (which reuses its saved output) silently computes wrong classifier gradients.
import torch
import torch.nn as nn

torch.manual_seed(0)

clf = nn.Linear(5, 4)
x = torch.randn(16, 5) * 3.0
y = torch.randint(0, 4, (16,))
eps = 0.05

probs = torch.softmax(clf(x), dim=-1)
probs.data.clamp_(min=eps)  # <-- IPL007: softmax saved this output
nll = -torch.log(probs.gather(1, y[:, None])).mean()
nll.backward()
w_grad = clf.weight.grad.clone()
b_grad = clf.bias.grad.clone()
