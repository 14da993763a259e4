# label: hazard raises
# why: each linknetUp decoder ends in conv2DBatchNormRelu's nn.ReLU(inplace=True), which saves its output for backward, and the forward then adds the encoder skip into that very tensor with `d4 += e3` (and `d3 += e2`, `d2 += e1`).
# source: https://github.com/meetps/pytorch-semseg/commit/8b084e60175393ca492a9990e98efbd1b9cf4ca4 (pre-fix ptsemseg/models/pspnet.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class conv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True):
        super(conv2DBatchNormRelu, self).__init__()
        self.cbr_unit = nn.Sequential(nn.Conv2d(int(in_channels), int(n_filters), kernel_size=k_size,
                                                padding=padding, stride=stride, bias=bias),
                                      nn.BatchNorm2d(int(n_filters)),
                                      nn.ReLU(inplace=True),)

    def forward(self, inputs):
        outputs = self.cbr_unit(inputs)
        return outputs


class deconv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True):
        super(deconv2DBatchNormRelu, self).__init__()
        self.dcbr_unit = nn.Sequential(nn.ConvTranspose2d(int(in_channels), int(n_filters), kernel_size=k_size,
                                                          padding=padding, stride=stride, bias=bias),
                                       nn.BatchNorm2d(int(n_filters)),
                                       nn.ReLU(inplace=True),)

    def forward(self, inputs):
        outputs = self.dcbr_unit(inputs)
        return outputs


class linknetUp(nn.Module):
    def __init__(self, in_channels, n_filters):
        super(linknetUp, self).__init__()
        # B, 2C, H, W -> B, C/2, H, W
        self.convbnrelu1 = conv2DBatchNormRelu(in_channels, n_filters / 2, k_size=1, stride=1, padding=0)
        # B, C/2, H, W -> B, C/2, 2H, 2W
        self.deconvbnrelu2 = deconv2DBatchNormRelu(n_filters / 2, n_filters / 2, k_size=2, stride=2, padding=0)
        # B, C/2, 2H, 2W -> B, C, 2H, 2W
        self.convbnrelu3 = conv2DBatchNormRelu(n_filters / 2, n_filters, k_size=1, stride=1, padding=0)

    def forward(self, x):
        x = self.convbnrelu1(x)
        x = self.deconvbnrelu2(x)
        x = self.convbnrelu3(x)
        return x


class linknet(nn.Module):
    def __init__(self, n_classes=3):
        super(linknet, self).__init__()
        filters = [8, 16, 32, 64]
        self.convbnrelu1 = conv2DBatchNormRelu(3, filters[0], k_size=3, stride=1, padding=1)
        self.encoder1 = conv2DBatchNormRelu(filters[0], filters[0], k_size=3, stride=1, padding=1)
        self.encoder2 = conv2DBatchNormRelu(filters[0], filters[1], k_size=3, stride=2, padding=1)
        self.encoder3 = conv2DBatchNormRelu(filters[1], filters[2], k_size=3, stride=2, padding=1)
        self.encoder4 = conv2DBatchNormRelu(filters[2], filters[3], k_size=3, stride=2, padding=1)
        # Decoder
        self.decoder4 = linknetUp(filters[3], filters[2])
        self.decoder3 = linknetUp(filters[2], filters[1])
        self.decoder2 = linknetUp(filters[1], filters[0])
        self.finalconv3 = nn.Conv2d(filters[0], n_classes, 3, 1, 1)

    def forward(self, x):
        # Encoder
        x = self.convbnrelu1(x)
        e1 = self.encoder1(x)
        e2 = self.encoder2(e1)
        e3 = self.encoder3(e2)
        e4 = self.encoder4(e3)

        # Decoder with Skip Connections
        d4 = self.decoder4(e4)
        d4 += e3  # <-- IPL001
        d3 = self.decoder3(d4)
        d3 += e2  # <-- IPL001
        d2 = self.decoder2(d3)
        d2 += e1  # <-- IPL001

        # Final Classification
        return self.finalconv3(d2)


def main():
    model = linknet(n_classes=3)
    images = torch.randn(2, 3, 16, 16)
    labels = torch.randint(0, 3, (2, 16, 16))
    outputs = model(images)
    loss = F.cross_entropy(outputs, labels)
    loss.backward()
    return loss.detach(), model.encoder1.cbr_unit[0].weight.grad


loss, encoder1_grad = main()
