# label: safe
# why: each up block adds the skip into the tensor it is given, but the caller rebinds `h` to the block's output and never reads the old tensor
import torch
import torch.nn as nn

torch.manual_seed(0)


class UpBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden_states, skip):
        hidden_states += skip
        return self.norm(self.proj(hidden_states))

    @classmethod
    def from_dim(cls, dim):
        return cls(dim)


class Decoder(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.inp = nn.Linear(dim, dim)
        self.up_blocks = nn.ModuleList(UpBlock.from_dim(dim) for _ in range(depth))
        self.out = nn.Linear(dim, 2)

    def forward(self, x, skips):
        h = self.inp(x)
        for i, up in enumerate(self.up_blocks):
            h = up(h, skips[i])
        return self.out(h)


dec = Decoder(4, 3)
h0 = torch.randn(2, 4)
skips = [torch.randn(2, 4) for _ in range(3)]
out = dec(h0 * 1.0, skips)
loss = out.pow(2).sum()
loss.backward()
