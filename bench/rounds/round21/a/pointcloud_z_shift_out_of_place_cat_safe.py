# label: safe
# why: the out-of-place fix builds the shifted cloud with torch.cat from slices of the leaf plus the offset, so the leaf pts is never written and gradients flow to both pts and z_offset.
# source: https://pytroubles.com/en/ampposts/id3016-pytorch-z-channel-shift-without-breaking-autograd-avoid-in-place-views-keep-gradients-safe
import torch
import torch.nn as nn

torch.manual_seed(0)


class PointEncoder(nn.Module):
    def __init__(self, out_dim=16):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv1d(3, 32, 1), nn.ReLU(), nn.Conv1d(32, out_dim, 1))

    def forward(self, pts):
        feat = self.mlp(pts)  # (B, C, N)
        return feat.max(dim=-1).values


def main():
    encoder = PointEncoder()
    # 2 batches, 3 channels (x, y, z), 5 points
    pts = torch.rand(2, 3, 5, requires_grad=True)
    # one z shift per batch
    z_offset = torch.tensor([[1.0], [10.0]], requires_grad=True)

    shifted = torch.cat([pts[:, :2, :], pts[:, 2:3, :] + z_offset.unsqueeze(-1)], dim=1)

    global_feat = encoder(shifted)
    loss = global_feat.pow(2).mean()
    loss.backward()
    return pts.grad, z_offset.grad, global_feat.detach()


pts_grad, offset_grad, feat = main()
