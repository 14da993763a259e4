# label: hazard raises
# why: RefineNet's blocks apply nn.ReLU(inplace=True) to their own inputs (which are also the residual and the caller's tensors) and ChainedResidualPool then accumulates x += out into the tensor its max-pool saved.
# source: https://github.com/thomasjpfan/pytorch_refinenet/issues/2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualConvUnit(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.conv1 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=True)
        self.conv2 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=False)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL004, IPL002: rectifies the unit's input x, which is also the residual

    def forward(self, x):
        out = self.relu(x)
        out = self.conv1(out)
        out = self.relu(out)
        out = self.conv2(out)
        return out + x


class MultiResolutionFusion(nn.Module):
    def __init__(self, out_feats, *shapes):
        super().__init__()
        _, max_size = max(shapes, key=lambda x: x[1])
        for i, shape in enumerate(shapes):
            feat, size = shape
            scale_factor = max_size // size
            if scale_factor != 1:
                self.add_module(f"resolve{i}", nn.Sequential(
                    nn.Conv2d(feat, out_feats, kernel_size=3, stride=1, padding=1, bias=False),
                    nn.Upsample(scale_factor=scale_factor, mode="bilinear")))
            else:
                self.add_module(f"resolve{i}", nn.Conv2d(feat, out_feats, kernel_size=3, stride=1, padding=1, bias=False))

    def forward(self, *xs):
        output = self.resolve0(xs[0])
        for i, x in enumerate(xs[1:], 1):
            output += self.__getattr__(f"resolve{i}")(x)
        return output


class ChainedResidualPool(nn.Module):
    def __init__(self, feats):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)  # <-- IPL004: rectifies the block's incoming tensor in place
        self.block1 = nn.Sequential(nn.MaxPool2d(kernel_size=5, stride=1, padding=2),
                                    nn.Conv2d(feats, feats, kernel_size=3, stride=1, padding=1, bias=False))
        self.block2 = nn.Sequential(nn.MaxPool2d(kernel_size=5, stride=1, padding=2),
                                    nn.Conv2d(feats, feats, kernel_size=3, stride=1, padding=1, bias=False))
        self.block3 = nn.Sequential(nn.MaxPool2d(kernel_size=5, stride=1, padding=2),
                                    nn.Conv2d(feats, feats, kernel_size=3, stride=1, padding=1, bias=False))

    def forward(self, x):
        x = self.relu(x)
        out = self.block1(x)
        x += out  # <-- IPL001: block1's max-pool saved x for backward
        out = self.block2(out)
        x += out  # <-- IPL001: keeps rewriting the saved x
        out = self.block3(out)
        x += out  # <-- IPL001: keeps rewriting the saved x
        return x


class RefineNetBlock(nn.Module):
    def __init__(self, features, *shapes):
        super().__init__()
        for i, shape in enumerate(shapes):
            feats = shape[0]
            self.add_module(f"rcu{i}", nn.Sequential(ResidualConvUnit(feats), ResidualConvUnit(feats)))
        self.mrf = MultiResolutionFusion(features, *shapes) if len(shapes) != 1 else None
        self.crp = ChainedResidualPool(features)
        self.output_conv = ResidualConvUnit(features)

    def forward(self, *xs):
        for i, x in enumerate(xs):
            x = self.__getattr__(f"rcu{i}")(x)
        out = self.mrf(*xs) if self.mrf is not None else xs[0]
        out = self.crp(out)
        return self.output_conv(out)


class RefineNet4CascadeLite(nn.Module):
    def __init__(self, features=4, num_classes=2):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, features, 3, padding=1), nn.BatchNorm2d(features))
        self.layer2 = nn.Sequential(nn.Conv2d(features, features, 3, stride=2, padding=1), nn.BatchNorm2d(features))
        self.refinenet2 = RefineNetBlock(features, (features, 4))
        self.refinenet1 = RefineNetBlock(features, (features, 8), (features, 4))
        self.output_conv = nn.Conv2d(features, num_classes, kernel_size=1)

    def forward(self, x):
        l1 = self.layer1(x)
        l2 = self.layer2(l1)
        path2 = self.refinenet2(l2)
        path1 = self.refinenet1(l1, path2)
        return self.output_conv(path1)


net = RefineNet4CascadeLite()
images = torch.randn(1, 3, 8, 8)
target = torch.randint(0, 2, (1, 8, 8))
logits = net(images)
loss = F.cross_entropy(logits, target)
loss.backward()
