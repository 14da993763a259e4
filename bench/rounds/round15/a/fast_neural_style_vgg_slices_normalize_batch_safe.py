# label: safe
# why: the in-place ReLUs end each Vgg16 slice, so every returned feature is the activation that the next slice only reads (its MaxPool does not write), normalize_batch subtracts the mean in place from a fresh torch.div result, and the content image is cloned before normalizing, so no saved or reused value is overwritten.
# source: https://github.com/pytorch/examples/pull/129 (fast_neural_style/neural_style/neural_style.py, utils.py, vgg.py)
from collections import namedtuple

import torch
import torch.nn as nn

torch.manual_seed(0)


class Vgg16(nn.Module):
    def __init__(self, requires_grad=False):
        super(Vgg16, self).__init__()
        vgg_pretrained_features = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(6, 6, 3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(inplace=True),
        )
        self.slice1 = nn.Sequential()
        self.slice2 = nn.Sequential()
        self.slice3 = nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), vgg_pretrained_features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), vgg_pretrained_features[x])
        for x in range(9, 12):
            self.slice3.add_module(str(x), vgg_pretrained_features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h = self.slice1(X)
        h_relu1_2 = h
        h = self.slice2(h)
        h_relu2_2 = h
        h = self.slice3(h)
        h_relu3_3 = h
        vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_2', 'relu3_3'])
        return vgg_outputs(h_relu1_2, h_relu2_2, h_relu3_3)


class TransformerNet(nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.in1 = nn.InstanceNorm2d(4, affine=True)
        self.conv2 = nn.Conv2d(4, 3, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        return self.conv2(y) * 255.0


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    return features.bmm(features_t) / (ch * h * w)


def normalize_batch(batch):
    # normalize using imagenet mean and std
    mean = batch.data.new(batch.data.size())
    std = batch.data.new(batch.data.size())
    mean[:, 0, :, :] = 0.485
    mean[:, 1, :, :] = 0.456
    mean[:, 2, :, :] = 0.406
    std[:, 0, :, :] = 0.229
    std[:, 1, :, :] = 0.224
    std[:, 2, :, :] = 0.225
    batch = torch.div(batch, 255.0)
    batch -= mean
    batch = batch / std
    return batch


transformer = TransformerNet()
optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
mse_loss = nn.MSELoss()
vgg = Vgg16(requires_grad=False)

style = torch.rand(1, 3, 16, 16) * 255.0
features_style = vgg(normalize_batch(style))
gram_style = [gram_matrix(y) for y in features_style]

content_weight, style_weight = 1e5, 1e10
x = torch.rand(2, 3, 16, 16) * 255.0
optimizer.zero_grad()
y = transformer(x)
xc = x.data.clone()
y = normalize_batch(y)
xc = normalize_batch(xc)
features_y = vgg(y)
features_xc = vgg(xc)
f_xc_c = features_xc[1].data
content_loss = content_weight * mse_loss(features_y[1], f_xc_c)
style_loss = 0.
for m in range(len(features_y)):
    gram_s = gram_style[m].data
    gram_y = gram_matrix(features_y[m])
    style_loss += style_weight * mse_loss(gram_y, gram_s.expand_as(gram_y))
total_loss = content_loss + style_loss
total_loss.backward()
optimizer.step()
