# label: hazard raises
# why: BasicBlock adds the shortcut with out += residual onto the output of the identity_block's final nn.ReLU(), which ReluBackward0 saved, so total_loss.backward() fails; the VGG feature dict also keeps conv outputs that the following in-place ReLU overwrites.
# source: https://github.com/jarek-pawlowski/microbial-dataset-generation/pull/1 (transfer_style_lib.py, fixed at commit 79498a9348df48c336135eed077ea2bbd86a5e06)
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
IN_MOMENTUM = 0.15


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        conv_padding = int(np.floor(kernel_size / 2))
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=conv_padding)

    def forward(self, x):
        return self.conv(x)


class BasicBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(BasicBlock, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.relu = nn.ReLU(inplace=True)
        self.identity_block = nn.Sequential(
            ConvLayer(in_channels, out_channels // 4, kernel_size=1, stride=1),
            nn.InstanceNorm2d(out_channels // 4, momentum=IN_MOMENTUM),
            nn.ReLU(),
            ConvLayer(out_channels // 4, out_channels // 4, kernel_size, stride=stride),
            nn.InstanceNorm2d(out_channels // 4, momentum=IN_MOMENTUM),
            nn.ReLU(),
            ConvLayer(out_channels // 4, out_channels, kernel_size=1, stride=1),
            nn.InstanceNorm2d(out_channels, momentum=IN_MOMENTUM),
            nn.ReLU(),
        )
        self.shortcut = nn.Sequential(
            ConvLayer(in_channels, out_channels, 1, stride),
            nn.InstanceNorm2d(out_channels)
        )

    def forward(self, x):
        out = self.identity_block(x)
        if self.in_channels == self.out_channels:
            residual = x
        else:
            residual = self.shortcut(x)
        out += residual  # <-- IPL001: out is the saved output of the last nn.ReLU() in identity_block
        out = self.relu(out)
        return out


class HRNet(nn.Module):
    def __init__(self):
        super(HRNet, self).__init__()
        self.pass1_1 = BasicBlock(3, 8, kernel_size=3, stride=1)
        self.pass1_2 = BasicBlock(8, 8, kernel_size=3, stride=1)
        self.downsample1_1 = nn.Conv2d(8, 8, kernel_size=3, stride=2, padding=1)
        self.upsample1_1 = nn.Upsample(scale_factor=2, mode='bilinear')
        self.pass1_3 = BasicBlock(16, 8, kernel_size=3, stride=1)
        self.pass1_8 = nn.Conv2d(8, 3, kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        map1 = self.pass1_1(x)
        map2 = self.pass1_2(map1)
        map3 = self.downsample1_1(map1)
        map4 = torch.cat((map2, self.upsample1_1(map3)), 1)
        out = self.pass1_3(map4)
        out = self.pass1_8(out)
        return out


def make_vgg_features():
    # stand-in for models.vgg19().features: convs followed by in-place ReLUs
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True),  # <-- IPL002: overwrites the conv output stored in features['conv1_1']
        nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(inplace=True),  # <-- IPL002: overwrites the conv output stored in features['conv2_1']
        nn.Conv2d(6, 6, 3, padding=1), nn.ReLU(inplace=True),
    )


def get_features(image, model, layers=None):
    if layers is None:
        layers = {'0': 'conv1_1',
                  '5': 'conv2_1',
                  '7': 'conv2_2'}
    features = {}
    x = image
    for name, layer in model._modules.items():
        x = layer(x)
        if name in layers:
            features[layers[name]] = x
    return features


def get_grim_matrix(tensor):
    b, c, h, w = tensor.size()
    tensor = tensor.view(b * c, h * w)
    gram_matrix = torch.mm(tensor, tensor.t())
    return gram_matrix


VGG = make_vgg_features()
for parameter in VGG.parameters():
    parameter.requires_grad_(False)

style_net = HRNet()
content_image = torch.randn(1, 3, 8, 8)
style_image = torch.randn(1, 3, 8, 8)
content_features = get_features(content_image, VGG)
style_features = get_features(style_image, VGG)
style_gram_matrixs = {layer: get_grim_matrix(style_features[layer]) for layer in style_features}

style_weights = {'conv1_1': 0.1, 'conv2_1': 0.2}
content_weight = 150
style_weight = 0.5
optimizer = optim.Adam(style_net.parameters(), lr=5e-3)

for epoch in range(0, 2):
    target = style_net(content_image)
    target.requires_grad_(True)
    target_features = get_features(target, VGG)
    content_loss = torch.mean((target_features['conv2_2'] - content_features['conv2_2']) ** 2)
    style_loss = 0
    for layer in style_weights:
        target_feature = target_features[layer]
        target_gram_matrix = get_grim_matrix(target_feature)
        style_gram_matrix = style_gram_matrixs[layer]
        layer_style_loss = style_weights[layer] * torch.mean((target_gram_matrix - style_gram_matrix) ** 2)
        b, c, h, w = target_feature.shape
        style_loss = style_loss + layer_style_loss / (c * h * w)
    total_loss = content_weight * content_loss + style_weight * style_loss
    optimizer.zero_grad()
    total_loss.backward()
    optimizer.step()
