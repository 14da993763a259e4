# label: safe
# why: the fix drops inplace=True, so dropout writes a new tensor and the head ReLU output that ReluBackward0 saved keeps its version; gradients reach both the linear classifier and the MobileNetV4 head.
# source: https://blog.gitcode.com/698d00443296b4fdd94b014496a42ce5.html
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvBnAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size=3, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, stride, kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_chs)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class MobileNetV4(nn.Module):
    def __init__(self, num_features=32):
        super().__init__()
        self.conv_stem = ConvBnAct(3, 8, 3, 2)
        self.blocks = nn.Sequential(ConvBnAct(8, 16, 3, 2), ConvBnAct(16, 16, 1, 1))
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.conv_head = nn.Conv2d(16, num_features, 1, bias=False)
        self.norm_head = nn.BatchNorm2d(num_features)
        self.act2 = nn.ReLU()
        self.flatten = nn.Flatten(1)
        self.num_features = num_features

    def forward_features(self, x):
        x = self.conv_stem(x)
        return self.blocks(x)

    def forward_head(self, x, pre_logits=True):
        x = self.global_pool(x)
        x = self.conv_head(x)
        x = self.norm_head(x)
        x = self.act2(x)
        return self.flatten(x)


class Classifier(nn.Module):
    def __init__(self, num_classes=5, drop_rate=0.2):
        super().__init__()
        self.backbone = MobileNetV4()
        self.drop_rate = drop_rate
        self.fc = nn.Linear(self.backbone.num_features, num_classes)

    def forward(self, x):
        x = self.backbone.forward_features(x)
        x = self.backbone.forward_head(x, pre_logits=True)
        x = torch.nn.functional.dropout(x, p=self.drop_rate, training=self.training)
        return self.fc(x)


def main():
    model = Classifier()
    model.train()
    images = torch.randn(4, 3, 32, 32)
    target = torch.tensor([0, 1, 2, 3])
    logits = model(images)
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return model.fc.weight.grad, model.backbone.conv_head.weight.grad


fc_grad, head_grad = main()
