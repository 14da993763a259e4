# label: hazard silent
# why: the helper zeroes padded positions of its argument in place, and the encoder layer later adds that same tensor back as its residual.
import torch
import torch.nn as nn


def apply_padding_mask(hidden_states, attention_mask):
    """Zero out padded positions (attention_mask == 0)."""
    hidden_states.masked_fill_(attention_mask[..., None] == 0, 0.0)  # <-- IPL004
    return hidden_states


class ConvFeedForward(nn.Module):
    """Conformer/FastSpeech-style position-wise conv feed-forward."""

    def __init__(self, hidden_size, inner_size, kernel_size=3):
        super().__init__()
        self.in_proj = nn.Linear(hidden_size, hidden_size)
        self.conv = nn.Conv1d(hidden_size, inner_size, kernel_size, padding=kernel_size // 2)
        self.out = nn.Conv1d(inner_size, hidden_size, 1)
        self.act = nn.ReLU()

    def forward(self, x, attention_mask):
        residual = self.in_proj(x)
        h = apply_padding_mask(residual, attention_mask)
        h = self.act(self.conv(h.transpose(1, 2)))
        h = self.out(h).transpose(1, 2)
        return h + residual


torch.manual_seed(0)
layer = ConvFeedForward(hidden_size=6, inner_size=12)
x = torch.randn(2, 5, 6)
attention_mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]])
out = layer(x, attention_mask)
loss = out.abs().sum()
loss.backward()
