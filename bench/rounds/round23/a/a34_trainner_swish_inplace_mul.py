# label: hazard raises
# why: the in-place Swish branch multiplies the conv output by sigmoid(beta*input) with input.mul_(), but beta is a learnable Parameter so beta*input saved that same input for beta's gradient, and backward through the SR conv_block raises.
# source: https://github.com/victorca25/traiNNer/commit/d91eb4420890c8cc43a508e708306fc7c7430369 (codes/models/modules/architectures/block.py, Swish.forward: "Disabled, using inplace causes: RuntimeError ... modified by an inplace operation")
import torch
import torch.nn as nn

torch.manual_seed(0)


class Swish(nn.Module):
    __constants__ = ['beta', 'slope', 'inplace']

    def __init__(self, beta=1.0, slope=1.67653251702, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.beta = torch.nn.Parameter(torch.tensor(beta))  # learnable beta parameter
        self.beta.requiresGrad = True
        self.slope = slope / 2  # user-defined "slope", non-trainable

    def forward(self, input):
        if self.inplace:
            input.mul_(torch.sigmoid(self.beta * input))  # <-- IPL001
            return 2 * self.slope * input
        else:
            return 2 * self.slope * input * torch.sigmoid(self.beta * input)


def act(act_type, inplace=True, neg_slope=0.2, beta=1.0):
    act_type = act_type.lower()
    if act_type == 'relu':
        layer = nn.ReLU(inplace)
    elif act_type == 'leakyrelu' or act_type == 'lrelu':
        layer = nn.LeakyReLU(neg_slope, inplace)
    elif act_type == 'swish':
        layer = Swish(beta=beta, inplace=inplace)
    else:
        raise NotImplementedError('activation layer [{:s}] is not found'.format(act_type))
    return layer


def sequential(*args):
    modules = [m for m in args if m is not None]
    return nn.Sequential(*modules)


def get_valid_padding(kernel_size, dilation):
    kernel_size = kernel_size + (kernel_size - 1) * (dilation - 1)
    return (kernel_size - 1) // 2


def conv_block(in_nc, out_nc, kernel_size, stride=1, dilation=1, bias=True, act_type='relu', mode='CNA'):
    padding = get_valid_padding(kernel_size, dilation)
    c = nn.Conv2d(in_nc, out_nc, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation, bias=bias)
    a = act(act_type) if act_type else None
    return sequential(c, a)


class ShortcutBlock(nn.Module):
    def __init__(self, submodule):
        super(ShortcutBlock, self).__init__()
        self.sub = submodule

    def forward(self, x):
        return x + self.sub(x)


class SRResNetSwish(nn.Module):
    def __init__(self, in_nc=3, out_nc=3, nf=8, nb=2, upscale=2, act_type='swish'):
        super().__init__()
        fea_conv = conv_block(in_nc, nf, kernel_size=3, act_type=None)
        blocks = [ShortcutBlock(sequential(conv_block(nf, nf, 3, act_type=act_type), conv_block(nf, nf, 3, act_type=None)))
                  for _ in range(nb)]
        upsampler = sequential(nn.Conv2d(nf, nf * upscale ** 2, 3, padding=1), nn.PixelShuffle(upscale), act(act_type))
        hr_conv = conv_block(nf, out_nc, kernel_size=3, act_type=None)
        self.model = sequential(fea_conv, *blocks, upsampler, hr_conv)

    def forward(self, x):
        return self.model(x)


def main():
    netG = SRResNetSwish()
    lr = torch.rand(2, 3, 8, 8)
    hr = torch.rand(2, 3, 16, 16)
    sr = netG(lr)
    l_pix = nn.L1Loss()(sr, hr)
    l_pix.backward()
    return l_pix.detach(), netG.model[1].sub[0][1].beta.grad


l_pix, beta_grad = main()
