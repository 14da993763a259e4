# label: hazard silent
# why: the encoder zeroes padded positions of the caller's tensor in place, and the caller adds that tensor as a residual afterwards
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        expand = attention_mask.unsqueeze(-1).repeat(1, 1, hidden_states.shape[2])
        hidden_states[~expand] = 0  # <-- IPL004
        return self.layer(hidden_states)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.encoder = Encoder()

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden_states = self.proj(x)
        encoded = self.encoder(hidden_states, attention_mask)
        return encoded + hidden_states


model = Model()
x = torch.randn(2, 3, 4, requires_grad=True)
mask = torch.tensor([[True, True, False], [True, False, False]])
out = model(x, mask)
out.sum().backward()
