# label: safe no-twin
# why: The neural-style closure clamps input_img.data in place at the start of each LBFGS evaluation, before the forward pass builds a new graph, so no saved tensor is altered and the content/style gradients are exact for the clamped image.
# source: https://github.com/pytorch/tutorials/issues/143
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super(ContentLoss, self).__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=False), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(inplace=False)).eval()
for p in cnn.parameters():
    p.requires_grad_(False)

style_img = torch.rand(1, 3, 8, 8)
content_img = torch.rand(1, 3, 8, 8)

model = nn.Sequential()
content_losses, style_losses = [], []
i = 0
for layer in cnn.children():
    if isinstance(layer, nn.Conv2d):
        i += 1
        name = 'conv_{}'.format(i)
    else:
        name = 'relu_{}'.format(i)
    model.add_module(name, layer)
    if name == 'conv_2':
        target = model(content_img).detach()
        content_loss = ContentLoss(target)
        model.add_module("content_loss_{}".format(i), content_loss)
        content_losses.append(content_loss)
    if name in ('conv_1', 'conv_2'):
        target_feature = model(style_img).detach()
        style_loss = StyleLoss(target_feature)
        model.add_module("style_loss_{}".format(i), style_loss)
        style_losses.append(style_loss)

input_img = content_img.clone()
optimizer = torch.optim.LBFGS([input_img.requires_grad_()], max_iter=2)
style_weight, content_weight = 1000000, 1
run = [0]


def closure():
    input_img.data.clamp_(0, 1)
    optimizer.zero_grad()
    model(input_img)
    style_score = 0
    content_score = 0
    for sl in style_losses:
        style_score += sl.loss
    for cl in content_losses:
        content_score += cl.loss
    style_score *= style_weight
    content_score *= content_weight
    loss = style_score + content_score
    loss.backward()
    run[0] += 1
    return style_score + content_score


optimizer.step(closure)
input_img.data.clamp_(0, 1)
final_img = input_img.detach()
