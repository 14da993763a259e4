# label: safe
# why: the fixed score5 keeps nn.ReLU(inplace=True) but uses an out-of-place nn.Dropout(), so the ReLU outputs saved for backward are never rewritten.
# source: https://github.com/zijundeng/pytorch-semantic-segmentation/commit/2c72b7185776dd82eb09625c598a58749dd1519b (fixed models/fcn32.py)
import torch
from torch import nn

torch.manual_seed(0)


def get_upsampling_weight(in_channels, out_channels, kernel_size):
    factor = (kernel_size + 1) // 2
    if kernel_size % 2 == 1:
        center = factor - 1
    else:
        center = factor - 0.5
    og = torch.arange(kernel_size, dtype=torch.float32)
    filt = (1 - (og[:, None] - center).abs() / factor) * (1 - (og[None, :] - center).abs() / factor)
    weight = torch.zeros(in_channels, out_channels, kernel_size, kernel_size)
    for i in range(min(in_channels, out_channels)):
        weight[i, i] = filt
    return weight


class _FCN32Base(nn.Module):
    def __init__(self, num_classes):
        super(_FCN32Base, self).__init__()
        self.features5 = None
        self.score5 = None
        self.upscore5 = nn.ConvTranspose2d(num_classes, num_classes, kernel_size=8, stride=4, bias=False)
        self.upscore5.weight = nn.Parameter(get_upsampling_weight(num_classes, num_classes, 8))

    def forward(self, x):
        y = self.features5(x)
        y = self.score5(y)
        y_up = self.upscore5(y)
        return y_up[:, :, 2: (2 + x.size()[2]), 2: (2 + x.size()[3])].contiguous()


class FCN32VGG(_FCN32Base):
    def __init__(self, num_classes):
        super(FCN32VGG, self).__init__(num_classes)
        features = [nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
                    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2)]
        for f in features:
            if 'MaxPool' in f.__class__.__name__:
                f.ceil_mode = True
            elif 'ReLU' in f.__class__.__name__:
                f.inplace = True
        self.features5 = nn.Sequential(*features)

        conv_fc6 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        conv_fc7 = nn.Conv2d(32, 32, kernel_size=1)
        score5 = nn.Conv2d(32, num_classes, kernel_size=1)
        self.score5 = nn.Sequential(
            conv_fc6, nn.ReLU(inplace=True), nn.Dropout(),
            conv_fc7, nn.ReLU(inplace=True), nn.Dropout(),
            score5
        )


class CrossEntropyLoss2d(nn.Module):
    def __init__(self, weight=None, size_average=True, ignore_index=255):
        super(CrossEntropyLoss2d, self).__init__()
        self.nll_loss = nn.NLLLoss(weight, ignore_index=ignore_index)

    def forward(self, inputs, targets):
        return self.nll_loss(nn.functional.log_softmax(inputs, dim=1), targets)


def main():
    net = FCN32VGG(num_classes=4)
    net.train()
    criterion = CrossEntropyLoss2d(ignore_index=255)
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)
    inputs = torch.randn(2, 3, 16, 16)
    labels = torch.randint(0, 4, (2, 16, 16))
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    return loss.detach(), net.score5[0].weight.detach().clone()


loss, fc6_weight = main()
