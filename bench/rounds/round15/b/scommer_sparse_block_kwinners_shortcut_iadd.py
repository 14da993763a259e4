# label: safe
# why: SparseBasicBlock adds the shortcut into the BatchNorm output in place (BN saves its input, not its output) and k-winners builds its mask from a detached copy with scatter_/clamp_ on fresh tensors, so every in-place write is harmless.
# source: https://github.com/NeurAI-Lab/SCoMMER/blob/703f94bd4e98529dc0caf8419bbf4892f11cab8c/backbone/SparseResNet18.py (with backbone/utils/functional/k_winners.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def boost_activations(x, duty_cycles, boost_strength: float):
    if boost_strength > 0.0:
        return x.detach() * torch.exp(-boost_strength * duty_cycles)
    else:
        return x.detach()


def kwinners2d(x, duty_cycles, k: int, boost_strength: float, local: bool = True,
               break_ties: bool = False, relu: bool = False, inplace: bool = False):
    if k == 0:
        return torch.zeros_like(x)
    boosted = boost_activations(x, duty_cycles, boost_strength)
    if break_ties:
        if local:
            indices = boosted.topk(k=k, dim=1, sorted=False)[1]
            off_mask = torch.ones_like(boosted, dtype=torch.bool)
            off_mask.scatter_(1, indices, 0)
        else:
            shape2 = (x.shape[0], x.shape[1] * x.shape[2] * x.shape[3])
            indices = boosted.view(shape2).topk(k, dim=1, sorted=False)[1]
            off_mask = torch.ones(shape2, dtype=torch.bool, device=x.device)
            off_mask.scatter_(1, indices, 0)
            off_mask = off_mask.view(x.shape)
        if relu:
            off_mask.logical_or_(boosted <= 0)
    else:
        if local:
            threshold = boosted.kthvalue(x.shape[1] - k + 1, dim=1, keepdim=True)[0]
        else:
            threshold = boosted.view(x.shape[0], -1).kthvalue(
                x.shape[1] * x.shape[2] * x.shape[3] - k + 1, dim=1)[0]
            threshold = threshold.view(x.shape[0], 1, 1, 1)
        if relu:
            threshold.clamp_(min=0)
        off_mask = boosted < threshold
    if inplace:
        return x.masked_fill_(off_mask, 0)
    else:
        return x.masked_fill(off_mask, 0)


class KWinners2d(nn.Module):
    def __init__(self, channels, percent_on, boost_strength=0.0, local=False, relu=False, break_ties=False):
        super().__init__()
        self.channels = channels
        self.percent_on = percent_on
        self.boost_strength = boost_strength
        self.local = local
        self.relu = relu
        self.break_ties = break_ties
        self.register_buffer("duty_cycle", torch.zeros((1, channels, 1, 1)))

    def forward(self, x):
        if self.local:
            k = max(1, int(round(self.channels * self.percent_on)))
        else:
            k = max(1, int(round(self.channels * x.shape[2] * x.shape[3] * self.percent_on)))
        return kwinners2d(x, self.duty_cycle, k, self.boost_strength, self.local, self.break_ties, self.relu)


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class SparseBasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1, kw_percent_on=0.1, local=False, relu=False, break_ties=False):
        super(SparseBasicBlock, self).__init__()
        self.conv1 = conv3x3(in_planes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.kw1 = KWinners2d(planes, kw_percent_on, local=local, relu=relu, break_ties=break_ties)
        self.kw2 = KWinners2d(planes, kw_percent_on, local=local, relu=relu, break_ties=break_ties)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != self.expansion * planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(self.expansion * planes))

    def forward(self, x):
        out = self.bn1(self.conv1(x))
        out = self.kw1(out)
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        out = self.kw2(out)
        return out


net = nn.Sequential(
    SparseBasicBlock(3, 4, stride=1, kw_percent_on=0.3, local=False, relu=True),
    SparseBasicBlock(4, 8, stride=2, kw_percent_on=0.3, local=True, relu=True, break_ties=True),
)
head = nn.Linear(8, 5)
x = torch.randn(2, 3, 6, 6)
labels = torch.tensor([1, 4])
feat = F.avg_pool2d(net(x), 3).flatten(1)
loss = F.cross_entropy(head(feat), labels)
loss.backward()
