# label: safe
# why: the suggested fix builds nn.Dropout2d(p=0.1, inplace=False), so dropout writes a new tensor and the ReLU outputs saved for backward stay intact.
# source: https://github.com/meetps/pytorch-semseg/issues/96 (pspnet.py line 84 at dfecf4973c; fixed in commit 60a096ee4b32672f4459f5fa656431c7b1f9d1d0 "Fix #96 and #104")
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class conv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True):
        super(conv2DBatchNormRelu, self).__init__()
        conv_mod = nn.Conv2d(int(in_channels), int(n_filters), kernel_size=k_size,
                             padding=padding, stride=stride, bias=bias)
        self.cbr_unit = nn.Sequential(conv_mod,
                                      nn.BatchNorm2d(int(n_filters)),
                                      nn.ReLU(inplace=True),)

    def forward(self, inputs):
        outputs = self.cbr_unit(inputs)
        return outputs


class pyramidPooling(nn.Module):
    def __init__(self, in_channels, pool_sizes):
        super(pyramidPooling, self).__init__()
        self.paths = nn.ModuleList([
            conv2DBatchNormRelu(in_channels, int(in_channels / len(pool_sizes)), 1, 1, 0, bias=False)
            for _ in pool_sizes])
        self.pool_sizes = pool_sizes

    def forward(self, x):
        h, w = x.shape[2:]
        output_slices = [x]
        for module, pool_size in zip(self.paths, self.pool_sizes):
            out = F.adaptive_avg_pool2d(x, pool_size)
            out = module(out)
            out = F.interpolate(out, size=(h, w), mode='bilinear', align_corners=False)
            output_slices.append(out)
        return torch.cat(output_slices, dim=1)


class pspnet(nn.Module):
    def __init__(self, n_classes=5):
        super(pspnet, self).__init__()
        self.n_classes = n_classes
        self.convbnrelu1_1 = conv2DBatchNormRelu(in_channels=3, k_size=3, n_filters=16, padding=1, stride=2, bias=False)
        self.res_block4 = conv2DBatchNormRelu(16, 32, 3, 1, 1, bias=False)
        self.res_block5 = conv2DBatchNormRelu(32, 32, 3, 1, 1, bias=False)
        self.pyramid_pooling = pyramidPooling(32, [2, 1])
        self.cbr_final = conv2DBatchNormRelu(64, 16, 3, 1, 1, False)
        self.dropout = nn.Dropout2d(p=0.1, inplace=False)
        self.classification = nn.Conv2d(16, self.n_classes, 1, 1, 0)
        self.convbnrelu4_aux = conv2DBatchNormRelu(in_channels=32, k_size=3, n_filters=16, padding=1, stride=1, bias=False)
        self.aux_cls = nn.Conv2d(16, self.n_classes, 1, 1, 0)

    def forward(self, x):
        inp_shape = x.shape[2:]
        x = self.convbnrelu1_1(x)
        x = self.res_block4(x)
        x_aux = self.convbnrelu4_aux(x)
        x_aux = self.dropout(x_aux)
        x_aux = self.aux_cls(x_aux)
        x = self.res_block5(x)
        x = self.pyramid_pooling(x)
        x = self.cbr_final(x)
        x = self.dropout(x)
        x = self.classification(x)
        x = F.interpolate(x, size=inp_shape, mode='bilinear', align_corners=False)
        if self.training:
            return x_aux, x
        return x


def multi_scale_cross_entropy2d(outputs, target, scale_weight=(0.4, 1.0)):
    loss = 0.0
    for w, out in zip(scale_weight, outputs):
        if out.shape[2:] != target.shape[1:]:
            out = F.interpolate(out, size=target.shape[1:], mode='bilinear', align_corners=False)
        loss = loss + w * F.cross_entropy(out, target)
    return loss


def main():
    model = pspnet(n_classes=5)
    model.train()
    images = torch.randn(2, 3, 16, 16)
    labels = torch.randint(0, 5, (2, 16, 16))
    outputs = model(images)
    loss = multi_scale_cross_entropy2d(outputs, labels)
    loss.backward()
    return loss.detach(), model.classification.weight.grad.clone()


loss, grad = main()
