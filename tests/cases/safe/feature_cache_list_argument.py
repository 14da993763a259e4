# label: safe
# why: causal video VAEs thread a list of cached features and a one-element index list through forward; writing into those lists is not a tensor write
import torch
import torch.nn as nn

torch.manual_seed(0)
CACHE_T = 2


class CausalBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(2, 2, 3, padding=1)

    def forward(self, x: torch.Tensor, feat_cache=None, feat_idx=None) -> torch.Tensor:
        if feat_idx is None:
            feat_idx = [0]
        if feat_cache is not None:
            idx = feat_idx[0]
            if feat_cache[idx] is None:
                feat_cache[idx] = "Rep"
            else:
                cached = x[:, :, -CACHE_T:].clone()
                x = torch.cat([feat_cache[idx] if feat_cache[idx] != "Rep" else cached, x], 2)
            feat_cache[idx] = x[:, :, -CACHE_T:].clone()
            feat_idx[0] += 1
        return self.conv(x)


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = CausalBlock()

    def forward(self, x: torch.Tensor, feat_cache=None, feat_idx=None) -> torch.Tensor:
        return self.block(x, feat_cache, feat_idx)


decoder = Decoder()
cache: list = [None]
x = torch.randn(1, 2, 4, requires_grad=True)
out = decoder(x, cache, [0])
out.sum().backward()
