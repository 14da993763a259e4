# label: hazard raises
# why: L2Norm divides its input in place (`x /= norm`), but x is the conv4_3 ReLU output that ReLU and pow saved for backward and that the backbone loop keeps using
# source: https://github.com/uoip/SSD-variants/issues/4
import itertools
from collections import OrderedDict
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale=20):
        super(L2Norm, self).__init__()
        self.weight = nn.Parameter(torch.Tensor(n_channels))
        nn.init.constant_(self.weight, scale)

    def forward(self, x):
        x /= (x.pow(2).sum(dim=1, keepdim=True).sqrt() + 1e-10)  # <-- IPL001, IPL004: divides the caller's saved ReLU output in place
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


class VGG16(nn.Module):
    def __init__(self):
        super().__init__()
        self._modules.update(OrderedDict([
            ('conv1_1', nn.Conv2d(3, 4, 3, padding=1)),
            ('pool1', nn.MaxPool2d(2)),
            ('conv4_3', nn.Conv2d(4, 8, 3, padding=1)),
            ('pool4', nn.MaxPool2d(2)),
            ('conv7', nn.Conv2d(8, 8, 1)),
        ]))


class SSD300(nn.Module):
    config = {'aspect_ratios': ((1 / 2., 1, 2), (1 / 3., 1 / 2., 1, 2, 3), (1 / 2., 1, 2))}

    def __init__(self, n_classes):
        super(SSD300, self).__init__()
        self.n_classes = n_classes
        self.Base = VGG16()
        self.Extra = nn.Sequential(OrderedDict([
            ('extra1_1', nn.Conv2d(8, 4, 1)),
            ('extra1_2', nn.Conv2d(4, 8, 3, padding=1, stride=2)),
        ]))
        self.pred_layers = ['conv4_3', 'conv7', 'extra1_2']
        n_channels = [8, 8, 8]
        self.L2Norm = nn.ModuleList([L2Norm(8, 20)])
        self.norm_layers = ['conv4_3']
        self.Loc = nn.ModuleList([])
        self.Conf = nn.ModuleList([])
        for i, ar in enumerate(self.config['aspect_ratios']):
            n = len(ar) + 1
            self.Loc.append(nn.Conv2d(n_channels[i], n * 4, 3, padding=1))
            self.Conf.append(nn.Conv2d(n_channels[i], n * (self.n_classes + 1), 3, padding=1))

    def forward(self, x):
        xs = []
        for name, m in itertools.chain(self.Base._modules.items(), self.Extra._modules.items()):
            if isinstance(m, nn.Conv2d):
                x = F.relu(m(x), inplace=True)
            else:
                x = m(x)
            if name in self.pred_layers:
                if name in self.norm_layers:
                    i = self.norm_layers.index(name)
                    xs.append(self.L2Norm[i](x))
                else:
                    xs.append(x)
        return self._prediction(xs)

    def _prediction(self, xs):
        locs = []
        confs = []
        for i, x in enumerate(xs):
            loc = self.Loc[i](x)
            loc = loc.permute(0, 2, 3, 1).contiguous().view(loc.size(0), -1, 4)
            locs.append(loc)
            conf = self.Conf[i](x)
            conf = conf.permute(0, 2, 3, 1).contiguous().view(conf.size(0), -1, self.n_classes + 1)
            confs.append(conf)
        return torch.cat(locs, dim=1), torch.cat(confs, dim=1)


model = SSD300(n_classes=3)
images = torch.rand(2, 3, 16, 16)
loc_preds, conf_preds = model(images)
loc_targets = torch.zeros_like(loc_preds)
conf_targets = torch.randint(0, 4, conf_preds.shape[:2])
loss = F.smooth_l1_loss(loc_preds, loc_targets) + F.cross_entropy(conf_preds.reshape(-1, 4), conf_targets.reshape(-1))
loss.backward()
