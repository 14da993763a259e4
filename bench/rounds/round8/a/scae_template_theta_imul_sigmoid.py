# label: hazard raises
# why: the capsule decoder turns a sigmoid output into a rotation angle with `theta *= 2 * pi`, overwriting the sigmoid result that SigmoidBackward saved.
# source: https://github.com/phanideepgampa/stacked-capsule-networks/issues/15
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def geometric_transform(pose_tensor, similarity=False, nonlinear=True):
    scale_x, scale_y, theta, shear, trans_x, trans_y = torch.split(pose_tensor, 1, -1)
    if nonlinear:
        scale_x, scale_y = torch.sigmoid(scale_x) + 1e-2, torch.sigmoid(scale_y) + 1e-2
        trans_x, trans_y, shear = torch.tanh(trans_x * 5.0), torch.tanh(trans_y * 5.0), torch.tanh(shear * 5.0)
        theta = torch.sigmoid(theta)
        theta *= 2.0 * math.pi  # <-- IPL001: overwrites sigmoid output saved for backward
    else:
        scale_x, scale_y = abs(scale_x) + 1e-2, abs(scale_y) + 1e-2
    c, s = torch.cos(theta), torch.sin(theta)
    if similarity:
        scale = scale_x
        pose = [scale * c, -scale * s, trans_x, scale * s, scale * c, trans_y]
    else:
        pose = [
            scale_x * c + shear * scale_y * s,
            -scale_x * s + shear * scale_y * c,
            trans_x,
            scale_y * s,
            scale_y * c,
            trans_y,
        ]
    pose = torch.cat(pose, -1)
    shape = list(pose.shape[:-1]) + [2, 3]
    return pose.view(*shape)


class TemplateImageDecoder(nn.Module):
    def __init__(self, n_templates=2, template_size=5, output_size=8):
        super().__init__()
        self.templates = nn.Parameter(torch.rand(n_templates, 1, template_size, template_size))
        self.output_size = output_size

    def forward(self, pose):
        B, K, _ = pose.shape
        transform = geometric_transform(pose).view(B * K, 2, 3)
        templates = self.templates.unsqueeze(0).expand(B, -1, -1, -1, -1).reshape(B * K, 1, 5, 5)
        grid = F.affine_grid(transform, (B * K, 1, self.output_size, self.output_size), align_corners=False)
        warped = F.grid_sample(templates, grid, align_corners=False)
        return warped.view(B, K, self.output_size, self.output_size).max(1)[0]


encoder = nn.Sequential(nn.Flatten(), nn.Linear(64, 2 * 6))
decoder = TemplateImageDecoder()
img = torch.rand(3, 1, 8, 8)
pose = encoder(img).view(3, 2, 6)
rec = decoder(pose)
loss = F.mse_loss(rec, img[:, 0])
loss.backward()
