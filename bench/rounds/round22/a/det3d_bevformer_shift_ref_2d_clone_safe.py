# label: safe
# why: BEVFormer v2 clones the 2D reference grid before adding the ego-motion shift in place (shift_ref_2d = ref_2d.clone(); shift_ref_2d += shift), so only the copy moves and the hybrid reference keeps the unshifted grid for the current BEV.
# source: https://github.com/fundamentalvision/BEVFormer/commit/2f37d0d4932b064dce49154aef7173688410420f (V2, projects/mmdet3d_plugin/bevformer/modules/encoder.py: shift_ref_2d = ref_2d.clone())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TemporalSelfAttention(nn.Module):
    """Samples the stacked (prev_bev, bev_query) values at the hybrid 2D reference points."""

    def __init__(self, embed_dims=8):
        super().__init__()
        self.value_proj = nn.Linear(embed_dims, embed_dims)
        self.output_proj = nn.Linear(embed_dims, embed_dims)

    def forward(self, query, prev_bev, ref_2d, bev_h, bev_w):
        bs2, len_bev, _ = prev_bev.shape
        value = self.value_proj(prev_bev)
        value = value.permute(0, 2, 1).reshape(bs2, -1, bev_h, bev_w)
        grid = (ref_2d[:, :, 0] * 2 - 1).view(bs2, len_bev, 1, 2)
        sampled = F.grid_sample(value, grid, align_corners=False).squeeze(-1).permute(0, 2, 1)
        sampled = sampled.view(bs2 // 2, 2, len_bev, -1).mean(1)
        return self.output_proj(sampled) + query


class BEVFormerLayer(nn.Module):
    def __init__(self, embed_dims=8):
        super().__init__()
        self.attn = TemporalSelfAttention(embed_dims)
        self.norm = nn.LayerNorm(embed_dims)
        self.ffn = nn.Sequential(nn.Linear(embed_dims, 16), nn.ReLU(), nn.Linear(16, embed_dims))

    def forward(self, query, bev_pos=None, ref_2d=None, bev_h=None, bev_w=None, prev_bev=None):
        query = self.attn(query + bev_pos, prev_bev, ref_2d, bev_h, bev_w)
        query = self.norm(query)
        return query + self.ffn(query)


class BEVFormerEncoder(nn.Module):
    def __init__(self, num_layers=2, embed_dims=8):
        super().__init__()
        self.layers = nn.ModuleList([BEVFormerLayer(embed_dims) for _ in range(num_layers)])

    @staticmethod
    def get_reference_points(H, W, Z=8, num_points_in_pillar=4, dim='3d', bs=1, device='cpu', dtype=torch.float):
        # reference points on 2D bev plane, used in temporal self-attention (TSA).
        if dim == '2d':
            ref_y, ref_x = torch.meshgrid(
                torch.linspace(0.5, H - 0.5, H, dtype=dtype, device=device),
                torch.linspace(0.5, W - 0.5, W, dtype=dtype, device=device), indexing='ij')
            ref_y = ref_y.reshape(-1)[None] / H
            ref_x = ref_x.reshape(-1)[None] / W
            ref_2d = torch.stack((ref_x, ref_y), -1)
            ref_2d = ref_2d.repeat(bs, 1, 1).unsqueeze(2)
            return ref_2d

    def forward(self, bev_query, bev_h=None, bev_w=None, bev_pos=None, prev_bev=None, shift=0.):
        output = bev_query
        ref_2d = self.get_reference_points(
            bev_h, bev_w, dim='2d', bs=bev_query.size(1), device=bev_query.device, dtype=bev_query.dtype)

        shift_ref_2d = ref_2d.clone()
        shift_ref_2d += shift[:, None, None, :]

        # (num_query, bs, embed_dims) -> (bs, num_query, embed_dims)
        bev_query = bev_query.permute(1, 0, 2)
        bev_pos = bev_pos.permute(1, 0, 2)
        bs, len_bev, num_bev_level, _ = ref_2d.shape
        if prev_bev is not None:
            prev_bev = prev_bev.permute(1, 0, 2)
            prev_bev = torch.stack([prev_bev, bev_query], 1).reshape(bs * 2, len_bev, -1)
            hybird_ref_2d = torch.stack([shift_ref_2d, ref_2d], 1).reshape(bs * 2, len_bev, num_bev_level, 2)
        else:
            hybird_ref_2d = torch.stack([ref_2d, ref_2d], 1).reshape(bs * 2, len_bev, num_bev_level, 2)

        for lid, layer in enumerate(self.layers):
            output = layer(bev_query, bev_pos=bev_pos, ref_2d=hybird_ref_2d, bev_h=bev_h, bev_w=bev_w,
                           prev_bev=prev_bev)
            bev_query = output
        return output


def main():
    bev_h, bev_w, bs, dims = 4, 5, 2, 8
    encoder = BEVFormerEncoder(num_layers=2, embed_dims=dims)
    bev_embedding = nn.Embedding(bev_h * bev_w, dims)
    bev_query = bev_embedding.weight.unsqueeze(1).repeat(1, bs, 1)
    bev_pos = torch.randn(bev_h * bev_w, bs, dims)
    prev_bev = torch.randn(bev_h * bev_w, bs, dims)
    shift = torch.tensor([[0.1, -0.05], [0.03, 0.2]])
    bev_embed = encoder(bev_query, bev_h=bev_h, bev_w=bev_w, bev_pos=bev_pos, prev_bev=prev_bev, shift=shift)
    loss = bev_embed.pow(2).mean()
    loss.backward()
    return bev_embed.detach(), bev_embedding.weight.grad


bev_embed, grad = main()
