# label: hazard raises
# why: the helper adds the position embedding in place to the expanded CLS token the caller passed, which is a view of a parameter, so torch raises.
import torch
import torch.nn as nn

torch.manual_seed(0)

dim = 8
cls_token = nn.Parameter(torch.randn(1, 1, dim))
cls_pos = nn.Parameter(torch.randn(1, 1, dim))
patch_proj = nn.Linear(12, dim)


def add_cls_position(cls, pos):
    cls.add_(pos)  # <-- IPL003: cls is a view of the cls_token parameter
    return cls


patches = torch.randn(2, 5, 12)
tokens = patch_proj(patches)
cls = add_cls_position(cls_token.expand(tokens.shape[0], -1, -1), cls_pos)
seq = torch.cat([cls, tokens], dim=1)
loss = seq.pow(2).mean()
loss.backward()
