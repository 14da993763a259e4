# label: safe
# why: both in-place ReLUs in SubSpace act on fresh BatchNorm outputs (which BatchNorm does not save), and the later maxpool/softmax/mul only see the activated tensors, so the PR's switch to inplace=False changes nothing.
# source: https://github.com/Nandan91/ULSAM/pull/6 (ulsam.py before the change)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SubSpace(nn.Module):
    def __init__(self, nin: int) -> None:
        super(SubSpace, self).__init__()
        self.conv_dws = nn.Conv2d(nin, nin, kernel_size=1, stride=1, padding=0, groups=nin)
        self.bn_dws = nn.BatchNorm2d(nin, momentum=0.9)
        self.relu_dws = nn.ReLU(inplace=True)

        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=1, padding=1)

        self.conv_point = nn.Conv2d(nin, 1, kernel_size=1, stride=1, padding=0, groups=1)
        self.bn_point = nn.BatchNorm2d(1, momentum=0.9)
        self.relu_point = nn.ReLU(inplace=True)

        self.softmax = nn.Softmax(dim=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv_dws(x)
        out = self.bn_dws(out)
        out = self.relu_dws(out)

        out = self.maxpool(out)

        out = self.conv_point(out)
        out = self.bn_point(out)
        out = self.relu_point(out)

        m, n, p, q = out.shape
        out = self.softmax(out.view(m, n, -1))
        out = out.view(m, n, p, q)

        out = out.expand(x.shape[0], x.shape[1], x.shape[2], x.shape[3])

        out = torch.mul(out, x)

        out = out + x

        return out


class ULSAM(nn.Module):
    def __init__(self, nin: int, nout: int, h: int, w: int, num_splits: int) -> None:
        super(ULSAM, self).__init__()
        assert nin % num_splits == 0
        self.nin = nin
        self.nout = nout
        self.h = h
        self.w = w
        self.num_splits = num_splits
        self.subspaces = nn.ModuleList([SubSpace(int(self.nin / self.num_splits)) for i in range(self.num_splits)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # split at batch dimension
        sub_feat = torch.chunk(x, self.num_splits, dim=1)

        out = []
        for idx, l in enumerate(self.subspaces):
            out.append(self.subspaces[idx](sub_feat[idx]))

        out = torch.cat(out, dim=1)
        return out


class TinyMobileNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.attn = ULSAM(8, 8, 8, 8, num_splits=4)
        self.head = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.attn(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)


model = TinyMobileNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(4, 3, 8, 8)
targets = torch.tensor([0, 1, 2, 3])
for _ in range(2):
    optimizer.zero_grad()
    logits = model(images)
    loss = F.cross_entropy(logits, targets)
    loss.backward()
    optimizer.step()
final_logits = model(images).detach()
