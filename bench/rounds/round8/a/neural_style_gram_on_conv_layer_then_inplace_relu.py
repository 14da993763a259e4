# label: hazard raises
# why: with a convX_Y style layer the StyleLoss module's Gram matrix saves a view of the conv output, and the following VGG ReLU(inplace=True) overwrites that conv output before loss.backward().
# source: https://github.com/ProGamerGov/neural-style-pt/issues/44
import torch
import torch.nn as nn

torch.manual_seed(0)

cnn = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1),
    nn.ReLU(inplace=True),  # <-- IPL001: rewrites the conv1_1 output the Gram matrix saved
    nn.Conv2d(4, 4, 3, padding=1),
    nn.ReLU(inplace=True),
    nn.MaxPool2d(2, 2),
    nn.Conv2d(4, 8, 3, padding=1),
    nn.ReLU(inplace=True),
)
layerList = {
    "C": ["conv1_1", "conv1_2", "conv2_1"],
    "R": ["relu1_1", "relu1_2", "relu2_1"],
    "P": ["pool1"],
}


class GramMatrix(nn.Module):
    def forward(self, input):
        B, C, H, W = input.size()
        x_flat = input.view(C, H * W)
        return torch.mm(x_flat, x_flat.t())


class StyleLoss(nn.Module):
    def __init__(self, strength):
        super(StyleLoss, self).__init__()
        self.target = torch.Tensor()
        self.strength = strength
        self.gram = GramMatrix()
        self.crit = nn.MSELoss()
        self.mode = "None"

    def forward(self, input):
        self.G = self.gram(input)
        self.G = self.G.div(input.nelement())
        if self.mode == "capture":
            self.target = self.G.detach()
        elif self.mode == "loss":
            self.loss = self.strength * self.crit(self.G, self.target)
        return input


def build_net(style_layers, style_weight=100.0):
    net = nn.Sequential()
    style_losses = []
    c, r, p = 0, 0, 0
    for i, layer in enumerate(list(cnn)):
        if isinstance(layer, nn.Conv2d):
            net.add_module(str(len(net)), layer)
            if layerList["C"][c] in style_layers:
                loss_module = StyleLoss(style_weight)
                net.add_module(str(len(net)), loss_module)
                style_losses.append(loss_module)
            c += 1
        if isinstance(layer, nn.ReLU):
            net.add_module(str(len(net)), layer)
            if layerList["R"][r] in style_layers:
                loss_module = StyleLoss(style_weight)
                net.add_module(str(len(net)), loss_module)
                style_losses.append(loss_module)
            r += 1
        if isinstance(layer, nn.MaxPool2d):
            net.add_module(str(len(net)), layer)
            p += 1
    return net, style_losses


net, style_losses = build_net(["conv1_1"])
for param in net.parameters():
    param.requires_grad = False

style_image = torch.rand(1, 3, 8, 8)
for i in style_losses:
    i.mode = "capture"
net(style_image)
for i in style_losses:
    i.mode = "loss"

img = nn.Parameter(torch.rand(1, 3, 8, 8))
optimizer = torch.optim.Adam([img], lr=0.1)


def feval():
    optimizer.zero_grad()
    net(img)
    loss = 0
    for mod in style_losses:
        loss += mod.loss
    loss.backward()
    return loss


for t in range(2):
    optimizer.step(feval)
