# label: hazard raises
# why: PSPNet's Dropout2d(inplace=True) zeroes the output of the final conv-BN-ReLU block in place, and ReLU saved that output for its backward.
# source: https://github.com/meetps/pytorch-semseg/issues/121
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class conv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True):
        super(conv2DBatchNormRelu, self).__init__()
        conv_mod = nn.Conv2d(int(in_channels), int(n_filters), kernel_size=k_size, padding=padding, stride=stride, bias=bias)
        self.cbr_unit = nn.Sequential(conv_mod, nn.BatchNorm2d(int(n_filters)), nn.ReLU(inplace=True))

    def forward(self, inputs):
        return self.cbr_unit(inputs)


class pyramidPooling(nn.Module):
    def __init__(self, in_channels, pool_sizes):
        super(pyramidPooling, self).__init__()
        self.paths = nn.ModuleList()
        for i in range(len(pool_sizes)):
            self.paths.append(conv2DBatchNormRelu(in_channels, int(in_channels / len(pool_sizes)), 1, 1, 0, bias=False))
        self.pool_sizes = pool_sizes

    def forward(self, x):
        h, w = x.shape[2:]
        output_slices = [x]
        for module, pool_size in zip(self.paths, self.pool_sizes):
            out = F.adaptive_avg_pool2d(x, pool_size)
            out = module(out)
            out = F.interpolate(out, size=(h, w), mode="bilinear", align_corners=True)
            output_slices.append(out)
        return torch.cat(output_slices, dim=1)


class pspnet(nn.Module):
    def __init__(self, n_classes=3):
        super(pspnet, self).__init__()
        self.convbnrelu1_1 = conv2DBatchNormRelu(3, 8, 3, 2, 1, bias=False)
        self.pyramid_pooling = pyramidPooling(8, [4, 2, 1])
        self.cbr_final = conv2DBatchNormRelu(8 + 6, 8, 3, 1, 1, bias=False)
        self.dropout = nn.Dropout2d(p=0.1, inplace=True)  # <-- IPL001: in-place dropout on the ReLU output that ReLU saved
        self.classification = nn.Conv2d(8, n_classes, 1, 1, 0)

    def forward(self, x):
        inp_shape = x.shape[2:]
        x = self.convbnrelu1_1(x)
        x = self.pyramid_pooling(x)
        x = self.cbr_final(x)
        x = self.dropout(x)
        x = self.classification(x)
        x = F.interpolate(x, size=inp_shape, mode="bilinear", align_corners=True)
        return x


model = pspnet()
model.train()
images = torch.randn(2, 3, 16, 16)
labels = torch.randint(0, 3, (2, 16, 16))
outputs = model(images)
loss = F.cross_entropy(outputs, labels)
loss.backward()
