# label: hazard raises no-twin
# why: one forward feeds three losses; optimizer_style.step() and optimizer_adv.step() update style-net and BatchNorm weights in place between the retained-graph backward passes that still need them
# source: https://github.com/hyseob/SagNet/issues/3
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class StyleRandomization(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        N, C, H, W = x.size()
        if self.training:
            x = x.view(N, C, -1)
            mean = x.mean(-1, keepdim=True)
            var = x.var(-1, keepdim=True)
            x = (x - mean) / (var + self.eps).sqrt()
            idx_swap = torch.randperm(N)
            alpha = torch.rand(N, 1, 1)
            mean = alpha * mean + (1 - alpha) * mean[idx_swap]
            var = alpha * var + (1 - alpha) * var[idx_swap]
            x = x * (var + self.eps).sqrt() + mean
            x = x.view(N, C, H, W)
        return x


class ContentRandomization(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        N, C, H, W = x.size()
        if self.training:
            x = x.view(N, C, -1)
            mean = x.mean(-1, keepdim=True)
            var = x.var(-1, keepdim=True)
            x = (x - mean) / (var + self.eps).sqrt()
            idx_swap = torch.randperm(N)
            x = x[idx_swap].detach()
            x = x * (var + self.eps).sqrt() + mean
            x = x.view(N, C, H, W)
        return x


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, padding=1, stride=stride, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        residual = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            residual = self.downsample(x)
        return self.relu(out + residual)


class SagResNet(nn.Module):
    def __init__(self, num_classes=3, style_stage=2):
        super().__init__()
        self.style_stage = style_stage
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.layer1 = BasicBlock(4, 4)
        self.layer2 = BasicBlock(4, 8, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, num_classes)
        self.style_randomization = StyleRandomization()
        self.content_randomization = ContentRandomization()
        self.style_net = nn.Sequential(BasicBlock(4, 8, stride=2))
        self.style_avgpool = nn.AdaptiveAvgPool2d(1)
        self.style_fc = nn.Linear(8, num_classes)

    def adv_params(self):
        params = []
        layers = [self.bn1, self.layer1, self.layer2]
        for layer in layers[:self.style_stage]:
            for m in layer.modules():
                if isinstance(m, nn.BatchNorm2d):
                    params += [p for p in m.parameters()]
        return params

    def style_params(self):
        params = []
        for m in [self.style_net, self.style_fc]:
            params += [p for p in m.parameters()]
        return params

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        for i, layer in enumerate([self.layer1, self.layer2]):
            if i + 1 == self.style_stage:
                x_style = self.content_randomization(x)
                x = self.style_randomization(x)
            x = layer(x)
        y = self.fc(self.avgpool(x).flatten(1))
        x_style = self.style_net(x_style)
        y_style = self.style_fc(self.style_avgpool(x_style).flatten(1))
        return y, y_style


class AdvLoss(nn.Module):
    def __init__(self, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, inputs):
        inputs = inputs.softmax(dim=1)
        loss = - torch.log(inputs + self.eps).mean(dim=1)
        return loss.mean()


model = SagResNet()
optim_hyperparams = {'lr': 0.004, 'weight_decay': 1e-4, 'momentum': 0.9}
optimizer = optim.SGD(model.parameters(), **optim_hyperparams)
optimizer_style = optim.SGD(model.style_params(), **optim_hyperparams)
optimizer_adv = optim.SGD(model.adv_params(), **optim_hyperparams)
criterion = nn.CrossEntropyLoss()
criterion_adv = AdvLoss()

data = torch.randn(4, 3, 8, 8)
label = torch.tensor([0, 1, 2, 1])

y, y_style = model(data)

loss_style = criterion(y_style, label)
optimizer_style.zero_grad()
loss_style.backward(retain_graph=True)
optimizer_style.step()  # <-- IPL001: updates style_net weights that loss_adv's retained graph still needs

loss_adv = 0.1 * criterion_adv(y_style)
optimizer_adv.zero_grad()
loss_adv.backward(retain_graph=True)
torch.nn.utils.clip_grad_norm_(model.adv_params(), 0.1)
optimizer_adv.step()  # <-- IPL001: updates BatchNorm weights that the content loss graph still needs

loss = criterion(y, label)
optimizer.zero_grad()
loss.backward()
optimizer.step()
