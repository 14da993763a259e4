# label: hazard raises
# why: from the second step on, h is the previous step's tanh output (saved by tanh and by the matmul), and mul_ resets it in place.
import torch

torch.manual_seed(0)

T, B, I, H = 5, 3, 4, 6
x = torch.randn(T, B, I)
keep = (torch.rand(T, B, 1) > 0.3).float()   # 0 where an episode ended
W_ih = torch.randn(I, H, requires_grad=True)
W_hh = torch.randn(H, H, requires_grad=True)
b = torch.zeros(H, requires_grad=True)

h = torch.zeros(B, H)
outputs = []
for t in range(T):
    h.mul_(keep[t])  # <-- IPL001: in step t>0 this overwrites tanh's saved output from step t-1
    h = torch.tanh(x[t] @ W_ih + h @ W_hh + b)
    outputs.append(h)
out = torch.stack(outputs)
loss = out.sum()
loss.backward()
