# label: safe
# why: the fixed encode() clones an (NS, 2) focal before negating fy on its own copy (self.focal), so the caller's focal tensor is never mutated and repeated encode() calls see the same value; the in-place uv *= / += only touch the fresh quotient tensor.
# source: https://github.com/sxyu/pixel-nerf/commit/af5383a96bd46834acdfaf43dd0a9af3db9b2f7b
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SpatialEncoder(nn.Module):
    def __init__(self, latent_size=8):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, latent_size, 3, padding=1), nn.ReLU())
        self.latent_size = latent_size

    def forward(self, x):
        self.latent = self.model(x)
        return self.latent

    def index(self, uv, image_size):
        scale = self.latent.new_tensor(self.latent.shape[-1:-3:-1]) / image_size
        uv = uv * scale * 2.0 / image_size - 1.0
        samples = F.grid_sample(self.latent, uv.unsqueeze(2), align_corners=True, padding_mode="border")
        return samples[:, :, :, 0]  # (B, C, N)


class PixelNeRFNet(nn.Module):
    def __init__(self, latent_size=8):
        super().__init__()
        self.encoder = SpatialEncoder(latent_size)
        self.latent_size = latent_size
        self.mlp_coarse = nn.Sequential(nn.Linear(latent_size + 3, 32), nn.ReLU(), nn.Linear(32, 4))
        self.register_buffer("image_shape", torch.empty(2), persistent=False)
        self.register_buffer("focal", torch.empty(1, 2), persistent=False)
        self.register_buffer("c", torch.empty(1, 2), persistent=False)
        self.num_views_per_obj = 1

    def encode(self, images, poses, focal, c=None):
        self.encoder(images)
        rot = poses[:, :3, :3].transpose(1, 2)
        trans = -torch.bmm(rot, poses[:, :3, 3:])
        self.poses = torch.cat((rot, trans), dim=-1)

        self.image_shape[0] = images.shape[-1]
        self.image_shape[1] = images.shape[-2]

        # Handle various focal length/principal point formats
        if len(focal.shape) == 0:
            focal = focal[None, None].repeat((1, 2))
        elif len(focal.shape) == 1:
            focal = focal.unsqueeze(-1).repeat((1, 2))
        else:
            focal = focal.clone()
        self.focal = focal.float()
        self.focal[..., 1] *= -1.0

        if c is None:
            c = (self.image_shape * 0.5).unsqueeze(0)
        self.c = c

    def forward(self, xyz):
        SB, B, _ = xyz.shape
        xyz_rot = torch.matmul(self.poses[:, None, :3, :3], xyz.unsqueeze(-1))[..., 0]
        xyz = xyz_rot + self.poses[:, None, :3, 3]
        z_feature = xyz_rot.reshape(-1, 3)

        uv = -xyz[:, :, :2] / xyz[:, :, 2:]  # (SB, B, 2)
        uv *= self.focal.unsqueeze(1)
        uv += self.c.unsqueeze(1)
        latent = self.encoder.index(uv, self.image_shape)
        latent = latent.transpose(1, 2).reshape(-1, self.latent_size)

        mlp_input = torch.cat((latent, z_feature), dim=-1)
        return self.mlp_coarse(mlp_input).reshape(SB, B, 4)


def main():
    net = PixelNeRFNet()
    NS = 2
    src_images = torch.rand(NS, 3, 16, 16)
    src_poses = torch.eye(4).repeat(NS, 1, 1)
    src_poses[:, 2, 3] = 4.0
    focal = torch.tensor([[20.0, 20.0], [22.0, 22.0]])
    xyz = torch.randn(NS, 32, 3) * 0.5

    outputs = []
    for step in range(2):  # e.g. rendering two frames from the same source views
        net.encode(src_images, src_poses, focal)
        out = net(xyz)
        loss = out[..., :3].sigmoid().mean()
        loss.backward()
        outputs.append(out.detach())
    return outputs[0], outputs[1], net.mlp_coarse[0].weight.grad


out_first, out_second, mlp_grad = main()
