# label: safe
# why: the target projections are produced under torch.no_grad(), so detach_() on them only drops a graph that does not exist; the online branch keeps its own graph.
# source: https://github.com/lucidrains/byol-pytorch/commit/425865160c575cc253d64bf25545306d68d780a0
import copy

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def loss_fn(x, y):
    x = F.normalize(x, dim=-1, p=2)
    y = F.normalize(y, dim=-1, p=2)
    return 2 - 2 * (x * y).sum(dim=-1)


def MLP(dim, projection_size, hidden_size=16):
    return nn.Sequential(nn.Linear(dim, hidden_size), nn.BatchNorm1d(hidden_size), nn.ReLU(inplace=True), nn.Linear(hidden_size, projection_size))


class NetWrapper(nn.Module):
    def __init__(self, net, projection_size, projection_hidden_size):
        super().__init__()
        self.net = net
        self.projector = MLP(8, projection_size, projection_hidden_size)

    def forward(self, x):
        representation = self.net(x)
        projection = self.projector(representation)
        return projection, representation


class BYOL(nn.Module):
    def __init__(self, net, projection_size=4, projection_hidden_size=16, use_momentum=True):
        super().__init__()
        self.augment1 = lambda x: x + 0.1 * torch.randn_like(x)
        self.augment2 = lambda x: torch.flip(x, dims=(3,))
        self.online_encoder = NetWrapper(net, projection_size, projection_hidden_size)
        self.use_momentum = use_momentum
        self.target_encoder = None
        self.online_predictor = MLP(projection_size, projection_size, projection_hidden_size)

    def _get_target_encoder(self):
        if self.target_encoder is None:
            target_encoder = copy.deepcopy(self.online_encoder)
            for p in target_encoder.parameters():
                p.requires_grad = False
            self.target_encoder = target_encoder
        return self.target_encoder

    def forward(self, x):
        image_one, image_two = self.augment1(x), self.augment2(x)

        online_proj_one, _ = self.online_encoder(image_one)
        online_proj_two, _ = self.online_encoder(image_two)

        online_pred_one = self.online_predictor(online_proj_one)
        online_pred_two = self.online_predictor(online_proj_two)

        with torch.no_grad():
            target_encoder = self._get_target_encoder() if self.use_momentum else self.online_encoder
            target_proj_one, _ = target_encoder(image_one)
            target_proj_two, _ = target_encoder(image_two)
            target_proj_one.detach_()
            target_proj_two.detach_()

        loss_one = loss_fn(online_pred_one, target_proj_two.detach())
        loss_two = loss_fn(online_pred_two, target_proj_one.detach())

        loss = loss_one + loss_two
        return loss.mean()


resnet = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
learner = BYOL(resnet)
opt = torch.optim.Adam(learner.parameters(), lr=3e-4)
images = torch.randn(4, 3, 8, 8)
loss = learner(images)
opt.zero_grad()
loss.backward()
opt.step()
