# label: safe no-twin
# why: the optimized image is a leaf; clamping input_img.data in place inside the LBFGS closure, before the forward pass that uses it, never touches a tensor saved by a live graph.
# source: https://github.com/pytorch/tutorials/blob/main/advanced_source/neural_style_tutorial.py
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

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


cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=False), nn.Conv2d(4, 4, 3, padding=1))
for p in cnn.parameters():
    p.requires_grad_(False)

content_img = torch.rand(1, 3, 8, 8)
style_img = torch.rand(1, 3, 8, 8)
model = nn.Sequential()
model.add_module("conv_1", cnn[0])
content_loss = ContentLoss(model(content_img))
style_loss = StyleLoss(model(style_img))
model.add_module("style_loss_1", style_loss)
model.add_module("relu_1", cnn[1])
model.add_module("conv_2", cnn[2])
content_loss = ContentLoss(model(content_img))
model.add_module("content_loss_2", content_loss)

input_img = content_img.clone()
input_img.requires_grad_(True)
optimizer = optim.LBFGS([input_img])
style_weight, content_weight = 1000000, 1

run = [0]
while run[0] <= 5:

    def closure():
        # correct the values of updated input image
        with torch.no_grad():
            input_img.clamp_(0, 1)

        optimizer.zero_grad()
        model(input_img)
        style_score = style_loss.loss * style_weight
        content_score = content_loss.loss * content_weight
        loss = style_score + content_score
        loss.backward()
        run[0] += 1
        return style_score + content_score

    optimizer.step(closure)

with torch.no_grad():
    input_img.clamp_(0, 1)
result_img = input_img.detach().clone()
