# label: hazard raises no-twin
# why: with Siamese augmentation each rand_* function broadcasts the first sample's parameters by writing randf[:] = randf[0], a view of the same tensor; with ipc=1 the synthetic batch has a single image, so source and destination are the same memory and the in-place copy fails.
# source: https://github.com/VICO-UoE/DatasetCondensation/issues/20 (utils.py @ 53f63a6)
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ParamDiffAug():
    def __init__(self):
        self.aug_mode = 'S'  # 'multiple or single'
        self.prob_flip = 0.5
        self.ratio_scale = 1.2
        self.brightness = 1.0
        self.saturation = 2.0
        self.contrast = 0.5


def set_seed_DiffAug(param):
    if param.latestseed == -1:
        return
    else:
        torch.random.manual_seed(param.latestseed)
        param.latestseed += 1


def DiffAugment(x, strategy='', seed=-1, param=None):
    if strategy == 'None' or strategy == 'none' or strategy == '':
        return x
    if seed == -1:
        param.Siamese = False
    else:
        param.Siamese = True
    param.latestseed = seed
    if strategy:
        if param.aug_mode == 'M':  # original
            for p in strategy.split('_'):
                for f in AUGMENT_FNS[p]:
                    x = f(x, param)
        elif param.aug_mode == 'S':
            pbties = strategy.split('_')
            set_seed_DiffAug(param)
            p = pbties[torch.randint(0, len(pbties), size=(1,)).item()]
            for f in AUGMENT_FNS[p]:
                x = f(x, param)
        x = x.contiguous()
    return x


def rand_scale(x, param):
    ratio = param.ratio_scale
    set_seed_DiffAug(param)
    sx = torch.rand(x.shape[0]) * (ratio - 1.0 / ratio) + 1.0 / ratio
    set_seed_DiffAug(param)
    sy = torch.rand(x.shape[0]) * (ratio - 1.0 / ratio) + 1.0 / ratio
    theta = [[[sx[i], 0, 0], [0, sy[i], 0]] for i in range(x.shape[0])]
    theta = torch.tensor(theta, dtype=torch.float)
    if param.Siamese:  # Siamese augmentation:
        theta[:] = theta[0]  # <-- IPL002: copies from a view of the tensor being overwritten
    grid = F.affine_grid(theta, x.shape, align_corners=False).to(x.device)
    x = F.grid_sample(x, grid, align_corners=False)
    return x


def rand_flip(x, param):
    prob = param.prob_flip
    set_seed_DiffAug(param)
    randf = torch.rand(x.size(0), 1, 1, 1, device=x.device)
    if param.Siamese:  # Siamese augmentation:
        randf[:] = randf[0]  # <-- IPL002: copies from a view of the tensor being overwritten
    return torch.where(randf < prob, x.flip(3), x)


def rand_brightness(x, param):
    ratio = param.brightness
    set_seed_DiffAug(param)
    randb = torch.rand(x.size(0), 1, 1, 1, dtype=x.dtype, device=x.device)
    if param.Siamese:  # Siamese augmentation:
        randb[:] = randb[0]  # <-- IPL002: copies from a view of the tensor being overwritten
    x = x + (randb - 0.5) * ratio
    return x


def rand_saturation(x, param):
    ratio = param.saturation
    x_mean = x.mean(dim=1, keepdim=True)
    set_seed_DiffAug(param)
    rands = torch.rand(x.size(0), 1, 1, 1, dtype=x.dtype, device=x.device)
    if param.Siamese:  # Siamese augmentation:
        rands[:] = rands[0]  # <-- IPL002: copies from a view of the tensor being overwritten
    x = (x - x_mean) * (rands * ratio) + x_mean
    return x


def rand_contrast(x, param):
    ratio = param.contrast
    x_mean = x.mean(dim=[1, 2, 3], keepdim=True)
    set_seed_DiffAug(param)
    randc = torch.rand(x.size(0), 1, 1, 1, dtype=x.dtype, device=x.device)
    if param.Siamese:  # Siamese augmentation:
        randc[:] = randc[0]  # <-- IPL002: copies from a view of the tensor being overwritten
    x = (x - x_mean) * (randc + ratio) + x_mean
    return x


AUGMENT_FNS = {
    'color': [rand_brightness, rand_saturation, rand_contrast],
    'scale': [rand_scale],
    'flip': [rand_flip],
}


class ConvNet(nn.Module):
    def __init__(self, channel=3, num_classes=2, width=4, im_size=(8, 8)):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(channel, width, 3, padding=1), nn.GroupNorm(width, width, affine=True),
                                      nn.ReLU(inplace=True), nn.AvgPool2d(2, 2))
        self.classifier = nn.Linear(width * (im_size[0] // 2) * (im_size[1] // 2), num_classes)

    def forward(self, x):
        return self.classifier(self.features(x).view(x.size(0), -1))


def match_loss(gw_syn, gw_real):
    dis = torch.tensor(0.0)
    for ig in range(len(gw_real)):
        gwr, gws = gw_real[ig], gw_syn[ig]
        dis += torch.sum(1 - torch.sum(gwr.reshape(gwr.shape[0], -1) * gws.reshape(gws.shape[0], -1), dim=-1) /
                         (torch.norm(gwr.reshape(gwr.shape[0], -1), dim=-1) * torch.norm(gws.reshape(gws.shape[0], -1), dim=-1) + 0.000001))
    return dis


ipc = 1
num_classes = 2
dsa_param = ParamDiffAug()
dsa_strategy = 'color_scale_flip'
image_syn = torch.randn(num_classes * ipc, 3, 8, 8, requires_grad=True)
label_syn = torch.tensor([c for c in range(num_classes) for _ in range(ipc)])
images_all = torch.randn(8, 3, 8, 8)
labels_all = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
optimizer_img = torch.optim.SGD([image_syn], lr=0.1, momentum=0.5)

net = ConvNet()
net_parameters = list(net.parameters())
criterion = nn.CrossEntropyLoss()
loss = torch.tensor(0.0)
for c in range(num_classes):
    img_real = images_all[labels_all == c][:4]
    lab_real = torch.ones((img_real.shape[0],), dtype=torch.long) * c
    img_syn = image_syn[c * ipc:(c + 1) * ipc].reshape((ipc, 3, 8, 8))
    lab_syn = torch.ones((ipc,), dtype=torch.long) * c

    seed = int(1000 + c)
    img_real = DiffAugment(img_real, dsa_strategy, seed=seed, param=dsa_param)
    img_syn = DiffAugment(img_syn, dsa_strategy, seed=seed, param=dsa_param)

    output_real = net(img_real)
    loss_real = criterion(output_real, lab_real)
    gw_real = torch.autograd.grad(loss_real, net_parameters)
    gw_real = list((_.detach().clone() for _ in gw_real))

    output_syn = net(img_syn)
    loss_syn = criterion(output_syn, lab_syn)
    gw_syn = torch.autograd.grad(loss_syn, net_parameters, create_graph=True)
    loss += match_loss(gw_syn, gw_real)

optimizer_img.zero_grad()
loss.backward()
optimizer_img.step()
