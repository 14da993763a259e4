# label: safe
# why: SimSiamMLP puts nn.ReLU(inplace=True) right after BatchNorm1d; batch_norm's backward needs its input and saved statistics, not its output, so rectifying the BN output in place is safe and the predictor/projector gradients are unchanged.
# source: https://github.com/lucidrains/byol-pytorch/commit/6fb416408e2233a5683ddd210b2525c09d22265e (byol_pytorch/byol_pytorch.py, SimSiamMLP added in "fix:simsiam")
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


def loss_fn(x, y):
    x = F.normalize(x, dim=-1, p=2)
    y = F.normalize(y, dim=-1, p=2)
    return 2 - 2 * (x * y).sum(dim=-1)


class MLP(nn.Module):
    def __init__(self, dim, projection_size, hidden_size=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden_size),
            nn.BatchNorm1d(hidden_size),
            nn.ReLU(inplace=True),
            nn.Linear(hidden_size, projection_size)
        )

    def forward(self, x):
        return self.net(x)


class SimSiamMLP(nn.Module):
    def __init__(self, dim, projection_size, hidden_size=64, use_momentum=False):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden_size, bias=use_momentum),
                                 nn.BatchNorm1d(hidden_size),
                                 nn.ReLU(inplace=True),  # first layer
                                 nn.Linear(hidden_size, hidden_size, bias=use_momentum),
                                 nn.BatchNorm1d(hidden_size),
                                 nn.ReLU(inplace=True),  # second layer
                                 nn.Linear(hidden_size, projection_size),
                                 nn.BatchNorm1d(projection_size, affine=False))  # output layer
        self.net[6].bias.requires_grad = False  # hack: not use bias as it is followed by BN

    def forward(self, x):
        return self.net(x)


class SimSiam(nn.Module):
    def __init__(self, projection_size=16, projection_hidden_size=64):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.projector = SimSiamMLP(8, projection_size, projection_hidden_size)
        self.online_predictor = MLP(projection_size, projection_size, projection_hidden_size)

    def forward(self, image_one, image_two):
        online_proj_one = self.projector(self.backbone(image_one))
        online_proj_two = self.projector(self.backbone(image_two))
        online_pred_one = self.online_predictor(online_proj_one)
        online_pred_two = self.online_predictor(online_proj_two)
        # no momentum encoder: the target is the stop-gradient of the online projection
        target_proj_one = online_proj_one.detach()
        target_proj_two = online_proj_two.detach()
        loss_one = loss_fn(online_pred_one, target_proj_two)
        loss_two = loss_fn(online_pred_two, target_proj_one)
        return (loss_one + loss_two).mean()


learner = SimSiam()
opt = torch.optim.Adam(learner.parameters(), lr=3e-4)
images = torch.randn(8, 3, 16, 16)
view_one = images + 0.1 * torch.randn_like(images)
view_two = images.flip(-1)
loss = learner(view_one, view_two)
opt.zero_grad()
loss.backward()
opt.step()
