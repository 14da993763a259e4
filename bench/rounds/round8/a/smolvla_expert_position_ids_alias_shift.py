# label: hazard silent
# why: the cross-attention layer aliases position_ids as expert_position_id and shifts it in place, so every later layer receives already-shifted positions for its RoPE.
# source: https://github.com/open-edge-platform/physical-ai-studio/issues/589
import torch
import torch.nn as nn

torch.manual_seed(0)


def apply_rope(x, positions, max_wavelength=10000):
    d_half = x.shape[-1] // 2
    freq_exponents = (2.0 / x.shape[-1]) * torch.arange(d_half, dtype=torch.float32)
    timescale = max_wavelength ** freq_exponents
    radians = positions[..., None].float() / timescale[None, None, :]
    sin, cos = torch.sin(radians), torch.cos(radians)
    x1, x2 = x.split(d_half, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class VLAWithExpertModel(nn.Module):
    def __init__(self, num_layers=3, dim=8):
        super().__init__()
        self.q_proj = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_layers))
        self.k_proj = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_layers))
        self.v_proj = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_layers))
        self.expert_q = nn.ModuleList(nn.Linear(dim, dim) for _ in range(num_layers))
        self.num_layers = num_layers

    def forward_cross_attn_layer(self, layer_idx, prefix_embs, suffix_embs, position_ids, prefix_len):
        q = apply_rope(self.q_proj[layer_idx](prefix_embs), position_ids[:, :prefix_len])
        k = apply_rope(self.k_proj[layer_idx](prefix_embs), position_ids[:, :prefix_len])
        v = self.v_proj[layer_idx](prefix_embs)
        prefix_out = torch.softmax(q @ k.transpose(1, 2) / 8 ** 0.5, -1) @ v

        expert_position_id = position_ids[:, prefix_len:]
        expert_position_id -= torch.min(expert_position_id, dim=1, keepdim=True).values  # <-- IPL004, IPL002: shifts the shared position_ids through a view; later layers read the shifted values
        eq = apply_rope(self.expert_q[layer_idx](suffix_embs), expert_position_id)
        suffix_out = torch.softmax(eq @ k.transpose(1, 2) / 8 ** 0.5, -1) @ v
        return prefix_out, suffix_out

    def forward(self, prefix_embs, suffix_embs, position_ids):
        prefix_len = prefix_embs.shape[1]
        for layer_idx in range(self.num_layers):
            prefix_embs, suffix_embs = self.forward_cross_attn_layer(
                layer_idx, prefix_embs, suffix_embs, position_ids, prefix_len
            )
        return prefix_embs, suffix_embs


model = VLAWithExpertModel().eval()
prefix_embs = torch.randn(1, 4, 8)
suffix_embs = torch.randn(1, 3, 8)
position_ids = torch.arange(7).view(1, 7) + 2
with torch.no_grad():
    prefix_out, action_out = model(prefix_embs, suffix_embs, position_ids)
