# label: safe
# why: the Linear inside the `if` saved the tensor bound before it, but that arm rebinds the name; the later in-place scale reaches the saved tensor only on the path where the Linear never ran
import torch
import torch.nn as nn

torch.manual_seed(0)


class Layer(nn.Module):
    def __init__(self, gate: bool) -> None:
        super().__init__()
        self.gate = nn.Linear(4, 4) if gate else None
        self.norm = nn.LayerNorm(4)
        self.scale = 0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden_states = self.norm(x)
        hidden_states = x + hidden_states
        if self.gate is not None:
            residual = hidden_states
            hidden_states = self.gate(hidden_states)
            hidden_states = residual + hidden_states
        hidden_states *= self.scale
        return hidden_states


for gate in (True, False):
    x = torch.randn(2, 4, requires_grad=True)
    Layer(gate)(x).sum().backward()
