# label: safe
# why: the out-of-place x = x.squeeze() suggested in the report leaves the pow result saved by GeM-p untouched, so the trainable p and the backbone get their gradients.
# source: https://github.com/naver/deep-image-retrieval/issues/19 (dirtorch/nets/rmac_resnet.py @1e7de62)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parameter import Parameter

torch.manual_seed(0)


def l2_normalize(x, axis=-1):
    x = F.normalize(x, p=2, dim=axis)
    return x


class GeneralizedMeanPooling(nn.Module):
    def __init__(self, norm, output_size=1, eps=1e-6):
        super(GeneralizedMeanPooling, self).__init__()
        assert norm > 0
        self.p = float(norm)
        self.output_size = output_size
        self.eps = eps

    def forward(self, x):
        x = x.clamp(min=self.eps).pow(self.p)
        return F.adaptive_avg_pool2d(x, self.output_size).pow(1. / self.p)


class GeneralizedMeanPoolingP(GeneralizedMeanPooling):
    """ Same, but norm is trainable
    """
    def __init__(self, norm=3, output_size=1, eps=1e-6):
        super(GeneralizedMeanPoolingP, self).__init__(norm, output_size, eps)
        self.p = Parameter(torch.ones(1) * norm)


class ResNet(nn.Module):
    def __init__(self, channels=8):
        super(ResNet, self).__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, stride=2, padding=1)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Conv2d(channels, channels * 2, 3, stride=2, padding=1)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        return self.relu(self.layer1(x))


class ResNet_RMAC(ResNet):
    """ ResNet for RMAC (without ROI pooling)
    """
    def __init__(self, out_dim=6, norm_features=False, pooling='gem', gemp=3, without_fc=False):
        ResNet.__init__(self)
        self.norm_features = norm_features
        self.without_fc = without_fc
        self.pooling = pooling
        if pooling == 'max':
            self.adpool = nn.AdaptiveMaxPool2d(output_size=1)
        elif pooling.startswith('gem'):
            self.adpool = GeneralizedMeanPoolingP(norm=gemp)
        self.fc = nn.Linear(16, out_dim)

    def forward(self, x):
        x = ResNet.forward(self, x)

        # global pooling
        x = self.adpool(x)

        if self.norm_features:
            x = l2_normalize(x, axis=1)

        x = x.squeeze()
        if not self.without_fc:
            x = self.fc(x)

        x = l2_normalize(x, axis=-1)
        return x


def main():
    net = ResNet_RMAC()
    images = torch.rand(4, 3, 16, 16)
    desc = net(images)
    # triplet-style ranking loss on the global descriptors
    anchor, pos, neg = desc[0], desc[1], desc[2]
    loss = F.relu((anchor * neg).sum() - (anchor * pos).sum() + 0.1)
    loss = loss + (desc[3] * desc[0]).sum()
    loss.backward()
    return desc.detach(), net.adpool.p.grad.clone()


desc, p_grad = main()
