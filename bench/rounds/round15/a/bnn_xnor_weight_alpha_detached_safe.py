# label: safe
# why: Later bnn/ops.py detaches the XNOR scaling factor (return alpha.detach()), so the in-place div_ on the norm output and the in-place scalings are never reached by backward; only the STE sign path carries gradients.
# source: https://github.com/1adrianb/binary-networks-pytorch/blob/176424fbabc4a28f9f1cc0c4971288f2ea7ce579/bnn/ops.py
import torch
import torch.nn as nn
import torch.nn.functional as F
from functools import partial

torch.manual_seed(0)


class SignActivation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input.masked_fill_(input.ge(1) | input.le(-1), 0)
        return grad_input


class XNORWeightBinarizer(nn.Module):
    def __init__(self, compute_alpha=True, center_weights=False):
        super(XNORWeightBinarizer, self).__init__()
        self.compute_alpha = compute_alpha
        self.center_weights = center_weights

    def _compute_alpha(self, x):
        n = x[0].nelement()
        if x.dim() == 4:
            alpha = x.norm(1, 3, keepdim=True).sum([2, 1], keepdim=True).div_(n)
        elif x.dim() == 2:
            alpha = x.norm(1, 1, keepdim=True).div_(n)
        else:
            raise ValueError(f"Expected ndims equal with 2 or 4, but found {x.dim()}")
        return alpha.detach()

    def forward(self, x):
        if self.center_weights:
            mean = x.mean(1, keepdim=True).expand_as(x)
            x = x.sub(mean)
        if self.compute_alpha:
            alpha = self._compute_alpha(x)
            x = SignActivation.apply(x)
            x = x.mul_(alpha.expand_as(x))
        else:
            x = SignActivation.apply(x)
        return x


class BasicInputBinarizer(nn.Module):
    def forward(self, x):
        return SignActivation.apply(x)


class BasicScaleBinarizer(nn.Module):
    def __init__(self, module, shape=None):
        super(BasicScaleBinarizer, self).__init__()
        num_channels = module.out_features if isinstance(module, nn.Linear) else module.out_channels
        alpha_shape = [1, num_channels] + [1] * (module.weight.dim() - 2) if shape is None else shape
        self.alpha = nn.Parameter(torch.ones(*alpha_shape))

    def forward(self, layer_out, layer_in):
        x = layer_out
        return x.mul_(self.alpha)


class BConfig:
    def __init__(self, activation_pre_process, activation_post_process, weight_pre_process):
        self.activation_pre_process = activation_pre_process
        self.activation_post_process = activation_post_process
        self.weight_pre_process = weight_pre_process


class Conv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, bconfig=None):
        super(Conv2d, self).__init__(in_channels, out_channels, kernel_size, padding=padding)
        self.activation_pre_process = bconfig.activation_pre_process()
        self.activation_post_process = bconfig.activation_post_process(self)
        self.weight_pre_process = bconfig.weight_pre_process()

    def forward(self, input):
        input_proc = self.activation_pre_process(input)
        out = F.conv2d(input_proc, self.weight_pre_process(self.weight), self.bias, self.stride, self.padding)
        return self.activation_post_process(out, input)


class Linear(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, bconfig=None):
        super(Linear, self).__init__(in_features, out_features, bias)
        self.activation_pre_process = bconfig.activation_pre_process()
        self.activation_post_process = bconfig.activation_post_process(self)
        self.weight_pre_process = bconfig.weight_pre_process()

    def forward(self, input):
        input_proc = self.activation_pre_process(input)
        return self.activation_post_process(
            F.linear(input_proc, self.weight_pre_process(self.weight), self.bias), input)


bconfig = BConfig(
    activation_pre_process=BasicInputBinarizer,
    activation_post_process=BasicScaleBinarizer,
    weight_pre_process=partial(XNORWeightBinarizer, center_weights=True),
)

model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
    Conv2d(8, 8, 3, padding=1, bconfig=bconfig), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
    nn.AdaptiveAvgPool2d(2), nn.Flatten(),
    Linear(32, 16, bconfig=bconfig), nn.ReLU(inplace=True),
    nn.Linear(16, 10),
)
criterion = nn.CrossEntropyLoss()
inputs = torch.randn(4, 3, 8, 8)
labels = torch.randint(0, 10, (4,))
outputs = model(inputs)
loss = criterion(outputs, labels)
loss.backward()
