# label: safe no-twin
# why: PConv2d renormalises the raw conv output in place through boolean-mask indexing (output[n_z_ind] = ..., output[z_ind] = 0.0); conv2d keeps its input and weight, not its output, and the masked reads only save indices, so the in-place writes break nothing and gradients reach the weights.
# source: https://github.com/naoto0804/pytorch-inpainting-with-partial-conv/blob/344f3ad5313d1bdda418a9c49ce6b2b0b7c754b0/net.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PConv2d(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride=1, padding=0):
        super().__init__()
        self.conv2d = nn.Conv2d(in_ch, out_ch, kernel_size, stride, padding)
        self.mask2d = nn.Conv2d(in_ch, out_ch, kernel_size, stride, padding)
        nn.init.kaiming_normal_(self.conv2d.weight, a=0, mode='fan_in')
        self.mask2d.weight.data.fill_(1.0)
        self.mask2d.bias.data.fill_(0.0)

        # mask is not updated
        for param in self.mask2d.parameters():
            param.requires_grad = False

    def forward(self, input, input_mask):
        # C(X) = W^T * X + b, C(0) = b, D(M) = 1 * M + 0 = sum(M)
        # W^T* (M .* X) / sum(M) + b = [C(M .* X) - C(0)] / D(M) + C(0)
        input_0 = input.new_zeros(input.size())

        output = F.conv2d(
            input * input_mask, self.conv2d.weight, self.conv2d.bias,
            self.conv2d.stride, self.conv2d.padding, self.conv2d.dilation,
            self.conv2d.groups)

        output_0 = F.conv2d(input_0, self.conv2d.weight, self.conv2d.bias,
                            self.conv2d.stride, self.conv2d.padding,
                            self.conv2d.dilation, self.conv2d.groups)

        with torch.no_grad():
            output_mask = F.conv2d(
                input_mask, self.mask2d.weight, self.mask2d.bias,
                self.mask2d.stride, self.mask2d.padding, self.mask2d.dilation,
                self.mask2d.groups)

        n_z_ind = (output_mask != 0.0)
        z_ind = (output_mask == 0.0)  # skip all the computation

        output[n_z_ind] = \
            (output[n_z_ind] - output_0[n_z_ind]) / output_mask[n_z_ind] + \
            output_0[n_z_ind]
        output[z_ind] = 0.0

        output_mask[n_z_ind] = 1.0
        output_mask[z_ind] = 0.0

        return output, output_mask


class PCBActiv(nn.Module):
    def __init__(self, in_ch, out_ch, bn=True):
        super().__init__()
        self.conv = PConv2d(in_ch, out_ch, 3, 1, 1)
        if bn:
            self.bn = nn.BatchNorm2d(out_ch)
        self.activation = nn.ReLU()

    def forward(self, input, input_mask):
        h, h_mask = self.conv(input, input_mask)
        if hasattr(self, 'bn'):
            h = self.bn(h)
        h = self.activation(h)
        return h, h_mask


def main():
    size = (1, 3, 5, 5)
    input = torch.ones(size)
    input_mask = torch.ones(size)
    input_mask[:, :, 2:, :][:, :, :, 2:] = 0
    input.requires_grad = True

    enc = PCBActiv(3, 4)
    conv = PConv2d(4, 3, 3, 1, 1)
    l1 = nn.L1Loss()
    h, h_mask = enc(input, input_mask)
    output, output_mask = conv(h, h_mask.expand(1, 4, 5, 5).contiguous())
    loss = l1(output, torch.randn(1, 3, 5, 5))
    loss.backward()

    assert (torch.sum(input.grad != input.grad).item() == 0)
    assert (torch.sum(torch.isnan(conv.conv2d.weight.grad)).item() == 0)
    return loss.detach(), input.grad, conv.conv2d.weight.grad, enc.conv.conv2d.bias.grad


loss, input_grad, weight_grad, enc_bias_grad = main()
