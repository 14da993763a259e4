# label: hazard raises
# why: L2Norm divides conv4_3's activation in place (x /= norm), but that tensor is the output of the in-place VGG ReLU and the input of x.pow(2), both of which saved it for backward.
# source: https://github.com/zhangkaij/ssd512/issues/2 (layers/modules/l2norm.py at e6291a5027cb66dd2192879a7c0a5740bd49d538)
import torch
import torch.nn as nn
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
        norm = x.pow(2).sum(1).sqrt() + self.eps
        x /= norm.unsqueeze(1).expand_as(x)  # <-- IPL001: in-place divide of the ReLU output that relu and pow saved for backward
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


def vgg(cfg, i, batch_norm=False):
    layers = []
    in_channels = i
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return layers


class SSD(nn.Module):
    def __init__(self, base, num_classes=3):
        super(SSD, self).__init__()
        self.vgg = nn.ModuleList(base)
        self.L2Norm = L2Norm(8, 20)
        self.loc = nn.ModuleList([nn.Conv2d(8, 4 * 4, 3, padding=1), nn.Conv2d(8, 4 * 4, 3, padding=1)])
        self.conf = nn.ModuleList([nn.Conv2d(8, 4 * num_classes, 3, padding=1), nn.Conv2d(8, 4 * num_classes, 3, padding=1)])
        self.num_classes = num_classes

    def forward(self, x):
        sources = list()
        loc = list()
        conf = list()
        # apply vgg up to conv4_3 relu
        for k in range(5):
            x = self.vgg[k](x)
        s = self.L2Norm(x)
        sources.append(s)
        # apply vgg up to fc7
        for k in range(5, len(self.vgg)):
            x = self.vgg[k](x)
        sources.append(x)
        for (x, l, c) in zip(sources, self.loc, self.conf):
            loc.append(l(x).permute(0, 2, 3, 1).contiguous())
            conf.append(c(x).permute(0, 2, 3, 1).contiguous())
        loc = torch.cat([o.view(o.size(0), -1) for o in loc], 1)
        conf = torch.cat([o.view(o.size(0), -1) for o in conf], 1)
        return loc.view(loc.size(0), -1, 4), conf.view(conf.size(0), -1, self.num_classes)


net = SSD(vgg([4, "M", 8, 8, "M", 8], 3))
images = torch.randn(2, 3, 16, 16)
loc_data, conf_data = net(images)
loss_l = loc_data.abs().mean()
loss_c = torch.nn.functional.cross_entropy(conf_data.reshape(-1, 3), torch.zeros(conf_data.shape[0] * conf_data.shape[1], dtype=torch.long))
loss = loss_l + loss_c
loss.backward()
