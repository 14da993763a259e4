# label: safe
# why: Mixtral-style router renormalises top-k probabilities with `/=` on the topk values (a fresh gather; topk saves only indices) and experts scatter into a zero buffer with index_add_.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoeBlock(nn.Module):
    def __init__(self, dim=8, hidden=16, num_experts=4, top_k=2):
        super().__init__()
        self.top_k = top_k
        self.num_experts = num_experts
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(dim, hidden) for _ in range(num_experts)])

    def forward(self, hidden_states):
        b, s, d = hidden_states.shape
        hidden_states = hidden_states.view(-1, d)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        final = torch.zeros_like(hidden_states)
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        for e in range(self.num_experts):
            idx, top_x = torch.where(expert_mask[e])
            if top_x.numel() == 0:
                continue
            current = hidden_states[top_x]
            current = self.experts[e](current) * routing_weights[top_x, idx, None]
            final.index_add_(0, top_x, current)
        return final.view(b, s, d), router_logits


def load_balancing_loss(router_logits, num_experts, top_k):
    probs = F.softmax(router_logits, dim=-1)
    _, sel = torch.topk(probs, top_k, dim=-1)
    mask = F.one_hot(sel, num_experts).float()
    tokens_per_expert = mask.mean(0)
    return (tokens_per_expert * probs.mean(0).unsqueeze(0)).sum() * num_experts


torch.manual_seed(0)
moe = SparseMoeBlock()
x = torch.randn(2, 5, 8)
y, logits = moe(x)
aux = load_balancing_loss(logits, 4, 2)
loss = y.pow(2).mean() + 0.01 * aux
loss.backward()
