# label: safe
# why: the efficient PartialConv fills holes with masked_fill_ on output_mask (computed under no_grad) and on output_pre, the result of an add whose backward needs neither operand's value, so neither in-place fill touches a tensor saved for backward.
# source: https://github.com/naoto0804/pytorch-inpainting-with-partial-conv/issues/6
import random
import torch
import torch.nn as nn

torch.manual_seed(0)


class PartialConv(nn.Module):
    # reference:
    # Image Inpainting for Irregular Holes Using Partial Convolutions
    # mask is binary, 0 is holes; 1 is not
    def __init__(self, in_channels, out_channels, kernel_size, stride=1,
                 padding=0, dilation=1, groups=1, bias=True):
        super(PartialConv, self).__init__()
        random.seed(0)
        self.feature_conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride,
                                      padding, dilation, groups, bias)
        nn.init.kaiming_normal_(self.feature_conv.weight)

        self.mask_conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride,
                                   padding, dilation, groups, bias=False)
        nn.init.constant_(self.mask_conv.weight, 1.0)

        for param in self.mask_conv.parameters():
            param.requires_grad = False

    def forward(self, args):
        x, mask = args
        output = self.feature_conv(x * mask)
        if self.feature_conv.bias is not None:
            output_bias = self.feature_conv.bias.view(1, -1, 1, 1).expand_as(output)
        else:
            output_bias = torch.zeros_like(output)

        with torch.no_grad():
            output_mask = self.mask_conv(mask)  # mask sums

        no_update_holes = output_mask == 0
        # because those values won't be used , assign a easy value to compute
        mask_sum = output_mask.masked_fill_(no_update_holes, 1.0)

        output_pre = (output - output_bias) / mask_sum + output_bias
        output = output_pre.masked_fill_(no_update_holes, 0.0)

        new_mask = torch.ones_like(output)
        new_mask = new_mask.masked_fill_(no_update_holes, 0.0)
        return output, new_mask


class PartialConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.pconv = PartialConv(in_channels, out_channels, 3, 1, 1)
        self.act = nn.LeakyReLU(0.2)

    def forward(self, args):
        x, mask = self.pconv(args)
        return self.act(x), mask


def main():
    block1 = PartialConvBlock(3, 8)
    block2 = PartialConvBlock(8, 3)
    img = torch.rand(2, 3, 8, 8, requires_grad=True)
    mask = torch.ones(2, 3, 8, 8)
    mask[:, :, 2:6, 3:7] = 0.0
    h, h_mask = block1((img, mask))
    out, out_mask = block2((h, h_mask.expand(2, 8, 8, 8).contiguous()))
    loss = ((out - img.detach()) * out_mask).abs().mean()
    loss.backward()
    return loss.detach(), img.grad, block1.pconv.feature_conv.weight.grad, block2.pconv.feature_conv.bias.grad


loss, img_grad, w1_grad, b2_grad = main()
