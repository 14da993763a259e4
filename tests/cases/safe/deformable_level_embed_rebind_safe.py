# label: safe
# why: `src` first aliases the lateral map but is rebound to `src + level_embed` before `lateral += up`, so the later read of src sees its own tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LevelFusion(nn.Module):
    def __init__(self, in_channels=(8, 16), d=8):
        super().__init__()
        self.input_proj = nn.ModuleList(nn.Conv2d(c, d, 1) for c in in_channels)
        self.level_embed = nn.Parameter(torch.randn(len(in_channels), d))
        self.out = nn.Linear(d, d)

    def forward(self, feats):
        c3, c4 = feats
        p4 = self.input_proj[1](c4)
        lateral = self.input_proj[0](c3)
        src = lateral
        src = src + self.level_embed[0].view(1, -1, 1, 1)
        lateral += F.interpolate(p4, size=lateral.shape[-2:], mode="nearest")
        tokens = torch.cat([src.flatten(2), lateral.flatten(2), p4.flatten(2)], dim=2)
        return self.out(tokens.transpose(1, 2))


model = LevelFusion()
c3 = torch.randn(2, 8, 6, 6)
c4 = torch.randn(2, 16, 3, 3)
memory = model((c3, c4))
loss = memory.pow(2).mean()
loss.backward()
grad_level = model.level_embed.grad.clone()
grad_proj0 = model.input_proj[0].weight.grad.clone()
grad_out = model.out.weight.grad.clone()
