# label: safe
# why: the fixed L2Norm computes `x = torch.div(x, norm)` into a new tensor, so the saved ReLU output and pow input stay intact and the caller's x that continues through vgg is not rescaled.
# source: https://github.com/amdegroot/ssd.pytorch/commit/c8d33e0c82d89797b7eedfc06ceb22763b3c0e9e (fixed layers/modules/l2norm.py)
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init

torch.manual_seed(0)


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale):
        super(L2Norm, self).__init__()
        self.n_channels = n_channels
        self.gamma = scale or None
        self.eps = 1e-10
        self.weight = nn.Parameter(torch.Tensor(self.n_channels))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.gamma)

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x = torch.div(x, norm)
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


def vgg(cfg, i):
    layers = []
    in_channels = i
    for v in cfg:
        if v == 'M':
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return layers


class SSD(nn.Module):
    def __init__(self, num_classes=3):
        super(SSD, self).__init__()
        self.num_classes = num_classes
        self.vgg = nn.ModuleList(vgg([8, 'M', 16, 16], 3))
        self.conv4_3_end = 5  # index after the ReLU that ends "conv4_3"
        self.L2Norm = L2Norm(16, 20)
        self.extras = nn.ModuleList([nn.Conv2d(16, 16, 3, stride=2, padding=1)])
        self.loc = nn.ModuleList([nn.Conv2d(16, 4 * 4, 3, padding=1), nn.Conv2d(16, 4 * 4, 3, padding=1)])
        self.conf = nn.ModuleList([nn.Conv2d(16, 4 * num_classes, 3, padding=1),
                                   nn.Conv2d(16, 4 * num_classes, 3, padding=1)])

    def forward(self, x):
        sources = list()
        loc = list()
        conf = list()

        for k in range(self.conv4_3_end):
            x = self.vgg[k](x)
        s = self.L2Norm(x)
        sources.append(s)

        for k in range(self.conv4_3_end, len(self.vgg)):
            x = self.vgg[k](x)
        x = F.relu(self.extras[0](x), inplace=True)
        sources.append(x)

        for (x, l, c) in zip(sources, self.loc, self.conf):
            loc.append(l(x).permute(0, 2, 3, 1).contiguous())
            conf.append(c(x).permute(0, 2, 3, 1).contiguous())
        loc = torch.cat([o.view(o.size(0), -1) for o in loc], 1)
        conf = torch.cat([o.view(o.size(0), -1) for o in conf], 1)
        return loc.view(loc.size(0), -1, 4), conf.view(conf.size(0), -1, self.num_classes)


def main():
    net = SSD()
    images = torch.randn(2, 3, 16, 16)
    loc_data, conf_data = net(images)
    loc_t = torch.randn_like(loc_data)
    conf_t = torch.randint(0, 3, conf_data.shape[:2])
    loss_l = F.smooth_l1_loss(loc_data, loc_t)
    loss_c = F.cross_entropy(conf_data.view(-1, 3), conf_t.view(-1))
    loss = loss_l + loss_c
    loss.backward()
    return loss.detach(), net.L2Norm.weight.grad


loss, l2norm_grad = main()
