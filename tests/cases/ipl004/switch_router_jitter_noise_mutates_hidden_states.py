# label: hazard silent
# why: the router applies multiplicative jitter to hidden_states in place, so the experts downstream also see the jittered input rather than only the router.
import torch
import torch.nn as nn


class Top1Router(nn.Module):
    def __init__(self, hidden_size, num_experts, jitter_noise=0.1):
        super().__init__()
        self.classifier = nn.Linear(hidden_size, num_experts, bias=False)
        self.jitter_noise = jitter_noise

    def forward(self, hidden_states):
        if self.training and self.jitter_noise > 0:
            hidden_states *= torch.empty_like(hidden_states).uniform_(  # <-- IPL004
                1.0 - self.jitter_noise, 1.0 + self.jitter_noise)
        router_logits = self.classifier(hidden_states)
        router_probs = router_logits.softmax(dim=-1)
        expert_index = router_probs.argmax(dim=-1)
        return expert_index, router_probs


class SparseMLP(nn.Module):
    def __init__(self, hidden_size=8, num_experts=3):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size)
        self.router = Top1Router(hidden_size, num_experts)
        self.experts = nn.ModuleList(nn.Linear(hidden_size, hidden_size) for _ in range(num_experts))

    def forward(self, x):
        hidden_states = self.norm(x)
        expert_index, router_probs = self.router(hidden_states)
        next_states = torch.zeros_like(hidden_states)
        for i, expert in enumerate(self.experts):
            mask = expert_index == i
            next_states[mask] = expert(hidden_states[mask])
        gate = router_probs.max(dim=-1, keepdim=True).values
        return x + gate * next_states


torch.manual_seed(0)
model = SparseMLP()
model.train()
x = torch.randn(2, 5, 8)
out = model(x)
loss = out.pow(2).mean()
loss.backward()
