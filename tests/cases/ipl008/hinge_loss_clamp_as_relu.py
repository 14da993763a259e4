# label: hazard silent
# why: the hinge loss uses clamp(min=0) as its ReLU, and with integer-valued features and weights many margins are exactly 0, where clamp passes gradient 1 instead of ReLU's 0.
import torch

torch.manual_seed(0)
x = torch.randint(-1, 2, (32, 3)).float()
y = torch.randint(0, 2, (32,)).float() * 2 - 1
w = torch.tensor([1.0, 1.0, -1.0], requires_grad=True)

scores = x @ w
hinge = torch.clamp(1 - y * scores, min=0)  # <-- IPL008: margins of exactly 0 get gradient 1
loss = hinge.mean()
loss.backward()
