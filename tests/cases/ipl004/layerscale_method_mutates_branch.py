# label: hazard silent
# why: Block.layer_scale (a method, not forward) multiplies the caller's branch tensor in place, so the branch RMS statistic read afterwards is of the scaled branch
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim=16, init_values=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.gamma = nn.Parameter(init_values * torch.ones(dim))
        self.branch_rms = None

    def layer_scale(self, branch):
        return branch.mul_(self.gamma)  # <-- IPL004

    def forward(self, x):
        branch = self.mlp(self.norm(x))
        out = x + self.layer_scale(branch)
        # keep the unscaled branch magnitude in check (regularizer)
        self.branch_rms = branch.pow(2).mean().sqrt()
        return out


blocks = nn.ModuleList(Block() for _ in range(2))
x = torch.randn(2, 4, 16)
h = x
for blk in blocks:
    h = blk(h)
reg = sum(blk.branch_rms for blk in blocks)
loss = h.pow(2).mean() + 0.1 * reg
loss.backward()
grad_gamma = blocks[0].gamma.grad.clone()
grad_fc = blocks[1].mlp[0].weight.grad.clone()
