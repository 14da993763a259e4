# label: hazard silent
# why: contrast_logits divides the caller's query by the temperature in place; called once per negative queue, q gets divided again on every iteration
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def contrast_logits(q, bank, temperature):
    q.div_(temperature)  # <-- IPL004
    return q @ bank.t()


encoder_q = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
encoder_k = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 8))
for p in encoder_k.parameters():
    p.requires_grad_(False)

queues = [F.normalize(torch.randn(12, 8), dim=1) for _ in range(2)]
T = 0.2

view_a = torch.randn(4, 10)
view_b = view_a + 0.1 * torch.randn(4, 10)

q = F.normalize(encoder_q(view_a), dim=1)
with torch.no_grad():
    k = F.normalize(encoder_k(view_b), dim=1)

l_pos = (q * k).sum(1, keepdim=True) / T
l_negs = []
for bank in queues:
    l_negs.append(contrast_logits(q, bank, T))
logits = torch.cat([l_pos] + l_negs, dim=1)
labels = torch.zeros(4, dtype=torch.long)
loss = F.cross_entropy(logits, labels)
loss.backward()
logits_out = logits.detach()
grad_q = encoder_q[2].weight.grad.clone()
