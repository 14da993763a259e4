# label: hazard silent
# why: in NAC mode the residual branch starts with act(), which builds nn.ReLU(inplace=True), so the ReLU overwrites the block input x in place and the identity path of ResNetBlock/ShortcutBlock silently adds relu(x) instead of x to the residual.
# source: https://github.com/XPixelGroup/BasicSR/commit/2eedaa74bc843ae8aef3196896777c7c76fd95f8 (codes/models/modules/block.py conv_block: "inplace ReLU will modify the input, therefore wrong output")
import torch
import torch.nn as nn

torch.manual_seed(0)


def act(act_type, inplace=True, neg_slope=0.2, n_prelu=1):
    act_type = act_type.lower()
    if act_type == 'relu':
        layer = nn.ReLU(inplace=inplace)
    elif act_type == 'leakyrelu':
        layer = nn.LeakyReLU(neg_slope, inplace=inplace)
    else:
        raise NotImplementedError('activation layer [%s] is not found' % act_type)
    return layer


def sequential(*args):
    modules = []
    for module in args:
        if isinstance(module, nn.Sequential):
            for submodule in module.children():
                modules.append(submodule)
        elif isinstance(module, nn.Module):
            modules.append(module)
    return nn.Sequential(*modules)


def get_valid_padding(kernel_size, dilation):
    kernel_size = kernel_size + (kernel_size - 1) * (dilation - 1)
    return (kernel_size - 1) // 2


def conv_block(in_nc, out_nc, kernel_size, stride=1, dilation=1, groups=1, bias=True,
               pad_type='zero', norm_type=None, act_type='relu', mode='CNA'):
    assert mode in ['CNA', 'NAC'], 'Wong conv mode [%s]' % mode
    padding = get_valid_padding(kernel_size, dilation)
    c = nn.Conv2d(in_nc, out_nc, kernel_size=kernel_size, stride=stride, padding=padding,
                  dilation=dilation, bias=bias, groups=groups)
    a = act(act_type, inplace=True) if act_type else None  # <-- IPL002
    if mode == 'CNA':
        n = nn.BatchNorm2d(out_nc) if norm_type else None
        return sequential(c, n, a)
    elif mode == 'NAC':
        n = nn.BatchNorm2d(in_nc) if norm_type else None
        return sequential(n, a, c)


class ResNetBlock(nn.Module):
    def __init__(self, in_nc, mid_nc, out_nc, kernel_size=3, stride=1, dilation=1, groups=1,
                 bias=True, pad_type='zero', norm_type=None, act_type='relu', mode='CNA', res_scale=1):
        super(ResNetBlock, self).__init__()
        conv0 = conv_block(in_nc, mid_nc, kernel_size, stride, dilation, groups, bias, pad_type,
                           norm_type, act_type, mode)
        if mode == 'CNA':
            act_type = None
        conv1 = conv_block(mid_nc, out_nc, kernel_size, stride, dilation, groups, bias, pad_type,
                           norm_type, act_type, mode)
        self.res = sequential(conv0, conv1)
        self.res_scale = res_scale

    def forward(self, x):
        res = self.res(x).mul(self.res_scale)
        return x + res


class ShortcutBlock(nn.Module):
    def __init__(self, submodule):
        super(ShortcutBlock, self).__init__()
        self.sub = submodule

    def forward(self, x):
        output = x + self.sub(x)
        return output


class SRResNet(nn.Module):
    def __init__(self, in_nc, out_nc, nf, nb, upscale=2, norm_type=None, act_type='relu', mode='NAC', res_scale=1):
        super(SRResNet, self).__init__()
        fea_conv = conv_block(in_nc, nf, kernel_size=3, norm_type=None, act_type=None)
        resnet_blocks = [ResNetBlock(nf, nf, nf, norm_type=norm_type, act_type=act_type, mode=mode, res_scale=res_scale)
                         for _ in range(nb)]
        LR_conv = conv_block(nf, nf, kernel_size=3, norm_type=norm_type, act_type=None, mode=mode)
        upsampler = sequential(nn.Conv2d(nf, nf * upscale ** 2, 3, padding=1), nn.PixelShuffle(upscale), act(act_type))
        HR_conv1 = conv_block(nf, out_nc, kernel_size=3, norm_type=None, act_type=None)
        self.model = sequential(fea_conv, ShortcutBlock(sequential(*resnet_blocks, LR_conv)), upsampler, HR_conv1)

    def forward(self, x):
        return self.model(x)


def main():
    netG = SRResNet(in_nc=3, out_nc=3, nf=8, nb=2, upscale=2)
    var_L = torch.rand(2, 3, 8, 8)
    var_H = torch.rand(2, 3, 16, 16)
    fake_H = netG(var_L)
    l_g_pix = nn.L1Loss()(fake_H, var_H)
    l_g_pix.backward()
    return fake_H.detach(), netG.model[0].weight.grad


fake_H, fea_grad = main()
