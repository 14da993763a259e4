# label: hazard silent
# why: the hinge loss torch.clamp(1 - y * score, min=0) hits exactly 0 for the points that lie on the margin, where clamp gives subgradient 1 but relu gives 0, so the SVM weight gradient differs.
import torch

torch.manual_seed(0)

X = torch.tensor([[2.0, 0.0], [0.0, 4.0], [1.0, 1.0], [-2.0, 0.0], [0.0, -1.0], [3.0, -2.0]])
y = torch.tensor([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
w = torch.tensor([0.5, 0.25], requires_grad=True)
b = torch.zeros((), requires_grad=True)
C = 1.0

score = X @ w + b
hinge = torch.clamp(1 - y * score, min=0)  # <-- IPL008: margin points give exactly 0
loss = 0.5 * (w * w).sum() + C * hinge.mean()
loss.backward()
w_grad = w.grad.clone()
b_grad = b.grad.clone()
