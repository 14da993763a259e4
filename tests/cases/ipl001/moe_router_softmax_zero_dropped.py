# label: hazard raises
# why: router softmax saves its output; zeroing the non-top-k experts through an index write modifies it in place
import torch
import torch.nn as nn

torch.manual_seed(0)

n_tokens, d_model, n_experts, top_k = 6, 8, 4, 2
router = nn.Linear(d_model, n_experts, bias=False)
experts = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(n_experts)])

x = torch.randn(n_tokens, d_model)
logits = router(x)
probs = torch.softmax(logits, dim=-1)
top_idx = probs.topk(top_k, dim=-1).indices
keep = torch.zeros_like(probs, dtype=torch.bool).scatter(1, top_idx, True)
probs[~keep] = 0.0  # <-- IPL001

out = torch.zeros_like(x)
for e, expert in enumerate(experts):
    out = out + probs[:, e:e + 1] * expert(x)

# load-balancing auxiliary loss
importance = probs.sum(0)
aux = (importance / importance.sum()).pow(2).sum() * n_experts
loss = out.pow(2).mean() + 0.01 * aux
loss.backward()
router_grad = router.weight.grad
