# label: safe
# why: pre-norm transformer block: `x = x + attn(ln(x))`, and `h += x` on the fresh output of fc2 (addmm saves inputs only)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        y = self.ln1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        h = self.fc2(self.act(self.fc1(self.ln2(x))))
        h += x
        return h


block = Block(8)
x = torch.randn(2, 3, 8)
y = block(x)
loss = y.pow(2).mean()
loss.backward()
