# label: hazard raises
# why: MOVEDepth's UncertNet (the mask_cnn that turns the cost-volume entropy map into a fusion mask) does `out += x` on the output of conv2, whose last layer is a non-inplace nn.ReLU; ReluBackward0 saved that output, so training the fusion crashes on backward.
# source: https://github.com/JeffWang987/MOVEDepth/issues/1
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class UncertNet(nn.Module):
    def __init__(self):
        super(UncertNet, self).__init__()
        self.conv1 = nn.Sequential(
            nn.Conv2d(1, 8, 3, 1, 1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU()
        )
        self.conv2 = nn.Sequential(
            nn.Conv2d(8, 8, 3, 1, 1, bias=False),
            nn.BatchNorm2d(8),
            nn.ReLU()
        )
        self.head_convs = nn.Conv2d(8, 1, 3, 1, 1, bias=False)

    def forward(self, x):
        out = self.conv1(x)
        out = self.conv2(out)
        out += x  # <-- IPL001
        out = self.head_convs(out)
        out = torch.sigmoid(out)
        return out  # B 1 H W


class CostRegNet(nn.Module):
    """Stand-in for the 3D regularisation of the plane-sweep cost volume: B C D H W -> B D H W logits."""

    def __init__(self, in_channels=4):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, 4, 3, 1, 1)
        self.prob = nn.Conv3d(4, 1, 3, 1, 1)

    def forward(self, volume):
        return self.prob(F.relu(self.conv(volume))).squeeze(1)


def get_depth_grid(depth_bins, min_d, max_d):
    return torch.linspace(min_d, max_d, depth_bins).view(1, depth_bins, 1, 1)  # 1 D 1 1


def main():
    B, C, D, H, W = 2, 4, 8, 12, 16
    min_d, max_d = 0.1, 10.0
    reg3d = CostRegNet(C)
    mask_cnn = UncertNet()
    params = list(reg3d.parameters()) + list(mask_cnn.parameters())
    optimizer = torch.optim.Adam(params, lr=1e-4)

    cost_volume = torch.randn(B, C, D, H, W)
    mono_depth = torch.rand(B, 1, H, W) * (max_d - min_d) + min_d
    gt_depth = torch.rand(B, 1, H, W) * (max_d - min_d) + min_d

    prob_volume = torch.softmax(reg3d(cost_volume), dim=1)  # B D H W
    mvs_depth = (prob_volume * get_depth_grid(D, min_d, max_d)).sum(dim=1, keepdim=True)
    entropy = -(prob_volume * torch.log(prob_volume + 1e-6)).sum(dim=1, keepdim=True)  # B 1 H W

    mask = mask_cnn(entropy)
    fused_depth = mask * mvs_depth + (1 - mask) * mono_depth
    loss = F.l1_loss(fused_depth, gt_depth) + F.l1_loss(mvs_depth, gt_depth)

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach(), fused_depth.detach(), mask_cnn.head_convs.weight.grad


loss, fused_depth, head_grad = main()
