# label: safe
# why: the shift writes only into a fresh torch.zeros_like buffer, and the residual block's in-place ReLU and out += identity touch conv/bn outputs that no saved-for-backward op still needs.
# source: https://github.com/mit-han-lab/temporal-shift-module/blob/1f6a834b02120441d99fa706b7a13ccc5293c6fa/ops/temporal_shift.py
import torch
import torch.nn as nn

torch.manual_seed(0)


class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=3, n_div=8, inplace=False):
        super(TemporalShift, self).__init__()
        self.net = net
        self.n_segment = n_segment
        self.fold_div = n_div
        self.inplace = inplace

    def forward(self, x):
        x = self.shift(x, self.n_segment, fold_div=self.fold_div, inplace=self.inplace)
        return self.net(x)

    @staticmethod
    def shift(x, n_segment, fold_div=3, inplace=False):
        nt, c, h, w = x.size()
        n_batch = nt // n_segment
        x = x.view(n_batch, n_segment, c, h, w)

        fold = c // fold_div
        if inplace:
            raise NotImplementedError
        else:
            out = torch.zeros_like(x)
            out[:, :-1, :fold] = x[:, 1:, :fold]  # shift left
            out[:, 1:, fold: 2 * fold] = x[:, :-1, fold: 2 * fold]  # shift right
            out[:, :, 2 * fold:] = x[:, :, 2 * fold:]  # not shift

        return out.view(nt, c, h, w)


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity
        out = self.relu(out)
        return out


def make_block_temporal(stage, this_segment, n_div=8, n_round=1):
    blocks = list(stage.children())
    for i, b in enumerate(blocks):
        if i % n_round == 0:
            blocks[i].conv1 = TemporalShift(b.conv1, n_segment=this_segment, n_div=n_div)
    return nn.Sequential(*blocks)


n_segment = 4
layer1 = nn.Sequential(BasicBlock(8), BasicBlock(8))
layer1 = make_block_temporal(layer1, n_segment, n_div=4)
fc = nn.Linear(8, 3)

clips = torch.randn(2 * n_segment, 8, 6, 6)
labels = torch.tensor([0, 2])
feat = layer1(clips)
logits = fc(feat.mean(dim=(2, 3))).view(2, n_segment, 3).mean(1)
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()
