# label: hazard silent
# why: the forward hook stores the conv output (detach() shares storage) and the following ReLU(inplace=True) then zeroes its negatives, so the saved template feature map is silently the post-ReLU map.
# source: https://github.com/pytorch/pytorch/issues/20705
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

cfgs = {"A_tiny": [8, 8, "M", 16, 16, "M"]}


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]  # <-- IPL002: this ReLU overwrites the conv output the hook just stored
            in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, features):
        super(VGG, self).__init__()
        self.features = features


vgg_feature = VGG(make_layers(cfgs["A_tiny"])).features
for p in vgg_feature.parameters():
    p.requires_grad = False

template_feature_map = []


def save_template_feature_map(self, input, output):
    template_feature_map.append(output.detach())


template = torch.randn(1, 3, 16, 16)
image = torch.randn(1, 3, 24, 24)

template_handle = vgg_feature[5].register_forward_hook(save_template_feature_map)
vgg_feature(template)
template_handle.remove()

image_feature_map = []


def save_image_feature_map(self, input, output):
    image_feature_map.append(output.detach())


image_handle = vgg_feature[5].register_forward_hook(save_image_feature_map)
vgg_feature(image)
image_handle.remove()

template_feat = template_feature_map[0]
image_feat = image_feature_map[0]
# normalized cross-correlation style matching of the template on the image features
score_map = F.conv2d(image_feat, template_feat)
norm_map = F.conv2d(image_feat.pow(2), torch.ones_like(template_feat)).sqrt()
ncc = score_map / (norm_map * template_feat.norm() + 1e-6)
best = ncc.flatten().argmax()
