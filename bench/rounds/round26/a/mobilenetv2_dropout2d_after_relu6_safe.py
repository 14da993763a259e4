# label: safe
# why: the head's nn.Dropout2d(inplace=True) rewrites the output of the in-place ReLU6, but current PyTorch's in-place hardtanh backward keeps what it needs from before that write (the raise reported on old PyTorch is gone), so gradients equal the out-of-place version.
# source: https://github.com/MG2033/MobileNet-V2/issues/4
import torch
import torch.nn as nn

torch.manual_seed(0)


class InvertedResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, expansion_factor=6, kernel_size=3, stride=2):
        super(InvertedResidualBlock, self).__init__()
        self.block = nn.Sequential(
            nn.Conv2d(in_channels, in_channels * expansion_factor, 1, bias=False),
            nn.BatchNorm2d(in_channels * expansion_factor),
            nn.ReLU6(inplace=True),
            nn.Conv2d(in_channels * expansion_factor, in_channels * expansion_factor,
                      kernel_size, stride, 1, groups=in_channels * expansion_factor, bias=False),
            nn.BatchNorm2d(in_channels * expansion_factor),
            nn.ReLU6(inplace=True),
            nn.Conv2d(in_channels * expansion_factor, out_channels, 1, bias=False),
            nn.BatchNorm2d(out_channels))
        self.is_residual = True if stride == 1 else False
        self.is_conv_res = False if in_channels == out_channels else True
        if stride == 1 and self.is_conv_res:
            self.conv_res = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False),
                                          nn.BatchNorm2d(out_channels))

    def forward(self, x):
        block = self.block(x)
        if self.is_residual:
            if self.is_conv_res:
                return self.conv_res(x) + block
            return x + block
        return block


def conv2d_bn_relu6(in_channels, out_channels, kernel_size=3, stride=2, dropout_prob=0.0):
    padding = (kernel_size + 1) // 2 - 1
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False),
        nn.BatchNorm2d(out_channels),
        # For efficiency, Dropout is placed before Relu.
        nn.Dropout2d(dropout_prob, inplace=True),
        # Assumption: Relu6 is used everywhere.
        nn.ReLU6(inplace=True)
    )


class MobileNetV2(nn.Module):
    def __init__(self, num_channels=3, num_classes=10, dropout_prob=0.2, img_size=16, downsampling=4):
        super(MobileNetV2, self).__init__()
        self.num_classes = num_classes
        self.network = [conv2d_bn_relu6(num_channels, 8, 3, 2, dropout_prob)]
        self.network.append(InvertedResidualBlock(8, 8, 2, 3, 1))
        self.network.append(InvertedResidualBlock(8, 16, 2, 3, 2))
        # Last layer before flattening
        self.network.append(conv2d_bn_relu6(16, 32, 1, 1, dropout_prob))
        # Classification part
        self.network.append(nn.Dropout2d(dropout_prob, inplace=True))
        self.network.append(nn.AvgPool2d((img_size // downsampling, img_size // downsampling)))
        self.network.append(nn.Dropout2d(dropout_prob, inplace=True))
        self.network.append(nn.Conv2d(32, self.num_classes, 1, bias=True))
        self.network = nn.Sequential(*self.network)

    def forward(self, x):
        x = self.network(x)
        x = x.view(-1, self.num_classes)
        return x


def main():
    model = MobileNetV2()
    model.train()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.045, momentum=0.9)
    input_var = torch.randn(4, 3, 16, 16)
    target_var = torch.tensor([1, 3, 5, 7])
    output = model(input_var)
    cur_loss = loss_fn(output, target_var)
    optimizer.zero_grad()
    cur_loss.backward()
    optimizer.step()
    return cur_loss.detach(), model.network[0][0].weight.detach().clone()


cur_loss, first_conv_weight = main()
