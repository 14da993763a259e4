# label: hazard raises
# why: the SoftPool autograd.Function saves its input (a ReLU output) with save_for_backward, and a parallel branch then applies nn.ReLU(inplace=True) to that same tensor, so SoftPool's backward finds its saved input at a newer version.
# source: https://github.com/alexandrosstergiou/SoftPool/issues/47
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CUDA_SOFTPOOL2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, kernel=2, stride=None):
        no_batch = False
        if len(input.size()) == 3:
            no_batch = True
            input.unsqueeze_(0)
        B, C, H, W = input.size()
        kernel = (kernel, kernel)
        stride = kernel if stride is None else (stride, stride)
        e_x = torch.exp(input - input.amax(dim=(2, 3), keepdim=True))
        output = F.avg_pool2d(input * e_x, kernel, stride) / F.avg_pool2d(e_x, kernel, stride).clamp(min=1e-12)
        ctx.kernel = kernel
        ctx.stride = stride
        ctx.save_for_backward(input, output)
        if no_batch:
            return output.squeeze_(0)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = torch.zeros_like(ctx.saved_tensors[0])
        saved = [grad_output.contiguous()] + list(ctx.saved_tensors) + [ctx.kernel, ctx.stride] + [grad_input]
        input = saved[1].detach().requires_grad_()
        with torch.enable_grad():
            e_x = torch.exp(input - input.amax(dim=(2, 3), keepdim=True))
            out = F.avg_pool2d(input * e_x, ctx.kernel, ctx.stride) / F.avg_pool2d(e_x, ctx.kernel, ctx.stride).clamp(min=1e-12)
        grad_input, = torch.autograd.grad(out, input, saved[0])
        return grad_input, None, None


def soft_pool2d(x, kernel_size=2, stride=None, force_inplace=False):
    return CUDA_SOFTPOOL2d.apply(x, kernel_size, stride)


class SoftPool2d(nn.Module):
    def __init__(self, kernel_size=2, stride=None):
        super(SoftPool2d, self).__init__()
        self.kernel_size = kernel_size
        self.stride = stride

    def forward(self, x):
        return soft_pool2d(x, kernel_size=self.kernel_size, stride=self.stride)


class Neck(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.BatchNorm2d(ch), nn.ReLU())
        self.pool = SoftPool2d(kernel_size=2, stride=2)
        self.lateral = nn.Sequential(nn.ReLU(inplace=True), nn.Conv2d(ch, ch, 1))  # <-- IPL001: in-place ReLU on the tensor SoftPool saved
        self.out = nn.Conv2d(2 * ch, 2, 1)

    def forward(self, x):
        feat = self.stem(x)
        pooled = self.pool(feat)
        lateral = F.max_pool2d(self.lateral(feat), 2)
        return self.out(torch.cat([pooled, lateral], dim=1))


neck = Neck()
x = torch.randn(2, 3, 8, 8)
y = neck(x)
y.mean().backward()
