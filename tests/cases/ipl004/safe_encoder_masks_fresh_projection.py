# label: safe
# why: the encoder zeroes padded positions of its input in place, but the only caller passes a fresh projection it never reads again
import torch
import torch.nn as nn

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None):
        if attention_mask is not None:
            expand = attention_mask.unsqueeze(-1).repeat(1, 1, hidden_states.shape[2])
            hidden_states[~expand] = 0
        return self.layer(hidden_states)


class StableEncoder(Encoder):
    pass


class Model(nn.Module):
    def __init__(self, stable: bool) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        if stable:
            self.encoder = StableEncoder()
        else:
            self.encoder = Encoder()

    def forward(self, x: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden_states = self.proj(x)
        return self.encoder(hidden_states, attention_mask=attention_mask)


model = Model(stable=False)
x = torch.randn(2, 3, 4, requires_grad=True)
mask = torch.tensor([[True, True, False], [True, False, False]])
model(x, mask).sum().backward()
